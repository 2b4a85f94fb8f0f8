"""The motion gate (runtime/gate.py): arm and base never move at once; replies meet their commands. No ROS.

The first tests match replies by order (``reply_ids=False``, simple controllers); the later ones by command id.
"""

from dataclasses import replace

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
from wafer_reasoner.runtime.gate import (
    ARM,
    GRIPPER_CLOSE,
    GRIPPER_OPEN,
    MALFORMED,
    STALE,
    UNEXPECTED,
    MotionGate,
    ParsedReply,
    format_reply,
    parse_reply,
)

OPEN, CLOSE = GripperCommand(open=True), GripperCommand(open=False)
ARM_AT_CUP = ArmTarget(1.0, 0.0, 0.75, ArmPurpose.PICK, 1)
GOAL = NavigationGoal(1.0, 2.0, 0.0, 2)


def bare(commands) -> tuple:
    """The commands without the ids the gate gave them."""
    return tuple(replace(c, command_id=0) if isinstance(c, (ArmTarget, GripperCommand)) else c for c in commands)


def ordered() -> MotionGate:
    return MotionGate(reply_ids=False)


def test_arm_waits_for_the_base_to_stand_still_and_for_the_gripper():
    gate = ordered()
    assert gate.on_base_velocity(0.3, 0.0, now_s=0.0) == ()  # driving
    assert gate.submit(OPEN, now_s=0.0) == () and gate.submit(ARM_AT_CUP, now_s=0.0) == ()
    assert gate.submit(PlanEvent(PlanEventKind.STEP_STARTED, 1, "pick(obj:cup_1)"), now_s=0.0) != ()  # not motion
    assert gate.on_base_velocity(0.05, 0.0, now_s=0.1) == ()  # still settling
    assert bare(gate.on_base_velocity(0.0, 0.0, now_s=0.2)) == (OPEN,)  # the arm waits for the open
    reply = gate.on_reply("succeeded", now_s=1.2)
    assert (reply.kind, bare(reply.released)) == (GRIPPER_OPEN, (ARM_AT_CUP,))
    reply = gate.on_reply("succeeded", now_s=2.2)
    assert (reply.kind, reply.succeeded, reply.released) == (ARM, True, ())


def test_base_waits_for_the_grasp_and_a_failed_grasp_releases_nothing():
    gate = ordered()
    assert bare(gate.submit(CLOSE, now_s=0.0)) == (CLOSE,)
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
    gate = ordered()
    gate.submit(CLOSE, now_s=0.0)
    gate.submit(VelocityCommand(0.0, 0.5), now_s=0.0)
    assert gate.submit(VelocityCommand(0.0, 0.0), now_s=0.0) == (VelocityCommand(0.0, 0.0),)
    assert gate.held == ()  # the held turn is dropped: the latest word was stop
    assert gate.submit(CancelGoals(), now_s=0.0) == (CancelGoals(),)


def test_replies_to_cancelled_commands_are_dropped_and_unexpected_ones_reported():
    gate = ordered()
    gate.submit(ARM_AT_CUP, now_s=0.0)
    gate.cancel()
    assert gate.submit(GOAL, now_s=0.5) == (GOAL,)  # a stale arm motion does not hold the new plan back
    gate.submit(ARM_AT_CUP, now_s=1.0)
    assert gate.on_reply("succeeded", now_s=1.5).kind == STALE
    assert gate.on_reply("failed", now_s=2.0).kind == ARM
    assert gate.on_reply("succeeded", now_s=2.5).kind == UNEXPECTED


def test_an_unanswered_gripper_command_expires_as_failed():
    gate = ordered()
    gate.submit(CLOSE, now_s=10.0)
    gate.submit(GOAL, now_s=10.0)
    assert gate.expire(now_s=20.0, timeout_s=30.0) is None
    expired = gate.expire(now_s=41.0, timeout_s=30.0)
    assert (expired.kind, expired.succeeded) == (GRIPPER_CLOSE, False)
    gate.submit(ARM_AT_CUP, now_s=50.0)
    assert gate.expire(now_s=500.0, timeout_s=30.0) is None  # arm timeouts are the executor's


