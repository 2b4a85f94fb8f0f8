"""The action language: typed plan steps, a strict parser and the canonical printer.

A plan is text such as::

    navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)

Steps are joined by ``"; "``.  ``format_plan(parse_plan(text))`` is the canonical form of ``text``;
the model is trained to emit canonical text, and everything downstream works on typed steps.
The full contract (semantics of each utterance family) is in ``docs/action_language.md``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Union

REF_KINDS = ("obj", "place", "person")
CLARIFY_REASONS = ("not_found", "ambiguous", "unsupported")
SPEAKER = "user"  # the person who spoke: ``person:user``

# ids of objects and people, place names and labels: no spaces, no punctuation of the language itself
_NAME = r"[A-Za-z0-9_.\-]+"
_NAME_RE = re.compile(rf"^{_NAME}$")
_STEP_RE = re.compile(r"^\s*([a-z_]+)\s*\((.*)\)\s*$")
_NUMBER_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
MAX_PLAN_CHARS = 4096
MAX_STEPS = 32


class PlanSyntaxError(ValueError):
    """The text is not a plan in the action language; the message says where and why."""


@dataclass(frozen=True)
class Ref:
    """A reference to something in the world: ``obj:ID``, ``place:NAME`` or ``person:ID``."""

    kind: str
    name: str

    def __post_init__(self) -> None:
        if self.kind not in REF_KINDS:
            raise PlanSyntaxError(f"unknown reference kind {self.kind!r}; expected one of {REF_KINDS}")
        if not _NAME_RE.match(self.name):
            raise PlanSyntaxError(f"bad reference name {self.name!r}")

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True)
class Navigate:
    target: Ref


@dataclass(frozen=True)
class Pick:
    obj: Ref


@dataclass(frozen=True)
class PlaceOn:
    """``place(OBJ, REF)``: put a held object on/in an object or a named place."""

    obj: Ref
    target: Ref


@dataclass(frozen=True)
class Handover:
    obj: Ref
    person: Ref


@dataclass(frozen=True)
class Rotate:
    degrees: float


@dataclass(frozen=True)
class Wait:
    seconds: float


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Follow:
    person: Ref


@dataclass(frozen=True)
class Clarify:
    """The planner cannot act: ``not_found:LABEL``, ``ambiguous:LABEL`` or ``unsupported``."""

    reason: str
    label: str = ""


Step = Union[Navigate, Pick, PlaceOn, Handover, Rotate, Wait, Stop, Follow, Clarify]
Plan = tuple  # tuple[Step, ...]


def format_number(value: float) -> str:
    """Canonical number text: integers without a point, otherwise up to 3 decimals."""
    if not math.isfinite(value):
        raise PlanSyntaxError(f"number {value!r} is not finite")
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def format_step(step: Step) -> str:
    if isinstance(step, Navigate):
        return f"navigate({step.target})"
    if isinstance(step, Pick):
        return f"pick({step.obj})"
    if isinstance(step, PlaceOn):
        return f"place({step.obj}, {step.target})"
    if isinstance(step, Handover):
        return f"handover({step.obj}, {step.person})"
    if isinstance(step, Rotate):
        return f"rotate({format_number(step.degrees)})"
    if isinstance(step, Wait):
        return f"wait({format_number(step.seconds)})"
    if isinstance(step, Stop):
        return "stop()"
    if isinstance(step, Follow):
        return f"follow({step.person})"
    if isinstance(step, Clarify):
        return f"clarify({step.reason}:{step.label})" if step.label else f"clarify({step.reason})"
    raise TypeError(f"not a plan step: {step!r}")


def format_plan(steps) -> str:
    """The canonical text of a sequence of steps."""
    return "; ".join(format_step(step) for step in steps)


def _parse_ref(text: str, *, kinds=REF_KINDS) -> Ref:
    kind, sep, name = text.strip().partition(":")
    if not sep:
        raise PlanSyntaxError(f"expected KIND:NAME, got {text.strip()!r}")
    if kind not in kinds:
        raise PlanSyntaxError(f"reference {text.strip()!r} must be one of {'/'.join(kinds)}")
    return Ref(kind, name)


def _parse_number(text: str, what: str) -> float:
    text = text.strip()
    if not _NUMBER_RE.match(text):
        raise PlanSyntaxError(f"{what} must be a plain number, got {text!r}")
    return float(text)


def _split_args(body: str) -> list:
    body = body.strip()
    return [] if not body else [arg.strip() for arg in body.split(",")]


def _expect_args(name: str, args: list, count: int) -> None:
    if len(args) != count:
        raise PlanSyntaxError(f"{name}() takes {count} argument(s), got {len(args)}")


def _parse_clarify(args: list) -> Clarify:
    _expect_args("clarify", args, 1)
    reason, sep, label = args[0].partition(":")
    if reason not in CLARIFY_REASONS:
        raise PlanSyntaxError(f"clarify reason must be one of {CLARIFY_REASONS}, got {reason!r}")
    if reason == "unsupported":
        if sep:
            raise PlanSyntaxError("clarify(unsupported) takes no label")
        return Clarify(reason)
    if not sep or not _NAME_RE.match(label):
        raise PlanSyntaxError(f"clarify({reason}:LABEL) needs a label")
    return Clarify(reason, label)


def parse_step(text: str) -> Step:
    match = _STEP_RE.match(text)
    if not match:
        raise PlanSyntaxError(f"not a step: {text.strip()!r}")
    name, args = match.group(1), _split_args(match.group(2))
    if name == "navigate":
        _expect_args(name, args, 1)
        return Navigate(_parse_ref(args[0]))
    if name == "pick":
        _expect_args(name, args, 1)
        return Pick(_parse_ref(args[0], kinds=("obj",)))
    if name == "place":
        _expect_args(name, args, 2)
        return PlaceOn(_parse_ref(args[0], kinds=("obj",)), _parse_ref(args[1], kinds=("obj", "place")))
    if name == "handover":
        _expect_args(name, args, 2)
        return Handover(_parse_ref(args[0], kinds=("obj",)), _parse_ref(args[1], kinds=("person",)))
    if name == "rotate":
        _expect_args(name, args, 1)
        return Rotate(_parse_number(args[0], "rotate() angle"))
    if name == "wait":
        _expect_args(name, args, 1)
        return Wait(_parse_number(args[0], "wait() duration"))
    if name == "stop":
        _expect_args(name, args, 0)
        return Stop()
    if name == "follow":
        _expect_args(name, args, 1)
        return Follow(_parse_ref(args[0], kinds=("person",)))
    if name == "clarify":
        return _parse_clarify(args)
    raise PlanSyntaxError(f"unknown action {name!r}")


def parse_plan(text: str) -> tuple:
    """Parse plan text into a tuple of typed steps; raises PlanSyntaxError with the reason."""
    if not isinstance(text, str):
        raise PlanSyntaxError(f"plan must be text, got {type(text).__name__}")
    if len(text) > MAX_PLAN_CHARS:
        raise PlanSyntaxError(f"plan is {len(text)} characters; the limit is {MAX_PLAN_CHARS}")
    parts = [part for part in text.split(";")]
    if not text.strip() or any(not part.strip() for part in parts):
        raise PlanSyntaxError("empty plan or empty step")
    if len(parts) > MAX_STEPS:
        raise PlanSyntaxError(f"plan has {len(parts)} steps; the limit is {MAX_STEPS}")
    steps = tuple(parse_step(part) for part in parts)
    clarify_steps = [step for step in steps if isinstance(step, Clarify)]
    if clarify_steps and len(steps) != 1:
        raise PlanSyntaxError("clarify() must be the whole plan")
    return steps


def is_clarification(steps) -> bool:
    return len(steps) == 1 and isinstance(steps[0], Clarify)
