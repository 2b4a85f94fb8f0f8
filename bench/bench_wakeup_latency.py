"""How late a real-time thread wakes on this machine: the floor under any emergency-stop latency.

    python bench/bench_wakeup_latency.py [--seconds 20] [--period-ms 2] [--priority 20] [--load 0]

A thread under SCHED_FIFO (where allowed; else normal priority, said so) sleeps ``--period-ms`` again and again
and records how much later than asked it wakes, like cyclictest. ``--load N`` runs N busy processes at normal
priority meanwhile (ended by PID at the end). A stop that reaches a process only wakes it, so a wake-up this
late is a stop this late, whatever the code does after it. Prints p50 / p99 / p99.9 / max lateness in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def lateness_ms(seconds: float, period_s: float) -> list:
    late = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start_ns = time.monotonic_ns()
        time.sleep(period_s)
        late.append((time.monotonic_ns() - start_ns) * 1e-6 - period_s * 1e3)
    return late


def quantile(sorted_values: list, q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--period-ms", type=float, default=2.0)
    parser.add_argument("--priority", type=int, default=20, help="SCHED_FIFO priority; 0: normal priority")
    parser.add_argument("--load", type=int, default=0, help="busy processes at normal priority meanwhile")
    args = parser.parse_args(argv)
    policy = "normal priority"
    if args.priority:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.priority))
            policy = f"SCHED_FIFO {args.priority}"
        except OSError as error:
            policy = f"normal priority (SCHED_FIFO not allowed: {error.strerror})"
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setscheduler(
        0, os.SCHED_OTHER, os.sched_param(0))) for _ in range(args.load)]
    try:
        late = sorted(lateness_ms(args.seconds, args.period_ms * 1e-3))
    finally:
        for process in busy:
            process.kill()
            process.wait()
    report = {"policy": policy, "load": args.load, "wakeups": len(late),
              **{name: round(quantile(late, q), 3) for name, q in (("p50_ms", 0.5), ("p99_ms", 0.99),
                                                                   ("p999_ms", 0.999))},
              "max_ms": round(late[-1], 3), "over_3_ms": sum(value > 3.0 for value in late)}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
