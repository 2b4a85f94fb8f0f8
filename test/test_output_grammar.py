"""planner/output_grammar.py: the action language for an inference server (GBNF, regex, JSON schema), derived
from planner/syntax.py. The regex is checked against the parser on corpus plans and on near misses; the GBNF
is the same tree (the serve tests send it to a real llama.cpp server)."""

import json
import re

import pytest

from wafer_reasoner.planner import output_grammar, syntax
from wafer_reasoner.planner.language import PlanSyntaxError, format_plan, parse_plan
from wafer_reasoner.planner.scene import NamedPlace, Person, Scene, SceneObject
from wafer_reasoner.training import speech_corpus

SCENE = Scene(objects=(SceneObject("cup_1", "cup", "red", 1.0, 2.0), SceneObject("table-2", "table", "", 2.0, 0.0)),
              people=(Person("user", 0.0, 0.0), Person("dave", 1.0, 1.0)),
              places=(NamedPlace("kitchen", 1.0, 1.0),))


def full(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text) is not None


def test_every_plan_of_the_held_out_set_matches_the_grammar_of_its_scene():
    examples = speech_corpus.heldout_examples(20)
    assert len(examples) >= 100
    for example in examples:
        assert full(output_grammar.regex(example["scene"]), example["plan"]), example["plan"]
        assert full(output_grammar.regex(), example["plan"]), example["plan"]


@pytest.mark.parametrize("plan", [
    "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)",
    "place(obj:cup_1, obj:table-2)", "navigate(place:kitchen); follow(person:dave)", "rotate(-90.5)",
    "wait(0.125)", "wait(9999)", "stop()", "clarify(ambiguous:cup)", "clarify(not_found:front_door)",
    "clarify(unsupported)", "rotate(0)",
])
def test_plans_over_the_scene_match_and_parse(plan):
    assert full(output_grammar.regex(SCENE), plan)
    assert format_plan(parse_plan(plan)) == plan  # canonical: what the grammar allows, the parser reads back


@pytest.mark.parametrize("text", [
    "navigate(obj:cup_9)",  # an id the scene does not have
    "navigate(place:office)", "handover(obj:cup_1, person:bob)",
    "stop(); navigate(place:kitchen)",  # stop ends a plan
    "follow(person:user); wait(1)",  # so does follow
    "clarify(unsupported); stop()",  # clarify is the whole plan
    "clarify(unsupported:cup)", "clarify(not_found:)",
    "wait(-3)",  # a duration is never negative
    "rotate(01)", "rotate(12345)", "rotate(1.2345)", "rotate(1e3)", "rotate(nan)",
    "navigate(obj:cup_1);pick(obj:cup_1)",  # canonical separators only
    "navigate(obj:cup_1) ", "", "Plan: stop()", "pick(place:kitchen)",
])
def test_near_misses_do_not_match(text):
    assert not full(output_grammar.regex(SCENE), text)


def test_what_the_grammar_refuses_without_a_scene_the_parser_refuses_too():
    for text in ("clarify(unsupported); stop()", "stop(); navigate(place:kitchen)", "navigate(thing:x)",
                 "pick(obj:cup 1)", "wait(five)"):
        assert not full(output_grammar.regex(), text)
        with pytest.raises(PlanSyntaxError):
            steps = parse_plan(text)
            if any(step.__class__.__name__ == "Stop" for step in steps[:-1]):
                raise PlanSyntaxError("stop ends a plan (the verifier's rule)")


def test_every_step_form_of_the_syntax_is_in_the_gbnf():
    grammar = output_grammar.gbnf()
    assert grammar.startswith("root ::= ")
    for form in syntax.STEP_FORMS:
        assert json.dumps(form.opener) in grammar, form.name
    for reason in syntax.CLARIFY_REASONS:
        assert json.dumps(syntax.reason_text(reason)) in grammar
    assert json.dumps(syntax.SEPARATOR) in grammar and json.dumps(syntax.ARG_SEPARATOR) in grammar


def test_gbnf_rules_are_all_defined_and_referenced():
    grammar = output_grammar.gbnf(SCENE)
    defined = re.findall(r"^([a-z-]+) ::= ", grammar, flags=re.M)
    bodies = re.sub(r'"(?:[^"\\]|\\.)*"', '""', grammar)  # names inside literals do not count
    used = set(re.findall(r"(?<![\w\"-])([a-z]+(?:-[a-z]+)*)(?![\w\"(:-])", bodies.split("::=", 1)[1]))
    assert len(defined) == len(set(defined))
    assert {name for name in used if name in defined} <= set(defined)
    assert '"cup_1"' in grammar and '"table-2"' in grammar and '"kitchen"' in grammar and '"dave"' in grammar


def test_a_scene_without_objects_or_places_leaves_out_the_steps_it_cannot_have():
    empty = Scene()
    grammar = output_grammar.gbnf(empty)
    assert '"pick("' not in grammar and '"place("' not in grammar and '"handover("' not in grammar
    assert "obj-ref" not in grammar and "place-ref" not in grammar
    pattern = output_grammar.regex(empty)
    assert full(pattern, "navigate(person:user); rotate(90)") and full(pattern, "clarify(not_found:cup)")
    assert not full(pattern, "pick(obj:cup_1)")


def test_the_json_schema_carries_the_regex_as_the_plan_pattern():
    schema = output_grammar.json_schema(SCENE)
    assert schema["required"] == ["plan"] and schema["additionalProperties"] is False
    pattern = schema["properties"]["plan"]["pattern"]
    assert pattern == f"^{output_grammar.regex(SCENE)}$"
    assert re.search(pattern, "navigate(place:kitchen)") and not re.search(pattern, "navigate(place:office)")
