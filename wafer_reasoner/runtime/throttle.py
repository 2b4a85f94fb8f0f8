"""Repeated warnings, shown at most once per period per kind, with how many were left out.

    throttle = Throttle(period_s=5.0)
    left_out = throttle.admit("manipulator_reply", now_s)   # None: stay quiet; n: show it (n left out before)

Pure: the caller passes the time (a monotonic clock: log throttling must not stall with simulated time).
"""

from __future__ import annotations


class Throttle:
    def __init__(self, period_s: float) -> None:
        self.period_s = float(period_s)
        self._shown_s: dict = {}  # key -> when a line of this kind was last shown
        self._left_out: dict = {}  # key -> lines left out since

    def admit(self, key: str, now_s: float) -> int | None:
        """None when a line of this kind was shown less than ``period_s`` ago; else how many were left out."""
        last_s = self._shown_s.get(key)
        if last_s is not None and now_s - last_s < self.period_s:
            self._left_out[key] = self._left_out.get(key, 0) + 1
            return None
        self._shown_s[key] = now_s
        return self._left_out.pop(key, 0)

    @staticmethod
    def line(text: str, left_out: int) -> str:
        return f"{text} ({left_out} more like this not shown)" if left_out else text
