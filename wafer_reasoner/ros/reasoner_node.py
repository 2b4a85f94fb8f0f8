"""reasoner_node: spoken requests in, verified plans out, executed step by step. A thin ROS shell.

All behaviour lives in ``runtime/core.py`` (``ReasonerCore``): callbacks convert the message
(``conversions.py``), call the core with the node clock's time and publish what it returns, in order. Topics
(relative names, remappable; QoS from ``wafer_reasoner.ros.qos``):

  subscribes  speech/transcript        std_msgs/String             one utterance per message
              perception/objects       std_msgs/String             JSON scene (planner/scene.py schema)
              odom                     nav_msgs/Odometry           robot pose (x, y, yaw) in the scene frame
              manipulator/status       std_msgs/String             'succeeded' / 'failed', one per command
  publishes   goal_pose                geometry_msgs/PoseStamped   navigation goals (Nav2's topic)
              cmd_vel                  geometry_msgs/Twist         rotations and stops, clamped to the caps
              manipulator/target_pose  geometry_msgs/PoseStamped   pick / place / handover points
              gripper/commands         std_msgs/Float64MultiArray  [1.0] open, [0.0] close (as sim_world)
              say                      std_msgs/String             questions, refusals, failures (for TTS)
              reasoner/plan            std_msgs/String             JSON stream: {"type": "plan" | "event", ...}
              /diagnostics             diagnostic_msgs/DiagnosticArray   ~1 Hz

With ``emulator.pacing: emulated`` a held answer is released by a one-shot timer (never a sleep) at the core's
``next_release_s``. Every time is the node clock, so ``use_sim_time`` works. The README (sections Topics,
Parameters) documents the JSON stream and every parameter; ``config/reasoner.yaml`` mirrors ``PARAMETERS``.

Set-up is split the way a managed node splits it: ``_configure()`` loads the model, the semantic map, the safety
limits and builds the core (on_configure); ``_activate()`` creates publishers, subscriptions and timers
(on_activate).
"""

from __future__ import annotations

import math
import sys

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray, String

from wafer_reasoner.emulator import EmulatorDataError
from wafer_reasoner.emulator.pacing import OFF, check_mode
from wafer_reasoner.engine.planner_model import ModelLoadError
from wafer_reasoner.planner.commands import (
    ArmTarget,
    CancelGoals,
    GripperCommand,
    NavigationGoal,
    Say,
    VelocityCommand,
)
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.limits import LimitsError, SafetyLimits
from wafer_reasoner.planner.scene import Scene, SceneError, parse_perception_json
from wafer_reasoner.ros import conversions
from wafer_reasoner.ros.node_main import run_node
from wafer_reasoner.ros.params import Param, declare_parameters, parameter_values
from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS
from wafer_reasoner.runtime.core import WARN, EventRecord, Log, PlanRecord, ReasonerCore
from wafer_reasoner.runtime.emulation import emulator_for, reasoning_for
from wafer_reasoner.runtime.resources import ResourceError, config_file
from wafer_reasoner.sim.scenario import ScenarioError, load_places_file

NODE_NAME = "reasoner_node"
SEMANTIC_MAP_FILE = "semantic_map.yaml"
WARN_THROTTLE_S = 5.0  # repeated warnings (bad perception, bad odom) at most this often

