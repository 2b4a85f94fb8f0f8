"""Symbolic grounding of referring expressions: which scene object "the farthest red cup near
the table" names, or that it names none or several.

The planner model is good at what is fuzzy (which words are the verb, which mention is the object and which the
destination, where one clause ends) and, at the size that fits a robot's CPU, poor at what is exact (comparing
colours letter by letter, sorting distances). So the prompt builder reads each mention's modifiers off the
normalised words and applies the contract's rules (``docs/action_language.md``) here; the model then sees one
answer per mention (an object slot, ``<ambiguous>`` or ``<missing>``) and decides what to do with it.

A reference is read around a label mention (``understanding.mentions.mention_spans``)::

    [superlative] [colour] LABEL [near-word [determiner] ANCHOR-LABEL]

- the colour is the word right before the label when it is a colour of some scene object, a known colour word,
  or an unknown word after a determiner ("the teal cup" with no teal cup in view: not found, not "any cup");
- nearest / closest / farthest pick by distance from the robot among the matches (never ambiguous);
- near / next to / by / beside: the match's closest other-label object within NEAR_RADIUS_M has the anchor's label.
"""

from __future__ import annotations

from dataclasses import dataclass

from wafer_reasoner.planner.scene import Scene, SceneObject, distance
from wafer_reasoner.understanding.words import HEARD_AS

NEAR_RADIUS_M = 1.2
DETERMINERS = frozenset({"the", "that", "this", "my", "a", "an", "your", "those", "these"})
SUPERLATIVES = frozenset({"nearest", "closest", "farthest", "furthest"})
FARTHEST = frozenset({"farthest", "furthest"})
# common colour words perception reports; a colour said that no object has still restricts the match
COLOR_WORDS = frozenset({"red", "blue", "green", "yellow", "black", "white", "orange", "purple", "pink", "brown",
                         "gray", "silver", "gold", "dark", "light"})
# "next to" heard as "next two" or with "to" dropped; "by" as "bye" / "buy"
NEAR_PHRASES = (("next", "to"), ("next", "two"), ("next", "too"), ("close", "to"), ("near",), ("next",), ("by",),
                ("bye",), ("buy",), ("beside",))
# a stuttered or misheard near word before the anchor: "next two to the", "by bye the"
_SKIPPED_BEFORE_ANCHOR = frozenset({"to", "two", "too", "by", "bye", "buy", "near"})
ABSENT = "<absent>"  # an anchor label the scene does not have: nothing is near it


@dataclass(frozen=True)
class Reference:
    """One referring expression read around a mention of a scene label."""

    label: str  # scene label, "coffee_mug"
    start: int  # word span of the label mention in the normalised words
    end: int
    color: str = ""
    superlative: str = ""
    near_label: str = ""  # the anchor's label, ABSENT when the anchor is not a scene label


def near_neighbour(scene: Scene, obj):
    """The closest object of another label within NEAR_RADIUS_M of obj, or None ("the X near the Y")."""
    others = [o for o in scene.objects if o.id != obj.id and o.label != obj.label]
    if not others:
        return None
    best = min(others, key=lambda o: distance(o.x, o.y, obj.x, obj.y))
    return best if distance(best.x, best.y, obj.x, obj.y) <= NEAR_RADIUS_M else None


def matching_objects(scene: Scene, label: str, color: str = "", near_label: str = "") -> list:
    """Scene objects with the label (and colour, and an anchor of near_label next to them)."""
    matches = [o for o in scene.objects if o.label == label]
    if color:
        matches = [o for o in matches if o.color == color]
    if near_label:
        matches = [o for o in matches if (n := near_neighbour(scene, o)) is not None and n.label == near_label]
    return matches


def pick_by_distance(scene: Scene, matches: list, superlative: str) -> SceneObject:
    robot = scene.robot
    key = lambda o: (distance(o.x, o.y, robot.x, robot.y), o.id)  # noqa: E731
    return max(matches, key=key) if superlative in FARTHEST else min(matches, key=key)


def resolve(scene: Scene, label: str, color: str = "", superlative: str = "", near_label: str = ""):
    """The contract's grounding: the one object meant, "ambiguous" when several match and no superlative picks
    one, "missing" when none matches."""
    matches = matching_objects(scene, label, color, near_label)
    if not matches:
        return "missing"
    if superlative:
        return pick_by_distance(scene, matches, superlative)
    if len(matches) > 1:
        return "ambiguous"
    return matches[0]


def _color_word(word: str, scene_colors: set) -> str:
    """The colour a said word names, or ''."""
    word = HEARD_AS.get(word, word)
    if word in scene_colors or word in COLOR_WORDS:
        return word
    return ""


def _modifiers(words: list, start: int, scene_colors: set, known) -> tuple:
    """(colour, superlative) said right before a label at words[start]."""
    index, color = start - 1, ""
    if index >= 0 and words[index] not in DETERMINERS and words[index] not in SUPERLATIVES:
        color = _color_word(words[index], scene_colors)
        # an unknown word between a determiner and the label is taken as a colour ("the teal cup")
        if not color and not known(words[index]) and index >= 1 and \
                (words[index - 1] in DETERMINERS or words[index - 1] in SUPERLATIVES):
            color = words[index]
        if color:
            index -= 1
    superlative = words[index] if index >= 0 and words[index] in SUPERLATIVES else ""
    return color, superlative


def _anchor(words: list, end: int, starts: dict, known) -> str:
    """The anchor label of "near the Y" after a label ending at words[end], '' if none, ABSENT if Y is not a
    scene label."""
    for phrase in NEAR_PHRASES:
        if tuple(words[end:end + len(phrase)]) == phrase:
            index = end + len(phrase)
            break
    else:
        return ""
    determiner = False
    while index < len(words) and (words[index] in DETERMINERS or words[index] in _SKIPPED_BEFORE_ANCHOR):
        determiner |= words[index] in DETERMINERS
        index += 1
    if index in starts:
        return starts[index]
    if determiner and index < len(words) and not known(words[index]):
        return ABSENT
    return ""


def read_references(words: list, spans: list, scene: Scene, known=lambda word: True) -> list:
    """A Reference per label mention (spans: (label, start, end), every occurrence, in order). ``known(word)``
    says whether the model's vocabulary has the word (unknown words may be colours)."""
    scene_colors = {o.color for o in scene.objects if o.color}
    starts = {start: label for label, start, _ in spans}
    references = []
    for label, start, end in spans:
        color, superlative = _modifiers(words, start, scene_colors, known)
        references.append(Reference(label, start, end, color, superlative, _anchor(words, end, starts, known)))
    return references


def resolve_reference(scene: Scene, reference: Reference):
    return resolve(scene, reference.label, reference.color, reference.superlative, reference.near_label)


def grounded_mentions(scene: Scene, heard, known=lambda word: True) -> tuple:
    """(Reference, what it means: a SceneObject, "ambiguous" or "missing") per mention of ``heard``
    (mentions.Heard), in order. ``known(word)``: whether the planner's vocabulary has the word."""
    references = read_references(list(heard.words), list(heard.spans), scene, known)
    return tuple((reference, resolve_reference(scene, reference)) for reference in references)
