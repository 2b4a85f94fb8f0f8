"""Judging a demo scenario from what was seen (no ROS).

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
from typing import Optional

from wafer_reasoner.demo.timeline import SETTLE_S, Tag, quoted
from wafer_reasoner.planner.language import Clarify, PlanSyntaxError, Stop, parse_plan
from wafer_reasoner.planner.scene import Scene, distance
from wafer_reasoner.sim.scenario import Scenario, check_plan, position, unmet_conditions


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
        subject, target = position(near.subject, scene), position(near.target, scene)
        if subject is not None and target is not None:
            gap = distance(subject[0], subject[1], target[0], target[1])
            parts.append(f"{near.subject} {gap:.2f} m from {near.target}")
    return "; ".join(parts) or "plan accepted"


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
