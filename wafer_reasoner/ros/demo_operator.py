"""demo_operator: a scripted operator. Says a scenario's utterances and prints a timeline of what happens.

A thin shell around ``wafer_reasoner.demo.timeline`` and ``demo.verdicts`` (formatting and judging live there).
It waits until sim_world and the reasoner are up, says each turn of the scenario on ``speech/transcript``, prints
one line per thing that happens, judges each turn against the scenario's ``expect`` and ends by itself with
``RESULT: SUCCESS — ...`` (exit code 0) or ``RESULT: FAILURE — <why>`` (exit code 1).

Ready means: a ``perception/objects`` scene and ``odom`` were seen, the reasoner's ``/diagnostics`` reports OK
(it has fresh perception and a pose) and ``speech/transcript`` has a subscriber.

  publishes   speech/transcript        std_msgs/String               the scenario's utterances
  subscribes  perception/objects, odom, reasoner/plan, goal_pose, cmd_vel, manipulator/target_pose,
              manipulator/status, gripper/commands, say, /diagnostics

Times on the timeline and the turns' ``timeout_s`` are the node clock (simulated time with use_sim_time);
the overall ``timeout_s`` parameter is wall time, so a stalled /clock still ends the run.
"""

from __future__ import annotations

import json
import math
import sys
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray, String

from wafer_reasoner.demo.timeline import (
    HoldingWatch,
    MessageKind,
    Tag,
    VelocityWatch,
    classify_message,
    format_arm_target,
    format_executor_event,
    format_goal,
    format_gripper,
    format_plan_result,
    quoted,
    timeline_line,
)
from wafer_reasoner.demo.verdicts import ScenarioRun, verdict_line
from wafer_reasoner.planner.scene import RobotPose, SceneError, parse_perception_json
from wafer_reasoner.ros.params import Param, declare_parameters
from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS, VELOCITY_SUB_QOS
from wafer_reasoner.runtime.resources import config_file, scenario_file
from wafer_reasoner.sim.scenario import ScenarioError, load_places_file, load_scenario
from wafer_reasoner.sim.world import yaw_from_quaternion

NODE_NAME = "demo_operator"
REASONER_DIAGNOSTIC_SUFFIX = ": reasoner"  # reasoner_node's DiagnosticStatus name is "<node name>: reasoner"
LOOP_PERIOD_S = 0.05  # steady-clock loop: readiness, saying, turn timeouts, overall timeout
WAITING_REPORT_S = 10.0  # while waiting to start, say what is missing this often
EXIT_SUCCESS, EXIT_FAILURE = 0, 1

PARAMETERS = {
    "scenario": Param("bring_red_cup", "Scenario YAML: a path, or a bare name in the package's config/scenarios/."),
    "semantic_map_file": Param("", "Named places (for place: targets). Empty: the package's "
                                   "config/semantic_map.yaml."),
    "timeout_s": Param(0.0, "Overall limit in wall seconds, start-up included. 0: the turns' timeouts summed + "
                            "60 s.", 0.0, 86400.0),
    "pause_s": Param(1.0, "Pause after a turn is met before the next is said (node clock seconds).", 0.0, 600.0),
    "speech_listeners": Param(1, "Subscribers on speech/transcript to wait for before the first turn (2 with a bag "
                                 "recorder, so the bag holds every utterance).", 1, 16),
}


