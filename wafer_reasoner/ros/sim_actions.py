"""sim_world's action servers, what Nav2 and ros2_control offer, on the stand-in world (each only when its
parameter names an action type: Nav2's / control_msgs' own, or the test-only copies in test/interfaces/).

NavigateToPoseServer (``navigation_action_type``, on ``navigate_to_pose``):
A goal (frame ``map``) becomes the world's goal; feedback (current pose, distance remaining, time) goes out each
physics step; the goal SUCCEEDS when the world reaches it, is CANCELED on a cancel request (the base stops),
ABORTED when a newer goal, a non-zero cmd_vel or a goal_pose message takes over (a zero cmd_vel is ignored
while a goal runs: the action owns the base, as Nav2 would). One goal at a time.
"""

from __future__ import annotations

import math

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

from wafer_reasoner.ros.navigation import action_type_named

MAP_FRAME = "map"


def action_class(type_name: str):
    """The action class of ``package/action/Name``; ValueError when it cannot be imported."""
    found = action_type_named(type_name, "action type")
    if found is None:
        raise ValueError(f"action type {type_name} cannot be imported")
    return found


class NavigateToPoseServer:
    """Runs goals on ``world`` (sim/world.py); ``step(now_s)`` after each physics step reports and finishes."""

    def __init__(self, node, world, type_name: str, name: str = "navigate_to_pose") -> None:
        self._node, self._world, self._type = node, world, action_class(type_name)
        self._active = None  # (goal handle, future of the outcome, target pose, start time)
        self._server = ActionServer(node, self._type, name, execute_callback=self._execute,
                                    goal_callback=self._on_goal, cancel_callback=lambda _: CancelResponse.ACCEPT)

    def _on_goal(self, request) -> GoalResponse:
        p = request.pose.pose.position
        ok = request.pose.header.frame_id == MAP_FRAME and all(map(math.isfinite, (p.x, p.y)))
        return GoalResponse.ACCEPT if ok else GoalResponse.REJECT

    async def _execute(self, handle):
        self.preempt()
        pose = handle.request.pose.pose
        q = pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        self._world.set_goal(pose.position.x, pose.position.y, yaw)
        outcome = Future()
        self._active = (handle, outcome, (pose.position.x, pose.position.y), self._node.get_clock().now())
        status = await outcome
        result = self._type.Result()
        if status == "succeeded":
            handle.succeed()
        elif status == "canceled":
            handle.canceled()
        else:
            result.error_code, result.error_msg = 1, status
            handle.abort()
        return result

    @property
    def active(self) -> bool:
        return self._active is not None

    def preempt(self, why: str = "preempted by a newer goal") -> None:
        """The goal in flight ends ABORTED (a new goal, cmd_vel or goal_pose took over)."""
        if self._active is not None:
            self._finish(why)

    def _finish(self, status: str) -> None:
        _, outcome, _, _ = self._active
        self._active = None
        outcome.set_result(status)

    def step(self) -> None:
        if self._active is None:
            return
        handle, _, (x, y), started = self._active
        robot = self._world.robot
        if handle.is_cancel_requested:
            self._world.stop()
            self._finish("canceled")
        elif self._world.goal is None:  # the world clears a goal when it is reached, or stopped
            near = math.hypot(x - robot.x, y - robot.y) <= self._world.config.goal_tolerance_m + 1e-6
            self._finish("succeeded" if near else "the base stopped short of the goal")
        else:
            feedback = self._type.Feedback()
            feedback.current_pose.header.frame_id = MAP_FRAME
            feedback.current_pose.pose.position.x, feedback.current_pose.pose.position.y = robot.x, robot.y
            feedback.distance_remaining = math.hypot(x - robot.x, y - robot.y)
            feedback.navigation_time = (self._node.get_clock().now() - started).to_msg()
            handle.publish_feedback(feedback)

    def destroy(self) -> None:
        self._server.destroy()


class GripperCommandServer:
    """GripperCommand goals (``gripper_action_type``, on ``gripper_cmd``) run as the world's gripper commands: a
    position at or above ``open_from`` opens, below it closes. The result is what a real gripper reports: an open
    reaches its goal; a close that grasps stalls on the object, one that grasps nothing reaches the closed
    position. ``run(call, token)`` is sim_world's command path; ``finish(token, succeeded)`` its reply."""

    def __init__(self, node, run_command, type_name: str, name: str = "gripper_cmd", open_from: float = 0.5):
        self._type, self._run, self._open_from = action_class(type_name), run_command, open_from
        self._waiting: dict = {}  # token -> (future, opening)
        self._server = ActionServer(node, self._type, name, execute_callback=self._execute)

    def owns(self, token) -> bool:
        return token in self._waiting

    def finish(self, token, succeeded: bool) -> None:
        outcome, opening = self._waiting.pop(token)
        outcome.set_result((opening, succeeded))

    async def _execute(self, handle):
        opening = handle.request.command.position >= self._open_from
        token, outcome = object(), Future()
        self._waiting[token] = (outcome, opening)
        self._run(opening, token)
        opening, succeeded = await outcome
        result = self._type.Result()
        result.reached_goal = opening and succeeded or (not opening and not succeeded)
        result.stalled = not opening and succeeded
        result.position = 1.0 if opening else 0.0
        if opening and not succeeded:
            handle.abort()
        else:
            handle.succeed()
        return result

    def destroy(self) -> None:
        self._server.destroy()
