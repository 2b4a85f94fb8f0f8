"""Answers on their way out: one record per utterance, published in plan_id order, each no earlier than it is due.

Utterances are numbered when heard. Their answers get ready out of order: a "busy" answer at once, a planned
one when the planner is done, a paced one only at its emulated release time. The outbox keeps every ready
answer and hands them out strictly by plan_id, each once its release time has come, so ``reasoner/plan`` reads
1, 2, 3, ... whatever happened in between.

Answers that were never planned (``PlanResult.shed``):

* ``busy``: the speech queue was full when the utterance arrived (runtime/core.py). Status ``rejected``, reason
  BUSY_REASON; the robot says it once per burst, not once per utterance.
* ``stopped``: a stop (spoken, or ``emergency_stop``) came after it while it waited or was being planned.
  Status ``rejected``, reason STOPPED_REASON, never said; a planned answer still held for its emulated time is
  recorded as planned, with ``pacing.cancelled``, and never run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import MappingProxyType

from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.runtime.query import PlanResult, PlanStatus, loggable

BUSY, STOPPED = "busy", "stopped"
BUSY_REASON = "I'm busy with earlier requests; please say that again."
STOPPED_REASON = "Dropped: a stop came after it."
_SHED_REASONS = {BUSY: BUSY_REASON, STOPPED: STOPPED_REASON}
NOW = -math.inf  # release time of an answer that may go out as soon as its turn comes


@dataclass(frozen=True)
class Answer:
    """A ready answer: its record is published (and, if ``act``, its plan run) at ``release_s`` or later."""

    result: PlanResult
    plan_id: int
    query_s: float  # the record's stamp: when the planner was asked (or the utterance heard, when never planned)
    release_s: float
    scene: Scene
    act: bool = True  # run an ok plan when released (False: a stop, acted on when heard; cancelled answers)
    speak: bool = True  # say a clarify question or a refusal


def shed_result(text, kind: str) -> PlanResult:
    """The answer to an utterance that was never planned: ``kind`` is BUSY or STOPPED."""
    return PlanResult(
        utterance=loggable(text), plan="", steps=(), status=PlanStatus.REJECTED, reasons=(_SHED_REASONS[kind],),
        timings_ms=MappingProxyType({"host_total_ms": 0.0, "prefill_ms": 0.0, "decode_ms": 0.0}), shed=kind,
    )


class Outbox:
    """Ready answers by plan_id; ``due(now_s)`` pops those whose turn and time have come, in order."""

    def __init__(self) -> None:
        self._ready: dict = {}  # plan_id -> Answer
        self._next_id = 1  # the plan_id whose record goes out next

    def put(self, answer: Answer) -> None:
        self._ready[answer.plan_id] = answer

    def due(self, now_s: float, slack_s: float = 0.0) -> list:
        """Answers to release now, in plan_id order (up to ``slack_s`` early, for float round-off)."""
        out = []
        while self._next_id in self._ready and self._ready[self._next_id].release_s <= now_s + slack_s:
            out.append(self._ready.pop(self._next_id))
            self._next_id += 1
        return out

    @property
    def next_release_s(self) -> float | None:
        """When the next record is due, if the only thing it waits for is time (None: nothing, or the planner)."""
        answer = self._ready.get(self._next_id)
        return answer.release_s if answer is not None else None

    @property
    def held(self) -> tuple:
        """Planned answers not yet released (waiting for their emulated time), in plan_id order."""
        return tuple(a for _, a in sorted(self._ready.items()) if a.act)

    def latest_release_s(self) -> float:
        """The latest release time of a held answer (-inf: none): a later answer never overtakes it."""
        return max((a.release_s for a in self._ready.values() if a.act), default=-math.inf)

    def cancel_held(self) -> list:
        """A stop: every held answer is kept for its record (``pacing.cancelled``) but never run or said.
        Returns the cancelled ones."""
        cancelled = []
        for plan_id, answer in list(self._ready.items()):
            if answer.act:
                pacing = {**(answer.result.pacing or {}), "cancelled": True}
                self._ready[plan_id] = replace(answer, result=answer.result.with_pacing(pacing), release_s=NOW,
                                               act=False, speak=False)
                cancelled.append(self._ready[plan_id])
        return cancelled

    def __len__(self) -> int:
        return len(self._ready)
