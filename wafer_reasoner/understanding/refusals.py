"""What a refusal may name: the labels of ``clarify(not_found:...)`` and ``clarify(ambiguous:...)`` for a query.

A refusal names the thing the person asked for, as they said it or as the scene spells it:

- ``ambiguous:`` only a label a mention of which grounded to several objects;
- ``not_found:`` a phrase of one to three said words, never holding a function word ("desk and"), a colour read
  off a mention ("the teal cup" -> ``not_found:cup``, never ``teal``) or a place the map has; a scene label only
  when a mention of it grounded to nothing.

The decoding grammar takes these as the only labels it may write, so the planner cannot refuse about a verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wafer_reasoner.planner.syntax import NAME_PATTERN

MAX_LABEL_WORDS = 3  # not_found phrases: n-grams of the utterance up to this length ("charging station")
# words no object label contains, so a not_found: phrase never runs into them ("desk_and", "vacuum_the")
FUNCTION_WORDS = frozenset({"a", "an", "the", "this", "that", "these", "those", "my", "your", "it", "me", "you", "i",
                            "and", "then", "to", "in", "into", "on", "onto", "of", "at", "by", "near", "next",
                            "for", "with", "from", "please", "after", "afterwards", "first", "finally"})
_NAME_RE = re.compile(rf"^{NAME_PATTERN}$")


@dataclass(frozen=True)
class RefusalLabels:
    not_found: tuple  # sorted labels clarify(not_found:...) may name
    ambiguous: tuple  # sorted labels clarify(ambiguous:...) may name


def said_runs(heard) -> list:
    """Runs of said words a not_found phrase may be copied from: the normalised words, and the annotated
    utterance's words between its tags and marks (mentions as the scene spells them)."""
    runs, run = [list(heard.words)], []
    for word in heard.said:
        if _NAME_RE.fullmatch(word):
            run.append(word)
        else:
            runs.append(run)
            run = []
    return runs + [run]


def _phrases(words: list) -> set:
    return {
        "_".join(words[start:start + n])
        for n in range(1, MAX_LABEL_WORDS + 1)
        for start in range(len(words) - n + 1)
        if not FUNCTION_WORDS.intersection(words[start:start + n])
    }


def refusal_labels(scene, heard, grounded) -> RefusalLabels:
    """The labels refusals may name, given what was heard (mentions.Heard) and what its mentions grounded to
    (grounding.grounded_mentions)."""
    said = set().union(*(_phrases(words) for words in said_runs(heard)))
    ambiguous = {reference.label for reference, meant in grounded if meant == "ambiguous"}
    missing = {reference.label for reference, meant in grounded if meant == "missing"}
    said -= {obj.label for obj in scene.objects} - missing
    colours = {reference.color for reference, _ in grounded if reference.color}
    said = {phrase for phrase in said if not colours.intersection(phrase.split("_"))}
    said -= {place.name for place in scene.places}
    return RefusalLabels(tuple(sorted(said)), tuple(sorted(ambiguous)))
