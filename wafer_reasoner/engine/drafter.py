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


class PlanDrafter:
    def __init__(self, tokenizer):
        self.slot_index = {tokenizer.ids[token]: k for k, token in enumerate(SLOT_TOKENS)}  # slot id -> k
        self.root = _TrieNode()
        self.nodes = 1

    def _abstract(self, tokens) -> list:
        """Slot tokens -> ("slot", order of first mention in this plan); other tokens stay ids."""
        order = {}
        out = []
        for token in tokens:
            if token in self.slot_index:
                out.append(("slot", order.setdefault(token, len(order))))
            else:
                out.append(token)
        return out

    def learn(self, tokens) -> None:
        """Remember one finished plan (token ids, <eos> included)."""
        node = self.root
        node.count += 1
        for key in self._abstract(tokens):
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

    def draft(self, tokens, cursor, limit: int) -> list:
        """Up to ``limit`` token ids likely to follow ``tokens``; ``cursor`` (at the end of tokens) is not moved."""
        node = self.root
        for key in self._abstract(tokens):
            node = node.children.get(key)
            if node is None:
                return []
        slots = list(dict.fromkeys(t for t in tokens if t in self.slot_index))  # in order of first mention
        walker = cursor.copy()
        proposed = []
        while len(proposed) < limit and node.best is not None and not walker.done:
            key = node.best
            token = key
            if isinstance(key, tuple):
                if key[1] >= len(slots):
                    break  # a new object: the model's choice
                token = slots[key[1]]
            if token not in walker.options():
                break
            walker.advance(token)
            proposed.append(token)
            node = node.children[key]
        return proposed
