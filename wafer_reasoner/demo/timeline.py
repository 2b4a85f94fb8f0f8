"""The demo operator's timeline: one line per thing that happened, in words (no ROS).

``wafer_reasoner.ros.demo_operator`` turns messages into plain values and calls this module and
``demo/verdicts.py`` (judging the turns), so what is printed and whether a turn passed are unit-tested without DDS.

A timeline line is ``t=+SECONDS  TAG     text``; time is the operator's node clock (simulated time under
``use_sim_time``) counted from the moment the scenario started::

    t=+0.000s   SAY     "bring me the red cup"
    t=+0.041s   PLAN    navigate(obj:cup_red); pick(obj:cup_red); ...  (planning 23.4 ms host, 21 tokens, 850 tok/s)
    t=+0.042s   STEP    1/4 navigate(obj:cup_red)
    t=+0.042s   GOAL    (4.31, 2.85) yaw +35.2°  [facing obj:cup_red at 0.60 m]
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Optional

from wafer_reasoner.planner.scene import RobotPose, Scene, SceneError, distance, parse_perception_json
from wafer_reasoner.sim.world import GripperCommand, gripper_command_from_data

STAMP_WIDTH = 12  # "t=+12.345s" and padding
TAG_WIDTH = 8  # the longest tag is 7 characters
NEAR_LABEL_M = 1.5  # goals and arm targets are labelled with the nearest thing within this distance
HERE_M = 0.1  # a goal this close to the robot is "where the robot is"
ZERO_VELOCITY = 1e-6  # |value| below this counts as zero
SETTLE_S = 3.0  # after a plan ended, the world (perception at a few Hz, a release in progress) gets this long


class Tag(str, Enum):
    """The second column of a timeline line."""

    READY = "READY"  # the world and the reasoner are up; the scenario starts
    SAY = "SAY"  # the operator speaks (speech/transcript)
    PLAN = "PLAN"  # a plan result on reasoner/plan
    STEP = "STEP"  # executor step events
    EXEC = "EXEC"  # executor plan events (succeeded, failed, preempted)
    GOAL = "GOAL"  # goal_pose
    ARM = "ARM"  # manipulator/target_pose
    STATUS = "STATUS"  # manipulator/status
    GRIPPER = "GRIPPER"  # gripper/commands
    ROBOT = "ROBOT"  # the robot speaks (say)
    CMD_VEL = "CMD_VEL"  # cmd_vel, only when the robot starts or stops being commanded to move
    WORLD = "WORLD"  # changes seen in the scene (what the gripper holds)
    DONE = "DONE"  # a turn was met
    FAIL = "FAIL"  # a turn failed


class MessageKind(Enum):
    """What a ``reasoner/plan`` message is."""

    PLAN_RESULT = "plan_result"
    EXECUTOR_EVENT = "executor_event"
    UNKNOWN = "unknown"


# ---- formatting -------------------------------------------------------------------------------------------


def timeline_line(t_s: float, tag, text: str) -> str:
    """``t=+1.234s   TAG     text`` (the tag is a ``Tag`` or any short text)."""
    stamp = f"t={t_s:+.3f}s" if math.isfinite(t_s) else "t=?"
    label = tag.value if isinstance(tag, Tag) else str(tag)
    return f"{stamp:<{STAMP_WIDTH}}{label:<{TAG_WIDTH}}{text}".rstrip()


def quoted(text: str) -> str:
    return '"' + " ".join(str(text).split()) + '"'


def _number(value) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def classify_message(record) -> MessageKind:
    """A plan result has ``status`` and ``plan``; an executor event has ``event`` (``PlanEvent.to_json_dict``).

    A ``type`` field, if the node adds one, wins: ``plan``/``plan_result``/``result`` or ``event``/``executor``.
    """
    if not isinstance(record, dict):
        return MessageKind.UNKNOWN
    kind = str(record.get("type", "")).lower()
    if kind in ("plan", "plan_result", "result"):
        return MessageKind.PLAN_RESULT
    if kind in ("event", "executor", "executor_event", "progress"):
        return MessageKind.EXECUTOR_EVENT
    if "event" in record:
        return MessageKind.EXECUTOR_EVENT
    if "status" in record and "plan" in record:
        return MessageKind.PLAN_RESULT
    return MessageKind.UNKNOWN


def planning_numbers(record: dict) -> str:
    """``(planning 23.4 ms host, 21 tokens, 850 tok/s)``, or ``(0.3 ms host, no model call)``."""
    timings = record.get("timings_ms") if isinstance(record.get("timings_ms"), dict) else {}
    host_ms = _number(timings.get("host_total_ms"))
    host = f"{host_ms:.1f} ms host" if host_ms is not None else "? ms host"
    tokens = _number(record.get("tokens")) or 0
    if tokens <= 0:
        return f"(planning {host}, no model call)"
    rate = _number(record.get("tokens_per_s"))
    parts = [f"planning {host}", f"{int(tokens)} tokens"]
    if rate is not None:
        parts.append(f"{rate:.0f} tok/s")
    emulated_ms = _number(timings.get("emulated_ms"))
    if emulated_ms is not None:
        parts.append(f"{emulated_ms:.2f} ms emulated")
    return "(" + ", ".join(parts) + ")"


def format_plan_result(record: dict) -> str:
    """The text of a PLAN line."""
    plan = str(record.get("plan") or "").strip()
    status = str(record.get("status", "?"))
    reasons = [str(reason) for reason in record.get("reasons") or []]
    numbers = planning_numbers(record)
    if status == "ok":
        return f"{plan or '(empty plan)'}  {numbers}"
    if status == "clarify":
        return f"{plan}  [clarify]  {numbers}"
    because = "; ".join(reasons) or "no reason given"
    shown = f"{plan} " if plan else ""
    return f"{shown}[{status.upper()}: {because}]  {numbers}"


def format_executor_event(record: dict, step_count: int = 0) -> tuple:
    """(tag, text) of an executor event; ``step_count`` (if known) is shown as ``2/4``."""
    event = str(record.get("event", "?"))
    index = record.get("step_index")
    detail = str(record.get("detail") or "")
    number = f"{index + 1}" if isinstance(index, int) and not isinstance(index, bool) and index >= 0 else "?"
    if step_count > 0:
        number += f"/{step_count}"
    if event == "step_started":
        return Tag.STEP, f"{number} {detail}".rstrip()
    if event == "step_done":
        return Tag.STEP, f"{number} done"
    if event == "plan_succeeded":
        return Tag.EXEC, "plan succeeded"
    if event == "plan_failed":
        return Tag.EXEC, f"plan failed at step {number}: {detail}"
    if event == "plan_preempted":
        return Tag.EXEC, f"plan preempted at step {number} ({detail})"
    return Tag.EXEC, f"{event} {number} {detail}".rstrip()


def nearest_thing(x: float, y: float, scene: Optional[Scene], *, within_m: float = NEAR_LABEL_M) -> tuple:
    """(``obj:ID`` / ``person:ID`` / ``place:NAME``, distance) of the nearest thing within ``within_m``, or ("", inf).

    Objects come first on ties, then people, then places.
    """
    if scene is None or not math.isfinite(x) or not math.isfinite(y):
        return "", math.inf
    candidates = [(f"obj:{o.id}", o.x, o.y) for o in scene.objects if o.id != scene.holding]
    candidates += [(f"person:{p.id}", p.x, p.y) for p in scene.people]
    candidates += [(f"place:{p.name}", p.x, p.y) for p in scene.places]
    best, best_m = "", math.inf
    for name, cx, cy in candidates:
        gap = distance(x, y, cx, cy)
        if gap < best_m - 1e-9:
            best, best_m = name, gap
    return (best, best_m) if best_m <= within_m else ("", math.inf)


def facing_thing(x: float, y: float, yaw_rad: float, scene: Optional[Scene], **limits) -> tuple:
    """(``obj:ID`` / ``person:ID``, distance) of the nearest thing a pose faces, or ("", inf).

    Faces means: within ``within_m`` (default ``NEAR_LABEL_M``) and at most ``max_angle_deg`` (default 15)
    off the heading; a stand-off goal faces its target.
    """
    within_m = limits.get("within_m", NEAR_LABEL_M)
    max_angle = math.radians(limits.get("max_angle_deg", 15.0))
    if scene is None or not all(math.isfinite(v) for v in (x, y, yaw_rad)):
        return "", math.inf
    candidates = [(f"obj:{o.id}", o.x, o.y) for o in scene.objects if o.id != scene.holding]
    candidates += [(f"person:{p.id}", p.x, p.y) for p in scene.people]
    best, best_m = "", math.inf
    for name, cx, cy in candidates:
        gap = distance(x, y, cx, cy)
        if gap == 0.0 or gap > within_m:
            continue
        turn = math.atan2(cy - y, cx - x) - yaw_rad
        off = abs(math.atan2(math.sin(turn), math.cos(turn)))
        if off <= max_angle and gap < best_m - 1e-9:
            best, best_m = name, gap
    return best, best_m


def _near_note(x: float, y: float, scene: Optional[Scene]) -> str:
    name, gap = nearest_thing(x, y, scene)
    if not name:
        return ""
    return f"  [at {name}]" if gap < 0.05 else f"  [{gap:.2f} m from {name}]"


def format_goal(x: float, y: float, yaw_rad: float, scene: Optional[Scene] = None) -> str:
    """``(4.34, 2.79) yaw +39.3°  [facing obj:cup_red at 0.62 m]``, ``[at place:dock]`` or ``[where the robot is]``.

    A goal where the robot already stands is how the reasoner cancels navigation (``goal_pose`` has no cancel).
    """
    text = f"({x:.2f}, {y:.2f}) yaw {math.degrees(yaw_rad):+.1f}°"
    if scene is not None and distance(x, y, scene.robot.x, scene.robot.y) < HERE_M:
        return f"{text}  [where the robot is]"
    name, gap = nearest_thing(x, y, scene)
    if name.startswith("place:") and gap < 0.05:
        return f"{text}  [at {name}]"
    name, gap = facing_thing(x, y, yaw_rad, scene)
    return f"{text}  [facing {name} at {gap:.2f} m]" if name else text


def format_arm_target(x: float, y: float, z: float, scene: Optional[Scene] = None) -> str:
    """``(4.80, 3.20, 0.75)  [at obj:cup_red]``."""
    return f"({x:.2f}, {y:.2f}, {z:.2f}){_near_note(x, y, scene)}"


def format_gripper(data) -> str:
    """``gripper/commands`` data: ``[0.0]`` closes (grasp), ``[1.0]`` opens (sim_world's convention)."""
    try:
        command = gripper_command_from_data(list(data))
    except (TypeError, ValueError) as error:
        return f"invalid command ({error})"
    return "close (grasp)" if command is GripperCommand.CLOSE else "open (release)"


def is_zero_velocity(linear: float, angular: float) -> bool:
    return abs(linear) < ZERO_VELOCITY and abs(angular) < ZERO_VELOCITY


class VelocityWatch:
    """Reports cmd_vel only when it changes between zero and moving (rotations re-send it many times)."""

    def __init__(self) -> None:
        self._moving: Optional[bool] = None

    def update(self, linear: float, angular: float) -> str:
        """Text for a CMD_VEL line, or "" when nothing worth a line changed."""
        moving = not is_zero_velocity(linear, angular)
        if moving == self._moving:
            return ""
        self._moving = moving
        if moving:
            return f"moving: linear {linear:+.2f} m/s, angular {angular:+.2f} rad/s"
        return "zero (stop)"


class HoldingWatch:
    """Reports changes of what the gripper holds, as seen on ``perception/objects``."""

    def __init__(self, holding: Optional[str] = None) -> None:
        self._holding = holding

    def update(self, holding: str) -> str:
        if holding == self._holding:
            return ""
        first = self._holding is None
        self._holding = holding
        if holding:
            return f"holding {holding}"
        return "gripper empty" if first else "released the object; gripper empty"


def world_scene(perception_json: str, robot: RobotPose, places=()) -> Optional[Scene]:
    """The world as the demo sees it: the perception JSON, the odom pose and the named places (None if bad)."""
    try:
        return parse_perception_json(perception_json, places=places, robot=robot)
    except SceneError:
        return None
