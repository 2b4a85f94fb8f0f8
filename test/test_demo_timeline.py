"""The demo operator's pure half: timeline formatting and judging scenario turns from what was seen."""

import json
import math
import os

import pytest

from wafer_reasoner.demo.timeline import (
    HoldingWatch,
    MessageKind,
    Tag,
    VelocityWatch,
    classify_message,
    facing_thing,
    format_arm_target,
    format_executor_event,
    format_goal,
    format_gripper,
    format_plan_result,
    nearest_thing,
    timeline_line,
    world_scene,
)
from wafer_reasoner.demo.verdicts import ScenarioRun, needs_executor, normalised_utterance, verdict_line
from wafer_reasoner.planner.scene import Person, RobotPose, Scene, SceneObject
from wafer_reasoner.sim.scenario import load_places_file, load_scenario

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config")
PLACES = load_places_file(os.path.join(CONFIG, "semantic_map.yaml"))
BRING = load_scenario(os.path.join(CONFIG, "scenarios", "bring_red_cup.yaml"), places=PLACES)
CLARIFY = load_scenario(os.path.join(CONFIG, "scenarios", "clarify_cup.yaml"), places=PLACES)
FETCH = "navigate(obj:cup_red); pick(obj:cup_red); navigate(person:user); handover(obj:cup_red, person:user)"
USER = Person("user", -3.0, 2.5)


def plan_result(utterance, plan, status="ok", reasons=(), tokens=21, host_ms=23.44, rate=850.0):
    return {
        "utterance": utterance,
        "plan": plan,
        "status": status,
        "reasons": list(reasons),
        "timings_ms": {"host_total_ms": host_ms, "prefill_ms": 4.0, "decode_ms": 18.0},
        "tokens": tokens,
        "tokens_per_s": rate,
    }


def event(kind, index=0, detail=""):
    return {"event": kind, "step_index": index, "detail": detail}


def world(cup_xy=(4.8, 3.2), robot=(-4.0, -3.0), holding=""):
    cup = SceneObject("cup_red", "cup", "red", cup_xy[0], cup_xy[1], 0.75)
    table = SceneObject("table_1", "table", "brown", 5.0, 3.0, 0.0)
    return Scene(
        objects=(table, cup), people=(USER,), places=PLACES, robot=RobotPose(*robot, 0.0), holding=holding
    )


# ---- formatting ------------------------------------------------------------------------------------------


def test_timeline_line_has_stamp_tag_and_text_in_columns():
    assert timeline_line(0.0, Tag.SAY, '"bring me the red cup"') == 't=+0.000s   SAY     "bring me the red cup"'
    line = timeline_line(12.3456, Tag.GOAL, "(1.00, 2.00)")
    assert line == "t=+12.346s  GOAL    (1.00, 2.00)"
    assert line.index("GOAL") == timeline_line(1.0, Tag.ARM, "x").index("ARM")
    assert timeline_line(-0.5, "WAIT", "x").startswith("t=-0.500s")
    assert timeline_line(math.nan, Tag.SAY, "x").startswith("t=?")


def test_messages_are_told_apart_by_type_or_fields():
    assert classify_message(plan_result("stop", "stop()")) is MessageKind.PLAN_RESULT
    assert classify_message(event("step_started")) is MessageKind.EXECUTOR_EVENT
    assert classify_message({"type": "event", "status": "x", "plan": "y"}) is MessageKind.EXECUTOR_EVENT
    assert classify_message({"type": "plan_result", "event": "odd"}) is MessageKind.PLAN_RESULT
    assert classify_message({"hello": 1}) is MessageKind.UNKNOWN
    assert classify_message(["not", "a", "dict"]) is MessageKind.UNKNOWN


def test_plan_line_shows_plan_and_planning_numbers():
    text = format_plan_result(plan_result("bring me the red cup", FETCH))
    assert text == f"{FETCH}  (planning 23.4 ms host, 21 tokens, 850 tok/s)"


