"""Draft tokens from the engine's own past plans, for greedy decoding to verify in one chunk.

A robot hears the same kinds of commands again and again, and their plans share shapes::

    navigate( obj: <o3> ) ; pick( obj: <o3> ) ; navigate( person: user ) ; handover( obj: <o3> , ...
    rotate( - 1 3 5 ) <eos>            (said: "turn 135 degrees right")

The drafter keeps a trie of finished plans with the parts that differ from query to query abstracted:

- object slots become "the k-th object this plan names" (so ``<o3> ... <o3>`` and ``<o0> ... <o0>`` are one shape);
- tokens copied from the utterance (digits of a number, words of a place or a label) become "a said token" for
  the first one of a run and "the said token after the previous one" for the rest (so ``1 3 5`` after
  "turn 135 degrees" and ``9 0`` after "rotate 90 degrees" share their first steps).

Given the plan so far, it walks the trie and proposes the most frequent continuation, turning abstract tokens back
into this plan's slots and said words (a continuation of the copied run is preferred wherever the grammar takes
the next said token), and stops where the grammar would refuse a token, where a new object or a new said word must
be chosen (only the model can), or at the length limit. Before any plan token exists, the first token is guessed
from the utterance's words (counts of which first tokens past plans with those words had), so the engine can feed
the start of a plan with the prompt. The engine keeps the longest prefix of a draft that greedy decoding itself
would have produced, so drafting changes the speed, never the plan.
"""

from __future__ import annotations

import math

from wafer_reasoner.engine.tokenizer import DIGITS, PLACE_SLOT_TOKENS, PLAN_TOKENS, SLOT_TOKENS

MAX_TRIE_NODES = 50_000  # learning stops here (a plan adds at most ~64 nodes; shapes repeat)
MAX_WORDS = 20_000  # utterance words counted for the first-token guess (new words are ignored past this)
SAID = ("said",)  # a token copied from the utterance, starting a run (the model chooses which)
NEXT = ("next",)  # the utterance token after the previously copied one


class _TrieNode:
    __slots__ = ("children", "count", "best")

    def __init__(self):
        self.children = {}  # abstract token -> _TrieNode
        self.count = 0  # plans through this node
        self.best = None  # the child key with the highest count


class DraftState:
    """Where one plan being decoded stands in the trie (None: off every known shape), its slots so far, and the
    utterance it copies from."""

    __slots__ = ("node", "slots", "said", "positions", "copied", "copying", "first", "features")

    def __init__(self, root: _TrieNode, said: tuple = (), positions: dict | None = None):
        self.node = root
        self.slots = []  # this plan's slot ids in order of first mention
        self.said = said  # utterance token ids (those a plan may copy)
        self.positions = positions if positions is not None else {}  # token id -> its indexes in said
        self.copied = -1  # index in said of the last copied token (-1: none yet)
        self.copying = False  # the plan's last tokens are a copied run (joiners such as "_" included)
        self.first = None  # the guessed first plan token
        self.features = None  # what the first-token guess looked at (PlanDrafter._features)


