"""The end-to-end demo without ``ros2 launch``: sim_world + reasoner_node + demo_operator as subprocesses.

    python -m wafer_reasoner.demo [--scenario PATH_OR_NAME] [--use-sim-time [--real-time-factor X]] [--record BAG]
    make demo ARGS="--scenario clarify_cup"
    make demo ARGS="--record runs/demo_bag"   # then: wafer-reasoner replay runs/demo_bag

Every process runs with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and one ``ROS_DOMAIN_ID``: the caller's if
set, else one this demo picks (and holds a lock on, so concurrent demos and tests on this machine get
different ones). The nodes run as ``python -m`` modules with this interpreter and this copy of the package
(the same code as the installed ``lib/wafer_reasoner/`` executables, which are thin wrappers around them);
``config/sim_world.yaml`` and ``config/reasoner.yaml`` are passed with ``--params-file``. The operator's
timeline streams to stdout; the nodes' logs go to files in ``--log-dir`` (a fresh temporary folder by default),
and the last lines of a node's log are shown if it dies. The exit code is the operator's: 0 when the
scenario's expectations were met, 1 otherwise. Every process started here is ended by its PID (SIGINT, then
SIGTERM, then SIGKILL), also on Ctrl-C.

Process handling lives in ``demo/processes.py``; judging the run is the operator's (``demo/timeline.py``,
``demo/verdicts.py``). No ROS import here.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from wafer_reasoner.demo.processes import (
    RECORDING_IN_FULL,
    log_tail,
    reserve_domain_id,
    ros_env,
    start_node,
    stop_process,
)
from wafer_reasoner.runtime.resources import config_file, model_dir, scenario_file

DEFAULT_SCENARIO = "bring_red_cup"
STARTUP_ALLOWANCE_S = 60.0  # on top of the operator's own timeout before the demo gives up on it
RECORDER_READY_S = 60.0  # how long the operator waits for the recorder before speaking anyway
MODEL_FILE = "planner.onnx"


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
    parser.add_argument("--record", default="", help="record the session into this rosbag2 folder (needs rosbags)")
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
    sim = ["--params-file", str(config_file("sim_world.yaml")), "-p", f"scenario:={scenario}"]
    reasoner = ["--params-file", str(config_file("reasoner.yaml"))]
    operator = ["-p", f"scenario:={scenario}", "-p", f"timeout_s:={float(timeout_s)}"]
    if args.model_dir:
        reasoner += ["-p", f"model_dir:={args.model_dir}"]
    if args.use_sim_time:
        sim += ["-p", "publish_clock:=true", "-p", f"real_time_factor:={float(args.real_time_factor)}"]
        reasoner += ["-p", "use_sim_time:=true"]
        operator += ["-p", "use_sim_time:=true"]
    if args.record:  # the reasoner and the recorder both hear every utterance
        operator += ["-p", "speech_listeners:=2"]
    return {"sim_world": sim, "reasoner_node": reasoner, "demo_operator": operator,
            "bag_recorder": ["-p", "use_sim_time:=true"] if args.use_sim_time else []}


def _check_model(args) -> None:
    shipped = model_dir() / MODEL_FILE
    if not args.model_dir and not shipped.is_file():
        print(f"note: no planner model at {shipped}; the reasoner may not start (run `make train`)")


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
        scenario_path = scenario_file(args.scenario or DEFAULT_SCENARIO)
        scenario = load_scenario(str(scenario_path), places=load_places_file(str(config_file("semantic_map.yaml"))))
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
    _check_model(args)
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
        _start_nodes(processes, node_args, env, log_dir, args.record)
        operator = processes["demo_operator"]
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


def _start_nodes(processes: dict, node_args: dict, env: dict, log_dir: Path, record: str) -> None:
    """sim_world, reasoner_node, the bag recorder when asked (SIGINT at the end closes its bag), then the operator
    (its stdout piped to us); into ``processes`` as they start, so a failed start still stops the earlier ones."""
    names = ["sim_world", "reasoner_node"] + (["bag_recorder"] if record else [])
    for name in names:
        extra = {"arguments": ["--output", record]} if name == "bag_recorder" else {}
        processes[name] = start_node(name, node_args[name], env, log_path=log_dir / f"{name}.log", **extra)
    if record:  # the bag holds the whole session and the reasoner's parameters only if the operator waits
        _wait_for_line(processes["bag_recorder"], log_dir / "bag_recorder.log", RECORDING_IN_FULL, RECORDER_READY_S)
    processes["demo_operator"] = start_node("demo_operator", node_args["demo_operator"], env,
                                            log_path=log_dir / "demo_operator.log", stdout=subprocess.PIPE)


def _wait_for_line(process: subprocess.Popen, log_path: Path, line: str, timeout_s: float) -> bool:
    """Until ``line`` is in the process's log, the process ends, or ``timeout_s`` pass; whether it came."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if log_path.exists() and line in log_path.read_text(errors="replace"):
            return True
        time.sleep(0.1)
    return False


def _supervise(processes, operator, reader, show, lines, log_dir: Path, timeout_s: float) -> tuple:
    """Wait for the operator; fail early when a node dies. (exit code, RESULT line, name of a dead node or "")."""
    limit_s = timeout_s + STARTUP_ALLOWANCE_S
    deadline = time.monotonic() + limit_s  # the operator ends itself before this; this is the safety net
    while operator.poll() is None:
        for name in (name for name in processes if name not in ("demo_operator",)):
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
