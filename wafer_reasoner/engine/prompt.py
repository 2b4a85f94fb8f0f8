"""Tokenizer and the prompt layout the planner model reads and writes, in two versioned formats.

``tokenizer.json``'s ``kind`` selects the format, so a model folder always carries the format it was trained on:

- ``wafer_reasoner-words-v0`` (the shipped model): a closed word list; a word outside it is ``<unk>``.
- ``wafer_reasoner-spell-v1`` (issue 3): the same word list idea plus letter tokens, so any word outside the
  vocabulary is *spelled* (``stapler`` -> ``S ##t ##a ##p ##l ##e ##r``) and can be copied into a plan; speech is
  normalised first (fillers dropped, number words before a unit turned into digits) and labels are matched
  spelling-tolerantly (plural, one typo).

Layout v0 (one sequence, decoder-only)::

    <bos> <places> kitchen , living room <say> bring me the red cup <scene>
          @1 red cup <o0>  blue cup <o1>  book near table <o2>  table <o3>  <hold> none <plan>
    navigate( obj: <o0> ) ; pick( obj: <o0> ) ; navigate( person: user ) ; handover( obj: <o0> , person: user ) <eos>

Layout v1 (same sections; only objects whose label was said, and the held one, are listed)::

    <bos> <places> kitchen , living room <say> bring me the red @1 cup near the @2 table <scene>
          @1 * red cup near @2 <o0>  @1 blue cup <o1>  @2 table <o2>  <hold> none <plan>

Why this layout makes grounding learnable by a small model:
- The utterance comes before the scene, so every object description can attend back to the words that were
  said, and its slot token (``<oK>``, after the description) gathers "was I meant?" from them.
- Objects are listed nearest-first, so "nearest"/"farthest" is the first/last match.
- ``@k`` marks an object whose label is the k-th object label mentioned in the utterance, ``*`` an object whose
  colour was said right before its label, and ``#`` (inside the utterance) words that name a place of the map.
  This is plain string matching done here, not by the model; the model still decides which mention plays which
  role, resolves nearest/farthest/near, and detects ambiguity and absence. v0: ``near L`` names the closest object
  of another label within 1.2 m; v1: ``near @k`` when that object's label is the k-th mention (nothing otherwise),
  and the mention itself carries ``@k`` in the utterance, spelled as the scene spells it.
- The model writes slot tokens, never raw ids: ``<oK>`` is mapped back to the scene id after decoding.
The fixed part (``<bos> <places> ...``) comes first so its KV state can be computed once and reused.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field

from wafer_reasoner.engine.grounding import HEARD_AS, near_neighbour, read_references, resolve_reference
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
MENTION_TOKENS = ("@1", "@2", "@3")  # v0
MENTION_TOKENS_V1 = tuple(f"@{k}" for k in range(1, 7))  # three clauses of up to two labels each
# v1 spelling: a word outside the vocabulary is its letters, the first one upper case ("S ##t ##a ...")
WORD_START_LETTERS = tuple(string.ascii_uppercase)
LETTERS = tuple(f"##{c}" for c in string.ascii_lowercase)
_LETTER_TEXT = {**{t: t.lower() for t in WORD_START_LETTERS}, **{t: t[2:] for t in LETTERS}}
MAX_UTTERANCE_WORDS = 64
SPELLING_VARIANTS = {"grey": "gray", "colour": "color"}  # one spelling per word, in speech and in perception
FILLERS = frozenset({"um", "uh", "uhm", "erm", "er", "hmm", "mm", "ah", "eh"})  # v1: dropped from speech
UNIT_WORDS = frozenset({"degree", "degrees", "second", "seconds", "sec", "secs"})
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {**{w: k for k, w in enumerate(_ONES)}, **{w: 10 * (k + 2) for k, w in enumerate(_TENS)}}
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|\d")
_NAME_RE = re.compile(r"[a-z0-9_]+")  # plan names the tokenizer can write (lower case words and digits)

KIND_V0 = "wafer_reasoner-words-v0"
KIND_V1 = "wafer_reasoner-spell-v1"
KIND_V2 = "wafer_reasoner-resolved-v2"
AMBIGUOUS, MISSING = "<ambiguous>", "<missing>"  # v2: what a mention resolves to when it is not one object


@dataclass(frozen=True)
class PromptFormat:
    """What a tokenizer kind means for prompt building (one code path, switched by these flags)."""

    kind: str
    mention_tokens: tuple
    spelled: bool = False  # words outside the vocabulary become letter tokens (else <unk>)
    speech: bool = False  # fillers dropped, "ninety degrees" -> 9 0 degrees
    tolerant: bool = False  # labels and places match plural / one-typo forms; the mention is rewritten canonically
    mentioned_only: bool = False  # the scene section lists only objects whose label was said (and the held one)
    near_tags: bool = False  # "near @k" instead of "near <label words>"
    resolved: bool = False  # v2: every mention tagged, grounded here (engine/grounding.py), one answer per mention

    def required_tokens(self) -> tuple:
        extra = (*WORD_START_LETTERS, *LETTERS) if self.spelled else ()
        extra += (AMBIGUOUS, MISSING) if self.resolved else ()
        return (PAD, BOS, EOS, UNK, *SECTION_TOKENS, *PLAN_TOKENS, *DIGITS, *SLOT_TOKENS, *self.mention_tokens, *extra)


V0 = PromptFormat(KIND_V0, MENTION_TOKENS)
V1 = PromptFormat(KIND_V1, MENTION_TOKENS_V1, spelled=True, speech=True, tolerant=True, mentioned_only=True,
                  near_tags=True)
MENTION_TOKENS_V2 = tuple(f"@{k}" for k in range(1, 9))  # four clauses of a label and an anchor each
V2 = PromptFormat(KIND_V2, MENTION_TOKENS_V2, spelled=True, speech=True, tolerant=True, mentioned_only=True,
                  near_tags=True, resolved=True)
FORMATS = {fmt.kind: fmt for fmt in (V0, V1, V2)}


class Tokenizer:
    """The vocabulary of one model and the prompt format (``kind``) it was trained with."""

    def __init__(self, tokens, kind: str = KIND_V0):
        if kind not in FORMATS:
            raise ValueError(f"unknown tokenizer kind {kind!r} (known: {', '.join(FORMATS)})")
        self.format = FORMATS[kind]
        self.tokens = list(tokens)
        self.ids = {token: index for index, token in enumerate(self.tokens)}
        if len(self.ids) != len(self.tokens):
            raise ValueError("tokenizer vocabulary has duplicates")
        for required in self.format.required_tokens():
            if required not in self.ids:
                raise ValueError(f"tokenizer vocabulary lacks {required!r}")
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = (self.ids[t] for t in (PAD, BOS, EOS, UNK))

    @property
    def kind(self) -> str:
        return self.format.kind

    @classmethod
    def load(cls, path) -> "Tokenizer":
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return cls(data["tokens"], data.get("kind", KIND_V0))

    def save(self, path) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"kind": self.kind, "tokens": self.tokens}, handle, indent=0)

    def __len__(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        return self.ids.get(token, self.unk_id)

    def word_tokens(self, word: str) -> list:
        """How one word is written: itself when known (or in v0, where unknown words are <unk>), else spelled."""
        if not self.format.spelled or word in self.ids:
            return [word]
        return spell_word(word)

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


def spell_word(word: str) -> list:
    """Letter tokens of a word (letters a-z only): 'stapler' -> ['S', '##t', '##a', ...]; [] if none."""
    letters = [c for c in word if c in string.ascii_lowercase]
    return [letters[0].upper(), *(f"##{c}" for c in letters[1:])] if letters else []


def _canonical(word: str) -> str:
    return SPELLING_VARIANTS.get(word, word)


def utterance_words(text: str) -> list:
    """Lower-case words and single digits: 'Turn 90 degrees!' -> ['turn', '9', '0', 'degrees']."""
    return [_canonical(word) for word in _WORD_RE.findall(text.lower())[:MAX_UTTERANCE_WORDS]]


def _number_at(words: list, start: int):
    """(value, words used) of a spoken number at words[start] ('one hundred and twenty'), or None."""
    index, value = start, None
    if index < len(words) and (words[index] in NUMBER_WORDS or words[index] == "a") and \
            index + 1 < len(words) and words[index + 1] == "hundred":
        value = 100 * (NUMBER_WORDS.get(words[index], 1) or 1)
        index += 2
        if index + 1 < len(words) and words[index] == "and" and words[index + 1] in NUMBER_WORDS:
            index += 1
    rest = 0
    if index < len(words) and words[index] in _TENS:
        rest, index = NUMBER_WORDS[words[index]], index + 1
        if index < len(words) and words[index] in _ONES[1:10]:
            rest, index = rest + NUMBER_WORDS[words[index]], index + 1
    elif index < len(words) and words[index] in _ONES:
        rest, index = NUMBER_WORDS[words[index]], index + 1
    if index == start:
        return None
    return (value or 0) + rest, index - start


def speech_words(text: str, destutter: bool = False) -> list:
    """v1 normalisation of speech: utterance_words without fillers, and spoken numbers that precede a unit
    ('ninety degrees', 'one hundred and twenty seconds') as digits; ``destutter`` (v2) also drops a word said
    twice in a row ('the the cup')."""
    words = [word for word in utterance_words(text) if word not in FILLERS]
    if destutter:
        words = [w for k, w in enumerate(words) if k == 0 or w != words[k - 1] or not w.isalpha()]
    out, index = [], 0
    while index < len(words):
        number = _number_at(words, index)
        if number is not None and index + number[1] < len(words) and words[index + number[1]] in UNIT_WORDS:
            out += list(str(number[0]))
            index += number[1]
        else:
            out.append(words[index])
            index += 1
    return out[:MAX_UTTERANCE_WORDS]


def label_words(label: str) -> list:
    return [_canonical(word) for word in label.split("_") if word]


def _find(words: list, phrase: list) -> int:
    """Index of the first occurrence of phrase in words, or -1."""
    for start in range(len(words) - len(phrase) + 1):
        if words[start:start + len(phrase)] == phrase:
            return start
    return -1


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
        for start in starts if tolerant else starts[:1]:  # v0 (exact) looks at the first occurrence only
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


def mention_order(words: list, labels, tolerant: bool = False) -> dict:
    """label -> 1-based order of its first mention in the utterance (labels never said are absent)."""
    return {label: k + 1 for k, (label, _, _) in enumerate(mention_spans(words, labels, tolerant))}


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


def select_objects(scene: Scene, mentioned: dict, mentioned_only: bool = False) -> list:
    """At most MAX_SLOTS objects, nearest first; the held object and mentioned labels are kept first (and, with
    mentioned_only, are the only ones)."""
    robot = scene.robot
    by_distance = sorted(scene.objects, key=lambda o: (distance(o.x, o.y, robot.x, robot.y), o.id))
    priority = [o for o in by_distance if o.id == scene.holding or o.label in mentioned]
    rest = [] if mentioned_only else [o for o in by_distance if o not in priority]
    chosen = set(o.id for o in (priority + rest)[:MAX_SLOTS])
    return [o for o in by_distance if o.id in chosen]


@dataclass(frozen=True)
class Prompt:
    tokens: tuple  # token strings
    slot_ids: tuple  # slot k -> scene object id
    # what the builder made of the utterance, kept so the grammar and the coverage check need not redo it
    heard: Heard | None = field(default=None, compare=False, repr=False)
    grounded: tuple = field(default=(), compare=False, repr=False)  # v2: grounded_mentions(...)


def _color_said(words: list, obj, span) -> bool:
    """v1: the object's colour words stand right before the mention of its label."""
    if not obj.color or span is None:
        return False
    color = label_words(obj.color)
    before = words[max(0, span[0] - len(color)):span[0]]
    return len(before) == len(color) and all(word_matches(s, c) for s, c in zip(before, color))


