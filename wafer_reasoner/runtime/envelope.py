"""The safety envelope: what a plan that moves the robot must have been asked for, whatever the model wrote.

Checked after the planner and before the verifier (``runtime/query.py``), from the words heard and the scene
alone: no model, no grounding rules. The planner's own understanding tries to get the plan right; this only
refuses a plan that no reading of the utterance could license, so gibberish, another language or a made-up
name never moves the robot (docs/action_language.md section 4.1).

A plan that moves (anything but a clarify or a stop) must:

- name only objects whose label the utterance says (any colour, any locator: "near the Y" anchors included),
  the held object (what "it" may mean), and places of the map the utterance names;
- name the speaker (``person:user``) only when words that mean it are said: for a handover and the walk to it,
  me, my, I, us, we, our, here or a bring verb ("fetch the cup": the speaker receives it); for a walk alone, a
  come verb or "here" ("come here"); for follow, a follow or come verb or "walk / stay / keep (up) with";
- rotate by a said number, or by 90 after left/right/clockwise or 180 after "(a)round" (the contract's bare
  turns); wait by a said number;
- use every number said for a turn or a wait, and none that no plan can copy ("wait 99999999999 seconds",
  "1e308 degrees", "turn left infinity degrees");
- come from an utterance with a command verb in it (a verb of section 2.1, or "need / want / like / have",
  "make your way").
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from wafer_reasoner.planner.language import Follow, Handover, Ref, Rotate, Stop, Wait, is_clarification
from wafer_reasoner.planner.phrases import spoken
from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.understanding import lexicon
from wafer_reasoner.understanding.mentions import hear
from wafer_reasoner.understanding.words import plannable_numbers, unplannable_number

# who receives a handover: "me", "I" ("can I have"), or the recipient a bring verb implies ("fetch the cup")
RECIPIENT_WORDS = frozenset({"me", "my", "i", "eye", "i'd", "i'm", "us", "we", "our", "here", "mine"}) | \
    lexicon.BRING_VERBS
# going to the speaker on its own: "come here", "get over here"
COME_WORDS = lexicon.COME_VERBS | {"here"}
# following: a follow, come, walk, stay or keep verb with "me", "us" or "along" ("follow me", "come along")
FOLLOW_WORDS = lexicon.FOLLOW_VERBS | lexicon.COME_VERBS
_ALONG_WORDS, _WITH_SPEAKER = frozenset({"walk", "stay", "keep"}), frozenset({"me", "us"})
_DIRECTIONS = frozenset({"left", "right", "write", "clockwise", "counterclockwise", "anticlockwise"})  # "write": right
_AROUND = frozenset({"around", "round"})
USER = "user"


@dataclass(frozen=True)
class Licence:
    """What an utterance licenses a plan to name and do."""

    words: frozenset  # the normalised words heard
    objects: frozenset  # scene ids
    places: frozenset  # place names of the map
    numbers: frozenset  # floats said for a turn or a wait
    too_long: bool  # a number too long to plan was said


def licence(scene: Scene, utterance: str) -> Licence:
    heard = hear(scene, utterance)
    labels = {label for label, _, _ in heard.spans}
    objects = {o.id for o in scene.objects if o.label in labels} | ({scene.holding} if scene.holding else set())
    numbers = plannable_numbers(heard.said, utterance)
    words = frozenset(lexicon.VERB_SLIPS.get(word, word) for word in heard.words)  # "fech me the cup": fetch
    return Licence(words, frozenset(objects), frozenset(name for name, _, _ in heard.places),
                   frozenset(float(n) for n in numbers), unplannable_number(heard.words, utterance))


def _refs(step) -> list:
    return [value for value in (getattr(step, f.name) for f in fields(step)) if isinstance(value, Ref)]


def _speaker_licensed(step, following, words: frozenset) -> bool:
    """Whether ``words`` license ``step`` to name the speaker (``following``: the step after it, or None)."""
    if isinstance(step, Follow):  # "follow me", "come along", "walk with me"; never "follow him"
        return bool((FOLLOW_WORDS | _ALONG_WORDS) & words) and bool((_WITH_SPEAKER | {"along"}) & words)
    if isinstance(step, Handover) or isinstance(following, Handover):  # the walk to a handover
        return bool(RECIPIENT_WORDS & words)
    return bool(COME_WORDS & words)


def _ref_problem(ref: Ref, step, following, scene: Scene, allowed: Licence) -> str:
    """Why a reference is outside the licence; one to nothing in the scene is the verifier's to refuse."""
    if ref.kind == "obj" and ref.name not in allowed.objects and scene.object(ref.name) is not None:
        return f"I won't touch the {spoken(scene.object(ref.name).label)}: you didn't mention it."
    if ref.kind == "place" and ref.name not in allowed.places and scene.place(ref.name) is not None:
        return f"I won't go to the {spoken(ref.name)}: you didn't name it."
    if ref.kind == "person" and (ref.name != USER or not _speaker_licensed(step, following, allowed.words)):
        return "I won't come to you: you didn't ask me to."
    return ""


def _turn_allowed(degrees: float, allowed: Licence) -> bool:
    size = abs(degrees)
    return size in allowed.numbers or (size == 90.0 and bool(_DIRECTIONS & allowed.words)) or \
        (size == 180.0 and bool(_AROUND & allowed.words))


def _step_problem(step, following, scene: Scene, allowed: Licence) -> str:
    if isinstance(step, Rotate):
        return "" if _turn_allowed(step.degrees, allowed) else \
            f"I won't turn {step.degrees:g} degrees: that isn't what I heard."
    if isinstance(step, Wait):
        return "" if step.seconds in allowed.numbers else \
            f"I won't wait {step.seconds:g} seconds: that isn't what I heard."
    for ref in _refs(step):
        problem = _ref_problem(ref, step, following, scene, allowed)
        if problem:
            return problem
    return ""


def breach(steps, scene: Scene, utterance: str) -> str:
    """Why a plan leaves the envelope of ``utterance`` ("" when it stays inside, or only speaks or stops)."""
    if not steps or is_clarification(steps) or all(isinstance(step, Stop) for step in steps):
        return ""
    allowed = licence(scene, utterance)
    if not lexicon.REQUEST_WORDS & allowed.words:
        return "I didn't hear a request I can act on."
    if allowed.too_long:
        return "That number is too long for me to plan with."
    for index, step in enumerate(steps):
        problem = _step_problem(step, steps[index + 1] if index + 1 < len(steps) else None, scene, allowed)
        if problem:
            return problem
    written = {abs(s.degrees) for s in steps if isinstance(s, Rotate)} | \
        {s.seconds for s in steps if isinstance(s, Wait)}
    unused = sorted(n for n in allowed.numbers if n not in written)
    if unused:
        return f"I heard {unused[0]:g} but my plan doesn't use it."
    return ""
