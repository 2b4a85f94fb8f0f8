"""Plan coverage: what a plan that acts, rather than refuses, must contain.

The contract gives every clause its steps, so a plan that does not refuse names every object a mention grounded
to (except the anchors of "the X near the Y") and every number said ("turn 90 degrees" -> ``rotate(90)``). The
corpus's reference planner never breaks this (``test/test_coverage.py`` checks it on training data). A planner
that stops after three clauses of four breaks it, and ``PlannerModel`` then asks the model to go on
(``PlannerModel._complete``): the model, not this module, still writes the missing steps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from wafer_reasoner.planner.language import PlanSyntaxError, Ref, Rotate, Wait, is_clarification, parse_plan
from wafer_reasoner.understanding.words import said_numbers


def _named_objects(steps) -> set:
    return {value.name for step in steps for value in (getattr(step, f.name) for f in dataclasses.fields(step))
            if isinstance(value, Ref) and value.kind == "obj"}


def _written_numbers(steps) -> set:
    return {abs(step.degrees if isinstance(step, Rotate) else step.seconds)
            for step in steps if isinstance(step, (Rotate, Wait))}


@dataclass(frozen=True)
class Coverage:
    objects: tuple  # scene ids a plan that acts must name
    numbers: tuple  # number literals it must write (rotate or wait), as said ("90")

    def gaps(self, plan_text: str) -> list:
        """What plan_text lacks ([] for a refusal, which names nothing; everything for text that does not
        parse)."""
        try:
            steps = parse_plan(plan_text)
        except PlanSyntaxError:
            steps = ()
        if is_clarification(steps):
            return []
        named, written = _named_objects(steps), _written_numbers(steps)
        return [f"obj:{o}" for o in self.objects if o not in named] + \
            [n for n in self.numbers if float(n) not in written]


def required(grounded, words, utterance: str) -> Coverage:
    """What a plan must cover, given the mentions as grounded (``grounding.grounded_mentions``), the normalised
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
