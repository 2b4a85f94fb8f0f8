"""Mentions: where an utterance names a scene label, a place of the map or an object by a pronoun, and the
utterance as annotated for the planner model.

    heard = hear(scene, "bring me the red cupz from the kichen then put it on the table")
    heard.spans     -> (('cup', 4, 5), ('table', 11, 12))       label, word span in heard.words
    heard.places    -> (('kitchen', 7, 8),)
    heard.pronouns  -> ((9, 10),)                                 "it"
    heard.said      -> ('bring', 'me', 'the', 'red', '@1', 'cup', 'from', 'the', '#1', 'then', 'put', '@2', 'it',
                        'on', 'the', '@3', 'table')

Labels and places match spelling-tolerantly (a homophone, a plural, one typo in a word of at least 5 letters;
numbers as digits or words), and a tolerant label match is written as the scene spells it, so a plan that copies
a label copies the scene's spelling. A place mention is only its tag: the model never needs a place's name, so
any map works the same. Object mentions (labels and pronouns) are tagged ``@k`` in order, place mentions ``#k``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.understanding.lexicon import COLOR_WORDS, COMMAND_VERBS, NEVER_A_LABEL, OTHER_VERBS
from wafer_reasoner.understanding.words import FILLERS, HEARD_AS, UNIT_WORDS, label_words, speech_words

MENTION_TAGS = tuple(f"@{k}" for k in range(1, 9))  # objects: labels and pronouns
PLACE_TAGS = tuple(f"#{k}" for k in range(1, 5))  # places of the map
# a pronoun stands for an object; "this"/"that" only when no noun follows ("put that on the table")
PRONOUNS = frozenset({"it", "them"})
DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
_AFTER_DEMONSTRATIVE = frozenset({"to", "on", "onto", "in", "into", "up", "down", "over", "there", "here", "for",
                                  "please", "now", "and", "then", "back", "at", "under", "next", "near", "by", "off",
                                  "away", "with", "thing", "one", "ones", "too", "as", "again"})


def name_words(name: str) -> list:
    """The words of a label or place name as speech reads them: 'room_214' -> ['room', '2', '1', '4']."""
    words = []
    for word in label_words(name):
        words += list(word) if word.isdigit() else [word]
    return words


def _one_edit(a: str, b: str) -> bool:
    """a and b differ by exactly one substitution, insertion or deletion."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:k] + long[k + 1:] == short for k in range(len(long)))


@functools.lru_cache(maxsize=65536)  # a pure function of two words, asked for every word and name of every query
def word_matches(said: str, word: str) -> bool:
    """Spelling-tolerant equality of a heard word and a label/place word: the same, a homophone ('read' for
    'red'), a plural ('cups', 'boxes', 'batteries'), or one typo when the word has at least 5 letters (ASR:
    'scisors', 'laptob'). Digits match only themselves."""
    if said == word or HEARD_AS.get(said) == word:
        return True
    if word.isdigit() or said.isdigit():
        return False
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


def _may_start(said: str, phrase: list, tolerant: bool, exact_words: frozenset) -> bool:
    """Whether the heard word can be the phrase's first (_matches_at's test of one word, without a slice: most
    (word, name) pairs fail here)."""
    if not phrase or said == phrase[0]:
        return True
    return tolerant and said not in exact_words and word_matches(said, phrase[0])


_VERBS = COMMAND_VERBS | OTHER_VERBS  # said exactly, a verb is no slip of a name ("place" is not "plate")


def mention_spans(words: list, names, tolerant: bool = False, every: bool = False) -> list:
    """[(name, start, end)] of the first mention of each name (``every``: of every mention, a stutter such as
    "cups cups" counted once), in utterance order; a longer name wins over a shorter one at the same place
    ('coffee mug' over 'mug'), an exact match over a tolerant one."""
    names = set(names)
    phrases = {name: name_words(name) for name in names}
    exact_words = frozenset(w for phrase in phrases.values() for w in phrase) | _VERBS
    found = []
    for name, phrase in phrases.items():
        starts = [k for k, said in enumerate(words) if _may_start(said, phrase, tolerant, exact_words)
                  and _matches_at(words, k, phrase, tolerant, exact_words)]
        for start in starts if tolerant else starts[:1]:  # exact matching looks at the first occurrence only
            found.append((start, -len(phrase), words[start:start + len(phrase)] != phrase, name))
    found.sort()
    spans, covered = [], set()
    for start, negative_length, _, name in found:
        span = set(range(start, start - negative_length))
        if span & covered:
            continue
        if any(name == other and (not every or end == start) for other, _, end in spans):
            covered |= span  # a later mention of a name (every: a stutter) is not another mention
            continue
        covered |= span
        spans.append((name, start, start - negative_length))
    return sorted(spans, key=lambda s: s[1])


def pronoun_spans(words: list, taken: set) -> list:
    """[(start, end)] of pronouns standing for an object: "it", "them", and "this"/"that"/"these"/"those"
    (with "one"/"ones") when no noun follows; words in ``taken`` are already mentions."""
    spans = []
    for index, word in enumerate(words):
        if index in taken:
            continue
        if word in PRONOUNS:
            spans.append((index, index + 1))
        elif word in DEMONSTRATIVES:
            after = words[index + 1] if index + 1 < len(words) else ""
            if after in ("one", "ones"):
                spans.append((index, index + 2))
            elif (after == "" or after in _AFTER_DEMONSTRATIVE) and index + 1 not in taken:
                spans.append((index, index + 1))
    return spans


