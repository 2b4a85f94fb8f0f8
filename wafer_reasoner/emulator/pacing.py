"""Pacing: when a plan may be published so the robot sees the emulated hardware's latency, not the host's.

    release = pace(query_s, host_done_s, emulated_ms)
    release.release_s, release.behind_ms, release.wait_s

Pure: times in, times out (the node's clock, so simulated time under use_sim_time). A plan is released no
earlier than query time + its emulated latency; when the host finished later than that, it is released at
once and ``behind_ms`` says by how much the host was slower than the emulated hardware. Speed never changes
the plan, only when it is published.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

OFF = "off"  # publish as soon as the host has the plan
EMULATED = "emulated"  # publish at query time + emulated latency (or at once, reported behind)
PACING_MODES = (OFF, EMULATED)


@dataclass(frozen=True)
class Release:
    release_s: float  # when to publish, node clock (s)
    behind_ms: float  # host finished this much after the emulated release time; 0 when on time
    wait_s: float  # how long to hold the plan after the host finished; 0 when behind


def pace(query_s: float, host_done_s: float, emulated_ms: float, *, not_before_s: float = -math.inf) -> Release:
    """The release of a plan asked at ``query_s``, ready on the host at ``host_done_s``, charged ``emulated_ms``.

    ``not_before_s`` (the release of a plan still held) keeps plans in the order they were asked. A non-finite
    or negative emulated time counts as 0 (the plan is never held for an unknown time)."""
    for name, value in (("query_s", query_s), ("host_done_s", host_done_s)):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite time, got {value!r}")
    emulated_s = emulated_ms / 1000.0 if math.isfinite(emulated_ms) and emulated_ms > 0.0 else 0.0
    due_s = query_s + emulated_s
    behind_ms = max(host_done_s - due_s, 0.0) * 1000.0
    release_s = max(due_s, host_done_s, not_before_s)
    return Release(release_s=release_s, behind_ms=behind_ms, wait_s=release_s - host_done_s)


def check_mode(mode: str) -> str:
    """``mode`` when it is one of PACING_MODES, else ValueError naming them."""
    if mode not in PACING_MODES:
        raise ValueError(f"pacing must be one of {', '.join(PACING_MODES)}, got {mode!r}")
    return mode
