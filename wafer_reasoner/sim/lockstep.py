"""The reasoner's loop without ROS, in lockstep simulated time: for studies whose numbers must repeat exactly.

    run = Lockstep(world, model, emulator, limits)
    run.say("go to the kitchen")            # planned now; released at now + its emulated latency
    run.advance(4.0)                        # the world and the reasoner move 4 simulated seconds

The same ``ReasonerCore`` as ``reasoner_node`` with ``emulator.pacing: emulated`` and ``use_sim_time``, driven in
one process: an utterance is planned at once (the simulation waits for the host, as a paused simulator would,
so the host's own speed never shows), the answer is held until query time + the emulated latency of the
(target, hardware) pair, then the executor starts it and the core's commands drive the stand-in world
(``sim/world.py``) as sim_world would: odometry every world step, perception at sim_world's scene rate, every
arm and gripper command answered. Same scene, same utterances, same pair: the same trajectory, to the last bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from wafer_reasoner.planner.commands import (
    ArmTarget,
    CancelGoals,
    GripperCommand,
    NavigationGoal,
    Say,
    VelocityCommand,
)
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.runtime.core import EMULATED, EventRecord, PlanRecord, ReasonerCore
from wafer_reasoner.runtime.gate import format_reply
from wafer_reasoner.runtime.query import PlanResult
from wafer_reasoner.sim import world as sim

CONTROL_DT_S = 0.02  # the core sees odometry and ticks every world step
SCENE_PERIOD_S = 0.2  # perception as sim_world publishes it (scene_rate_hz 5)


@dataclass(frozen=True)
class Sample:
    time_s: float
    x: float
    y: float
    yaw: float
    linear_mps: float
    angular_radps: float


@dataclass
class Lockstep:
    world: sim.World
    model: object  # PlannerModel (or anything with generate(scene, utterance))
    emulator: object  # Emulator: the charged (target, hardware, stack) triple
    limits: object  # SafetyLimits
    places: tuple = ()
    deadline_ms: float = 0.0  # best-of-N deadline in emulated time
    reasoning: object = None  # ReasoningSettings: hidden reasoning budgets (None: none)
    executor: Executor = None
    trace: list = field(default_factory=list)  # Sample per world step
    goals: list = field(default_factory=list)  # (time_s, NavigationGoal) as applied to the world
    records: list = field(default_factory=list)  # PlanRecord and EventRecord, in the order the core made them
    said: list = field(default_factory=list)  # (time_s, text) the robot said
    core: ReasonerCore = None
    _next_scene_s: float = -math.inf
    _owners: sim.ReplyOwners = field(default_factory=sim.ReplyOwners)  # replies echo the command ids

    def __post_init__(self):
        if self.executor is None:
            self.executor = Executor(self.limits)
        extra = {"reasoning": self.reasoning} if self.reasoning is not None else {}
        self.core = ReasonerCore(self.model, self.emulator, self.limits, self.executor, places=self.places,
                                 pacing=EMULATED, deadline_ms=self.deadline_ms, **extra)
        self._apply(self.core.on_odom(self.world.robot, self.world.velocity, self.now_s))
        self._perceive()

    @property
    def now_s(self) -> float:
        return self.world.time_s

    def scene(self):
        return replace(self.world.scene(stamp_s=self.now_s), places=tuple(self.places))

    def say(self, text: str) -> PlanResult:
        """Plan ``text`` now, against what the robot sees now; it runs once its emulated latency has passed (a
        stop: at once). Returns the answer as planned."""
        self._perceive()
        self._apply(self.core.on_utterance(text, self.now_s))
        return self.core.last_result

    def advance(self, duration_s: float) -> None:
        """Step the world and the reasoner ``duration_s`` simulated seconds, releasing held answers on time."""
        end_s = self.now_s + duration_s
        while self.now_s < end_s - 1e-9:
            self._apply(self.core.release_due(self.now_s, slack_s=1e-12))
            dt = min(CONTROL_DT_S, end_s - self.now_s)
            due_s = self.core.next_release_s
            if due_s is not None:  # land exactly on the next release, so a reaction is not rounded to a step
                dt = min(dt, max(due_s - self.now_s, 1e-6))
            replies = self._owners.stepped(self.world, self.world.step(dt))
            now_s = self.now_s
            self._replies(replies)
            if now_s >= self._next_scene_s:
                self._perceive()
            self._apply(self.core.on_odom(self.world.robot, self.world.velocity, now_s))
            self._apply(self.core.tick(now_s))
            robot, (linear, angular) = self.world.robot, self.world.velocity
            self.trace.append(Sample(now_s, robot.x, robot.y, robot.yaw, linear, angular))

    def _perceive(self) -> None:
        self._next_scene_s = self.now_s + SCENE_PERIOD_S
        self._apply(self.core.on_scene(self.scene(), self.now_s))

    def _apply(self, outputs) -> None:
        """The core's outputs onto the world (what sim_world does with the node's messages)."""
        for item in outputs:
            if isinstance(item, (PlanRecord, EventRecord)):
                self.records.append(item)
            elif isinstance(item, Say):
                self.said.append((self.now_s, item.text))
            elif isinstance(item, NavigationGoal):
                self.world.set_goal(item.x, item.y, item.yaw)
                self.goals.append((self.now_s, item))
            elif isinstance(item, VelocityCommand):
                self.world.set_cmd_vel(item.linear_mps, item.angular_radps)
            elif isinstance(item, CancelGoals):
                self.world.stop()
            elif isinstance(item, ArmTarget):
                busy = self.world.manipulation_busy
                replies = self.world.command_arm(item.x, item.y, item.z)
                self._replies(self._owners.command(self.world, replies, item.command_id, busy))
            elif isinstance(item, GripperCommand):
                busy = self.world.manipulation_busy
                replies = self.world.command_gripper(sim.GripperCommand.OPEN if item.open else sim.GripperCommand.CLOSE)
                self._replies(self._owners.command(self.world, replies, item.command_id, busy))

    def _replies(self, replies) -> None:
        """(status, command_id) pairs, answered as a controller would: the status and the id."""
        for status, command_id in replies:
            text = format_reply(status is sim.ManipulationStatus.SUCCEEDED, command_id or None)
            self._apply(self.core.on_reply(text, self.now_s))


def path_length_m(trace, start_s: float, end_s: float) -> float:
    """Distance the base travelled between two simulated times."""
    points = [(s.x, s.y) for s in trace if start_s <= s.time_s <= end_s]
    return sum(math.dist(a, b) for a, b in zip(points, points[1:]))
