"""The prompt the planner model reads, and the plan tokens it writes (layout ``tokenizer.KIND``).

One sequence, decoder-only::

    <bos> <places> kitchen , living _ room <say> bring me the red @1 cup near the @2 table <scene>
          @1 <o0> @2 <o1> <hold> none <plan>
    navigate( obj: <o0> ) ; pick( obj: <o0> ) ; navigate( person: user ) ; handover( obj: <o0> , person: user ) <eos>

- ``<places>``: the map's place names; ``<say>``: the utterance as understanding annotated it
  (``understanding.mentions.hear``: mention tags ``@k``, mentions as the scene spells them, ``#`` before a
  place name); words outside the vocabulary are spelled.
- ``<scene>``: per mention, what understanding grounded it to (``understanding.grounding``): an object slot
  ``<oK>``, ``<ambiguous>`` or ``<missing>``; then the held object. The model decides which mention plays which
  role and writes slot tokens, never raw ids: ``<oK>`` is mapped back to the scene id after decoding.
- The map part (``<bos> <places> ... <say>``) comes first, so its KV state is computed once and reused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wafer_reasoner.engine.tokenizer import (
    AMBIGUOUS,
    BOS,
    EOS,
    LETTER_TEXT,
    MISSING,
    PLAN_TOKENS,
    SLOT_TOKENS,
    Tokenizer,
)
from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.planner.syntax import piece_pattern, ref_prefix
from wafer_reasoner.understanding.grounding import grounded_mentions
from wafer_reasoner.understanding.mentions import MENTION_TAGS, Heard, hear
from wafer_reasoner.understanding.words import label_words

MAP_PART_END = "<say>"  # the prompt up to here depends only on the semantic map
_PLAN_PIECES = piece_pattern()
_OBJ = ref_prefix("obj")


@dataclass(frozen=True)
class Prompt:
    tokens: tuple  # token strings
    slot_ids: tuple  # slot k -> scene object id
    # what understanding made of the utterance, kept so the grammar and the coverage check need not redo it
    heard: Heard | None = field(default=None, compare=False, repr=False)
    grounded: tuple = field(default=(), compare=False, repr=False)  # grounding.grounded_mentions(...)


def map_tokens(scene: Scene, tokenizer: Tokenizer) -> list:
    """The map part: ``<bos> <places> name , name ... <say>``."""
    tokens = [BOS, "<places>"]
    for index, place in enumerate(scene.places):
        tokens += ([","] if index else []) + [t for w in label_words(place.name) for t in tokenizer.word_tokens(w)]
    return tokens + [MAP_PART_END]


def build_prompt(scene: Scene, utterance: str, tokenizer: Tokenizer) -> Prompt:
    """The prompt for (scene, utterance)."""
    heard = hear(scene, utterance)
    tokens = map_tokens(scene, tokenizer)
    tokens += [*[t for w in heard.said for t in tokenizer.word_tokens(w)], "<scene>"]
    slot_ids = []

    def slot(object_id: str) -> str:  # slots are numbered in order of first use
        if object_id not in slot_ids:
            slot_ids.append(object_id)
        return SLOT_TOKENS[slot_ids.index(object_id)]

    grounded = grounded_mentions(scene, heard, tokenizer.knows)
    for tag, (_, meant) in zip(MENTION_TAGS, grounded):
        tokens += [tag, AMBIGUOUS if meant == "ambiguous" else MISSING if meant == "missing" else slot(meant.id)]
    held = any(o.id == scene.holding for o in scene.objects)
    tokens += ["<hold>", slot(scene.holding) if held else "none", "<plan>"]
    return Prompt(tuple(tokens), tuple(slot_ids), heard, grounded)


def plan_to_tokens(plan: str, prompt: Prompt, tokenizer: Tokenizer) -> list:
    """Canonical plan text -> output tokens (training targets). Raises ValueError if not expressible."""
    slot_of = {object_id: SLOT_TOKENS[k] for k, object_id in enumerate(prompt.slot_ids)}
    tokens = []
    for piece in _PLAN_PIECES.findall(plan):
        if tokens and tokens[-1] == _OBJ:
            if piece not in slot_of:
                raise ValueError(f"object {piece!r} is not in the prompt")
            tokens.append(slot_of[piece])
        elif piece in PLAN_TOKENS or piece.isdigit():
            tokens.append(piece)
        else:
            for index, word in enumerate(label_words(piece)):
                tokens += (["_"] if index else []) + tokenizer.word_tokens(word)
    return tokens + [EOS]


def tokens_to_plan(tokens, prompt: Prompt) -> str:
    """Output tokens -> plan text with real scene ids (slots outside the prompt become '?')."""
    pieces = []
    for token in tokens:
        if token == EOS:
            break
        if token in SLOT_TOKENS:
            slot = SLOT_TOKENS.index(token)
            pieces.append(prompt.slot_ids[slot] if slot < len(prompt.slot_ids) else "?")
        else:
            pieces.append(LETTER_TEXT.get(token, token))
    return "".join(pieces)
