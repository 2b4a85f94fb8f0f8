"""What a refusal may name: the labels of ``clarify(not_found:...)`` and ``clarify(ambiguous:...)`` for a query.

A refusal names the thing the person asked for, as they said it or as the scene spells it:

- ``ambiguous:`` only a label a mention of which grounded to several objects;
- ``not_found:`` a phrase of one to three said words that can name a thing (``can_name``: never a function word,
  a digit, a verb on its own), never a colour read off a mention ("the teal cup" -> ``not_found:cup``, never
  ``teal``) or a place the map has; a scene label only when a mention of it grounded to nothing.

The decoding grammar takes these as the only labels it may write, so the planner cannot refuse about a verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wafer_reasoner.planner.syntax import NAME_PATTERN
from wafer_reasoner.understanding.lexicon import BASE_VERBS, DETERMINERS, HARD_FUNCTION, MANNER_WORDS, NEVER_A_LABEL

MAX_LABEL_WORDS = 3  # not_found phrases: n-grams of the utterance up to this length ("charging station")
_NAME_RE = re.compile(rf"^{NAME_PATTERN}$")


@dataclass(frozen=True)
class RefusalLabels:
    not_found: tuple  # sorted labels clarify(not_found:...) may name
    ambiguous: tuple  # sorted labels clarify(ambiguous:...) may name


def said_runs(heard) -> list:
    """Runs of said words a not_found phrase may be copied from: the normalised words, and the annotated
    utterance's words between its tags (mentions as the scene spells them)."""
    runs, run = [list(heard.words)], []
    for word in heard.said:
        if _NAME_RE.fullmatch(word):
            run.append(word)
        else:
            runs.append(run)
            run = []
    return runs + [run]


def can_name(words: list, after_determiner: bool = False) -> bool:
    """Whether words may be a thing's name: no function word or digit; one word never a verb, adjective or
    other non-name (``lexicon.NEVER_A_LABEL``); several never starting with a verb or ending with a verb or a
    manner word ("trash can", "waiting room" and "main hall" may). After a determiner a word is a noun whatever
    else it can be ("the water", "my microwave")."""
    if any(word in HARD_FUNCTION or word.isdigit() for word in words):
        return False
    if after_determiner:
        return True
    if len(words) == 1:
        return words[0] not in NEVER_A_LABEL
    return words[0] not in BASE_VERBS and words[-1] not in MANNER_WORDS and \
        (words[-1] not in BASE_VERBS or words[-1] == "can")


def _phrases(words: list) -> set:
    return {
        "_".join(words[start:start + n])
        for n in range(1, MAX_LABEL_WORDS + 1)
        for start in range(len(words) - n + 1)
        if can_name(words[start:start + n], start > 0 and words[start - 1] in DETERMINERS)
    }


def refusal_labels(scene, heard, grounding) -> RefusalLabels:
    """The labels refusals may name, given what was heard (mentions.Heard) and what its mentions mean
    (grounding.ground)."""
    said = set().union(*(_phrases(words) for words in said_runs(heard)))
    labelled = [(reference, meant) for reference, meant in grounding.objects if reference is not None]
    ambiguous = {reference.label for reference, meant in labelled if meant == "ambiguous"}
    missing = {reference.label for reference, meant in labelled if meant == "missing"}
    said -= {obj.label for obj in scene.objects} - missing
    colours = {reference.color for reference, _ in labelled if reference.color}
    said = {phrase for phrase in said if not colours.intersection(phrase.split("_"))}
    said -= {place.name for place in scene.places}
    return RefusalLabels(tuple(sorted(said)), tuple(sorted(ambiguous)))
