"""The executor state machine, driven by hand-made events (simulated time: no clock is read)."""

import math

import pytest

from wafer_reasoner.planner.commands import (
    STOPPED,
    ArmPurpose,
    ArmTarget,
    CancelGoals,
    ExecutorState,
    GripperCommand,
    ManipulatorStatus,
    NavigationGoal,
    PlanEvent,
    PlanEventKind,
    Say,
    VelocityCommand,
    clamped_velocity,
)
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.goals import wrap_angle
from wafer_reasoner.planner.language import Rotate, Stop, Wait, parse_plan
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject

LIMITS = SafetyLimits()  # standoff 0.6 m, reach 0.9 m, max angular 1.0 rad/s
NAV_TIMEOUT_S = 30.0
MANIP_TIMEOUT_S = 10.0
FETCH = "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"


def make_scene(**overrides) -> Scene:
    data = {
        "objects": (
            SceneObject("cup_1", "cup", "red", 2.0, 0.0, 0.8),
            SceneObject("table_1", "table", "", 4.0, 0.0, 0.7),
        ),
        "people": (Person("user", -2.0, 0.0),),
        "places": (NamedPlace("kitchen", 5.0, 5.0, 1.5),),
        "robot": RobotPose(0.0, 0.0, 0.0),
        "stamp_s": 0.0,
    }
    data.update(overrides)
    return Scene(**data)


def make_executor(**kwargs) -> Executor:
    return Executor(LIMITS, nav_tolerance_m=0.2, nav_timeout_s=NAV_TIMEOUT_S, manip_timeout_s=MANIP_TIMEOUT_S, **kwargs)


def of_type(commands, kind):
    return [command for command in commands if isinstance(command, kind)]


def events(commands):
    return [(c.kind, c.step_index) for c in of_type(commands, PlanEvent)]


def only_goal(commands) -> NavigationGoal:
    (goal,) = of_type(commands, NavigationGoal)
    return goal


def assert_failed(executor, commands, fragment):
    assert executor.state is ExecutorState.FAILED
    assert commands[:2] == [CancelGoals(), STOPPED]  # stop everything first
    (say,) = of_type(commands, Say)
    assert fragment in say.text
    assert commands[-1] == PlanEvent(PlanEventKind.PLAN_FAILED, executor.current_step_index, say.text)


# -- the whole fetch plan ------------------------------------------------------------------------


def test_fetch_plan_runs_to_success():
    executor = make_executor()
    commands = executor.start(parse_plan(FETCH), make_scene(), 0.0)
    assert executor.state is ExecutorState.RUNNING
    assert commands == [
        PlanEvent(PlanEventKind.STEP_STARTED, 0, "navigate(obj:cup_1)"),
        NavigationGoal(pytest.approx(1.4), 0.0, 0.0, 0),
    ]

    assert executor.on_odom(RobotPose(1.0, 0.0, 0.0), 1.0) == []  # 0.4 m away: not there yet
    commands = executor.on_odom(RobotPose(1.3, 0.05, 0.0), 2.0)
    assert events(commands) == [(PlanEventKind.STEP_DONE, 0), (PlanEventKind.STEP_STARTED, 1)]
    assert of_type(commands, GripperCommand) == [GripperCommand(open=True)]
    assert of_type(commands, ArmTarget) == [ArmTarget(2.0, 0.0, 0.8, ArmPurpose.PICK, 1)]

    commands = executor.on_manipulator_status("succeeded", 5.0)
    assert commands[0] == GripperCommand(open=False)
    assert executor.holding == "cup_1"
    goal = only_goal(commands)
    assert goal.step_index == 2
    assert math.hypot(goal.x - -2.0, goal.y - 0.0) == pytest.approx(LIMITS.standoff_m)  # stand-off from the user

    commands = executor.on_odom(RobotPose(goal.x, goal.y, math.pi), 9.0)
    (arm,) = of_type(commands, ArmTarget)
    assert (arm.purpose, arm.z, arm.step_index) == (ArmPurpose.HANDOVER, 1.0, 3)

    commands = executor.on_manipulator_status(ManipulatorStatus.SUCCEEDED, 12.0)
    assert commands[0] == GripperCommand(open=True)
    assert commands[-1] == PlanEvent(PlanEventKind.PLAN_SUCCEEDED, 3)
    assert executor.state is ExecutorState.SUCCEEDED
    assert executor.holding == ""
    assert executor.tick(100.0) == []  # nothing runs after the end


