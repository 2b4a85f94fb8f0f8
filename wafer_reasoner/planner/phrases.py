"""Short sentences the robot says out loud: names of things, clarification questions.

Kept in one place so the verifier's reasons, the executor's failures and the clarify questions
sound the same.  Ids such as ``cup_1`` are spoken by label ("the red cup") when the scene knows them.
"""

from __future__ import annotations

from .language import SPEAKER, Clarify, Ref
from .scene import Scene

_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def spoken(name: str) -> str:
    """'coffee_mug' -> 'coffee mug' (text-to-speech reads underscores aloud)."""
    return name.replace("_", " ")


def plural(label: str) -> str:
    """Good enough for object labels: cup -> cups, box -> boxes, battery -> batteries."""
    if label.endswith(("s", "x", "z", "ch", "sh")):
        return label + "es"
    if label.endswith("y") and label[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return label[:-1] + "ies"
    return label + "s"


def with_article(label: str) -> str:
    return ("an " if label[:1] in "aeiou" and label else "a ") + label


def number_word(count: int) -> str:
    return _NUMBER_WORDS[count] if 0 <= count < len(_NUMBER_WORDS) else str(count)


def describe_ref(ref: Ref, scene: Scene) -> str:
    """'the red cup', 'you', 'person bob', 'the kitchen'."""
    if ref.kind == "person":
        return "you" if ref.name == SPEAKER else f"person {spoken(ref.name)}"
    if ref.kind == "place":
        return f"the {spoken(ref.name)}"
    obj = scene.object(ref.name)
    if obj is None:
        return spoken(ref.name)
    colour = f"{spoken(obj.color)} " if obj.color else ""
    return f"the {colour}{spoken(obj.label)}"


def clarify_question(step: Clarify, scene: Scene) -> str:
    """What the robot asks or says for a clarify() plan."""
    label = spoken(step.label)
    if step.reason == "ambiguous":
        count = sum(1 for obj in scene.objects if obj.label == step.label)
        if count >= 2:
            return f"I see {number_word(count)} {plural(label)} — which one do you mean?"
        return f"Which {label} do you mean?"
    if step.reason == "not_found":
        return f"I can't see {with_article(label)}."
    return "Sorry, I can't do that."
