"""ReasonerCore: the reasoner's loop without ROS. Events in, what to publish out, in order.

    core = ReasonerCore(model, emulator, limits, executor, places=places, pacing=EMULATED)
    core.on_scene(scene, now_s)          # perception (a Scene with the robot pose and the map's places)
    core.on_odom(pose, velocity, now_s)  # odometry; velocity (speed, turn rate) or None
    core.on_utterance(text, now_s)       # plan, verify, (hold,) execute
    core.on_reply(status, now_s)         # manipulator/status
    core.tick(now_s)                     # timeouts, waits, rotation keep-alive, gripper replies overdue
    core.release_due(now_s)              # held answers whose emulated time has come (core.next_release_s)

Each returns a tuple of outputs to publish in order: the executor's commands (``NavigationGoal``,
``VelocityCommand``, ``ArmTarget``, ``GripperCommand``, ``CancelGoals``, ``Say``) after the motion gate,
``PlanRecord`` and ``EventRecord`` for ``reasoner/plan``, and ``Log`` lines. ``reasoner_node`` publishes them over
DDS; ``sim/lockstep.py`` applies them to the stand-in world in simulated time. Every utterance gets exactly one
PlanRecord, numbered from 1. Time is always passed in (the node clock), so simulated time works.

- A stop command zeroes the velocity, cancels held answers and stops the executor before anything else, even
  before any perception or odometry.
- Any other utterance before the first scene is refused ("I can't see anything yet.") without the model; until
  the first odometry the pose is unknown and the verifier refuses every plan that moves.
- Every plan is charged the emulated time of the (target, hardware, stack) triple, with the target's hidden
  reasoning budget (``reasoning``: tokens it thinks before the plan, by target and query class) when the model is
  asked. With ``pacing=EMULATED`` an answer is held until query time + that time (in the order asked), or released
  at once, ``behind_ms`` late, when the host was slower; ``clock`` reads the caller's clock after planning (None:
  planning takes no time, as in lockstep). The best-of-N deadline counts the reasoning too.
- A new ``ok`` plan preempts the running one (started with the robot's pose at release); clarify and rejected
  answers only speak.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from types import MappingProxyType

from wafer_reasoner.emulator.pacing import EMULATED, OFF, check_mode, pace
from wafer_reasoner.emulator.reasoning import NO_REASONING
from wafer_reasoner.planner.commands import CancelGoals, PlanEvent, PlanEventKind, Say, VelocityCommand
from wafer_reasoner.planner.scene import RobotPose, Scene
from wafer_reasoner.runtime.best_of_n import EmulatedBestOfN
from wafer_reasoner.runtime.emulation import emulated_details, query_class
from wafer_reasoner.runtime.gate import ARM, GRIPPER_CLOSE, GRIPPER_OPEN, UNEXPECTED, MotionGate, Reply
from wafer_reasoner.runtime.query import PlanResult, PlanStatus, answer, utterance_problem, verifier_accepts
from wafer_reasoner.understanding.stop import is_stop_command

NO_SCENE_REASON = "I can't see anything yet."
GRASP_FAILED_REASON = "I couldn't grasp it."
UNKNOWN_POSE = RobotPose(math.nan, math.nan, math.nan)  # until the first odom: the verifier refuses to move
LOG_UTTERANCE_CHARS = 80
INFO, WARN = "info", "warn"


@dataclass(frozen=True)
class PlanRecord:
    """A ``plan`` message of ``reasoner/plan``: the answer to one utterance, stamped with its query time."""

    plan_id: int
    stamp_s: float
    result: PlanResult


@dataclass(frozen=True)
class EventRecord:
    """An ``event`` message of ``reasoner/plan``: executor progress of plan ``plan_id``."""

    plan_id: int
    stamp_s: float
    event: PlanEvent


@dataclass(frozen=True)
class Log:
    level: str  # INFO or WARN
    text: str


@dataclass
class HeldAnswer:
    """An answer held until its release time (pacing: emulated)."""

    result: PlanResult
    plan_id: int
    query_s: float
    release_s: float
    scene: Scene


def short(text) -> str:
    """An utterance as a log line shows it: at most LOG_UTTERANCE_CHARS, then its length."""
    text = text if isinstance(text, str) else repr(text)
    return text if len(text) <= LOG_UTTERANCE_CHARS else f"{text[:LOG_UTTERANCE_CHARS]}... ({len(text)} chars)"


def no_scene_result(utterance: str) -> PlanResult:
    """The answer to a valid, non-stop utterance before any perception arrived: rejected, model not called."""
    return PlanResult(
        utterance=" ".join(utterance.split()), plan="", steps=(), status=PlanStatus.REJECTED,
        reasons=(NO_SCENE_REASON,),
        timings_ms=MappingProxyType({"host_total_ms": 0.0, "prefill_ms": 0.0, "decode_ms": 0.0}),
    )


def answer_line(result: PlanResult) -> str:
    """The log line of a released answer."""
    behind = (result.pacing or {}).get("behind_ms", 0.0)
    return (f"'{short(result.utterance)}' -> {result.status.value}: {result.plan or '-'}"
            f"{' | ' + ' '.join(result.reasons) if result.reasons else ''} "
            f"({result.timings_ms.get('host_total_ms', math.nan):.0f} ms host, "
            f"{result.timings_ms.get('emulated_ms', math.nan):.1f} ms emulated"
            f"{f', {behind:.0f} ms behind' if behind > 0.0 else ''})")


class ReasonerCore:
    """Plans each utterance with the query, runs the plan with the executor, keeps arm and base apart."""

    def __init__(self, model, emulator, limits, executor, *, places=(), pacing: str = OFF, deadline_ms: float = 0.0,
                 gripper_replies: bool = True, clock=None, reasoning=NO_REASONING):
        self.model, self.emulator, self.limits, self.executor = model, emulator, limits, executor
        self.reasoning = reasoning  # ReasoningSettings: hidden tokens charged before each plan the model writes
        self.places = tuple(places)
        self.pacing = check_mode(pacing)
        self.deadline_ms = float(deadline_ms)  # best-of-N deadline, emulated time
        self.clock = clock
        self.gate = MotionGate(gripper_replies=gripper_replies)
        self.scene: Scene | None = None  # the latest perception; None before the first
        self.pose = UNKNOWN_POSE
        self.held: deque = deque()  # HeldAnswer, release order
        self.plans = 0  # plan_id of the latest utterance
        self.running_plan_id = 0  # plan_id the executor's events belong to
        self.last_result: PlanResult | None = None
        self.last_latency_ms = self.last_emulated_ms = self.last_behind_ms = math.nan

    @property
    def next_release_s(self) -> float | None:
        return self.held[0].release_s if self.held else None

    # ---- events ------------------------------------------------------------------------------------------------

    def on_utterance(self, text, now_s: float) -> tuple:
        out = []
        stop = isinstance(text, str) and is_stop_command(text)
        if stop:  # before anything else: never wait for the model to stop, nor for held answers
            out.append(VelocityCommand(0.0, 0.0))
            out += self._drop_held()
            out += self._dispatch(self.executor.stop(now_s), now_s)
        scene = (self.scene if self.scene is not None else Scene()).with_robot(self.pose)
        result = self._plan(text, scene, stop, now_s)
        self.plans += 1
        self.last_result = result
        self.last_latency_ms = result.timings_ms.get("host_total_ms", math.nan)
        if self.pacing == OFF or stop:  # stop commands are never paced
            result = result.with_pacing({"mode": OFF, "stop": True} if stop and self.pacing != OFF else {"mode": OFF})
            return tuple(out + self._release(HeldAnswer(result, self.plans, now_s, now_s, scene), now_s, stop=stop))
        done_s = self.clock() if self.clock is not None else now_s
        not_before_s = self.held[-1].release_s if self.held else -math.inf
        release = pace(now_s, done_s, result.timings_ms["emulated_ms"], not_before_s=not_before_s)
        self.last_behind_ms = release.behind_ms
        pacing = {"mode": EMULATED, "behind_ms": release.behind_ms, "held_ms": release.wait_s * 1000.0}
        self.held.append(HeldAnswer(result.with_pacing(pacing), self.plans, now_s, release.release_s, scene))
        return tuple(out + list(self.release_due(done_s)))

    def release_due(self, now_s: float, slack_s: float = 0.0) -> tuple:
        """Release every held answer whose time has come (up to ``slack_s`` early, for float round-off)."""
        out = []
        while self.held and self.held[0].release_s <= now_s + slack_s:
            out += self._release(self.held.popleft(), now_s)
        return tuple(out)

    def on_scene(self, scene: Scene, now_s: float) -> tuple:
        self.scene = scene
        return self._dispatch(self.executor.on_scene(scene, now_s), now_s)

    def on_odom(self, pose: RobotPose, velocity, now_s: float) -> tuple:
        """``velocity``: (speed m/s, turn rate rad/s) of the base, or None when odometry has none."""
        self.pose = pose
        out = list(self.gate.on_base_velocity(*velocity, now_s)) if velocity is not None else []
        return tuple(out) + self._dispatch(self.executor.on_odom(pose, now_s), now_s)

    def on_reply(self, status: str, now_s: float) -> tuple:
        """A manipulator/status message, normalised (stripped, lower case)."""
        reply = self.gate.on_reply(status, now_s)
        out = [Log(WARN, f"manipulator/status '{short(status)}' answers no command; ignored")] \
            if reply.kind == UNEXPECTED else []
        return tuple(out) + self._handle_reply(reply, status, now_s)

    def tick(self, now_s: float) -> tuple:
        out = ()
        expired = self.gate.expire(now_s, self.executor.manip_timeout_s)
        if expired is not None:
            out = (Log(WARN, f"no reply to a gripper command ({expired.kind}) in time"),)
            out += self._handle_reply(expired, "failed", now_s)
        return out + self._dispatch(self.executor.tick(now_s), now_s)

    # ---- planning ------------------------------------------------------------------------------------------

    def _plan(self, text, scene: Scene, stop: bool, now_s: float) -> PlanResult:
        """The checked answer, charged its emulated time (with the reasoning budget when the model is asked)."""
        budget = 0 if stop else self.reasoning.tokens_for(self.emulator.target.name, str(text), query_class(text))
        model = EmulatedBestOfN(self.model, self.emulator, deadline_ms=self.deadline_ms,
                                accept=verifier_accepts(scene, self.limits, now_s=now_s,
                                                        utterance=text if isinstance(text, str) else None),
                                reasoning_tokens=budget)
        if self.scene is None and not stop and not utterance_problem(text):
            result = no_scene_result(text)
        else:
            result = answer(model, scene, text, self.limits, now_s=now_s)
        choice = model.last_choice  # None when the model was not asked (stop, bad or sceneless input)
        timing = choice.timing if choice else self.emulator.plan_time(result.prompt_tokens, result.tokens)
        self.last_emulated_ms = timing.emulated_ms
        return result.with_emulation(timing.emulated_ms, emulated_details(timing, choice))

    def _release(self, item: HeldAnswer, now_s: float, *, stop: bool = False) -> list:
        """The answer's record (stamped with its query time), then what acting on it at ``now_s`` publishes."""
        result = item.result
        out = [PlanRecord(item.plan_id, item.query_s, result), Log(INFO, answer_line(result))]
        if result.status is PlanStatus.OK and not stop:  # a stop was acted on when it was heard
            preempted_id, self.running_plan_id = self.running_plan_id, item.plan_id
            commands = self.executor.start(result.steps, item.scene.with_robot(self.pose), now_s)
            out += self._dispatch(commands, now_s, preempted_plan_id=preempted_id)
        elif result.status is not PlanStatus.OK and " ".join(result.reasons):  # clarify: the question; rejected: why
            out.append(Say(" ".join(result.reasons)))
        return out

    def _drop_held(self) -> list:
        """A stop cancels answers still held: each is recorded (pacing.cancelled) but never executed or said."""
        out = []
        while self.held:
            item = self.held.popleft()
            result = item.result.with_pacing({**(item.result.pacing or {}), "cancelled": True})
            out += [PlanRecord(item.plan_id, item.query_s, result),
                    Log(INFO, f"'{short(result.utterance)}' cancelled by a stop before its emulated release")]
        return out

    # ---- manipulator replies ---------------------------------------------------------------------------------

    def _handle_reply(self, reply: Reply, status: str, now_s: float) -> tuple:
        if reply.kind == GRIPPER_CLOSE and not reply.succeeded:
            out = (Log(WARN, "the gripper did not close on the object; stopping the plan"),)
            return out + self._dispatch(self.executor.stop(now_s), now_s) + (Say(GRASP_FAILED_REASON),)
        out = (Log(WARN, "the gripper did not confirm opening"),) \
            if reply.kind == GRIPPER_OPEN and not reply.succeeded else ()
        out += self._passed(reply.released, now_s)
        if reply.kind == ARM:
            out += self._dispatch(self.executor.on_manipulator_status(status, now_s), now_s)
        return out

    # ---- output --------------------------------------------------------------------------------------------

    def _dispatch(self, commands, now_s: float, *, preempted_plan_id: int | None = None) -> tuple:
        """The executor's commands in order, motion through the gate (it may hold some back)."""
        out = []
        for command in commands:
            out += self._passed(self.gate.submit(command, now_s), now_s, preempted_plan_id=preempted_plan_id)
        return tuple(out)

    def _passed(self, commands, now_s: float, *, preempted_plan_id: int | None = None) -> tuple:
        """Commands the gate let through; events become records, CancelGoals also clears the gate."""
        out = []
        for command in commands:
            if isinstance(command, PlanEvent):
                plan_id = self.running_plan_id
                if command.kind is PlanEventKind.PLAN_PREEMPTED and preempted_plan_id is not None:
                    plan_id = preempted_plan_id
                out.append(EventRecord(plan_id, now_s, command))
                continue
            if isinstance(command, CancelGoals):  # what is in flight belongs to an ended plan; nothing held goes
                self.gate.cancel()
            out.append(command)
        return tuple(out)

    # ---- what the node reports ------------------------------------------------------------------------------

    def status(self, now_s: float) -> dict:
        """Readiness and the numbers /diagnostics shows."""
        scene_age_s = now_s - self.scene.stamp_s if self.scene is not None else math.nan
        pose_known = math.isfinite(self.pose.x)
        problems = []
        if self.scene is None:
            problems.append("no perception yet")
        elif not scene_age_s <= self.limits.max_scene_age_s:
            problems.append(f"perception is {scene_age_s:.1f} s old")
        if not pose_known:
            problems.append("no odometry yet")
        return {"problems": problems, "scene_age_s": scene_age_s, "pose_known": pose_known}
