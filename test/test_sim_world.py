"""wafer_reasoner.sim.world without ROS: driving, caps, cmd_vel timeout, arm and gripper."""

import json
import math

import pytest

from wafer_reasoner.planner.scene import Person, RobotPose, SceneObject, parse_perception_json
from wafer_reasoner.sim.world import (
    GripperCommand,
    ManipulationStatus,
    World,
    WorldConfig,
    gripper_command_from_data,
    quaternion_from_yaw,
    wrap_angle,
    yaw_from_quaternion,
)

SUCCEEDED, FAILED = [ManipulationStatus.SUCCEEDED], [ManipulationStatus.FAILED]
CUP = SceneObject("cup_red", "cup", "red", 0.5, 0.0, 0.75)
TABLE = SceneObject("table_1", "table", "brown", 0.55, 0.1, 0.0)


def run_until_idle(world: World, *, dt: float = 0.05, limit_s: float = 60.0) -> list:
    """Step until the goal is cleared (or limit_s of simulated time); returns (linear, angular) per step."""
    velocities = []
    steps = 0
    while world.goal is not None and steps * dt < limit_s:
        world.step(dt)
        velocities.append(world.velocity)
        steps += 1
    return velocities


@pytest.mark.parametrize("goal", [(2.0, 1.0, math.pi / 2), (-3.0, 0.5, 0.0), (0.0, -2.5, -3.0), (0.02, 0.0, 2.0)])
def test_drives_to_goal_and_stops(goal):
    world = World(WorldConfig(max_linear_speed_mps=0.8, max_angular_speed_radps=1.5))
    world.set_goal(*goal)
    run_until_idle(world)
    robot = world.robot
    assert world.goal is None
    assert math.hypot(robot.x - goal[0], robot.y - goal[1]) <= world.config.goal_tolerance_m
    assert abs(wrap_angle(robot.yaw - goal[2])) <= world.config.yaw_tolerance_rad
    world.step(1.0)
    assert world.velocity == (0.0, 0.0)
    assert world.robot == robot


def test_goal_motion_respects_speed_caps():
    config = WorldConfig(max_linear_speed_mps=0.3, max_angular_speed_radps=0.4)
    world = World(config, robot=RobotPose(1.0, 1.0, 0.0))
    world.set_goal(-4.0, 3.0, 1.0)
    velocities = run_until_idle(world, limit_s=120.0)
    assert world.goal is None
    assert max(abs(v) for v, _ in velocities) == pytest.approx(0.3)
    assert max(abs(w) for _, w in velocities) == pytest.approx(0.4)
    assert all(abs(v) <= 0.3 + 1e-9 and abs(w) <= 0.4 + 1e-9 for v, w in velocities)


def test_turns_on_the_spot_before_driving():
    world = World(WorldConfig(), robot=RobotPose(0.0, 0.0, 0.0))
    world.set_goal(-2.0, 0.0, 0.0)  # straight behind
    world.step(0.5)
    assert world.velocity[0] == 0.0 and world.velocity[1] != 0.0
    assert (world.robot.x, world.robot.y) == (0.0, 0.0)


def test_cmd_vel_is_clamped_to_the_caps():
    world = World(WorldConfig(max_linear_speed_mps=0.5, max_angular_speed_radps=1.0))
    world.set_cmd_vel(3.0, -5.0)
    world.step(0.1)
    assert world.velocity == (0.5, -1.0)


def test_cmd_vel_times_out():
    world = World(WorldConfig(cmd_vel_timeout_s=0.5, max_linear_speed_mps=1.0))
    world.set_cmd_vel(0.4, 0.0)
    world.step(0.3)
    assert world.velocity == (0.4, 0.0)
    world.step(0.5)
    assert world.velocity == (0.0, 0.0)
    assert world.robot.x == pytest.approx(0.4 * 0.5)
    world.step(2.0)
    assert world.robot.x == pytest.approx(0.4 * 0.5)


