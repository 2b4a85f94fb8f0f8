"""The verifier and the safety limits: every rule has a passing and a failing case."""

import math

import pytest

from wafer_reasoner.planner.language import (
    Clarify,
    Follow,
    Navigate,
    Pick,
    Ref,
    Rotate,
    Stop,
    Wait,
    parse_plan,
)
from wafer_reasoner.planner.limits import LimitsError, SafetyLimits
from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject
from wafer_reasoner.planner.verifier import Verdict, verify_plan

LIMITS = SafetyLimits()  # workspace +-10 m, standoff 0.6 m, reach 0.9 m, scene age 2 s
NOW_S = 100.0


def make_scene(**overrides) -> Scene:
    data = {
        "objects": (
            SceneObject("cup_1", "cup", "red", 2.0, 0.0, 0.8),
            SceneObject("cup_2", "cup", "blue", 2.0, 1.0, 0.8),
            SceneObject("table_1", "table", "", 4.0, 0.0, 0.7),
        ),
        "people": (Person("user", -1.0, 0.0),),
        "places": (NamedPlace("kitchen", 5.0, 5.0, 0.0),),
        "robot": RobotPose(0.0, 0.0, 0.0),
        "stamp_s": NOW_S - 0.5,
    }
    data.update(overrides)
    return Scene(**data)


def verify(text_or_steps, scene=None, limits=LIMITS, now_s=NOW_S) -> Verdict:
    steps = parse_plan(text_or_steps) if isinstance(text_or_steps, str) else tuple(text_or_steps)
    return verify_plan(steps, scene or make_scene(), limits, now_s=now_s)


def assert_rejected_with(verdict: Verdict, fragment: str) -> None:
    assert not verdict.ok
    assert any(fragment in reason for reason in verdict.reasons), verdict.reasons


FETCH = "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"


# -- limits --------------------------------------------------------------------------------------


def test_default_limits_are_valid_and_from_mapping_overrides_some():
    limits = SafetyLimits.from_mapping({"max_wait_s": 5, "standoff_m": 0.5})
    assert limits.max_wait_s == 5
    assert limits.standoff_m == 0.5
    assert limits.max_reach_m == SafetyLimits().max_reach_m


@pytest.mark.parametrize(
    "mapping, fragment",
    [
        ({"max_wait": 5}, "unknown safety limit"),
        ({"max_wait_s": True}, "must be a number"),
        ({"max_wait_s": "5"}, "must be a number"),
        ({"max_linear_speed_mps": float("nan")}, "finite"),
        ({"max_angular_speed_radps": float("inf")}, "finite"),
        ({"workspace_min_x_m": 3.0, "workspace_max_x_m": 3.0}, "workspace_min_x_m"),
        ({"workspace_min_y_m": 1.0, "workspace_max_y_m": -1.0}, "workspace_min_y_m"),
        ({"max_linear_speed_mps": 0.0}, "positive"),
        ({"max_wait_s": -1.0}, "negative"),
        ({"standoff_m": 1.0, "max_reach_m": 0.8}, "must not exceed max_reach_m"),
    ],
)
def test_from_mapping_rejects_bad_limits(mapping, fragment):
    with pytest.raises(LimitsError, match=fragment):
        SafetyLimits.from_mapping(mapping)


def test_from_mapping_rejects_a_non_mapping():
    with pytest.raises(LimitsError, match="mapping"):
        SafetyLimits.from_mapping([("max_wait_s", 5)])


def test_workspace_contains_its_edges_and_rejects_nan():
    assert LIMITS.contains_xy(10.0, -10.0)
    assert not LIMITS.contains_xy(10.01, 0.0)
    assert not LIMITS.contains_xy(float("nan"), 0.0)


# -- plans that pass -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan",
    [
        FETCH,
        "navigate(obj:cup_1); pick(obj:cup_1)",
        "navigate(obj:cup_1); pick(obj:cup_1); navigate(obj:table_1); place(obj:cup_1, obj:table_1)",
        "navigate(obj:cup_1); pick(obj:cup_1); navigate(place:kitchen); place(obj:cup_1, place:kitchen)",
        "navigate(place:kitchen)",
        "rotate(90); wait(3)",
        "rotate(-360)",
        "follow(person:user)",
        "stop()",
        "wait(0)",
    ],
)
def test_valid_plans_pass(plan):
    verdict = verify(plan)
    assert verdict == Verdict(True, ())