def test_step_index_before_any_plan_is_minus_one():
    executor = make_executor()
    assert (executor.state, executor.current_step_index) == (ExecutorState.IDLE, -1)


# -- navigation ----------------------------------------------------------------------------------


def test_navigate_to_a_place_uses_the_place_pose_and_ignores_yaw_for_arrival():
    executor = make_executor()
    goal = only_goal(executor.start(parse_plan("navigate(place:kitchen)"), make_scene(), 0.0))
    assert (goal.x, goal.y, goal.yaw) == (5.0, 5.0, 1.5)
    commands = executor.on_odom(RobotPose(5.1, 4.9, -2.0), 3.0)  # wrong heading, right spot
    assert commands[-1] == PlanEvent(PlanEventKind.PLAN_SUCCEEDED, 0)


def test_navigation_times_out():
    executor = make_executor()
    executor.start(parse_plan("navigate(place:kitchen)"), make_scene(), 10.0)
    assert executor.tick(10.0 + NAV_TIMEOUT_S) == []  # at the limit: still trying
    commands = executor.tick(10.0 + NAV_TIMEOUT_S + 0.1)
    assert_failed(executor, commands, "I couldn't get to the kitchen in time.")


def test_goal_outside_the_workspace_fails_at_runtime_too():
    # the executor re-checks what it publishes (the verifier saw another robot pose)
    executor = make_executor()
    scene = make_scene(places=(NamedPlace("garden", 50.0, 0.0, 0.0),))
    commands = executor.start(parse_plan("navigate(place:garden)"), scene, 0.0)
    assert_failed(executor, commands, "outside my workspace")
    assert of_type(commands, NavigationGoal) == []


def test_nan_odometry_is_ignored():
    executor = make_executor()
    executor.start(parse_plan("navigate(place:kitchen)"), make_scene(), 0.0)
    assert executor.on_odom(RobotPose(float("nan"), 5.0, 0.0), 1.0) == []
    assert executor.state is ExecutorState.RUNNING


def test_object_that_left_the_view_is_reached_at_its_last_known_position():
    executor = make_executor()
    executor.start(parse_plan("navigate(obj:cup_1); pick(obj:cup_1)"), make_scene(), 0.0)
    executor.on_scene(make_scene(objects=()), 1.0)
    (arm,) = of_type(executor.on_odom(RobotPose(1.4, 0.0, 0.0), 2.0), ArmTarget)
    assert (arm.x, arm.y) == (2.0, 0.0)


# -- manipulation --------------------------------------------------------------------------------


def start_at_cup(executor, plan="pick(obj:cup_1)", **scene_overrides):
    scene = make_scene(robot=RobotPose(1.4, 0.0, 0.0), **scene_overrides)
    return executor.start(parse_plan(plan), scene, 0.0)


def test_manipulator_failure_fails_the_plan_and_keeps_the_gripper_as_it_is():
    executor = make_executor()
    start_at_cup(executor)
    commands = executor.on_manipulator_status("failed", 3.0)
    assert_failed(executor, commands, "I couldn't pick up the red cup.")
    assert of_type(commands, GripperCommand) == []
    assert executor.holding == ""


def test_unknown_manipulator_status_counts_as_failure():
    executor = make_executor()
    start_at_cup(executor)
    assert_failed(executor, executor.on_manipulator_status("aborted", 1.0), "couldn't pick up")


