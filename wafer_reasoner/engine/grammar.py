"""Constrained decoding: the action language as a token automaton, built per query from what the scene holds.

The automaton is a DFA over the model's output tokens (engine/prompt.py: ``navigate(``, ``obj:``, ``<o3>``,
``)``, ``; ``, place words joined by ``_``, digits, ``<eos>``). Every path from ``start`` to ``final`` is the token
form of a plan that ``planner.language.parse_plan`` accepts, and only references that exist can be written:

- ``obj:`` takes the slot tokens of the objects in this prompt (``<o0>`` .. ``<o{n-1}>``), nothing else;
- ``place:`` takes the names of the semantic map's places (those whose words are in the vocabulary);
- ``person:`` takes ``user`` (the speaker is always addressable; the verifier checks that they are in view) and
  the ids of the people in the scene that the vocabulary can spell;
- ``clarify(not_found:L)`` takes phrases of one to three words that were said; ``clarify(ambiguous:L)`` takes
  the labels that two or more scene objects share; ``clarify`` is only ever the whole plan; v2 (mentions grounded
  in the prompt): ``ambiguous:`` only a label a mention of which grounded to several objects, ``not_found:`` a
  scene label only when a mention of it grounded to none, and no phrase with a function word ("desk and"), a
  colour read off a mention ("the teal cup" -> ``not_found:cup``, never ``teal``) or a place on the map;
- ``stop()`` and ``follow(...)`` end the plan (the verifier would refuse anything after them);
- numbers: an optional ``-`` (rotate only; a wait is never negative), 1-4 integer digits without a leading zero,
  optionally ``.`` and 1-3 decimals; with the speech formats (v1, v2) only the numbers that were said (a rotate
  also +-90 and 180, which "turn left" and "turn around" ask for without a number).

Nodes that cannot reach ``final`` (an empty place list, no objects in view) are pruned, so the decoder never walks
into a dead end. ``dist[node]`` is the fewest tokens from ``node`` to ``final``; a ``Cursor`` only offers tokens
that still leave room to finish within its token budget, so every constrained output is a complete plan.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from wafer_reasoner.engine.prompt import (
    DIGITS,
    EOS,
    SLOT_TOKENS,
    Prompt,
    Tokenizer,
    grounded_mentions,
    hear,
    utterance_words,
)
from wafer_reasoner.planner.language import MAX_STEPS, SPEAKER

SEPARATOR = "; "
MAX_INTEGER_DIGITS = 4
MAX_DECIMALS = 3
MAX_LABEL_WORDS = 3  # clarify labels: n-grams of the utterance up to this length ("charging station")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")  # planner.language's id/name/label characters
_UNREACHABLE = 1 << 30


class PlanGrammar:
    """A pruned DFA over token ids. Node 0 is ``final``; ``start`` is where a plan begins.

    Per-node arrays are made on a node's first visit: a query walks a dozen of the ~90 nodes. A grammar made
    ``with_labels`` from a skeleton shares the skeleton's nodes (and their arrays) except the clarify node."""

    def __init__(self, edges: list, start: int, separator_id: int, *, clarify: int = -1, after_last: int = -1):
        self.start = start
        self.final = 0
        self.separator_id = separator_id
        self.clarify, self.after_last = clarify, after_last  # where with_labels attaches not_found:
        self.dist = _distances_to_final(edges)
        if self.dist[start] >= _UNREACHABLE:
            raise ValueError("the plan grammar has no complete plan (the clarify(unsupported) path is missing)")
        self._raw_edges = edges
        self._nodes = [None] * len(edges)  # node -> _Node, filled on first visit
        self._base = None  # the skeleton this grammar extends

    def with_labels(self, tokenizer: Tokenizer, labels) -> "PlanGrammar":
        """This grammar plus ``clarify(not_found:LABEL)`` for the spellable labels; self is not changed."""
        b = _Builder(tokenizer, first_node=len(self._raw_edges))
        root = b.names(labels, ")", self.after_last)
        extra_dist = _tree_distances(b.edges, len(self._raw_edges), self.dist)
        grammar = object.__new__(PlanGrammar)
        grammar.__dict__.update(self.__dict__)
        grammar._raw_edges = self._raw_edges + b.edges
        grammar.dist = self.dist + extra_dist
        if grammar.dist[root] < _UNREACHABLE:
            clarify_edges = dict(self._raw_edges[self.clarify])
            clarify_edges[tokenizer.ids["not_found:"]] = root
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
        if self.dist[node] >= _UNREACHABLE or node == self.final:
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
        self.edges = {token: target for token, target in raw_edges.items() if dist[target] < _UNREACHABLE}
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