@dataclass(frozen=True)
class Heard:
    """What the prompt builder made of an utterance in one format."""

    words: tuple  # normalised words (v0: utterance_words, v1: speech_words)
    spans: tuple  # (label, start, end) per mentioned scene label, in mention order
    said: tuple  # the words of the <say> section before spelling: marks, tags, canonical mentions and places

    def mentioned(self) -> dict:
        return {label: k + 1 for k, (label, _, _) in enumerate(self.spans)}


def hear(scene: Scene, utterance: str, fmt: PromptFormat = V0) -> Heard:
    """Normalise the utterance, find the scene's labels in it and write the <say> section's words. v1 tags each
    mention (``@k``) and writes it, like a place, as the scene spells it: a model that copies a label from
    the utterance (``clarify(ambiguous:cup)`` after "the cups") copies the scene's spelling."""
    words = speech_words(utterance, fmt.resolved) if fmt.speech else utterance_words(utterance)
    spans = tuple(mention_spans(words, [o.label for o in scene.objects], fmt.tolerant, every=fmt.resolved))
    said = words
    if fmt.near_tags:
        said, index = [], 0
        starts = {start: (k, label, end) for k, (label, start, end) in enumerate(spans)}
        while index < len(words):
            if index in starts and starts[index][0] < len(fmt.mention_tokens):
                k, label, end = starts[index]
                said += [fmt.mention_tokens[k], *label_words(label)]
                index = end
            else:
                said.append(words[index])
                index += 1
    return Heard(tuple(words), spans, tuple(mark_places(said, scene.places, fmt.tolerant)))