def test_clarify_is_ok_even_with_stale_perception():
    assert verify("clarify(ambiguous:cup)", now_s=NOW_S + 1000).ok


# -- references ------------------------------------------------------------------------------------


def test_unknown_object_is_rejected_by_name():
    assert_rejected_with(verify("navigate(obj:stapler_1); pick(obj:stapler_1)"), "I can't see stapler 1.")


def test_unknown_object_is_reported_once_not_per_step():
    verdict = verify("navigate(obj:stapler_1); pick(obj:stapler_1)")
    assert verdict.reasons.count("I can't see stapler 1.") == 1


def test_handover_needs_the_speaker_in_view():
    scene = make_scene(people=())
    assert_rejected_with(verify(FETCH, scene), "I can't see you.")


def test_unknown_person_and_place_are_rejected():
    assert_rejected_with(verify("follow(person:bob)"), "I can't see person bob.")
    assert_rejected_with(verify("navigate(place:attic)"), "I don't know a place called attic.")


def test_held_object_need_not_be_visible():
    # perception often cannot see the object inside the gripper
    scene = make_scene(holding="mug_9")
    assert verify("navigate(person:user); handover(obj:mug_9, person:user)", scene).ok


# -- perception freshness --------------------------------------------------------------------------


def test_stale_scene_is_rejected_for_moving_plans():
    scene = make_scene(stamp_s=NOW_S - 2.5)
    assert_rejected_with(verify("rotate(90)", scene), "2.5 seconds old")
    assert_rejected_with(verify(FETCH, scene), "fresh view")


def test_scene_exactly_at_the_age_limit_passes():
    assert verify("rotate(90)", make_scene(stamp_s=NOW_S - LIMITS.max_scene_age_s)).ok


def test_scene_from_the_future_is_rejected():
    assert_rejected_with(verify("rotate(90)", make_scene(stamp_s=NOW_S + 10.0)), "in the future")


def test_nan_clock_is_rejected():
    assert_rejected_with(verify("rotate(90)", now_s=float("nan")), "not a valid number")


def test_stale_scene_does_not_block_stop_or_wait():
    scene = make_scene(stamp_s=0.0)
    assert verify("stop()", scene).ok
    assert verify("wait(2)", scene).ok


# -- numbers and caps ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_rotate_and_wait_are_rejected(value):
    assert_rejected_with(verify([Rotate(value)]), "turn angle is not a valid number")
    assert_rejected_with(verify([Wait(value)]), "waiting time is not a valid number")


def test_rotate_and_wait_caps():
    assert_rejected_with(verify("rotate(361)"), "Turning 361 degrees is more than my limit of 360.")
    assert_rejected_with(verify("rotate(-400)"), "Turning 400 degrees")
    assert_rejected_with(verify("wait(61)"), "Waiting 61 seconds is longer than my limit of 60.")
    assert_rejected_with(verify("wait(-1)"), "not a valid number of seconds")


def test_nan_object_position_is_rejected():
    scene = make_scene(objects=(SceneObject("cup_1", "cup", "red", float("nan"), 0.0, 0.8),))
    assert_rejected_with(verify("navigate(obj:cup_1); pick(obj:cup_1)", scene), "not a valid")


def test_nan_robot_pose_is_rejected():
    assert_rejected_with(verify("rotate(90)", make_scene(robot=RobotPose(0.0, float("nan"), 0.0))), "where I am")


# -- workspace -------------------------------------------------------------------------------------


def test_standoff_goal_outside_the_workspace_is_rejected():
    scene = make_scene(objects=(SceneObject("box_1", "box", "", 12.0, 0.0, 0.2),))
    assert_rejected_with(verify("navigate(obj:box_1)", scene), "outside my workspace")


