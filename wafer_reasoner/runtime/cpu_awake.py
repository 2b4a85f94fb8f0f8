"""Keeps this machine's CPUs from halting while they are idle, so a thread woken by an emergency stop runs at once.

On a virtual machine an idle vCPU halts, and the hypervisor takes milliseconds to run it again: the guest cannot
keep it awake through ``/dev/cpu_dma_latency`` (no cpuidle driver). On the development VM, a SCHED_FIFO thread
that sleeps 2 ms woke more than 3 ms late up to 40 times in 15 s while the CPUs were idle, and at most once with
one spinner per CPU (``bench/bench_wakeup_latency.py``, README "Bursts and the emergency stop"). A spinner is a
process at SCHED_IDLE, pinned to one CPU, that loops: it runs only when nothing else wants that CPU, and any
woken thread pre-empts it at once. It costs power, not work: the CPU never rests. On bare metal, requesting zero
latency on ``/dev/cpu_dma_latency`` (or ``idle=poll``) is the usual way to the same end.

A spinner ends with the process that started it, however that process ends (``PR_SET_PDEATHSIG``).

    spinners = start_spinners()      # one per CPU this process may run on
    ...
    stop_spinners(spinners)
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def start_spinners(cpus=None) -> list:
    """One spinner process per CPU in ``cpus`` (default: those this process may run on); returns the processes.

    Start them before this process asks for real-time scheduling: a child inherits its parent's policy until
    it sets its own."""
    cpus = sorted(os.sched_getaffinity(0) if cpus is None else cpus)
    return [subprocess.Popen([sys.executable, "-m", __name__, str(os.getpid()), str(cpu)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL) for cpu in cpus]


def stop_spinners(spinners: list) -> None:
    for spinner in spinners:
        spinner.kill()
    for spinner in spinners:
        spinner.wait()


def spin(parent_pid: int, cpu: int) -> None:
    """The spinner's own body: SCHED_IDLE on ``cpu``, ended with ``parent_pid``; loops until killed."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    os.sched_setaffinity(0, {cpu})
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent ended before the death signal was asked for
        return
    while True:
        pass


def main(argv=None) -> int:
    parent_pid, cpu = (int(value) for value in (sys.argv[1:] if argv is None else argv))
    try:
        spin(parent_pid, cpu)
    except KeyboardInterrupt:  # Ctrl-C in the terminal reaches the whole process group: end quietly
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
