"""The action language as a grammar for an inference server, derived from ``planner/syntax.py``.

The step forms, separators, reference kinds, clarify reasons and number limits of ``syntax.py`` (the same tables
the engine's decoding automaton reads) become one small grammar tree, rendered three ways:

    gbnf(scene)         llama.cpp's GBNF (``grammar`` of a llama.cpp or llama-cpp-python request)
    regex(scene)        a full-match regular expression (vLLM's ``guided_regex``, a JSON schema ``pattern``)
    json_schema(scene)  {"plan": "<plan text>"}, the plan a string matching ``regex`` (OpenAI ``json_schema``)

With a ``scene``, references are limited to what it names (its object ids, the map's places, the speaker and
the people in view), as the engine limits them; without one, to any name of ``NAME_PATTERN``. The structure
follows the parser's rules: ``clarify(...)`` is the whole plan, ``stop()`` and ``follow(...)`` end it; numbers
are canonical (``MAX_INTEGER_DIGITS`` digits, no leading zero, up to ``MAX_DECIMALS`` decimals), a duration is
never negative. Whatever a server returns is still parsed and verified: the grammar only keeps it in shape.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .syntax import (
    ANGLE,
    ARG_SEPARATOR,
    CLARIFY_REASONS,
    CLOSE,
    DECIMAL_POINT,
    DURATION,
    LABELLED_REASONS,
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

NAME_CHARS = "A-Za-z0-9_.-"  # the characters of syntax.NAME_PATTERN as a class body (a last "-" is literal)
PLAN_FIELD = "plan"  # the JSON schema's one property


# ---- the grammar tree ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Chars:
    body: str  # a character class body: "0-9", NAME_CHARS
    many: bool = False  # one or more


@dataclass(frozen=True)
class Seq:
    items: tuple


@dataclass(frozen=True)
class Alt:
    items: tuple


@dataclass(frozen=True)
class Opt:
    item: object


@dataclass(frozen=True)
class Star:
    item: object


@dataclass(frozen=True)
class Rule:
    name: str


def _choice(names) -> object:
    """Any of the literal ``names`` (sorted, deduplicated), or any name when ``names`` is None."""
    if names is None:
        return Chars(NAME_CHARS, many=True)
    return Alt(tuple(Lit(name) for name in sorted(set(names))))


def scene_names(scene) -> dict:
    """{reference kind: the names a plan may use} of a ``planner.scene.Scene``; None: any name."""
    if scene is None:
        return {"obj": None, "place": None, "person": None}
    people = {SPEAKER, *(person.id for person in scene.people)}
    return {"obj": [obj.id for obj in scene.objects], "place": [place.name for place in scene.places],
            "person": sorted(people)}


def _number(signed: bool) -> Seq:
    digits = Alt((Lit("0"), Seq((Chars("1-9"), *[Opt(Chars("0-9"))] * (MAX_INTEGER_DIGITS - 1)))))
    decimals = Opt(Seq((Lit(DECIMAL_POINT), Chars("0-9"), *[Opt(Chars("0-9"))] * (MAX_DECIMALS - 1))))
    return Seq(((Opt(Lit(MINUS)),) if signed else ()) + (digits, decimals))


def _reason() -> Alt:
    return Alt(tuple(Seq((Lit(reason_text(reason)), Rule("label"))) if reason in LABELLED_REASONS
                     else Lit(reason_text(reason)) for reason in CLARIFY_REASONS))


def grammar_rules(scene=None) -> dict:
    """{rule name: tree} of the action language over ``scene``'s names; ``root`` is a whole plan."""
    names = scene_names(scene)
    rules = {f"{kind}-ref": Seq((Lit(ref_prefix(kind)), _choice(found)))
             for kind, found in names.items() if found is None or found}
    rules |= {"angle": _number(signed=True), "duration": _number(signed=False), "reason": _reason(),
              "label": Chars(NAME_CHARS, many=True)}
    steps = {"step": [], "last-step": [], "clarify-step": []}
    for form in STEP_FORMS:
        args = [_argument(kind, rules) for kind in form.args]
        if any(arg is None for arg in args):
            continue  # a reference kind the scene has none of: no such step can be written
        body = [Lit(form.opener)]
        for index, arg in enumerate(args):
            body += ([Lit(ARG_SEPARATOR)] if index else []) + [arg]
        body += [Lit(CLOSE)] if form.args else []
        group = "clarify-step" if form.whole_plan else "last-step" if form.ends_plan else "step"
        steps[group].append(Seq(tuple(body)))
    rules |= {name: Alt(tuple(forms)) for name, forms in steps.items() if forms}
    ending = tuple(Rule(name) for name in ("step", "last-step") if name in rules)
    sequence = Seq((Star(Seq((Rule("step"), Lit(SEPARATOR)))), Alt(ending))) if "step" in rules else Alt(ending)
    rules["root"] = Alt((Rule("clarify-step"), sequence))
    return rules


def _argument(kind, rules: dict):
    if kind == ANGLE:
        return Rule("angle")
    if kind == DURATION:
        return Rule("duration")
    if kind == REASON:
        return Rule("reason")
    refs = tuple(Rule(f"{ref}-ref") for ref in kind if f"{ref}-ref" in rules)
    return None if not refs else refs[0] if len(refs) == 1 else Alt(refs)


# ---- renderings ---------------------------------------------------------------------------------------------

def gbnf(scene=None) -> str:
    """The GBNF grammar of a whole plan (llama.cpp); rule ``root`` first."""
    rules = grammar_rules(scene)
    order = ["root", *(name for name in rules if name != "root")]
    return "".join(f"{name} ::= {_gbnf(rules[name])}\n" for name in order)


def _gbnf(node) -> str:
    if isinstance(node, Lit):
        return json.dumps(node.text)  # a GBNF string literal escapes as JSON does for these characters
    if isinstance(node, Chars):
        return f"[{node.body}]" + ("+" if node.many else "")
    if isinstance(node, Rule):
        return node.name
    if isinstance(node, Seq):
        return " ".join(_gbnf(item) for item in node.items)
    if isinstance(node, Alt):
        return "(" + " | ".join(_gbnf(item) for item in node.items) + ")"
    if isinstance(node, Opt):
        return f"({_gbnf(node.item)})?"
    if isinstance(node, Star):
        return f"({_gbnf(node.item)})*"
    raise TypeError(f"not a grammar node: {node!r}")


def regex(scene=None) -> str:
    """A regular expression that matches exactly the plans of the grammar (use it with a full match)."""
    rules = grammar_rules(scene)
    return _regex(rules["root"], rules)


def _regex(node, rules: dict) -> str:
    if isinstance(node, Lit):
        return re.escape(node.text)
    if isinstance(node, Chars):
        return f"[{node.body}]" + ("+" if node.many else "")
    if isinstance(node, Rule):
        return _regex(rules[node.name], rules)  # the grammar is not recursive: rules inline
    if isinstance(node, Seq):
        return "".join(_regex(item, rules) for item in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(_regex(item, rules) for item in node.items) + ")"
    if isinstance(node, Opt):
        return f"(?:{_regex(node.item, rules)})?"
    if isinstance(node, Star):
        return f"(?:{_regex(node.item, rules)})*"
    raise TypeError(f"not a grammar node: {node!r}")


def json_schema(scene=None) -> dict:
    """A JSON schema of ``{"plan": "<plan text>"}`` whose string matches ``regex(scene)``."""
    return {"type": "object", "additionalProperties": False, "required": [PLAN_FIELD],
            "properties": {PLAN_FIELD: {"type": "string", "pattern": f"^{regex(scene)}$"}}}
