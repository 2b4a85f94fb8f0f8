"""The executor: runs a verified plan step by step as a pure state machine (no ROS, no clock).

The node feeds it events (``start``, ``on_odom``, ``on_scene``, ``on_manipulator_status``, ``tick``,
``stop``) with the node clock's ``now_s`` and publishes the commands each call returns, in order.
Simulated time works the same as real time because nothing here reads a clock.

Step semantics (also in ``docs/action_language.md``):

- ``navigate``: one NavigationGoal; done when odom is within ``nav_tolerance_m`` of it (position only) or the
  navigation stack reports success (``on_navigation_result``), failed when it reports failure or after
  ``nav_timeout_s`` (counted from the last NAV_PROGRESS_M of progress the stack's feedback reported, if any).
- ``pick``: open the gripper, ArmTarget at the object; on 'succeeded' close the gripper (now holding).
  Skipped when the object is already held.  ``place``/``handover``: ArmTarget, on 'succeeded' open.
  A manipulator 'failed' or ``manip_timeout_s`` fails the plan; the gripper is left as it is
  (opening it on failure could drop the object).
- ``rotate``: velocity commands, not a pose goal: a pose goal cannot express turns of 180 degrees or
  more (it takes the short way) and cmd_vel lets us enforce max_angular_speed_radps directly.
  Done when odom shows the turn within ``yaw_tolerance_rad``; fails after ``nav_timeout_s``.
- ``wait``: done after SEC of node time.  ``stop``: zero velocity, plan ends.  ``clarify``: Say, plan ends.
- ``follow``: a NavigationGoal at the stand-off pose from the person, refreshed from ``on_scene``;
  runs until preempted, fails when the person has not been seen for ``nav_timeout_s``.

Any end other than success (failure, ``stop()``, preemption by ``start()``) cancels goals in flight
and publishes zero velocity first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import goals
from .commands import (
    STOPPED,
    ArmPurpose,
    ArmTarget,
    CancelGoals,
    ExecutorState,
    GripperCommand,
    ManipulatorStatus,
    NavigationGoal,
    PlanEvent,
    PlanEventKind,
    Say,
    VelocityCommand,
    clamped_velocity,
)
from .language import (
    Clarify,
    Follow,
    Handover,
    Navigate,
    Pick,
    PlaceOn,
    PlanSyntaxError,
    Ref,
    Rotate,
    Stop,
    Wait,
    format_step,
)
from .limits import SafetyLimits
from .phrases import clarify_question, describe_ref
from .scene import RobotPose, Scene

MIN_ROTATE_SPEED_RADPS = 0.2  # below this many bases stall; the cap still wins if it is lower
ROTATE_GAIN_PER_S = 1.0  # angular speed = gain * remaining angle, so the turn slows before the end
NAV_PROGRESS_M = 0.1  # navigation feedback this much closer counts as progress (restarts the navigate timeout)


_MANIPULATION_STEPS = (Pick, PlaceOn, Handover)


class _StepFailed(Exception):
    """Raised inside a step handler; the executor turns it into Say + plan_failed."""


@dataclass
class _Progress:
    """Mutable bookkeeping of the running step (the only mutable record here, never returned)."""

    started_s: float
    goal: NavigationGoal | None = None
    rotated_rad: float = 0.0  # rotate: signed progress in the commanded direction
    last_yaw: float = 0.0
    last_seen_s: float = 0.0  # follow: when the person was last in a scene
    remaining_m: float = math.inf  # navigate: the least distance still to go the navigation stack reported


class Executor:
    """Runs one plan at a time; every method returns the commands to publish, in order."""

    def __init__(
        self,
        limits: SafetyLimits,
        nav_tolerance_m: float = 0.2,
        nav_timeout_s: float = 60.0,
        manip_timeout_s: float = 30.0,
        *,
        yaw_tolerance_rad: float = math.radians(3.0),
    ) -> None:
        for name, value in (
            ("nav_tolerance_m", nav_tolerance_m),
            ("nav_timeout_s", nav_timeout_s),
            ("manip_timeout_s", manip_timeout_s),
            ("yaw_tolerance_rad", yaw_tolerance_rad),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        # a navigate ends up to nav_tolerance_m from a stand-off pose; the arm must still reach from there
        if limits.standoff_m + nav_tolerance_m > limits.max_reach_m:
            raise ValueError(
                f"standoff_m + nav_tolerance_m ({limits.standoff_m + nav_tolerance_m:g}) exceeds max_reach_m "
                f"({limits.max_reach_m:g}): the robot could stop where it cannot reach"
            )
        self.limits = limits
        self.nav_tolerance_m = nav_tolerance_m
        self.nav_timeout_s = nav_timeout_s
        self.manip_timeout_s = manip_timeout_s
        self.yaw_tolerance_rad = yaw_tolerance_rad
        self._state = ExecutorState.IDLE
        self._steps: tuple = ()
        self._index = -1
        self._plan_scene = Scene()
        self._scene = Scene()
        self._pose = RobotPose()
        self._holding = ""
        self._progress = _Progress(0.0)

    # -- what the node may read ----------------------------------------------------------------

    @property
    def state(self) -> ExecutorState:
        return self._state

    @property
    def current_step_index(self) -> int:
        """Index of the running step (or of the step where the last plan ended); -1 before any plan."""
        return self._index

    @property
    def steps(self) -> tuple:
        """The steps of the running (or last) plan."""
        return self._steps

    @property
    def holding(self) -> str:
        """Id of the object the executor believes is in the gripper, "" when empty."""
        return self._holding

    # -- events --------------------------------------------------------------------------------

    def start(self, steps, scene: Scene, now_s: float) -> list:
        """Run a verified plan from its first step, preempting any running plan.

        ``scene.robot`` must be the current pose; ``scene.holding`` what the gripper holds now.
        """
        commands = self._end_early(ExecutorState.PREEMPTED, "a new request") if self._running() else []
        self._steps = tuple(steps)
        self._plan_scene = self._scene = scene
        self._pose = scene.robot
        self._holding = scene.holding
        self._index = 0
        self._state = ExecutorState.RUNNING
        problem = _unrunnable_reason(self._steps)
        if problem:
            return commands + self._fail(problem)
        return commands + self._guarded(lambda: self._begin_steps(now_s))

    def on_odom(self, pose: RobotPose, now_s: float) -> list:
        if not goals.all_finite(pose.x, pose.y, pose.yaw):
            return []  # a broken odometry message must not move goals or finish steps
        self._pose = pose
        if not self._running():
            return []
        step = self._current_step()
        if isinstance(step, Navigate):
            return self._guarded(lambda: self._check_arrival(now_s))
        if isinstance(step, Rotate):
            return self._guarded(lambda: self._continue_rotation(step, now_s))
        return []

    def on_scene(self, scene: Scene, now_s: float) -> list:
        self._scene = scene
        if self._running() and isinstance(self._current_step(), Follow):
            return self._guarded(lambda: self._refresh_follow_goal(now_s))
        return []

    def on_manipulator_status(self, status, now_s: float) -> list:
        """'succeeded' or 'failed' for the last ArmTarget; ignored when no arm step is running."""
        if not self._running() or not isinstance(self._current_step(), _MANIPULATION_STEPS):
            return []  # e.g. the late result of a goal cancelled by preemption
        return self._guarded(lambda: self._finish_manipulation(str(getattr(status, "value", status)), now_s))

    def on_navigation_result(self, succeeded: bool, detail: str, now_s: float) -> list:
        """The navigation stack's verdict on the current goal (e.g. Nav2's NavigateToPose result): success ends a
        navigate step (Nav2 judged the arrival), anything else fails the plan. Ignored outside navigate steps
        (follow keeps refreshing its goal) and for goals of ended plans."""
        if not self._running() or not isinstance(self._current_step(), Navigate):
            return []
        if succeeded:
            return self._step_done(now_s)
        target = self._current_step().target
        return self._fail(f"I couldn't get to {describe_ref(target, self._scene_knowing(target))} ({detail}).")

    def on_navigation_feedback(self, remaining_m: float, now_s: float) -> None:
        """Progress the navigation stack reports (Nav2 feedback's distance_remaining): every
        NAV_PROGRESS_M closer restarts the navigate step's nav_timeout_s, so the timeout counts time without
        progress (as Nav2's progress checker does), not the length of the trip."""
        if self._running() and isinstance(self._current_step(), Navigate) and math.isfinite(remaining_m):
            if remaining_m <= self._progress.remaining_m - NAV_PROGRESS_M:
                self._progress.remaining_m, self._progress.started_s = remaining_m, now_s

    def tick(self, now_s: float) -> list:
        """Time-based transitions: timeouts, wait steps, rotation keep-alive.  Call it at a few Hz or more."""
        if not self._running():
            return []
        return self._guarded(lambda: self._check_time(now_s))

    def stop(self, now_s: float) -> list:
        """Stop now: cancel goals and zero the velocity, also when nothing is running (always safe)."""
        if self._running():
            return self._end_early(ExecutorState.PREEMPTED, "stopped")
        return [CancelGoals(), STOPPED]

    # -- running steps -------------------------------------------------------------------------

    def _running(self) -> bool:
        return self._state is ExecutorState.RUNNING

    def _current_step(self):
        return self._steps[self._index]

    def _guarded(self, action) -> list:
        try:
            return action()
        except _StepFailed as failure:
            return self._fail(str(failure))

    def _begin_steps(self, now_s: float) -> list:
        """Start the current step; steps that finish at once (stop, clarify, wait(0), ...) chain on."""
        commands = []
        while self._running():
            step = self._current_step()
            self._progress = _Progress(started_s=now_s, last_yaw=self._pose.yaw, last_seen_s=now_s)
            commands.append(PlanEvent(PlanEventKind.STEP_STARTED, self._index, format_step(step)))
            step_commands, finished = self._begin(step)
            commands += step_commands
            if not finished:
                break
            commands += self._mark_step_done()
        return commands

    def _mark_step_done(self) -> list:
        """step_done, then either plan_succeeded or a move to the next step (not yet started)."""
        commands = [PlanEvent(PlanEventKind.STEP_DONE, self._index)]
        if self._index == len(self._steps) - 1:
            self._state = ExecutorState.SUCCEEDED
            return commands + [PlanEvent(PlanEventKind.PLAN_SUCCEEDED, self._index)]
        self._index += 1
        return commands

    def _step_done(self, now_s: float) -> list:
        return self._mark_step_done() + self._begin_steps(now_s)

    def _begin(self, step) -> tuple:
        """(commands, finished now) for the first moment of a step."""
        if isinstance(step, Navigate):
            return [self._navigation_goal(step.target)], False
        if isinstance(step, Pick):
            return self._begin_pick(step.obj)
        if isinstance(step, PlaceOn):
            return self._begin_release(step.obj, step.target, ArmPurpose.PLACE), False
        if isinstance(step, Handover):
            return self._begin_release(step.obj, step.person, ArmPurpose.HANDOVER), False
        if isinstance(step, Rotate):
            return self._begin_rotation(step)
        if isinstance(step, Wait):
            return [], step.seconds <= 0
        if isinstance(step, Follow):
            return [self._navigation_goal(step.person)], False
        if isinstance(step, Stop):
            return [STOPPED], True
        return [Say(clarify_question(step, self._scene))], True  # Clarify

    def _scene_knowing(self, ref: Ref) -> Scene:
        """The latest scene if it still shows ``ref``, else the scene the plan was verified against."""
        latest = self._scene
        known = {"obj": latest.object, "person": latest.person, "place": latest.place}[ref.kind](ref.name)
        return latest if known is not None else self._plan_scene

    def _navigation_goal(self, target: Ref) -> NavigationGoal:
        scene = self._scene_knowing(target)
        pose = goals.navigation_goal(
            target, scene, holding=self._holding, robot_pose=self._pose, standoff_m=self.limits.standoff_m
        )
        if pose is None:
            raise _StepFailed(f"I can't see {describe_ref(target, scene)} anymore.")
        if not self.limits.contains_xy(pose[0], pose[1]) or not math.isfinite(pose[2]):
            raise _StepFailed(f"Going to {describe_ref(target, scene)} would take me outside my workspace.")
        goal = NavigationGoal(pose[0], pose[1], pose[2], self._index)
        self._progress.goal = goal
        return goal

    def _arm_target(self, point, purpose: ArmPurpose, what: str) -> ArmTarget:
        if point is None:
            raise _StepFailed(f"I can't see {what} anymore.")
        if not goals.all_finite(*point):
            raise _StepFailed(f"The position of {what} is not a valid number.")
        if goals.horizontal_distance((self._pose.x, self._pose.y), point) > self.limits.max_reach_m:
            raise _StepFailed(f"I can't reach {what} from here.")
        return ArmTarget(point[0], point[1], point[2], purpose, self._index)

    def _begin_pick(self, obj: Ref) -> tuple:
        if self._holding == obj.name:
            return [], True  # already in the gripper: nothing to do (documented, verifier allows it)
        scene = self._scene_knowing(obj)
        what = describe_ref(obj, scene)
        if self._holding:
            raise _StepFailed(f"My gripper is not empty, so I can't pick up {what}.")
        target = self._arm_target(goals.pick_target(obj, scene), ArmPurpose.PICK, what)
        return [GripperCommand(open=True), target], False

    def _begin_release(self, obj: Ref, destination: Ref, purpose: ArmPurpose) -> list:
        scene = self._scene_knowing(destination)
        if self._holding != obj.name:
            raise _StepFailed(f"I'm not holding {describe_ref(obj, self._scene_knowing(obj))}.")
        what = describe_ref(destination, scene)
        if purpose is ArmPurpose.HANDOVER:
            point = goals.handover_target(destination, scene, robot_xy=(self._pose.x, self._pose.y))
        else:
            point = goals.place_target(destination, scene)
        return [self._arm_target(point, purpose, what)]

    def _finish_manipulation(self, status: str, now_s: float) -> list:
        step = self._current_step()
        if status != ManipulatorStatus.SUCCEEDED.value:
            raise _StepFailed(_manipulation_failure(step, self._scene_knowing(step.obj)))
        if isinstance(step, Pick):
            self._holding = step.obj.name
            return [GripperCommand(open=False)] + self._step_done(now_s)
        self._holding = ""
        return [GripperCommand(open=True)] + self._step_done(now_s)

    def _check_arrival(self, now_s: float) -> list:
        goal = self._progress.goal
        if math.hypot(self._pose.x - goal.x, self._pose.y - goal.y) <= self.nav_tolerance_m:
            return self._step_done(now_s)
        return []

    def _rotation_remaining_rad(self, step: Rotate) -> float:
        return math.radians(abs(step.degrees)) - self._progress.rotated_rad

    def _rotation_command(self, step: Rotate) -> VelocityCommand:
        remaining = self._rotation_remaining_rad(step)
        cap = self.limits.max_angular_speed_radps
        speed = max(min(MIN_ROTATE_SPEED_RADPS, cap), min(cap, ROTATE_GAIN_PER_S * remaining))
        return clamped_velocity(0.0, math.copysign(speed, step.degrees), self.limits)

    def _begin_rotation(self, step: Rotate) -> tuple:
        if self._rotation_remaining_rad(step) <= self.yaw_tolerance_rad:
            return [], True
        return [self._rotation_command(step)], False

    def _continue_rotation(self, step: Rotate, now_s: float) -> list:
        turned = goals.wrap_angle(self._pose.yaw - self._progress.last_yaw)
        self._progress.rotated_rad += math.copysign(1.0, step.degrees) * turned
        self._progress.last_yaw = self._pose.yaw
        if self._rotation_remaining_rad(step) <= self.yaw_tolerance_rad:
            return [STOPPED] + self._step_done(now_s)
        return [self._rotation_command(step)]

    def _refresh_follow_goal(self, now_s: float) -> list:
        person = self._current_step().person
        if self._scene.person(person.name) is None:
            return []  # keep the last goal; tick() gives up after nav_timeout_s
        self._progress.last_seen_s = now_s
        previous = self._progress.goal
        goal = self._navigation_goal(person)
        # re-publishing an almost identical goal makes planners restart for nothing
        if previous is not None and math.hypot(goal.x - previous.x, goal.y - previous.y) < self.nav_tolerance_m:
            self._progress.goal = previous
            return []
        return [goal]

    def _check_time(self, now_s: float) -> list:
        step = self._current_step()
        elapsed_s = now_s - self._progress.started_s
        if isinstance(step, Wait):
            return self._step_done(now_s) if elapsed_s >= step.seconds else []
        if isinstance(step, Navigate) and elapsed_s > self.nav_timeout_s:
            raise _StepFailed(
                f"I couldn't get to {describe_ref(step.target, self._scene_knowing(step.target))} in time."
            )
        if isinstance(step, Rotate):
            if elapsed_s > self.nav_timeout_s:
                raise _StepFailed("I couldn't finish turning in time.")
            return [self._rotation_command(step)]  # keep-alive: many bases stop when cmd_vel goes quiet
        if isinstance(step, _MANIPULATION_STEPS) and elapsed_s > self.manip_timeout_s:
            raise _StepFailed("My arm didn't finish in time.")
        if isinstance(step, Follow) and now_s - self._progress.last_seen_s > self.nav_timeout_s:
            raise _StepFailed(f"I lost sight of {describe_ref(step.person, self._plan_scene)}.")
        return []

    # -- ending --------------------------------------------------------------------------------

    def _end_early(self, state: ExecutorState, reason: str) -> list:
        self._state = state
        return [CancelGoals(), STOPPED, PlanEvent(PlanEventKind.PLAN_PREEMPTED, self._index, reason)]

    def _fail(self, reason: str) -> list:
        self._state = ExecutorState.FAILED
        return [CancelGoals(), STOPPED, Say(reason), PlanEvent(PlanEventKind.PLAN_FAILED, self._index, reason)]


def _manipulation_failure(step, scene: Scene) -> str:
    what = describe_ref(step.obj, scene)
    if isinstance(step, Pick):
        return f"I couldn't pick up {what}."
    if isinstance(step, PlaceOn):
        return f"I couldn't put down {what}."
    return f"I couldn't hand over {what}."


def _unrunnable_reason(steps: tuple) -> str:
    """A cheap guard for plans that skipped the verifier: empty, not steps, or numbers that cannot print."""
    if not steps:
        return "The plan is empty."
    try:
        for step in steps:
            format_step(step)
    except (PlanSyntaxError, TypeError):
        return "I can't run that plan."
    if any(isinstance(step, Clarify) for step in steps) and len(steps) != 1:
        return "I can't run that plan."
    if any(isinstance(step, (Stop, Follow)) for step in steps[:-1]):
        return "I can't run that plan."  # nothing runs after stop() or follow()
    return ""