def build_prompt(scene: Scene, utterance: str, tokenizer: Tokenizer | None = None) -> Prompt:
    """The prompt for (scene, utterance) in the tokenizer's format (v0 without a tokenizer)."""
    fmt = tokenizer.format if tokenizer is not None else V0
    write = tokenizer.word_tokens if tokenizer is not None else (lambda word: [word])
    heard = hear(scene, utterance, fmt)
    tokens = [BOS, "<places>"]
    for index, place in enumerate(scene.places):
        tokens += ([","] if index else []) + [t for w in label_words(place.name) for t in write(w)]
    tokens += ["<say>", *[t for w in heard.said for t in write(w)], "<scene>"]
    if fmt.resolved:
        return _resolved_scene(scene, heard, tokenizer, tokens)
    words, mentioned = list(heard.words), heard.mentioned()
    span_of = {label: (start, end) for label, start, end in heard.spans}
    objects = select_objects(scene, mentioned, fmt.mentioned_only)
    for slot, obj in enumerate(objects):
        order = mentioned.get(obj.label)
        if order is not None and order <= len(fmt.mention_tokens):
            tokens.append(fmt.mention_tokens[order - 1])
        if fmt.tolerant:
            colour_said = _color_said(words, obj, span_of.get(obj.label))
        else:
            colour_said = bool(obj.color) and _find(words, label_words(obj.color) + label_words(obj.label)) >= 0
        if colour_said:
            tokens.append(COLOR_MARK)
        tokens += [t for w in label_words(obj.color) + label_words(obj.label) for t in write(w)]
        near = near_neighbour(scene, obj)
        if near is not None and not fmt.near_tags:
            tokens += ["near", *label_words(near.label)]
        elif near is not None and mentioned.get(near.label, 99) <= len(fmt.mention_tokens):
            tokens += ["near", fmt.mention_tokens[mentioned[near.label] - 1]]
        tokens.append(SLOT_TOKENS[slot])
    held = next((k for k, o in enumerate(objects) if o.id == scene.holding), None)
    tokens += ["<hold>", SLOT_TOKENS[held] if held is not None else "none", "<plan>"]
    return Prompt(tuple(tokens), tuple(o.id for o in objects), heard)


