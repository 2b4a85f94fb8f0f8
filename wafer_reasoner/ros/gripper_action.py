"""The gripper through a GripperCommand action (control_msgs' type, what ros2_control's gripper_action_controller
serves) instead of the forward-command topic: ``gripper.mode`` topic (default) | action | auto.

    gripper = gripper_for(node, parameter_values)     # None: gripper/commands, as before
    gripper.send(GripperCommand(open=False, command_id=17))
    gripper.on_reply = callback(text)                  # 'succeeded 17' / 'failed 17', as manipulator/status says

The seam: the action's result is turned into the reply the motion gate already matches by command id, so the
core cannot tell an action-driven gripper from a controller that answers on manipulator/status. Success means
what a gripper reports: an open succeeds when it ``reached_goal``; a close succeeds when it ``stalled`` (it closed
on something; reaching the closed position means it grasped nothing). No server, a rejected goal or an aborted
one answers ``failed``. Replies are handed over from a guard condition, never inside a core call.
"""

from __future__ import annotations

from collections import deque

from wafer_reasoner.ros.navigation import ACTION, MODES, TOPIC, action_type_named
from wafer_reasoner.runtime.assembly import ConfigurationError
from wafer_reasoner.runtime.gate import format_reply


def gripper_succeeded(opening: bool, reached_goal: bool, stalled: bool) -> bool:
    """Whether a GripperCommand result did what was asked: open -> reached the open position; close -> stalled
    on an object."""
    return bool(reached_goal) if opening else bool(stalled)


def gripper_for(node, values: dict):
    """The GripperActionClient ``gripper.mode`` asks for, or None for the topic; ConfigurationError when the action
    is asked for and its type cannot be imported."""
    mode, type_name = values["gripper.mode"], values["gripper.action_type"]
    if mode not in MODES:
        raise ConfigurationError(f"gripper.mode must be one of {MODES}, got {mode!r}")
    action_type = None if mode == TOPIC else action_type_named(type_name, "gripper.action_type")
    if mode == ACTION and action_type is None:
        raise ConfigurationError(f"gripper.mode is 'action' but {type_name} cannot be imported: install it "
                                 f"(control_msgs: ros-$ROS_DISTRO-control-msgs) or set gripper.mode to auto or topic")
    if action_type is None:
        return None
    return GripperActionClient(node, action_type, values["gripper.action_name"],
                               positions=(values["gripper.closed_position"], values["gripper.open_position"]),
                               max_effort=values["gripper.max_effort"], reply_ids=values["manipulator_reply_ids"])


class GripperActionClient:
    """One GripperCommand goal per gripper command; each answered once through ``on_reply``."""

    def __init__(self, node, action_type, name: str, *, positions: tuple, max_effort: float, reply_ids: bool):
        from rclpy.action import ActionClient

        self._node, self._type, self._name = node, action_type, name
        self._client = ActionClient(node, action_type, name)
        self._closed, self._open = positions
        self._max_effort, self._reply_ids = max_effort, reply_ids
        self._replies: deque = deque()
        self._signal = node.create_guard_condition(self._deliver)
        self.on_reply = None

    def describe(self) -> str:
        return f"the {self._name} action ({self._type.__module__.split('.')[0]})"

    def send(self, command) -> None:
        """A GripperCommand (planner/commands.py) as an action goal."""
        command_id = command.command_id if self._reply_ids else None
        if not self._client.server_is_ready():
            self._answer(False, command_id)
            return
        goal = self._type.Goal()
        goal.command.position = float(self._open if command.open else self._closed)
        goal.command.max_effort = float(self._max_effort)
        future = self._client.send_goal_async(goal)
        future.add_done_callback(lambda done: self._on_goal_response(done.result(), command.open, command_id))

    def destroy(self) -> None:
        self._client.destroy()
        self._node.destroy_guard_condition(self._signal)

    def _on_goal_response(self, handle, opening: bool, command_id) -> None:
        if handle is None or not handle.accepted:
            self._answer(False, command_id)
            return
        handle.get_result_async().add_done_callback(
            lambda done: self._on_result(done.result(), opening, command_id))

    def _on_result(self, response, opening: bool, command_id) -> None:
        from wafer_reasoner.ros.navigation import STATUS_SUCCEEDED

        result = response.result
        ok = response.status == STATUS_SUCCEEDED and gripper_succeeded(opening, result.reached_goal, result.stalled)
        self._answer(ok, command_id)

    def _answer(self, succeeded: bool, command_id) -> None:
        self._replies.append(format_reply(succeeded, command_id))
        self._signal.trigger()

    def _deliver(self) -> None:
        while self._replies:
            text = self._replies.popleft()
            if self.on_reply is not None:
                self.on_reply(text)
