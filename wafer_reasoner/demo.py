"""The end-to-end demo without ``ros2 launch``: sim_world + reasoner_node + demo_operator as subprocesses.

    python -m wafer_reasoner.demo [--scenario PATH_OR_NAME] [--use-sim-time [--real-time-factor X]]
    make demo ARGS="--scenario clarify_cup"

Every process runs with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and one ``ROS_DOMAIN_ID``: the caller's if
set, else one this demo picks (and holds a lock on, so concurrent demos and tests on this machine get
different ones). The nodes run as ``python -m`` modules with this interpreter and this copy of the package
(the same code as the installed ``lib/wafer_reasoner/`` executables, which are thin wrappers around them);
``config/sim_world.yaml`` and ``config/reasoner.yaml`` are passed with ``--params-file``. The operator's
timeline streams to stdout; the nodes' logs go to files in ``--log-dir`` (a fresh temporary folder by default),
and the last lines of a node's log are shown if it dies. The exit code is the operator's: 0 when the
scenario's expectations were met, 1 otherwise. Every process started here is ended by its PID (SIGINT, then
SIGTERM, then SIGKILL), also on Ctrl-C.

The helpers (``reserve_domain_id``, ``ros_env``, ``start_node``, ``stop_process``) are shared with the
integration tests and ``bench/bench_node_latency.py``. No ROS import here.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

PACKAGE = "wafer_reasoner"
PACKAGE_DIR = Path(__file__).resolve().parent  # this copy of wafer_reasoner (source tree or site-packages)
DEFAULT_SCENARIO = "bring_red_cup"
NODE_MODULES = {
    "sim_world": "wafer_reasoner.ros.sim_world_node",
    "reasoner_node": "wafer_reasoner.ros.reasoner_node",
    "demo_operator": "wafer_reasoner.ros.demo_operator",
}
DOMAIN_IDS = range(1, 102)  # 0-101: the ids whose DDS ports are valid on Linux with any participant count
DOMAIN_LOCK_PATTERN = "/tmp/wafer_reasoner_ros_domain_{}.lock"  # shared with test_reasoner_node.py's scheme
STARTUP_ALLOWANCE_S = 60.0  # on top of the operator's own timeout before the demo gives up on it
LOG_TAIL_LINES = 25
MODEL_FILE = "planner.onnx"


# ---- files -------------------------------------------------------------------------------------------------


def config_dir() -> Path:
    """share/wafer_reasoner/config when the package is installed (ament index), else the source tree's config/."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            shared = Path(get_package_share_directory(PACKAGE)) / "config"
            if (shared / "scenarios").is_dir():
                return shared
        except (PackageNotFoundError, ValueError, LookupError):
            pass
    except ImportError:
        pass
    return PACKAGE_DIR.parent / "config"


def source_config_dir() -> Optional[Path]:
    """The source tree's config/ when this package runs from a checkout (preferred: it is what you edit)."""
    candidate = PACKAGE_DIR.parent / "config"
    return candidate if (candidate / "scenarios").is_dir() else None


def find_config(name: str) -> Path:
    """``config/<name>`` from the source tree if there, else from the installed share directory."""
    for folder in (source_config_dir(), config_dir()):
        if folder is not None and (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"config/{name} is neither in the source tree nor in share/{PACKAGE}")


def resolve_scenario(value: str) -> Path:
    """A path, or a bare scenario name (``bring_red_cup``) looked up in config/scenarios/."""
    if os.sep in value or value.endswith((".yaml", ".yml")):
        path = Path(value).expanduser()
    else:
        path = find_config(f"scenarios/{value}.yaml")
    if not path.is_file():
        raise FileNotFoundError(f"scenario file {path} does not exist")
    return path.resolve()


def shipped_model_path() -> Path:
    return PACKAGE_DIR / "models" / MODEL_FILE


# ---- ROS domain and environment ----------------------------------------------------------------------------


@dataclass
class DomainLease:
    """A ROS_DOMAIN_ID this process holds a lock on (released on ``release()`` or when the process ends)."""

    domain_id: int
    _handle: Optional[object] = None

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the file drops the flock
            self._handle = None


def _try_lock(domain_id: int):
    handle = open(DOMAIN_LOCK_PATTERN.format(domain_id), "a+")  # noqa: SIM115 - held open for the lease
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        handle.close()
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return handle


def reserve_domain_id(preferred: Optional[int] = None, *, rng: Optional[random.Random] = None) -> DomainLease:
    """Lock a ROS_DOMAIN_ID that no other cooperating process on this machine holds.

    ``preferred`` (e.g. the caller's ROS_DOMAIN_ID) is used even when another process holds it (the caller
    chose it), but locked when free. Otherwise the ids 1-101 are tried in random order, leaving out the
    ROS_DOMAIN_ID of our environment (``.venv/wafer_env.sh`` sets one for hand-started nodes of this checkout).
    """
    if preferred is not None:
        return DomainLease(preferred, _try_lock(preferred))
    ambient = os.environ.get("ROS_DOMAIN_ID", "").strip()
    order = [d for d in DOMAIN_IDS if str(d) != ambient]
    (rng or random.SystemRandom()).shuffle(order)
    for domain_id in order:
        handle = _try_lock(domain_id)
        if handle is not None:
            return DomainLease(domain_id, handle)
    raise RuntimeError(f"every ROS_DOMAIN_ID in 1-101 is locked by another process ({DOMAIN_LOCK_PATTERN})")


