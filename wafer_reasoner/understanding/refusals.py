"""What a refusal may name: the labels of ``clarify(not_found:...)`` and ``clarify(ambiguous:...)`` for a query.

A refusal names the thing the person asked for, as they said it or as the scene spells it:

- ``ambiguous:`` only a label a mention of which grounded to several objects, never a locator's anchor;
- ``not_found:`` a phrase of one to three said words that can name a thing (``can_name``: never a function word,
  a digit, a verb on its own) and stand where a name stands (after an article, a describing word, a number, a
  verb, a preposition or "me"; never right before an article: "sharpen the knife", "iron my shirt"), never a
  colour read off a mention ("the teal cup" -> ``not_found:cup``, never ``teal``) or a place the map has; a
  scene label only when a mention of it grounded to nothing.

The decoding grammar takes these as the only labels it may write, so the planner cannot refuse about a verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wafer_reasoner.planner.syntax import NAME_PATTERN
from wafer_reasoner.understanding.grounding import SUPERLATIVES
from wafer_reasoner.understanding.lexicon import (
    ADJECTIVES,
    BASE_VERBS,
    COLOR_WORDS,
    COMMAND_VERBS,
    DETERMINERS,
    HARD_FUNCTION,
    INDEFINITES,
    MANNER_WORDS,
    NEVER_A_LABEL,
    POLITENESS,
    PREPOSITIONS,
)

MAX_LABEL_WORDS = 3  # not_found phrases: n-grams of the utterance up to this length ("charging station")
_NAME_RE = re.compile(rf"^{NAME_PATTERN}$")


@dataclass(frozen=True)
class RefusalLabels:
    not_found: tuple  # sorted labels clarify(not_found:...) may name
    ambiguous: tuple  # sorted labels clarify(ambiguous:...) may name


def said_runs(heard) -> list:
    """Runs of said words a not_found phrase may be copied from, each with whether it starts right after a mention
    tag (with the mention as the scene spells it): the normalised words, and the annotated utterance's words
    between its tags."""
    runs, run, after_tag = [(list(heard.words), False)], [], False
    for word in heard.said:
        if _NAME_RE.fullmatch(word):
            run.append(word)
        else:
            runs.append((run, after_tag))
            run, after_tag = [], word.startswith("@")
    return runs + [(run, after_tag)]


def can_name(words: list, after_determiner: bool = False) -> bool:
    """Whether words may be a thing's name: no function word or superlative, no number first; several never
    opening with a colour ("white paint can" names a paint can) nor going on with a word no name goes on with
    ("renfop back", "box goes"); one word never a verb,
    adjective or other non-name (``lexicon.NEVER_A_LABEL``); several never starting with a verb or ending with a
    verb or a manner word ("trash can", "waiting room" and "main hall" may). After a determiner or a describing
    word a word is a noun whatever else it can be ("the water", "my microwave", "the white paint can")."""
    if any(word in HARD_FUNCTION or word in SUPERLATIVES for word in words) or words[0].isdigit():
        return False  # a number may end a name ("loading bay 4"), never start one
    if len(words) > 1 and (words[0] in COLOR_WORDS or any(w in _NEVER_IN_A_NAME for w in words[1:])):
        return False
    if after_determiner:
        return True
    if len(words) == 1:
        return words[0] not in NEVER_A_LABEL
    return words[0] not in BASE_VERBS and words[-1] not in MANNER_WORDS and \
        (words[-1] not in BASE_VERBS or words[-1] == "can")


# what may stand right before a thing's name: an article or possessive, a describing word ("the red cup"), or,
# loosely, a verb, a preposition (also as heard: "two", "too"), the recipient or a hedge ("bring cup", "put it on
# table", "give me cup", "well, cup, ...")
_DESCRIBING = DETERMINERS | INDEFINITES | ADJECTIVES | COLOR_WORDS | SUPERLATIVES
# words that never go on a name ("the renfop back to me", "the box goes on ..."); "can" may ("trash can")
_NEVER_IN_A_NAME = (NEVER_A_LABEL | COMMAND_VERBS |
                    {"back", "two", "too", "four", "here", "hear", "there", "away", "goes"}) - {"can"}
_NOT_NAMED = HARD_FUNCTION | PREPOSITIONS | POLITENESS | MANNER_WORDS | COMMAND_VERBS  # words no name goes on with
_LOOSELY_BEFORE = COMMAND_VERBS | PREPOSITIONS | POLITENESS | {"me", "us", "it", "two", "too", "four"}


def _in_name_position(words: list, start: int, end: int, after_tag: bool) -> bool:
    """Whether words[start:end] stand where a name stands: right after a mention tag (``after_tag``: the run
    starts with a label as the scene spells it), after a describing word or a number; or after a verb, a
    preposition or the recipient but not right before an article or possessive (a word there is a verb of its
    own: "now sharpen the knife", "to iron my shirt")."""
    before = words[start - 1] if start > 0 else ""
    after = words[end] if end < len(words) else ""
    if words[end - 1] in _DESCRIBING and after and after not in _NOT_NAMED:
        return False  # "white" of "the white paint can" describes what follows
    if (start == 0 and after_tag) or before in _DESCRIBING or before.isdigit():
        return True
    return before in _LOOSELY_BEFORE and after not in DETERMINERS


_SOURCES = frozenset({"from", "off"})  # locators that never send a thing anywhere: "the mug from the garage"


def _after_a_source(words: list, start: int) -> bool:
    """Whether words[start] names where a thing is taken from ("the mug from the garage", "the plate off the
    counter"): a locator's anchor, which the refusal never names; the thing asked for is what is not found
    (docs/action_language.md 2.6, "A missing locator target")."""
    index = start - 1
    while index >= 0 and (words[index] in _DESCRIBING):
        index -= 1
    return index >= 0 and words[index] in _SOURCES


def _words_in_label_length(words: list, start: int) -> int:
    """How many words from ``start`` make at most MAX_LABEL_WORDS words of a name, a number's one-digit words
    counting as one ("room 2 1 4" is a two-word name: room_2_1_4, written room_214)."""
    units, end = 0, start
    while end < len(words) and units < MAX_LABEL_WORDS:
        end += 1
        while words[end - 1].isdigit() and end < len(words) and words[end].isdigit():
            end += 1
        units += 1
    return end - start


def _phrases(words: list, after_tag: bool) -> set:
    """Phrases of ``words`` that can name a thing and stand where a name stands: at each start the longest one
    ("the zorbix lab" names a zorbix lab, not a zorbix); never a source's anchor."""
    phrases = set()
    for start in range(len(words)):
        if _after_a_source(words, start):
            continue
        for n in range(_words_in_label_length(words, start), 0, -1):
            if _in_name_position(words, start, start + n, after_tag) and \
                    can_name(words[start:start + n], start > 0 and words[start - 1] in _DESCRIBING):
                phrases.add("_".join(words[start:start + n]))
                break
    return phrases


def _parts_of(name: str) -> set:
    """Every run of words inside a name ("lab_cart": lab, cart, lab_cart)."""
    words = name.split("_")
    return {"_".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}


def refusal_labels(scene, heard, grounding) -> RefusalLabels:
    """The labels refusals may name, given what was heard (mentions.Heard) and what its mentions mean
    (grounding.ground)."""
    said = set().union(*(_phrases(words, after_tag) for words, after_tag in said_runs(heard)))
    labelled = [(reference, meant) for reference, meant in grounding.objects if reference is not None]
    anchors = grounding.anchors()  # "the cup near the table": any table will do, so the table is never asked about
    ambiguous = {reference.label for reference, meant in labelled if meant == "ambiguous"} - anchors
    missing = {reference.label for reference, meant in labelled if meant == "missing"}
    found = {reference.label for reference, meant in labelled if not isinstance(meant, str)}
    said -= set().union(set(), *(_parts_of(label) for label in found))  # "the lab cart" is seen: never "lab"
    said -= {obj.label for obj in scene.objects} - missing
    colours = {reference.color for reference, _ in labelled if reference.color}
    said = {phrase for phrase in said if not colours.intersection(phrase.split("_"))}
    said -= {place.name for place in scene.places}
    return RefusalLabels(tuple(sorted(said)), tuple(sorted(ambiguous)))
