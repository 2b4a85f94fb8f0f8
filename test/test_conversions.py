"""Message <-> core conversions (wafer_reasoner/ros/conversions.py) with real message objects, no spinning."""

import json
import math

import pytest

pytest.importorskip("rclpy")

from geometry_msgs.msg import Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

from wafer_reasoner.planner.commands import (
    ArmPurpose,
    ArmTarget,
    GripperCommand,
    NavigationGoal,
    PlanEvent,
    PlanEventKind,
    VelocityCommand,
)
from wafer_reasoner.planner.language import Stop  # noqa: E402
from wafer_reasoner.planner.limits import SafetyLimits  # noqa: E402
from wafer_reasoner.planner.scene import RobotPose, Scene  # noqa: E402
from wafer_reasoner.ros import conversions  # noqa: E402
from wafer_reasoner.runtime.query import answer
from wafer_reasoner.sim.world import GripperCommand as SimGripperCommand  # noqa: E402
from wafer_reasoner.sim.world import gripper_command_from_data  # noqa: E402


def odometry(x=0.0, y=0.0, quaternion=(0.0, 0.0, 0.0, 1.0)) -> Odometry:
    msg = Odometry()
    msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
    o = msg.pose.pose.orientation
    o.x, o.y, o.z, o.w = quaternion
    return msg


def yaw_of(msg) -> float:
    q = msg.pose.orientation
    return conversions.yaw_from_quaternion(q.x, q.y, q.z, q.w)


# ---- odom -> pose ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("yaw", [0.0, 0.5, math.pi / 2, -math.pi / 2, 3.0, -3.0])
def test_odometry_yaw_is_read_from_the_quaternion(yaw):
    pose = conversions.pose_from_odometry(odometry(1.5, -2.0, (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))))
    assert pose == RobotPose(1.5, -2.0, pytest.approx(yaw))


def test_odometry_quaternion_need_not_be_normalised():
    half = math.pi / 4  # yaw 90 degrees, scaled by 3
    pose = conversions.pose_from_odometry(odometry(quaternion=(0.0, 0.0, 3 * math.sin(half), 3 * math.cos(half))))
    assert pose.yaw == pytest.approx(math.pi / 2)


@pytest.mark.parametrize(
    "x, quaternion",
    [
        (math.nan, (0.0, 0.0, 0.0, 1.0)),
        (math.inf, (0.0, 0.0, 0.0, 1.0)),
        (0.0, (0.0, 0.0, math.nan, 1.0)),
        (0.0, (0.0, 0.0, 0.0, 0.0)),  # "no orientation"
    ],
)
def test_odometry_that_is_not_a_pose_is_refused(x, quaternion):
    assert conversions.pose_from_odometry(odometry(x, 0.0, quaternion)) is None


# ---- poses out ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("yaw", [0.0, 1.0, math.pi, -math.pi / 2, 2.5])
def test_navigation_goal_becomes_a_pose_stamped_with_the_yaw_quaternion(yaw):
    msg = conversions.navigation_goal_to_pose(NavigationGoal(1.0, 2.0, yaw, 0), frame_id="map", stamp_s=12.25)
    q = msg.pose.orientation
    assert (q.x, q.y) == (0.0, 0.0)
    assert q.z == pytest.approx(math.sin(yaw / 2)) and q.w == pytest.approx(math.cos(yaw / 2))
    assert math.isclose(math.hypot(q.z, q.w), 1.0)
    assert math.cos(yaw_of(msg) - yaw) == pytest.approx(1.0)
    assert (msg.pose.position.x, msg.pose.position.y, msg.pose.position.z) == (1.0, 2.0, 0.0)
    assert msg.header.frame_id == "map"
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (12, 250_000_000)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_pose_is_never_built(bad):
    assert conversions.navigation_goal_to_pose(NavigationGoal(bad, 0.0, 0.0, 0), frame_id="map", stamp_s=0.0) is None
    assert conversions.navigation_goal_to_pose(NavigationGoal(0.0, 0.0, bad, 0), frame_id="map", stamp_s=0.0) is None
    target = ArmTarget(0.5, 0.0, bad, ArmPurpose.PICK, 0)
    assert conversions.arm_target_to_pose(target, robot=RobotPose(), frame_id="map", stamp_s=0.0) is None


def test_arm_target_keeps_its_height_and_faces_away_from_the_base():
    target = ArmTarget(1.0, 1.0, 0.75, ArmPurpose.PICK, 1)
    msg = conversions.arm_target_to_pose(target, robot=RobotPose(1.0, 0.0, 0.0), frame_id="map", stamp_s=1.0)
    assert (msg.pose.position.x, msg.pose.position.y, msg.pose.position.z) == (1.0, 1.0, 0.75)
    assert yaw_of(msg) == pytest.approx(math.pi / 2)
    straight_up = conversions.arm_target_to_pose(
        ArmTarget(0.0, 0.0, 1.0, ArmPurpose.HANDOVER, 0), robot=RobotPose(0.0, 0.0, 0.3), frame_id="map", stamp_s=1.0
    )
    assert yaw_of(straight_up) == pytest.approx(0.3)


