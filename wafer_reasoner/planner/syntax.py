"""The action language's surface syntax, defined once.

Everything that reads or writes plan text derives from the tables here:

- ``planner/language.py``: the strict parser and the canonical printer;
- ``engine/grammar.py``: the token automaton that constrains decoding;
- ``engine/prompt.py``: the plan tokens of the model's vocabulary and how plan text splits into them;
- ``understanding/coverage.py`` reads plans through the parser.

A plan is steps joined by ``SEPARATOR``; a step is ``name(arg, arg)``. Each ``StepForm`` names its arguments'
kinds: a reference (``obj:ID``, ``place:NAME``, ``person:ID``; which kinds it takes), a number (an angle may be
negative, a duration never is), or a clarify reason (``not_found:LABEL``, ``ambiguous:LABEL``, ``unsupported``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEPARATOR = "; "  # between steps
ARG_SEPARATOR = ", "  # between the arguments of a step
CLOSE = ")"
SPEAKER = "user"  # the person who spoke: ``person:user``
REF_KINDS = ("obj", "place", "person")
CLARIFY_REASONS = ("not_found", "ambiguous", "unsupported")
LABELLED_REASONS = ("not_found", "ambiguous")  # take ``:LABEL``; ``unsupported`` stands alone
NAME_PATTERN = r"[A-Za-z0-9_.\-]+"  # ids, place names and labels
MINUS, DECIMAL_POINT = "-", "."
MAX_PLAN_CHARS = 4096
MAX_STEPS = 32
MAX_INTEGER_DIGITS = 4  # any number a plan writes: up to 4 integer digits (no leading zero) ...
MAX_DECIMALS = 3  # ... and up to 3 decimals (the canonical form rounds to 3)
MAX_SAID_DIGITS = 9  # a number said is planned as said up to this many digits (the verifier judges its size)

# argument kinds: a tuple of reference kinds, or one of these
ANGLE = "angle"  # a number, negative allowed (rotate: left is positive)
DURATION = "duration"  # a number that is never negative (the parser reads a sign; the verifier refuses it)
REASON = "reason"  # a clarify reason
OBJ, PLACE_OR_OBJ, PERSON = ("obj",), ("obj", "place"), ("person",)


@dataclass(frozen=True)
class StepForm:
    name: str
    args: tuple  # argument kinds, in order
    ends_plan: bool = False  # nothing may follow it (stop, follow)
    whole_plan: bool = False  # it is the whole plan (clarify)

    @property
    def opener(self) -> str:
        """The text a step of this form starts with: ``navigate(``, or ``stop()`` for a step without arguments."""
        return f"{self.name}(" if self.args else f"{self.name}()"


STEP_FORMS = (
    StepForm("navigate", (REF_KINDS,)),
    StepForm("pick", (OBJ,)),
    StepForm("place", (OBJ, PLACE_OR_OBJ)),
    StepForm("handover", (OBJ, PERSON)),
    StepForm("rotate", (ANGLE,)),
    StepForm("wait", (DURATION,)),
    StepForm("stop", (), ends_plan=True),
    StepForm("follow", (PERSON,), ends_plan=True),
    StepForm("clarify", (REASON,), whole_plan=True),
)
FORMS = {form.name: form for form in STEP_FORMS}


def ref_prefix(kind: str) -> str:
    return f"{kind}:"


def reason_text(reason: str) -> str:
    """How a clarify reason is written before its label (``not_found:``), or alone (``unsupported``)."""
    return f"{reason}:" if reason in LABELLED_REASONS else reason


def plan_tokens() -> tuple:
    """The fixed pieces plan text is made of, in the order the model's vocabulary lists them; names and numbers
    are written with word and digit tokens between them."""
    return (
        *(form.opener for form in STEP_FORMS),
        *(ref_prefix(kind) for kind in REF_KINDS),
        *(reason_text(reason) for reason in CLARIFY_REASONS),
        CLOSE, SEPARATOR, ARG_SEPARATOR, MINUS, DECIMAL_POINT, SPEAKER,
    )


def piece_pattern() -> re.Pattern:
    """Splits canonical plan text into the plan tokens, single digits and name chunks (longest piece first)."""
    fixed = sorted((token for token in plan_tokens() if token != SPEAKER), key=len, reverse=True)
    return re.compile("|".join(re.escape(token) for token in fixed) + r"|\d|[^:;,()\s]+")
