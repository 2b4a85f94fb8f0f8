"""Mentions: where an utterance names a scene label or a place of the map, and the utterance as annotated.

    heard = hear(scene, "bring me the red cupz near the table")
    heard.spans  -> (('cup', 4, 5), ('table', 7, 8))          label, word span in heard.words
    heard.said   -> ('bring', 'me', 'the', 'red', '@1', 'cup', 'near', 'the', '@2', 'table')

Labels and places match spelling-tolerantly (a homophone, a plural, one typo in a word of at least 5 letters), and
a tolerant match is written as the scene spells it, so a plan that copies a label copies the scene's spelling.
``said`` is the utterance the planner model reads: each of the first ``len(MENTION_TAGS)`` mentions tagged
``@k`` (every occurrence; a stutter counted once), each place name preceded by ``PLACE_MARK``.
"""

from __future__ import annotations

from dataclasses import dataclass

from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.understanding.words import HEARD_AS, label_words, speech_words

PLACE_MARK = "#"  # before words that name a place of the semantic map
MENTION_TAGS = tuple(f"@{k}" for k in range(1, 9))  # four clauses of a label and an anchor each


def _one_edit(a: str, b: str) -> bool:
    """a and b differ by exactly one substitution, insertion or deletion."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:k] + long[k + 1:] == short for k in range(len(long)))


def word_matches(said: str, word: str) -> bool:
    """Spelling-tolerant equality of a heard word and a label/place word: the same, a homophone ('read' for
    'red'), a plural ('cups', 'boxes', 'batteries'), or one typo when the word has at least 5 letters (ASR:
    'scisors', 'laptob')."""
    if said == word or HEARD_AS.get(said) == word:
        return True
    plurals = {word + "s", word + "es"} | ({word[:-1] + "ies"} if word.endswith("y") else set())
    return said in plurals or (len(word) >= 5 and _one_edit(said, word))


def _matches_at(words: list, start: int, phrase: list, tolerant: bool, exact_words: frozenset) -> bool:
    """phrase occurs at words[start] (tolerantly: each word matches; a heard word that is exactly another known
    name's word never matches tolerantly)."""
    window = words[start:start + len(phrase)]
    if window == phrase:
        return True
    return tolerant and len(window) == len(phrase) and all(
        said == word or (said not in exact_words and word_matches(said, word)) for said, word in zip(window, phrase))


def mention_spans(words: list, labels, tolerant: bool = False, every: bool = False) -> list:
    """[(label, start, end)] of the first mention of each label (``every``: of every mention, a stutter such as
    "cups cups" counted once), in utterance order; a longer label wins over a shorter one at the same place
    ('coffee mug' over 'mug'), an exact match over a tolerant one. Tolerant matching also looks past a first
    occurrence that a longer label covers."""
    labels = set(labels)
    exact_words = frozenset(w for label in labels for w in label_words(label))
    found = []
    for label in labels:
        phrase = label_words(label)
        starts = [k for k in range(len(words)) if _matches_at(words, k, phrase, tolerant, exact_words)]
        for start in starts if tolerant else starts[:1]:  # exact matching looks at the first occurrence only
            found.append((start, -len(phrase), words[start:start + len(phrase)] != phrase, label))
    found.sort()
    spans, covered = [], set()
    for start, negative_length, _, label in found:
        span = set(range(start, start - negative_length))
        if span & covered:
            continue
        if any(label == other and (not every or end == start) for other, _, end in spans):
            covered |= span  # a later mention of a label (every: a stutter) is not another mention
            continue
        covered |= span
        spans.append((label, start, start - negative_length))
    return sorted(spans, key=lambda s: s[1])


def mark_places(words: list, places, tolerant: bool = False) -> list:
    """Insert PLACE_MARK before each phrase that names a place ('go to the # living room'); a tolerant match
    is written as the map spells the place."""
    phrases = sorted((label_words(p.name) for p in places), key=len, reverse=True)
    exact_words = frozenset(w for p in phrases for w in p)
    marked, index = [], 0
    while index < len(words):
        phrase = next((p for p in phrases if p and _matches_at(words, index, p, tolerant, exact_words)), None)
        if phrase is None:
            marked.append(words[index])
            index += 1
        else:
            marked += [PLACE_MARK, *phrase]
            index += len(phrase)
    return marked


@dataclass(frozen=True)
class Heard:
    """What understanding made of an utterance in a scene."""

    words: tuple  # normalised words (speech_words, de-stuttered)
    spans: tuple  # (label, start, end) per mention of a scene label, every occurrence, in utterance order
    said: tuple  # the annotated utterance: mention tags, canonical mentions, place marks

    def mentioned(self) -> dict:
        return {label: k + 1 for k, (label, _, _) in enumerate(self.spans)}


def _tagged(words: list, spans: tuple) -> list:
    """words with each of the first len(MENTION_TAGS) mentions tagged and written as the scene spells it."""
    said, index = [], 0
    starts = {start: (k, label, end) for k, (label, start, end) in enumerate(spans)}
    while index < len(words):
        if index in starts and starts[index][0] < len(MENTION_TAGS):
            k, label, end = starts[index]
            said += [MENTION_TAGS[k], *label_words(label)]
            index = end
        else:
            said.append(words[index])
            index += 1
    return said


def hear(scene: Scene, utterance: str) -> Heard:
    """Normalise the utterance, find the scene's labels and the map's places in it, and annotate it."""
    words = speech_words(utterance, destutter=True)
    spans = tuple(mention_spans(words, [o.label for o in scene.objects], tolerant=True, every=True))
    return Heard(tuple(words), spans, tuple(mark_places(_tagged(words, spans), scene.places, tolerant=True)))
