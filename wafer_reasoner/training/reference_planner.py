"""The reference planner: the contract's plan for sampled clauses (docs/action_language.md), for training data.

``clause_steps`` writes one clause's gold steps from the scene and the clause's intent and referring
expressions; ``reference_plan`` joins clauses as the contract joins them (the first clarify is the plan).
"""

from __future__ import annotations

from dataclasses import dataclass

from wafer_reasoner.planner.language import (
    Clarify,
    Follow,
    Handover,
    Navigate,
    Pick,
    PlaceOn,
    Ref,
    Rotate,
    Stop,
    Wait,
    format_plan,
)
from wafer_reasoner.planner.scene import Scene, SceneObject
from wafer_reasoner.understanding import grounding
from wafer_reasoner.understanding.clauses import repeats_delivery

USER = Ref("person", "user")
UNSUPPORTED_INTENTS = ("unsupported", "unsupported_verb", "unsupported_people", "unsupported_manner")


@dataclass(frozen=True)
class Expression:
    """A referring expression: the label and its modifiers (as the contract reads them)."""

    label: str  # "coffee_mug"
    color: str = ""
    superlative: str = ""  # "nearest" | "closest" | "farthest"
    near_label: str = ""  # "the X near the Y"
    near_word: str = "near"  # the locator said: "near", "on", "from", ...
    near_place: str = ""  # "the X in the PLACE"
    indefinite: bool = False  # "a X": the nearest of several

    def render(self) -> str:
        words = ["a" if self.indefinite else "the"]
        if self.superlative:
            words.append(self.superlative)
        if self.color:
            words.append(self.color)
        words.append(self.label.replace("_", " "))
        anchor = self.near_label or self.near_place
        if anchor:
            words += [*self.near_word.split(), "the", anchor.replace("_", " ")]
        return " ".join(words)


def label_key(text: str) -> str:
    return text.replace(" ", "_")


class NeedsClarify(Exception):
    def __init__(self, step: Clarify):
        super().__init__(step)
        self.step = step


class Infeasible(Exception):
    """The sampled command cannot be said as drawn (a plan too long, a name heard as another); drawn again."""


def resolve(scene: Scene, expr: Expression) -> SceneObject:
    """The contract's grounding rules (understanding/grounding.py, shared with the prompt builder); raises
    NeedsClarify."""
    superlative = expr.superlative or (grounding.NEAREST if expr.indefinite else "")
    meant = grounding.resolve(scene, expr.label, expr.color, superlative, expr.near_label, expr.near_place)
    if meant == "missing":
        raise NeedsClarify(Clarify("not_found", expr.label))
    if meant == "ambiguous":
        raise NeedsClarify(Clarify("ambiguous", expr.label))
    return meant


@dataclass
class PlanState:
    holding: str


def _fetch_steps(obj: SceneObject, state: PlanState) -> list:
    """Go to and pick up obj unless it is held (a pick while holding something else is still written: the
    verifier refuses it, as the contract says)."""
    if state.holding == obj.id:
        return []
    state.holding = obj.id
    return [Navigate(Ref("obj", obj.id)), Pick(Ref("obj", obj.id))]


def _destination(scene: Scene, dest) -> Ref:
    if isinstance(dest, Expression):
        return Ref("obj", resolve(scene, dest).id)
    if scene.place(dest) is None:
        raise NeedsClarify(Clarify("not_found", dest))
    return Ref("place", dest)


def _object_steps(scene: Scene, clause: dict, state: PlanState) -> list:
    intent = clause["intent"]
    obj = resolve(scene, clause["o"])
    ref = Ref("obj", obj.id)
    if intent == "bring":
        steps = _fetch_steps(obj, state) + [Navigate(USER), Handover(ref, USER)]
        state.holding = ""
        return steps
    if intent == "pick":
        state.holding = obj.id
        return [Navigate(ref), Pick(ref)]
    if intent == "put":
        steps = _fetch_steps(obj, state)
        target = _destination(scene, clause["d"])
        state.holding = ""
        return steps + [Navigate(target), PlaceOn(ref, target)]
    return [Navigate(ref)]  # go_object


def clause_steps(scene: Scene, clause: dict, state: PlanState) -> list:
    """Gold steps for one clause (raises NeedsClarify)."""
    intent = clause["intent"]
    if intent in ("bring", "pick", "put", "go_object"):
        return _object_steps(scene, clause, state)
    if intent in UNSUPPORTED_INTENTS:
        raise NeedsClarify(Clarify("unsupported"))
    if intent == "go_place":
        return [Navigate(_destination(scene, clause["p"]))]
    turns = {"turn_left": clause.get("n", 0), "turn_right": -clause.get("n", 0), "turn_unsigned": clause.get("n", 0),
             "turn_left_bare": 90, "turn_right_bare": -90, "turn_around": 180}
    if intent in turns:
        return [Rotate(turns[intent])]
    simple = {"come": Navigate(USER), "follow": Follow(USER), "stop": Stop()}
    if intent in simple:
        return [simple[intent]]
    if intent == "wait":
        return [Wait(clause["n"])]
    raise NeedsClarify(Clarify("unsupported"))


def reference_plan(scene: Scene, clauses: list) -> str:
    """The contract's plan for the clauses: each clause's steps in order (a clause that only hands the speaker
    again what was just handed to them adds nothing); the first clarify is the whole plan; anything after a
    follow makes it unsupported."""
    state = PlanState(holding=scene.holding)
    steps = []
    try:
        for index, clause in enumerate(clauses):
            if clause["intent"] == "follow" and index < len(clauses) - 1:
                raise NeedsClarify(Clarify("unsupported"))
            more = clause_steps(scene, clause, state)
            if not (steps and repeats_delivery(format_plan(steps), format_plan(more))):
                steps += more
    except NeedsClarify as clarify:
        return format_plan([clarify.step])
    return format_plan(steps)
