"""The planner model's vocabulary: fixed tokens, words, and letters for spelling any other word.

``tokenizer.json`` holds ``{"kind": KIND, "tokens": [...]}``; a token's id is its index. The fixed part is the
prompt's section and annotation tokens, the plan tokens of the action language (``planner/syntax.py``), digits,
object and place slots and mention tags; the rest are words the training corpus says. A word outside the
vocabulary is *spelled* (``stapler`` -> ``S ##t ##a ##p ##l ##e ##r``), so it can be read and copied into a plan.
"""

from __future__ import annotations

import json
import re
import string

from wafer_reasoner.planner.syntax import plan_tokens
from wafer_reasoner.understanding.mentions import MENTION_TAGS, PLACE_TAGS
from wafer_reasoner.understanding.words import label_words

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SECTION_TOKENS = ("<say>", "<scene>", "<hold>", "<plan>", "none", "_")
PLAN_TOKENS = plan_tokens()
DIGITS = tuple(str(d) for d in range(10))
MAX_SLOTS = 16
SLOT_TOKENS = tuple(f"<o{k}>" for k in range(MAX_SLOTS))  # objects, in order of first use in the prompt
PLACE_SLOT_TOKENS = tuple(f"<p{k}>" for k in range(len(PLACE_TAGS)))  # places, likewise
# spelling: a word outside the vocabulary is its letters, the first one upper case ("S ##t ##a ...")
WORD_START_LETTERS = tuple(string.ascii_uppercase)
LETTERS = tuple(f"##{c}" for c in string.ascii_lowercase)
LETTER_TEXT = {**{t: t.lower() for t in WORD_START_LETTERS}, **{t: t[2:] for t in LETTERS}}
AMBIGUOUS, MISSING = "<ambiguous>", "<missing>"  # what a mention resolves to when it is not one object
KIND = "wafer_reasoner-grounded-v3"  # the prompt layout of engine/prompt.py; a model folder names the one it knows
_NAME_RE = re.compile(r"[a-z0-9_]+")  # plan names the tokenizer can write (lower case words and digits)


def required_tokens() -> tuple:
    """The fixed tokens, in vocabulary order (a new vocabulary starts with them)."""
    return (PAD, BOS, EOS, UNK, *SECTION_TOKENS, *PLAN_TOKENS, *DIGITS, *SLOT_TOKENS, *PLACE_SLOT_TOKENS,
            *MENTION_TAGS, *PLACE_TAGS, *WORD_START_LETTERS, *LETTERS, AMBIGUOUS, MISSING)


def spell_word(word: str) -> list:
    """Letter tokens of a word (letters a-z only): 'stapler' -> ['S', '##t', '##a', ...]; [] if none."""
    letters = [c for c in word if c in string.ascii_lowercase]
    return [letters[0].upper(), *(f"##{c}" for c in letters[1:])] if letters else []


class Tokenizer:
    """The vocabulary of one model, in the prompt layout ``KIND``."""

    def __init__(self, tokens, kind: str = KIND):
        if kind != KIND:
            raise ValueError(f"unknown tokenizer kind {kind!r}: this engine reads {KIND!r} models")
        self.kind = kind
        self.tokens = list(tokens)
        self.ids = {token: index for index, token in enumerate(self.tokens)}
        if len(self.ids) != len(self.tokens):
            raise ValueError("tokenizer vocabulary has duplicates")
        for required in required_tokens():
            if required not in self.ids:
                raise ValueError(f"tokenizer vocabulary lacks {required!r}")
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = (self.ids[t] for t in (PAD, BOS, EOS, UNK))

    @classmethod
    def load(cls, path) -> "Tokenizer":
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return cls(data["tokens"], data.get("kind", ""))

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"kind": self.kind, "tokens": self.tokens}, handle, indent=0)

    def __len__(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        return self.ids.get(token, self.unk_id)

    def knows(self, word: str) -> bool:
        return word in self.ids

    def word_tokens(self, word: str) -> list:
        """How one word is written: itself when known, else spelled."""
        return [word] if word in self.ids else spell_word(word)

    def spell_name(self, name: str):
        """Token ids that write a plan name (``coffee_mug``: words joined by ``_``), or None if it cannot."""
        words = label_words(name)
        if not words or "_".join(words) != name or not _NAME_RE.fullmatch(name):
            return None
        tokens = []
        for index, word in enumerate(words):
            tokens += (["_"] if index else []) + self.word_tokens(word)
        if any(token not in self.ids for token in tokens):
            return None
        return tuple(self.ids[token] for token in tokens)