def test_plan_line_without_a_model_call_and_with_nulls():
    text = format_plan_result(plan_result("stop", "stop()", tokens=0, host_ms=0.31))
    assert text == "stop()  (planning 0.3 ms host, no model call)"
    record = plan_result("x", "stop()", tokens=3, host_ms=None, rate=None)
    assert format_plan_result(record) == "stop()  (planning ? ms host, 3 tokens)"


def test_plan_line_for_clarify_and_rejected():
    clarify = format_plan_result(plan_result("bring me the cup", "clarify(ambiguous:cup)", status="clarify"))
    assert clarify.startswith("clarify(ambiguous:cup)  [clarify]  (planning")
    rejected = format_plan_result(
        plan_result("go", "navigate(place:attic)", status="rejected", reasons=["I don't know a place called attic."])
    )
    assert rejected.startswith("navigate(place:attic) [REJECTED: I don't know a place called attic.]")
    assert format_plan_result(plan_result("go", "", status="rejected")).startswith("[REJECTED: no reason given]")


def test_executor_events_read_as_step_numbers_from_one():
    assert format_executor_event(event("step_started", 0, "navigate(obj:cup_red)"), 4) == (
        Tag.STEP,
        "1/4 navigate(obj:cup_red)",
    )
    assert format_executor_event(event("step_done", 3), 4) == (Tag.STEP, "4/4 done")
    assert format_executor_event(event("plan_succeeded", 3)) == (Tag.EXEC, "plan succeeded")
    tag, text = format_executor_event(event("plan_failed", 1, "I couldn't pick up the red cup."), 4)
    assert (tag, text) == (Tag.EXEC, "plan failed at step 2/4: I couldn't pick up the red cup.")
    assert format_executor_event(event("plan_preempted", 0, "stopped"))[1] == "plan preempted at step 1 (stopped)"


def test_goals_and_arm_targets_name_the_nearest_thing():
    scene = world()
    # a stand-off goal 0.6 m short of the cup, facing it; the table is nearer to the goal but not ahead
    goal = "(4.34, 2.79) yaw +41.7°  [facing obj:cup_red at 0.62 m]"
    assert format_goal(4.34, 2.79, math.atan2(3.2 - 2.79, 4.8 - 4.34), scene) == goal
    assert format_goal(4.34, 2.79, math.radians(-90.0), scene) == "(4.34, 2.79) yaw -90.0°"
    assert format_arm_target(4.8, 3.2, 0.75, scene) == "(4.80, 3.20, 0.75)  [at obj:cup_red]"
    assert format_arm_target(-2.7, 2.3, 1.0, scene) == "(-2.70, 2.30, 1.00)  [0.36 m from person:user]"
    assert format_goal(-4.0, -3.0, 0.0, scene) == "(-4.00, -3.00) yaw +0.0°  [where the robot is]"
    assert format_goal(-3.5, 2.0, 0.0, scene) == "(-3.50, 2.00) yaw +0.0°  [at place:living_room]"
    assert format_goal(9.0, -9.0, 0.0, scene) == "(9.00, -9.00) yaw +0.0°"
    assert format_goal(1.0, 1.0, 0.0, None) == "(1.00, 1.00) yaw +0.0°"


def test_nearest_thing_skips_the_held_object_and_prefers_objects_on_ties():
    scene = world(holding="cup_red")
    assert nearest_thing(4.8, 3.2, scene)[0] == "obj:table_1"
    tie = Scene(objects=(SceneObject("box", "box", "", 1.0, 0.0),), people=(Person("user", -1.0, 0.0),))
    assert nearest_thing(0.0, 0.0, tie) == ("obj:box", 1.0)
    assert nearest_thing(0.0, 0.0, tie, within_m=0.5) == ("", math.inf)
    assert nearest_thing(math.nan, 0.0, tie) == ("", math.inf)


