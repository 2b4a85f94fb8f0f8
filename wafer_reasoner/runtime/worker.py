"""Planning off the caller's thread: one job at a time on a thread of its own, answers handed back.

    worker = PlanningWorker(core.plan, wake=guard_condition.trigger)
    worker.submit(job)                   # from the node's thread, when core.next_job(now) gave one
    for job, result in worker.take():    # back on the node's thread, after wake() was called
        publish(core.planned(job, result, now))

``plan`` must be safe to call from the worker thread (``ReasonerCore.plan`` reads no state the node's thread
changes). ``wake`` is called on the worker thread and must only signal (an rclpy guard condition's
``trigger``). This is the seam a remote inference backend plugs into: anything that calls ``wake`` when an
answer is ready and hands it out through ``take`` can replace the thread.
"""

from __future__ import annotations

import queue
import threading
from collections import deque

_CLOSE = object()


class PlanningWorker:
    def __init__(self, plan, wake, *, name: str = "planner") -> None:
        self._plan, self._wake = plan, wake
        self._jobs: queue.Queue = queue.Queue()
        self._done: deque = deque()  # (job, result); deque appends and pops are thread-safe
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, job) -> None:
        self._jobs.put(job)

    def take(self) -> list:
        """Answers ready so far, in the order planned."""
        done = []
        while self._done:
            done.append(self._done.popleft())
        return done

    def close(self, timeout_s: float = 5.0) -> None:
        self._jobs.put(_CLOSE)
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not _CLOSE:
            self._done.append((job, self._plan(job)))  # plan never raises (ReasonerCore.plan)
            self._wake()
