"""How reasoner_node's navigation goals leave it: Nav2's NavigateToPose action, or a PoseStamped on goal_pose.

    navigator = navigator_for(node, parameter_values)     # navigation.mode: auto | action | topic
    navigator.send(pose_stamped)                          # a NavigationGoal, converted
    navigator.cancel(current_pose_stamped)                # CancelGoals
    navigator.on_result = callback(succeeded, detail)     # action only: the result of the goal in flight
    navigator.on_feedback = callback(distance_remaining_m) # action only: its progress

``action``: one ActionClient of ``navigation.action_type`` (default ``nav2_msgs/action/NavigateToPose``) on
``navigation.action_name``. Each goal replaces the one before (Nav2 preempts too); only the newest goal's result
reaches ``on_result``: SUCCEEDED ends the navigate step, ABORTED / rejected / no server fails the plan, a cancel
we asked for is expected and not reported. Feedback's distance remaining goes to ``on_feedback`` (progress
restarts the navigate step's timeout) and /diagnostics. A cancel is the action's cancel. ``topic``: goals on
``goal_pose``; a cancel sends the current pose (goal_pose has no cancel). ``auto``: the action when its type can
be imported (a system ROS install with nav2_msgs), else the topic. Results are handed to ``on_result`` from a
guard condition, so it never runs inside a core call.
"""

from __future__ import annotations

import importlib
import math
from collections import deque

from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped

from wafer_reasoner.ros.qos import COMMAND_QOS
from wafer_reasoner.runtime.assembly import ConfigurationError

AUTO, ACTION, TOPIC = "auto", "action", "topic"
MODES = (AUTO, ACTION, TOPIC)
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, \
    GoalStatus.STATUS_ABORTED


def action_type_named(name: str, parameter: str = "navigation.action_type"):
    """The action class ``package/action/Name`` names, or None when it cannot be imported here."""
    parts = name.split("/")
    if len(parts) != 3 or parts[1] != "action" or not all(parts):
        raise ConfigurationError(f"{parameter} {name!r} is not package/action/Name")
    try:
        return getattr(importlib.import_module(f"{parts[0]}.action"), parts[2])
    except (ImportError, AttributeError):
        return None


def navigator_for(node, values: dict):
    """The navigator ``navigation.mode`` asks for; ConfigurationError when it cannot be had."""
    mode, type_name = values["navigation.mode"], values["navigation.action_type"]
    if mode not in MODES:
        raise ConfigurationError(f"navigation.mode must be one of {MODES}, got {mode!r}")
    action_type = None if mode == TOPIC else action_type_named(type_name)
    if mode == ACTION and action_type is None:
        raise ConfigurationError(f"navigation.mode is 'action' but {type_name} cannot be imported: install it "
                                 f"(nav2_msgs: ros-$ROS_DISTRO-nav2-msgs) or set navigation.mode to auto or topic")
    if action_type is None:
        return TopicNavigator(node)
    return ActionNavigator(node, action_type, values["navigation.action_name"])


def result_verdict(status: int, error_code: int, error_msg: str) -> tuple:
    """(succeeded, detail) of a NavigateToPose result with GoalStatus ``status``."""
    if status == STATUS_SUCCEEDED:
        return True, ""
    words = {STATUS_ABORTED: "navigation aborted", STATUS_CANCELED: "navigation canceled"}
    what = words.get(status, "navigation failed")
    detail = f"{what}, error {error_code}" if error_code else what
    return False, f"{detail}: {error_msg}" if error_msg else detail


class TopicNavigator:
    """Goals as PoseStamped on goal_pose (a lifecycle publisher: silent while inactive)."""

    mode = TOPIC

    def __init__(self, node) -> None:
        self._node = node
        self._publisher = node.create_lifecycle_publisher(PoseStamped, "goal_pose", COMMAND_QOS)
        self.on_result = self.on_feedback = None

    def describe(self) -> str:
        return "the goal_pose topic"

    def send(self, goal: PoseStamped) -> None:
        self._publisher.publish(goal)

    def cancel(self, hold: PoseStamped | None) -> None:
        """goal_pose has no cancel: the current pose as the goal (Nav2 and sim_world then hold still)."""
        if hold is not None:
            self._publisher.publish(hold)

    def status(self) -> dict:
        return {"navigation": TOPIC}

    def destroy(self) -> None:
        self._node.destroy_lifecycle_publisher(self._publisher)


class ActionNavigator:
    """One NavigateToPose goal at a time; the newest goal's result goes to ``on_result``."""

    mode = ACTION

    def __init__(self, node, action_type, name: str) -> None:
        from rclpy.action import ActionClient

        self._node, self._type, self._name = node, action_type, name
        self._client = ActionClient(node, action_type, name)
        self._serial = 0  # the newest goal's number; results of older ones are dropped
        self._handle = None  # the newest goal's handle once accepted
        self._verdicts: deque = deque()  # (serial, succeeded, detail) to hand to on_result
        self._signal = node.create_guard_condition(self._deliver)
        self.on_result = self.on_feedback = None
        self.distance_remaining_m = math.nan
        self.goals_sent = 0

    def describe(self) -> str:
        return f"the {self._name} action ({self._type.__module__.split('.')[0]})"

    def send(self, goal: PoseStamped) -> None:
        self._serial += 1
        self._handle, self.distance_remaining_m = None, math.nan
        if not self._client.server_is_ready():
            self._report(self._serial, False, f"no {self._name} action server")
            return
        request = self._type.Goal()
        request.pose = goal
        serial = self._serial
        self.goals_sent += 1
        future = self._client.send_goal_async(request, feedback_callback=lambda msg: self._on_feedback(serial, msg))
        future.add_done_callback(lambda done: self._on_goal_response(serial, done.result()))

    def cancel(self, hold: PoseStamped | None) -> None:
        """The action's cancel for the goal in flight; its result is expected, not reported."""
        handle, self._handle = self._handle, None
        self._serial += 1
        if handle is not None:
            handle.cancel_goal_async()

    def status(self) -> dict:
        return {"navigation": ACTION, "navigation_server_ready": self._client.server_is_ready(),
                "navigation_goals_sent": self.goals_sent, "navigation_distance_remaining_m": self.distance_remaining_m}

    def destroy(self) -> None:
        self._client.destroy()
        self._node.destroy_guard_condition(self._signal)

    def _on_goal_response(self, serial: int, handle) -> None:
        if serial != self._serial:
            if handle is not None and handle.accepted:  # superseded before it was accepted: not ours any more
                handle.cancel_goal_async()
            return
        if handle is None or not handle.accepted:
            self._report(serial, False, "navigation goal rejected")
            return
        self._handle = handle
        handle.get_result_async().add_done_callback(lambda done: self._on_result(serial, done.result()))

    def _on_feedback(self, serial: int, message) -> None:
        """On the executor thread (rclpy runs feedback callbacks there), never inside a core call."""
        if serial == self._serial:
            self.distance_remaining_m = float(message.feedback.distance_remaining)
            if self.on_feedback is not None:
                self.on_feedback(self.distance_remaining_m)

    def _on_result(self, serial: int, response) -> None:
        result = response.result
        self._report(serial, *result_verdict(response.status, int(result.error_code), str(result.error_msg)))

    def _report(self, serial: int, succeeded: bool, detail: str) -> None:
        self._verdicts.append((serial, succeeded, detail))
        self._signal.trigger()

    def _deliver(self) -> None:
        while self._verdicts:
            serial, succeeded, detail = self._verdicts.popleft()
            if serial == self._serial and self.on_result is not None:
                self._handle = None
                self.on_result(succeeded, detail)
