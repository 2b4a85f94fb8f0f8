"""The spinners that keep idle CPUs awake: at SCHED_IDLE, one per CPU, pinned, and gone with their parent."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wafer_reasoner.runtime.cpu_awake import start_spinners, stop_spinners

REPO = Path(__file__).resolve().parents[1]
WAIT_S = 20.0

pytestmark = pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="needs Linux scheduling policies")


def _wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:  # a zombie is ended: its state is Z
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_spinner_per_cpu_runs_at_idle_priority_on_its_own_cpu_until_stopped():
    cpus = sorted(os.sched_getaffinity(0))
    spinners = start_spinners()
    try:
        assert len(spinners) == len(cpus)
        # Each sets its own policy and CPU as it starts.
        _wait_until(lambda: all(os.sched_getscheduler(s.pid) == os.SCHED_IDLE for s in spinners), "SCHED_IDLE")
        _wait_until(lambda: [os.sched_getaffinity(s.pid) for s in spinners] == [{cpu} for cpu in cpus],
                    "one CPU each")
        assert all(spinner.poll() is None for spinner in spinners)
    finally:
        stop_spinners(spinners)
    assert all(spinner.poll() is not None for spinner in spinners)


def test_a_spinner_ends_with_its_parent_even_when_the_parent_is_killed():
    code = ("import sys, time; from wafer_reasoner.runtime.cpu_awake import start_spinners; "
            "print(' '.join(str(s.pid) for s in start_spinners([0])), flush=True); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 1 and _alive(pids[0])
        _wait_until(lambda: os.sched_getscheduler(pids[0]) == os.SCHED_IDLE, "the spinner set up")
    finally:
        parent.kill()  # SIGKILL: no clean-up code of the parent runs
        parent.wait()
    _wait_until(lambda: not _alive(pids[0]), "the spinner ended with its parent")


def test_a_spinner_whose_parent_is_already_gone_does_not_start_looping():
    code = "from wafer_reasoner.runtime.cpu_awake import main; main(['1', '0'])"  # pid 1 is nobody's parent here
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, timeout=WAIT_S)
    assert done.returncode == 0
