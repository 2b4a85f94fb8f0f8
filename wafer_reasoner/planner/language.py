"""The action language: typed plan steps, a strict parser and the canonical printer.

A plan is text such as::

    navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)

Steps are joined by ``"; "``.  ``format_plan(parse_plan(text))`` is the canonical form of ``text``;
the model is trained to emit canonical text, and everything downstream works on typed steps.
The full contract (semantics of each utterance family) is in ``docs/action_language.md``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Union

from .syntax import (
    ANGLE,
    ARG_SEPARATOR,
    CLARIFY_REASONS,
    DURATION,
    FORMS,
    LABELLED_REASONS,
    MAX_PLAN_CHARS,
    MAX_STEPS,
    NAME_PATTERN,
    REF_KINDS,
    SEPARATOR,
    SPEAKER,
    reason_text,
)

_NAME_RE = re.compile(rf"^{NAME_PATTERN}$")
_STEP_RE = re.compile(r"^\s*([a-z_]+)\s*\((.*)\)\s*$")
_NUMBER_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
__all__ = ["MAX_PLAN_CHARS", "MAX_STEPS", "REF_KINDS", "CLARIFY_REASONS", "SPEAKER"]


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
# the step type of each form of planner/syntax.py
_STEP_TYPES = {"navigate": Navigate, "pick": Pick, "place": PlaceOn, "handover": Handover, "rotate": Rotate,
               "wait": Wait, "stop": Stop, "follow": Follow, "clarify": Clarify}
_FORM_NAMES = {step_type: name for name, step_type in _STEP_TYPES.items()}
Plan = tuple  # tuple[Step, ...]


def format_number(value: float) -> str:
    """Canonical number text: integers without a point, otherwise up to 3 decimals."""
    if not math.isfinite(value):
        raise PlanSyntaxError(f"number {value!r} is not finite")
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def format_step(step: Step) -> str:
    form = FORMS.get(_FORM_NAMES.get(type(step), ""))
    if form is None:
        raise TypeError(f"not a plan step: {step!r}")
    if isinstance(step, Clarify):
        args = [reason_text(step.reason) + step.label]
    else:
        args = [format_number(value) if isinstance(value, (int, float)) else str(value)
                for value in (getattr(step, field.name) for field in dataclasses.fields(step))]
    return f"{form.name}({ARG_SEPARATOR.join(args)})" if form.args else form.opener


def format_plan(steps) -> str:
    """The canonical text of a sequence of steps."""
    return SEPARATOR.join(format_step(step) for step in steps)


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
    if reason not in LABELLED_REASONS:
        if sep:
            raise PlanSyntaxError("clarify(unsupported) takes no label")
        return Clarify(reason)
    if not sep or not _NAME_RE.match(label):
        raise PlanSyntaxError(f"clarify({reason}:LABEL) needs a label")
    return Clarify(reason, label)


def _parse_arg(step_name: str, kind, text: str):
    if kind == ANGLE:
        return _parse_number(text, f"{step_name}() angle")
    if kind == DURATION:
        return _parse_number(text, f"{step_name}() duration")
    return _parse_ref(text, kinds=kind)


def parse_step(text: str) -> Step:
    match = _STEP_RE.match(text)
    if not match:
        raise PlanSyntaxError(f"not a step: {text.strip()!r}")
    name, args = match.group(1), _split_args(match.group(2))
    form = FORMS.get(name)
    if form is None:
        raise PlanSyntaxError(f"unknown action {name!r}")
    if name == "clarify":
        return _parse_clarify(args)
    _expect_args(name, args, len(form.args))
    return _STEP_TYPES[name](*(_parse_arg(name, kind, arg) for kind, arg in zip(form.args, args)))


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