# Every parameter of the node; config/reasoner.yaml mirrors this exactly (test_reasoner_node checks it).
PARAMETERS = {
    "model_dir": Param(
        "", "Folder with planner.onnx, genai_config.json and tokenizer.json. Empty: the model shipped in the package."
    ),
    "engine_threads": Param(1, "onnxruntime intra-op threads for the planner model.", 1, 64),
    "engine": Param("fast", "Decoding engine: fast (constrained, cached, best-of-N) or reference (the plain loop the "
                    "fast engine is tested against)."),
    "engine_candidates": Param(1, "Plans decoded as one batch, best kept by model score; 1 = greedy.", 1, 64),
    "engine_temperature": Param(0.8, "Sampling temperature of candidates 2..N.", 0.01, 10.0),
    "engine_top_k": Param(8, "Candidates 2..N sample among the k most likely allowed tokens (0: all).", 0, 1000),
    "engine_seed": Param(0, "Sampler seed: the same query, settings and seed give the same plan.", 0, 2**31 - 1),
    "engine_deadline_ms": Param(
        0.0, "Best-of-N deadline in emulated time, ms (0: none): only the first n candidates whose batch the "
        "emulator.* pair finishes by the deadline compete (at least the greedy one); the host stops the others.",
        0.0, 10000.0,
    ),
    "engine_constrained": Param(True, "Decode inside the action-language grammar and the scene's references."),
    "engine_forced_runs": Param(True, "Feed tokens the grammar forces as one chunk."),
    "engine_prefix_cache": Param(4, "Prompts whose KV state is kept for reuse (0: none).", 0, 64),
    "engine_draft_tokens": Param(8, "Greedy: tokens drafted from past plan shapes per step (0: none).", 0, 64),
    "engine_export": Param("auto", "Which export of the model the fast engine runs: auto (the first present of "
                           "kv-int8, kv, genai), kv (in-place KV cache, float32), kv-int8 or genai (planner.onnx)."),
    "semantic_map_file": Param(
        "",
        "YAML with the named places ({places: [{name, x, y, yaw}]}, map frame). Empty: the package's "
        "config/semantic_map.yaml (share directory, else the source tree).",
    ),
    "control_rate_hz": Param(20.0, "Executor tick rate (timeouts, waits, rotation keep-alive), Hz.", 1.0, 200.0),
    "diagnostics_rate_hz": Param(1.0, "/diagnostics publishing rate, Hz.", 0.1, 10.0),
    "manipulator_replies_to_gripper": Param(
        True,
        "The manipulator answers every gripper command on manipulator/status too (sim_world does). "
        "False: only arm targets get a reply.",
    ),
    "executor.nav_tolerance_m": Param(0.2, "A navigate step is done within this distance of its goal, m.", 0.01, 2.0),
    "executor.nav_timeout_s": Param(
        60.0,
        "A navigate/rotate step fails after this long; follow gives up after not seeing the person this long, s.",
        1.0,
        3600.0,
    ),
    "executor.manip_timeout_s": Param(30.0, "An arm or gripper action fails after this long, s.", 1.0, 600.0),
    "executor.yaw_tolerance_rad": Param(0.05236, "A rotate step is done within this angle, rad.", 0.001, 0.5),
    "limits.workspace_min_x_m": Param(
        -10.0, "Navigation goals must lie inside the workspace box (scene frame), m.", -10000.0, 10000.0
    ),
    "limits.workspace_max_x_m": Param(10.0, "Workspace box, upper x, m.", -10000.0, 10000.0),
    "limits.workspace_min_y_m": Param(-10.0, "Workspace box, lower y, m.", -10000.0, 10000.0),
    "limits.workspace_max_y_m": Param(10.0, "Workspace box, upper y, m.", -10000.0, 10000.0),
    "limits.max_linear_speed_mps": Param(0.5, "Cap on |linear speed| of every cmd_vel, m/s.", 0.01, 5.0),
    "limits.max_angular_speed_radps": Param(1.0, "Cap on |angular speed| of every cmd_vel, rad/s.", 0.01, 10.0),
    "limits.max_scene_age_s": Param(2.0, "Perception older than this is not planned against, s.", 0.05, 60.0),
    "limits.max_wait_s": Param(60.0, "Longest wait() step, s.", 0.0, 3600.0),
    "limits.max_rotate_deg": Param(360.0, "Largest |rotate()| step, degrees.", 1.0, 3600.0),
    "limits.standoff_m": Param(0.6, "Distance of the stand-off pose from a navigation target, m.", 0.0, 5.0),
    "limits.max_reach_m": Param(0.9, "Horizontal reach of the arm from the base centre, m.", 0.05, 5.0),
    "emulator.target_model": Param(
        "planner",
        "Target model whose time is emulated for every planning query: a name in config/target_models.yaml or "
        "'planner' (the loaded model). Other emulator settings (placement, speculative, reasoning budgets, "
        "hardware_files) come from config/emulator.yaml. `wafer-reasoner emulate --list` shows the names.",
    ),
    "emulator.hardware": Param(
        "WSE-3",
        "Hardware profile the target is emulated on: a name in config/hardware.yaml (WSE-2, WSE-3, A100, H100, "
        "H200, B200, host) or in config/emulator.yaml's hardware_files.",
    ),
    "emulator.stack": Param(
        "",
        "Serving stack the target runs under on that hardware: a name in config/stacks.yaml that lists the "
        "hardware (e.g. cerebras-2025-h2, waferllm-2025-02, tensorrt-llm-2025-05). Empty: the hardware's default "
        "stack (config/stacks.yaml defaults).",
    ),
    "emulator.pacing": Param(
        OFF,
        "off: publish each plan as soon as the host has it. emulated: publish (and execute) it no earlier than "
        "query time + its emulated latency on the node clock; a host slower than that publishes at once and "
        "reports pacing.behind_ms. Stop commands are never paced.",
    ),
}
LIMITS_PREFIX = "limits."
ENGINE_PREFIX = "engine_"
EXECUTOR_PREFIX = "executor."


