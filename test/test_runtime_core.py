"""ReasonerCore (runtime/core.py) without ROS: what it publishes, in order, for each event.

The planner model is a scripted one (it writes the plan a test names), so each test controls the plan; the
emulator, executor, verifier and gate are the real ones.
"""

import math
from dataclasses import dataclass

import pytest

from wafer_reasoner.emulator.pacing import EMULATED
from wafer_reasoner.emulator.reasoning import ReasoningBudget, ReasoningSettings
from wafer_reasoner.planner.commands import (
    ArmTarget,
    CancelGoals,
    GripperCommand,
    NavigationGoal,
    PlanEventKind,
    Say,
    VelocityCommand,
)
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject
from wafer_reasoner.runtime.core import (
    GRASP_FAILED_REASON,
    NO_SCENE_REASON,
    WARN,
    EventRecord,
    Log,
    PlanRecord,
    ReasonerCore,
)
from wafer_reasoner.runtime.emulation import emulator_for
from wafer_reasoner.runtime.outbox import BUSY_REASON

LIMITS = SafetyLimits()
PLACES = (NamedPlace("kitchen", 4.0, 0.0),)
FETCH = "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"


@dataclass
class Generation:
    text: str
    tokens: int = 5
    prompt_tokens: int = 40
    prefill_ms: float = 1.0
    decode_ms: float = 2.0
    total_ms: float = 3.0
    tokens_per_s: float = 1000.0
    candidate_texts: tuple = ()


class ScriptedModel:
    """Writes the plan the test set for each utterance; counts the calls."""

    def __init__(self, plans: dict):
        self.plans, self.calls = plans, 0

    def generate(self, scene, utterance):
        self.calls += 1
        return Generation(self.plans[utterance])


@pytest.fixture(scope="module")
def emulator():
    return emulator_for("Llama-3.1-70B", "A100")  # the A100's default serving stack


def scene(stamp_s=0.0) -> Scene:
    return Scene(objects=(SceneObject("cup_1", "cup", "red", 1.5, 0.0, 0.8),),
                 people=(Person("user", -1.0, 0.0),), places=PLACES, stamp_s=stamp_s)


def core_with(plans, emulator, **options) -> ReasonerCore:
    return ReasonerCore(ScriptedModel(plans), emulator, LIMITS, Executor(LIMITS), places=PLACES, **options)


def ready(core, now_s=0.0) -> None:
    core.on_scene(scene(now_s), now_s)
    core.on_odom(RobotPose(0.0, 0.0, 0.0), (0.0, 0.0), now_s)


def of(kind, outputs) -> list:
    return [item for item in outputs if isinstance(item, kind)]


def test_a_stop_before_anything_else_zeroes_the_velocity_first_without_the_model(emulator):
    core = core_with({}, emulator)
    out = core.on_utterance("please stop", 1.0)
    assert out[0] == VelocityCommand(0.0, 0.0)
    [record] = of(PlanRecord, out)
    assert (record.plan_id, record.result.plan, record.result.status.value) == (1, "stop()", "ok")
    assert core.model.calls == 0
    assert record.result.timings_ms["emulated_ms"] == emulator.plan_time(0, 0).emulated_ms  # charged as not asked


def test_before_any_scene_an_utterance_is_refused_and_said(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)"}, emulator)
    out = core.on_utterance("go to the kitchen", 1.0)
    [record] = of(PlanRecord, out)
    assert record.result.reasons == (NO_SCENE_REASON,) and Say(NO_SCENE_REASON) in out
    assert core.model.calls == 0 and not of(NavigationGoal, out)


def test_until_the_first_odometry_nothing_moves(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)"}, emulator)
    core.on_scene(scene(), 0.0)
    out = core.on_utterance("go to the kitchen", 0.5)
    assert of(PlanRecord, out)[0].result.status.value == "rejected" and not of(NavigationGoal, out)


def test_an_ok_plan_is_recorded_then_started_and_ids_count_up(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)", "turn left": "rotate(90)"}, emulator)
    ready(core)
    out = core.on_utterance("go to the kitchen", 0.1)
    assert isinstance(out[0], PlanRecord) and out[0].plan_id == 1
    started = of(EventRecord, out)[0]
    assert (started.plan_id, started.event.kind) == (1, PlanEventKind.STEP_STARTED)
    assert of(NavigationGoal, out) == [NavigationGoal(4.0, 0.0, 0.0, 0)]
    second = core.on_utterance("turn left", 0.2)
    preempted = [r for r in of(EventRecord, second) if r.event.kind is PlanEventKind.PLAN_PREEMPTED]
    assert [r.plan_id for r in preempted] == [1] and of(PlanRecord, second)[0].plan_id == 2


