"""A 2-D kinematic stand-in for Gazebo: a diff-drive base, an arm with a gripper, objects and people (no ROS).

Units are metres, radians and seconds; there is one flat frame, ``map`` (``odom`` is the same frame here).
Time advances only in ``World.step(dt)``, so tests and the node decide what a second is.

Base
  * ``set_goal(x, y, yaw)``: go to the goal: turn on the spot until facing it (within
    ``heading_tolerance_rad``), drive with small heading corrections, then turn to ``yaw``. The goal is
    cleared when reached (within ``goal_tolerance_m`` and ``yaw_tolerance_rad``).
  * ``set_cmd_vel(linear, angular)``: cancels any goal and drives at that velocity until
    ``cmd_vel_timeout_s`` passes without a new command; a zero command stops the robot at once.
  * Speeds never exceed ``max_linear_speed_mps`` / ``max_angular_speed_radps`` (cmd_vel is clamped).

Arm and gripper (every command gets exactly one reply, in order: ``succeeded`` or ``failed``)
  * ``command_arm(x, y, z)``: a target within ``reach_m`` (horizontal distance from the base) succeeds
    after ``manipulation_time_s`` and the hand stays there; a target out of reach fails at once (and also
    fails if the base moved out of reach before the motion finished).
  * ``command_gripper(GripperCommand.CLOSE)``: after ``manipulation_time_s`` attaches the nearest movable
    object within ``grasp_radius_m`` (horizontal) of the hand; fails if there is none.
    ``GripperCommand.OPEN`` detaches the held object where the hand is; opening an empty gripper succeeds.
  * The hand is at the last reached target until the base moves; any base motion stows the arm, which puts
    the hand at the carry point (``carry_offset_m`` ahead of the base, ``carry_height_m`` high). A held
    object is always at the hand; released while stowed it drops to the floor (z = 0) below the carry point.
  * A new arm or gripper command while one is in progress preempts it: the preempted command replies
    ``failed`` first.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, fields, replace
from typing import Optional

from wafer_reasoner.planner.scene import RobotPose, Scene, SceneObject, distance, scene_to_dict

_EPS = 1e-9


class ManipulationStatus(str, enum.Enum):
    """Replies on ``manipulator/status``."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"


class GripperCommand(enum.Enum):
    """``gripper/commands`` positions (ros2_control forward-command convention, one joint)."""

    CLOSE = 0.0  # data = [0.0]: closed / grasp
    OPEN = 1.0  # data = [1.0]: open / release


def gripper_command_from_data(data) -> GripperCommand:
    """``std_msgs/Float64MultiArray.data`` -> command: ``data[0] < 0.5`` closes, ``>= 0.5`` opens."""
    if len(data) < 1:
        raise ValueError("gripper command is empty; expected [0.0] (close) or [1.0] (open)")
    value = float(data[0])
    if not math.isfinite(value):
        raise ValueError(f"gripper command {value} is not finite")
    return GripperCommand.CLOSE if value < 0.5 else GripperCommand.OPEN


def wrap_angle(angle: float) -> float:
    """Angle in (-pi, pi]."""
    wrapped = math.atan2(math.sin(angle), math.cos(angle))
    return math.pi if wrapped <= -math.pi else wrapped


def yaw_from_quaternion(x: float, y: float, z: float, w: float) -> float:
    """Heading (rotation about z) of a quaternion; the quaternion need not be normalised."""
    return math.atan2(2.0 * (w * z + x * y), w * w + x * x - y * y - z * z)


