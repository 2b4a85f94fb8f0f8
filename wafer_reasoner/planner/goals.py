"""Goal geometry: where the base drives and where the arm reaches for each step (pure functions).

The verifier and the executor both use these, so what is checked is exactly what is published.
All coordinates are in the scene frame (``scene.frame_id``, normally ``map``); angles in radians.
"""

from __future__ import annotations

import math

from .language import Ref
from .scene import Scene

HANDOVER_HEIGHT_M = 1.0  # roughly hand height of a standing adult
HANDOVER_GAP_M = 0.3  # the hand-over point stays this far short of the person: never reach into them
PLACE_CLEARANCE_M = 0.1  # release height above the support; the arm controller lowers until contact

Point3 = tuple  # (x, y, z)
Pose2 = tuple  # (x, y, yaw)


def wrap_angle(angle_rad: float) -> float:
    """The same angle in [-pi, pi)."""
    return (angle_rad + math.pi) % (2.0 * math.pi) - math.pi


def all_finite(*values: float) -> bool:
    return all(math.isfinite(value) for value in values)


def standoff_pose(robot_xy, target_xy, standoff_m: float, *, current_yaw: float = 0.0) -> Pose2:
    """A pose ``standoff_m`` short of the target on the line from the robot, facing the target.

    When the robot is already within ``standoff_m`` it stays where it is and only turns to face the
    target; when it stands exactly on the target there is no direction to face, so it keeps ``current_yaw``.
    """
    (rx, ry), (tx, ty) = robot_xy, target_xy
    dx, dy = tx - rx, ty - ry
    distance = math.hypot(dx, dy)
    if distance == 0.0:
        return (rx, ry, current_yaw)
    yaw = math.atan2(dy, dx)
    if distance <= standoff_m:
        return (rx, ry, yaw)
    travel = distance - standoff_m
    return (rx + dx / distance * travel, ry + dy / distance * travel, yaw)


def point_short_of(from_xy, to_xy, gap_m: float) -> tuple:
    """The point ``gap_m`` before ``to_xy`` on the line from ``from_xy`` (``from_xy`` itself when closer than that)."""
    (fx, fy), (tx, ty) = from_xy, to_xy
    distance = math.hypot(tx - fx, ty - fy)
    if distance <= gap_m:
        return (fx, fy)
    scale = (distance - gap_m) / distance
    return (fx + (tx - fx) * scale, fy + (ty - fy) * scale)


def ref_position(ref: Ref, scene: Scene, *, holding: str, robot_xy) -> Point3 | None:
    """Where a reference is now, or None when the scene does not know it.

    A held object travels with the robot, so its position is the robot's (perception may not see it
    in the gripper).  People are points on the floor; places have no height.
    """
    if ref.kind == "obj":
        if ref.name == holding:
            return (robot_xy[0], robot_xy[1], 0.0)
        obj = scene.object(ref.name)
        return None if obj is None else (obj.x, obj.y, obj.z)
    if ref.kind == "person":
        person = scene.person(ref.name)
        return None if person is None else (person.x, person.y, 0.0)
    place = scene.place(ref.name)
    return None if place is None else (place.x, place.y, 0.0)


def navigation_goal(ref: Ref, scene: Scene, *, holding: str, robot_pose, standoff_m: float) -> Pose2 | None:
    """The base goal for ``navigate(ref)``: a named place's own pose, else the stand-off pose in front of it."""
    if ref.kind == "place":
        place = scene.place(ref.name)
        return None if place is None else (place.x, place.y, place.yaw)
    robot_xy = (robot_pose.x, robot_pose.y)
    position = ref_position(ref, scene, holding=holding, robot_xy=robot_xy)
    if position is None:
        return None
    return standoff_pose(robot_xy, position[:2], standoff_m, current_yaw=robot_pose.yaw)


def pick_target(ref: Ref, scene: Scene) -> Point3 | None:
    """The arm goes to the object itself."""
    obj = scene.object(ref.name)
    return None if obj is None else (obj.x, obj.y, obj.z)


def place_target(target: Ref, scene: Scene) -> Point3 | None:
    """On top of an object (its z plus clearance), or at a named place (floor level plus clearance)."""
    if target.kind == "obj":
        obj = scene.object(target.name)
        return None if obj is None else (obj.x, obj.y, obj.z + PLACE_CLEARANCE_M)
    place = scene.place(target.name)
    return None if place is None else (place.x, place.y, PLACE_CLEARANCE_M)


def handover_target(person: Ref, scene: Scene, *, robot_xy) -> Point3 | None:
    """Toward the person at hand height, stopping HANDOVER_GAP_M short of them."""
    found = scene.person(person.name)
    if found is None:
        return None
    x, y = point_short_of(robot_xy, (found.x, found.y), HANDOVER_GAP_M)
    return (x, y, HANDOVER_HEIGHT_M)


def horizontal_distance(robot_xy, point) -> float:
    return math.hypot(point[0] - robot_xy[0], point[1] - robot_xy[1])
