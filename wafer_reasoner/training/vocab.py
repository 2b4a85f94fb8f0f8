"""Build the planner's word vocabulary from everything the training corpus can say."""

from __future__ import annotations

from wafer_reasoner.engine.tokenizer import DIGITS, Tokenizer, required_tokens
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.understanding.words import utterance_words

PLACEHOLDERS = {"o", "d", "p", "n", "b"}  # template fields; "a" is a real word as well as a field


def _words(texts) -> set:
    return {word for text in texts for word in utterance_words(text.replace("{", " ").replace("}", " "))}


def speech_words() -> set:
    """The words training can say. Held-out labels, colours, unsupported requests and verbs are left out on
    purpose (they reach the model spelled); held-out phrasing families only re-use these words."""
    sc = speech_corpus
    texts = [*sc.SMALL, *sc.FURNITURE, *sc.COLORS, *sc.PLACES, *sc.UNSUPPORTED, *sc.PREFIXES[0], *sc.PREFIXES[1],
             *sc.SUFFIXES[0], *sc.SUFFIXES[1], *sc.UNSUPPORTED_VERBS[0], *sc.DROPPABLE, *sc.PEOPLE,
             "the that this my nearest closest farthest near next to by", *sc.NUMBER_WORD_LIST,
             *[w for alternatives in sc.HOMOPHONES.values() for w in alternatives], *sc.HOMOPHONES]
    for train, heldout in [*sc.TEMPLATES.values(), *sc.CONNECTORS.values()]:
        texts += train + heldout
    return _words(texts) - set(DIGITS) - PLACEHOLDERS


def build_tokenizer() -> Tokenizer:
    fixed = list(required_tokens())
    return Tokenizer(fixed + sorted(speech_words() - set(fixed)))