def test_facing_thing_wants_the_heading_within_the_angle_and_range():
    scene = world()
    assert facing_thing(4.2, 3.2, 0.0, scene) == ("obj:cup_red", pytest.approx(0.6))
    assert facing_thing(4.2, 3.2, math.radians(20.0), scene)[0] == ""
    assert facing_thing(4.2, 3.2, math.radians(20.0), scene, max_angle_deg=25.0)[0] == "obj:cup_red"
    assert facing_thing(2.0, 3.2, 0.0, scene) == ("", math.inf)
    assert facing_thing(-3.0, 1.9, math.pi / 2, scene)[0] == "person:user"


def test_gripper_commands_follow_the_sim_convention():
    assert format_gripper([0.0]) == "close (grasp)"
    assert format_gripper([1.0]) == "open (release)"
    assert format_gripper([]).startswith("invalid command")
    assert format_gripper([math.inf]).startswith("invalid command")


def test_velocity_watch_reports_only_start_and_stop():
    watch = VelocityWatch()
    assert watch.update(0.0, 0.0) == "zero (stop)"
    assert watch.update(0.0, 0.0) == ""
    assert watch.update(0.0, 0.8) == "moving: linear +0.00 m/s, angular +0.80 rad/s"
    assert watch.update(0.0, 0.5) == ""
    assert watch.update(0.0, 0.0) == "zero (stop)"


def test_holding_watch_reports_changes():
    watch = HoldingWatch()
    assert watch.update("") == "gripper empty"
    assert watch.update("") == ""
    assert watch.update("cup_red") == "holding cup_red"
    assert watch.update("") == "released the object; gripper empty"


def test_world_scene_joins_perception_odom_and_places():
    body = json.dumps({"stamp": 3.0, "frame_id": "map", "objects": [], "people": [{"id": "user", "x": 1, "y": 2}]})
    scene = world_scene(body, RobotPose(1.0, 2.0, 0.5), PLACES)
    assert scene.robot == RobotPose(1.0, 2.0, 0.5) and scene.person("user") is not None
    assert scene.place("dock") is not None
    assert world_scene("{not json", RobotPose(), PLACES) is None


def test_plans_that_move_need_the_executor_to_finish():
    assert needs_executor(FETCH)
    assert needs_executor("rotate(90)")
    assert not needs_executor("stop()")
    assert not needs_executor("clarify(ambiguous:cup)")
    assert not needs_executor("this is not a plan")
    assert normalised_utterance("  bring me\tthe red cup \n") == "bring me the red cup"


# ---- judging ----------------------------------------------------------------------------------------------


def run_first_turn(scenario=BRING):
    run = ScenarioRun(scenario, PLACES)
    run.on_world(world(), 0.0)
    assert run.awaiting_turn
    turn = run.start_next_turn(1.0)
    assert turn.say == scenario.turns[0].say and run.turn_index == 0
    return run


def test_bring_red_cup_turn_is_met_after_handover_and_executor_success():
    run = run_first_turn()
    assert run.on_plan_result(plan_result("bring me the red cup", FETCH), 1.1) is None
    assert run.plan_step_count == 4
    assert run.on_executor_event(event("step_started", 0, "navigate(obj:cup_red)"), 1.1) is None
    assert run.on_world(world(holding="cup_red", cup_xy=(4.5, 3.0)), 20.0) is None
    # released near the user, but the executor has not reported the end yet
    assert run.on_world(world(cup_xy=(-3.2, 2.0), robot=(-3.4, 1.6)), 40.0) is None
    assert run.waiting_for() == ["the executor to finish the plan"]
    verdict = run.on_executor_event(event("plan_succeeded", 3), 40.5)
    assert verdict.met and verdict.turn_index == 0
    assert verdict.elapsed_s == pytest.approx(39.5)
    assert verdict.text == "holding nothing; obj:cup_red 0.54 m from person:user"
    assert verdict_line(verdict, run) == (Tag.DONE, f"turn 1/2 met after 39.5 s: {verdict.text}")
    assert run.awaiting_turn and not run.finished