def test_repeated_cmd_vel_keeps_driving():
    world = World(WorldConfig(cmd_vel_timeout_s=0.5))
    for _ in range(10):
        world.set_cmd_vel(0.2, 0.0)
        world.step(0.3)
    assert world.velocity == (0.2, 0.0)
    assert world.robot.x == pytest.approx(0.2 * 3.0)


def test_cmd_vel_cancels_goal_and_zero_twist_stops():
    world = World()
    world.set_goal(5.0, 0.0, 0.0)
    world.step(2.0)
    assert world.velocity[0] > 0.0
    world.set_cmd_vel(0.0, 0.0)
    assert world.goal is None
    assert world.velocity == (0.0, 0.0)
    stopped_at = world.robot
    world.step(3.0)
    assert world.robot == stopped_at


def test_goal_cancels_cmd_vel():
    world = World(WorldConfig(cmd_vel_timeout_s=5.0))
    world.set_cmd_vel(0.0, 1.0)
    world.set_goal(1.0, 0.0, 0.0)
    run_until_idle(world)
    assert math.hypot(world.robot.x - 1.0, world.robot.y) <= world.config.goal_tolerance_m


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_commands_are_rejected_and_change_nothing(bad):
    world = World()
    world.set_goal(1.0, 1.0, 0.0)
    with pytest.raises(ValueError):
        world.set_goal(bad, 0.0, 0.0)
    with pytest.raises(ValueError):
        world.set_cmd_vel(0.1, bad)
    assert world.goal == RobotPose(1.0, 1.0, 0.0)
    with pytest.raises(ValueError):
        world.step(bad)


def test_pick_carry_and_place():
    world = World(WorldConfig(manipulation_time_s=1.0, reach_m=0.9), objects=[CUP, TABLE], fixed_ids={"table_1"})
    assert world.command_arm(0.5, 0.0, 0.75) == []
    assert world.step(0.5) == []
    assert world.step(0.6) == SUCCEEDED
    assert world.command_gripper(GripperCommand.CLOSE) == []
    assert world.step(1.0) == SUCCEEDED
    assert world.holding == "cup_red"
    assert world.perception_dict()["holding"] == "cup_red"

    world.set_cmd_vel(0.5, 0.0)  # carry it: the arm stows, the cup rides at the carry point
    world.step(0.4)
    cup = world.object("cup_red")
    assert (cup.x, cup.y, cup.z) == pytest.approx(world.hand_point())
    assert cup.x == pytest.approx(world.robot.x + world.config.carry_offset_m)
    assert world.object("table_1") == TABLE

    world.set_cmd_vel(0.0, 0.0)
    target = (world.robot.x + 0.4, 0.6, 0.5)
    assert world.command_arm(*target) == []
    assert world.step(1.0) == SUCCEEDED
    assert world.command_gripper(GripperCommand.OPEN) == []
    assert world.step(1.0) == SUCCEEDED
    assert world.holding == ""
    assert "holding" not in world.perception_dict()
    cup = world.object("cup_red")
    assert (cup.x, cup.y, cup.z) == pytest.approx(target)
    world.set_cmd_vel(0.5, 0.0)
    world.step(0.4)
    assert world.object("cup_red") == cup  # released objects stay put


def test_out_of_reach_fails_at_once():
    world = World(WorldConfig(reach_m=0.9), objects=[CUP])
    assert world.command_arm(2.0, 0.0, 0.5) == FAILED
    assert not world.manipulation_busy
    assert world.step(2.0) == []


def test_arm_fails_when_the_base_leaves_reach_before_the_motion_ends():
    world = World(WorldConfig(reach_m=0.9, manipulation_time_s=2.0, max_linear_speed_mps=1.0))
    assert world.command_arm(0.8, 0.0, 0.5) == []
    world.set_cmd_vel(-1.0, 0.0)
    assert world.step(0.45) == []
    assert world.step(2.0) == FAILED


def test_closing_on_nothing_fails_and_fixed_objects_are_never_grasped():
    world = World(WorldConfig(manipulation_time_s=0.5), objects=[TABLE], fixed_ids={"table_1"})
    assert world.command_arm(0.55, 0.1, 0.0) == []
    assert world.step(0.5) == SUCCEEDED
    assert world.command_gripper(GripperCommand.CLOSE) == []
    assert world.step(0.5) == FAILED
    assert world.holding == ""


