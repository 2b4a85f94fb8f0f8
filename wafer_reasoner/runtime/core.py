"""ReasonerCore: the reasoner's loop without ROS. Events in, what to publish out, in order.

    core = ReasonerCore(model, emulator, limits, executor, places=places, pacing=EMULATED)
    core.on_scene(scene, now_s)          # perception (a Scene with the robot pose and the map's places)
    core.on_odom(pose, velocity, now_s)  # odometry; velocity (speed, turn rate) or None
    core.on_utterance(text, now_s)       # hear, plan, verify, (hold,) execute: all at once
    core.on_reply(text, now_s)           # manipulator/status
    core.emergency_stop(now_s)           # zero velocity, stop the executor, drop every waiting utterance
    core.tick(now_s)                     # timeouts, waits, rotation keep-alive, gripper replies overdue
    core.release_due(now_s)              # held answers whose emulated time has come (core.next_release_s)

``on_utterance`` is ``hear`` + ``plan`` + ``planned``. A node that must not plan inside its subscription
callback calls them apart: ``hear`` (fast: a stop acts here, anything else is queued or answered "busy"),
``next_job`` hands the oldest queued utterance to a worker, the worker calls ``plan(job)`` (touches no state of
the core, so it may run on another thread), and ``planned(job, result, now_s)`` back on the node's thread
releases the answer. At most one job is out at a time.

Each returns a tuple of outputs to publish in order: the executor's commands (``NavigationGoal``,
``VelocityCommand``, ``ArmTarget``, ``GripperCommand``, ``CancelGoals``, ``Say``) after the motion gate,
``PlanRecord`` and ``EventRecord`` for ``reasoner/plan``, and ``Log`` lines. ``reasoner_node`` publishes them over
DDS; ``sim/lockstep.py`` applies them to the stand-in world in simulated time. Every utterance gets exactly one
PlanRecord, numbered from 1 in the order heard and published in that order (``runtime/outbox.py``). Time is
always passed in (the node clock), so simulated time works.

- A stop command zeroes the velocity, cancels held answers, drops the queued utterances and the one being
  planned (each recorded, shed "stopped") and stops the executor before anything else, even before any
  perception or odometry. ``emergency_stop`` does the same without an utterance.
- At most ``queue_depth`` utterances wait for the planner; one more is answered at once, shed "busy".
- Any other utterance before the first scene is refused ("I can't see anything yet.") without the model; until
  the first odometry the pose is unknown and the verifier refuses every plan that moves.
- Every plan is charged the emulated time of the (target, hardware, stack) triple, with the target's hidden
  reasoning budget (``reasoning``: tokens it thinks before the plan, by target and query class) when the model is
  asked. With ``pacing=EMULATED`` an answer is held until query time + that time (in the order asked), or released
  at once, ``behind_ms`` late, when the host was slower; ``clock`` reads the caller's clock after planning in
  ``on_utterance`` (None: planning takes no time, as in lockstep). The best-of-N deadline counts the reasoning too.
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
from wafer_reasoner.runtime.backends import QueryCall, with_backend_report
from wafer_reasoner.runtime.best_of_n import EmulatedBestOfN
from wafer_reasoner.runtime.emulation import emulated_details, query_class
from wafer_reasoner.runtime.gate import (
    ARM,
    FAILED,
    GRIPPER_CLOSE,
    GRIPPER_OPEN,
    MALFORMED,
    SUCCEEDED,
    UNEXPECTED,
    MotionGate,
    Reply,
)
from wafer_reasoner.runtime.outbox import BUSY, NOW, STOPPED, Answer, Outbox, shed_result
from wafer_reasoner.runtime.query import (
    PlanResult,
    PlanStatus,
    answer,
    loggable,
    utterance_problem,
    verifier_accepts,
)
from wafer_reasoner.understanding.stop import holds_a_stop, is_stop_command

NO_SCENE_REASON = "I can't see anything yet."
GRASP_FAILED_REASON = "I couldn't grasp it."
UNKNOWN_POSE = RobotPose(math.nan, math.nan, math.nan)  # until the first odom: the verifier refuses to move
LOG_UTTERANCE_CHARS = 80
DEFAULT_QUEUE_DEPTH = 8
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
    key: str = ""  # lines with the same key repeat: the node shows them throttled (none: every line)


@dataclass(frozen=True)
class Job:
    """One utterance to plan, with what the robot knew when planning began."""

    plan_id: int
    text: object
    heard_s: float
    start_s: float  # when planning began: the query time the verifier and the record use
    scene: Scene  # the latest scene then, with the robot pose then
    scene_known: bool  # False before the first perception


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


def planner_failure(utterance, error: Exception) -> PlanResult:
    """The answer when planning itself broke: rejected, with the error's kind (the node keeps running)."""
    return PlanResult(
        utterance=loggable(utterance), plan="", steps=(), status=PlanStatus.REJECTED,
        reasons=(f"My planner failed ({type(error).__name__}).",),
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
                 gripper_replies: bool = True, reply_ids: bool = True, queue_depth: int = DEFAULT_QUEUE_DEPTH,
                 clock=None, reasoning=NO_REASONING):
        self.model, self.emulator, self.limits, self.executor = model, emulator, limits, executor
        self.reasoning = reasoning  # ReasoningSettings: hidden tokens charged before each plan the model writes
        self.places = tuple(places)
        self.pacing = check_mode(pacing)
        self.deadline_ms = float(deadline_ms)  # best-of-N deadline, emulated time
        self.queue_depth = int(queue_depth)
        self.clock = clock
        self.gate = MotionGate(gripper_replies=gripper_replies, reply_ids=reply_ids)
        self.scene: Scene | None = None  # the latest perception; None before the first
        self.pose = UNKNOWN_POSE
        self.queue: deque = deque()  # Job-to-be: (plan_id, text, heard_s), oldest first
        self.in_flight: Job | None = None  # handed to the planner, answer not back yet
        self._in_flight_dropped = False  # a stop came while it was planned: its answer is already recorded
        self._shedding = False  # answering "busy" since the queue was last empty (said once per burst)
        self.outbox = Outbox()
        self.plans = 0  # plan_id of the latest utterance
        self.running_plan_id = 0  # plan_id the executor's events belong to
        self.counts = dict.fromkeys(("records", BUSY, STOPPED, "stray_replies", "emergency_stops"), 0)
        self.last_result: PlanResult | None = None
        self.last_latency_ms = self.last_emulated_ms = self.last_behind_ms = math.nan

    @property
    def next_release_s(self) -> float | None:
        due_s = self.outbox.next_release_s
        return due_s if due_s is not None and due_s > NOW else None

    @property
    def held(self) -> tuple:
        return self.outbox.held

    @property
    def waiting(self) -> int:
        """Utterances heard and not yet answered by the planner (queued + the one being planned)."""
        return len(self.queue) + (self.in_flight is not None)

    # ---- utterances ----------------------------------------------------------------------------------------

    def on_utterance(self, text, now_s: float) -> tuple:
        """Hear, plan and release in one call (lockstep, tests): what a node does across threads."""
        out = list(self.hear(text, now_s))
        while (job := self.next_job(now_s)) is not None:
            result = self.plan(job)
            out += self.planned(job, result, self.clock() if self.clock is not None else now_s)
        return tuple(out)

    def hear(self, text, now_s: float) -> tuple:
        """Number the utterance; a stop acts at once, anything else waits for the planner or is answered busy."""
        self.plans += 1
        if isinstance(text, str) and is_stop_command(text):  # never wait for the model to stop
            return self._stop_heard(self.plans, text, now_s)
        if len(self.queue) >= self.queue_depth:
            return self._shed_busy(self.plans, text, now_s)
        self.queue.append((self.plans, text, now_s))
        return ()

    def hear_all(self, texts, now_s: float) -> tuple:
        """Utterances taken from the wire together, in order. A stop among them stops the robot before any of
        them is even numbered (what came before it is dropped by it all the same)."""
        out = []
        if holds_a_stop(texts):
            out += [VelocityCommand(0.0, 0.0), *self._dispatch(self.executor.stop(now_s), now_s)]
        for text in texts:
            out += self.hear(text, now_s)
        return tuple(out)

    def next_job(self, now_s: float) -> Job | None:
        """The oldest queued utterance, to plan now (None while one is being planned, or none waits)."""
        if self.in_flight is not None or not self.queue:
            return None
        plan_id, text, heard_s = self.queue.popleft()
        if not self.queue:
            self._shedding = False
        scene = (self.scene if self.scene is not None else Scene()).with_robot(self.pose)
        self.in_flight = Job(plan_id, text, heard_s, now_s, scene, self.scene is not None)
        return self.in_flight

    def plan(self, job: Job) -> PlanResult:
        """The checked answer to ``job``, charged its emulated time (with the reasoning budget when the model is
        asked). Reads no mutable state of the core (a worker thread may call it); never raises."""
        stop = isinstance(job.text, str) and is_stop_command(job.text)
        try:
            budget = 0 if stop else self.reasoning.tokens_for(self.emulator.target.name, str(job.text),
                                                              query_class(job.text))
            call = QueryCall(self.model)  # the backend's report of this query (runtime/backends.py)
            model = EmulatedBestOfN(call, self.emulator, deadline_ms=self.deadline_ms, reasoning_tokens=budget,
                                    accept=verifier_accepts(job.scene, self.limits, now_s=job.start_s,
                                                            utterance=job.text if isinstance(job.text, str) else None))
            if not job.scene_known and not stop and not utterance_problem(job.text):
                result = no_scene_result(job.text)
            else:
                result = with_backend_report(answer(model, job.scene, job.text, self.limits, now_s=job.start_s),
                                             call.report)
            choice = model.last_choice  # None when the model was not asked (stop, bad or sceneless input)
            timing = choice.timing if choice else self.emulator.plan_time(result.prompt_tokens, result.tokens)
            result = result.with_emulation(timing.emulated_ms, emulated_details(timing, choice))
        except Exception as error:  # noqa: BLE001 - every utterance gets an answer, whatever broke
            result = planner_failure(job.text, error)
        return result.with_timing("queued_ms", max(0.0, job.start_s - job.heard_s) * 1000.0)

    def planned(self, job: Job, result: PlanResult, now_s: float) -> tuple:
        """The planner's answer to ``job`` is back at ``now_s``: hold it (pacing) or release it, in order."""
        self.in_flight = None
        if self._in_flight_dropped:  # a stop came while it was planned; recorded then
            self._in_flight_dropped = False
            return tuple(self._release_due(now_s))
        self.last_result = result
        self.last_latency_ms = result.timings_ms.get("host_total_ms", math.nan)
        self.last_emulated_ms = result.timings_ms.get("emulated_ms", math.nan)
        if self.pacing == OFF:
            self.outbox.put(Answer(result.with_pacing({"mode": OFF}), job.plan_id, job.start_s, NOW, job.scene))
            return tuple(self._release_due(now_s))
        release = pace(job.start_s, now_s, result.timings_ms["emulated_ms"],
                       not_before_s=self.outbox.latest_release_s())
        self.last_behind_ms = release.behind_ms
        pacing = {"mode": EMULATED, "behind_ms": release.behind_ms, "held_ms": release.wait_s * 1000.0}
        self.outbox.put(Answer(result.with_pacing(pacing), job.plan_id, job.start_s, release.release_s, job.scene))
        return tuple(self._release_due(now_s))

    def release_due(self, now_s: float, slack_s: float = 0.0) -> tuple:
        """Release every held answer whose time has come (up to ``slack_s`` early, for float round-off)."""
        return tuple(self._release_due(now_s, slack_s))

    def emergency_stop(self, now_s: float, *, reason: str = "emergency stop") -> tuple:
        """Zero velocity, drop every waiting utterance and held answer, stop the executor; no record of its own.
        Another ``reason`` (a lifecycle deactivation) does the same without counting an emergency stop."""
        self.counts["emergency_stops"] += reason == "emergency stop"
        out = [VelocityCommand(0.0, 0.0), Log(WARN, f"{reason}: velocity zeroed, plan stopped", "estop")]
        out += self._drop_waiting(now_s)
        out += self._dispatch(self.executor.stop(now_s), now_s)
        return tuple(out + self._release_due(now_s))

    def _stop_heard(self, plan_id: int, text: str, now_s: float) -> tuple:
        out = [VelocityCommand(0.0, 0.0)]
        out += self._drop_waiting(now_s)
        out += self._dispatch(self.executor.stop(now_s), now_s)
        scene = (self.scene if self.scene is not None else Scene()).with_robot(self.pose)
        result = self.plan(Job(plan_id, text, now_s, now_s, scene, self.scene is not None))
        result = result.with_pacing({"mode": OFF, "stop": True} if self.pacing != OFF else {"mode": OFF})
        self.last_result = result
        self.last_latency_ms = result.timings_ms.get("host_total_ms", math.nan)
        self.last_emulated_ms = result.timings_ms.get("emulated_ms", math.nan)
        self.outbox.put(Answer(result, plan_id, now_s, NOW, scene, act=False))  # acted on above
        return tuple(out + self._release_due(now_s))

    def _shed_busy(self, plan_id: int, text, now_s: float) -> tuple:
        self.counts[BUSY] += 1
        speak, self._shedding = not self._shedding, True  # said once per burst
        self.outbox.put(Answer(shed_result(text, BUSY), plan_id, now_s, NOW, Scene(), act=False, speak=speak))
        return tuple(self._release_due(now_s))

    def _drop_waiting(self, now_s: float) -> list:
        """A stop: held answers are recorded cancelled; queued utterances and the one being planned shed."""
        out = [Log(INFO, f"'{short(a.result.utterance)}' cancelled by a stop before its emulated release")
               for a in self.outbox.cancel_held()]
        dropped = [(plan_id, text, heard_s) for plan_id, text, heard_s in self.queue]
        if self.in_flight is not None and not self._in_flight_dropped:
            dropped.append((self.in_flight.plan_id, self.in_flight.text, self.in_flight.heard_s))
            self._in_flight_dropped = True
        self.queue.clear()
        self._shedding = False
        for plan_id, text, heard_s in dropped:
            self.counts[STOPPED] += 1
            self.outbox.put(Answer(shed_result(text, STOPPED), plan_id, heard_s, NOW, Scene(), act=False, speak=False))
        if dropped:
            out.append(Log(INFO, f"a stop dropped {len(dropped)} utterance(s) waiting for the planner"))
        return out

    def _release_due(self, now_s: float, slack_s: float = 0.0) -> list:
        out = []
        for item in self.outbox.due(now_s, slack_s):
            out += self._release(item, now_s)
        return out

    def _release(self, item: Answer, now_s: float) -> list:
        """The answer's record (stamped with its query time), then what acting on it at ``now_s`` publishes."""
        result = item.result
        self.counts["records"] += 1
        out = [PlanRecord(item.plan_id, item.query_s, result), Log(INFO, answer_line(result), result.shed)]
        if result.status is PlanStatus.OK and item.act:
            preempted_id, self.running_plan_id = self.running_plan_id, item.plan_id
            commands = self.executor.start(result.steps, item.scene.with_robot(self.pose), now_s)
            out += self._dispatch(commands, now_s, preempted_plan_id=preempted_id)
        elif result.status is not PlanStatus.OK and item.speak and " ".join(result.reasons):
            out.append(Say(" ".join(result.reasons)))  # clarify: the question; rejected: why
        return out

    # ---- perception and odometry ---------------------------------------------------------------------------

    def on_scene(self, scene: Scene, now_s: float) -> tuple:
        self.scene = scene
        return self._dispatch(self.executor.on_scene(scene, now_s), now_s)

    def on_odom(self, pose: RobotPose, velocity, now_s: float) -> tuple:
        """``velocity``: (speed m/s, turn rate rad/s) of the base, or None when odometry has none."""
        self.pose = pose
        out = list(self.gate.on_base_velocity(*velocity, now_s)) if velocity is not None else []
        return tuple(out) + self._dispatch(self.executor.on_odom(pose, now_s), now_s)

    def on_reply(self, text, now_s: float) -> tuple:
        """A manipulator/status message as received (``succeeded`` / ``failed``, with the command id unless the
        gate matches by order)."""
        reply = self.gate.on_reply(text, now_s)
        if reply.kind in (UNEXPECTED, MALFORMED):
            self.counts["stray_replies"] += 1
            why = "is not 'succeeded' or 'failed' [id]" if reply.kind == MALFORMED else "answers no command"
            return (Log(WARN, f"manipulator/status '{short(text)}' {why}; ignored", "manipulator_reply"),)
        return self._handle_reply(reply, now_s)

    def on_navigation_result(self, succeeded: bool, detail: str, now_s: float) -> tuple:
        """The navigation stack's verdict on the goal in flight (a NavigateToPose result)."""
        return self._dispatch(self.executor.on_navigation_result(succeeded, detail, now_s), now_s)

    def on_navigation_feedback(self, remaining_m: float, now_s: float) -> None:
        """The navigation stack's progress on the goal in flight (NavigateToPose feedback)."""
        self.executor.on_navigation_feedback(remaining_m, now_s)

    def tick(self, now_s: float) -> tuple:
        out = ()
        expired = self.gate.expire(now_s, self.executor.manip_timeout_s)
        if expired is not None:
            out = (Log(WARN, f"no reply to a gripper command ({expired.kind}) in time"),)
            out += self._handle_reply(expired, now_s)
        return out + self._dispatch(self.executor.tick(now_s), now_s)

    # ---- manipulator replies ---------------------------------------------------------------------------------

    def _handle_reply(self, reply: Reply, now_s: float) -> tuple:
        if reply.kind == GRIPPER_CLOSE and not reply.succeeded:
            out = (Log(WARN, "the gripper did not close on the object; stopping the plan"),)
            return out + self._dispatch(self.executor.stop(now_s), now_s) + (Say(GRASP_FAILED_REASON),)
        out = (Log(WARN, "the gripper did not confirm opening"),) \
            if reply.kind == GRIPPER_OPEN and not reply.succeeded else ()
        out += self._passed(reply.released, now_s)
        if reply.kind == ARM:
            status = SUCCEEDED if reply.succeeded else FAILED
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