def quaternion_from_yaw(yaw: float) -> tuple:
    """(x, y, z, w) of a rotation by ``yaw`` about z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def _require_finite(**values: float) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")


def _clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))


@dataclass(frozen=True)
class WorldConfig:
    max_linear_speed_mps: float = 0.5  # cap on |linear velocity|, goals and cmd_vel alike
    max_angular_speed_radps: float = 1.0  # cap on |angular velocity|
    goal_tolerance_m: float = 0.05  # goal position reached within this distance
    yaw_tolerance_rad: float = 0.05  # final heading reached within this angle
    heading_tolerance_rad: float = 0.2  # turn on the spot until facing the goal within this angle
    cmd_vel_timeout_s: float = 0.5  # stop when no cmd_vel arrived for this long
    reach_m: float = 0.9  # arm reach: horizontal distance from the base centre
    grasp_radius_m: float = 0.25  # closing grasps the nearest movable object this close to the hand
    manipulation_time_s: float = 1.0  # duration of every arm motion and gripper action (0 = instant)
    carry_offset_m: float = 0.3  # stowed hand: this far ahead of the base centre
    carry_height_m: float = 0.8  # stowed hand: this high
    linear_gain_per_s: float = 1.0  # go-to-goal: linear speed = gain * distance (then capped)
    angular_gain_per_s: float = 2.0  # go-to-goal: angular speed = gain * heading error (then capped)
    max_substep_s: float = 0.02  # step(dt) integrates in substeps no longer than this

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            _require_finite(**{item.name: value})
            if value < 0.0 or (value == 0.0 and item.name != "manipulation_time_s"):
                raise ValueError(f"{item.name} must be positive, got {value}")


@dataclass(frozen=True)
class _Pending:
    action: str  # "arm", "close" or "open"
    done_at_s: float
    target: tuple = ()  # (x, y, z) for "arm"


class World:
    """The whole simulated state; the ROS node converts messages and calls these methods."""

    def __init__(
        self,
        config: WorldConfig = WorldConfig(),
        *,
        robot: RobotPose = RobotPose(),
        objects=(),
        people=(),
        fixed_ids=(),
        holding: str = "",
        time_s: float = 0.0,
    ) -> None:
        _require_finite(x=robot.x, y=robot.y, yaw=robot.yaw, time_s=time_s)
        self.config = config
        self.time_s = float(time_s)
        self._robot = replace(robot, yaw=wrap_angle(robot.yaw))
        self._objects = {obj.id: obj for obj in objects}  # insertion order is the published order
        self._people = tuple(people)
        self._fixed = frozenset(fixed_ids)
        if holding and holding not in self._objects:
            raise ValueError(f"holding {holding!r} is not an object in the world")
        self._holding = holding
        self._velocity = (0.0, 0.0)  # (linear m/s, angular rad/s) during the last substep
        self._goal: Optional[RobotPose] = None
        self._goal_position_reached = False
        self._cmd_vel: Optional[tuple] = None  # (linear, angular) while a cmd_vel is in force
        self._cmd_vel_deadline_s = 0.0
        self._hand: Optional[tuple] = None  # (x, y, z) of the last reached arm target; None = stowed
        self._pending: Optional[_Pending] = None

    # ---- state -------------------------------------------------------------------------------------------

    @property
    def robot(self) -> RobotPose:
        return self._robot

    @property
    def velocity(self) -> tuple:
        """(linear m/s, angular rad/s) of the base, in the base frame."""
        return self._velocity

    @property
    def goal(self) -> Optional[RobotPose]:
        return self._goal

    @property
    def holding(self) -> str:
        return self._holding

    @property
    def people(self) -> tuple:
        return self._people

    @property
    def manipulation_busy(self) -> bool:
        return self._pending is not None

    def hand_point(self) -> tuple:
        """(x, y, z) of the hand: the last reached target, or the carry point when the arm is stowed."""
        if self._hand is not None:
            return self._hand
        r, c = self._robot, self.config
        return (r.x + c.carry_offset_m * math.cos(r.yaw), r.y + c.carry_offset_m * math.sin(r.yaw), c.carry_height_m)

    @property
    def objects(self) -> tuple:
        """All objects; the held one is at the hand."""
        if not self._holding:
            return tuple(self._objects.values())
        x, y, z = self.hand_point()
        return tuple(replace(obj, x=x, y=y, z=z) if obj.id == self._holding else obj for obj in self._objects.values())

    def object(self, object_id: str) -> Optional[SceneObject]:
        return next((obj for obj in self.objects if obj.id == object_id), None)

    def scene(self, stamp_s: Optional[float] = None) -> Scene:
        """The planner's view of the world (no named places)."""
        return Scene(
            objects=self.objects,
            people=self._people,
            robot=self._robot,
            holding=self._holding,
            stamp_s=self.time_s if stamp_s is None else float(stamp_s),
            frame_id="map",
        )

    def perception_dict(self, stamp_s: Optional[float] = None) -> dict:
        """The ``perception/objects`` JSON body: stamp, frame_id, objects, people and (if any) holding."""
        data = scene_to_dict(self.scene(stamp_s))
        del data["robot"], data["places"]
        return data

    # ---- base commands -------------------------------------------------------------------------------------

    def set_goal(self, x: float, y: float, yaw: float = 0.0) -> None:
        """Drive to (x, y) and turn to ``yaw``; cancels any cmd_vel. Raises ValueError on non-finite input."""
        _require_finite(x=x, y=y, yaw=yaw)
        self._goal = RobotPose(float(x), float(y), wrap_angle(float(yaw)))
        self._goal_position_reached = False
        self._cmd_vel = None

    def set_cmd_vel(self, linear: float, angular: float) -> None:
        """Drive at this velocity (clamped to the caps) until the timeout; cancels the goal; zero stops."""
        _require_finite(linear=linear, angular=angular)
        self._goal = None
        self._cmd_vel = (
            _clamp(float(linear), self.config.max_linear_speed_mps),
            _clamp(float(angular), self.config.max_angular_speed_radps),
        )
        self._cmd_vel_deadline_s = self.time_s + self.config.cmd_vel_timeout_s
        if self._cmd_vel == (0.0, 0.0):
            self._velocity = (0.0, 0.0)

    def stop(self) -> None:
        """Cancel goal and cmd_vel and stand still."""
        self._goal = None
        self._cmd_vel = None
        self._velocity = (0.0, 0.0)

    # ---- arm and gripper commands ------------------------------------------------------------------------

    def within_reach(self, x: float, y: float) -> bool:
        return distance(self._robot.x, self._robot.y, x, y) <= self.config.reach_m + _EPS

    def command_arm(self, x: float, y: float, z: float) -> list:
        """Move the hand to (x, y, z); returns the replies due now (a preempted command, an immediate failure)."""
        replies = self._preempt()
        values = (x, y, z)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            replies.append(ManipulationStatus.FAILED)
        elif not self.within_reach(x, y):
            replies.append(ManipulationStatus.FAILED)
        else:
            target = (float(x), float(y), float(z))
            self._pending = _Pending("arm", self.time_s + self.config.manipulation_time_s, target)
        return replies + self._finish_pending()

    def command_gripper(self, command: GripperCommand) -> list:
        """Close (grasp) or open (release); returns the replies due now."""
        replies = self._preempt()
        action = "close" if command is GripperCommand.CLOSE else "open"
        self._pending = _Pending(action, self.time_s + self.config.manipulation_time_s)
        return replies + self._finish_pending()

    def reject_command(self) -> list:
        """An invalid arm/gripper command: it preempts the one in progress and fails at once."""
        return self._preempt() + [ManipulationStatus.FAILED]

    def _preempt(self) -> list:
        if self._pending is None:
            return []
        self._pending = None
        return [ManipulationStatus.FAILED]

    def _finish_pending(self) -> list:
        pending = self._pending
        if pending is None or self.time_s + _EPS < pending.done_at_s:
            return []
        self._pending = None
        if pending.action == "arm":
            if not self.within_reach(pending.target[0], pending.target[1]):
                return [ManipulationStatus.FAILED]
            self._hand = pending.target
            return [ManipulationStatus.SUCCEEDED]
        if pending.action == "close":
            return [self._grasp()]
        self._release()
        return [ManipulationStatus.SUCCEEDED]

    def _grasp(self) -> ManipulationStatus:
        if self._holding:
            return ManipulationStatus.SUCCEEDED
        hx, hy, _ = self.hand_point()
        candidates = [
            (distance(obj.x, obj.y, hx, hy), obj.id)
            for obj in self._objects.values()
            if obj.id not in self._fixed and distance(obj.x, obj.y, hx, hy) <= self.config.grasp_radius_m + _EPS
        ]
        if not candidates:
            return ManipulationStatus.FAILED
        self._holding = min(candidates)[1]
        return ManipulationStatus.SUCCEEDED

    def _release(self) -> None:
        if not self._holding:
            return
        x, y, z = self.hand_point()
        if self._hand is None:
            z = 0.0  # stowed: it drops to the floor
        self._objects[self._holding] = replace(self._objects[self._holding], x=x, y=y, z=z)
        self._holding = ""

    # ---- time ------------------------------------------------------------------------------------------------

    def step(self, dt: float) -> list:
        """Advance the world by ``dt`` seconds; returns the manipulation replies that became due, in order."""
        _require_finite(dt=dt)
        if dt < 0.0:
            raise ValueError(f"dt must not be negative, got {dt}")
        replies = self._finish_pending()
        remaining = float(dt)
        while remaining > _EPS:
            h = min(remaining, self.config.max_substep_s)
            self._step_base(h)
            self.time_s += h
            remaining -= h
            replies += self._finish_pending()
        return replies

    def _step_base(self, h: float) -> None:
        if self._cmd_vel is not None and self.time_s + _EPS >= self._cmd_vel_deadline_s:
            self._cmd_vel = None
        if self._cmd_vel is not None:
            linear, angular = self._cmd_vel
        elif self._goal is not None:
            linear, angular = self._goal_control(h)
        else:
            linear, angular = 0.0, 0.0
        self._velocity = (linear, angular)
        if linear == 0.0 and angular == 0.0:
            return
        self._hand = None  # base motion stows the arm
        r = self._robot
        mid_yaw = r.yaw + angular * h / 2.0
        self._robot = RobotPose(
            r.x + linear * math.cos(mid_yaw) * h,
            r.y + linear * math.sin(mid_yaw) * h,
            wrap_angle(r.yaw + angular * h),
        )

    def _turn_rate(self, error: float, h: float) -> float:
        rate = _clamp(self.config.angular_gain_per_s * error, self.config.max_angular_speed_radps)
        return math.copysign(min(abs(rate), abs(error) / h), error)  # never turn past the target in one step

    def _goal_control(self, h: float) -> tuple:
        goal, robot, c = self._goal, self._robot, self.config
        dx, dy = goal.x - robot.x, goal.y - robot.y
        gap = math.hypot(dx, dy)
        if not self._goal_position_reached and gap <= c.goal_tolerance_m:
            self._goal_position_reached = True
        if not self._goal_position_reached:
            error = wrap_angle(math.atan2(dy, dx) - robot.yaw)
            angular = self._turn_rate(error, h)
            if abs(error) > c.heading_tolerance_rad:
                return 0.0, angular
            linear = min(c.max_linear_speed_mps, c.linear_gain_per_s * gap, gap / h)
            return linear, angular
        error = wrap_angle(goal.yaw - robot.yaw)
        if abs(error) <= c.yaw_tolerance_rad:
            self._goal = None
            return 0.0, 0.0
        return 0.0, self._turn_rate(error, h)


