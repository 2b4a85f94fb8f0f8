"""The prompt the planner model reads, and the plan tokens it writes (layout ``tokenizer.KIND``).

One sequence, decoder-only::

    <bos> <say> bring me the red @1 from the #1 then put @2 it on the @3 <scene>
          @1 <o0> @2 <o0> @3 <o1> #1 <p0> <hold> none <plan>
    navigate( obj: <o0> ) ; pick( obj: <o0> ) ; navigate( person: user ) ; handover( obj: <o0> , person: user ) <eos>

- ``<say>``: the utterance as understanding annotated it (``understanding.mentions.hear``): object mentions tagged
  ``@k`` (pronouns as said; a label, as the scene spells it, only when the mention is ambiguous or missing: a
  found object is its slot, whatever it is called), place mentions replaced by ``#k``; words outside the
  vocabulary spelled.
- ``<scene>``: per object mention what understanding grounded it to (``understanding.grounding.ground``): an object
  slot ``<oK>``, ``<ambiguous>`` or ``<missing>``; per place mention a place slot ``<pK>``; then the held object.
  The model decides which mention plays which role and writes slot tokens, never raw ids or names: ``<oK>`` and
  ``<pK>`` are mapped back to the scene's id and the map's name after decoding.
- Nothing the utterance does not mention is in the prompt: not the map, not the other objects, not the other
  people. So the plan cannot depend on them (docs/action_language.md section 2.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wafer_reasoner.engine.tokenizer import (
    AMBIGUOUS,
    BOS,
    EOS,
    LETTER_TEXT,
    MISSING,
    PLACE_SLOT_TOKENS,
    PLAN_TOKENS,
    SLOT_TOKENS,
    Tokenizer,
)
from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.planner.syntax import piece_pattern, ref_prefix
from wafer_reasoner.understanding.grounding import ground
from wafer_reasoner.understanding.mentions import MENTION_TAGS, PLACE_TAGS, Heard, hear
from wafer_reasoner.understanding.words import label_words

FIXED_PART = (BOS, "<say>")  # the prompt's start, the same for every query
_PLAN_PIECES = piece_pattern()
_OBJ, _PLACE = ref_prefix("obj"), ref_prefix("place")


@dataclass(frozen=True)
class Prompt:
    tokens: tuple  # token strings
    slot_ids: tuple  # object slot k -> scene object id
    place_names: tuple = ()  # place slot k -> place name
    # what understanding made of the utterance, kept so the grammar and the coverage check need not redo it
    heard: Heard | None = field(default=None, compare=False, repr=False)
    grounding: object = field(default=None, compare=False, repr=False)  # grounding.Grounding


class _Slots:
    """Slot tokens numbered in order of first use."""

    def __init__(self, tokens: tuple):
        self.tokens, self.names = tokens, []

    def __call__(self, name: str) -> str:
        if name not in self.names:
            self.names.append(name)
        return self.tokens[self.names.index(name)]


def _said_for_model(heard: Heard, grounding) -> list:
    """The annotated words, without the label words of a mention that grounded to one object: its slot is all the
    plan needs, and a label ("watering can", "fridge") must not sway what the plan does. Labels of ambiguous
    and missing mentions stay: a refusal names them."""
    said, index, mention = [], 0, 0
    while index < len(heard.said):
        word = heard.said[index]
        said.append(word)
        index += 1
        if word in MENTION_TAGS:
            reference, meant = grounding.objects[mention]
            mention += 1
            if reference is not None and not isinstance(meant, str):
                index += len(label_words(reference.label))
    return said


def build_prompt(scene: Scene, utterance: str, tokenizer: Tokenizer, antecedent: str = "") -> Prompt:
    """The prompt for (scene, utterance); ``antecedent``: the object "it" means when nothing in the utterance
    comes before it (the object the previous part of a command acted on)."""
    heard = hear(scene, utterance)
    grounding = ground(scene, heard, antecedent)
    tokens = [*FIXED_PART, *[t for w in _said_for_model(heard, grounding) for t in tokenizer.word_tokens(w)],
              "<scene>"]
    objects, places = _Slots(SLOT_TOKENS), _Slots(PLACE_SLOT_TOKENS)
    for tag, (_, meant) in zip(MENTION_TAGS, grounding.objects):
        tokens += [tag, AMBIGUOUS if meant == "ambiguous" else MISSING if meant == "missing" else objects(meant.id)]
    for tag, place in zip(PLACE_TAGS, grounding.places):
        tokens += [tag, places(place.name)]
    held = any(o.id == scene.holding for o in scene.objects)
    tokens += ["<hold>", objects(scene.holding) if held else "none", "<plan>"]
    return Prompt(tuple(tokens), tuple(objects.names), tuple(places.names), heard, grounding)


def plan_to_tokens(plan: str, prompt: Prompt, tokenizer: Tokenizer) -> list:
    """Canonical plan text -> output tokens (training targets). Raises ValueError if not expressible."""
    slots = {_OBJ: dict(zip(prompt.slot_ids, SLOT_TOKENS)), _PLACE: dict(zip(prompt.place_names, PLACE_SLOT_TOKENS))}
    tokens = []
    for piece in _PLAN_PIECES.findall(plan):
        if tokens and tokens[-1] in slots:
            if piece not in slots[tokens[-1]]:
                raise ValueError(f"{tokens[-1]}{piece} is not in the prompt")
            tokens.append(slots[tokens[-1]][piece])
        elif piece in PLAN_TOKENS or piece.isdigit():
            tokens.append(piece)
        else:
            for index, word in enumerate(label_words(piece)):
                tokens += (["_"] if index else []) + tokenizer.word_tokens(word)
    return tokens + [EOS]


def tokens_to_plan(tokens, prompt: Prompt) -> str:
    """Output tokens -> plan text with real scene ids and place names (slots outside the prompt become '?')."""
    pieces = []
    for token in tokens:
        if token == EOS:
            break
        if token in SLOT_TOKENS or token in PLACE_SLOT_TOKENS:
            names, slots = (prompt.slot_ids, SLOT_TOKENS) if token in SLOT_TOKENS else \
                (prompt.place_names, PLACE_SLOT_TOKENS)
            slot = slots.index(token)
            pieces.append(names[slot] if slot < len(names) else "?")
        else:
            pieces.append(LETTER_TEXT.get(token, token))
    return _NOT_FOUND.sub(lambda match: _DIGIT_JOINT.sub("", match.group(0)), "".join(pieces))


# a not-found name is written as said, a number whole ("dock twelve" -> not_found:dock_12, docs/action_language.md
# 2.8.15); the model writes the digits it copies one per word, as speech spells them ("dock_1_2")
_NOT_FOUND = re.compile(r"not_found:[a-z0-9_]+")
_DIGIT_JOINT = re.compile(r"(?<=\d)_(?=\d)")