@dataclass(frozen=True)
class GrammarRefs:
    """What a plan for this query may refer to (names as plan text, e.g. ``living_room``)."""

    slots: int  # objects in the prompt: slot tokens <o0> .. <o{slots-1}>
    places: tuple = ()  # place names of the semantic map
    people: tuple = (SPEAKER,)  # person ids
    not_found_labels: tuple = ()  # labels clarify(not_found:...) may name
    ambiguous_labels: tuple = ()  # labels clarify(ambiguous:...) may name
    numbers: tuple | None = None  # literals rotate(...) / wait(...) may take ("273", "1.5"); None: any number


# v2: words no object label contains, so a not_found: phrase never runs into them ("desk_and", "vacuum_the")
FUNCTION_WORDS = frozenset({"a", "an", "the", "this", "that", "these", "those", "my", "your", "it", "me", "you", "i",
                            "and", "then", "to", "in", "into", "on", "onto", "of", "at", "by", "near", "next",
                            "for", "with", "from", "please", "after", "afterwards", "first", "finally"})
# a rotation a speaker may ask for without saying a number ("turn around", "turn left")
UNSAID_ROTATIONS = ("180", "90", "-90")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def said_numbers(words, utterance: str) -> tuple:
    """Number literals said: runs of digit words of the normalised speech ("ninety degrees" -> 9 0 -> "90") and
    the numbers written in the utterance itself ("1.5"). A plan copies these, so a number cannot be cut short
    (rotate(27) for "273 degrees")."""
    found, run = set(_NUMBER_RE.findall(utterance)), ""
    for word in [*words, ""]:
        if word.isdigit():
            run += word
        elif run:
            found.add(run)
            run = ""
    return tuple(sorted(n for n in found if len(n.split(".")[0]) <= MAX_INTEGER_DIGITS
                        and len(n.partition(".")[2]) <= MAX_DECIMALS))


def said_word_lists(tokenizer: Tokenizer, scene, utterance: str, heard=None) -> list:
    """Runs of said words a ``clarify(not_found:...)`` label may be copied from: v0 the utterance's words; v1 also
    the <say> section's words (mentions as the scene spells them, marks and tags splitting the runs). ``heard``:
    ``hear(scene, utterance, format)`` when the caller has it already."""
    fmt = tokenizer.format
    if not fmt.speech:
        return [utterance_words(utterance)]
    heard = heard or hear(scene, utterance, fmt)
    runs, run = [list(heard.words)], []
    for word in heard.said:
        if _NAME_RE.fullmatch(word):
            run.append(word)
        else:
            runs.append(run)
            run = []
    return runs + [run]


def refs_for_query(tokenizer: Tokenizer, prompt: Prompt, scene, utterance: str) -> GrammarRefs:
    """The references a plan for (scene, utterance) may use, given the prompt built from them."""
    counts = {}
    for obj in scene.objects:
        counts[obj.label] = counts.get(obj.label, 0) + 1
    heard = None
    if tokenizer.format.speech:
        heard = prompt.heard if prompt.heard is not None else hear(scene, utterance, tokenizer.format)
    said = set()
    for words in said_word_lists(tokenizer, scene, utterance, heard):
        said |= {
            "_".join(words[start:start + n])
            for n in range(1, MAX_LABEL_WORDS + 1)
            for start in range(len(words) - n + 1)
            if not (tokenizer.format.resolved and FUNCTION_WORDS.intersection(words[start:start + n]))
        }
    ambiguous = {label for label, count in counts.items() if count >= 2}
    numbers = None
    if heard is not None:
        numbers = said_numbers(heard.words, utterance)
        if tokenizer.format.resolved:  # v2: refusals about a scene label follow what its mentions grounded to
            grounded = prompt.grounded if prompt.heard is not None else grounded_mentions(scene, heard, tokenizer)
            ambiguous = {reference.label for reference, meant in grounded if meant == "ambiguous"}
            missing = {reference.label for reference, meant in grounded if meant == "missing"}
            said -= set(counts) - missing
            # nor a colour the grounding read off a mention, nor a place the map has: a refusal names the object
            colours = {reference.color for reference, _ in grounded if reference.color}
            said = {phrase for phrase in said if not colours.intersection(phrase.split("_"))}
            said -= {place.name for place in scene.places}
    return GrammarRefs(
        numbers=numbers,
        slots=len(prompt.slot_ids),
        places=tuple(sorted({place.name for place in scene.places})),
        people=tuple(sorted({SPEAKER, *(person.id for person in scene.people)})),
        not_found_labels=tuple(sorted(said)),
        ambiguous_labels=tuple(sorted(ambiguous)),
    )