def test_without_gripper_replies_only_arm_targets_are_matched():
    gate = MotionGate(gripper_replies=False, reply_ids=False)
    assert bare(gate.submit(OPEN, now_s=0.0)) == (OPEN,)
    assert bare(gate.submit(ARM_AT_CUP, now_s=0.0)) == (ARM_AT_CUP,)  # not waiting for an answer that never comes
    assert gate.on_reply("succeeded", now_s=1.0).kind == ARM
    assert bare(gate.submit(CLOSE, now_s=1.0)) == (CLOSE,)
    assert gate.submit(GOAL, now_s=1.0) == (GOAL,)


# ---- replies that name their command ---------------------------------------------------------------------------


def test_replies_parse_exactly_lower_case_with_an_optional_id():
    assert parse_reply("succeeded") == ParsedReply(True, None)
    assert parse_reply(" failed 17\n") == ParsedReply(False, 17)
    assert parse_reply(format_reply(True, 5_500_000_000)) == ParsedReply(True, 5_500_000_000)
    for text in ("SUCCEEDED", "Succeeded", "ok", "", "succeeded  17", "succeeded -1", "succeeded 1e3",
                 "succeeded 99999999999999999999", "failed 17 18", None, b"succeeded", "x" * 10_000):
        assert parse_reply(text) is None, text


def test_every_manipulation_command_gets_a_unique_increasing_id_from_its_time():
    gate = MotionGate()
    [opened] = gate.submit(OPEN, now_s=2.0)
    assert gate.submit(CLOSE, now_s=2.0) == ()  # held: the open is in flight
    assert opened.command_id == 2_000_000_000
    [released] = gate.on_reply(f"succeeded {opened.command_id}", now_s=1.0).released  # a clock that went back
    assert released.command_id == opened.command_id + 1


def test_with_ids_a_duplicate_a_stray_an_old_id_and_upper_case_are_reported_not_matched():
    gate = MotionGate()
    [opened] = gate.submit(OPEN, now_s=1.0)
    assert gate.submit(ARM_AT_CUP, now_s=1.0) == ()
    first = gate.on_reply(f"succeeded {opened.command_id}", now_s=2.0)
    [arm] = first.released
    assert first.kind == GRIPPER_OPEN and arm.command_id > opened.command_id
    assert gate.on_reply(f"succeeded {opened.command_id}", now_s=2.1).kind == UNEXPECTED  # the duplicate
    assert gate.on_reply("succeeded", now_s=2.2).kind == UNEXPECTED  # names no command
    assert gate.on_reply("succeeded 12345", now_s=2.3).kind == UNEXPECTED  # an earlier node's command
    assert gate.on_reply(f"SUCCEEDED {arm.command_id}", now_s=2.4).kind == MALFORMED
    reply = gate.on_reply(f"failed {arm.command_id}", now_s=3.0)
    assert (reply.kind, reply.succeeded) == (ARM, False)  # only the real answer counts


def test_with_ids_a_reply_meets_its_command_whatever_the_order():
    gate = MotionGate(gripper_replies=False)
    [first] = gate.submit(ARM_AT_CUP, now_s=1.0)
    gate.cancel()
    [second] = gate.submit(replace(ARM_AT_CUP, step_index=3), now_s=2.0)
    assert gate.on_reply(f"succeeded {second.command_id}", now_s=3.0).kind == ARM
    assert gate.on_reply(f"succeeded {first.command_id}", now_s=3.5).kind == STALE  # late, but known


def test_stale_commands_that_never_answer_are_forgotten_after_the_timeout():
    gate = MotionGate()
    [arm] = gate.submit(ARM_AT_CUP, now_s=1.0)
    gate.cancel()
    gate.expire(now_s=40.0, timeout_s=30.0)
    assert gate.on_reply(f"succeeded {arm.command_id}", now_s=41.0).kind == UNEXPECTED
