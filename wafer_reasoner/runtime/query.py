"""The query: one utterance in, one checked plan out. ``ReasonerCore`` asks it for every utterance.

    utterance -> validate -> stop command? -> model.generate -> parse_plan -> envelope -> verify_plan -> PlanResult

The envelope (``runtime/envelope.py``) refuses a plan that moves the robot unless the utterance licenses it,
whatever the model wrote; the verifier then checks the plan against the scene and the safety limits.

Nothing here publishes: the core hands an 'ok' result's steps to the executor and the JSON form to
``reasoner/plan``.  The model is anything with ``generate(scene, utterance)``
returning an object with ``text``, ``tokens``, ``prefill_ms``, ``decode_ms``, ``total_ms`` and
``tokens_per_s`` (the real one is ``wafer_reasoner.engine.planner_model``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from enum import Enum
from types import MappingProxyType

from wafer_reasoner.planner.language import PlanSyntaxError, Stop, format_plan, is_clarification, parse_plan
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.phrases import clarify_question
from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.planner.verifier import verify_plan
from wafer_reasoner.runtime.envelope import breach
from wafer_reasoner.understanding.stop import is_stop_command

MAX_UTTERANCE_CHARS = 1000
_ALLOWED_WHITESPACE = "\t\n\r"  # folded into spaces: transcripts sometimes carry a trailing newline


class PlanStatus(Enum):
    OK = "ok"  # verified; hand the steps to the executor
    CLARIFY = "clarify"  # a question to say; publishes nothing else
    REJECTED = "rejected"  # nothing to run; ``reasons`` says why


@dataclass(frozen=True)
class PlanResult:
    utterance: str
    plan: str  # canonical plan text, "" when there is none
    steps: tuple  # typed steps of ``plan``
    status: PlanStatus
    reasons: tuple  # tuple[str, ...]: sentences to say (the question, for clarify)
    timings_ms: MappingProxyType  # host_total_ms, prefill_ms, decode_ms (+ emulated_ms when emulated)
    tokens: int = 0  # generated tokens; 0 when the model was not called
    tokens_per_s: float = 0.0
    prompt_tokens: int = 0  # prompt tokens the model read; 0 when it was not called
    emulated: MappingProxyType | None = None  # the emulated pair (target, hardware, ...) when one is charged
    pacing: MappingProxyType | None = None  # how publication was paced (mode, behind_ms, ...) when it was
    shed: str = ""  # "busy" or "stopped" when the utterance was never planned (runtime/outbox.py says why)
    backend: MappingProxyType | None = None  # which remote backend answered, in how long (runtime/backends.py)

    def with_emulation(self, emulated_ms: float, details: dict) -> PlanResult:
        """A copy charged ``emulated_ms`` (timings_ms.emulated_ms) with the emulated pair's ``details``."""
        return replace(self.with_timing("emulated_ms", emulated_ms), emulated=MappingProxyType(dict(details)))

    def with_backend(self, report: dict) -> PlanResult:
        return replace(self, backend=MappingProxyType(dict(report)))

    def with_pacing(self, pacing: dict) -> PlanResult:
        return replace(self, pacing=MappingProxyType(dict(pacing)))

    def with_timing(self, name: str, value_ms: float) -> PlanResult:
        """A copy with one more timing, e.g. ``emulated_ms`` from the wafer-scale emulator."""
        return replace(self, timings_ms=MappingProxyType({**self.timings_ms, name: float(value_ms)}))

    def to_json_dict(self) -> dict:
        """The ``reasoner/plan`` message body; numbers that are not finite become null (JSON has no NaN)."""
        return {
            "utterance": self.utterance,
            "plan": self.plan,
            "status": self.status.value,
            "reasons": list(self.reasons),
            "timings_ms": {name: _json_number(value) for name, value in self.timings_ms.items()},
            "tokens": self.tokens,
            "tokens_per_s": _json_number(self.tokens_per_s),
        } | {
            name: {key: _json_value(value) for key, value in extra.items()}
            for name, extra in (("emulated", self.emulated), ("pacing", self.pacing), ("backend", self.backend))
            if extra is not None
        } | ({"shed": self.shed} if self.shed else {})