def test_paced_answers_wait_for_their_emulated_time_in_the_order_asked(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)", "turn left": "rotate(90)"}, emulator,
                     pacing=EMULATED)
    ready(core)
    assert not of(PlanRecord, core.on_utterance("go to the kitchen", 1.0))  # held
    due_s = core.next_release_s
    assert due_s > 1.0 and core.release_due(due_s - 1e-3) == ()
    core.on_utterance("turn left", 1.0001)
    assert core.held[1].release_s >= core.held[0].release_s  # never overtakes the earlier answer
    released = core.release_due(due_s)
    assert [r.plan_id for r in of(PlanRecord, released)] == [1] and of(NavigationGoal, released)
    assert of(PlanRecord, released)[0].result.pacing["mode"] == EMULATED


def test_a_stop_cancels_held_answers_which_are_recorded_but_never_run(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)"}, emulator, pacing=EMULATED)
    ready(core)
    core.on_utterance("go to the kitchen", 1.0)
    out = core.on_utterance("stop", 1.001)
    records = of(PlanRecord, out)
    assert [r.plan_id for r in records] == [1, 2] and records[0].result.pacing["cancelled"]
    assert not of(NavigationGoal, out) and core.next_release_s is None


def replied(core, status: str, outputs, now_s: float) -> tuple:
    """The manipulator's answer to the one arm or gripper command in ``outputs``, echoing its id."""
    [command] = of(ArmTarget, outputs) + of(GripperCommand, outputs)
    return core.on_reply(f"{status} {command.command_id}", now_s)


def test_the_arm_waits_for_the_base_to_stand_still(emulator):
    core = core_with({"bring me the cup": FETCH}, emulator)
    ready(core)
    core.on_utterance("bring me the cup", 0.1)
    moving = core.on_odom(RobotPose(0.9, 0.0, 0.0), (0.3, 0.0), 5.0)  # at the cup, still rolling
    assert not of(ArmTarget, moving) and not of(GripperCommand, moving)
    still = core.on_odom(RobotPose(0.9, 0.0, 0.0), (0.0, 0.0), 5.5)
    assert [g.open for g in of(GripperCommand, still)] == [True] and not of(ArmTarget, still)
    after_open = replied(core, "succeeded", still, 6.5)
    assert len(of(ArmTarget, after_open)) == 1


def test_a_failed_grasp_stops_the_plan_and_says_why(emulator):
    core = core_with({"bring me the cup": FETCH}, emulator)
    ready(core)
    core.on_utterance("bring me the cup", 0.1)
    opening = core.on_odom(RobotPose(0.9, 0.0, 0.0), (0.0, 0.0), 5.0)
    reaching = replied(core, "succeeded", opening, 6.0)  # the open
    closing = replied(core, "succeeded", reaching, 7.0)  # the arm reached the cup: close
    assert [g.open for g in of(GripperCommand, closing)] == [False]
    out = replied(core, "failed", closing, 8.0)
    assert Say(GRASP_FAILED_REASON) in out and CancelGoals() in out
    failed = [r.event.kind for r in of(EventRecord, out)]
    assert PlanEventKind.PLAN_PREEMPTED in failed and core.executor.state.value == "preempted"


def test_a_reply_to_nothing_or_no_reply_at_all_is_reported_under_one_throttle_key(emulator):
    core = core_with({}, emulator)
    [stray] = of(Log, core.on_reply("succeeded 42", 1.0))
    [shouted] = of(Log, core.on_reply("SUCCEEDED", 1.1))
    assert stray.level == WARN and "answers no command" in stray.text and "is not 'succeeded'" in shouted.text
    assert stray.key == shouted.key != "" and core.counts["stray_replies"] == 2


def test_status_says_what_is_missing(emulator):
    core = core_with({}, emulator)
    assert core.status(0.0)["problems"] == ["no perception yet", "no odometry yet"]
    ready(core, 10.0)
    assert core.status(10.5)["problems"] == [] and core.status(20.0)["problems"][0].startswith("perception is")
    assert math.isnan(core.last_latency_ms)


# ---- hearing apart from planning: the queue, busy answers, stops ahead of queued plans ------------------------


def hear_all(core, texts, now_s=1.0) -> list:
    out = []
    for text in texts:
        out += core.hear(text, now_s)
    return out


def plan_next(core, now_s=1.0) -> tuple:
    """What the node's worker does for the oldest queued utterance: plan it, hand the answer back."""
    job = core.next_job(now_s)
    return core.planned(job, core.plan(job), now_s)


def test_hearing_queues_and_answers_come_back_one_record_each_in_order(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)", "turn": "rotate(90)"}, emulator)
    ready(core)
    assert hear_all(core, ["go to the kitchen", "turn"]) == [] and core.waiting == 2
    assert core.model.calls == 0  # hearing never plans
    first = plan_next(core)
    assert [r.plan_id for r in of(PlanRecord, first)] == [1] and of(NavigationGoal, first)
    assert core.next_job(1.0).plan_id == 2 and core.next_job(1.0) is None  # one job out at a time