def test_manipulation_times_out():
    executor = make_executor()
    start_at_cup(executor)
    assert executor.tick(MANIP_TIMEOUT_S) == []
    assert_failed(executor, executor.tick(MANIP_TIMEOUT_S + 0.5), "My arm didn't finish in time.")


def test_manipulator_status_outside_an_arm_step_is_ignored():
    executor = make_executor()
    executor.start(parse_plan("navigate(place:kitchen)"), make_scene(), 0.0)
    assert executor.on_manipulator_status("failed", 1.0) == []
    assert executor.state is ExecutorState.RUNNING


def test_arm_result_after_stop_is_ignored():
    executor = make_executor()
    start_at_cup(executor)
    executor.stop(1.0)
    assert executor.on_manipulator_status("succeeded", 2.0) == []
    assert (executor.state, executor.holding) == (ExecutorState.PREEMPTED, "")


def test_picking_the_held_object_is_skipped():
    executor = make_executor()
    commands = start_at_cup(executor, "pick(obj:cup_1)", holding="cup_1")
    assert of_type(commands, ArmTarget) == [] and of_type(commands, GripperCommand) == []
    assert executor.state is ExecutorState.SUCCEEDED


def test_place_on_an_object_targets_above_it_and_opens_the_gripper():
    executor = make_executor()
    scene = make_scene(robot=RobotPose(3.4, 0.0, 0.0), holding="cup_1")
    (arm,) = of_type(executor.start(parse_plan("place(obj:cup_1, obj:table_1)"), scene, 0.0), ArmTarget)
    assert (arm.x, arm.y, arm.purpose) == (4.0, 0.0, ArmPurpose.PLACE)
    assert arm.z == pytest.approx(0.8)
    commands = executor.on_manipulator_status("succeeded", 2.0)
    assert commands[0] == GripperCommand(open=True)
    assert executor.state is ExecutorState.SUCCEEDED and executor.holding == ""


def test_arm_target_out_of_reach_fails_instead_of_reaching():
    executor = make_executor()
    commands = executor.start(parse_plan("pick(obj:cup_1)"), make_scene(), 0.0)  # 2 m away
    assert_failed(executor, commands, "I can't reach the red cup from here.")
    assert of_type(commands, ArmTarget) == []


def test_place_of_an_object_not_held_fails():
    executor = make_executor()
    commands = executor.start(parse_plan("place(obj:cup_1, obj:table_1)"), make_scene(), 0.0)
    assert_failed(executor, commands, "I'm not holding the red cup.")


# -- rotate, wait, stop, clarify -----------------------------------------------------------------


def test_rotate_publishes_capped_velocity_and_finishes_on_odom():
    executor = make_executor()
    commands = executor.start([Rotate(90.0)], make_scene(), 0.0)
    (velocity,) = of_type(commands, VelocityCommand)
    assert velocity == VelocityCommand(0.0, LIMITS.max_angular_speed_radps)
    assert executor.tick(0.1) == [velocity]  # keep-alive
    (slower,) = executor.on_odom(RobotPose(0.0, 0.0, 1.3), 1.3)
    assert 0.0 < slower.angular_radps < LIMITS.max_angular_speed_radps  # slows down near the end
    commands = executor.on_odom(RobotPose(0.0, 0.0, math.pi / 2 - 0.01), 1.6)
    assert commands[0] == STOPPED
    assert commands[-1] == PlanEvent(PlanEventKind.PLAN_SUCCEEDED, 0)


def test_rotate_right_is_negative_and_a_full_turn_is_a_full_turn():
    executor = make_executor()
    (velocity,) = of_type(executor.start([Rotate(-360.0)], make_scene(), 0.0), VelocityCommand)
    assert velocity.angular_radps == -LIMITS.max_angular_speed_radps
    yaw, now_s = 0.0, 0.0
    for _ in range(12):  # 12 x 0.5 rad = 6.0 rad: not yet 2 pi
        yaw, now_s = wrap_angle(yaw - 0.5), now_s + 0.5
        assert executor.on_odom(RobotPose(0.0, 0.0, yaw), now_s)[0].angular_radps < 0
    assert executor.state is ExecutorState.RUNNING
    commands = executor.on_odom(RobotPose(0.0, 0.0, wrap_angle(-2 * math.pi + 0.01)), now_s + 0.5)
    assert commands[0] == STOPPED and executor.state is ExecutorState.SUCCEEDED


