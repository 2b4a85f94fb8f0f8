"""Pure conversions between ROS messages and the planner core's types (no node, no publishing, no clock).

Every function takes plain values or message objects and returns message objects or core types, so the node's
callbacks stay "convert, call the core, publish" and each conversion is unit-tested without spinning.

Conventions:

* Poses are planar: x, y and yaw (rotation about z) in the scene frame (``map``); quaternions are built from
  yaw only and read back with the full yaw formula (roll/pitch are ignored, the quaternion need not be
  normalised).
* ``gripper/commands`` follows the ros2_control forward-command convention with one joint, the same as
  sim_world (``wafer_reasoner.sim.world.GripperCommand``): ``[1.0]`` opens, ``[0.0]`` closes (grasps).
* Anything not finite is refused here (``None``), never published.
"""

from __future__ import annotations

import json
import math

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped, Twist
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from visualization_msgs.msg import Marker, MarkerArray

from wafer_reasoner.planner.commands import ArmTarget, GripperCommand, NavigationGoal, PlanEvent, VelocityCommand
from wafer_reasoner.planner.scene import MAX_COORDINATE_M, RobotPose
from wafer_reasoner.runtime import markers
from wafer_reasoner.runtime.query import PlanResult

GRIPPER_OPEN_POSITION = 1.0  # gripper/commands data for "open / release" (sim_world: data[0] >= 0.5 opens)
GRIPPER_CLOSED_POSITION = 0.0  # gripper/commands data for "close / grasp"
GRIPPER_JOINT_LABEL = "gripper"
COMMAND_ID_MARK = "#"  # gripper/commands: layout.dim[0].label is "gripper#<command id>"

PLAN_MESSAGE_TYPE = "plan"  # reasoner/plan "type" of a PlanResult message
EVENT_MESSAGE_TYPE = "event"  # reasoner/plan "type" of an executor progress message


def _finite(*values: float) -> bool:
    return all(math.isfinite(value) for value in values)


# ---- time ----------------------------------------------------------------------------------------------------


def seconds_from_nanoseconds(nanoseconds: int) -> float:
    """Node clock time (``clock.now().nanoseconds``) as float seconds, the unit the core uses."""
    return nanoseconds * 1e-9


MAX_STAMP_NS = (2**31 - 1) * 1_000_000_000  # builtin_interfaces/Time.sec is an int32


def stamp_from_seconds(stamp_s: float):
    """builtin_interfaces/Time for ``stamp_s`` seconds (clamped to 0 .. the int32 seconds a Time can hold)."""
    nanoseconds = int(round(stamp_s * 1e9)) if math.isfinite(stamp_s) and abs(stamp_s) < 1e12 else 0
    return stamp_from_nanoseconds(nanoseconds)


def stamp_from_nanoseconds(nanoseconds: int):
    nanoseconds = min(max(0, int(nanoseconds)), MAX_STAMP_NS)
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def nanoseconds_from_stamp(stamp) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


# ---- poses ---------------------------------------------------------------------------------------------------


def yaw_from_quaternion(x: float, y: float, z: float, w: float) -> float:
    """Heading (rotation about z) of a quaternion, in (-pi, pi]; the quaternion need not be normalised.

    ``w*w + x*x - y*y - z*z`` equals the usual ``1 - 2*(y*y + z*z)`` for a unit quaternion and scales with the
    norm like the numerator, so a driver's slightly (or grossly) unnormalised quaternion gives the right yaw.
    """
    return math.atan2(2.0 * (w * z + x * y), w * w + x * x - y * y - z * z)


