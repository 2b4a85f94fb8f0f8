"""Plan coverage (prompt format v2): what a plan that acts, rather than refuses, must contain.

The contract gives every clause its steps, so a plan that does not refuse names every object a mention grounded
to (except the anchors of "the X near the Y") and every number said ("turn 90 degrees" -> ``rotate(90)``). The
corpus's reference planner never breaks this (``test/test_coverage.py`` checks it on training data). A planner
that stops after three clauses of four breaks it, and ``PlannerModel`` then asks the model to go on
(``PlannerModel._complete``): the model, not this module, still writes the missing steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wafer_reasoner.engine.grammar import said_numbers


@dataclass(frozen=True)
class Coverage:
    objects: tuple  # scene ids a plan that acts must name
    numbers: tuple  # number literals it must write (rotate or wait)

    def gaps(self, plan_text: str) -> list:
        """What plan_text lacks ([] for a refusal, which names nothing)."""
        if plan_text.startswith("clarify("):
            return []
        named = set(re.findall(r"obj:([A-Za-z0-9_.\-]+)", plan_text))
        written = {value.lstrip("-") for value in re.findall(r"(?:rotate|wait)\((-?[\d.]+)\)", plan_text)}
        return [f"obj:{o}" for o in self.objects if o not in named] + [n for n in self.numbers if n not in written]


def required(grounded, words, utterance: str) -> Coverage:
    """What a plan must cover, given the mentions as grounded (``prompt.grounded_mentions``), the normalised
    words and the utterance. A mention whose label an earlier mention named as its anchor ("the cup near the
    table") is the anchor, which a plan need not name."""
    objects = []
    for index, (reference, meant) in enumerate(grounded):
        anchor = any(earlier.near_label == reference.label for earlier, _ in grounded[:index])
        if not isinstance(meant, str) and not anchor and meant.id not in objects:
            objects.append(meant.id)
    said = said_numbers(words, utterance)
    decimals = {n.replace(".", "") for n in said if "." in n}  # "1.5" is also heard as the digits "1 5"
    numbers = tuple(n for n in said if "." not in n and n not in decimals)
    return Coverage(tuple(objects), numbers)
