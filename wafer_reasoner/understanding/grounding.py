"""Symbolic grounding of referring expressions: which scene object "the farthest red cup on the table" names, or
that it names none or several.

The planner model is good at what is fuzzy (which words are the verb, which mention is the object and which the
destination, where one clause ends) and, at the size that fits a robot's CPU, poor at what is exact (comparing
colours, sorting distances). So understanding reads each mention's modifiers off the normalised words and
applies the contract's rules (``docs/action_language.md`` section 3) here; the model then sees one answer per
mention (an object slot, ``<ambiguous>`` or ``<missing>``) and decides what to do with it.

A reference is read around a label mention (``mentions.mention_spans``)::

    [determiner | superlative] [colour] [adjectives] LABEL [locator [determiner] ANCHOR]

- the colour is a colour word (``lexicon.COLOR_WORDS``) or a colour some scene object has, right before the label
  (adjectives such as "big" may stand between); other words there are ignored;
- nearest / closest / farthest pick by distance from the robot among the matches (never ambiguous); so does an
  indefinite ("a cup", "any cup") when several match;
- a locator ("near / next to / by / on / in / from / at / under ... the Y") keeps the matches that have an object
  labelled Y within NEAR_RADIUS_M, or, when Y is a place of the map, that lie within PLACE_RADIUS_M of it. After
  the object of a put verb ("put the cup on the table") the first such phrase is where it goes, not where it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from wafer_reasoner.planner.scene import Scene, SceneObject, distance
from wafer_reasoner.understanding import lexicon
from wafer_reasoner.understanding.words import HEARD_AS, canonical

NEAR_RADIUS_M = 1.2
PLACE_RADIUS_M = 4.0
SUPERLATIVES = frozenset({"nearest", "closest", "farthest", "furthest"})
FARTHEST = frozenset({"farthest", "furthest"})
NEAREST = "nearest"
ABSENT = "<absent>"  # an anchor that is neither a scene label nor a place: nothing is near it
_SKIPPED_BEFORE_ANCHOR = frozenset({"to", "two", "too", "by", "bye", "buy", "near", "of"})
_BEFORE_ANCHOR = lexicon.DETERMINERS | _SKIPPED_BEFORE_ANCHOR | lexicon.ADJECTIVES | lexicon.COLOR_WORDS
# put verbs: after their object the first on/in/at/... phrase is where it goes ("put the cup on the table"); other
# verbs only send an object somewhere with to/into/onto ("take the cup to the table"; "take the cup on the table"
# is the cup that is on the table)
_PUT_VERBS = frozenset({"put", "place", "set", "drop", "leave", "transfer", "stick", "lay", "placing", "putting",
                        "setting", "dropping", "leaving"})
_ALWAYS_DESTINATION = frozenset({"to", "into", "onto", "two", "too"})
_PUT_DESTINATION = frozenset({"on", "in", "at", "under", "inside", "over"})  # after a put verb's object
_RECIPIENTS = frozenset({"me", "us"})
_CLAUSE_BREAKS = frozenset({"and", "then", "than", "after", "afterwards", "finally", "also"})


@dataclass(frozen=True)
class Reference:
    """One referring expression read around a mention of a scene label."""

    label: str  # scene label, "coffee_mug"
    start: int  # word span of the label mention in the normalised words
    end: int
    color: str = ""
    superlative: str = ""  # "nearest", "farthest", ...; an indefinite reads as "nearest"
    near_label: str = ""  # the anchor's label, ABSENT when the anchor is not a scene label nor a place
    near_place: str = ""  # the anchor when it is a place of the map


def objects_near(scene: Scene, obj, label: str) -> bool:
    """Whether an object labelled ``label`` other than obj lies within NEAR_RADIUS_M of obj."""
    return any(o.id != obj.id and o.label == label and distance(o.x, o.y, obj.x, obj.y) <= NEAR_RADIUS_M
               for o in scene.objects)


def near_neighbour(scene: Scene, obj):
    """The closest object of another label within NEAR_RADIUS_M of obj, or None."""
    others = [o for o in scene.objects if o.id != obj.id and o.label != obj.label]
    if not others:
        return None
    best = min(others, key=lambda o: (distance(o.x, o.y, obj.x, obj.y), o.id))
    return best if distance(best.x, best.y, obj.x, obj.y) <= NEAR_RADIUS_M else None


def matching_objects(scene: Scene, label: str, color: str = "", near_label: str = "", near_place: str = "") -> list:
    """Scene objects with the label (and colour, and an anchor of near_label or near_place close by)."""
    matches = [o for o in scene.objects if o.label == label]
    if color:
        matches = [o for o in matches if canonical(o.color) == color]
    if near_label:
        matches = [o for o in matches if objects_near(scene, o, near_label)]
    if near_place:
        place = scene.place(near_place)
        matches = [o for o in matches if place is not None and distance(o.x, o.y, place.x, place.y) <= PLACE_RADIUS_M]
    return matches


def pick_by_distance(scene: Scene, matches: list, superlative: str) -> SceneObject:
    robot = scene.robot
    key = lambda o: (distance(o.x, o.y, robot.x, robot.y), o.id)  # noqa: E731
    return max(matches, key=key) if superlative in FARTHEST else min(matches, key=key)


def resolve(scene: Scene, label: str, color: str = "", superlative: str = "", near_label: str = "",
            near_place: str = ""):
    """The contract's grounding: the one object meant, "ambiguous" when several match and no superlative picks
    one, "missing" when none matches."""
    matches = matching_objects(scene, label, color, near_label, near_place)
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
    return word if word in scene_colors or word in lexicon.COLOR_WORDS else ""


def _modifiers(words: list, start: int, scene_colors: set) -> tuple:
    """(colour, superlative) said before a label at words[start]; adjectives between are skipped."""
    index = start - 1
    while index >= 0 and words[index] in lexicon.ADJECTIVES and not _color_word(words[index], scene_colors):
        index -= 1
    color = _color_word(words[index], scene_colors) if index >= 0 else ""
    if color:
        index -= 1
    while index >= 0 and words[index] in lexicon.ADJECTIVES:
        index -= 1
    word = words[index] if index >= 0 else ""
    if word in SUPERLATIVES:
        return color, word
    return color, NEAREST if word in lexicon.INDEFINITES else ""


def _locator_at(words: list, index: int):
    """The end of a locator phrase starting at words[index] ('next to', 'on'), or None."""
    for phrase in lexicon.LOCATOR_WORDS:
        if tuple(words[index:index + len(phrase)]) == phrase:
            return index + len(phrase)
    return None


def _anchor(words: list, end: int, starts: dict, places: dict, destination: bool) -> tuple:
    """(anchor label, anchor place) of a locator after a mention ending at words[end]; ('', '') if none."""
    index = _locator_at(words, end) if end < len(words) else None
    if index is None or words[end] in _ALWAYS_DESTINATION or (destination and words[end] in _PUT_DESTINATION):
        return "", ""
    determiner = False
    while index < len(words) and index not in starts and index not in places and \
            (words[index] in _BEFORE_ANCHOR or words[index] in SUPERLATIVES):
        determiner |= words[index] in lexicon.DETERMINERS
        index += 1
    if index in starts:
        return starts[index], ""
    if index in places:
        return "", places[index]
    if determiner and index < len(words) and words[index] not in lexicon.NEVER_A_LABEL:
        return ABSENT, ""
    return "", ""


def _put_objects(words: list, spans: list, place_spans: tuple = ()) -> set:
    """Starts of the mentions that are a put verb's object: the first mention after the verb (and those joined to
    it by "and"), before any preposition or recipient ("put it on the table": the table is no object; "bring me
    the cup on the table": no put)."""
    firsts, seen_verb = set(), False
    ends = {start: end for _, start, end in spans}
    place_ends = {start: end for _, start, end in place_spans}
    inside = {k for start, end in ends.items() for k in range(start + 1, end)}  # "water" of "water bottle"
    for index, word in enumerate(words):
        if index in inside:
            continue
        if index in ends:  # a label first: "water" of "water bottle" is no verb
            if seen_verb:
                firsts |= {index} | _joined(words, ends, ends[index], place_ends)
            seen_verb = False
        elif word in _CLAUSE_BREAKS or word in _PUT_VERBS or (word in lexicon.BASE_VERBS and
                                                              not (index and words[index - 1] in _ADJECTIVE_BEFORE)):
            seen_verb = word in _PUT_VERBS  # the nearest verb governs ("stay put, grab my plate on ...")
        elif word in lexicon.DESTINATION_WORDS or word == "from" or word in _RECIPIENTS:
            seen_verb = False
    return firsts


# a verb after one of these is an adjective: "put the empty cup", "the closest clean plate"
_ADJECTIVE_BEFORE = frozenset({"the", "a", "an", "my", "your", "our", "his", "her", "their", "some", "any"}) | \
    lexicon.ADJECTIVES | lexicon.COLOR_WORDS | SUPERLATIVES
_BEFORE_LABEL = lexicon.DETERMINERS | lexicon.INDEFINITES | lexicon.ADJECTIVES | lexicon.COLOR_WORDS | SUPERLATIVES


def _past_anchor(words: list, end: int, ends: dict, place_ends: dict) -> int:
    """Where a locator that cannot be a destination ends ("the cup from the kitchen and ...": after "kitchen");
    ``end`` itself when none starts there."""
    index = _locator_at(words, end) if end < len(words) else None
    if index is None or words[end] in _ALWAYS_DESTINATION or words[end] in _PUT_DESTINATION:
        return end
    while index < len(words) and index not in ends and index not in place_ends and words[index] in _BEFORE_ANCHOR:
        index += 1
    return ends.get(index, place_ends.get(index, end))


def _joined(words: list, ends: dict, end: int, place_ends: dict) -> set:
    """Starts of mentions joined to one ending at ``end`` by "and" ("put the cup and the plate on the table"; "put
    the cup from the kitchen and the closest plate on the table")."""
    joined = set()
    end = _past_anchor(words, end, ends, place_ends)
    while end < len(words) and words[end] == "and":
        index = end + 1
        while index < len(words) and index not in ends and words[index] in _BEFORE_LABEL:
            index += 1
        if index not in ends:
            break
        joined.add(index)
        end = _past_anchor(words, ends[index], ends, place_ends)
    return joined


def read_references(words: list, spans: list, scene: Scene, place_spans: tuple = ()) -> list:
    """A Reference per label mention (spans: (label, start, end), every occurrence, in order); ``place_spans``:
    (place name, start, end) of the map's places mentioned."""
    scene_colors = {canonical(o.color) for o in scene.objects if o.color}
    starts = {start: label for label, start, _ in spans}
    places = {start: name for name, start, _ in place_spans}
    put_objects = _put_objects(words, spans, place_spans)
    references = []
    for label, start, end in spans:
        color, superlative = _modifiers(words, start, scene_colors)
        anchor, place = _anchor(words, end, starts, places, start in put_objects)
        references.append(Reference(label, start, end, color, superlative, anchor, place))
    return references


def resolve_reference(scene: Scene, reference: Reference):
    return resolve(scene, reference.label, reference.color, reference.superlative, reference.near_label,
                   reference.near_place)


@dataclass(frozen=True)
class Grounding:
    """What each mention of an utterance means in the scene, in tag order."""

    objects: tuple  # per object mention (@k): (Reference or None for a pronoun, SceneObject | "ambiguous" | "missing")
    places: tuple  # per place mention (#k): the NamedPlace

    def anchor_mentions(self, place_spans: tuple) -> tuple:
        """(object mention indices, place mention indices) that are the anchor of another mention's locator:
        "the bench" in "the tip box next to the bench", "the kitchen" in "the table in the kitchen". An anchor's
        own locator names no anchor: it says where the plan goes ("drop the keys from the armchair on the patio":
        the patio is no anchor). ``place_spans``: the heard (name, start, end) of each place mention."""
        references = sorted(((index, reference) for index, (reference, _) in enumerate(self.objects)
                             if reference is not None), key=lambda pair: pair[1].start)
        objects, places = set(), set()
        for index, reference in references:
            if index in objects:
                continue
            after = [other for other, mention in references
                     if mention.start >= reference.end and mention.label == reference.near_label]
            objects.update(after[:1])
            named = [k for k, (name, start, _) in enumerate(place_spans)
                     if start >= reference.end and name == reference.near_place]
            places.update(named[:1])
        return objects, places

    def anchors(self) -> set:
        """Labels and places that a mention's locator names (a plan need not act on them)."""
        return {r.near_label for r, _ in self.objects if r is not None and r.near_label} | \
            {r.near_place for r, _ in self.objects if r is not None and r.near_place}


def _pronoun_meaning(scene: Scene, heard, start: int, label_meanings: list, antecedent: str):
    """A pronoun stands for the object the first mention before it in the utterance means ("the cup, bring it
    to me"); with none, for ``antecedent`` (the object of the part planned before); else for the held object;
    else for nothing. "those" / "these" stand for several things, nothing the language can act on; so does "them"
    after two or more things, while "them" for one thing is "it" ("pick up the socks and put them in the basket",
    "grab my keys and bring them to me")."""
    if heard.words[start] in ("those", "these"):
        return "missing"
    before = [meant for (_, label_start, _), meant in zip(heard.spans, label_meanings) if label_start < start]
    if heard.words[start] == "them" and len(before) > 1:
        return "missing"
    if before:
        return before[0]
    for object_id in (antecedent, scene.holding):
        found = scene.object(object_id) if object_id else None
        if found is not None:
            return found
    return "missing"


def ground(scene: Scene, heard, antecedent: str = "") -> Grounding:
    """Every mention of ``heard`` (mentions.Heard) grounded by the contract's rules."""
    references = read_references(list(heard.words), list(heard.spans), scene, heard.places)
    meanings = [resolve_reference(scene, reference) for reference in references]
    objects = []
    for kind, index in heard.object_mentions():
        if kind == "label":
            objects.append((references[index], meanings[index]))
        else:
            start = heard.pronouns[index][0]
            objects.append((None, _pronoun_meaning(scene, heard, start, meanings, antecedent)))
    return Grounding(tuple(objects), tuple(scene.place(name) for name, _, _ in heard.places))


def points_at_nothing(heard, grounding: Grounding) -> bool:
    """Whether a pronoun of the utterance stands for nothing (``ground`` found no mention before it, no object an
    earlier part acted on, nothing held: "put it on the shelf" on its own), or for several things ("those").
    The plan is ``clarify(unsupported)`` (docs/action_language.md 2.3), before any not-found of the rest."""
    meanings = [meant for reference, meant in grounding.objects if reference is None]
    # a pronoun after a word that may name a thing ("the teal book, put it there" with no book in view) points at
    # that thing: the refusal is its not-found, which the model writes
    return any(meant == "missing" and not any(word not in lexicon.NEVER_A_LABEL and not word.isdigit()
                                              for word in heard.words[:start])
               for (start, _), meant in zip(heard.pronouns, meanings))
