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


@dataclass(frozen=True)
class Expression:
    """A referring expression: the label and at most one modifier."""

    label: str  # "coffee_mug"
    color: str = ""
    superlative: str = ""  # "nearest" | "closest" | "farthest"
    near_label: str = ""  # "the X near the Y"
    near_word: str = "near"

    def render(self) -> str:
        words = ["the"]
        if self.superlative:
            words.append(self.superlative)
        if self.color:
            words.append(self.color)
        words.append(self.label.replace("_", " "))
        if self.near_label:
            words += [*self.near_word.split(), "the", self.near_label.replace("_", " ")]
        return " ".join(words)


def label_key(text: str) -> str:
    return text.replace(" ", "_")


class NeedsClarify(Exception):
    def __init__(self, step: Clarify):
        super().__init__(step)
        self.step = step


def resolve(scene: Scene, expr: Expression) -> SceneObject:
    """The contract's grounding rules (understanding/grounding.py, shared with the prompt builder); raises
    NeedsClarify."""
    meant = grounding.resolve(scene, expr.label, expr.color, expr.superlative, expr.near_label)
    if meant == "missing":
        raise NeedsClarify(Clarify("not_found", expr.label))
    if meant == "ambiguous":
        raise NeedsClarify(Clarify("ambiguous", expr.label))
    return meant


@dataclass
class PlanState:
    holding: str


class Infeasible(Exception):
    """The sampled command would make the robot hold two things; the sampler draws another example."""


def _fetch_steps(obj: SceneObject, state: PlanState) -> list:
    if state.holding == obj.id:
        return []
    if state.holding:
        raise Infeasible(f"already holding {state.holding}")
    state.holding = obj.id
    return [Navigate(Ref("obj", obj.id)), Pick(Ref("obj", obj.id))]


def clause_steps(scene: Scene, clause: dict, state: PlanState) -> list:
    """Gold steps for one clause (raises NeedsClarify)."""
    intent = clause["intent"]
    if intent == "bring":
        obj = resolve(scene, clause["o"])
        user = Ref("person", "user")
        steps = _fetch_steps(obj, state) + [Navigate(user), Handover(Ref("obj", obj.id), user)]
        state.holding = ""
        return steps
    if intent == "pick":
        obj = resolve(scene, clause["o"])
        if state.holding:
            raise Infeasible(f"already holding {state.holding}")
        state.holding = obj.id
        return [Navigate(Ref("obj", obj.id)), Pick(Ref("obj", obj.id))]
    if intent == "put":
        obj = resolve(scene, clause["o"])
        dest = clause["d"]
        if isinstance(dest, Expression):
            target = Ref("obj", resolve(scene, dest).id)
        else:
            if scene.place(dest) is None:
                raise NeedsClarify(Clarify("not_found", dest))
            target = Ref("place", dest)
        steps = _fetch_steps(obj, state) + [Navigate(target), PlaceOn(Ref("obj", obj.id), target)]
        state.holding = ""
        return steps
    if intent == "go_place":
        if scene.place(clause["p"]) is None:
            raise NeedsClarify(Clarify("not_found", clause["p"]))
        return [Navigate(Ref("place", clause["p"]))]
    if intent == "go_object":
        return [Navigate(Ref("obj", resolve(scene, clause["o"]).id))]
    if intent in ("turn_left", "turn_right", "turn_around"):
        degrees = {"turn_left": clause.get("n", 0), "turn_right": -clause.get("n", 0), "turn_around": 180}[intent]
        return [Rotate(degrees)]
    if intent == "wait":
        return [Wait(clause["n"])]
    if intent == "follow":
        return [Follow(Ref("person", "user"))]
    if intent == "stop":
        return [Stop()]
    raise NeedsClarify(Clarify("unsupported"))


def reference_plan(scene: Scene, clauses: list) -> str:
    state = PlanState(holding=scene.holding)
    steps = []
    try:
        for clause in clauses:
            steps += clause_steps(scene, clause, state)
    except NeedsClarify as clarify:
        return format_plan([clarify.step])
    return format_plan(steps)


