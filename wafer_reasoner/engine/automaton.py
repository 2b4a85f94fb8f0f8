"""The plan automaton: a pruned DFA over the model's token ids, and the cursor that walks it while decoding.

``engine/grammar.py`` builds the automaton for a query; here is what decoding needs of it. Node 0 is ``final``.
``dist[node]`` is the fewest tokens from ``node`` to ``final``; a ``Cursor`` only offers tokens that still leave
room to finish within its token budget, so every constrained output is a complete plan. Per-node arrays are
made on a node's first visit: a query walks a dozen of the ~90 nodes.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from wafer_reasoner.planner.syntax import MAX_STEPS

UNREACHABLE = 1 << 30


class PlanGrammar:
    """A pruned DFA over token ids. Node 0 is ``final``; ``start`` is where a plan begins.

    A grammar made ``with_branch`` from a skeleton shares the skeleton's nodes (and their arrays) except the
    clarify node."""

    def __init__(self, edges: list, start: int, separator_id: int, *, clarify: int = -1, after_last: int = -1):
        self.start = start
        self.final = 0
        self.separator_id = separator_id
        self.clarify, self.after_last = clarify, after_last  # where a branch attaches, and where it leads
        self.dist = _distances_to_final(edges)
        if self.dist[start] >= UNREACHABLE:
            raise ValueError("the plan grammar has no complete plan (the clarify(unsupported) path is missing)")
        self._raw_edges = edges
        self._nodes = [None] * len(edges)  # node -> _Node, filled on first visit
        self._base = None  # the skeleton this grammar extends

    def with_branch(self, edges: list, root: int, token_id: int) -> "PlanGrammar":
        """This grammar plus a tree of nodes (``edges[i]`` is node ``len(self) + i``, children after parents,
        leaves leading back into this grammar) entered from the clarify node by ``token_id`` -> ``root``; the
        branch is left out when it cannot reach final. self is not changed."""
        extra_dist = _tree_distances(edges, len(self._raw_edges), self.dist)
        grammar = object.__new__(PlanGrammar)
        grammar.__dict__.update(self.__dict__)
        grammar._raw_edges = self._raw_edges + edges
        grammar.dist = self.dist + extra_dist
        if grammar.dist[root] < UNREACHABLE:
            clarify_edges = dict(self._raw_edges[self.clarify])
            clarify_edges[token_id] = root
            grammar._raw_edges[self.clarify] = clarify_edges
        grammar._nodes = [None] * len(grammar._raw_edges)
        grammar._base = self
        return grammar

    def node(self, node: int) -> "_Node":
        found = self._nodes[node]
        if found is None:
            base = self._base
            if base is not None and node < len(base) and node != base.clarify:
                found = base.node(node)
            else:
                found = _Node(self._raw_edges[node], self.dist)
            self._nodes[node] = found
        return found

    def __len__(self) -> int:
        return len(self._raw_edges)

    def cursor(self, budget: int) -> "Cursor":
        """A walker at ``start`` that must reach ``final`` within ``budget`` tokens (``<eos>`` included)."""
        if self.dist[self.start] > budget:
            raise ValueError(f"a budget of {budget} tokens cannot hold the shortest plan ({self.dist[self.start]})")
        return Cursor(self, self.start, budget)

    def resumed(self, token_ids):
        """This grammar with its start moved to where token_ids (a path from start) lead, to decode the rest of a
        plan; None if they are not a path or lead nowhere a plan can end."""
        node = self.start
        for token in token_ids:
            node = self.node(node).edges.get(int(token))
            if node is None:
                return None
        if self.dist[node] >= UNREACHABLE or node == self.final:
            return None
        twin = object.__new__(PlanGrammar)
        twin.__dict__.update(self.__dict__)  # the same automaton and node cache; only the start differs
        twin.start = node
        return twin

    def accepts(self, token_ids) -> bool:
        """Whether token_ids (ending in ``<eos>``) is a complete path from start to final."""
        node = self.start
        for token in token_ids:
            node = self.node(node).edges.get(int(token))
            if node is None:
                return False
        return node == self.final


class _Node:
    """One node's live edges (those that can still reach final) as a dict and as sorted arrays."""

    __slots__ = ("edges", "ids", "target_dist", "max_target_dist")

    def __init__(self, raw_edges: dict, dist: list):
        self.edges = {token: target for token, target in raw_edges.items() if dist[target] < UNREACHABLE}
        order = sorted(self.edges)
        self.ids = np.array(order, dtype=np.int64)  # [k] allowed tokens
        self.target_dist = np.array([dist[self.edges[t]] for t in order], dtype=np.int64)  # [k]
        self.max_target_dist = int(self.target_dist.max()) if order else 0


class Cursor:
    """One candidate's position in the grammar, with its remaining token budget and step count."""

    __slots__ = ("grammar", "node", "remaining", "separators")

    def __init__(self, grammar: PlanGrammar, node: int, remaining: int):
        self.grammar = grammar
        self.node = node
        self.remaining = remaining
        self.separators = 0  # "; " emitted so far: the plan has separators + 1 steps

    @property
    def done(self) -> bool:
        return self.node == self.grammar.final

    def copy(self) -> "Cursor":
        twin = Cursor(self.grammar, self.node, self.remaining)
        twin.separators = self.separators
        return twin

    def options(self) -> np.ndarray:
        """[k] token ids allowed now; never empty before ``done``."""
        node = self.grammar.node(self.node)
        ids = node.ids
        if node.max_target_dist + 1 > self.remaining:
            ids = ids[node.target_dist + 1 <= self.remaining]  # leave room to finish the plan
        separator = self.grammar.separator_id
        if self.separators + 1 >= MAX_STEPS and separator in node.edges:
            ids = ids[ids != separator]
        return ids

    def advance(self, token: int) -> None:
        target = self.grammar.node(self.node).edges.get(int(token))
        if target is None or self.remaining < 1:
            raise ValueError(f"token {token} is not allowed at grammar node {self.node}")
        self.node = target
        self.remaining -= 1
        self.separators += int(token) == self.grammar.separator_id

    def forced_run(self) -> list:
        """Advance over every token that is the only choice; returns them (the run is fed as one chunk)."""
        run = []
        while not self.done:
            ids = self.options()
            if ids.size != 1:
                break
            token = int(ids[0])
            self.advance(token)
            run.append(token)
        return run


def _tree_distances(edges: list, first: int, known: list) -> list:
    """Distances to final for the nodes of a trie numbered from ``first`` (children after parents), whose other
    edges lead to nodes with ``known`` distances."""
    dist = [UNREACHABLE] * len(edges)
    for index in range(len(edges) - 1, -1, -1):
        for target in edges[index].values():
            reach = dist[target - first] if target >= first else known[target]
            dist[index] = min(dist[index], reach + 1)
    return dist


def _distances_to_final(edges: list) -> list:
    """Fewest tokens from each node to node 0 (breadth-first over reversed edges); unreachable: a huge number."""
    incoming = [[] for _ in edges]
    for source, out in enumerate(edges):
        for target in out.values():
            incoming[target].append(source)
    dist = [UNREACHABLE] * len(edges)
    dist[0] = 0
    queue = deque([0])
    while queue:
        node = queue.popleft()
        for source in incoming[node]:
            if dist[source] == UNREACHABLE:
                dist[source] = dist[node] + 1
                queue.append(source)
    return dist
