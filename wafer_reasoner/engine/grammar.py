"""Constrained decoding: the action language as a token automaton, built per query from what the scene holds.

The automaton (``engine/automaton.py``) is derived from ``planner/syntax.py``'s step forms: each form's opener
token, then each argument's sub-automaton, ``, `` between arguments and ``)`` after the last. Every path from
``start`` to ``final`` is the token form of a plan that ``planner.language.parse_plan`` accepts, and only
references that exist can be written:

- ``obj:`` takes the slot tokens of the objects in this prompt (``<o0>`` .. ``<o{n-1}>``), nothing else;
- ``place:`` takes the slot tokens of the places the utterance mentioned (``<p0>`` ..), nothing else;
- ``person:`` takes ``user``: only the speaker is addressable by speech (the verifier checks they are in view);
- ``clarify`` is only ever the whole plan; ``clarify(ambiguous:L)`` and ``clarify(not_found:L)`` take the labels
  ``understanding/refusals.py`` allows;
- ``stop()`` and ``follow(...)`` end the plan (the verifier would refuse anything after them);
- numbers: only the numbers that were said (a rotate also +-90 and 180, which "turn left" and "turn around" ask
  for without a number), an angle with an optional ``-``, a duration never negative.

Nodes that cannot reach ``final`` (an empty place list, no objects in view) are pruned, so the decoder never walks
into a dead end.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from wafer_reasoner.engine.automaton import PlanGrammar
from wafer_reasoner.engine.prompt import Prompt
from wafer_reasoner.engine.tokenizer import DIGITS, EOS, PLACE_SLOT_TOKENS, SLOT_TOKENS, Tokenizer
from wafer_reasoner.planner.syntax import (
    ANGLE,
    ARG_SEPARATOR,
    CLOSE,
    DECIMAL_POINT,
    DURATION,
    MAX_DECIMALS,
    MAX_INTEGER_DIGITS,
    MINUS,
    REASON,
    SEPARATOR,
    SPEAKER,
    STEP_FORMS,
    reason_text,
    ref_prefix,
)
from wafer_reasoner.understanding.refusals import refusal_labels
from wafer_reasoner.understanding.words import plannable_numbers

# a rotation a speaker may ask for without saying a number ("turn around", "turn left")
UNSAID_ROTATIONS = ("180", "90", "-90")


@dataclass(frozen=True)
class GrammarRefs:
    """What a plan for this query may refer to (names as plan text, e.g. ``living_room``)."""

    slots: int  # objects in the prompt: slot tokens <o0> .. <o{slots-1}>
    place_slots: int = 0  # places in the prompt: slot tokens <p0> .. <p{place_slots-1}>
    # slots a plan may not write: objects and places said only as a locator's anchor ("the mug from the kitchen",
    # "the cup near the plate": where the thing is, never a step; docs/action_language.md section 2.4)
    anchor_slots: frozenset = frozenset()
    anchor_place_slots: frozenset = frozenset()
    people: tuple = (SPEAKER,)  # person ids
    not_found_labels: tuple = ()  # labels clarify(not_found:...) may name
    ambiguous_labels: tuple = ()  # labels clarify(ambiguous:...) may name
    numbers: tuple | None = None  # literals rotate(...) / wait(...) may take ("273", "1.5"); None: any number
    # a mention the plan must act on names nothing or several things: the plan is a clarify (section 3, rules 5
    # and 7; 2.3: a clause that needs a clarify makes the whole plan that clarify)
    clarify_only: bool = False


def refs_for_query(prompt: Prompt, scene, utterance: str) -> GrammarRefs:
    """The references a plan for (scene, utterance) may use, given the prompt built from them."""
    refusals = refusal_labels(scene, prompt.heard, prompt.grounding)
    mentions = _anchor_mentions(prompt)
    anchors = _anchor_slots(prompt, mentions)
    return GrammarRefs(
        clarify_only=_unresolved(prompt, mentions[0]),
        numbers=plannable_numbers(prompt.heard.said, utterance),
        slots=len(prompt.slot_ids),
        place_slots=len(prompt.place_names),
        anchor_slots=anchors[0],
        anchor_place_slots=anchors[1],
        not_found_labels=refusals.not_found,
        ambiguous_labels=refusals.ambiguous,
    )


def _anchor_mentions(prompt: Prompt) -> tuple:
    """(object mention indices, place mention indices) that are a locator's anchor; none without grounding."""
    if prompt.grounding is None or prompt.heard is None:
        return frozenset(), frozenset()
    return prompt.grounding.anchor_mentions(prompt.heard.places)