def quaternion_from_yaw(yaw: float) -> tuple:
    """(x, y, z, w) of a rotation by ``yaw`` radians about z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def pose_from_odometry(msg) -> RobotPose | None:
    """nav_msgs/Odometry -> RobotPose(x, y, yaw); None when any value used is not finite, or the position is
    farther than MAX_COORDINATE_M from the origin (the same bound as every scene coordinate).

    The odom frame is taken as the scene frame (true for sim_world and for a robot localised in ``map`` by
    odometry alone); a robot with a map->odom correction should remap ``odom`` to a map-frame pose source.
    """
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    if not _finite(p.x, p.y, q.x, q.y, q.z, q.w) or max(abs(p.x), abs(p.y)) > MAX_COORDINATE_M:
        return None
    scale = max(abs(q.x), abs(q.y), abs(q.z), abs(q.w))
    if scale == 0.0:
        return None  # an all-zero quaternion is "no orientation", not yaw 0
    # scaled first: the yaw does not depend on the norm, and products of huge components would overflow
    yaw = yaw_from_quaternion(q.x / scale, q.y / scale, q.z / scale, q.w / scale)
    return RobotPose(float(p.x), float(p.y), yaw) if math.isfinite(yaw) else None


def base_velocity_from_odometry(msg) -> tuple | None:
    """nav_msgs/Odometry -> (planar speed m/s, turn rate rad/s) of the base; None when not finite."""
    linear, angular = msg.twist.twist.linear, msg.twist.twist.angular
    speed = math.hypot(linear.x, linear.y) if _finite(linear.x, linear.y) else math.inf
    if not _finite(speed, angular.z):
        return None
    return (speed, float(angular.z))


def pose_stamped(x: float, y: float, yaw: float, *, frame_id: str, stamp_s: float, z: float = 0.0):
    """geometry_msgs/PoseStamped at (x, y, z) facing ``yaw``; None when a value is not finite."""
    if not _finite(x, y, z, yaw):
        return None
    msg = PoseStamped()
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp_from_seconds(stamp_s)
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = float(x), float(y), float(z)
    q = msg.pose.orientation
    q.x, q.y, q.z, q.w = quaternion_from_yaw(float(yaw))
    return msg


def navigation_goal_to_pose(goal: NavigationGoal, *, frame_id: str, stamp_s: float):
    """NavigationGoal -> goal_pose (Nav2's PoseStamped): the stand-off pose facing the target."""
    return pose_stamped(goal.x, goal.y, goal.yaw, frame_id=frame_id, stamp_s=stamp_s)


def arm_target_to_pose(target: ArmTarget, *, robot: RobotPose, frame_id: str, stamp_s: float):
    """ArmTarget -> manipulator/target_pose: the point, oriented along the approach from the robot base.

    ``header.stamp`` is the command id (the command's time in nanoseconds, runtime/gate.py) when it has one;
    the manipulator echoes it as ``succeeded <sec * 10**9 + nanosec>``.

    The orientation is yaw-only (the heading from the base to the point, or the robot's yaw when the point is
    straight above the base); arm controllers that need a full grasp orientation compute it themselves.
    """
    dx, dy = target.x - robot.x, target.y - robot.y
    yaw = math.atan2(dy, dx) if _finite(dx, dy) and (dx or dy) else robot.yaw
    if not math.isfinite(yaw):
        yaw = 0.0
    msg = pose_stamped(target.x, target.y, yaw, z=target.z, frame_id=frame_id, stamp_s=stamp_s)
    if msg is not None and target.command_id:
        msg.header.stamp = stamp_from_nanoseconds(target.command_id)
    return msg


# ---- velocity and gripper ------------------------------------------------------------------------------------


def velocity_to_twist(command: VelocityCommand, *, max_linear_mps: float, max_angular_radps: float):
    """VelocityCommand -> cmd_vel Twist, clamped again to the caps; None when a value is not finite."""
    linear, angular = command.linear_mps, command.angular_radps
    if not _finite(linear, angular):
        return None
    msg = Twist()
    msg.linear.x = max(-max_linear_mps, min(max_linear_mps, float(linear)))
    msg.angular.z = max(-max_angular_radps, min(max_angular_radps, float(angular)))
    return msg


def zero_twist():
    """The stop command: every component zero."""
    return Twist()


def gripper_command_to_msg(command: GripperCommand):
    """GripperCommand -> gripper/commands Float64MultiArray: ``[1.0]`` open, ``[0.0]`` close. The command id
    rides in the label of the one dimension, ``gripper#<id>`` (ros2_control's forward command controller reads
    only ``data``)."""
    msg = Float64MultiArray()
    label = f"{GRIPPER_JOINT_LABEL}{COMMAND_ID_MARK}{command.command_id}" if command.command_id else GRIPPER_JOINT_LABEL
    msg.layout.dim = [MultiArrayDimension(label=label, size=1, stride=1)]
    msg.data = [GRIPPER_OPEN_POSITION if command.open else GRIPPER_CLOSED_POSITION]
    return msg


def command_id_of_target_pose(msg) -> int | None:
    """The command id a manipulator echoes for a target pose: its stamp in nanoseconds (None: no stamp)."""
    return nanoseconds_from_stamp(msg.header.stamp) or None


def command_id_of_gripper_msg(msg) -> int | None:
    """The command id of a gripper/commands message (``gripper#<id>`` label), or None when it carries none."""
    if not msg.layout.dim:
        return None
    _, mark, digits = msg.layout.dim[0].label.partition(COMMAND_ID_MARK)
    return int(digits) if mark and digits.isascii() and digits.isdigit() and len(digits) <= 19 else None


# ---- reasoner/plan stream ------------------------------------------------------------------------------------


def _json_message(body: dict):
    # allow_nan=False: JSON has no NaN; the core already writes non-finite numbers as null
    return String(data=json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")))


def _json_time(stamp_s: float):
    return round(stamp_s, 6) if math.isfinite(stamp_s) else None


def plan_result_to_msg(result: PlanResult, *, plan_id: int, stamp_s: float):
    """``{"type": "plan", "plan_id", "stamp", **PlanResult.to_json_dict()}`` as a std_msgs/String."""
    body = {"type": PLAN_MESSAGE_TYPE, "plan_id": int(plan_id), "stamp": _json_time(stamp_s)}
    body.update(result.to_json_dict())
    return _json_message(body)


def plan_event_to_msg(event: PlanEvent, *, plan_id: int, stamp_s: float):
    """``{"type": "event", "plan_id", "stamp", "event", "step_index", "detail"}`` as a std_msgs/String."""
    body = {"type": EVENT_MESSAGE_TYPE, "plan_id": int(plan_id), "stamp": _json_time(stamp_s)}
    body.update(event.to_json_dict())
    return _json_message(body)


# ---- diagnostics ---------------------------------------------------------------------------------------------

DIAGNOSTIC_LEVELS = {"ok": DiagnosticStatus.OK, "warn": DiagnosticStatus.WARN, "error": DiagnosticStatus.ERROR}


def _diagnostic_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.3f}" if math.isfinite(value) else "n/a"
    return str(value)


def diagnostics_to_msg(*, name: str, hardware_id: str, level: str, message: str, values: dict, stamp_s: float):
    """One DiagnosticStatus in a DiagnosticArray; ``level`` is 'ok', 'warn' or 'error'; values are stringified."""
    status = DiagnosticStatus(
        level=DIAGNOSTIC_LEVELS[level],
        name=name,
        message=message,
        hardware_id=hardware_id,
        values=[KeyValue(key=str(key), value=_diagnostic_value(value)) for key, value in values.items()],
    )
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = stamp_from_seconds(stamp_s)
    return msg


# ---- RViz markers ------------------------------------------------------------------------------------------------

MARKER_TYPES = {markers.CUBE: Marker.CUBE, markers.SPHERE: Marker.SPHERE, markers.CYLINDER: Marker.CYLINDER,
                markers.ARROW: Marker.ARROW, markers.TEXT: Marker.TEXT_VIEW_FACING}


def markers_to_msg(items, *, frame_id: str, stamp_s: float) -> MarkerArray:
    """A visualization_msgs/MarkerArray of ``runtime.markers.Marker`` values, in ``frame_id``."""
    array = MarkerArray()
    stamp = stamp_from_seconds(stamp_s)
    for item in items:
        msg = Marker(ns=item.ns, id=item.id)
        msg.header.frame_id, msg.header.stamp = frame_id, stamp
        if item.shape == markers.DELETE_ALL:
            msg.action = Marker.DELETEALL
            array.markers.append(msg)
            continue
        msg.type, msg.action = MARKER_TYPES[item.shape], Marker.ADD
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = item.x, item.y, item.z
        msg.pose.orientation.z, msg.pose.orientation.w = math.sin(item.yaw / 2), math.cos(item.yaw / 2)
        msg.scale.x, msg.scale.y, msg.scale.z = (float(value) for value in item.scale)
        msg.color.r, msg.color.g, msg.color.b, msg.color.a = (float(value) for value in item.colour)
        msg.text = item.text
        array.markers.append(msg)
    return array