def test_a_full_queue_answers_busy_at_once_in_order_and_says_so_once_per_burst(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)"}, emulator, queue_depth=2)
    ready(core)
    out = hear_all(core, ["go to the kitchen"] * 5)
    assert of(PlanRecord, out) == []  # busy answers wait for the earlier plan ids
    released = []
    for _ in range(2):
        released += plan_next(core)
    records = of(PlanRecord, released)
    assert [r.plan_id for r in records] == [1, 2, 3, 4, 5]
    assert [r.result.shed for r in records] == ["", "", "busy", "busy", "busy"]
    assert all(r.result.status.value == "rejected" for r in records[2:])
    assert [s.text for s in of(Say, released)] == [BUSY_REASON]  # once, not three times
    assert core.counts["busy"] == 3 and core.counts["records"] == 5 and core.waiting == 0
    later = hear_all(core, ["go to the kitchen"] * 3) + list(plan_next(core)) + list(plan_next(core))
    assert [s.text for s in of(Say, later)] == [BUSY_REASON]  # a new burst says it again


def test_a_stop_after_a_burst_acts_first_and_drops_what_was_queued_and_being_planned(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)"}, emulator, queue_depth=4)
    ready(core)
    hear_all(core, ["go to the kitchen"] * 6)
    job = core.next_job(1.0)  # plan 1 is being planned when the stop comes
    out = core.hear("stop", 1.01)
    assert out[0] == VelocityCommand(0.0, 0.0)
    records = of(PlanRecord, out)
    assert [r.plan_id for r in records] == list(range(1, 8))  # every record goes out with the stop's
    assert [r.result.shed for r in records] == ["stopped"] * 4 + ["busy", "busy", ""]
    assert records[-1].result.plan == "stop()" and [s.text for s in of(Say, out)] == [BUSY_REASON]  # not "stopped"
    late = core.planned(job, core.plan(job), 1.05)  # the answer being planned comes back: already recorded
    assert of(PlanRecord, late) == [] and not of(NavigationGoal, late) and core.waiting == 0
    assert core.counts["stopped"] == 4 and core.counts["records"] == 7


def test_the_emergency_stop_zeroes_first_stops_the_plan_and_drops_every_waiting_utterance(emulator):
    core = core_with({"go to the kitchen": "navigate(place:kitchen)"}, emulator)
    ready(core)
    core.on_utterance("go to the kitchen", 1.0)
    hear_all(core, ["go to the kitchen"] * 3)
    out = core.emergency_stop(2.0)
    assert out[0] == VelocityCommand(0.0, 0.0) and CancelGoals() in out
    assert [r.result.shed for r in of(PlanRecord, out)] == ["stopped"] * 3
    assert core.executor.state.value == "preempted" and core.counts["emergency_stops"] == 1


def test_a_planner_that_raises_still_answers_and_the_core_goes_on(emulator):
    class Broken:
        def generate(self, scene, utterance):
            raise MemoryError("out of memory")

    core = ReasonerCore(Broken(), emulator, LIMITS, Executor(LIMITS), places=PLACES)
    ready(core)
    [record] = of(PlanRecord, core.on_utterance("go to the kitchen", 1.0))
    assert record.result.status.value == "rejected" and "MemoryError" in record.result.reasons[0]


def test_the_reasoning_budget_is_charged_before_the_plan_and_paces_it(emulator):
    budgets = ReasoningSettings(default=ReasoningBudget(tokens=500),
                                classes=(("compound", ReasoningBudget(tokens=2000)),))
    core = core_with({"go to the kitchen": "navigate(place:kitchen)",
                      "go to the kitchen then turn": "navigate(place:kitchen); rotate(90)"}, emulator,
                     pacing=EMULATED, reasoning=budgets)
    core.on_scene(scene(), 0.0)
    core.on_odom(RobotPose(0.0, 0.0, 0.0), (0.0, 0.0), 0.0)
    core.on_utterance("go to the kitchen", 0.0)
    held = core.held[-1]
    details = held.result.emulated
    assert details["reasoning_tokens"] == 500
    plain = emulator.plan_time(details["prompt_tokens"], details["generated_tokens"])
    thought = emulator.plan_time(details["prompt_tokens"], details["generated_tokens"], reasoning_tokens=500)
    assert held.result.timings_ms["emulated_ms"] == pytest.approx(thought.emulated_ms)
    assert thought.emulated_ms > plain.emulated_ms and held.release_s == pytest.approx(thought.total_s)
    core.on_utterance("go to the kitchen then turn", 1.0)
    assert core.held[-1].result.emulated["reasoning_tokens"] == 2000  # two clauses: the compound budget
    out = core.on_utterance("stop", 2.0)
    stop = next(item for item in out if isinstance(item, PlanRecord) and item.result.plan == "stop()")
    assert stop.result.emulated["reasoning_tokens"] == 0  # a stop never waits for thinking