def grammar_for_query(tokenizer: Tokenizer, prompt: Prompt, scene, utterance: str) -> PlanGrammar:
    return build_grammar(tokenizer, refs_for_query(tokenizer, prompt, scene, utterance))


@functools.lru_cache(maxsize=8192)
def spell(tokenizer: Tokenizer, name: str):
    """Token ids that write ``name`` in a plan (words joined by ``_``; v1 spells unknown words letter by letter),
    or None when the vocabulary cannot."""
    return tokenizer.spell_name(name)


class _Builder:
    """Adds nodes and edges; every edge is checked to keep the automaton deterministic.

    ``edges[i]`` is node ``first_node + i`` (a builder extending a grammar numbers its nodes after it)."""

    def __init__(self, tokenizer: Tokenizer, first_node: int = 0):
        self.tokenizer = tokenizer
        self.first = first_node
        self.edges = [] if first_node else [{}]  # a fresh grammar's node 0: final

    def node(self) -> int:
        self.edges.append({})
        return self.first + len(self.edges) - 1

    def out(self, node: int) -> dict:
        return self.edges[node - self.first]

    def link(self, source: int, token, target: int) -> int:
        token_id = token if isinstance(token, int) else self.tokenizer.ids[token]
        if self.edges[source - self.first].setdefault(token_id, target) != target:
            raise ValueError(f"grammar is not deterministic at node {source}, token {token!r}")
        return target

    def step(self, source: int, token) -> int:
        """Follow ``token`` from ``source``, adding a fresh node if there is no edge yet."""
        token_id = token if isinstance(token, int) else self.tokenizer.ids[token]
        if token_id not in self.out(source):
            self.out(source)[token_id] = self.node()
        return self.out(source)[token_id]

    def names(self, names, then: str, target: int) -> int:
        """A trie of the spellable names; each complete name continues with ``then`` to ``target``."""
        spelled = (spell(self.tokenizer, name) for name in names)
        return self.trie([ids for ids in spelled if ids is not None], then, target)

    def literals(self, literals, then: str, target: int) -> int:
        """A trie of number literals ("-90", "1.5"), one token per character."""
        return self.trie([tuple(self.tokenizer.ids[c] for c in literal) for literal in literals], then, target)

    def trie(self, sequences, then: str, target: int) -> int:
        """A trie of token-id sequences; each complete one continues with ``then`` to ``target``."""
        root = self.node()
        edges, first, tokenizer = self.edges, self.first, self.tokenizer  # the loop below is step() and link()
        then_id = tokenizer.ids[then]
        for spelled in sequences:
            node = root
            for token_id in spelled:
                out = edges[node - first]
                node = out.get(token_id)
                if node is None:
                    edges.append({})
                    node = out[token_id] = first + len(edges) - 1
            out = edges[node - first]
            if out.setdefault(then_id, target) != target:
                raise ValueError(f"grammar is not deterministic at node {node}, token {then!r}")
        return root

    def slots(self, count: int, then: str, target: int) -> int:
        choose, chosen = self.node(), self.node()
        for slot in range(count):
            self.link(choose, SLOT_TOKENS[slot], chosen)
        self.link(chosen, then, target)
        return choose

    def numbers(self, then: str, target: int) -> tuple:
        """1-4 integer digits (no leading zero), optional ``.`` and 1-3 decimals, then ``then``.

        Returns the entries (signed, unsigned); the signed one also takes a leading ``-``."""
        fraction = [self.node() for _ in range(MAX_DECIMALS + 1)]  # fraction[k]: k decimals written
        for k in range(MAX_DECIMALS):
            for digit in DIGITS:
                self.link(fraction[k], digit, fraction[k + 1])
        for k in range(1, MAX_DECIMALS + 1):
            self.link(fraction[k], then, target)
        integer = [self.node() for _ in range(MAX_INTEGER_DIGITS + 1)]  # integer[k]: k digits written
        for k in range(1, MAX_INTEGER_DIGITS):
            for digit in DIGITS:
                self.link(integer[k], digit, integer[k + 1])
        for k in range(1, MAX_INTEGER_DIGITS + 1):
            self.link(integer[k], ".", fraction[0])
            self.link(integer[k], then, target)
        zero = self.node()
        self.link(zero, ".", fraction[0])
        self.link(zero, then, target)
        unsigned = self.node()
        self.link(unsigned, "0", zero)
        for digit in DIGITS[1:]:
            self.link(unsigned, digit, integer[1])
        signed = self.node()
        self.out(signed).update(self.out(unsigned))
        self.link(signed, "-", unsigned)
        return signed, unsigned