def test_rotate_times_out_and_stops_the_base():
    executor = make_executor()
    executor.start([Rotate(45.0)], make_scene(), 0.0)
    assert_failed(executor, executor.tick(NAV_TIMEOUT_S + 1.0), "I couldn't finish turning in time.")


def test_tiny_rotation_is_done_at_once():
    executor = make_executor()
    executor.start([Rotate(1.0)], make_scene(), 0.0)
    assert executor.state is ExecutorState.SUCCEEDED


def test_wait_finishes_after_its_duration_of_node_time():
    executor = make_executor()
    executor.start([Wait(2.5)], make_scene(), 100.0)
    assert executor.tick(102.4) == []
    assert executor.tick(102.5)[-1] == PlanEvent(PlanEventKind.PLAN_SUCCEEDED, 0)


def test_steps_that_finish_at_once_chain_in_one_call():
    executor = make_executor()
    commands = executor.start([Wait(0.0), Rotate(0.0), Stop()], make_scene(), 0.0)
    assert STOPPED in commands
    assert commands[-1] == PlanEvent(PlanEventKind.PLAN_SUCCEEDED, 2)
    assert len(of_type(commands, PlanEvent)) == 7  # 3 x (started, done) + succeeded


def test_clarify_says_the_question_and_ends():
    executor = make_executor()
    scene = make_scene(objects=(SceneObject("cup_1", "cup", "red", 1, 0), SceneObject("cup_2", "cup", "", 2, 0)))
    commands = executor.start(parse_plan("clarify(ambiguous:cup)"), scene, 0.0)
    assert Say("I see two cups — which one do you mean?") in commands
    assert executor.state is ExecutorState.SUCCEEDED


@pytest.mark.parametrize(
    "plan, text",
    [("clarify(not_found:stapler)", "I can't see a stapler."), ("clarify(unsupported)", "Sorry, I can't do that.")],
)
def test_other_clarifications(plan, text):
    assert Say(text) in make_executor().start(parse_plan(plan), make_scene(), 0.0)


# -- follow --------------------------------------------------------------------------------------


def test_follow_refreshes_its_goal_and_never_finishes_by_itself():
    executor = make_executor()
    goal = only_goal(executor.start(parse_plan("follow(person:user)"), make_scene(), 0.0))
    assert (goal.x, goal.y, goal.yaw) == (pytest.approx(-1.4), 0.0, pytest.approx(math.pi))
    moved = make_scene(people=(Person("user", -2.0, 3.0),))
    new_goal = only_goal(executor.on_scene(moved, 1.0))
    assert new_goal.y > 2.0
    barely_moved = make_scene(people=(Person("user", -2.0, 3.05),))
    assert executor.on_scene(barely_moved, 2.0) == []  # not worth a new goal
    executor.on_odom(RobotPose(new_goal.x, new_goal.y, 0.0), 3.0)
    assert executor.tick(20.0) == [] and executor.state is ExecutorState.RUNNING


def test_follow_gives_up_when_the_person_is_gone_too_long():
    executor = make_executor()
    executor.start(parse_plan("follow(person:user)"), make_scene(), 0.0)
    assert executor.on_scene(make_scene(people=()), 5.0) == []
    assert executor.tick(NAV_TIMEOUT_S) == []
    assert_failed(executor, executor.tick(NAV_TIMEOUT_S + 0.1), "I lost sight of you.")


def test_follow_fails_when_the_person_walks_out_of_the_workspace():
    executor = make_executor()
    executor.start(parse_plan("follow(person:user)"), make_scene(), 0.0)
    commands = executor.on_scene(make_scene(people=(Person("user", 30.0, 0.0),)), 1.0)
    assert_failed(executor, commands, "outside my workspace")


