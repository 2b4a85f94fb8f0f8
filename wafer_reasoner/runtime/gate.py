"""The motion gate: the arm and the base never move at once, and manipulator replies meet their commands.

Pure: commands in, commands out, times passed in. ``ReasonerCore`` puts every executor command through it.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, replace

from wafer_reasoner.planner.commands import ArmTarget, GripperCommand, NavigationGoal, VelocityCommand

ARM, GRIPPER_OPEN, GRIPPER_CLOSE = "arm", "gripper_open", "gripper_close"
STALE, UNEXPECTED, MALFORMED = "stale", "unexpected", "malformed"
SUCCEEDED, FAILED = "succeeded", "failed"
MAX_COMMAND_ID = 2**63 - 1
# exactly "succeeded" or "failed", lower case, optionally one space and the command id; whitespace around is ignored
_REPLY = re.compile(r"(succeeded|failed)(?: ([0-9]{1,19}))?")
BASE_STILL_MPS = 0.02  # odom speeds at or below these count as standing still
BASE_STILL_RADPS = 0.05


@dataclass
class _Sent:
    kind: str  # ARM, GRIPPER_OPEN or GRIPPER_CLOSE
    sent_s: float
    command_id: int
    stale: bool = False  # sent before a CancelGoals: its reply belongs to a plan that ended


@dataclass(frozen=True)
class ParsedReply:
    succeeded: bool
    command_id: int | None  # None: the reply names no command (order-only controllers)


def parse_reply(text) -> ParsedReply | None:
    """A manipulator/status text -> ParsedReply, or None when it is not a reply ("SUCCEEDED", "ok", "")."""
    if not isinstance(text, str) or len(text) > 64:
        return None
    match = _REPLY.fullmatch(text.strip())
    if match is None:
        return None
    command_id = int(match.group(2)) if match.group(2) is not None else None
    if command_id is not None and command_id > MAX_COMMAND_ID:
        return None
    return ParsedReply(match.group(1) == SUCCEEDED, command_id)


def format_reply(succeeded: bool, command_id: int | None) -> str:
    """The manipulator/status text a controller sends: ``succeeded 17``, or ``succeeded`` without an id."""
    word = SUCCEEDED if succeeded else FAILED
    return word if command_id is None else f"{word} {command_id}"


@dataclass(frozen=True)
class Reply:
    """What a manipulator/status message answered: ``kind`` is ARM, GRIPPER_OPEN/CLOSE, STALE, UNEXPECTED (it
    answers no command in flight) or MALFORMED (it is no reply at all)."""

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

    The manipulator answers every command once (sim_world's contract; with ``gripper_replies=False`` only arm
    targets are answered and gripper commands are not waited for). Every arm and gripper command gets a command
    id when it goes out: its time in integer nanoseconds, made unique (``command_id``). With ``reply_ids`` a
    reply must echo it (``succeeded <id>``) and is matched to that command; a reply without an id, with an id
    not in flight (a duplicate, or one for a node that ran before) is reported and dropped. Without
    ``reply_ids`` (simple controllers) replies are matched by arrival order, and a duplicate reply cannot be
    told from the answer to the next command. Replies to arm targets belong to the executor; replies to stale
    commands are dropped; stale commands whose reply never comes are forgotten after the manipulation timeout.
    """

    def __init__(self, *, gripper_replies: bool = True, reply_ids: bool = True) -> None:
        self.gripper_replies = gripper_replies
        self.reply_ids = reply_ids
        self._sent: deque = deque()  # _Sent records in flight, oldest first
        self._held: deque = deque()  # motion commands not yet published, in order
        self._base_still = True  # until odom says otherwise
        self._last_id = 0

    @property
    def held(self) -> tuple:
        return tuple(self._held)

    def _in_flight(self, *kinds) -> bool:
        return any(not item.stale and item.kind in kinds for item in self._sent)

    def _allowed(self, command) -> bool:
        if _is_base_motion(command):
            return not self._in_flight(ARM, GRIPPER_OPEN, GRIPPER_CLOSE)
        return self._base_still and not self._in_flight(GRIPPER_OPEN, GRIPPER_CLOSE)

    def _new_id(self, now_s: float) -> int:
        """The command's time in integer nanoseconds, above every id given before (unique, increasing)."""
        nanoseconds = int(now_s * 1e9) if 0.0 <= now_s < MAX_COMMAND_ID / 1e9 else 0
        self._last_id = max(nanoseconds, self._last_id + 1)
        return self._last_id

    def _release(self, now_s: float) -> tuple:
        released = []
        while self._held and self._allowed(self._held[0]):
            command = self._held.popleft()
            if _is_manipulation(command):
                command = replace(command, command_id=self._new_id(now_s))
            if isinstance(command, ArmTarget):
                self._sent.append(_Sent(ARM, now_s, command.command_id))
            elif isinstance(command, GripperCommand) and self.gripper_replies:
                self._sent.append(_Sent(GRIPPER_OPEN if command.open else GRIPPER_CLOSE, now_s, command.command_id))
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

    def on_reply(self, text, now_s: float) -> Reply:
        """A manipulator/status message. After a failed close nothing is released (the node stops the plan)."""
        parsed = parse_reply(text)
        if parsed is None:
            return Reply(MALFORMED, False)
        succeeded = parsed.succeeded
        item = self._answered(parsed)
        if item is None:
            return Reply(UNEXPECTED, succeeded)
        if item.stale:
            return Reply(STALE, succeeded, self._release(now_s))
        if item.kind == GRIPPER_CLOSE and not succeeded:
            return Reply(GRIPPER_CLOSE, False)
        return Reply(item.kind, succeeded, self._release(now_s))

    def _answered(self, reply: ParsedReply) -> _Sent | None:
        """The command in flight that ``reply`` answers (removed from those in flight), or None."""
        if not self.reply_ids:
            return self._sent.popleft() if self._sent else None
        for item in self._sent:
            if item.command_id == reply.command_id:
                self._sent.remove(item)
                return item
        return None

    def expire(self, now_s: float, timeout_s: float) -> Reply | None:
        """A gripper command unanswered for ``timeout_s`` counts as failed (arm timeouts are the executor's);
        stale commands unanswered that long are forgotten."""
        self._sent = deque(item for item in self._sent if not (item.stale and now_s - item.sent_s > timeout_s))
        for item in self._sent:
            if not item.stale and item.kind != ARM and now_s - item.sent_s > timeout_s:
                self._sent.remove(item)
                if item.kind == GRIPPER_CLOSE:
                    return Reply(GRIPPER_CLOSE, False)
                return Reply(item.kind, False, self._release(now_s))
        return None