class ReplyOwners:
    """Which command each manipulation reply of a World answers, so the replies can echo command ids.

    The world works on one command at a time: a new command's replies are the preempted command's ``failed``
    (if one was in progress), then its own immediate result, if any; replies from ``step`` answer the command
    in progress. Ids are the caller's (None: the command carried none).
    """

    def __init__(self) -> None:
        self._in_progress = None  # (command_id,) of the command the world works on

    def command(self, world: World, replies: list, command_id, busy_before: bool) -> list:
        """(status, command_id) pairs of ``replies``, returned by a command call made when the world was
        ``busy_before``."""
        owners = ([self._in_progress[0]] if busy_before and self._in_progress else []) + [command_id]
        self._in_progress = (command_id,) if world.manipulation_busy else None
        return list(zip(replies, owners))

    def stepped(self, world: World, replies: list) -> list:
        """(status, command_id) pairs of the replies ``world.step`` returned."""
        owner = self._in_progress[0] if self._in_progress else None
        if not world.manipulation_busy:
            self._in_progress = None
        return [(reply, owner) for reply in replies]


def world_from_scene(scene: Scene, config: WorldConfig = WorldConfig(), *, fixed_ids=()) -> World:
    """A world holding the scene's objects, people, robot pose and gripper content."""
    return World(
        config,
        robot=scene.robot,
        objects=scene.objects,
        people=scene.people,
        fixed_ids=fixed_ids,
        holding=scene.holding,
        time_s=scene.stamp_s,
    )
