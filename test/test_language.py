"""The action language: canonical round trips and clear rejections."""

import math

import pytest

from wafer_reasoner.planner.language import (
    Clarify,
    Handover,
    Navigate,
    Pick,
    PlaceOn,
    PlanSyntaxError,
    Ref,
    Rotate,
    Stop,
    Wait,
    format_plan,
    is_clarification,
    parse_plan,
)

BRING = "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"


def test_bring_plan_parses_into_typed_steps():
    steps = parse_plan(BRING)
    assert steps == (
        Navigate(Ref("obj", "cup_1")),
        Pick(Ref("obj", "cup_1")),
        Navigate(Ref("person", "user")),
        Handover(Ref("obj", "cup_1"), Ref("person", "user")),
    )


@pytest.mark.parametrize(
    "text",
    [
        BRING,
        "navigate(place:kitchen)",
        "place(obj:cup_1, obj:table_2)",
        "place(obj:cup_1, place:living_room)",
        "rotate(-90)",
        "rotate(12.5)",
        "wait(5)",
        "stop()",
        "follow(person:user)",
        "clarify(not_found:stapler)",
        "clarify(ambiguous:cup)",
        "clarify(unsupported)",
    ],
)
def test_canonical_text_round_trips(text):
    assert format_plan(parse_plan(text)) == text


def test_spacing_is_normalised_to_canonical_form():
    assert format_plan(parse_plan("navigate( obj:cup_1 );pick(obj:cup_1)")) == "navigate(obj:cup_1); pick(obj:cup_1)"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("navigate(obj:cup_1);", "empty"),
        ("fly(place:moon)", "unknown action"),
        ("pick(place:kitchen)", "must be one of obj"),
        ("handover(obj:cup_1, obj:cup_2)", "must be one of person"),
        ("navigate(cup_1)", "KIND:NAME"),
        ("rotate(nan)", "plain number"),
        ("rotate(1e309)", "plain number"),
        ("wait()", "takes 1 argument"),
        ("stop(now)", "takes 0 argument"),
        ("clarify(confused:cup)", "clarify reason"),
        ("clarify(unsupported:cup)", "no label"),
        ("navigate(obj:cup_1); clarify(ambiguous:cup)", "whole plan"),
        ("navigate(obj:cup 1)", "bad reference name"),
        ("x" * 5000, "limit"),
    ],
)
def test_bad_plans_are_rejected_with_a_reason(text, reason):
    with pytest.raises(PlanSyntaxError, match=reason):
        parse_plan(text)


def test_non_text_is_rejected():
    with pytest.raises(PlanSyntaxError):
        parse_plan(None)


def test_numbers_print_canonically_and_reject_non_finite():
    assert format_plan([Rotate(90.0), Wait(0.5)]) == "rotate(90); wait(0.5)"
    with pytest.raises(PlanSyntaxError):
        format_plan([Rotate(math.inf)])


def test_clarification_detection():
    assert is_clarification(parse_plan("clarify(ambiguous:cup)"))
    assert not is_clarification((Stop(),))
    assert format_plan([Clarify("not_found", "red_cup")]) == "clarify(not_found:red_cup)"
    assert format_plan([PlaceOn(Ref("obj", "a"), Ref("place", "dock"))]) == "place(obj:a, place:dock)"