class PlanDrafter:
    def __init__(self, tokenizer):
        # object and place slots: a plan's k-th named thing, whatever its slot (the token before says which kind)
        self.slot_index = {tokenizer.ids[token]: k for k, token in enumerate(SLOT_TOKENS + PLACE_SLOT_TOKENS)}
        self.structure = {tokenizer.ids[token] for token in PLAN_TOKENS if token in tokenizer.ids}  # never copied
        self.say_id, self.scene_id = tokenizer.ids.get("<say>"), tokenizer.ids.get("<scene>")
        self.digits = {tokenizer.ids[token] for token in DIGITS if token in tokenizer.ids}
        self.joiners = {tokenizer.ids[token] for token in ("_", ".") if token in tokenizer.ids}  # inside a run
        self.marks = {index for token, index in tokenizer.ids.items() if token[:1] in ("@", "#") and len(token) > 1}
        self.root = _TrieNode()
        self.nodes = 1
        self.plans = 0  # plans learned
        self.first_plans = {}  # first plan token -> plans learned with it
        self.first_words = {}  # utterance token -> {first plan token: plans learned with both}

    # ---- abstraction ------------------------------------------------------------------------------------------

    def _key(self, token: int, state: DraftState):
        """A token as the trie knows it, moving state's slots and copy position over it."""
        if token in self.slot_index:
            state.copying = False
            if token not in state.slots:
                state.slots.append(token)
            return ("slot", state.slots.index(token))
        places = state.positions.get(token)
        if places is None:
            state.copying = state.copying and token in self.joiners
            return token
        after = state.copied + 1
        if state.copying and after < len(state.said) and state.said[after] == token:
            state.copied = after
            return NEXT
        state.copied = next((p for p in places if p >= after), places[0])
        state.copying = True
        return SAID

    def _utterance(self, prompt_ids) -> tuple:
        """The prompt's utterance tokens (between ``<say>`` and ``<scene>``) that a plan could copy."""
        prompt_ids = list(prompt_ids)
        if self.say_id not in prompt_ids or self.scene_id not in prompt_ids:
            return ()
        start = prompt_ids.index(self.say_id) + 1
        end = prompt_ids.index(self.scene_id, start) if self.scene_id in prompt_ids[start:] else start
        return tuple(prompt_ids[start:end])

    def _features(self, prompt_ids, said: tuple) -> set:
        """What the first-token guess looks at: the utterance's tokens, and which mention marks the scene section
        carries once or more than once (an object matched what was said, or two did)."""
        features = set(said)
        counts = {}
        prompt_ids = list(prompt_ids)
        if self.scene_id in prompt_ids:
            for token in prompt_ids[prompt_ids.index(self.scene_id):]:
                if token in self.marks:
                    counts[token] = counts.get(token, 0) + 1
        features.update(("scene", token, min(count, 2)) for token, count in counts.items())
        features.add(("scene", "marks", min(len(counts), 2)))
        return features

    def _state(self, prompt_ids) -> DraftState:
        said = self._utterance(prompt_ids)
        positions = {}
        for index, token in enumerate(said):
            if token not in self.structure and token not in self.slot_index:
                positions.setdefault(token, []).append(index)
        return DraftState(self.root, said, positions)

    # ---- learning -----------------------------------------------------------------------------------------------

    def learn(self, tokens, prompt_ids=(), started: DraftState | None = None) -> None:
        """Remember one finished plan (token ids, <eos> included) and the prompt it answered; ``started``: the
        state ``start`` gave for that prompt (its utterance and features are reused, not read again)."""
        tokens = list(tokens)
        state = self._state(prompt_ids) if started is None else DraftState(self.root, started.said, started.positions)
        features = started.features if started is not None and started.features is not None else \
            self._features(prompt_ids, state.said)
        if tokens:
            first = tokens[0]
            self.plans += 1
            self.first_plans[first] = self.first_plans.get(first, 0) + 1
            for word in features:
                counts = self.first_words.get(word)
                if counts is None:
                    if len(self.first_words) >= MAX_WORDS:
                        continue
                    counts = self.first_words[word] = {}
                counts[first] = counts.get(first, 0) + 1
        node = self.root
        node.count += 1
        for token in tokens:
            key = self._key(token, state)
            if key == NEXT:
                continue  # a copied run of any length is one shape
            child = node.children.get(key)
            if child is None:
                if self.nodes >= MAX_TRIE_NODES:
                    return
                child = node.children[key] = _TrieNode()
                self.nodes += 1
            child.count += 1
            if node.best is None or child.count > node.children[node.best].count:
                node.best = key
            node = child

    def guess_first(self, features) -> int | None:
        """The most likely first plan token given the prompt's features (naive Bayes over past plans), or None."""
        total = self.plans
        words = [(counts, sum(counts.values()) / total) for counts in map(self.first_words.get, features) if counts]
        best, best_score = None, -math.inf
        for first, plans in self.first_plans.items():
            # P(word | first) smoothed toward how often the word comes with any plan (a rare first token is not
            # favoured by words it was never seen with)
            score = math.log(plans) + sum(math.log((counts.get(first, 0) + share) / (plans + 1.0))
                                          for counts, share in words)
            if score > best_score:
                best, best_score = first, score
        return best

    # ---- decoding -------------------------------------------------------------------------------------------------

    def start(self, prompt_ids=()) -> DraftState:
        state = self._state(prompt_ids)
        state.features = self._features(prompt_ids, state.said)
        state.first = self.guess_first(state.features) if self.first_plans else None
        return state

    def push(self, state: DraftState, tokens) -> None:
        """Move state over tokens appended to its plan."""
        for token in tokens:
            key = self._key(token, state)
            if state.node is not None and key != NEXT:
                state.node = state.node.children.get(key)

    def draft(self, state: DraftState, cursor, limit: int) -> list:
        """Up to ``limit`` token ids likely to come next; stops where the grammar (at ``cursor``, not moved) has no
        edge, or a new object or said word would have to be chosen. Budget limits are left to the verification."""
        node, grammar, at = state.node, cursor.grammar, cursor.node
        said, copied, copying = state.said, state.copied, state.copying
        proposed = []
        while node is not None and len(proposed) < limit and at != grammar.final:
            edges = grammar.node(at).edges
            follows = said[copied + 1] if copying and copied + 1 < len(said) else None
            if follows in edges:  # a copied run goes on while the grammar takes the next said token
                proposed.append(follows)
                at, copied = edges[follows], copied + 1
                continue
            key = state.first if node is self.root and state.first in node.children else node.best
            if key is None:
                break
            if key == SAID:  # a new said run: only a number is guessed (the next said digit the grammar takes)
                start = next((index for index in range(copied + 1, len(said))
                              if said[index] in self.digits and said[index] in edges), None)
                if start is None:
                    break  # a said word: the model's choice
                token, copied, copying = said[start], start, True
            elif isinstance(key, tuple):
                if key[1] >= len(state.slots):
                    break  # a new object: the model's choice
                token, copying = state.slots[key[1]], False
            else:
                token, copying = key, copying and key in self.joiners
            at = edges.get(token)
            if at is None:
                break
            proposed.append(token)
            node = node.children[key]
        return proposed
