"""Word-level tokenizer and the prompt layout the planner model reads and writes.

Layout (one sequence, decoder-only)::

    <bos> <places> kitchen , living room <say> bring me the red cup <scene>
          @1 red cup <o0>  blue cup <o1>  book near table <o2>  table <o3>  <hold> none <plan>
    navigate( obj: <o0> ) ; pick( obj: <o0> ) ; navigate( person: user ) ; handover( obj: <o0> , person: user ) <eos>

Why this layout makes grounding learnable by a small model:
- The utterance comes before the scene, so every object description can attend back to the words that were
  said, and its slot token (``<oK>``, after the description) gathers "was I meant?" from them.
- Objects are listed nearest-first, so "nearest"/"farthest" is the first/last match.
- ``@k`` marks an object whose label is the k-th object label mentioned in the utterance, ``*`` an object whose
  colour was said right before its label, and ``#`` (inside the utterance) words that name a place of the map.
  This is plain string matching done here, not by the model; the model still decides which mention plays which
  role, resolves nearest/farthest/near, and detects ambiguity and absence. ``near L`` names the closest object
  of another label within 1.2 m.
- The model writes slot tokens, never raw ids: ``<oK>`` is mapped back to the scene id after decoding.
The fixed part (``<bos> <places> ...``) comes first so its KV state can be computed once and reused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from wafer_reasoner.planner.scene import Scene, distance

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
PLACE_MARK = "#"  # in the utterance, before words that name a place of the semantic map
COLOR_MARK = "*"  # on an object whose colour was said right before its label ("the red cup")
SECTION_TOKENS = ("<places>", "<say>", "<scene>", "<hold>", "<plan>", "none", ",", "near", "_", PLACE_MARK, COLOR_MARK)
PLAN_TOKENS = (
    "navigate(", "pick(", "place(", "handover(", "rotate(", "wait(", "stop()", "follow(", "clarify(",
    "obj:", "place:", "person:", "not_found:", "ambiguous:", "unsupported", ")", "; ", ", ", "-", ".", "user",
)
DIGITS = tuple(str(d) for d in range(10))
MAX_SLOTS = 16
SLOT_TOKENS = tuple(f"<o{k}>" for k in range(MAX_SLOTS))
MENTION_TOKENS = ("@1", "@2", "@3")
NEAR_RADIUS_M = 1.2
MAX_UTTERANCE_WORDS = 64
SPELLING_VARIANTS = {"grey": "gray", "colour": "color"}  # one spelling per word, in speech and in perception
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|\d")


class Tokenizer:
    """Closed word vocabulary (issue 3 replaces it with spelling-aware sub-words)."""

    def __init__(self, tokens):
        self.tokens = list(tokens)
        self.ids = {token: index for index, token in enumerate(self.tokens)}
        if len(self.ids) != len(self.tokens):
            raise ValueError("tokenizer vocabulary has duplicates")
        for required in (PAD, BOS, EOS, UNK, *SECTION_TOKENS, *PLAN_TOKENS, *DIGITS, *SLOT_TOKENS, *MENTION_TOKENS):
            if required not in self.ids:
                raise ValueError(f"tokenizer vocabulary lacks {required!r}")
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = (self.ids[t] for t in (PAD, BOS, EOS, UNK))

    @classmethod
    def load(cls, path) -> "Tokenizer":
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return cls(data["tokens"])

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"kind": "wafer_reasoner-words-v0", "tokens": self.tokens}, handle, indent=0)

    def __len__(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        return self.ids.get(token, self.unk_id)


def _canonical(word: str) -> str:
    return SPELLING_VARIANTS.get(word, word)


def utterance_words(text: str) -> list:
    """Lower-case words and single digits: 'Turn 90 degrees!' -> ['turn', '9', '0', 'degrees']."""
    return [_canonical(word) for word in _WORD_RE.findall(text.lower())[:MAX_UTTERANCE_WORDS]]


def label_words(label: str) -> list:
    return [_canonical(word) for word in label.split("_") if word]


def _find(words: list, phrase: list) -> int:
    """Index of the first occurrence of phrase in words, or -1."""
    for start in range(len(words) - len(phrase) + 1):
        if words[start:start + len(phrase)] == phrase:
            return start
    return -1


def mention_order(words: list, labels) -> dict:
    """label -> 1-based order of its first mention in the utterance (labels never said are absent).

    A longer label wins over a shorter one at the same place ('coffee mug' over 'mug')."""
    found = []
    for label in set(labels):
        start = _find(words, label_words(label))
        if start >= 0:
            found.append((start, -len(label_words(label)), label))
    found.sort()
    order, covered = {}, set()
    for start, negative_length, label in found:
        span = set(range(start, start - negative_length))
        if span & covered:
            continue
        covered |= span
        order[label] = len(order) + 1
    return order


def mark_places(words: list, places) -> list:
    """Insert PLACE_MARK before each phrase that names a place ('go to the # living room')."""
    phrases = sorted((label_words(p.name) for p in places), key=len, reverse=True)
    marked, index = [], 0
    while index < len(words):
        phrase = next((p for p in phrases if p and words[index:index + len(p)] == p), None)
        if phrase is None:
            marked.append(words[index])
            index += 1
        else:
            marked += [PLACE_MARK, *phrase]
            index += len(phrase)
    return marked


def near_neighbour(scene: Scene, obj):
    """The closest object of another label within NEAR_RADIUS_M of obj, or None ("the X near the Y")."""
    others = [o for o in scene.objects if o.id != obj.id and o.label != obj.label]
    if not others:
        return None
    best = min(others, key=lambda o: distance(o.x, o.y, obj.x, obj.y))
    return best if distance(best.x, best.y, obj.x, obj.y) <= NEAR_RADIUS_M else None


def select_objects(scene: Scene, mentioned: dict) -> list:
    """At most MAX_SLOTS objects, nearest first; the held object and mentioned labels are kept first."""
    robot = scene.robot
    by_distance = sorted(scene.objects, key=lambda o: (distance(o.x, o.y, robot.x, robot.y), o.id))
    priority = [o for o in by_distance if o.id == scene.holding or o.label in mentioned]
    rest = [o for o in by_distance if o not in priority]
    chosen = set(o.id for o in (priority + rest)[:MAX_SLOTS])
    return [o for o in by_distance if o.id in chosen]


@dataclass(frozen=True)
class Prompt:
    tokens: tuple  # token strings
    slot_ids: tuple  # slot k -> scene object id


def build_prompt(scene: Scene, utterance: str) -> Prompt:
    words = utterance_words(utterance)
    mentioned = mention_order(words, [o.label for o in scene.objects])
    tokens = [BOS, "<places>"]
    for index, place in enumerate(scene.places):
        tokens += ([","] if index else []) + label_words(place.name)
    tokens += ["<say>", *mark_places(words, scene.places), "<scene>"]
    objects = select_objects(scene, mentioned)
    for slot, obj in enumerate(objects):
        order = mentioned.get(obj.label)
        if order is not None and order <= len(MENTION_TOKENS):
            tokens.append(MENTION_TOKENS[order - 1])
        if obj.color and _find(words, label_words(obj.color) + label_words(obj.label)) >= 0:
            tokens.append(COLOR_MARK)
        tokens += label_words(obj.color) + label_words(obj.label)
        near = near_neighbour(scene, obj)
        if near is not None:
            tokens += ["near", *label_words(near.label)]
        tokens.append(SLOT_TOKENS[slot])
    held = next((k for k, o in enumerate(objects) if o.id == scene.holding), None)
    tokens += ["<hold>", SLOT_TOKENS[held] if held is not None else "none", "<plan>"]
    return Prompt(tuple(tokens), tuple(o.id for o in objects))


def plan_to_tokens(plan: str, prompt: Prompt) -> list:
    """Canonical plan text -> output tokens (training targets). Raises ValueError if not expressible."""
    slot_of = {object_id: SLOT_TOKENS[k] for k, object_id in enumerate(prompt.slot_ids)}
    tokens = []
    pattern = re.compile(
        r"[a-z_]+\(\)|[a-z_]+\(|obj:|place:|person:|not_found:|ambiguous:|unsupported|\)|; |, |-|\.|\d|[^:;,()\s]+"
    )
    for piece in pattern.findall(plan):
        if tokens and tokens[-1] == "obj:":
            if piece not in slot_of:
                raise ValueError(f"object {piece!r} is not in the prompt")
            tokens.append(slot_of[piece])
        elif piece in PLAN_TOKENS:
            tokens.append(piece)
        elif piece.isdigit():
            tokens.append(piece)
        else:
            words = label_words(piece)
            for index, word in enumerate(words):
                tokens += (["_"] if index else []) + [word]
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
            pieces.append(token)
    return "".join(pieces)
