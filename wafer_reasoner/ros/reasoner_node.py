"""reasoner_node: spoken requests in, verified plans out, executed step by step. A thin shell around the pure core.

Callbacks convert the message (``conversions.py``), call the core (``planner.query.answer``, ``planner.executor``)
and publish what it returns; all behaviour lives in the core. Topics (relative names, remappable; QoS from
``wafer_reasoner.ros.qos``):

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

Every plan is charged the emulated time of the ``emulator.*`` (target model, hardware) pair beside its measured
host time; with ``emulator.pacing: emulated`` an answer is held (a one-shot timer, never a sleep) until query
time + its emulated latency, or published at once with ``pacing.behind_ms`` when the host was slower. Stop
commands are never held, and a stop cancels held answers. Every time is the node clock, so ``use_sim_time``
works. The README (sections Topics, Parameters) documents the
JSON stream and every parameter; ``config/reasoner.yaml`` mirrors ``PARAMETERS`` below.

Lifecycle-ready: this is a plain ``rclpy.node.Node`` so ``ros2 run`` and plain launch files work, but set-up is
split the way a managed node splits it: ``_configure()`` loads the model, the semantic map, the safety limits
and builds the executor (what ``on_configure`` would do); ``_activate()`` creates publishers, subscriptions and
timers (``on_activate``). Moving to ``rclpy.lifecycle.LifecycleNode`` is mechanical: call them from the
transition callbacks and return FAILURE instead of raising.
"""

from __future__ import annotations

import math
import os
import sys
from collections import deque
from dataclasses import dataclass, replace
from types import MappingProxyType

import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray, String

from wafer_reasoner.emulator import Emulator, EmulatorDataError, known_targets, load_hardware, select
from wafer_reasoner.emulator.datafiles import config_file, read_yaml
from wafer_reasoner.emulator.deadline import EmulatedBestOfN
from wafer_reasoner.emulator.pacing import EMULATED, OFF, check_mode, pace
from wafer_reasoner.engine.planner_model import ModelLoadError, verified_plans
from wafer_reasoner.planner.executor import (
    ArmTarget,
    CancelGoals,
    Executor,
    GripperCommand,
    NavigationGoal,
    PlanEvent,
    PlanEventKind,
    Say,
    VelocityCommand,
)
from wafer_reasoner.planner.limits import LimitsError, SafetyLimits
from wafer_reasoner.planner.query import PlanResult, PlanStatus, answer, utterance_problem
from wafer_reasoner.planner.scene import RobotPose, Scene, SceneError, load_places, parse_perception_json
from wafer_reasoner.planner.stop_command import is_stop_command
from wafer_reasoner.ros import conversions
from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS

NODE_NAME = "reasoner_node"
PACKAGE = "wafer_reasoner"
SEMANTIC_MAP_FILE = "semantic_map.yaml"
NO_SCENE_REASON = "I can't see anything yet."
GRASP_FAILED_REASON = "I couldn't grasp it."
WARN_THROTTLE_S = 5.0  # repeated warnings (bad perception, bad odom) at most this often
LOG_UTTERANCE_CHARS = 80

UNKNOWN_POSE = RobotPose(math.nan, math.nan, math.nan)  # until the first odom: the verifier refuses to move


@dataclass(frozen=True)
class Param:
    """One declared parameter: its default (which fixes its type), description and optional range."""

    default: object
    description: str
    low: float | int | None = None
    high: float | int | None = None


