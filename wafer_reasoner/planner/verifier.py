"""The verifier: checks a parsed plan against the scene and the safety limits before anything moves.

The plan is simulated step by step (where the robot will stand, what it will hold), so that
``place`` and ``handover`` only use an object that is held or picked earlier, and every goal that
would be published is computed with the same geometry the executor uses (``goals.py``).
Reasons are whole sentences the robot can say out loud.  Rules are listed in ``docs/action_language.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import goals
from .language import (
    SPEAKER,
    Clarify,
    Follow,
    Handover,
    Navigate,
    Pick,
    PlaceOn,
    Ref,
    Rotate,
    Stop,
    Wait,
    format_number,
)
from .limits import SafetyLimits
from .phrases import describe_ref, spoken
from .scene import RobotPose, Scene

MOVING_STEPS = (Navigate, Pick, PlaceOn, Handover, Rotate, Follow)  # these need fresh perception
FINAL_STEPS = (Stop, Follow)  # stop() ends the plan, follow() runs until preempted: nothing can come after


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reasons: tuple = ()  # tuple[str, ...]: sentences for the robot to say; empty when ok


@dataclass(frozen=True)
class _Simulated:
    """What the plan will have done before a step: where the robot stands and what it holds."""

    robot: RobotPose
    holding: str


def verify_plan(steps, scene: Scene, limits: SafetyLimits, *, now_s: float) -> Verdict:
    """Check every rule; all failed rules are reported, not only the first."""
    steps = tuple(steps)
    reasons = _plan_shape_reasons(steps)
    if reasons:
        return Verdict(False, tuple(reasons))
    if isinstance(steps[0], Clarify):
        return Verdict(True)  # a question publishes nothing but speech
    if any(isinstance(step, MOVING_STEPS) for step in steps):
        reasons += _freshness_reasons(scene, limits, now_s)
    reasons += _robot_pose_reasons(scene.robot)
    state = _Simulated(scene.robot, scene.holding)
    for step in steps:
        reasons += _check_step(step, scene, limits, state)
        # simulate the step as intended even when it failed a check, so that one root cause
        # ("I'm already holding ...") is not repeated by every later step ("I'm not holding ...")
        state = _after_step(step, scene, limits, state)
    return Verdict(not reasons, tuple(_unique(reasons)))


def _plan_shape_reasons(steps: tuple) -> list:
    if not steps:
        return ["The plan is empty."]
    known = (Navigate, Pick, PlaceOn, Handover, Rotate, Wait, Stop, Follow, Clarify)
    if not all(isinstance(step, known) for step in steps):
        return ["The plan contains something that is not an action."]
    if any(isinstance(step, Clarify) for step in steps) and len(steps) != 1:
        return ["A clarification must be the whole plan."]
    for index, step in enumerate(steps[:-1]):
        if isinstance(step, FINAL_STEPS):
            name = "stop" if isinstance(step, Stop) else "follow"
            return [f"Nothing can come after {name} in a plan (step {index + 2})."]
    return []


def _freshness_reasons(scene: Scene, limits: SafetyLimits, now_s: float) -> list:
    if not goals.all_finite(now_s, scene.stamp_s):
        return ["My perception time stamp is not a valid number, so I won't move."]
    age_s = now_s - scene.stamp_s
    if age_s > limits.max_scene_age_s:
        return [f"What I see is {age_s:.1f} seconds old; I need a fresh view before I move."]
    # a stamp far in the future means the clocks disagree: the age cannot be trusted either
    if age_s < -limits.max_scene_age_s:
        return [f"My perception time stamp is {-age_s:.1f} seconds in the future; I won't move until clocks agree."]
    return []


def _robot_pose_reasons(robot: RobotPose) -> list:
    if not goals.all_finite(robot.x, robot.y, robot.yaw):
        return ["I don't know where I am, so I won't move."]
    return []


def _check_step(step, scene: Scene, limits: SafetyLimits, state: _Simulated) -> list:
    if isinstance(step, Navigate):
        return _check_navigate(step.target, scene, limits, state)
    if isinstance(step, Pick):
        return _check_pick(step.obj, scene, limits, state)
    if isinstance(step, PlaceOn):
        return _check_place(step, scene, limits, state)
    if isinstance(step, Handover):
        return _check_handover(step, scene, limits, state)
    if isinstance(step, Rotate):
        return _check_rotate(step.degrees, limits)
    if isinstance(step, Wait):
        return _check_wait(step.seconds, limits)
    if isinstance(step, Follow):
        return _check_follow(step.person, scene, limits, state)
    return []  # stop(): always allowed


def _after_step(step, scene: Scene, limits: SafetyLimits, state: _Simulated) -> _Simulated:
    """Where the robot stands and what it holds once ``step`` has run."""
    if isinstance(step, Navigate):
        goal = goals.navigation_goal(
            step.target, scene, holding=state.holding, robot_pose=state.robot, standoff_m=limits.standoff_m
        )
        return replace(state, robot=RobotPose(*goal)) if goal is not None and goals.all_finite(*goal) else state
    if isinstance(step, Pick):
        return replace(state, holding=step.obj.name)
    if isinstance(step, (PlaceOn, Handover)):
        return replace(state, holding="")
    return state


def _missing_ref_reason(ref: Ref, scene: Scene, state: _Simulated) -> str | None:
    if ref.kind == "obj":
        if scene.object(ref.name) is None and ref.name not in (scene.holding, state.holding):
            return f"I can't see {spoken(ref.name)}."
        return None
    if ref.kind == "person":
        if scene.person(ref.name) is None:
            return "I can't see you." if ref.name == SPEAKER else f"I can't see person {spoken(ref.name)}."
        return None
    if scene.place(ref.name) is None:
        return f"I don't know a place called {spoken(ref.name)}."
    return None


def _goal_reasons(goal, what: str, limits: SafetyLimits) -> list:
    if not goals.all_finite(*goal):
        return [f"The goal for {what} is not a valid position."]
    if not limits.contains_xy(goal[0], goal[1]):
        return [f"Going to {what} would take me outside my workspace."]
    return []


def _reach_reasons(target, too_far: str, limits: SafetyLimits, state: _Simulated) -> list:
    """``too_far`` is the sentence to say when the arm cannot reach ``target`` from where the robot will be."""
    if not goals.all_finite(*target):
        return ["A position in the scene is not a valid number."]
    if goals.horizontal_distance((state.robot.x, state.robot.y), target) > limits.max_reach_m:
        return [too_far]
    return []


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _check_navigate(target: Ref, scene: Scene, limits: SafetyLimits, state: _Simulated) -> list:
    missing = _missing_ref_reason(target, scene, state)
    if missing:
        return [missing]
    goal = goals.navigation_goal(
        target, scene, holding=state.holding, robot_pose=state.robot, standoff_m=limits.standoff_m
    )
    return _goal_reasons(goal, describe_ref(target, scene), limits)


def _check_pick(obj: Ref, scene: Scene, limits: SafetyLimits, state: _Simulated) -> list:
    missing = _missing_ref_reason(obj, scene, state)
    if missing:
        return [missing]
    what = describe_ref(obj, scene)
    if state.holding == obj.name:
        return []  # redundant but harmless: the executor skips it
    if state.holding:
        return [f"I'm already holding {describe_ref(Ref('obj', state.holding), scene)}, so I can't pick up {what}."]
    target = goals.pick_target(obj, scene)
    if target is None:  # held at the start, dropped by an earlier step, and not visible
        return [f"I can't see {what}."]
    return _reach_reasons(target, f"{_capitalised(what)} is out of my reach; I need to go to it first.", limits, state)


def _held_reasons(obj: Ref, action: str, scene: Scene, state: _Simulated) -> list:
    if state.holding != obj.name:
        return [f"I'm not holding {describe_ref(obj, scene)}, so I can't {action}; I'd have to pick it up first."]
    return []


def _check_place(step: PlaceOn, scene: Scene, limits: SafetyLimits, state: _Simulated) -> list:
    reasons = _held_reasons(step.obj, "put it down", scene, state)
    missing = _missing_ref_reason(step.target, scene, state)
    if missing:
        return reasons + [missing]
    where = describe_ref(step.target, scene)
    if step.target.kind == "obj" and step.target.name in (step.obj.name, state.holding):
        return reasons + [f"I can't put something on {where} while it is in my gripper."]
    target = goals.place_target(step.target, scene)
    too_far = f"{_capitalised(where)} is out of my reach; I need to go there first."
    return reasons + _reach_reasons(target, too_far, limits, state)


def _check_handover(step: Handover, scene: Scene, limits: SafetyLimits, state: _Simulated) -> list:
    reasons = _held_reasons(step.obj, "hand it over", scene, state)
    missing = _missing_ref_reason(step.person, scene, state)
    if missing:
        return reasons + [missing]
    target = goals.handover_target(step.person, scene, robot_xy=(state.robot.x, state.robot.y))
    who = "You are" if step.person.name == SPEAKER else f"{_capitalised(describe_ref(step.person, scene))} is"
    return reasons + _reach_reasons(target, f"{who} out of my reach; I need to come closer first.", limits, state)


def _check_rotate(degrees: float, limits: SafetyLimits) -> list:
    if not math.isfinite(degrees):
        return ["The turn angle is not a valid number."]
    if abs(degrees) > limits.max_rotate_deg:
        return [
            f"Turning {format_number(abs(degrees))} degrees is more than my limit of "
            f"{format_number(limits.max_rotate_deg)}."
        ]
    return []


def _check_wait(seconds: float, limits: SafetyLimits) -> list:
    if not math.isfinite(seconds) or seconds < 0:
        return ["The waiting time is not a valid number of seconds."]
    if seconds > limits.max_wait_s:
        return [
            f"Waiting {format_number(seconds)} seconds is longer than my limit of {format_number(limits.max_wait_s)}."
        ]
    return []


def _check_follow(person: Ref, scene: Scene, limits: SafetyLimits, state: _Simulated) -> list:
    # following starts like navigating to the person: same reference and stand-off goal checks
    return _check_navigate(person, scene, limits, state)


def _unique(reasons: list) -> list:
    """The same sentence once, in first-seen order (a plan may repeat a missing ref)."""
    return list(dict.fromkeys(reasons))
