"""sim_world: the stand-in for Gazebo. A ROS 2 shell around wafer_reasoner.sim.world (all behaviour lives there).

Topics (relative names, so they remap onto ros_gz_bridge's; QoS from wafer_reasoner.ros.qos):

  subscribes  goal_pose                geometry_msgs/PoseStamped     go to (x, y, yaw); frame must be 'map'
              cmd_vel                  geometry_msgs/Twist           overrides the goal; times out
              manipulator/target_pose  geometry_msgs/PoseStamped     move the hand; frame must be 'map'
              gripper/commands         std_msgs/Float64MultiArray    [0.0] close (grasp), [1.0] open
  publishes   odom                     nav_msgs/Odometry             odom -> base_link (map == odom here)
              perception/objects       std_msgs/String               JSON scene (planner/scene.py schema)
              manipulator/status       std_msgs/String               'succeeded <id>' / 'failed <id>', one per
                                                                     command; the id is the command's (target
                                                                     pose: stamp in ns; gripper: 'gripper#<id>'
                                                                     label), left out when it has none
              /clock                   rosgraph_msgs/Clock           only with publish_clock:=true
  serves      navigate_to_pose         NavigateToPose action         only with navigation_action_type set
              gripper_cmd              GripperCommand action         only with gripper_action_type set

With ``publish_clock`` the node owns simulated time: a steady-clock timer advances it by real time times
``real_time_factor`` and every stamp is that time (run the other nodes with use_sim_time). Otherwise the
world advances with the node clock (wall time, or /clock from Gazebo under use_sim_time).
"""

from __future__ import annotations

import json
import math
import sys
import time

from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.time import Time
from rosgraph_msgs.msg import Clock as ClockMsg
from std_msgs.msg import Float64MultiArray, String

from wafer_reasoner.ros.conversions import command_id_of_gripper_msg, command_id_of_target_pose
from wafer_reasoner.ros.node_main import run_node
from wafer_reasoner.ros.params import Param, declare_parameters
from wafer_reasoner.ros.qos import CLOCK_QOS, COMMAND_QOS, SENSOR_QOS, VELOCITY_SUB_QOS
from wafer_reasoner.ros.sim_actions import GripperCommandServer, NavigateToPoseServer
from wafer_reasoner.runtime.gate import format_reply
from wafer_reasoner.runtime.resources import ResourceError, scenario_file
from wafer_reasoner.sim.scenario import ScenarioError, load_scenario
from wafer_reasoner.sim.world import (
    GripperCommand,
    ManipulationStatus,
    ReplyOwners,
    World,
    WorldConfig,
    gripper_command_from_data,
    quaternion_from_yaw,
    yaw_from_quaternion,
)

NODE_NAME = "sim_world"
MAP_FRAME = "map"
MAX_TICK_S = 1.0  # a longer gap between ticks (clock jump, stall) is integrated as this much

