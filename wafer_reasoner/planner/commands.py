"""What the executor returns: goals and commands for the robot, events for the plan stream (values only).

The node publishes them (``ros/``), the lockstep simulation applies them to the stand-in world (``sim/``); both
get them through ``runtime/core.py``. Section 8 of docs/action_language.md says when each is returned.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum

from .limits import SafetyLimits


class ExecutorState(Enum):
    IDLE = "idle"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    PREEMPTED = "preempted"


class ArmPurpose(Enum):
    PICK = "pick"
    PLACE = "place"
    HANDOVER = "handover"


class ManipulatorStatus(Enum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class PlanEventKind(Enum):
    STEP_STARTED = "step_started"
    STEP_DONE = "step_done"
    PLAN_SUCCEEDED = "plan_succeeded"
    PLAN_FAILED = "plan_failed"
    PLAN_PREEMPTED = "plan_preempted"


@dataclass(frozen=True)
class NavigationGoal:
    x: float
    y: float
    yaw: float  # radians, scene frame
    step_index: int


@dataclass(frozen=True)
class VelocityCommand:
    linear_mps: float = 0.0
    angular_radps: float = 0.0  # left (counter-clockwise) positive


@dataclass(frozen=True)
class ArmTarget:
    x: float
    y: float
    z: float
    purpose: ArmPurpose
    step_index: int
    command_id: int = 0  # set by the motion gate when it sends the command; replies echo it (0: none yet)


@dataclass(frozen=True)
class GripperCommand:
    open: bool
    command_id: int = 0  # as ArmTarget.command_id


@dataclass(frozen=True)
class CancelGoals:
    """Cancel any navigation and arm goal in flight (sent before a plan ends early)."""


MAX_SAY_CHARS = 300  # a TTS node reads this aloud: longer is cut
_LONG_NUMBER = re.compile(r"[-+]?\d{13,}(?:\.\d*)?(?:[eE][-+]?\d+)?")


def speakable(text) -> str:
    """Text fit to be read aloud: printable characters, single spaces, no number longer than 12 digits (it is
    spoken as "a very long number"), at most MAX_SAY_CHARS characters."""
    text = text if isinstance(text, str) else str(text)
    text = "".join(char if char.isprintable() else " " for char in text[: MAX_SAY_CHARS * 8])
    text = _LONG_NUMBER.sub("a very long number", " ".join(text.split()))
    return text if len(text) <= MAX_SAY_CHARS else text[: MAX_SAY_CHARS - 3].rstrip() + "..."


@dataclass(frozen=True)
class Say:
    """Something to say on ``say``; the text is made speakable when the Say is made, wherever it comes from."""

    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", speakable(self.text))


@dataclass(frozen=True)
class PlanEvent:
    """One entry of the ``reasoner/plan`` status stream."""

    kind: PlanEventKind
    step_index: int
    detail: str = ""  # the step text when started, the reason when failed or preempted

    def to_json_dict(self) -> dict:
        return {"event": self.kind.value, "step_index": self.step_index, "detail": self.detail}


STOPPED = VelocityCommand(0.0, 0.0)


def clamped_velocity(linear_mps: float, angular_radps: float, limits: SafetyLimits) -> VelocityCommand:
    """A velocity within the caps; anything not finite becomes zero."""

    def clamp(value: float, cap: float) -> float:
        return max(-cap, min(cap, value)) if math.isfinite(value) else 0.0

    return VelocityCommand(
        clamp(linear_mps, limits.max_linear_speed_mps), clamp(angular_radps, limits.max_angular_speed_radps)
    )