def test_all_turns_met_gives_success_line():
    run = run_first_turn()
    run.on_plan_result(plan_result("bring me the red cup", FETCH), 1.1)
    run.on_world(world(cup_xy=(-3.2, 2.0), robot=(-3.4, 1.6)), 40.0)
    run.on_executor_event(event("plan_succeeded", 3), 40.5)
    assert run.start_next_turn(41.0).say == "go to the dock"
    run.on_plan_result(plan_result("go to the dock", "navigate(place:dock)"), 41.1)
    run.on_executor_event(event("plan_succeeded", 0), 55.0)
    assert not run.finished  # the robot is not at the dock yet
    verdict = run.on_world(world(cup_xy=(-3.2, 2.0), robot=(-4.1, -2.9)), 55.1)
    assert verdict.met and run.finished and run.succeeded
    line = run.result_line(56.0)
    assert line.startswith("RESULT: SUCCESS — bring_red_cup: all 2 turn(s) met")
    assert '"bring me the red cup"; "go to the dock"' in line and line.endswith("in 56.0 s")


def test_events_that_arrive_before_the_plan_result_are_kept():
    run = run_first_turn()
    run.on_world(world(cup_xy=(-3.2, 2.0), robot=(-3.4, 1.6)), 1.0)
    assert run.on_executor_event(event("plan_succeeded", 3), 1.2) is None
    verdict = run.on_plan_result(plan_result("bring me the red cup", FETCH), 1.3)
    assert verdict is not None and verdict.met


def test_results_for_other_utterances_are_ignored():
    run = run_first_turn()
    assert run.on_plan_result(plan_result("go to the kitchen", "navigate(place:kitchen)"), 1.1) is None
    assert run.waiting_for() == ["a plan result from the reasoner"]
    assert run.on_plan_result(plan_result(" bring me  the red cup", FETCH), 1.2) is None
    assert run.plan_step_count == 4


def test_rejected_plan_fails_the_scenario_with_the_reason():
    run = run_first_turn()
    stale = "What I see is 2.5 seconds old; I need a fresh view."
    record = plan_result("bring me the red cup", FETCH, status="rejected", reasons=[stale])
    verdict = run.on_plan_result(record, 1.1)
    assert not verdict.met and run.finished and not run.succeeded
    assert "rejected it: What I see is 2.5 seconds old" in verdict.text
    assert run.result_line(2.0).startswith('RESULT: FAILURE — bring_red_cup: turn 1/2 "bring me the red cup": the ')
    assert not run.awaiting_turn


def test_wrong_kind_of_plan_fails():
    run = run_first_turn()
    record = plan_result("bring me the red cup", "clarify(ambiguous:cup)", status="clarify")
    verdict = run.on_plan_result(record, 1.1)
    assert not verdict.met and "expected an action plan" in verdict.text


def test_failed_and_preempted_plans_fail_the_turn():
    run = run_first_turn()
    run.on_plan_result(plan_result("bring me the red cup", FETCH), 1.1)
    verdict = run.on_executor_event(event("plan_failed", 1, "I couldn't pick up the red cup."), 20.0)
    assert not verdict.met and verdict.text == "the plan failed: I couldn't pick up the red cup."
    run = run_first_turn()
    run.on_plan_result(plan_result("bring me the red cup", FETCH), 1.1)
    verdict = run.on_executor_event(event("plan_preempted", 0, "stopped"), 2.0)
    assert not verdict.met and "preempted (stopped)" in verdict.text


def test_timeout_lists_what_was_missing():
    run = run_first_turn()
    run.on_plan_result(plan_result("bring me the red cup", FETCH), 1.1)
    assert run.turn_deadline_s == pytest.approx(181.0)
    assert run.tick(180.9) is None
    verdict = run.tick(181.0)
    assert not verdict.met
    assert verdict.text.startswith("not met within 180 s: the executor to finish the plan; ")
    assert "obj:cup_red is" in verdict.text and "from person:user; should be within 1 m" in verdict.text