class DemoOperator(Node):
    """Says the scenario's turns, prints the timeline, judges the turns; ``exit_code`` is set when done."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        declare_parameters(self, PARAMETERS)
        try:
            scenario_path = scenario_file(self._param("scenario"))
            if scenario_path is None:
                raise ScenarioError("the 'scenario' parameter is empty: name a scenario to say")
            scenario_path = str(scenario_path)
            places = load_places_file(str(config_file("semantic_map.yaml", self._param("semantic_map_file"))))
        except FileNotFoundError as error:
            raise ScenarioError(str(error)) from None
        scenario = load_scenario(scenario_path, places=places)
        if not scenario.turns:
            raise ScenarioError(f"scenario {scenario_path} has no turns to say")
        self._run = ScenarioRun(scenario, places)
        timeout_s = self._param("timeout_s")
        if not math.isfinite(timeout_s) or timeout_s < 0.0:
            raise ValueError(f"timeout_s must be 0 (automatic) or a positive number of seconds, got {timeout_s}")
        self._timeout_s = timeout_s or sum(turn.expect.timeout_s for turn in scenario.turns) + 60.0
        self._pause_s = max(0.0, self._param("pause_s"))
        self.exit_code = None  # set when the run is over

        self._wall_start = time.monotonic()
        self._next_report = self._wall_start + WAITING_REPORT_S
        self._t0 = None  # node clock at READY; None while waiting
        self._next_say_s = 0.0
        self._perception_json = None
        self._scene = None  # latest parsed scene (objects, people, places) with the latest pose
        self._pose = None
        self._reasoner_ok = ""  # the reasoner's last diagnostic message when it was OK
        self._reasoner_problem = "no /diagnostics from the reasoner yet"
        self._velocity = VelocityWatch()
        self._holding = HoldingWatch()

        self._speech_pub = self.create_publisher(String, "speech/transcript", COMMAND_QOS)
        self.create_subscription(String, "perception/objects", self._on_perception, SENSOR_QOS)
        self.create_subscription(Odometry, "odom", self._on_odom, SENSOR_QOS)
        self.create_subscription(String, "reasoner/plan", self._on_plan, COMMAND_QOS)
        self.create_subscription(PoseStamped, "goal_pose", self._on_goal, COMMAND_QOS)
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, VELOCITY_SUB_QOS)
        self.create_subscription(PoseStamped, "manipulator/target_pose", self._on_arm_target, COMMAND_QOS)
        self.create_subscription(String, "manipulator/status", self._on_manipulator_status, COMMAND_QOS)
        self.create_subscription(Float64MultiArray, "gripper/commands", self._on_gripper, COMMAND_QOS)
        self.create_subscription(String, "say", self._on_robot_say, COMMAND_QOS)
        self.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, COMMAND_QOS)
        # steady clock: the loop (and the overall timeout) keeps running if simulated time stalls
        self._loop = self.create_timer(LOOP_PERIOD_S, self._on_loop, clock=Clock(clock_type=ClockType.STEADY_TIME))

        turns = len(scenario.turns)
        self._print(f"scenario {scenario.name} ({turns} turn{'s' if turns != 1 else ''}) from {scenario_path}")
        if scenario.description:
            self._print(f"  {scenario.description}")
        self._print(f"waiting for sim_world and the reasoner (at most {self._timeout_s:g} s in all) ...")

    def _param(self, name: str):
        return self.get_parameter(name).value

    # ---- output ---------------------------------------------------------------------------------------------

    @staticmethod
    def _print(text: str) -> None:
        print(text, flush=True)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _line(self, tag, text: str) -> None:
        if self._t0 is None or self.exit_code is not None:
            return  # before READY nothing has been said; after RESULT nothing more is printed
        self._print(timeline_line(self._now() - self._t0, tag, text))

    # ---- the loop -------------------------------------------------------------------------------------------

    def _missing(self) -> list:
        missing = []
        if self._perception_json is None:
            missing.append("a perception/objects scene")
        if self._pose is None:
            missing.append("odom")
        if not self._reasoner_ok:
            missing.append(f"the reasoner to be ready ({self._reasoner_problem})")
        listeners = self._param("speech_listeners")
        if self._speech_pub.get_subscription_count() < listeners:
            missing.append(f"{listeners} subscriber(s) on speech/transcript")
        return missing

    def _on_loop(self) -> None:
        if self.exit_code is not None:
            return
        wall = time.monotonic()
        if self._t0 is None:
            self._wait_until_ready(wall)
            return
        now_s = self._now()
        if wall - self._wall_start > self._timeout_s:
            self._finish(self._run.abort(f"the overall timeout of {self._timeout_s:g} s passed", now_s), now_s)
            return
        verdict = self._run.tick(now_s)
        if verdict is not None:
            self._finish(verdict, now_s)
            return
        if self._run.awaiting_turn and now_s >= self._next_say_s:
            turn = self._run.start_next_turn(now_s)
            self._line(Tag.SAY, quoted(turn.say))
            self._speech_pub.publish(String(data=turn.say))

    def _wait_until_ready(self, wall: float) -> None:
        missing = self._missing()
        if wall - self._wall_start > self._timeout_s:
            why = f"not ready after {self._timeout_s:g} s: waiting for {', '.join(missing)}"
            self._t0 = self._now()
            self._finish(self._run.abort(why, self._t0), self._t0)
            return
        if missing:
            if wall >= self._next_report:
                self._next_report = wall + WAITING_REPORT_S
                self._print(f"still waiting for: {', '.join(missing)}")
            return
        self._t0 = self._next_say_s = self._now()
        robot = self._pose
        scene = self._scene
        seen = f"{len(scene.objects)} objects, {len(scene.people)} people" if scene is not None else "a scene"
        self._line(Tag.READY, f"{seen}; robot at ({robot.x:.2f}, {robot.y:.2f}); reasoner: {self._reasoner_ok}")
        if scene is not None:
            self._line(Tag.WORLD, self._holding.update(scene.holding))

    def _finish(self, verdict, now_s: float) -> None:
        tag, text = verdict_line(verdict, self._run)
        self._line(tag, text)
        if not self._run.finished:
            self._next_say_s = now_s + self._pause_s
            return
        elapsed = now_s - self._t0 if self._t0 is not None else 0.0
        self._print(self._run.result_line(elapsed))
        self.exit_code = EXIT_SUCCESS if self._run.succeeded else EXIT_FAILURE

    def interrupt(self, why: str) -> None:
        """End now (Ctrl-C, shutdown) with a FAILURE result, unless the run already ended."""
        if self.exit_code is None:
            now_s = self._now()
            if self._t0 is None:
                self._t0 = now_s
            self._finish(self._run.abort(why, now_s), now_s)

    # ---- what is seen ---------------------------------------------------------------------------------------

    def _world_changed(self) -> None:
        if self._scene is None or self._t0 is None or self.exit_code is not None:
            return
        now_s = self._now()
        change = self._holding.update(self._scene.holding)
        if change:
            self._line(Tag.WORLD, change)
        verdict = self._run.on_world(self._scene, now_s)
        if verdict is not None:
            self._finish(verdict, now_s)

    def _on_perception(self, msg: String) -> None:
        self._perception_json = msg.data
        try:
            scene = parse_perception_json(msg.data, places=self._run.places, robot=self._pose or RobotPose())
        except SceneError as error:
            self.get_logger().warning(f"perception/objects not understood: {error}", throttle_duration_sec=5.0)
            return
        self._scene = scene
        self._world_changed()

    def _on_odom(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        pose = RobotPose(p.x, p.y, yaw_from_quaternion(q.x, q.y, q.z, q.w))
        if not all(math.isfinite(v) for v in (pose.x, pose.y, pose.yaw)):
            return
        self._pose = pose
        if self._scene is not None:
            self._scene = self._scene.with_robot(pose)
            self._world_changed()

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if not status.name.endswith(REASONER_DIAGNOSTIC_SUFFIX):
                continue
            if status.level == DiagnosticStatus.OK:
                self._reasoner_ok = status.message or "ok"
            else:
                self._reasoner_ok = ""
                self._reasoner_problem = status.message or f"diagnostic level {status.level!r}"

    def _on_plan(self, msg: String) -> None:
        try:
            record = json.loads(msg.data)
        except ValueError:
            self._line(Tag.PLAN, f"(not JSON) {msg.data[:200]}")
            return
        kind = classify_message(record)
        now_s = self._now()
        verdict = None
        if kind is MessageKind.PLAN_RESULT:
            self._line(Tag.PLAN, format_plan_result(record))
            verdict = self._run.on_plan_result(record, now_s)
        elif kind is MessageKind.EXECUTOR_EVENT:
            tag, text = format_executor_event(record, self._run.plan_step_count)
            self._line(tag, text)
            verdict = self._run.on_executor_event(record, now_s)
        else:
            self._line(Tag.PLAN, f"(unknown message) {msg.data[:200]}")
        if verdict is not None:
            self._finish(verdict, now_s)

    def _on_goal(self, msg: PoseStamped) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        self._line(Tag.GOAL, format_goal(p.x, p.y, yaw_from_quaternion(q.x, q.y, q.z, q.w), self._scene))

    def _on_cmd_vel(self, msg: Twist) -> None:
        text = self._velocity.update(msg.linear.x, msg.angular.z)
        if text:
            self._line(Tag.CMD_VEL, text)

    def _on_arm_target(self, msg: PoseStamped) -> None:
        p = msg.pose.position
        self._line(Tag.ARM, format_arm_target(p.x, p.y, p.z, self._scene))

    def _on_manipulator_status(self, msg: String) -> None:
        self._line(Tag.STATUS, f"manipulator {msg.data}")

    def _on_gripper(self, msg: Float64MultiArray) -> None:
        self._line(Tag.GRIPPER, format_gripper(msg.data))

    def _on_robot_say(self, msg: String) -> None:
        self._line(Tag.ROBOT, quoted(msg.data))
        now_s = self._now()
        verdict = self._run.on_robot_say(msg.data, now_s)
        if verdict is not None:
            self._finish(verdict, now_s)


def main(args=None) -> int:
    rclpy.init(args=args)
    try:
        node = DemoOperator()
    except (ScenarioError, ParameterException, ValueError) as error:
        print(f"RESULT: FAILURE — demo_operator cannot start: {error}", flush=True)
        rclpy.try_shutdown()
        return EXIT_FAILURE
    try:
        while rclpy.ok() and node.exit_code is None:
            rclpy.spin_once(node, timeout_sec=0.1)
    except KeyboardInterrupt:
        node.interrupt("interrupted (Ctrl-C)")
    except ExternalShutdownException:
        node.interrupt("shut down from outside")
    finally:
        if node.exit_code is None:
            node.interrupt("ROS was shut down")
        node.destroy_node()
        rclpy.try_shutdown()
    return node.exit_code


if __name__ == "__main__":
    sys.exit(main())