def _anchor_slots(prompt: Prompt, mentions: tuple) -> tuple:
    """(object slots, place slots) that only a locator's anchor refers to ("the tip box next to the centrifuge",
    "the table in the kitchen"): never a plan's argument. The held object's slot always stays. ``mentions``:
    _anchor_mentions(prompt)."""
    if prompt.grounding is None or prompt.heard is None:
        return frozenset(), frozenset()
    object_anchors, place_anchors = mentions
    used_objects = {thing.id for k, (_, thing) in enumerate(prompt.grounding.objects)
                    if k not in object_anchors and not isinstance(thing, str)}
    held = prompt.tokens[prompt.tokens.index("<hold>") + 1]
    if held in SLOT_TOKENS:
        used_objects.add(prompt.slot_ids[SLOT_TOKENS.index(held)])
    used_places = {name for k, (name, _, _) in enumerate(prompt.heard.places) if k not in place_anchors}
    return (frozenset(slot for slot, name in enumerate(prompt.slot_ids) if name not in used_objects),
            frozenset(slot for slot, name in enumerate(prompt.place_names) if name not in used_places))


def _unresolved(prompt: Prompt, object_anchors) -> bool:
    """Whether an object mention that is no locator's anchor means nothing or several things ("the gown from the
    linen cupboard" with no gown near it, "the drill" with two in view, "put it down" with nothing it can stand
    for). An anchor's own ambiguity decides nothing: "the cup on the table" with two tables, one under a cup."""
    if prompt.grounding is None:
        return False
    return any(isinstance(meaning, str) for k, (_, meaning) in enumerate(prompt.grounding.objects)
               if k not in object_anchors)


def grammar_for_query(tokenizer: Tokenizer, prompt: Prompt, scene, utterance: str) -> PlanGrammar:
    return build_grammar(tokenizer, refs_for_query(prompt, scene, utterance))


@functools.lru_cache(maxsize=8192)
def spell(tokenizer: Tokenizer, name: str):
    """Token ids that write ``name`` in a plan (words joined by ``_``, unknown words letter by letter), or None
    when the vocabulary cannot."""
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
        edges, first, tokenizer = self.edges, self.first, self.tokenizer  # the loop below is node() and link()
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

    def slots(self, count: int, then: str, target: int, tokens: tuple = SLOT_TOKENS, skip=frozenset()) -> int:
        choose, chosen = self.node(), self.node()
        for slot in range(count):
            if slot not in skip:
                self.link(choose, tokens[slot], chosen)
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
            self.link(integer[k], DECIMAL_POINT, fraction[0])
            self.link(integer[k], then, target)
        zero = self.node()
        self.link(zero, DECIMAL_POINT, fraction[0])
        self.link(zero, then, target)
        unsigned = self.node()
        self.link(unsigned, "0", zero)
        for digit in DIGITS[1:]:
            self.link(unsigned, digit, integer[1])
        signed = self.node()
        self.out(signed).update(self.out(unsigned))
        self.link(signed, MINUS, unsigned)
        return signed, unsigned