def test_a_plan_that_ended_without_meeting_the_expectation_fails_after_settling():
    run = run_first_turn()
    run.on_plan_result(plan_result("bring me the red cup", "navigate(obj:cup_red); pick(obj:cup_red)"), 1.1)
    run.on_executor_event(event("plan_succeeded", 1), 30.0)
    assert run.on_world(world(holding="cup_red", cup_xy=(4.5, 3.0)), 30.5) is None
    assert run.tick(32.9) is None  # perception and a release in progress get settle_s to show up
    verdict = run.tick(33.0)
    assert not verdict.met
    assert verdict.text.startswith("the plan ended, and 3 s later still: robot should hold nothing, holds cup_red; ")


def test_plans_without_executor_work_settle_from_their_result():
    run = ScenarioRun(BRING, PLACES, settle_s=0.5)
    run.on_world(world(robot=(0.0, 0.0)), 0.0)
    run.start_next_turn(0.0)
    run.on_plan_result(plan_result("bring me the red cup", "stop()", tokens=0), 0.2)
    assert run.tick(0.6) is None
    assert not run.tick(0.7).met


def test_clarify_turns_need_the_right_question_and_no_executor():
    run = ScenarioRun(CLARIFY, PLACES)
    cups = (SceneObject("cup_red", "cup", "red", 1.9, 1.2, 0.75), SceneObject("cup_blue", "cup", "blue", 2.1, 0.8))
    scene = Scene(
        objects=cups,
        people=(Person("user", -1.0, -1.5),),
        places=PLACES,
    )
    run.on_world(scene, 0.0)
    run.start_next_turn(0.5)
    assert run.on_plan_result(plan_result("bring me the cup", "clarify(ambiguous:cup)", status="clarify"), 0.6) is None
    assert run.waiting_for() == ["the robot to say its question"]
    verdict = run.on_robot_say("I see two cups — which one do you mean?", 0.61)
    assert verdict.met and verdict.text.startswith("asked (clarify ambiguous); holding nothing; robot ")
    run.start_next_turn(1.0)
    assert run.on_robot_say("I can't see a banana.", 1.1) is None  # speech may come before the plan result
    verdict = run.on_plan_result(plan_result("bring me the banana", "clarify(ambiguous:banana)", status="clarify"), 1.2)
    assert not verdict.met and "expected clarify(not_found...)" in verdict.text


def test_a_clarify_plan_never_said_fails_after_settling():
    run = ScenarioRun(CLARIFY, PLACES)
    run.on_world(Scene(people=(Person("user", -1.0, -1.5),), places=PLACES), 0.0)
    run.start_next_turn(0.0)
    assert run.on_plan_result(plan_result("bring me the cup", "clarify(ambiguous:cup)", status="clarify"), 0.1) is None
    assert run.on_robot_say("   ", 0.2) is None  # blank speech is not a question
    verdict = run.tick(3.1)
    assert not verdict.met and verdict.text == "the plan ended, and 3 s later still: the robot to say its question"


def test_stop_plans_are_met_without_executor_events():
    scenario = BRING.__class__(
        "stop_only", "", BRING.scene, BRING.fixed_ids, (BRING.turns[1].__class__("stop", BRING.turns[1].expect),)
    )
    run = ScenarioRun(scenario, PLACES)
    run.on_world(world(robot=(-4.0, -3.0)), 0.0)
    run.start_next_turn(0.0)
    verdict = run.on_plan_result(plan_result("stop", "stop()", tokens=0), 0.1)
    assert verdict.met and run.succeeded


def test_abort_fails_the_turn_in_progress_or_the_scenario():
    run = run_first_turn()
    verdict = run.abort("overall timeout of 10 s", 5.0)
    assert not verdict.met and verdict.text.startswith("overall timeout of 10 s (still waiting for: a plan result")
    assert run.finished and not run.succeeded
    before = ScenarioRun(BRING, PLACES)
    before.abort("reasoner_node exited with code 1", 0.0)
    assert before.result_line(0.0) == "RESULT: FAILURE — bring_red_cup: reasoner_node exited with code 1"


def test_turns_cannot_be_started_out_of_order():
    run = run_first_turn()
    with pytest.raises(RuntimeError):
        run.start_next_turn(2.0)