def grounded_mentions(scene: Scene, heard: Heard, tokenizer: Tokenizer) -> list:
    """v2: (Reference, what it means: a SceneObject, "ambiguous" or "missing") per mention, in order."""
    references = read_references(list(heard.words), list(heard.spans), scene, lambda word: word in tokenizer.ids)
    return [(reference, resolve_reference(scene, reference)) for reference in references]


def _resolved_scene(scene: Scene, heard: Heard, tokenizer: Tokenizer, tokens: list) -> Prompt:
    """v2 scene section: ``@k`` and what the k-th mention grounds to (a slot, <ambiguous>, <missing>), then the
    held object. Slots are numbered in order of first use."""
    slot_ids = []

    def slot(object_id: str) -> str:
        if object_id not in slot_ids:
            slot_ids.append(object_id)
        return SLOT_TOKENS[slot_ids.index(object_id)]

    grounded = tuple(grounded_mentions(scene, heard, tokenizer))
    for tag, (_, meant) in zip(tokenizer.format.mention_tokens, grounded):
        tokens += [tag, AMBIGUOUS if meant == "ambiguous" else MISSING if meant == "missing" else slot(meant.id)]
    tokens += ["<hold>", slot(scene.holding) if any(o.id == scene.holding for o in scene.objects) else "none",
               "<plan>"]
    return Prompt(tuple(tokens), tuple(slot_ids), heard, grounded)


def plan_to_tokens(plan: str, prompt: Prompt, tokenizer: Tokenizer | None = None) -> list:
    """Canonical plan text -> output tokens (training targets). Raises ValueError if not expressible."""
    write = tokenizer.word_tokens if tokenizer is not None else (lambda word: [word])
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
                tokens += (["_"] if index else []) + write(word)
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
            pieces.append(_LETTER_TEXT.get(token, token))
    return "".join(pieces)