def test_grasp_takes_the_nearest_movable_object():
    near = SceneObject("cup_blue", "cup", "blue", 0.6, 0.05, 0.75)
    world = World(WorldConfig(manipulation_time_s=0.0, grasp_radius_m=0.25), objects=[CUP, near])
    assert world.command_arm(0.62, 0.05, 0.75) == SUCCEEDED
    assert world.command_gripper(GripperCommand.CLOSE) == SUCCEEDED
    assert world.holding == "cup_blue"


def test_release_while_stowed_drops_to_the_floor():
    world = World(WorldConfig(manipulation_time_s=0.0), objects=[CUP], holding="cup_red")
    assert world.command_gripper(GripperCommand.OPEN) == SUCCEEDED
    cup = world.object("cup_red")
    assert (cup.x, cup.y, cup.z) == pytest.approx((world.config.carry_offset_m, 0.0, 0.0))


def test_new_command_preempts_the_one_in_progress():
    world = World(WorldConfig(manipulation_time_s=1.0), objects=[CUP])
    assert world.command_arm(0.5, 0.0, 0.75) == []
    assert world.command_arm(0.4, 0.0, 0.75) == FAILED  # the first one, preempted
    assert world.reject_command() == FAILED + FAILED  # the second one preempted, then the rejected one
    assert world.step(2.0) == []


def test_every_command_gets_one_reply():
    world = World(WorldConfig(manipulation_time_s=0.3), objects=[CUP])
    replies = []
    commands = [
        lambda: world.command_arm(0.5, 0.0, 0.75),
        lambda: world.command_gripper(GripperCommand.CLOSE),
        lambda: world.command_arm(5.0, 0.0, 0.75),
        lambda: world.command_arm(math.nan, 0.0, 0.0),
        lambda: world.command_gripper(GripperCommand.OPEN),
    ]
    for command in commands:
        replies += command()
        replies += world.step(0.1)
    replies += world.step(1.0)
    assert len(replies) == len(commands)


def test_perception_dict_parses_as_a_scene():
    world = World(
        WorldConfig(), objects=[CUP, TABLE], people=[Person("user", -1.0, 2.0)], holding="cup_red", time_s=12.5
    )
    text = json.dumps(world.perception_dict())
    data = json.loads(text)
    assert set(data) == {"stamp", "frame_id", "objects", "people", "holding"}
    assert data["frame_id"] == "map" and data["stamp"] == 12.5
    assert set(data["objects"][0]) == {"id", "label", "color", "x", "y", "z", "score"}
    scene = parse_perception_json(text)
    assert scene.holding == "cup_red"
    assert [obj.id for obj in scene.objects] == ["cup_red", "table_1"]
    assert scene.person("user").x == -1.0


@pytest.mark.parametrize(
    "data, command", [([0.0], GripperCommand.CLOSE), ([1.0], GripperCommand.OPEN), ([0.7, 0.0], GripperCommand.OPEN)]
)
def test_gripper_command_from_data(data, command):
    assert gripper_command_from_data(data) is command


@pytest.mark.parametrize("data", [[], [math.nan], [math.inf]])
def test_gripper_command_from_bad_data(data):
    with pytest.raises(ValueError):
        gripper_command_from_data(data)


@pytest.mark.parametrize("yaw", [0.0, 0.5, -1.2, math.pi - 0.01, -math.pi + 0.01])
def test_quaternion_round_trip(yaw):
    assert yaw_from_quaternion(*quaternion_from_yaw(yaw)) == pytest.approx(yaw)
    assert yaw_from_quaternion(*(2.0 * c for c in quaternion_from_yaw(yaw))) == pytest.approx(yaw)


@pytest.mark.parametrize("field", ["max_linear_speed_mps", "reach_m", "cmd_vel_timeout_s"])
@pytest.mark.parametrize("value", [0.0, -1.0, math.nan])
def test_config_rejects_bad_values(field, value):
    with pytest.raises(ValueError, match=field):
        WorldConfig(**{field: value})