@functools.lru_cache(maxsize=64)
def build_grammar(tokenizer: Tokenizer, refs: GrammarRefs) -> PlanGrammar:
    """The grammar for these references (cached: a repeated query reuses its automaton).

    Everything but the said labels depends on the scene and the map only, so that skeleton is cached on its own
    and each utterance adds just its label trie."""
    skeleton = _skeleton(tokenizer, replace(refs, not_found_labels=()))
    return skeleton.with_labels(tokenizer, refs.not_found_labels)


@functools.lru_cache(maxsize=64)
def _skeleton(tokenizer: Tokenizer, refs: GrammarRefs) -> PlanGrammar:
    b = _Builder(tokenizer)
    final = 0
    after_step, after_last = b.node(), b.node()  # after a step that may be followed / must end the plan
    first, later = b.node(), b.node()  # the first step (clarify allowed) / a step after "; "
    b.link(after_step, SEPARATOR, later)
    b.link(after_step, EOS, final)
    b.link(after_last, EOS, final)

    obj_then_close = b.slots(refs.slots, ")", after_step)  # navigate(obj:X) / pick(obj:X) / place(.., obj:X)
    place_then_close = b.names(refs.places, ")", after_step)
    person_then_close = b.names(refs.people, ")", after_step)
    person_then_end = b.names(refs.people, ")", after_last)

    navigate = b.node()
    b.link(navigate, "obj:", obj_then_close)
    b.link(navigate, "place:", place_then_close)
    b.link(navigate, "person:", person_then_close)
    pick = b.node()
    b.link(pick, "obj:", obj_then_close)
    place_target = b.node()
    b.link(place_target, "obj:", obj_then_close)
    b.link(place_target, "place:", place_then_close)
    place = b.node()
    b.link(place, "obj:", b.slots(refs.slots, ", ", place_target))
    handover_person = b.node()
    b.link(handover_person, "person:", person_then_close)
    handover = b.node()
    b.link(handover, "obj:", b.slots(refs.slots, ", ", handover_person))
    follow = b.node()
    b.link(follow, "person:", person_then_end)
    if refs.numbers is None:
        rotate, wait = b.numbers(")", after_step)  # a wait is never negative
    else:
        signed = {*refs.numbers, *(f"-{n}" for n in refs.numbers), *UNSAID_ROTATIONS}
        rotate, wait = b.literals(sorted(signed), ")", after_step), b.literals(refs.numbers, ")", after_step)

    for start in (first, later):
        for token, target in (
            ("navigate(", navigate), ("pick(", pick), ("place(", place), ("handover(", handover),
            ("rotate(", rotate), ("wait(", wait), ("follow(", follow), ("stop()", after_last),
        ):
            b.link(start, token, target)
    clarify = _clarify(b, refs, after_last)
    b.link(first, "clarify(", clarify)
    return PlanGrammar(b.edges, first, tokenizer.ids[SEPARATOR], clarify=clarify, after_last=after_last)


def _clarify(b: _Builder, refs: GrammarRefs, after_last: int) -> int:
    """clarify(unsupported) and clarify(ambiguous:LABEL); with_labels adds not_found:LABEL."""
    clarify, close = b.node(), b.node()
    b.link(close, ")", after_last)
    b.link(clarify, "unsupported", close)
    b.link(clarify, "ambiguous:", b.names(refs.ambiguous_labels, ")", after_last))
    return clarify


def _tree_distances(edges: list, first: int, known: list) -> list:
    """Distances to final for the nodes of a trie numbered from ``first`` (children after parents), whose other
    edges lead to nodes with ``known`` distances."""
    dist = [_UNREACHABLE] * len(edges)
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
    dist = [_UNREACHABLE] * len(edges)
    dist[0] = 0
    queue = deque([0])
    while queue:
        node = queue.popleft()
        for source in incoming[node]:
            if dist[source] == _UNREACHABLE:
                dist[source] = dist[node] + 1
                queue.append(source)
    return dist
