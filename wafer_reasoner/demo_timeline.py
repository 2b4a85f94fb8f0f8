"""The demo operator's pure half: timeline lines, and judging a scenario from what was seen (no ROS).

``wafer_reasoner.ros.demo_operator`` turns messages into plain values and calls this module; everything that
decides what is printed or whether a turn passed lives here so it is unit-tested without DDS.

A timeline line is ``t=+SECONDS  TAG     text``; time is the operator's node clock (simulated time under
``use_sim_time``) counted from the moment the scenario started::

    t=+0.000s   SAY     "bring me the red cup"
    t=+0.041s   PLAN    navigate(obj:cup_red); pick(obj:cup_red); ...  (planning 23.4 ms host, 21 tokens, 850 tok/s)
    t=+0.042s   STEP    1/4 navigate(obj:cup_red)
    t=+0.042s   GOAL    (4.31, 2.85) yaw +35.2°  [facing obj:cup_red at 0.60 m]

``ScenarioRun`` judges the turns one at a time, as ``wafer_reasoner.sim.scenario`` defines it: a turn is met
when its plan result passes ``check_plan`` and ``unmet_conditions`` is empty at one moment before the turn's
``timeout_s``. On top of that, an action plan must have been finished by the executor (``plan_succeeded``),
so the next turn is never said over a plan that is still running, and a clarify plan must have been said
(``say``). A rejected plan, a failed or preempted plan, the timeout, or conditions still unmet ``settle_s``
after the plan ended (nothing more will happen) fail the turn, and with it the scenario.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Optional

from wafer_reasoner.planner.language import Clarify, PlanSyntaxError, Stop, parse_plan
from wafer_reasoner.planner.scene import RobotPose, Scene, SceneError, distance, parse_perception_json
from wafer_reasoner.sim.scenario import Scenario, check_plan, unmet_conditions
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


# ---- judging ---------------------------------------------------------------------------------------------


def normalised_utterance(text: str) -> str:
    """Whitespace folded as the reasoner folds it (``query.answer``), so results can be matched to turns."""
    return " ".join(str(text).split())


def needs_executor(plan_text: str) -> bool:
    """True when the plan moves something: the executor must report it finished (stop/clarify end at once)."""
    try:
        steps = parse_plan(plan_text)
    except PlanSyntaxError:
        return False
    return any(not isinstance(step, (Stop, Clarify)) for step in steps)


def plan_step_count(plan_text: str) -> int:
    try:
        return len(parse_plan(plan_text))
    except PlanSyntaxError:
        return 0


def describe_conditions(expect, scene: Optional[Scene]) -> str:
    """What a met expectation looked like: ``holding nothing; obj:cup_red 0.45 m from person:user``."""
    parts = []
    if expect.clarify:
        parts.append(f"asked (clarify {expect.clarify})")
    if scene is not None and expect.holding is not None:
        parts.append(f"holding {scene.holding or 'nothing'}")
    for near in expect.near if scene is not None else ():
        subject, target = _position(near.subject, scene), _position(near.target, scene)
        if subject is not None and target is not None:
            gap = distance(subject[0], subject[1], target[0], target[1])
            parts.append(f"{near.subject} {gap:.2f} m from {near.target}")
    return "; ".join(parts) or "plan accepted"


def _position(ref: str, scene: Scene):
    if ref == "robot":
        return (scene.robot.x, scene.robot.y)
    kind, _, name = ref.partition(":")
    lookup = {"obj": scene.object, "person": scene.person, "place": scene.place}.get(kind)
    found = lookup(name) if lookup else None
    return None if found is None else (found.x, found.y)


@dataclass(frozen=True)
class Verdict:
    """The end of one turn."""

    turn_index: int  # 0-based
    met: bool
    text: str  # what was met, or why not
    elapsed_s: float  # since the turn was said


class ScenarioRun:
    """Say the turns in order; judge each from plan results, executor events, robot speech and the world seen.

    The caller says ``start_next_turn(now_s).say`` when ``awaiting_turn`` is true, and feeds in what it sees.
    Every ``on_*`` and ``tick`` returns a ``Verdict`` at the moment the current turn ends, else None.
    """

    def __init__(self, scenario: Scenario, places=(), *, settle_s: float = SETTLE_S) -> None:
        self.scenario = scenario
        self.places = tuple(places)
        self.settle_s = settle_s
        self.verdicts: list = []
        self._index = -1
        self._in_turn = False
        self._failed = False
        self._started_s = 0.0
        self._plan: Optional[dict] = None
        self._early_events: list = []  # events seen after saying, before the plan result (order unknown)
        self._needs_executor = False
        self._executor_done = False
        self._plan_ended_s = math.inf  # when the plan ended (executor finished, or a plan that runs at once)
        self._needs_speech = False  # a clarify plan: the robot must say its question
        self._robot_said = False  # the robot said something since the turn started
        self._scene: Optional[Scene] = None
        self._unmet: list = ["no world state seen yet"]

    # ---- state ---------------------------------------------------------------------------------------------

    @property
    def turn_count(self) -> int:
        return len(self.scenario.turns)

    @property
    def turn_index(self) -> int:
        """0-based index of the turn in progress (or last said); -1 before the first."""
        return self._index

    @property
    def current_turn(self):
        return self.scenario.turns[self._index] if self._in_turn else None

    @property
    def awaiting_turn(self) -> bool:
        """True when the next turn should be said now."""
        return not self._in_turn and not self.finished

    @property
    def finished(self) -> bool:
        return self._failed or len(self.verdicts) == self.turn_count

    @property
    def succeeded(self) -> bool:
        return not self._failed and len(self.verdicts) == self.turn_count

    @property
    def plan_step_count(self) -> int:
        """Steps of the current turn's plan (0 before its result arrived)."""
        return plan_step_count(self._plan.get("plan", "")) if self._plan else 0

    @property
    def turn_deadline_s(self) -> float:
        turn = self.current_turn
        return self._started_s + turn.expect.timeout_s if turn is not None else math.inf

    # ---- events --------------------------------------------------------------------------------------------

    def start_next_turn(self, now_s: float):
        """The next turn, now in progress; the caller says its ``say`` text right away."""
        if not self.awaiting_turn:
            raise RuntimeError("no turn is due: one is in progress or the scenario is finished")
        self._index += 1
        self._in_turn = True
        self._started_s = now_s
        self._plan = None
        self._early_events = []
        self._needs_executor = False
        self._executor_done = False
        self._plan_ended_s = math.inf
        self._needs_speech = False
        self._robot_said = False
        if self._scene is None:
            self._unmet = ["no world state seen yet"]
        else:
            self._unmet = unmet_conditions(self.current_turn.expect, self._scene)
        return self.current_turn

    def on_plan_result(self, record: dict, now_s: float) -> Optional[Verdict]:
        """A ``reasoner/plan`` result; only the first one for the current turn's utterance counts."""
        turn = self.current_turn
        if turn is None or self._plan is not None:
            return None
        if normalised_utterance(record.get("utterance", "")) != normalised_utterance(turn.say):
            return None
        self._plan = record
        plan_text = str(record.get("plan") or "")
        status = record.get("status")
        if status == "rejected":
            reasons = "; ".join(str(r) for r in record.get("reasons") or []) or "no reason given"
            return self._fail(f"the reasoner rejected it: {reasons} (plan {plan_text!r})", now_s)
        if status not in ("ok", "clarify"):
            return self._fail(f"the plan result has status {status!r}", now_s)
        problems = check_plan(turn.expect, plan_text)
        if problems:
            return self._fail("; ".join(problems), now_s)
        self._needs_executor = status == "ok" and needs_executor(plan_text)
        self._needs_speech = status == "clarify"
        if not self._needs_executor:
            self._plan_ended_s = now_s
        for event in self._early_events:
            verdict = self._apply_event(event, now_s)
            if verdict is not None:
                return verdict
        self._early_events = []
        return self._evaluate(now_s)

    def on_executor_event(self, record: dict, now_s: float) -> Optional[Verdict]:
        if not self._in_turn:
            return None
        if self._plan is None:
            self._early_events.append(record)
            return None
        return self._apply_event(record, now_s)

    def on_robot_say(self, text: str, now_s: float) -> Optional[Verdict]:
        """The robot spoke (``say``); a clarify turn is met only once the question was said."""
        if not self._in_turn or not str(text).strip():
            return None
        self._robot_said = True
        return self._evaluate(now_s)

    def on_world(self, scene: Scene, now_s: float) -> Optional[Verdict]:
        """The latest world (perception + odom + places)."""
        self._scene = scene
        if not self._in_turn:
            return None
        self._unmet = unmet_conditions(self.current_turn.expect, scene)
        return self._evaluate(now_s)

    def tick(self, now_s: float) -> Optional[Verdict]:
        """Fails the current turn once its ``timeout_s`` has passed, or ``settle_s`` after its plan ended unmet."""
        turn = self.current_turn
        if turn is None:
            return None
        if now_s >= self._started_s + turn.expect.timeout_s:
            return self._fail(f"not met within {turn.expect.timeout_s:g} s: {'; '.join(self.waiting_for())}", now_s)
        if now_s >= self._plan_ended_s + self.settle_s:
            why = "; ".join(self.waiting_for())
            return self._fail(f"the plan ended, and {self.settle_s:g} s later still: {why}", now_s)
        return None

    def abort(self, reason: str, now_s: float) -> Verdict:
        """End the scenario as failed (overall timeout, a node died, shutdown)."""
        if self._in_turn:
            waiting = "; ".join(self.waiting_for())
            return self._fail(f"{reason} (still waiting for: {waiting})", now_s)
        self._failed = True
        verdict = Verdict(max(self._index, 0), False, reason, 0.0)
        self.verdicts.append(verdict)
        return verdict

    def waiting_for(self) -> list:
        """What the current turn still needs, as text."""
        if not self._in_turn:
            return []
        if self._plan is None:
            return ["a plan result from the reasoner"]
        needed = list(self._unmet)
        if self._needs_executor and not self._executor_done:
            needed.insert(0, "the executor to finish the plan")
        if self._needs_speech and not self._robot_said:
            needed.insert(0, "the robot to say its question")
        return needed

    # ---- results -------------------------------------------------------------------------------------------

    def result_line(self, elapsed_s: float) -> str:
        """The final line: ``RESULT: SUCCESS — ...`` or ``RESULT: FAILURE — <why>``."""
        name, total = self.scenario.name, self.turn_count
        if self.succeeded:
            said = "; ".join(quoted(turn.say) for turn in self.scenario.turns)
            return f"RESULT: SUCCESS — {name}: all {total} turn(s) met ({said}) in {elapsed_s:.1f} s"
        failed = next((v for v in self.verdicts if not v.met), None)
        if failed is None:
            return f"RESULT: FAILURE — {name}: the scenario did not finish"
        if 0 <= failed.turn_index < total and self._index >= 0:
            say = quoted(self.scenario.turns[failed.turn_index].say)
            return f"RESULT: FAILURE — {name}: turn {failed.turn_index + 1}/{total} {say}: {failed.text}"
        return f"RESULT: FAILURE — {name}: {failed.text}"

    # ---- inside ----------------------------------------------------------------------------------------------

    def _apply_event(self, record: dict, now_s: float) -> Optional[Verdict]:
        event = record.get("event")
        detail = str(record.get("detail") or "")
        if event == "plan_failed":
            return self._fail(f"the plan failed: {detail or 'no reason given'}", now_s)
        if event == "plan_preempted":
            return self._fail(f"the plan was preempted ({detail or 'no reason given'})", now_s)
        if event == "plan_succeeded":
            self._executor_done = True
            self._plan_ended_s = now_s
            return self._evaluate(now_s)
        return None

    def _evaluate(self, now_s: float) -> Optional[Verdict]:
        if self._plan is None or self._unmet or (self._needs_executor and not self._executor_done):
            return None
        if self._needs_speech and not self._robot_said:
            return None
        text = describe_conditions(self.current_turn.expect, self._scene)
        return self._end(True, text, now_s)

    def _fail(self, text: str, now_s: float) -> Verdict:
        self._failed = True
        return self._end(False, text, now_s)

    def _end(self, met: bool, text: str, now_s: float) -> Verdict:
        verdict = Verdict(self._index, met, text, now_s - self._started_s)
        self.verdicts.append(verdict)
        self._in_turn = False
        return verdict


def verdict_line(verdict: Verdict, run: ScenarioRun) -> tuple:
    """(tag, text) of the DONE/FAIL line of a turn."""
    number = f"turn {verdict.turn_index + 1}/{run.turn_count}"
    if verdict.met:
        return Tag.DONE, f"{number} met after {verdict.elapsed_s:.1f} s: {verdict.text}"
    return Tag.FAIL, f"{number}: {verdict.text}"
