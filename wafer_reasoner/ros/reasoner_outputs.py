"""reasoner_node's publishers and the one place that turns the reasoner core's outputs into messages, in order.

The publishers are lifecycle publishers, created at configure: they publish only while the node is active.
Navigation goals and cancels go through the navigator (``ros/navigation.py``: the NavigateToPose action or the
goal_pose topic). /diagnostics is a plain publisher: the node reports its lifecycle state while inactive too.

Thread safety: publishing is safe from any thread (rcl publishers are), but the outputs of one core call must
go out in order, so the node calls ``publish`` while it holds its core lock. ``zero_velocity`` is the emergency
stop's fast path: it needs nothing of the core and is published before the lock is taken.
"""

from __future__ import annotations

import math
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, Twist
from std_msgs.msg import Float64MultiArray, String
from visualization_msgs.msg import MarkerArray

from wafer_reasoner.planner.commands import ArmTarget, CancelGoals, GripperCommand, NavigationGoal, Say, VelocityCommand
from wafer_reasoner.ros import conversions
from wafer_reasoner.ros.qos import COMMAND_QOS, MARKERS_QOS, PLAN_QOS
from wafer_reasoner.runtime.core import WARN, EventRecord, Log, PlanRecord
from wafer_reasoner.runtime.markers import MarkerView, reasoner_markers
from wafer_reasoner.runtime.throttle import Throttle

WARN_THROTTLE_S = 5.0  # a repeated warning (same kind) at most this often, with a count of the ones left out


class CoreOutputs:
    """Publishers of cmd_vel, manipulator/target_pose, gripper/commands, say, reasoner/plan, reasoner/markers and
    /diagnostics; goals through the navigator, gripper commands through the gripper action when there is one;
    logging of the core's Log lines, throttled by their key."""

    def __init__(self, node, core, navigator, gripper=None) -> None:
        self._node, self._core, self._navigator, self._gripper_action = node, core, navigator, gripper
        self._throttle = Throttle(WARN_THROTTLE_S)
        lifecycle = node.create_lifecycle_publisher
        self.cmd_vel = lifecycle(Twist, "cmd_vel", COMMAND_QOS)
        self.arm = lifecycle(PoseStamped, "manipulator/target_pose", COMMAND_QOS)
        self.gripper = lifecycle(Float64MultiArray, "gripper/commands", COMMAND_QOS)
        self.say = lifecycle(String, "say", COMMAND_QOS)
        self.plan = lifecycle(String, "reasoner/plan", PLAN_QOS)
        self.markers = lifecycle(MarkerArray, "reasoner/markers", MARKERS_QOS)
        self.diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", COMMAND_QOS)
        self.last_arm_target = None  # (x, y, z) of the last arm target sent, for the markers

    def destroy(self) -> None:
        for publisher in (self.cmd_vel, self.arm, self.gripper, self.say, self.plan, self.markers):
            self._node.destroy_lifecycle_publisher(publisher)
        self._node.destroy_publisher(self.diagnostics)

    def now_s(self) -> float:
        return conversions.seconds_from_nanoseconds(self._node.get_clock().now().nanoseconds)

    def log(self, level: str, text: str, key: str = "") -> None:
        """A log line; lines with a key are throttled per key (a monotonic clock: sim time may stand still)."""
        if key:
            left_out = self._throttle.admit(key, time.monotonic())
            if left_out is None:
                return
            text = Throttle.line(text, left_out)
        if level == WARN:  # one call site per severity: rclpy refuses a call site whose severity changes
            self._node.get_logger().warning(text)
        else:
            self._node.get_logger().info(text)

    def zero_velocity(self) -> None:
        self.cmd_vel.publish(conversions.zero_twist())

    def publish_markers(self) -> None:
        view = MarkerView.of(self._core, arm_target=self.last_arm_target)
        self.markers.publish(conversions.markers_to_msg(reasoner_markers(view), frame_id=self._frame(),
                                                        stamp_s=self.now_s()))

    def publish(self, outputs) -> None:
        now_s = self.now_s()
        for item in outputs:
            if isinstance(item, PlanRecord):
                self.plan.publish(conversions.plan_result_to_msg(item.result, plan_id=item.plan_id,
                                                                 stamp_s=item.stamp_s))
            elif isinstance(item, EventRecord):
                self.plan.publish(conversions.plan_event_to_msg(item.event, plan_id=item.plan_id,
                                                                stamp_s=item.stamp_s))
            elif isinstance(item, Log):
                self.log(item.level, item.text, item.key)
            elif isinstance(item, Say):
                if item.text:
                    self.say.publish(String(data=item.text))
            else:
                self._command(item, now_s)

    def _frame(self) -> str:
        scene = self._core.scene
        return scene.frame_id if scene is not None else "map"

    def _command(self, command, now_s: float) -> None:
        if isinstance(command, NavigationGoal):
            msg = conversions.navigation_goal_to_pose(command, frame_id=self._frame(), stamp_s=now_s)
            if self._checked(msg, "goal_pose"):
                self._navigator.send(msg)
        elif isinstance(command, VelocityCommand):
            limits = self._core.limits
            twist = conversions.velocity_to_twist(command, max_linear_mps=limits.max_linear_speed_mps,
                                                  max_angular_radps=limits.max_angular_speed_radps)
            if twist is None:
                self.log(WARN, "non-finite velocity command replaced by a stop", "non_finite_velocity")
                twist = conversions.zero_twist()
            self.cmd_vel.publish(twist)
        elif isinstance(command, ArmTarget):
            msg = conversions.arm_target_to_pose(command, robot=self._core.pose, frame_id=self._frame(), stamp_s=now_s)
            if self._checked(msg, "manipulator/target_pose"):
                self.arm.publish(msg)
                self.last_arm_target = (command.x, command.y, command.z)
        elif isinstance(command, GripperCommand):
            if self._gripper_action is not None:  # ros/gripper_action.py: its result comes back as the reply
                self._gripper_action.send(command)
            else:
                self.gripper.publish(conversions.gripper_command_to_msg(command))
        elif isinstance(command, CancelGoals):
            self._navigator.cancel(self._current_pose(now_s))
        else:
            self.log(WARN, f"unknown core output {type(command).__name__} not published", "unknown_output")

    def _checked(self, msg, topic: str) -> bool:
        if msg is None:  # the executor checks this too; never put a NaN on the wire
            self.log(WARN, f"{topic} not published: non-finite pose", f"non_finite_{topic}")
            return False
        return True

    def _current_pose(self, now_s: float):
        """The robot's pose as a goal (what a goal_pose 'cancel' sends; the zero cmd_vel after CancelGoals stops
        a base driven by velocity); None before the first odometry."""
        pose = self._core.pose
        if not math.isfinite(pose.x):
            return None
        return conversions.pose_stamped(pose.x, pose.y, pose.yaw, frame_id=self._frame(), stamp_s=now_s)
