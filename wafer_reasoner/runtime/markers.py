"""What reasoner/markers shows in RViz, as plain values (``ros/conversions.py`` turns them into a MarkerArray and
``studies/marker_figure.py`` draws them to a PNG): no ROS here.

    markers = reasoner_markers(MarkerView.of(core, arm_target=last_arm_target))

Namespaces (one RViz display can toggle each):

  objects   a cube per perceived object, in its colour      people    a 1.7 m cylinder per person
  places    an arrow per named place, along its yaw        robot     an arrow at the robot pose
  labels    a text above each object, person and place     grounded  a yellow sphere around every object,
  goals     an arrow per stand-off goal of the running               person or place the last utterance's
            plan (the current one green, later ones grey;            plan refers to
            later ones estimated from the goal before)     arm_target  the last arm target (magenta)
  step      the current step above the robot: "2/4 pick(obj:cup_red) [running]"

The first marker deletes everything before it (DELETEALL), so markers of a former scene never linger.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from wafer_reasoner.planner import goals
from wafer_reasoner.planner.language import Navigate, Ref, format_step
from wafer_reasoner.planner.scene import RobotPose, Scene

DELETE_ALL, CUBE, SPHERE, CYLINDER, ARROW, TEXT = "delete_all", "cube", "sphere", "cylinder", "arrow", "text"
COLOURS = {  # RGBA; colour words the perception JSON uses, else GREY
    "red": (0.9, 0.1, 0.1, 1.0), "blue": (0.1, 0.3, 0.9, 1.0), "green": (0.1, 0.7, 0.2, 1.0),
    "yellow": (0.95, 0.85, 0.1, 1.0), "black": (0.1, 0.1, 0.1, 1.0), "white": (0.95, 0.95, 0.95, 1.0),
    "brown": (0.55, 0.35, 0.15, 1.0), "orange": (1.0, 0.55, 0.0, 1.0), "purple": (0.55, 0.2, 0.7, 1.0),
}
GREY, PERSON, PLACE, ROBOT = (0.6, 0.6, 0.6, 1.0), (0.2, 0.6, 0.9, 0.8), (0.3, 0.3, 0.8, 0.8), (0.1, 0.1, 0.1, 1.0)
GROUNDED, GOAL_NOW, GOAL_LATER = (1.0, 0.9, 0.0, 0.35), (0.0, 0.8, 0.2, 1.0), (0.5, 0.5, 0.5, 0.7)
ARM, LABEL = (0.9, 0.0, 0.9, 1.0), (1.0, 1.0, 1.0, 1.0)
PERSON_HEIGHT_M, LABEL_LIFT_M, OBJECT_SIZE_M = 1.7, 0.35, 0.12


@dataclass(frozen=True)
class Marker:
    ns: str
    id: int
    shape: str
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw: float = 0.0
    scale: tuple = (0.1, 0.1, 0.1)  # metres: x, y, z (an arrow: length, width, height; text: z is the height)
    colour: tuple = GREY  # r, g, b, a in 0..1
    text: str = ""


@dataclass(frozen=True)
class MarkerView:
    """What the markers are drawn from: the latest scene (robot pose in it), the last utterance's plan steps,
    the running plan and where it is, and the last arm target."""

    scene: Scene
    last_steps: tuple = ()  # steps of the last utterance's plan (its references are the grounded ones)
    running_steps: tuple = ()  # steps of the plan the executor runs (or ran last)
    step_index: int = -1
    executor_state: str = "idle"
    holding: str = ""
    standoff_m: float = 0.6
    arm_target: tuple | None = None  # (x, y, z)

    @classmethod
    def of(cls, core, *, arm_target=None) -> MarkerView:
        """The view of a ReasonerCore now."""
        scene = (core.scene or Scene(places=core.places)).with_robot(core.pose)
        last = core.last_result.steps if core.last_result is not None else ()
        executor = core.executor
        return cls(scene, last, executor.steps, executor.current_step_index, executor.state.value,
                   executor.holding, core.limits.standoff_m, arm_target)


def step_refs(steps) -> list:
    """Every reference the steps make, in order, without repeats."""
    refs = []
    for step in steps:
        for field in dataclasses.fields(step):
            value = getattr(step, field.name)
            for ref in value if isinstance(value, tuple) else (value,):
                if isinstance(ref, Ref) and ref not in refs:
                    refs.append(ref)
    return refs


def plan_goals(view: MarkerView) -> list:
    """(step index, (x, y, yaw)) of each navigate step's stand-off goal from the current step on, each later one
    estimated from the robot standing at the goal before it (as the executor will compute it then)."""
    out, robot = [], view.scene.robot
    first = max(view.step_index, 0) if view.executor_state == "running" else len(view.running_steps)
    for index in range(first, len(view.running_steps)):
        step = view.running_steps[index]
        if not isinstance(step, Navigate):
            continue
        pose = goals.navigation_goal(step.target, view.scene, holding=view.holding, robot_pose=robot,
                                     standoff_m=view.standoff_m)
        if pose is not None and goals.all_finite(*pose):
            out.append((index, pose))
            robot = RobotPose(*pose)
    return out


def reasoner_markers(view: MarkerView) -> list:
    """The whole MarkerArray, DELETEALL first."""
    return [Marker("", 0, DELETE_ALL), *_scene_markers(view.scene), *_plan_markers(view)]


def _label(index: int, x: float, y: float, z: float, text: str) -> Marker:
    return Marker("labels", index, TEXT, x, y, z + LABEL_LIFT_M, scale=(0.0, 0.0, 0.18), colour=LABEL, text=text)


def _scene_markers(scene: Scene) -> list:
    out, labels = [], []
    for i, obj in enumerate(scene.objects):
        out.append(Marker("objects", i, CUBE, obj.x, obj.y, obj.z, scale=(OBJECT_SIZE_M,) * 3,
                          colour=COLOURS.get(obj.color, GREY)))
        labels.append((obj.x, obj.y, obj.z, f"{obj.id} ({' '.join(filter(None, (obj.color, obj.label)))})"))
    for i, person in enumerate(scene.people):
        out.append(Marker("people", i, CYLINDER, person.x, person.y, PERSON_HEIGHT_M / 2,
                          scale=(0.4, 0.4, PERSON_HEIGHT_M), colour=PERSON))
        labels.append((person.x, person.y, PERSON_HEIGHT_M, f"person:{person.id}"))
    for i, place in enumerate(scene.places):
        out.append(Marker("places", i, ARROW, place.x, place.y, 0.0, place.yaw, (0.5, 0.1, 0.1), PLACE))
        labels.append((place.x, place.y, 0.0, f"place:{place.name}"))
    robot = scene.robot
    if goals.all_finite(robot.x, robot.y, robot.yaw):
        out.append(Marker("robot", 0, ARROW, robot.x, robot.y, 0.1, robot.yaw, (0.6, 0.2, 0.2), ROBOT))
    return out + [_label(i, *label) for i, label in enumerate(labels)]


def _ref_point(ref: Ref, view: MarkerView):
    robot = view.scene.robot
    return goals.ref_position(ref, view.scene, holding=view.holding, robot_xy=(robot.x, robot.y))


def _plan_markers(view: MarkerView) -> list:
    out = []
    for i, ref in enumerate(step_refs(view.last_steps)):
        point = _ref_point(ref, view)
        if point is not None and goals.all_finite(*point):
            out.append(Marker("grounded", i, SPHERE, *point, scale=(0.6, 0.6, 0.6), colour=GROUNDED, text=str(ref)))
    for i, (index, (x, y, yaw)) in enumerate(plan_goals(view)):
        colour = GOAL_NOW if index == view.step_index and view.executor_state == "running" else GOAL_LATER
        out.append(Marker("goals", i, ARROW, x, y, 0.05, yaw, (0.45, 0.08, 0.08), colour,
                          text=f"{index + 1}: {format_step(view.running_steps[index])}"))
    if view.arm_target is not None and goals.all_finite(*view.arm_target):
        out.append(Marker("arm_target", 0, SPHERE, *view.arm_target, scale=(0.1, 0.1, 0.1), colour=ARM))
    robot = view.scene.robot
    if view.running_steps and 0 <= view.step_index < len(view.running_steps) and math.isfinite(robot.x):
        step = format_step(view.running_steps[view.step_index])
        text = f"{view.step_index + 1}/{len(view.running_steps)} {step} [{view.executor_state}]"
        out.append(Marker("step", 0, TEXT, robot.x, robot.y, 1.2, scale=(0.0, 0.0, 0.22), colour=LABEL, text=text))
    return out
