"""Plan coverage: what a plan that acts, rather than refuses, must contain.

The contract gives every clause its steps, so a plan that does not refuse names every object a mention grounded
to (except the anchors of locators: "the cup near the table"), every place of the map it names (again except a
locator's: "the cup in the kitchen"; and none when the plan ends in follow: "come with me to the kitchen") and
every number said for a turn or a wait ("turn 90 degrees" -> ``rotate(90)``). The corpus's reference planner
never breaks this (``test/test_coverage.py`` checks it on training data). A planner that stops after three
clauses of four breaks it, and ``PlannerModel`` then asks the model to go on (``PlannerModel._complete``): the
model, not this module, still writes the missing steps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from wafer_reasoner.planner.language import Follow, PlanSyntaxError, Ref, Rotate, Wait, is_clarification, parse_plan
from wafer_reasoner.understanding.words import plannable_numbers


def _named(steps, kind: str) -> set:
    return {value.name for step in steps for value in (getattr(step, f.name) for f in dataclasses.fields(step))
            if isinstance(value, Ref) and value.kind == kind}


def _written_numbers(steps) -> set:
    return {abs(step.degrees if isinstance(step, Rotate) else step.seconds)
            for step in steps if isinstance(step, (Rotate, Wait))}


@dataclass(frozen=True)
class Coverage:
    objects: tuple  # scene ids a plan that acts must name
    numbers: tuple  # number literals it must write (rotate or wait), as said ("90")
    places: tuple = ()  # places of the map it must name

    def gaps(self, plan_text: str) -> list:
        """What plan_text lacks ([] for a refusal, which names nothing; everything for text that does not
        parse)."""
        try:
            steps = parse_plan(plan_text)
        except PlanSyntaxError:
            steps = ()
        if is_clarification(steps):
            return []
        objects, places, written = _named(steps, "obj"), _named(steps, "place"), _written_numbers(steps)
        # "come with me to the kitchen": a closing follow step may be where a said place went (the language has
        # no destination for follow), so a plan that ends in one owes no place
        owed_places = () if steps and isinstance(steps[-1], Follow) else self.places
        return [f"obj:{o}" for o in self.objects if o not in objects] + \
            [f"place:{p}" for p in owed_places if p not in places] + \
            [n for n in self.numbers if float(n) not in written]


def required(grounding, words, utterance: str) -> Coverage:
    """What a plan must cover, given the mentions as grounded (``grounding.ground``), the annotated words
    (``Heard.said``) and the utterance. A mention a locator names ("the cup near the table": the table) need not
    be acted on."""
    anchors = grounding.anchors()
    objects = []
    for reference, meant in grounding.objects:
        if isinstance(meant, str) or (reference is not None and reference.label in anchors):
            continue
        if meant.id not in objects:
            objects.append(meant.id)
    places = []
    for place in grounding.places:
        if place is not None and place.name not in anchors and place.name not in places:
            places.append(place.name)
    numbers = tuple(n for n in plannable_numbers(words, utterance) if "." not in n)
    return Coverage(tuple(objects), numbers, tuple(places))
