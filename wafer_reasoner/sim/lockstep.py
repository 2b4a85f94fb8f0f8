"""The reasoner's loop without ROS, in lockstep simulated time: for studies whose numbers must repeat exactly.

    run = Lockstep(world, model, emulator, limits)
    run.say("go to the kitchen")            # planned now; released at now + its emulated latency
    run.advance(4.0)                        # the world and the executor move 4 simulated seconds

What the node does over DDS with ``emulator.pacing: emulated`` and ``use_sim_time``, done in one process: an
utterance is planned at once (the simulation waits for the host, as a paused simulator would, so the host's own
speed never shows), the answer is held until query time + the emulated latency of the (target, hardware) pair,
then the executor starts it and its commands drive the stand-in world (``sim/world.py``). Same scene, same
utterances, same pair: the same trajectory, to the last bit. A stop-like utterance stops at once, as in the node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from wafer_reasoner.emulator.deadline import EmulatedBestOfN
from wafer_reasoner.engine.planner_model import verified_plans
from wafer_reasoner.planner.executor import (
    ArmTarget,
    CancelGoals,
    Executor,
    GripperCommand,
    NavigationGoal,
    VelocityCommand,
)
from wafer_reasoner.planner.query import PlanResult, PlanStatus, answer
from wafer_reasoner.planner.stop_command import is_stop_command
from wafer_reasoner.sim import world as sim

CONTROL_DT_S = 0.02  # the executor sees odometry and ticks every world step


@dataclass(frozen=True)
class Sample:
    time_s: float
    x: float
    y: float
    yaw: float
    linear_mps: float
    angular_radps: float


@dataclass
class _Held:
    result: PlanResult
    release_s: float
    scene: object


@dataclass
class Lockstep:
    world: sim.World
    model: object  # PlannerModel (or anything with generate(scene, utterance))
    emulator: object  # Emulator: the charged (target, hardware) pair
    limits: object  # SafetyLimits
    places: tuple = ()
    deadline_ms: float = 0.0  # best-of-N deadline in emulated time
    executor: Executor = None
    trace: list = field(default_factory=list)  # Sample per world step
    goals: list = field(default_factory=list)  # (time_s, NavigationGoal) as applied to the world
    answers: list = field(default_factory=list)  # (query_s, release_s, PlanResult)
    _held: list = field(default_factory=list)

    def __post_init__(self):
        if self.executor is None:
            self.executor = Executor(self.limits)

    @property
    def now_s(self) -> float:
        return self.world.time_s

    def scene(self):
        return replace(self.world.scene(stamp_s=self.now_s), places=tuple(self.places))

    def say(self, text: str) -> PlanResult:
        """Plan ``text`` now; it runs once its emulated latency has passed (a stop: at once)."""
        now_s, scene = self.now_s, self.scene()
        if is_stop_command(text):
            self._held.clear()
            self._apply(self.executor.stop(now_s))
        wrapped = EmulatedBestOfN(self.model, self.emulator, deadline_ms=self.deadline_ms,
                                  accept=verified_plans(scene, self.limits, now_s=now_s))  # as the node does
        result = answer(wrapped, scene, text, self.limits, now_s=now_s)
        choice = wrapped.last_choice
        emulated_ms = choice.timing.emulated_ms if choice else 0.0
        result = result.with_emulation(emulated_ms, choice.to_dict() if choice else {})
        release_s = now_s + emulated_ms / 1000.0
        self.answers.append((now_s, release_s, result))
        if not is_stop_command(text):
            self._held.append(_Held(result, release_s, scene))
        return result

    def advance(self, duration_s: float) -> None:
        """Step the world and the executor ``duration_s`` simulated seconds, releasing held answers on time."""
        end_s = self.now_s + duration_s
        while self.now_s < end_s - 1e-9:
            self._release_due()
            dt = min(CONTROL_DT_S, end_s - self.now_s)
            if self._held:  # land exactly on the next release, so a reaction is not rounded to a control step
                dt = min(dt, max(self._held[0].release_s - self.now_s, 1e-6))
            replies = self.world.step(dt)
            now_s = self.now_s
            for reply in replies:
                self._apply(self.executor.on_manipulator_status(reply.value, now_s))
            self._apply(self.executor.on_odom(self.world.robot, now_s))
            self._apply(self.executor.tick(now_s))
            robot, (linear, angular) = self.world.robot, self.world.velocity
            self.trace.append(Sample(now_s, robot.x, robot.y, robot.yaw, linear, angular))

    def _release_due(self) -> None:
        while self._held and self._held[0].release_s <= self.now_s + 1e-12:
            held = self._held.pop(0)
            if held.result.status is PlanStatus.OK:
                scene = held.scene.with_robot(self.world.robot)
                self._apply(self.executor.start(held.result.steps, scene, self.now_s))

    def _apply(self, commands) -> None:
        """Executor commands onto the world (what sim_world does with the node's messages)."""
        for command in commands:
            if isinstance(command, NavigationGoal):
                self.world.set_goal(command.x, command.y, command.yaw)
                self.goals.append((self.now_s, command))
            elif isinstance(command, VelocityCommand):
                self.world.set_cmd_vel(command.linear_mps, command.angular_radps)
            elif isinstance(command, CancelGoals):
                self.world.stop()
            elif isinstance(command, ArmTarget):
                self._replies(self.world.command_arm(command.x, command.y, command.z))
            elif isinstance(command, GripperCommand):
                self._replies(self.world.command_gripper(sim.GripperCommand.OPEN if command.open
                                                         else sim.GripperCommand.CLOSE))

    def _replies(self, replies) -> None:
        for reply in replies:
            self._apply(self.executor.on_manipulator_status(reply.value, self.now_s))


def path_length_m(trace, start_s: float, end_s: float) -> float:
    """Distance the base travelled between two simulated times."""
    points = [(s.x, s.y) for s in trace if start_s <= s.time_s <= end_s]
    return sum(math.dist(a, b) for a, b in zip(points, points[1:]))