def test_object_just_outside_is_fine_when_the_standoff_goal_is_inside():
    # the check is on what is published (the base goal), not on where the object is
    scene = make_scene(objects=(SceneObject("box_1", "box", "", 10.3, 0.0, 0.2),))
    assert verify("navigate(obj:box_1); pick(obj:box_1)", scene).ok


def test_named_place_outside_the_workspace_is_rejected():
    scene = make_scene(places=(NamedPlace("garden", 0.0, -15.0, 0.0),))
    assert_rejected_with(verify("navigate(place:garden)", scene), "Going to the garden would take me outside")


def test_follow_goal_outside_the_workspace_is_rejected():
    scene = make_scene(people=(Person("user", 0.0, 20.0),))
    assert_rejected_with(verify("follow(person:user)", scene), "outside my workspace")


# -- holding and reach (simulated through the plan) ------------------------------------------------


def test_place_without_holding_is_rejected():
    assert_rejected_with(
        verify("navigate(obj:table_1); place(obj:cup_1, obj:table_1)"),
        "I'm not holding the red cup, so I can't put it down; I'd have to pick it up first.",
    )


def test_handover_without_holding_is_rejected():
    assert_rejected_with(verify("navigate(person:user); handover(obj:cup_1, person:user)"), "not holding the red cup")


def test_second_handover_of_the_same_object_is_rejected():
    verdict = verify(FETCH + "; handover(obj:cup_1, person:user)")
    assert_rejected_with(verdict, "not holding the red cup")


def test_picking_the_held_object_again_is_redundant_but_ok():
    scene = make_scene(holding="cup_1")
    assert verify(
        "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)", scene
    ).ok


def test_picking_with_a_full_gripper_is_rejected():
    scene = make_scene(holding="cup_2")
    assert_rejected_with(
        verify("navigate(obj:cup_1); pick(obj:cup_1)", scene),
        "I'm already holding the blue cup, so I can't pick up the red cup.",
    )


def test_a_full_gripper_is_reported_once_not_again_by_later_steps():
    scene = make_scene(holding="cup_2")
    assert verify(FETCH, scene).reasons == ("I'm already holding the blue cup, so I can't pick up the red cup.",)


def test_pick_without_going_there_is_out_of_reach():
    assert_rejected_with(verify("pick(obj:cup_1)"), "The red cup is out of my reach; I need to go to it first.")


def test_pick_of_a_nearby_object_needs_no_navigate():
    scene = make_scene(robot=RobotPose(1.3, 0.0, 0.0))
    assert verify("pick(obj:cup_1)", scene).ok


def test_place_and_handover_far_from_the_destination_are_out_of_reach():
    assert_rejected_with(
        verify("navigate(obj:cup_1); pick(obj:cup_1); place(obj:cup_1, obj:table_1)"), "The table is out of my reach"
    )
    assert_rejected_with(
        verify("navigate(obj:cup_1); pick(obj:cup_1); handover(obj:cup_1, person:user)"), "You are out of my reach"
    )


def test_placing_an_object_on_itself_is_rejected():
    assert_rejected_with(
        verify("navigate(obj:cup_1); pick(obj:cup_1); place(obj:cup_1, obj:cup_1)"), "while it is in my gripper"
    )


# -- plan shape ------------------------------------------------------------------------------------


def test_nothing_may_follow_stop_or_follow():
    assert_rejected_with(verify([Stop(), Rotate(90.0)]), "Nothing can come after stop")
    assert_rejected_with(
        verify([Follow(Ref("person", "user")), Wait(1.0)]), "Nothing can come after follow in a plan (step 2)."
    )


def test_empty_plan_and_mixed_clarify_are_rejected():
    assert_rejected_with(verify([]), "empty")
    assert_rejected_with(verify([Clarify("unsupported"), Stop()]), "whole plan")


def test_all_problems_are_reported_together():
    scene = make_scene(stamp_s=0.0)
    verdict = verify([Navigate(Ref("obj", "ghost")), Pick(Ref("obj", "ghost")), Rotate(math.inf)], scene)
    assert not verdict.ok
    assert len(verdict.reasons) == 3, verdict.reasons
