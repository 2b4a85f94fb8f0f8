"""The motion gate (runtime/gate.py): arm and base never move at once; replies meet their commands. No ROS."""

from wafer_reasoner.planner.commands import (
    ArmPurpose,
    ArmTarget,
    CancelGoals,
    GripperCommand,
    NavigationGoal,
    PlanEvent,
    PlanEventKind,
    VelocityCommand,
)
from wafer_reasoner.runtime.gate import ARM, GRIPPER_CLOSE, GRIPPER_OPEN, STALE, UNEXPECTED, MotionGate

OPEN, CLOSE = GripperCommand(open=True), GripperCommand(open=False)
ARM_AT_CUP = ArmTarget(1.0, 0.0, 0.75, ArmPurpose.PICK, 1)
GOAL = NavigationGoal(1.0, 2.0, 0.0, 2)


def test_arm_waits_for_the_base_to_stand_still_and_for_the_gripper():
    gate = MotionGate()
    assert gate.on_base_velocity(0.3, 0.0, now_s=0.0) == ()  # driving
    assert gate.submit(OPEN, now_s=0.0) == () and gate.submit(ARM_AT_CUP, now_s=0.0) == ()
    assert gate.submit(PlanEvent(PlanEventKind.STEP_STARTED, 1, "pick(obj:cup_1)"), now_s=0.0) != ()  # not motion
    assert gate.on_base_velocity(0.05, 0.0, now_s=0.1) == ()  # still settling
    assert gate.on_base_velocity(0.0, 0.0, now_s=0.2) == (OPEN,)  # the arm waits for the open
    reply = gate.on_reply("succeeded", now_s=1.2)
    assert (reply.kind, reply.released) == (GRIPPER_OPEN, (ARM_AT_CUP,))
    reply = gate.on_reply("succeeded", now_s=2.2)
    assert (reply.kind, reply.succeeded, reply.released) == (ARM, True, ())


def test_base_waits_for_the_grasp_and_a_failed_grasp_releases_nothing():
    gate = MotionGate()
    assert gate.submit(CLOSE, now_s=0.0) == (CLOSE,)
    assert gate.submit(GOAL, now_s=0.0) == ()
    assert gate.submit(VelocityCommand(0.0, 0.5), now_s=0.0) == ()
    assert gate.submit(VelocityCommand(0.0, 0.4), now_s=0.0) == ()
    assert gate.held == (GOAL, VelocityCommand(0.0, 0.4))  # only the newest velocity is kept
    assert gate.on_reply("succeeded", now_s=1.0).released == (GOAL, VelocityCommand(0.0, 0.4))
    gate.submit(CLOSE, now_s=2.0)
    gate.submit(GOAL, now_s=2.0)
    reply = gate.on_reply("failed", now_s=3.0)
    assert (reply.kind, reply.succeeded, reply.released) == (GRIPPER_CLOSE, False, ())
    assert gate.held == (GOAL,)  # the node stops the plan, which cancels
    gate.cancel()
    assert gate.held == ()


def test_stopping_is_never_held_back():
    gate = MotionGate()
    gate.submit(CLOSE, now_s=0.0)
    gate.submit(VelocityCommand(0.0, 0.5), now_s=0.0)
    assert gate.submit(VelocityCommand(0.0, 0.0), now_s=0.0) == (VelocityCommand(0.0, 0.0),)
    assert gate.held == ()  # the held turn is dropped: the latest word was stop
    assert gate.submit(CancelGoals(), now_s=0.0) == (CancelGoals(),)


def test_replies_to_cancelled_commands_are_dropped_and_unexpected_ones_reported():
    gate = MotionGate()
    gate.submit(ARM_AT_CUP, now_s=0.0)
    gate.cancel()
    assert gate.submit(GOAL, now_s=0.5) == (GOAL,)  # a stale arm motion does not hold the new plan back
    gate.submit(ARM_AT_CUP, now_s=1.0)
    assert gate.on_reply("succeeded", now_s=1.5).kind == STALE
    assert gate.on_reply("failed", now_s=2.0).kind == ARM
    assert gate.on_reply("succeeded", now_s=2.5).kind == UNEXPECTED


def test_an_unanswered_gripper_command_expires_as_failed():
    gate = MotionGate()
    gate.submit(CLOSE, now_s=10.0)
    gate.submit(GOAL, now_s=10.0)
    assert gate.expire(now_s=20.0, timeout_s=30.0) is None
    expired = gate.expire(now_s=41.0, timeout_s=30.0)
    assert (expired.kind, expired.succeeded) == (GRIPPER_CLOSE, False)
    gate.submit(ARM_AT_CUP, now_s=50.0)
    assert gate.expire(now_s=500.0, timeout_s=30.0) is None  # arm timeouts are the executor's


def test_without_gripper_replies_only_arm_targets_are_matched():
    gate = MotionGate(gripper_replies=False)
    assert gate.submit(OPEN, now_s=0.0) == (OPEN,)
    assert gate.submit(ARM_AT_CUP, now_s=0.0) == (ARM_AT_CUP,)  # not waiting for an answer that never comes
    assert gate.on_reply("succeeded", now_s=1.0).kind == ARM
    assert gate.submit(CLOSE, now_s=1.0) == (CLOSE,)
    assert gate.submit(GOAL, now_s=1.0) == (GOAL,)
