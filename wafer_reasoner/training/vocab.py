"""Build the closed word vocabulary from everything the corpus generator can say."""

from __future__ import annotations

from wafer_reasoner.engine.prompt import (
    BOS,
    DIGITS,
    EOS,
    MENTION_TOKENS,
    PAD,
    PLAN_TOKENS,
    SECTION_TOKENS,
    SLOT_TOKENS,
    UNK,
    Tokenizer,
    utterance_words,
)
from wafer_reasoner.training import corpus


def corpus_words() -> set:
    texts = [*corpus.SMALL_LABELS, *corpus.FURNITURE_LABELS, *corpus.COLORS, *corpus.PLACE_NAMES, *corpus.UNSUPPORTED]
    texts += ["the nearest closest farthest near next to by"]
    for train, heldout in [*corpus.TEMPLATES.values(), corpus.CONNECTORS]:
        texts += [t.replace("{", " ").replace("}", " ") for t in train + heldout]
    placeholders = {"o", "d", "p", "n", "b"}  # template fields; "a" is a real word as well as a field
    return {word for text in texts for word in utterance_words(text)} - set(DIGITS) - placeholders


def build_tokenizer() -> Tokenizer:
    fixed = [PAD, BOS, EOS, UNK, *SECTION_TOKENS, *PLAN_TOKENS, *DIGITS, *SLOT_TOKENS, *MENTION_TOKENS]
    words = sorted(corpus_words() - set(fixed))
    return Tokenizer(fixed + words)
