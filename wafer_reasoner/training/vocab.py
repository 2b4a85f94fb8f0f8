"""Build the word vocabulary from everything the corpus generator can say in training (v0 or v1 format)."""

from __future__ import annotations

from wafer_reasoner.engine.prompt import DIGITS, FORMATS, KIND_V0, KIND_V1, KIND_V2, Tokenizer, utterance_words
from wafer_reasoner.training import corpus, speech_corpus

PLACEHOLDERS = {"o", "d", "p", "n", "b"}  # template fields; "a" is a real word as well as a field


def _words(texts) -> set:
    return {word for text in texts for word in utterance_words(text.replace("{", " ").replace("}", " "))}


def corpus_words() -> set:
    """v0: the words of corpus.py's lists and templates (train and held-out families)."""
    texts = [*corpus.SMALL_LABELS, *corpus.FURNITURE_LABELS, *corpus.COLORS, *corpus.PLACE_NAMES, *corpus.UNSUPPORTED]
    texts += ["the nearest closest farthest near next to by"]
    for train, heldout in [*corpus.TEMPLATES.values(), corpus.CONNECTORS]:
        texts += train + heldout
    return _words(texts) - set(DIGITS) - PLACEHOLDERS


def speech_words() -> set:
    """v1: the words training can say. Held-out labels, colours, unsupported requests and verbs are left out on
    purpose (they reach the model spelled); held-out phrasing families only re-use these words."""
    sc = speech_corpus
    texts = [*sc.SMALL, *sc.FURNITURE, *sc.COLORS, *sc.PLACES, *sc.UNSUPPORTED, *sc.PREFIXES[0], *sc.PREFIXES[1],
             *sc.SUFFIXES[0], *sc.SUFFIXES[1], *sc.UNSUPPORTED_VERBS[0], *sc.DROPPABLE, *sc.PEOPLE,
             "the that this my nearest closest farthest near next to by", *sc.NUMBER_WORD_LIST,
             *[w for alternatives in sc.HOMOPHONES.values() for w in alternatives], *sc.HOMOPHONES]
    for train, heldout in [*sc.TEMPLATES.values(), *sc.CONNECTORS.values()]:
        texts += train + heldout
    return _words(texts) - set(DIGITS) - PLACEHOLDERS


def build_tokenizer(kind: str = KIND_V0) -> Tokenizer:
    fixed = list(FORMATS[kind].required_tokens())
    words = corpus_words() if kind == KIND_V0 else speech_words()
    return Tokenizer(fixed + sorted(words - set(fixed)), kind)


__all__ = ["KIND_V0", "KIND_V1", "KIND_V2", "build_tokenizer", "corpus_words", "speech_words"]