@functools.lru_cache(maxsize=64)
def build_grammar(tokenizer: Tokenizer, refs: GrammarRefs) -> PlanGrammar:
    """The grammar for these references (cached: a repeated query reuses its automaton).

    Everything but the said labels depends on the scene and the map only, so that skeleton is cached on its own
    and each utterance adds just its label trie."""
    skeleton = _skeleton(tokenizer, replace(refs, not_found_labels=()))
    b = _Builder(tokenizer, first_node=len(skeleton))
    root = b.names(refs.not_found_labels, CLOSE, skeleton.after_last)
    return skeleton.with_branch(b.edges, root, tokenizer.ids[reason_text("not_found")])


class _Arguments:
    """The sub-automata of argument kinds, each made once per (kind, what follows, where it leads)."""

    def __init__(self, b: _Builder, refs: GrammarRefs):
        self.b, self.refs = b, refs
        self._made = {}
        self.clarify = -1  # the clarify reason node, where not_found: is attached

    def entry(self, kind, then: str, target: int) -> int:
        key = (kind, then, target)
        if key not in self._made:
            self._made[key] = self._make(kind, then, target)
        return self._made[key]

    def _make(self, kind, then: str, target: int) -> int:
        b = self.b
        if kind in (ANGLE, DURATION):
            return self._number(kind, then, target)
        if kind == REASON:
            return self._reason(then, target)
        if isinstance(kind, str):  # one reference kind: its names
            return self._names(kind, then, target)
        choice = b.node()  # a tuple of reference kinds: "obj:" / "place:" / "person:" and then the names
        for ref_kind in kind:
            b.link(choice, ref_prefix(ref_kind), self.entry(ref_kind, then, target))
        return choice

    def _reason(self, then: str, target: int) -> int:
        """clarify(unsupported) and clarify(ambiguous:LABEL); build_grammar attaches not_found:LABEL here."""
        b = self.b
        self.clarify, close = b.node(), b.node()
        b.link(close, then, target)
        b.link(self.clarify, reason_text("unsupported"), close)
        b.link(self.clarify, reason_text("ambiguous"), b.names(self.refs.ambiguous_labels, then, target))
        return self.clarify

    def _number(self, kind, then: str, target: int) -> int:
        b, numbers = self.b, self.refs.numbers
        if numbers is None:  # any number
            key = ("any number", then, target)
            if key not in self._made:
                self._made[key] = b.numbers(then, target)
            signed, unsigned = self._made[key]
            return signed if kind == ANGLE else unsigned
        if kind == ANGLE:
            return b.literals(sorted({*numbers, *(f"{MINUS}{n}" for n in numbers), *UNSAID_ROTATIONS}), then, target)
        return b.literals(numbers, then, target)

    def _names(self, ref_kind: str, then: str, target: int) -> int:
        if ref_kind == "obj":
            return self.b.slots(self.refs.slots, then, target, skip=self.refs.anchor_slots)
        if ref_kind == "place":
            return self.b.slots(self.refs.place_slots, then, target, PLACE_SLOT_TOKENS, self.refs.anchor_place_slots)
        return self.b.names(self.refs.people, then, target)


@functools.lru_cache(maxsize=64)
def _skeleton(tokenizer: Tokenizer, refs: GrammarRefs) -> PlanGrammar:
    b = _Builder(tokenizer)
    final = 0
    after_step, after_last = b.node(), b.node()  # after a step that may be followed / must end the plan
    first, later = b.node(), b.node()  # the first step (a whole-plan step allowed) / a step after "; "
    b.link(after_step, SEPARATOR, later)
    b.link(after_step, EOS, final)
    b.link(after_last, EOS, final)
    arguments = _Arguments(b, refs)
    for form in STEP_FORMS:
        end = after_last if form.ends_plan or form.whole_plan else after_step
        entry, then = end, CLOSE
        for kind in reversed(form.args):  # built from the last argument back
            entry, then = arguments.entry(kind, then, entry), ARG_SEPARATOR
        if refs.clarify_only and not form.whole_plan:
            continue
        for start in (first,) if form.whole_plan else (first, later):
            b.link(start, form.opener, entry)
    return PlanGrammar(b.edges, first, tokenizer.ids[SEPARATOR], clarify=arguments.clarify, after_last=after_last)