# Every parameter of the node; config/reasoner.yaml mirrors this exactly (test_reasoner_node checks it).
PARAMETERS = {
    "model_dir": Param(
        "", "Folder with planner.onnx, genai_config.json and tokenizer.json. Empty: the model shipped in the package."
    ),
    "engine_threads": Param(1, "onnxruntime intra-op threads for the planner model.", 1, 64),
    "engine": Param("fast", "Decoding engine: fast (constrained, cached, best-of-N) or v0 (reference loop)."),
    "engine_candidates": Param(1, "Plans decoded as one batch, best kept by model score; 1 = greedy.", 1, 64),
    "engine_temperature": Param(0.8, "Sampling temperature of candidates 2..N.", 0.01, 10.0),
    "engine_top_k": Param(8, "Candidates 2..N sample among the k most likely allowed tokens (0: all).", 0, 1000),
    "engine_seed": Param(0, "Sampler seed: the same query, settings and seed give the same plan.", 0, 2**31 - 1),
    "engine_deadline_ms": Param(
        0.0, "Best-of-N deadline in emulated time, ms (0: none): the host decodes all engine_candidates, then only "
        "the first n whose batch the emulator.* pair finishes by the deadline compete (at least the greedy one).",
        0.0, 10000.0,
    ),
    "engine_constrained": Param(True, "Decode inside the action-language grammar and the scene's references."),
    "engine_forced_runs": Param(True, "Feed tokens the grammar forces as one chunk."),
    "engine_prefix_cache": Param(4, "Prompts whose KV state is kept for reuse (0: none).", 0, 64),
    "engine_draft_tokens": Param(8, "Greedy: tokens drafted from past plan shapes per step (0: none).", 0, 64),
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
        "'planner' (the loaded model). Other emulator settings (placement, speculative, hardware_files) come "
        "from config/emulator.yaml. `wafer-reasoner emulate --list` shows the names.",
    ),
    "emulator.hardware": Param(
        "WSE-3",
        "Hardware profile the target is emulated on: a name in config/hardware.yaml (WSE-2, WSE-3, A100, H100, "
        "H200, B200, host) or in config/emulator.yaml's hardware_files.",
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
EMULATOR_SETTINGS_FILE = "emulator.yaml"


class ConfigurationError(RuntimeError):
    """Parameters or files the node cannot start with; the message says which and how to fix it."""


def _descriptor(param: Param) -> ParameterDescriptor:
    kinds = {
        bool: ParameterType.PARAMETER_BOOL,
        int: ParameterType.PARAMETER_INTEGER,
        float: ParameterType.PARAMETER_DOUBLE,
        str: ParameterType.PARAMETER_STRING,
    }
    descriptor = ParameterDescriptor(type=kinds[type(param.default)], description=param.description, read_only=True)
    if isinstance(param.default, float) and param.low is not None:
        descriptor.floating_point_range = [FloatingPointRange(from_value=param.low, to_value=param.high, step=0.0)]
    elif isinstance(param.default, int) and not isinstance(param.default, bool) and param.low is not None:
        descriptor.integer_range = [IntegerRange(from_value=param.low, to_value=param.high, step=1)]
    return descriptor


def package_config_dir() -> str:
    """share/wafer_reasoner/config when the package is installed (colcon or pip), else the source tree's config/."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

        try:
            shared = os.path.join(get_package_share_directory(PACKAGE), "config")
            if os.path.isfile(os.path.join(shared, SEMANTIC_MAP_FILE)):
                return shared
        except (PackageNotFoundError, ValueError, LookupError, OSError):  # OSError: AMENT_PREFIX_PATH unset
            pass
    except ImportError:
        pass
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "config")


def load_semantic_map(path: str) -> tuple:
    """Named places from a semantic map YAML; ConfigurationError naming the file when it cannot be used."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as error:
        raise ConfigurationError(
            f"cannot read the semantic map {path}: {error}. Set the 'semantic_map_file' parameter to a YAML file "
            f"with 'places: [{{name, x, y, yaw}}]'."
        ) from None
    try:
        return load_places(data)
    except SceneError as error:
        raise ConfigurationError(f"bad semantic map {path}: {error}") from None


def emulator_for(target_model: str, hardware: str, planner_dir) -> Emulator:
    """config/emulator.yaml's emulator with the target model and hardware named by the parameters."""
    try:
        settings = read_yaml(config_file(EMULATOR_SETTINGS_FILE))
        settings = {**settings, "target_model": target_model, "hardware": hardware}
        extra = settings.get("hardware_files") or []
        if not isinstance(extra, list):
            raise EmulatorDataError("emulator settings: 'hardware_files' must be a list of paths")
        profiles = load_hardware(None, extra_paths=extra)
        target, profile, speculative, options = select(settings, profiles, known_targets(planner_dir=planner_dir))
        return Emulator(target, profile, speculative=speculative, options=options)
    except EmulatorDataError as error:
        raise ConfigurationError(
            f"bad 'emulator.*' parameters: {error}. `wafer-reasoner emulate --list` shows the known names."
        ) from None


def emulated_details(timing, choice=None) -> dict:
    """What the plan JSON's ``emulated`` object says about the charged pair (the time is timings_ms.emulated_ms)
    and, when the model was asked, about best-of-N under the emulated deadline (``choice``: a DeadlineChoice)."""
    best_of_n = choice.to_dict() if choice is not None else {}
    return best_of_n | {
        "target": timing.target,
        "hardware": timing.hardware,
        "devices": timing.devices,
        "bound": timing.bound,
        "prompt_tokens": timing.prompt_tokens,
        "generated_tokens": timing.generated_tokens,
        "speculative": timing.speculative,
    }


@dataclass
class _Pending:
    """A planned answer held until its emulated release time (emulator.pacing: emulated)."""

    result: PlanResult
    plan_id: int
    query_s: float
    release_s: float
    scene: Scene
    stop: bool = False  # a stop command: already acted on in the speech callback


def no_scene_result(utterance: str) -> PlanResult:
    """The answer to a valid, non-stop utterance before any perception arrived: rejected, model not called."""
    return PlanResult(
        utterance=" ".join(utterance.split()),
        plan="",
        steps=(),
        status=PlanStatus.REJECTED,
        reasons=(NO_SCENE_REASON,),
        timings_ms=MappingProxyType({"host_total_ms": 0.0, "prefill_ms": 0.0, "decode_ms": 0.0}),
    )


def _short(text: str) -> str:
    text = text if isinstance(text, str) else repr(text)
    return text if len(text) <= LOG_UTTERANCE_CHARS else f"{text[:LOG_UTTERANCE_CHARS]}... ({len(text)} chars)"


# ---- keeping the arm and the base apart, matching manipulator replies (pure) ----------------------------------

ARM, GRIPPER_OPEN, GRIPPER_CLOSE = "arm", "gripper_open", "gripper_close"
STALE, UNEXPECTED = "stale", "unexpected"
BASE_STILL_MPS = 0.02  # odom speeds at or below these count as standing still
BASE_STILL_RADPS = 0.05


@dataclass
class _Sent:
    kind: str  # ARM, GRIPPER_OPEN or GRIPPER_CLOSE
    sent_s: float
    stale: bool = False  # sent before a CancelGoals: its reply belongs to a plan that ended


@dataclass(frozen=True)
class Reply:
    """What a manipulator/status message answered: ``kind`` is ARM, GRIPPER_OPEN/CLOSE, STALE or UNEXPECTED."""

    kind: str
    succeeded: bool
    released: tuple = ()  # held commands that may go out now, in order


def _is_base_motion(command) -> bool:
    return isinstance(command, NavigationGoal) or (
        isinstance(command, VelocityCommand) and (command.linear_mps != 0.0 or command.angular_radps != 0.0)
    )


def _is_manipulation(command) -> bool:
    return isinstance(command, (ArmTarget, GripperCommand))


class MotionGate:
    """Never moves the arm and the base at once; matches manipulator/status replies to the commands they answer.

    The executor moves on as soon as a step is done by its own measure: it sends a pick's arm target once odom
    is within ``nav_tolerance_m`` of the goal (the base may still be settling) and the next navigation goal
    right after the gripper close command. A base that moves stows the arm (sim_world) or tears the grasp, so
    motion commands pass through this gate, in order:

    * a base command (goal, non-zero velocity) waits until no arm or gripper command is in flight;
    * an arm or gripper command waits until odom shows the base standing still and no gripper command is in
      flight (so the pick's "open" finishes before the arm moves).

    Stopping is never held: a zero velocity passes at once (and drops held velocities) and ``cancel()`` (for
    CancelGoals) drops everything held and marks what is in flight as stale.

    The manipulator answers every command once, in order (sim_world's contract; with ``gripper_replies=False``
    only arm targets are answered and gripper commands are not waited for). Replies to arm targets belong to
    the executor; replies to stale commands are dropped.
    """

    def __init__(self, *, gripper_replies: bool = True) -> None:
        self.gripper_replies = gripper_replies
        self._sent: deque = deque()  # _Sent records in flight, oldest first
        self._held: deque = deque()  # motion commands not yet published, in order
        self._base_still = True  # until odom says otherwise

    @property
    def held(self) -> tuple:
        return tuple(self._held)

    def _in_flight(self, *kinds) -> bool:
        return any(not item.stale and item.kind in kinds for item in self._sent)

    def _allowed(self, command) -> bool:
        if _is_base_motion(command):
            return not self._in_flight(ARM, GRIPPER_OPEN, GRIPPER_CLOSE)
        return self._base_still and not self._in_flight(GRIPPER_OPEN, GRIPPER_CLOSE)

    def _release(self, now_s: float) -> tuple:
        released = []
        while self._held and self._allowed(self._held[0]):
            command = self._held.popleft()
            if isinstance(command, ArmTarget):
                self._sent.append(_Sent(ARM, now_s))
            elif isinstance(command, GripperCommand) and self.gripper_replies:
                self._sent.append(_Sent(GRIPPER_OPEN if command.open else GRIPPER_CLOSE, now_s))
            released.append(command)
        return tuple(released)

    def submit(self, command, now_s: float) -> tuple:
        """The commands to publish now, in order, given one more from the executor (CancelGoals: see cancel())."""
        if isinstance(command, VelocityCommand) and not _is_base_motion(command):
            self._held = deque(held for held in self._held if not isinstance(held, VelocityCommand))
            return (command,)  # stopping is never held back
        if not (_is_base_motion(command) or _is_manipulation(command)):
            return (command,)
        if isinstance(command, VelocityCommand) and self._held and isinstance(self._held[-1], VelocityCommand):
            self._held.pop()  # a newer velocity replaces a held one
        self._held.append(command)
        return self._release(now_s)

    def cancel(self) -> None:
        """Everything in flight now belongs to an ended plan; nothing held goes out."""
        for item in self._sent:
            item.stale = True
        self._held.clear()

    def on_base_velocity(self, speed_mps: float, turn_radps: float, now_s: float) -> tuple:
        """Odom's base velocity; returns held commands that may go out now."""
        self._base_still = abs(speed_mps) <= BASE_STILL_MPS and abs(turn_radps) <= BASE_STILL_RADPS
        return self._release(now_s)

    def on_reply(self, status: str, now_s: float) -> Reply:
        """A manipulator/status message. After a failed close nothing is released (the node stops the plan)."""
        succeeded = status == "succeeded"
        if not self._sent:
            return Reply(UNEXPECTED, succeeded)
        item = self._sent.popleft()
        if item.stale:
            return Reply(STALE, succeeded, self._release(now_s))
        if item.kind == GRIPPER_CLOSE and not succeeded:
            return Reply(GRIPPER_CLOSE, False)
        return Reply(item.kind, succeeded, self._release(now_s))

    def expire(self, now_s: float, timeout_s: float) -> Reply | None:
        """A gripper command unanswered for ``timeout_s`` counts as failed (arm timeouts are the executor's)."""
        for item in self._sent:
            if not item.stale and item.kind != ARM and now_s - item.sent_s > timeout_s:
                self._sent.remove(item)
                if item.kind == GRIPPER_CLOSE:
                    return Reply(GRIPPER_CLOSE, False)
                return Reply(item.kind, False, self._release(now_s))
        return None


# ---- the node -------------------------------------------------------------------------------------------------


class ReasonerNode(Node):
    """Plans each utterance with the query core and runs the plan with the executor; publishes what they return."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        for name, param in PARAMETERS.items():
            self.declare_parameter(name, param.default, _descriptor(param))
        self._configure()
        self._activate()

    def _param(self, name: str):
        return self.get_parameter(name).value

    # ---- set-up (lifecycle: on_configure / on_activate) -----------------------------------------------------

    def _configure(self) -> None:
        """Limits, executor, semantic map, model; raises ConfigurationError / ModelLoadError with the fix."""
        limit_values = {
            name[len(LIMITS_PREFIX) :]: self._param(name) for name in PARAMETERS if name.startswith(LIMITS_PREFIX)
        }
        try:
            self._limits = SafetyLimits.from_mapping(limit_values)
        except LimitsError as error:
            raise ConfigurationError(f"bad 'limits.*' parameters: {error}") from None
        executor_values = {
            name[len(EXECUTOR_PREFIX) :]: self._param(name) for name in PARAMETERS if name.startswith(EXECUTOR_PREFIX)
        }
        try:
            self._executor = Executor(self._limits, **executor_values)
        except ValueError as error:
            raise ConfigurationError(f"bad 'executor.*' / 'limits.*' parameters: {error}") from None
        map_file = self._param("semantic_map_file") or os.path.join(package_config_dir(), SEMANTIC_MAP_FILE)
        self._places = load_semantic_map(map_file)
        self._gate = MotionGate(gripper_replies=self._param("manipulator_replies_to_gripper"))

        # onnxruntime only where a node runs
        from wafer_reasoner.engine.fast_engine import EngineConfig
        from wafer_reasoner.engine.planner_model import ENGINES, PlannerModel

        engine_values = {name: self._param(name) for name in PARAMETERS if name.startswith(ENGINE_PREFIX)}
        try:
            engine_config = EngineConfig.from_params(engine_values)
        except ValueError as error:
            raise ConfigurationError(f"bad 'engine_*' parameters: {error}") from None
        # the deadline is kept in emulated time (EmulatedBestOfN), so the host decodes every candidate
        self._deadline_ms = engine_config.deadline_ms
        engine_config = replace(engine_config, deadline_ms=0.0)
        if self._param("engine") not in ENGINES:
            raise ConfigurationError(f"'engine' must be one of {ENGINES}, got {self._param('engine')!r}")
        self._model = PlannerModel(
            self._param("model_dir") or None, threads=self._param("engine_threads"), engine=self._param("engine"),
            engine_config=engine_config,
        )
        self._model.prepare(Scene(places=self._places))  # the map part of the prompt, computed once
        try:
            self._pacing = check_mode(self._param("emulator.pacing"))
        except ValueError as error:
            raise ConfigurationError(f"bad 'emulator.pacing' parameter: {error}") from None
        self._emulator = emulator_for(
            self._param("emulator.target_model"), self._param("emulator.hardware"), self._model.model_dir
        )
        self._pending: deque = deque()  # _Pending answers, release order (pacing: emulated)
        self._release_timer = None
        self._last_emulated_ms = math.nan
        self._last_behind_ms = math.nan
        self._scene: Scene | None = None
        self._pose = UNKNOWN_POSE
        self._plans = 0  # plan_id of the latest utterance; ids start at 1
        self._running_plan_id = 0  # plan_id the executor's events belong to
        self._last_latency_ms = math.nan
        self.get_logger().info(
            f"planner model from {self._model.model_dir}, {len(self._places)} named places from {map_file}; "
            f"caps {self._limits.max_linear_speed_mps:g} m/s, {self._limits.max_angular_speed_radps:g} rad/s; "
            f"emulating {self._emulator.target.name} on {self._emulator.hardware.name}, pacing {self._pacing}"
        )

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

    # ---- callbacks ------------------------------------------------------------------------------------------

    def _now(self) -> float:
        return conversions.seconds_from_nanoseconds(self.get_clock().now().nanoseconds)

    def _on_speech(self, msg: String) -> None:
        now_s, text = self._now(), msg.data
        stop = is_stop_command(text)
        if stop:  # before anything else: never wait for the model to stop, nor for held plans
            self._cmd_vel_pub.publish(conversions.zero_twist())
            self._drop_pending(now_s)
            self._dispatch(self._executor.stop(now_s), now_s)
        scene = (self._scene if self._scene is not None else Scene()).with_robot(self._pose)
        model = EmulatedBestOfN(self._model, self._emulator, deadline_ms=self._deadline_ms,
                                accept=verified_plans(scene, self._limits, now_s=now_s))
        if self._scene is None and not stop and not utterance_problem(text):
            result = no_scene_result(text)
        else:
            result = answer(model, scene, text, self._limits, now_s=now_s)
        choice = model.last_choice  # None when the model was not asked (stop, bad or sceneless input)
        timing = choice.timing if choice else self._emulator.plan_time(result.prompt_tokens, result.tokens)
        result = result.with_emulation(timing.emulated_ms, emulated_details(timing, choice))
        self._plans += 1
        self._last_latency_ms = result.timings_ms.get("host_total_ms", math.nan)
        self._last_emulated_ms = timing.emulated_ms
        if self._pacing == OFF or stop:  # stop commands are never paced
            result = result.with_pacing({"mode": OFF, "stop": True} if stop and self._pacing != OFF else {"mode": OFF})
            self._release(_Pending(result, self._plans, now_s, now_s, scene, stop=stop), now_s)
            return
        done_s = self._now()
        not_before_s = self._pending[-1].release_s if self._pending else -math.inf
        release = pace(now_s, done_s, timing.emulated_ms, not_before_s=not_before_s)
        self._last_behind_ms = release.behind_ms
        pacing = {"mode": EMULATED, "behind_ms": release.behind_ms, "held_ms": release.wait_s * 1000.0}
        self._pending.append(_Pending(result.with_pacing(pacing), self._plans, now_s, release.release_s, scene))
        self._release_due()

    def _release_due(self) -> None:
        """Publish every held answer whose release time has come; arm a one-shot timer for the next one."""
        if self._release_timer is not None:
            self.destroy_timer(self._release_timer)
            self._release_timer = None
        now_s = self._now()
        while self._pending and self._pending[0].release_s <= now_s:
            self._release(self._pending.popleft(), now_s)
        if self._pending:
            wait_s = max(self._pending[0].release_s - now_s, 1e-4)
            self._release_timer = self.create_timer(wait_s, self._release_due)

    def _drop_pending(self, now_s: float) -> None:
        """A stop cancels answers still held: each is published (pacing.cancelled) but never executed or said."""
        while self._pending:
            item = self._pending.popleft()
            result = item.result.with_pacing({**(item.result.pacing or {}), "cancelled": True})
            self._plan_pub.publish(conversions.plan_result_to_msg(result, plan_id=item.plan_id, stamp_s=item.query_s))
            self.get_logger().info(f"'{_short(result.utterance)}' cancelled by a stop before its emulated release")
        if self._release_timer is not None:
            self.destroy_timer(self._release_timer)
            self._release_timer = None

    def _release(self, item: _Pending, now_s: float) -> None:
        """Publish one answer on reasoner/plan (stamped with its query time) and act on it at ``now_s``."""
        result = item.result
        self._plan_pub.publish(conversions.plan_result_to_msg(result, plan_id=item.plan_id, stamp_s=item.query_s))
        behind = (result.pacing or {}).get("behind_ms", 0.0)
        self.get_logger().info(
            f"'{_short(result.utterance)}' -> {result.status.value}: {result.plan or '-'}"
            f"{' | ' + ' '.join(result.reasons) if result.reasons else ''} "
            f"({result.timings_ms.get('host_total_ms', math.nan):.0f} ms host, "
            f"{result.timings_ms.get('emulated_ms', math.nan):.1f} ms emulated"
            f"{f', {behind:.0f} ms behind' if behind > 0.0 else ''})"
        )
        if result.status is PlanStatus.OK and not item.stop:
            preempted_id, self._running_plan_id = self._running_plan_id, item.plan_id
            commands = self._executor.start(result.steps, item.scene, now_s)
            self._dispatch(commands, now_s, preempted_plan_id=preempted_id)
        elif result.status is not PlanStatus.OK:  # clarify: the question; rejected: the reasons
            self._say(" ".join(result.reasons))

    def _on_perception(self, msg: String) -> None:
        now_s = self._now()
        try:
            scene = parse_perception_json(msg.data, places=self._places, robot=self._pose)
        except SceneError as error:
            self.get_logger().warning(
                f"perception/objects ignored, keeping the previous scene: {error}",
                throttle_duration_sec=WARN_THROTTLE_S,
            )
            return
        self._scene = scene
        self._dispatch(self._executor.on_scene(scene, now_s), now_s)

    def _on_odom(self, msg: Odometry) -> None:
        pose = conversions.pose_from_odometry(msg)
        if pose is None:
            self.get_logger().warning("odom ignored: non-finite pose", throttle_duration_sec=WARN_THROTTLE_S)
            return
        now_s = self._now()
        self._pose = pose
        velocity = conversions.base_velocity_from_odometry(msg)
        if velocity is not None:
            self._publish_all(self._gate.on_base_velocity(*velocity, now_s), now_s)
        self._dispatch(self._executor.on_odom(pose, now_s), now_s)

    def _on_manipulator_status(self, msg: String) -> None:
        now_s, status = self._now(), msg.data.strip().lower()
        reply = self._gate.on_reply(status, now_s)
        if reply.kind == UNEXPECTED:
            self.get_logger().warning(f"manipulator/status '{_short(msg.data)}' answers no command; ignored")
        self._handle_reply(reply, status, now_s)

    def _handle_reply(self, reply: Reply, status: str, now_s: float) -> None:
        if reply.kind == GRIPPER_CLOSE and not reply.succeeded:
            self._grasp_failed(now_s)
            return
        if reply.kind == GRIPPER_OPEN and not reply.succeeded:
            self.get_logger().warning("the gripper did not confirm opening")
        self._publish_all(reply.released, now_s)
        if reply.kind == ARM:
            self._dispatch(self._executor.on_manipulator_status(status, now_s), now_s)

    def _on_control_tick(self) -> None:
        now_s = self._now()
        expired = self._gate.expire(now_s, self._executor.manip_timeout_s)
        if expired is not None:
            self.get_logger().warning(f"no reply to a gripper command ({expired.kind}) in time")
            self._handle_reply(expired, "failed", now_s)
        self._dispatch(self._executor.tick(now_s), now_s)

    def _grasp_failed(self, now_s: float) -> None:
        self.get_logger().warning("the gripper did not close on the object; stopping the plan")
        self._dispatch(self._executor.stop(now_s), now_s)
        self._say(GRASP_FAILED_REASON)

    def _on_diagnostics(self) -> None:
        now_s = self._now()
        scene_age_s = now_s - self._scene.stamp_s if self._scene is not None else math.nan
        pose_known = math.isfinite(self._pose.x)
        problems = []
        if self._scene is None:
            problems.append("no perception yet")
        elif not scene_age_s <= self._limits.max_scene_age_s:
            problems.append(f"perception is {scene_age_s:.1f} s old")
        if not pose_known:
            problems.append("no odometry yet")
        self._diagnostics_pub.publish(
            conversions.diagnostics_to_msg(
                name=f"{self.get_name()}: reasoner",
                hardware_id=str(self._model.model_dir),
                level="warn" if problems else "ok",
                message="; ".join(problems) or f"ready, executor {self._executor.state.value}",
                values={
                    "model_loaded": True,
                    "model_dir": self._model.model_dir,
                    "last_planning_latency_ms": self._last_latency_ms,
                    "emulated_target_model": self._emulator.target.name,
                    "emulated_hardware": self._emulator.hardware.name,
                    "last_emulated_planning_latency_ms": self._last_emulated_ms,
                    "pacing": self._pacing,
                    "last_pacing_behind_ms": self._last_behind_ms,
                    "plans_held": len(self._pending),
                    "scene_age_s": scene_age_s,
                    "pose_known": pose_known,
                    "executor_state": self._executor.state.value,
                    "current_step_index": self._executor.current_step_index,
                    "plans_received": self._plans,
                },
                stamp_s=now_s,
            )
        )

    # ---- publishing -----------------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        if text:
            self._say_pub.publish(String(data=text))

    def _frame(self) -> str:
        return self._scene.frame_id if self._scene is not None else "map"

    def _dispatch(self, commands, now_s: float, *, preempted_plan_id: int | None = None) -> None:
        """Publish the executor's commands in order, motion through the gate (it may hold some back)."""
        for command in commands:
            self._publish_all(self._gate.submit(command, now_s), now_s, preempted_plan_id=preempted_plan_id)

    def _publish_all(self, commands, now_s: float, *, preempted_plan_id: int | None = None) -> None:
        """The only place that turns core commands into messages."""
        for command in commands:
            if isinstance(command, NavigationGoal):
                self._publish_pose(
                    self._goal_pub,
                    conversions.navigation_goal_to_pose(command, frame_id=self._frame(), stamp_s=now_s),
                    "goal_pose",
                )
            elif isinstance(command, VelocityCommand):
                twist = conversions.velocity_to_twist(
                    command,
                    max_linear_mps=self._limits.max_linear_speed_mps,
                    max_angular_radps=self._limits.max_angular_speed_radps,
                )
                if twist is None:
                    self.get_logger().warning("non-finite velocity command replaced by a stop")
                    twist = conversions.zero_twist()
                self._cmd_vel_pub.publish(twist)
            elif isinstance(command, ArmTarget):
                self._publish_pose(
                    self._arm_pub,
                    conversions.arm_target_to_pose(command, robot=self._pose, frame_id=self._frame(), stamp_s=now_s),
                    "manipulator/target_pose",
                )
            elif isinstance(command, GripperCommand):
                self._gripper_pub.publish(conversions.gripper_command_to_msg(command))
            elif isinstance(command, CancelGoals):
                self._cancel_goals(now_s)
            elif isinstance(command, Say):
                self._say(command.text)
            elif isinstance(command, PlanEvent):
                plan_id = self._running_plan_id
                if command.kind is PlanEventKind.PLAN_PREEMPTED and preempted_plan_id is not None:
                    plan_id = preempted_plan_id
                self._plan_pub.publish(conversions.plan_event_to_msg(command, plan_id=plan_id, stamp_s=now_s))
            else:
                self.get_logger().error(f"unknown executor command {command!r} not published")

    def _publish_pose(self, publisher, msg, topic: str) -> None:
        if msg is None:  # the executor checks this too; never put a NaN on the wire
            self.get_logger().warning(f"{topic} not published: non-finite pose")
            return
        publisher.publish(msg)

    def _cancel_goals(self, now_s: float) -> None:
        """goal_pose has no cancel: send the current pose as the goal (Nav2 and sim_world then hold still).

        Held motion commands are dropped; manipulator replies still in flight belong to an ended plan and are
        dropped when they arrive. The zero cmd_vel that always follows CancelGoals stops a base driven by velocity.
        """
        self._gate.cancel()
        pose = self._pose
        if math.isfinite(pose.x):
            self._publish_pose(
                self._goal_pub,
                conversions.pose_stamped(pose.x, pose.y, pose.yaw, frame_id=self._frame(), stamp_s=now_s),
                "goal_pose",
            )


def main(args=None) -> int:
    rclpy.init(args=args)
    logger = rclpy.logging.get_logger(NODE_NAME)
    try:
        node = ReasonerNode()
    except (ModelLoadError, ConfigurationError, ParameterException) as error:
        logger.fatal(f"cannot start: {error}")
        rclpy.try_shutdown()
        return 1
    except KeyboardInterrupt:
        rclpy.try_shutdown()
        return 0
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