def ros_env(domain_id: int, base: Optional[dict] = None) -> dict:
    """The environment for a ROS process of this demo: localhost-only discovery, the domain, this package."""
    env = dict(os.environ if base is None else base)
    env["ROS_DOMAIN_ID"] = str(domain_id)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    if "AMENT_PREFIX_PATH" not in env and (Path(sys.prefix) / "share" / "ament_index").is_dir():
        env["AMENT_PREFIX_PATH"] = sys.prefix  # a venv with the ROS wheels: ament_index lookups work
    package_parent = str(PACKAGE_DIR.parent)
    paths = [package_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != package_parent]
    env["PYTHONPATH"] = os.pathsep.join(paths)  # the children import this same copy of the package
    env["PYTHONUNBUFFERED"] = "1"
    return env


# ---- processes ---------------------------------------------------------------------------------------------


def node_command(name: str, *ros_args: str) -> list:
    """``python -m <module> --ros-args ...`` for one of NODE_MODULES."""
    command = [sys.executable, "-m", NODE_MODULES[name]]
    return command + (["--ros-args", *ros_args] if ros_args else [])


def start_node(name: str, ros_args, env: dict, *, log_path: Optional[Path] = None, stdout=None) -> subprocess.Popen:
    """Start a node in its own session (Ctrl-C in the terminal reaches only us; we end it by PID).

    Its stdout and stderr go to ``log_path``; with ``stdout`` given (e.g. subprocess.PIPE), stdout goes there.
    """
    log = open(log_path, "wb") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(
            node_command(name, *ros_args),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout if stdout is not None else log,
            stderr=log if stdout is None or log_path is not None else subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        if log_path is not None:
            log.close()  # the child has its own descriptor


def stop_process(process: subprocess.Popen, *, grace_s: float = 8.0) -> Optional[int]:
    """End a process we started, by its PID: SIGINT (clean ROS shutdown), then SIGTERM, then SIGKILL."""
    for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
        if process.poll() is not None:
            break
        try:
            os.kill(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
    return process.poll()


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# ---- the demo ----------------------------------------------------------------------------------------------


class _Interrupted(Exception):
    pass


def _raise_interrupted(signum, frame):
    raise _Interrupted(signal.Signals(signum).name)


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m wafer_reasoner.demo",
        description="Run sim_world, reasoner_node and the scripted demo_operator; print the operator's timeline.",
    )
    parser.add_argument(
        "--scenario", default=DEFAULT_SCENARIO, help="scenario YAML path or name in config/scenarios/ (%(default)s)"
    )
    parser.add_argument(
        "--use-sim-time", action="store_true", help="sim_world publishes /clock; the other nodes use_sim_time"
    )
    parser.add_argument(
        "--real-time-factor", type=float, default=1.0, help="with --use-sim-time: simulated s per real s (%(default)s)"
    )
    parser.add_argument(
        "--timeout", type=float, default=0.0, help="operator's overall limit in s (0: the turns' timeouts + 60 s)"
    )
    parser.add_argument("--log-dir", default="", help="where the nodes' logs go (default: a new temporary folder)")
    parser.add_argument("--model-dir", default="", help="reasoner_node model_dir (default: the shipped model)")
    args = parser.parse_args(argv)
    if not 0.1 <= args.real_time_factor <= 100.0:
        parser.error("--real-time-factor must be within [0.1, 100]")
    if args.real_time_factor != 1.0 and not args.use_sim_time:
        parser.error("--real-time-factor needs --use-sim-time")
    if args.timeout < 0:
        parser.error("--timeout must not be negative")
    return args


def operator_timeout_s(scenario, args) -> float:
    """The operator's overall wall-clock limit: --timeout, else the turns' (simulated) timeouts + 60 s."""
    if args.timeout:
        return float(args.timeout)
    slowdown = 1.0 / args.real_time_factor if args.use_sim_time and args.real_time_factor < 1.0 else 1.0
    return sum(turn.expect.timeout_s for turn in scenario.turns) * slowdown + 60.0


def _node_arguments(args, scenario: Path, timeout_s: float) -> dict:
    sim = ["--params-file", str(find_config("sim_world.yaml")), "-p", f"scenario:={scenario}"]
    reasoner = ["--params-file", str(find_config("reasoner.yaml"))]
    operator = ["-p", f"scenario:={scenario}", "-p", f"timeout_s:={float(timeout_s)}"]
    if args.model_dir:
        reasoner += ["-p", f"model_dir:={args.model_dir}"]
    if args.use_sim_time:
        sim += ["-p", "publish_clock:=true", "-p", f"real_time_factor:={float(args.real_time_factor)}"]
        reasoner += ["-p", "use_sim_time:=true"]
        operator += ["-p", "use_sim_time:=true"]
    return {"sim_world": sim, "reasoner_node": reasoner, "demo_operator": operator}


def _stream(pipe, sink: list, show: threading.Event) -> None:
    """Copy the operator's stdout to ours line by line (keeping the lines), until EOF; not its RESULT line."""
    for raw in iter(pipe.readline, b""):
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        sink.append(line)
        if show.is_set() and not line.startswith("RESULT:"):  # the demo prints the RESULT line last
            print(line, flush=True)
    pipe.close()


def run_demo(args) -> int:
    from wafer_reasoner.sim.scenario import ScenarioError, load_places_file, load_scenario

    try:
        scenario_path = resolve_scenario(args.scenario)
        scenario = load_scenario(str(scenario_path), places=load_places_file(str(find_config("semantic_map.yaml"))))
        timeout_s = operator_timeout_s(scenario, args)
        node_args = _node_arguments(args, scenario_path, timeout_s)
    except (FileNotFoundError, ScenarioError) as error:
        print(f"RESULT: FAILURE — {error}", flush=True)
        return 1
    caller_domain = os.environ.get("ROS_DOMAIN_ID", "").strip()
    lease = reserve_domain_id(int(caller_domain) if caller_domain.isdigit() else None)
    log_dir = Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="wafer_reasoner-demo-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    env = ros_env(lease.domain_id)
    if not args.model_dir and not shipped_model_path().is_file():
        print(f"note: no planner model at {shipped_model_path()}; the reasoner may not start (run `make train`)")
    print(
        f"demo: ROS_DOMAIN_ID={lease.domain_id} ({'yours' if caller_domain else 'picked'}), localhost only; "
        f"{'simulated time x' + format(args.real_time_factor, 'g') if args.use_sim_time else 'wall time'}; "
        f"node logs in {log_dir}",
        flush=True,
    )
    if caller_domain and lease._handle is None:
        print(f"note: another wafer_reasoner process on this machine also uses ROS_DOMAIN_ID={caller_domain}")

    processes = {}  # name -> Popen, in start order
    lines: list = []
    show = threading.Event()
    show.set()
    # explicit handlers: a shell may start us with SIGINT ignored, and SIGTERM must clean up too
    previous = {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    reported = ""  # a node whose death _supervise already reported
    try:
        for name in ("sim_world", "reasoner_node"):
            processes[name] = start_node(name, node_args[name], env, log_path=log_dir / f"{name}.log")
        operator = processes["demo_operator"] = start_node(
            "demo_operator", node_args["demo_operator"], env, log_path=log_dir / "demo_operator.log",
            stdout=subprocess.PIPE,
        )  # fmt: skip
        reader = threading.Thread(target=_stream, args=(operator.stdout, lines, show), daemon=True)
        reader.start()
        code, result, reported = _supervise(processes, operator, reader, show, lines, log_dir, timeout_s)
    except (KeyboardInterrupt, _Interrupted):
        show.clear()
        code, result = 130, "RESULT: FAILURE — interrupted; the demo's processes were stopped"
        print(flush=True)
    finally:
        for sig in previous:  # a second Ctrl-C must not cut the clean-up short (it ends in SIGKILL anyway)
            signal.signal(sig, signal.SIG_IGN)
        for name, process in reversed(list(processes.items())):
            ended = stop_process(process)
            if ended not in (0, None, -signal.SIGINT) and name not in ("demo_operator", reported):
                print(f"demo: {name} ended with code {ended} (log: {log_dir / f'{name}.log'})", flush=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        lease.release()
    print(result, flush=True)  # always the last line
    return code


def _supervise(processes, operator, reader, show, lines, log_dir: Path, timeout_s: float) -> tuple:
    """Wait for the operator; fail early when a node dies. (exit code, RESULT line, name of a dead node or "")."""
    limit_s = timeout_s + STARTUP_ALLOWANCE_S
    deadline = time.monotonic() + limit_s  # the operator ends itself before this; this is the safety net
    while operator.poll() is None:
        for name in ("sim_world", "reasoner_node"):
            code = processes[name].poll()
            if code is not None:
                show.clear()
                tail = log_tail(log_dir / f"{name}.log")
                print(f"--- last lines of {log_dir / f'{name}.log'} ---\n{tail}\n---", flush=True)
                return 1, f"RESULT: FAILURE — {name} exited with code {code} before the scenario finished", name
        if time.monotonic() > deadline:
            show.clear()
            return 1, f"RESULT: FAILURE — demo_operator did not finish within {limit_s:g} s", ""
        time.sleep(0.1)
    reader.join(timeout=5.0)
    code = operator.returncode
    result = next((line for line in reversed(lines) if line.startswith("RESULT:")), "")
    if not result:
        print(f"--- last lines of {log_dir / 'demo_operator.log'} ---\n{log_tail(log_dir / 'demo_operator.log')}")
        return code or 1, f"RESULT: FAILURE — demo_operator exited with code {code} without a result", ""
    return code, result, ""


def main(argv=None) -> int:
    return run_demo(_parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