def test_stamps_are_never_negative():
    assert conversions.stamp_from_seconds(-5.0).sec == 0
    assert conversions.stamp_from_seconds(math.nan).sec == 0
    assert conversions.seconds_from_nanoseconds(1_500_000_000) == 1.5


# ---- velocity -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "linear, angular, expected",
    [
        (0.2, -0.3, (0.2, -0.3)),
        (5.0, 9.0, (0.5, 1.0)),
        (-5.0, -9.0, (-0.5, -1.0)),
        (0.0, 0.0, (0.0, 0.0)),
    ],
)
def test_velocity_is_clamped_to_the_caps_again(linear, angular, expected):
    msg = conversions.velocity_to_twist(VelocityCommand(linear, angular), max_linear_mps=0.5, max_angular_radps=1.0)
    assert isinstance(msg, Twist)
    assert (msg.linear.x, msg.angular.z) == expected
    assert (msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y) == (0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize("linear, angular", [(math.nan, 0.0), (0.0, math.inf), (-math.inf, 0.1)])
def test_a_non_finite_velocity_is_dropped(linear, angular):
    command = VelocityCommand(linear, angular)
    assert conversions.velocity_to_twist(command, max_linear_mps=0.5, max_angular_radps=1.0) is None


def test_zero_twist_is_all_zero():
    msg = conversions.zero_twist()
    assert [msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z] == [0.0] * 6


# ---- gripper --------------------------------------------------------------------------------------------------


def test_gripper_message_is_one_joint_position_open_1_closed_0():
    opened = conversions.gripper_command_to_msg(GripperCommand(open=True))
    closed = conversions.gripper_command_to_msg(GripperCommand(open=False))
    assert list(opened.data) == [1.0] and list(closed.data) == [0.0]
    assert opened.layout.dim[0].size == 1


def test_gripper_convention_is_the_one_sim_world_reads():
    opened = conversions.gripper_command_to_msg(GripperCommand(open=True))
    closed = conversions.gripper_command_to_msg(GripperCommand(open=False))
    assert gripper_command_from_data(opened.data) is SimGripperCommand.OPEN
    assert gripper_command_from_data(closed.data) is SimGripperCommand.CLOSE


# ---- reasoner/plan stream -------------------------------------------------------------------------------------


class _NoModel:
    def generate(self, scene, utterance):
        raise AssertionError("a stop command must not reach the model")


def test_plan_message_is_the_plan_result_with_type_id_and_stamp():
    result = answer(_NoModel(), Scene(), "stop!", SafetyLimits(), now_s=3.0)
    assert result.steps == (Stop(),)
    body = json.loads(conversions.plan_result_to_msg(result, plan_id=7, stamp_s=3.0).data)
    assert body["type"] == "plan" and body["plan_id"] == 7 and body["stamp"] == 3.0
    assert {key: body[key] for key in result.to_json_dict()} == json.loads(json.dumps(result.to_json_dict()))
    assert body["status"] == "ok" and body["plan"] == "stop()"


def test_event_message_carries_the_executor_event():
    event = PlanEvent(PlanEventKind.STEP_STARTED, 1, "pick(obj:cup_1)")
    body = json.loads(conversions.plan_event_to_msg(event, plan_id=2, stamp_s=math.nan).data)
    assert body == {
        "type": "event",
        "plan_id": 2,
        "stamp": None,
        "event": "step_started",
        "step_index": 1,
        "detail": "pick(obj:cup_1)",
    }


def test_diagnostics_values_are_strings_and_nan_is_shown_as_not_available():
    msg = conversions.diagnostics_to_msg(
        name="reasoner_node: reasoner",
        hardware_id="model",
        level="warn",
        message="no perception yet",
        values={"model_loaded": True, "scene_age_s": math.nan, "latency_ms": 12.3456, "plans": 3},
        stamp_s=1.0,
    )
    (status,) = msg.status
    assert status.level == status.WARN
    assert {kv.key: kv.value for kv in status.values} == {
        "model_loaded": "true",
        "scene_age_s": "n/a",
        "latency_ms": "12.346",
        "plans": "3",
    }


def test_base_velocity_is_planar_speed_and_turn_rate():
    msg = odometry()
    msg.twist.twist.linear.x, msg.twist.twist.linear.y, msg.twist.twist.angular.z = 0.3, -0.4, -0.25
    assert conversions.base_velocity_from_odometry(msg) == (pytest.approx(0.5), -0.25)
    msg.twist.twist.angular.z = math.nan
    assert conversions.base_velocity_from_odometry(msg) is None