@dataclass(frozen=True)
class Heard:
    """What understanding made of an utterance in a scene."""

    words: tuple  # normalised words (words.speech_words)
    spans: tuple  # (label, start, end) per mention of a scene label, every occurrence, in utterance order
    places: tuple  # (place name, start, end) per mention of a place of the map
    pronouns: tuple  # (start, end) per pronoun that stands for an object
    said: tuple  # the annotated utterance: tags, mentions as the scene spells them

    def object_mentions(self) -> list:
        """('label', index in spans) or ('pronoun', index in pronouns) per object mention, in utterance order:
        the order of the @k tags."""
        marks = [(start, "label", k) for k, (_, start, _) in enumerate(self.spans)]
        marks += [(start, "pronoun", k) for k, (start, _) in enumerate(self.pronouns)]
        return [(kind, k) for _, kind, k in sorted(marks)]


def _annotated(words: tuple, spans: tuple, places: tuple, pronouns: tuple) -> list:
    """The words with each object mention tagged @k (and written as the scene spells its label), each place
    mention replaced by its tag #k."""
    marks = {start: ("label", label, end) for label, start, end in spans}
    marks.update({start: ("pronoun", None, end) for start, end in pronouns})
    place_marks = {start: end for _, start, end in places}
    said, index, tag, place_tag = [], 0, 0, 0
    while index < len(words):
        if index in place_marks and place_tag < len(PLACE_TAGS):
            said.append(PLACE_TAGS[place_tag])
            place_tag, index = place_tag + 1, place_marks[index]
        elif index in marks and tag < len(MENTION_TAGS):
            kind, label, end = marks[index]
            said += [MENTION_TAGS[tag], *(label_words(label) if kind == "label" else words[index:end])]
            tag, index = tag + 1, end
        else:
            said.append(words[index])
            index += 1
    return said


def _apart(places: list, labels: list) -> tuple:
    """Place and label mentions that do not overlap: a longer one wins ("office chair" over "office"), a label
    over a place of the same length."""
    spans = sorted([(start, -(end - start), 1, name) for name, start, end in places] +
                   [(start, -(end - start), 0, name) for name, start, end in labels])
    kept, covered = {0: [], 1: []}, set()
    for start, negative_length, is_place, name in sorted(spans, key=lambda s: (s[1], s[2], s[0])):
        span = set(range(start, start - negative_length))
        if not span & covered:
            covered |= span
            kept[is_place].append((name, start, start - negative_length))
    return tuple(sorted(kept[1], key=lambda s: s[1])), tuple(sorted(kept[0], key=lambda s: s[1]))


_BEFORE_A_NAME = frozenset({"the", "a", "an", "my", "our", "your", "this", "that", "to", "into", "in", "at", "from",
                            "near", "by", "toward", "towards"})


def _a_word_of_another_name(word: str) -> bool:
    """A word no table knows, which can only be part of a name said ("zorbix", "jack"): no function word, verb,
    adjective, colour, filler or number."""
    return word not in NEVER_A_LABEL and word not in COLOR_WORDS and word not in FILLERS and not word.isdigit()


def _said_as_part_of_a_name(words: tuple, span: tuple, taken: set) -> bool:
    """Whether a place mention (name, start, end) is only part of a longer name said, so it names no place of
    the map (every word said belongs to one name, docs/action_language.md 2.7.3 and 2.9):
    - a place after a word no table knows, right after an article or a preposition ("the zorbix lab" with `lab`
      on the map); adjectives, colours, numbers and other mentions before it do not count ("the main lab");
    - a place without a number before a number that is no quantity ("server room 2" is no `server_room`).
    Other words after a name are not read so: people say too much there ("the ball pretty please", "two me")."""
    name, start, end = span
    if start >= 2 and start - 1 not in taken and words[start - 2] in _BEFORE_A_NAME and \
            _a_word_of_another_name(words[start - 1]):
        return True
    digits = end
    while digits < len(words) and words[digits].isdigit():
        digits += 1
    return digits > end and not any(ch.isdigit() for ch in name) and \
        (digits == len(words) or words[digits] not in UNIT_WORDS)


def hear(scene: Scene, utterance: str) -> Heard:
    """Normalise the utterance, find the map's places, the scene's labels and the pronouns in it, annotate it."""
    words = tuple(speech_words(utterance))
    places, spans = _apart(mention_spans(list(words), [p.name for p in scene.places], tolerant=True, every=True),
                           mention_spans(list(words), [o.label for o in scene.objects], tolerant=True, every=True))
    taken = {k for _, start, end in places + spans for k in range(start, end)}
    places = tuple(place for place in places if not _said_as_part_of_a_name(words, place, taken))
    taken = {k for _, start, end in places + spans for k in range(start, end)}
    pronouns = tuple(pronoun_spans(list(words), taken))
    return Heard(words, spans, places, pronouns, tuple(_annotated(words, spans, places, pronouns)))