# Every parameter; names equal to WorldConfig fields are passed to the world. config/sim_world.yaml mirrors this.
PARAMETERS = {
    "max_linear_speed_mps": Param(0.5, "Cap on |linear speed| in m/s, for goals and cmd_vel.", 0.01, 3.0),
    "max_angular_speed_radps": Param(1.0, "Cap on |angular speed| in rad/s, for goals and cmd_vel.", 0.05, 6.0),
    "goal_tolerance_m": Param(0.05, "A goal position counts as reached within this distance (m).", 0.005, 1.0),
    "yaw_tolerance_rad": Param(0.05, "A goal heading counts as reached within this angle (rad).", 0.005, 0.5),
    "cmd_vel_timeout_s": Param(0.5, "Stop when no cmd_vel arrived for this long (s).", 0.05, 10.0),
    "reach_m": Param(0.9, "Arm reach: horizontal distance from the base centre (m).", 0.1, 3.0),
    "grasp_radius_m": Param(0.25, "Closing grasps the nearest movable object this close to the hand (m).", 0.01, 1.0),
    "manipulation_time_s": Param(1.0, "Duration of each arm motion and gripper action (s).", 0.0, 30.0),
    "physics_rate_hz": Param(50.0, "World update rate (Hz); odom and scene rates are capped by it.", 1.0, 1000.0),
    "odom_rate_hz": Param(20.0, "odom publishing rate (Hz).", 1.0, 200.0),
    "scene_rate_hz": Param(5.0, "perception/objects publishing rate (Hz).", 0.5, 50.0),
    "real_time_factor": Param(1.0, "Simulated seconds per real second (only with publish_clock).", 0.1, 100.0),
    "scenario": Param("", "Scenario YAML: a path, or a bare name looked up in the package's config/scenarios/. "
                          "Empty: an empty world with the robot at the origin."),
    "odom_frame_id": Param("odom", "header.frame_id of odom."),
    "base_frame_id": Param("base_link", "child_frame_id of odom."),
    "publish_clock": Param(False, "Publish /clock and own simulated time (then run the other nodes with "
                                  "use_sim_time)."),
    "navigation_action_type": Param("", "Serve navigate_to_pose with this NavigateToPose action type "
                                        "(package/action/Name, e.g. nav2_msgs/action/NavigateToPose). Empty: none."),
    "gripper_action_type": Param("", "Serve gripper_cmd with this GripperCommand action type "
                                     "(e.g. control_msgs/action/GripperCommand). Empty: none."),
}
WORLD_PARAMETERS = tuple(name for name in PARAMETERS if name in WorldConfig.__dataclass_fields__)


def _time_msg(stamp_s: float):
    return Time(nanoseconds=int(round(stamp_s * 1e9))).to_msg()


def _all_finite(*values: float) -> bool:
    return all(math.isfinite(value) for value in values)