def answer(
    model, scene: Scene, utterance, limits: SafetyLimits, *, now_s: float, clock=time.perf_counter
) -> PlanResult:
    """Plan, parse and verify one utterance; never raises for bad input or a bad model output.

    ``clock`` only measures ``host_total_ms`` (injectable so tests need no wall clock).
    """
    started = clock()
    problem = utterance_problem(utterance)
    if problem:
        return _result(loggable(utterance), (), PlanStatus.REJECTED, (problem,), started, clock)
    text = " ".join(utterance.split())
    if is_stop_command(text):
        # never wait for the model to stop: the node also stops the executor at once
        return _result(text, (Stop(),), PlanStatus.OK, (), started, clock)
    try:
        generation = model.generate(scene, text)
    except Exception as error:  # noqa: BLE001 - one bad query must not take the robot's planner down
        # a remote backend's failure says what to tell the person (BackendError.spoken), anything else what broke
        reason = getattr(error, "spoken", "") or f"My planner failed ({type(error).__name__}: {error})."
        return _result(text, (), PlanStatus.REJECTED, (reason,), started, clock)
    return _checked(text, generation, scene, limits, now_s, started, clock)


def utterance_problem(utterance) -> str:
    """Why an utterance cannot be planned, or "" when it can."""
    if not isinstance(utterance, str):
        return f"The utterance must be text, not {type(utterance).__name__}."
    if not utterance.strip():
        return "I didn't hear anything."
    if len(utterance) > MAX_UTTERANCE_CHARS:
        return f"That was {len(utterance)} characters; I can only take {MAX_UTTERANCE_CHARS}."
    if any(not char.isprintable() and char not in _ALLOWED_WHITESPACE for char in utterance):
        return "The utterance contains control characters."
    return ""


def _checked(text: str, generation, scene: Scene, limits: SafetyLimits, now_s: float, started, clock) -> PlanResult:
    from_model = {
        "generation": generation,
        "prefill_ms": float(generation.prefill_ms),
        "decode_ms": float(generation.decode_ms),
    }
    try:
        steps = parse_plan(generation.text)
    except PlanSyntaxError as error:
        reason = f"My planner wrote something I can't run: {error}."
        return _result(text, (), PlanStatus.REJECTED, (reason,), started, clock, **from_model)
    if is_clarification(steps):
        question = clarify_question(steps[0], scene)
        return _result(text, steps, PlanStatus.CLARIFY, (question,), started, clock, **from_model)
    outside = breach(steps, scene, text)
    if outside:
        return _result(text, steps, PlanStatus.REJECTED, (outside,), started, clock, **from_model)
    verdict = verify_plan(steps, scene, limits, now_s=now_s)
    status = PlanStatus.OK if verdict.ok else PlanStatus.REJECTED
    return _result(text, steps, status, verdict.reasons, started, clock, **from_model)


def _result(
    utterance: str,
    steps: tuple,
    status: PlanStatus,
    reasons: tuple,
    started: float,
    clock,
    *,
    generation=None,
    prefill_ms: float = 0.0,
    decode_ms: float = 0.0,
) -> PlanResult:
    timings = {"host_total_ms": (clock() - started) * 1000.0, "prefill_ms": prefill_ms, "decode_ms": decode_ms}
    return PlanResult(
        utterance=utterance,
        plan=format_plan(steps),
        steps=tuple(steps),
        status=status,
        reasons=tuple(reasons),
        timings_ms=MappingProxyType(timings),
        tokens=int(generation.tokens) if generation is not None else 0,
        tokens_per_s=float(generation.tokens_per_s) if generation is not None else 0.0,
        prompt_tokens=int(getattr(generation, "prompt_tokens", 0) or 0) if generation is not None else 0,
    )


def loggable(utterance) -> str:
    """What a rejected utterance is logged as: text only, capped, control characters shown escaped."""
    if not isinstance(utterance, str):
        return ""
    shown = utterance[:MAX_UTTERANCE_CHARS]
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in shown)


def _json_number(value: float):
    return value if math.isfinite(value) else None


def _json_value(value):
    return _json_number(value) if isinstance(value, float) else value


def verifier_accepts(scene: Scene, limits: SafetyLimits, *, now_s: float, utterance: str | None = None):
    """``accept(plan_text) -> bool`` for best-of-N: a candidate counts only if it parses, stays inside the
    envelope of ``utterance`` (when given) and passes ``verify_plan`` (a clarify passes: it only speaks), so a
    candidate the query would refuse never wins."""

    def accept(text: str) -> bool:
        try:
            steps = parse_plan(text)
        except PlanSyntaxError:
            return False
        if utterance is not None and breach(steps, scene, utterance):
            return False
        return verify_plan(steps, scene, limits, now_s=now_s).ok

    return accept
