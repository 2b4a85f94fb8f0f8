"""Draft tokens from the engine's own past plans, for greedy decoding to verify in one chunk.

A robot hears the same kinds of commands again and again, and their plans share shapes::

    navigate( obj: <o3> ) ; pick( obj: <o3> ) ; navigate( person: user ) ; handover( obj: <o3> , ...

The drafter keeps a trie of finished plans with object slots abstracted to "the k-th object this plan names"
(so ``<o3> ... <o3>`` and ``<o0> ... <o0>`` are one shape). Given the plan so far, it walks the trie and proposes
the most frequent continuation, turning abstract slots back into this plan's slot tokens, and stops where the
grammar would refuse a token, where a new object must be chosen (only the model can), or at the length limit.
The engine feeds the draft with the chosen token and keeps the longest prefix that greedy decoding itself
would have produced, so drafting changes the speed, never the plan.
"""

from __future__ import annotations

from wafer_reasoner.engine.prompt import SLOT_TOKENS

MAX_TRIE_NODES = 50_000  # learning stops here (a plan adds at most ~64 nodes; shapes repeat)


class _TrieNode:
    __slots__ = ("children", "count", "best")

    def __init__(self):
        self.children = {}  # abstract token -> _TrieNode
        self.count = 0  # plans through this node
        self.best = None  # the child key with the highest count


class DraftState:
    """Where one plan being decoded stands in the trie (None: off every known shape), and its slots so far."""

    __slots__ = ("node", "slots")

    def __init__(self, root: _TrieNode):
        self.node = root
        self.slots = []  # this plan's slot ids in order of first mention


class PlanDrafter:
    def __init__(self, tokenizer):
        self.slot_index = {tokenizer.ids[token]: k for k, token in enumerate(SLOT_TOKENS)}  # slot id -> k
        self.root = _TrieNode()
        self.nodes = 1

    def _key(self, token: int, slots: list):
        """A slot token -> ("slot", order of first mention in this plan), appending it to slots when new."""
        if token not in self.slot_index:
            return token
        if token not in slots:
            slots.append(token)
        return ("slot", slots.index(token))

    def learn(self, tokens) -> None:
        """Remember one finished plan (token ids, <eos> included)."""
        node, slots = self.root, []
        node.count += 1
        for token in tokens:
            key = self._key(token, slots)
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

    def start(self) -> DraftState:
        return DraftState(self.root)

    def push(self, state: DraftState, tokens) -> None:
        """Move state over tokens appended to its plan."""
        for token in tokens:
            key = self._key(token, state.slots)
            if state.node is not None:
                state.node = state.node.children.get(key)

    def draft(self, state: DraftState, cursor, limit: int) -> list:
        """Up to ``limit`` token ids likely to come next; stops where the grammar (at ``cursor``, not moved) has no
        edge or a new object would have to be named. Budget limits are left to the verification."""
        node, grammar, at = state.node, cursor.grammar, cursor.node
        proposed = []
        while node is not None and node.best is not None and len(proposed) < limit and at != grammar.final:
            key = node.best
            if isinstance(key, tuple):
                if key[1] >= len(state.slots):
                    break  # a new object: the model's choice
                token = state.slots[key[1]]
            else:
                token = key
            at = grammar.node(at).edges.get(token)
            if at is None:
                break
            proposed.append(token)
            node = node.children[key]
        return proposed
