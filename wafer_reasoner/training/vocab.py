"""Build the planner's word vocabulary from everything the training corpus can say.

A word gets a token of its own only if training says it (an embedding nothing trained would be noise); every
other word reaches the model spelled, as the made-up words it trained on do.
"""

from __future__ import annotations

from wafer_reasoner.engine.tokenizer import DIGITS, Tokenizer, required_tokens
from wafer_reasoner.training import speech_lexicon as lex
from wafer_reasoner.training.corpus import LOCATOR_WORDS, PLACE_LOCATOR_WORDS
from wafer_reasoner.understanding.words import utterance_words

PLACEHOLDERS = {"o", "d", "p", "n", "w", "o2"}  # template fields


def _words(texts) -> set:
    return {word for text in texts for word in utterance_words(text.replace("{", " ").replace("}", " "))}


def _tables() -> list:
    tables = [*lex.TEMPLATES.values(), *lex.PAIR_TEMPLATES.values(), *lex.PRONOUN_TEMPLATES.values(),
              *lex.CONNECTORS.values(), lex.PREFIXES, lex.SUFFIXES, lex.CONTEXT, lex.NON_NATIVE, lex.MANNER,
              lex.RUN_TEMPLATES, lex.UNSUPPORTED_PEOPLE]
    return [text for train, heldout in tables for text in train + heldout]


def speech_words() -> set:
    """The words training can say. Held-out labels, unsupported requests and verbs are left out on purpose (they
    reach the model spelled); held-out phrasing families only re-use training's words."""
    texts = [*lex.SMALL, *lex.FURNITURE, *lex.COLORS, *lex.ADJECTIVES, *lex.PLACES, *lex.NUMBERED_PLACES,
             *lex.PEOPLE, *lex.PEOPLE_PHRASES, *lex.UNSUPPORTED, *lex.UNSUPPORTED_VERBS[0], *lex.DROPPABLE,
             *lex.NUMBER_WORD_LIST, *LOCATOR_WORDS, *PLACE_LOCATOR_WORDS, *_tables(),
             "the that this my your a an any some nearest closest farthest furthest",
             *[w for alternatives in lex.HOMOPHONES.values() for w in alternatives], *lex.HOMOPHONES]
    return _words(texts) - set(DIGITS) - PLACEHOLDERS


def build_tokenizer() -> Tokenizer:
    fixed = list(required_tokens())
    return Tokenizer(fixed + sorted(speech_words() - set(fixed)))