class SimWorldNode(Node):
    """Converts messages and calls World; a timer steps the world and publishes odom, scene and /clock."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        declare_parameters(self, PARAMETERS)
        param = self._param
        config = WorldConfig(**{name: param(name) for name in WORLD_PARAMETERS})
        self._world = self._load_world(config, param("scenario"))
        self._reply_owners = ReplyOwners()  # which command id each reply answers
        self._odom_frame, self._base_frame = param("odom_frame_id"), param("base_frame_id")
        self._owns_clock = param("publish_clock")
        self._real_time_factor = param("real_time_factor")
        self._odom_period_s = 1.0 / param("odom_rate_hz")
        self._scene_period_s = 1.0 / param("scene_rate_hz")
        self._next_odom_s = self._next_scene_s = -math.inf
        self._last_tick_s = None  # node clock (or steady clock with publish_clock) at the previous tick

        self._odom_pub = self.create_publisher(Odometry, "odom", SENSOR_QOS)
        self._scene_pub = self.create_publisher(String, "perception/objects", SENSOR_QOS)
        self._status_pub = self.create_publisher(String, "manipulator/status", COMMAND_QOS)
        self._clock_pub = self.create_publisher(ClockMsg, "/clock", CLOCK_QOS) if self._owns_clock else None
        self.create_subscription(PoseStamped, "goal_pose", self._on_goal_pose, COMMAND_QOS)
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, VELOCITY_SUB_QOS)
        self.create_subscription(PoseStamped, "manipulator/target_pose", self._on_target_pose, COMMAND_QOS)
        self.create_subscription(Float64MultiArray, "gripper/commands", self._on_gripper, COMMAND_QOS)
        action_type = param("navigation_action_type")
        self._navigation = NavigateToPoseServer(self, self._world, action_type) if action_type else None
        gripper_type = param("gripper_action_type")
        self._gripper_action = GripperCommandServer(self, self._gripper_from_action, gripper_type) \
            if gripper_type else None

        period_s = 1.0 / param("physics_rate_hz")
        if self._owns_clock:  # our own /clock cannot drive our timer: tick on the steady clock
            steady = Clock(clock_type=ClockType.STEADY_TIME)
            self._timer = self.create_timer(period_s, self._on_steady_tick, clock=steady)
        else:
            self._timer = self.create_timer(period_s, self._on_clock_tick)
        robot = self._world.robot
        clock = f"own /clock at x{self._real_time_factor:g}" if self._owns_clock else "the node clock"
        self.get_logger().info(
            f"{len(self._world.objects)} objects, {len(self._world.people)} people, robot at "
            f"({robot.x:.2f}, {robot.y:.2f}, {robot.yaw:.2f} rad); time from {clock}"
        )

    # ---- set-up ------------------------------------------------------------------------------------------------

    def _param(self, name: str):
        return self.get_parameter(name).value

    def _load_world(self, config: WorldConfig, scenario: str) -> World:
        try:
            path = scenario_file(scenario)
        except ResourceError as error:
            raise ScenarioError(f"scenario {scenario!r}: {error}") from None
        if path is None:
            self.get_logger().info("no scenario: an empty world with the robot at the origin")
            return World(config)
        loaded = load_scenario(str(path))
        self.get_logger().info(f"scenario '{loaded.name}' from {path}")
        start = loaded.scene
        return World(
            config,
            robot=start.robot,
            objects=start.objects,
            people=start.people,
            fixed_ids=loaded.fixed_ids,
            holding=start.holding,
        )

    # ---- commands ------------------------------------------------------------------------------------------

    def _on_goal_pose(self, msg: PoseStamped) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        if msg.header.frame_id != MAP_FRAME:
            self.get_logger().warning(f"goal_pose ignored: frame '{msg.header.frame_id}', expected '{MAP_FRAME}'")
            return
        if not _all_finite(p.x, p.y, p.z, q.x, q.y, q.z, q.w):
            self.get_logger().warning("goal_pose ignored: non-finite position or orientation")
            return
        yaw = yaw_from_quaternion(q.x, q.y, q.z, q.w)
        if self._navigation is not None:
            self._navigation.preempt("preempted by a goal_pose message")
        self._world.set_goal(p.x, p.y, yaw)
        self.get_logger().info(f"goal ({p.x:.2f}, {p.y:.2f}, {yaw:.2f} rad)")

    def _on_cmd_vel(self, msg: Twist) -> None:
        lin, ang = msg.linear, msg.angular
        if not _all_finite(lin.x, lin.y, lin.z, ang.x, ang.y, ang.z):
            self.get_logger().warning("cmd_vel ignored: non-finite value", throttle_duration_sec=2.0)
            return
        if self._navigation is not None and self._navigation.active:
            if not (lin.x or ang.z):
                return  # the action owns the base (as Nav2 would): a zero cmd_vel does not end its goal
            self._navigation.preempt("preempted by cmd_vel")
        self._world.set_cmd_vel(lin.x, ang.z)

    def _on_target_pose(self, msg: PoseStamped) -> None:
        p = msg.pose.position
        problem = ""
        if msg.header.frame_id != MAP_FRAME:
            problem = f"frame '{msg.header.frame_id}', expected '{MAP_FRAME}'"
        elif not _all_finite(p.x, p.y, p.z):
            problem = "non-finite position"
        elif not self._world.within_reach(p.x, p.y):
            problem = f"({p.x:.2f}, {p.y:.2f}) is out of reach"
        command_id = command_id_of_target_pose(msg)
        if problem:
            self.get_logger().warning(f"manipulator/target_pose failed: {problem}")
            self._command(self._world.reject_command, command_id)
            return
        self._command(lambda: self._world.command_arm(p.x, p.y, p.z), command_id)

    def _on_gripper(self, msg: Float64MultiArray) -> None:
        command_id = command_id_of_gripper_msg(msg)
        try:
            command = gripper_command_from_data(msg.data)
        except ValueError as error:
            self.get_logger().warning(f"gripper/commands failed: {error}")
            self._command(self._world.reject_command, command_id)
            return
        self._command(lambda: self._world.command_gripper(command), command_id)

    def _gripper_from_action(self, opening: bool, token) -> None:
        command = GripperCommand.OPEN if opening else GripperCommand.CLOSE
        self._command(lambda: self._world.command_gripper(command), token)

    def _command(self, call, command_id) -> None:
        """Run one arm/gripper command on the world; publish the replies due now, each with its command's id."""
        busy = self._world.manipulation_busy
        self._publish_statuses(self._reply_owners.command(self._world, call(), command_id, busy))

    def _publish_statuses(self, replies) -> None:
        """Each reply on manipulator/status, echoing its command's id, or as the result of the gripper action goal
        that commanded it."""
        for status, owner in replies:
            succeeded = status is ManipulationStatus.SUCCEEDED
            if self._gripper_action is not None and self._gripper_action.owns(owner):
                self._gripper_action.finish(owner, succeeded)
            else:
                self._status_pub.publish(String(data=format_reply(succeeded, owner)))

    # ---- time --------------------------------------------------------------------------------------------

    def _on_steady_tick(self) -> None:
        now = time.monotonic()
        real_dt = 0.0 if self._last_tick_s is None else min(now - self._last_tick_s, MAX_TICK_S)
        self._last_tick_s = now
        self._advance(real_dt * self._real_time_factor, None)

    def _on_clock_tick(self) -> None:
        now_s = self.get_clock().now().nanoseconds * 1e-9
        if self._last_tick_s is None or now_s < self._last_tick_s:  # first tick, or time jumped back
            self._last_tick_s = now_s
            self._advance(0.0, now_s)
            return
        dt = min(now_s - self._last_tick_s, MAX_TICK_S)
        self._last_tick_s = now_s
        self._advance(dt, now_s)

    def _advance(self, dt: float, stamp_s) -> None:
        """Step the world; publish what is due. ``stamp_s`` None: the world's own time is the stamp."""
        self._publish_statuses(self._reply_owners.stepped(self._world, self._world.step(dt)))
        if self._navigation is not None:
            self._navigation.step()
        if stamp_s is None:
            stamp_s = self._world.time_s
            self._clock_pub.publish(ClockMsg(clock=_time_msg(stamp_s)))
        if stamp_s >= self._next_odom_s:
            self._next_odom_s = _next_due(self._next_odom_s, self._odom_period_s, stamp_s)
            self._publish_odom(stamp_s)
        if stamp_s >= self._next_scene_s:
            self._next_scene_s = _next_due(self._next_scene_s, self._scene_period_s, stamp_s)
            body = json.dumps(self._world.perception_dict(stamp_s), separators=(",", ":"))
            self._scene_pub.publish(String(data=body))

    def _publish_odom(self, stamp_s: float) -> None:
        robot, (linear, angular) = self._world.robot, self._world.velocity
        msg = Odometry()
        msg.header.stamp = _time_msg(stamp_s)
        msg.header.frame_id = self._odom_frame
        msg.child_frame_id = self._base_frame
        msg.pose.pose.position.x, msg.pose.pose.position.y = robot.x, robot.y
        q = msg.pose.pose.orientation
        q.x, q.y, q.z, q.w = quaternion_from_yaw(robot.yaw)
        msg.twist.twist.linear.x, msg.twist.twist.angular.z = linear, angular
        self._odom_pub.publish(msg)


def _next_due(previous_due_s: float, period_s: float, now_s: float) -> float:
    """Keep the average rate; after a gap (or at start) restart from now instead of bursting."""
    due = previous_due_s + period_s
    return due if now_s - due < period_s else now_s + period_s


def main(args=None) -> int:
    return run_node(SimWorldNode, NODE_NAME, (ScenarioError, ParameterException, ValueError), args)


if __name__ == "__main__":
    sys.exit(main())
