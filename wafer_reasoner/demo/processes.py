"""Starting and ending the project's ROS processes: one ROS_DOMAIN_ID per run, localhost-only discovery.

Shared by the demo, the integration tests and ``bench/bench_node_latency.py``. No ROS import here.

    lease = reserve_domain_id()                  # a domain no other cooperating process on this machine holds
    env = ros_env(lease.domain_id)                # ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, that domain
    process = start_node("reasoner_node", ["--params-file", path], env, log_path=log)
    stop_process(process)                         # SIGINT, then SIGTERM, then SIGKILL, by PID
"""

from __future__ import annotations

import errno
import fcntl
import os
import random
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # this copy of wafer_reasoner (source tree or site-packages)
NODE_MODULES = {
    "sim_world": "wafer_reasoner.ros.sim_world_node",
    "reasoner_node": "wafer_reasoner.ros.reasoner_node",
    "emergency_stop_relay": "wafer_reasoner.ros.emergency_stop_relay",
    "demo_operator": "wafer_reasoner.ros.demo_operator",
    "bag_recorder": "wafer_reasoner.ros.bag_record",
}
# bag_recorder's log line once its bag will be whole (the reasoner's parameters are in it): the demo waits for it
RECORDING_IN_FULL = "the reasoner's parameters are in the bag"
DOMAIN_IDS = range(1, 102)  # 0-101: the ids whose DDS ports are valid on Linux with any participant count
DOMAIN_LOCK_PATTERN = "/tmp/wafer_reasoner_ros_domain_{}.lock"  # shared with test_reasoner_node.py's scheme
LOG_TAIL_LINES = 25


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


def node_command(name: str, *ros_args: str, arguments=()) -> list:
    """``python -m <module> [arguments] --ros-args ...`` for one of NODE_MODULES."""
    command = [sys.executable, "-m", NODE_MODULES[name], *arguments]
    return command + (["--ros-args", *ros_args] if ros_args else [])


def start_node(name: str, ros_args, env: dict, *, log_path: Optional[Path] = None, stdout=None,
               arguments=()) -> subprocess.Popen:
    """Start a node in its own session (Ctrl-C in the terminal reaches only us; we end it by PID).

    Its stdout and stderr go to ``log_path``; with ``stdout`` given (e.g. subprocess.PIPE), stdout goes there.
    """
    log = open(log_path, "wb") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(
            node_command(name, *ros_args, arguments=arguments),
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


def proc_status_kib(pid: int, key: str) -> int:
    """A memory figure of a running process from /proc/<pid>/status (``VmRSS``, ``VmHWM``), KiB; -1 if unreadable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return -1


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