class ConfigurationError(RuntimeError):
    """Parameters or files the node cannot start with; the message says which and how to fix it."""


def load_semantic_map(path) -> tuple:
    """Named places from a semantic map YAML; ConfigurationError naming the file when it cannot be used."""
    try:
        return load_places_file(str(path))
    except ScenarioError as error:
        raise ConfigurationError(
            f"{error}. Set the 'semantic_map_file' parameter to a YAML file with 'places: [{{name, x, y, yaw}}]'."
        ) from None


class ReasonerNode(Node):
    """Feeds the reasoner core from the subscriptions and publishes what it returns."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        declare_parameters(self, PARAMETERS)
        self._configure()
        self._activate()

    def _param(self, name: str):
        return self.get_parameter(name).value

    # ---- set-up (lifecycle: on_configure / on_activate) -----------------------------------------------------

    def _configure(self) -> None:
        """Limits, executor, semantic map, model, emulator, core; raises ConfigurationError / ModelLoadError."""
        try:
            limits = SafetyLimits.from_mapping(parameter_values(self, PARAMETERS, LIMITS_PREFIX))
        except LimitsError as error:
            raise ConfigurationError(f"bad 'limits.*' parameters: {error}") from None
        try:
            executor = Executor(limits, **parameter_values(self, PARAMETERS, EXECUTOR_PREFIX))
        except ValueError as error:
            raise ConfigurationError(f"bad 'executor.*' / 'limits.*' parameters: {error}") from None
        try:
            map_file = config_file(SEMANTIC_MAP_FILE, self._param("semantic_map_file"))
        except ResourceError as error:
            raise ConfigurationError(f"cannot read the semantic map: {error}. Set 'semantic_map_file' to a YAML "
                                     f"file with 'places: [{{name, x, y, yaw}}]'.") from None
        self._places = load_semantic_map(map_file)
        try:
            pacing = check_mode(self._param("emulator.pacing"))
        except ValueError as error:
            raise ConfigurationError(f"bad 'emulator.pacing' parameter: {error}") from None
        model, deadline_ms = self._load_model()
        try:
            emulator = emulator_for(self._param("emulator.target_model"), self._param("emulator.hardware"),
                                    self._param("emulator.stack"), planner_dir=model.model_dir)
            reasoning = reasoning_for()
        except (EmulatorDataError, ResourceError) as error:
            raise ConfigurationError(
                f"bad 'emulator.*' parameters: {error}. `wafer-reasoner emulate --list` shows the known names."
            ) from None
        self._model = model
        self._core = ReasonerCore(model, emulator, limits, executor, places=self._places, pacing=pacing,
                                  deadline_ms=deadline_ms, clock=self._now, reasoning=reasoning,
                                  gripper_replies=self._param("manipulator_replies_to_gripper"))
        self._release_timer = None
        self.get_logger().info(
            f"planner model from {model.model_dir}, {len(self._places)} named places from {map_file}; "
            f"caps {limits.max_linear_speed_mps:g} m/s, {limits.max_angular_speed_radps:g} rad/s; "
            f"emulating {emulator.target.name} on {emulator.hardware.name} ({emulator.stack.name}), pacing {pacing}"
        )

    def _load_model(self):
        """(PlannerModel, best-of-N deadline in emulated ms); onnxruntime is imported only where a node runs."""
        from wafer_reasoner.engine.fast_engine import EngineConfig
        from wafer_reasoner.engine.planner_model import ENGINES, PlannerModel

        values = parameter_values(self, PARAMETERS, ENGINE_PREFIX)
        deadline_ms = values.pop("deadline_ms")  # emulated time: the core applies it, the host decodes every row
        try:
            engine_config = EngineConfig.from_params(values, prefix="")
        except ValueError as error:
            raise ConfigurationError(f"bad 'engine_*' parameters: {error}") from None
        if self._param("engine") not in ENGINES:
            raise ConfigurationError(f"'engine' must be one of {ENGINES}, got {self._param('engine')!r}")
        model = PlannerModel(self._param("model_dir") or None, threads=self._param("engine_threads"),
                             engine=self._param("engine"), engine_config=engine_config)
        model.prepare(Scene(places=self._places))  # the map part of the prompt, computed once
        return model, deadline_ms

    def _activate(self) -> None:
        self._goal_pub = self.create_publisher(PoseStamped, "goal_pose", COMMAND_QOS)
        self._cmd_vel_pub = self.create_publisher(Twist, "cmd_vel", COMMAND_QOS)
        self._arm_pub = self.create_publisher(PoseStamped, "manipulator/target_pose", COMMAND_QOS)
        self._gripper_pub = self.create_publisher(Float64MultiArray, "gripper/commands", COMMAND_QOS)
        self._say_pub = self.create_publisher(String, "say", COMMAND_QOS)
        self._plan_pub = self.create_publisher(String, "reasoner/plan", COMMAND_QOS)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", COMMAND_QOS)
        self.create_subscription(String, "speech/transcript", self._on_speech, COMMAND_QOS)
        self.create_subscription(String, "perception/objects", self._on_perception, SENSOR_QOS)
        self.create_subscription(Odometry, "odom", self._on_odom, SENSOR_QOS)
        self.create_subscription(String, "manipulator/status", self._on_manipulator_status, COMMAND_QOS)
        self._control_timer = self.create_timer(1.0 / self._param("control_rate_hz"), self._on_control_tick)
        self._diagnostics_timer = self.create_timer(1.0 / self._param("diagnostics_rate_hz"), self._on_diagnostics)

    # ---- callbacks: convert, call the core, publish -----------------------------------------------------------

    def _now(self) -> float:
        return conversions.seconds_from_nanoseconds(self.get_clock().now().nanoseconds)

    def _on_speech(self, msg: String) -> None:
        self._publish(self._core.on_utterance(msg.data, self._now()))
        self._arm_release_timer()

    def _on_release_timer(self) -> None:
        self._publish(self._core.release_due(self._now()))
        self._arm_release_timer()

    def _arm_release_timer(self) -> None:
        """A one-shot timer for the next held answer (none when nothing is held)."""
        if self._release_timer is not None:
            self.destroy_timer(self._release_timer)
            self._release_timer = None
        due_s = self._core.next_release_s
        if due_s is not None:
            self._release_timer = self.create_timer(max(due_s - self._now(), 1e-4), self._on_release_timer)

    def _on_perception(self, msg: String) -> None:
        try:
            scene = parse_perception_json(msg.data, places=self._places, robot=self._core.pose)
        except SceneError as error:
            self.get_logger().warning(f"perception/objects ignored, keeping the previous scene: {error}",
                                      throttle_duration_sec=WARN_THROTTLE_S)
            return
        self._publish(self._core.on_scene(scene, self._now()))

    def _on_odom(self, msg: Odometry) -> None:
        pose = conversions.pose_from_odometry(msg)
        if pose is None:
            self.get_logger().warning("odom ignored: non-finite pose", throttle_duration_sec=WARN_THROTTLE_S)
            return
        self._publish(self._core.on_odom(pose, conversions.base_velocity_from_odometry(msg), self._now()))

    def _on_manipulator_status(self, msg: String) -> None:
        self._publish(self._core.on_reply(msg.data.strip().lower(), self._now()))

    def _on_control_tick(self) -> None:
        self._publish(self._core.tick(self._now()))

    def _on_diagnostics(self) -> None:
        now_s, core = self._now(), self._core
        status = core.status(now_s)
        problems = status["problems"]
        self._diagnostics_pub.publish(conversions.diagnostics_to_msg(
            name=f"{self.get_name()}: reasoner",
            hardware_id=str(self._model.model_dir),
            level="warn" if problems else "ok",
            message="; ".join(problems) or f"ready, executor {core.executor.state.value}",
            values={
                "model_loaded": True,
                "model_dir": self._model.model_dir,
                "last_planning_latency_ms": core.last_latency_ms,
                "emulated_target_model": core.emulator.target.name,
                "emulated_hardware": core.emulator.hardware.name,
                "emulated_stack": core.emulator.stack.name,
                "last_emulated_planning_latency_ms": core.last_emulated_ms,
                "pacing": core.pacing,
                "last_pacing_behind_ms": core.last_behind_ms,
                "plans_held": len(core.held),
                "scene_age_s": status["scene_age_s"],
                "pose_known": status["pose_known"],
                "executor_state": core.executor.state.value,
                "current_step_index": core.executor.current_step_index,
                "plans_received": core.plans,
            },
            stamp_s=now_s,
        ))

    # ---- publishing -----------------------------------------------------------------------------------------

    def _frame(self) -> str:
        scene = self._core.scene
        return scene.frame_id if scene is not None else "map"

    def _publish(self, outputs) -> None:
        """The only place that turns the core's outputs into messages, in order."""
        now_s = self._now()
        for item in outputs:
            if isinstance(item, PlanRecord):
                self._plan_pub.publish(conversions.plan_result_to_msg(item.result, plan_id=item.plan_id,
                                                                      stamp_s=item.stamp_s))
            elif isinstance(item, EventRecord):
                self._plan_pub.publish(conversions.plan_event_to_msg(item.event, plan_id=item.plan_id,
                                                                     stamp_s=item.stamp_s))
            elif isinstance(item, Log):
                log = self.get_logger()
                (log.warning if item.level == WARN else log.info)(item.text)
            elif isinstance(item, Say):
                if item.text:
                    self._say_pub.publish(String(data=item.text))
            else:
                self._publish_command(item, now_s)

    def _publish_command(self, command, now_s: float) -> None:
        if isinstance(command, NavigationGoal):
            self._publish_pose(self._goal_pub, conversions.navigation_goal_to_pose(
                command, frame_id=self._frame(), stamp_s=now_s), "goal_pose")
        elif isinstance(command, VelocityCommand):
            limits = self._core.limits
            twist = conversions.velocity_to_twist(command, max_linear_mps=limits.max_linear_speed_mps,
                                                  max_angular_radps=limits.max_angular_speed_radps)
            if twist is None:
                self.get_logger().warning("non-finite velocity command replaced by a stop")
                twist = conversions.zero_twist()
            self._cmd_vel_pub.publish(twist)
        elif isinstance(command, ArmTarget):
            self._publish_pose(self._arm_pub, conversions.arm_target_to_pose(
                command, robot=self._core.pose, frame_id=self._frame(), stamp_s=now_s), "manipulator/target_pose")
        elif isinstance(command, GripperCommand):
            self._gripper_pub.publish(conversions.gripper_command_to_msg(command))
        elif isinstance(command, CancelGoals):
            self._hold_position(now_s)
        else:
            self.get_logger().error(f"unknown core output {command!r} not published")

    def _publish_pose(self, publisher, msg, topic: str) -> None:
        if msg is None:  # the executor checks this too; never put a NaN on the wire
            self.get_logger().warning(f"{topic} not published: non-finite pose")
            return
        publisher.publish(msg)

    def _hold_position(self, now_s: float) -> None:
        """goal_pose has no cancel: send the current pose as the goal (Nav2 and sim_world then hold still). The
        zero cmd_vel that always follows CancelGoals stops a base driven by velocity."""
        pose = self._core.pose
        if math.isfinite(pose.x):
            self._publish_pose(self._goal_pub, conversions.pose_stamped(
                pose.x, pose.y, pose.yaw, frame_id=self._frame(), stamp_s=now_s), "goal_pose")


def main(args=None) -> int:
    return run_node(ReasonerNode, NODE_NAME, (ModelLoadError, ConfigurationError, ParameterException), args)


if __name__ == "__main__":
    sys.exit(main())
