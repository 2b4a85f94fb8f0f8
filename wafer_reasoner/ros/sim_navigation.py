"""sim_world's NavigateToPose action server (parameter ``navigation_action_type``: Nav2's action type, or a
test-only copy of it; empty: none): what Nav2's bt_navigator offers, on the stand-in world.

A goal (frame ``map``) becomes the world's goal; feedback (current pose, distance remaining, time) goes out each
physics step; the goal SUCCEEDS when the world reaches it, is CANCELED on a cancel request (the base stops),
ABORTED when a newer goal, a non-zero cmd_vel or a goal_pose message takes over (a zero cmd_vel is ignored
while a goal runs: the action owns the base, as Nav2 would). One goal at a time.
"""

from __future__ import annotations

import importlib
import math

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

MAP_FRAME = "map"


def action_class(type_name: str):
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


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