# -- stop and preemption -------------------------------------------------------------------------


def test_stop_while_running_cancels_and_zeroes_velocity():
    executor = make_executor()
    executor.start(parse_plan("follow(person:user)"), make_scene(), 0.0)
    commands = executor.stop(1.0)
    assert commands == [CancelGoals(), STOPPED, PlanEvent(PlanEventKind.PLAN_PREEMPTED, 0, "stopped")]
    assert executor.state is ExecutorState.PREEMPTED
    assert executor.on_scene(make_scene(), 2.0) == [] and executor.tick(3.0) == []


def test_stop_when_idle_still_zeroes_velocity():
    executor = make_executor()
    assert executor.stop(0.0) == [CancelGoals(), STOPPED]
    assert executor.state is ExecutorState.IDLE


def test_new_plan_preempts_the_running_one():
    executor = make_executor()
    executor.start(parse_plan("navigate(obj:cup_1); pick(obj:cup_1)"), make_scene(), 0.0)
    executor.on_odom(RobotPose(1.4, 0.0, 0.0), 1.0)  # now at the pick step
    commands = executor.start(parse_plan("navigate(place:kitchen)"), make_scene(robot=RobotPose(1.4, 0.0, 0.0)), 2.0)
    assert commands[:3] == [CancelGoals(), STOPPED, PlanEvent(PlanEventKind.PLAN_PREEMPTED, 1, "a new request")]
    assert commands[3] == PlanEvent(PlanEventKind.STEP_STARTED, 0, "navigate(place:kitchen)")
    assert executor.state is ExecutorState.RUNNING and executor.current_step_index == 0
    # the cancelled pick's late result must not touch the new plan
    assert executor.on_manipulator_status("failed", 2.5) == []
    assert executor.state is ExecutorState.RUNNING


def test_start_after_a_finished_plan_does_not_report_preemption():
    executor = make_executor()
    executor.start([Stop()], make_scene(), 0.0)
    commands = executor.start([Wait(1.0)], make_scene(), 1.0)
    assert PlanEventKind.PLAN_PREEMPTED not in [kind for kind, _ in events(commands)]


# -- guards and helpers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "steps", [[], [Rotate(float("nan"))], ["navigate(place:kitchen)"], [Stop(), Wait(1.0)]], ids=str
)
def test_unrunnable_plans_fail_without_moving(steps):
    executor = make_executor()
    commands = executor.start(steps, make_scene(), 0.0)
    assert executor.state is ExecutorState.FAILED
    assert of_type(commands, NavigationGoal) == [] and of_type(commands, ArmTarget) == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nav_tolerance_m": 0.0},
        {"nav_timeout_s": -1.0},
        {"manip_timeout_s": float("nan")},
        {"nav_tolerance_m": 0.5},  # + standoff 0.6 > reach 0.9: it could stop out of reach
    ],
)
def test_executor_rejects_bad_settings(kwargs):
    settings = {"nav_tolerance_m": 0.2, "nav_timeout_s": 10.0, "manip_timeout_s": 10.0, **kwargs}
    with pytest.raises(ValueError):
        Executor(LIMITS, **settings)


def test_clamped_velocity_caps_and_zeroes_non_finite():
    assert clamped_velocity(5.0, -5.0, LIMITS) == VelocityCommand(0.5, -1.0)
    assert clamped_velocity(float("nan"), float("inf"), LIMITS) == VelocityCommand(0.0, 0.0)
    assert clamped_velocity(0.1, 0.2, LIMITS) == VelocityCommand(0.1, 0.2)


def test_plan_event_json():
    event = PlanEvent(PlanEventKind.PLAN_FAILED, 2, "I couldn't pick up the red cup.")
    assert event.to_json_dict() == {
        "event": "plan_failed",
        "step_index": 2,
        "detail": "I couldn't pick up the red cup.",
    }
