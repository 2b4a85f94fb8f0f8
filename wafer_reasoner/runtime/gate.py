"""The motion gate: the arm and the base never move at once, and manipulator replies meet their commands.

Pure: commands in, commands out, times passed in. ``ReasonerCore`` puts every executor command through it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from wafer_reasoner.planner.commands import ArmTarget, GripperCommand, NavigationGoal, VelocityCommand

ARM, GRIPPER_OPEN, GRIPPER_CLOSE = "arm", "gripper_open", "gripper_close"
STALE, UNEXPECTED = "stale", "unexpected"
BASE_STILL_MPS = 0.02  # odom speeds at or below these count as standing still
BASE_STILL_RADPS = 0.05


@dataclass
class _Sent:
    kind: str  # ARM, GRIPPER_OPEN or GRIPPER_CLOSE
    sent_s: float
    stale: bool = False  # sent before a CancelGoals: its reply belongs to a plan that ended


@dataclass(frozen=True)
class Reply:
    """What a manipulator/status message answered: ``kind`` is ARM, GRIPPER_OPEN/CLOSE, STALE or UNEXPECTED."""

    kind: str
    succeeded: bool
    released: tuple = ()  # held commands that may go out now, in order


def _is_base_motion(command) -> bool:
    return isinstance(command, NavigationGoal) or (
        isinstance(command, VelocityCommand) and (command.linear_mps != 0.0 or command.angular_radps != 0.0)
    )


def _is_manipulation(command) -> bool:
    return isinstance(command, (ArmTarget, GripperCommand))


class MotionGate:
    """Never moves the arm and the base at once; matches manipulator/status replies to the commands they answer.

    The executor moves on as soon as a step is done by its own measure: it sends a pick's arm target once odom
    is within ``nav_tolerance_m`` of the goal (the base may still be settling) and the next navigation goal
    right after the gripper close command. A base that moves stows the arm (sim_world) or tears the grasp, so
    motion commands pass through this gate, in order:

    * a base command (goal, non-zero velocity) waits until no arm or gripper command is in flight;
    * an arm or gripper command waits until odom shows the base standing still and no gripper command is in
      flight (so the pick's "open" finishes before the arm moves).

    Stopping is never held: a zero velocity passes at once (and drops held velocities) and ``cancel()`` (for
    CancelGoals) drops everything held and marks what is in flight as stale.

    The manipulator answers every command once, in order (sim_world's contract; with ``gripper_replies=False``
    only arm targets are answered and gripper commands are not waited for). Replies to arm targets belong to
    the executor; replies to stale commands are dropped.
    """

    def __init__(self, *, gripper_replies: bool = True) -> None:
        self.gripper_replies = gripper_replies
        self._sent: deque = deque()  # _Sent records in flight, oldest first
        self._held: deque = deque()  # motion commands not yet published, in order
        self._base_still = True  # until odom says otherwise

    @property
    def held(self) -> tuple:
        return tuple(self._held)

    def _in_flight(self, *kinds) -> bool:
        return any(not item.stale and item.kind in kinds for item in self._sent)

    def _allowed(self, command) -> bool:
        if _is_base_motion(command):
            return not self._in_flight(ARM, GRIPPER_OPEN, GRIPPER_CLOSE)
        return self._base_still and not self._in_flight(GRIPPER_OPEN, GRIPPER_CLOSE)

    def _release(self, now_s: float) -> tuple:
        released = []
        while self._held and self._allowed(self._held[0]):
            command = self._held.popleft()
            if isinstance(command, ArmTarget):
                self._sent.append(_Sent(ARM, now_s))
            elif isinstance(command, GripperCommand) and self.gripper_replies:
                self._sent.append(_Sent(GRIPPER_OPEN if command.open else GRIPPER_CLOSE, now_s))
            released.append(command)
        return tuple(released)

    def submit(self, command, now_s: float) -> tuple:
        """The commands to publish now, in order, given one more from the executor (CancelGoals: see cancel())."""
        if isinstance(command, VelocityCommand) and not _is_base_motion(command):
            self._held = deque(held for held in self._held if not isinstance(held, VelocityCommand))
            return (command,)  # stopping is never held back
        if not (_is_base_motion(command) or _is_manipulation(command)):
            return (command,)
        if isinstance(command, VelocityCommand) and self._held and isinstance(self._held[-1], VelocityCommand):
            self._held.pop()  # a newer velocity replaces a held one
        self._held.append(command)
        return self._release(now_s)

    def cancel(self) -> None:
        """Everything in flight now belongs to an ended plan; nothing held goes out."""
        for item in self._sent:
            item.stale = True
        self._held.clear()

    def on_base_velocity(self, speed_mps: float, turn_radps: float, now_s: float) -> tuple:
        """Odom's base velocity; returns held commands that may go out now."""
        self._base_still = abs(speed_mps) <= BASE_STILL_MPS and abs(turn_radps) <= BASE_STILL_RADPS
        return self._release(now_s)

    def on_reply(self, status: str, now_s: float) -> Reply:
        """A manipulator/status message. After a failed close nothing is released (the node stops the plan)."""
        succeeded = status == "succeeded"
        if not self._sent:
            return Reply(UNEXPECTED, succeeded)
        item = self._sent.popleft()
        if item.stale:
            return Reply(STALE, succeeded, self._release(now_s))
        if item.kind == GRIPPER_CLOSE and not succeeded:
            return Reply(GRIPPER_CLOSE, False)
        return Reply(item.kind, succeeded, self._release(now_s))

    def expire(self, now_s: float, timeout_s: float) -> Reply | None:
        """A gripper command unanswered for ``timeout_s`` counts as failed (arm timeouts are the executor's)."""
        for item in self._sent:
            if not item.stale and item.kind != ARM and now_s - item.sent_s > timeout_s:
                self._sent.remove(item)
                if item.kind == GRIPPER_CLOSE:
                    return Reply(GRIPPER_CLOSE, False)
                return Reply(item.kind, False, self._release(now_s))
        return None
