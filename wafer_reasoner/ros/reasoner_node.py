"""reasoner_node: spoken requests in, verified plans out, executed step by step. A thin ROS shell.

All behaviour lives in ``runtime/core.py`` (``ReasonerCore``): callbacks convert the message
(``conversions.py``), call the core with the node clock's time and publish what it returns, in order. Topics
(relative names, remappable; QoS from ``wafer_reasoner.ros.qos``):

  subscribes  speech/transcript        std_msgs/String             one utterance per message (SPEECH_QOS)
              emergency_stop           std_msgs/Empty              zero cmd_vel, stop the plan, drop the queue
              perception/objects       std_msgs/String             JSON scene (planner/scene.py schema)
              odom                     nav_msgs/Odometry           robot pose (x, y, yaw) in the scene frame
              manipulator/status       std_msgs/String             'succeeded <id>' / 'failed <id>', one per
                                                                   command (order only: manipulator_reply_ids)
  publishes   goal_pose                geometry_msgs/PoseStamped   navigation goals (Nav2's topic)
              cmd_vel                  geometry_msgs/Twist         rotations and stops, clamped to the caps
              manipulator/target_pose  geometry_msgs/PoseStamped   pick / place / handover points
              gripper/commands         std_msgs/Float64MultiArray  [1.0] open, [0.0] close (as sim_world)
              say                      std_msgs/String             questions, refusals, failures (for TTS)
              reasoner/plan            std_msgs/String             JSON stream: {"type": "plan" | "event", ...}
              /diagnostics             diagnostic_msgs/DiagnosticArray   ~1 Hz

Threads: the speech callback only hears (a stop acts at once; anything else is queued, or answered "busy" when
``speech_queue_depth`` utterances wait); a PlanningWorker thread plans one queued utterance at a time; its
answer comes back through a guard condition to the node's executor, which publishes it in plan_id order. All
callbacks that touch the core run on the node's executor, one at a time, under a lock; ``emergency_stop`` has
an executor thread of its own (ros/emergency_stop.py), publishes a zero cmd_vel before it waits for anything,
then takes the lock to stop the plan. Every callback runs inside ``_guarded``: an exception is logged
(throttled), counted on /diagnostics, and the node goes on.

With ``emulator.pacing: emulated`` a held answer is released by a one-shot timer (never a sleep) at the core's
``next_release_s``. Every time is the node clock, so ``use_sim_time`` works. The README (sections Topics,
Parameters) documents the JSON stream and every parameter; ``config/reasoner.yaml`` mirrors ``PARAMETERS``.

Set-up is split the way a managed node splits it: ``_configure()`` loads the model, the semantic map, the safety
limits and builds the core (on_configure); ``_activate()`` creates publishers, subscriptions and timers
(on_activate).
"""

from __future__ import annotations

import sys
import threading
import traceback

from nav_msgs.msg import Odometry
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from std_msgs.msg import String

from wafer_reasoner.emulator import EmulatorDataError
from wafer_reasoner.emulator.pacing import check_mode
from wafer_reasoner.engine.planner_model import ModelLoadError
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.limits import LimitsError, SafetyLimits
from wafer_reasoner.planner.scene import Scene, SceneError, parse_perception_json
from wafer_reasoner.ros import conversions
from wafer_reasoner.ros.emergency_stop import EmergencyStopListener
from wafer_reasoner.ros.node_main import run_node
from wafer_reasoner.ros.params import declare_parameters, parameter_values
from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS, SPEECH_QOS
from wafer_reasoner.ros.reasoner_outputs import CoreOutputs
from wafer_reasoner.ros.reasoner_params import ENGINE_PREFIX, EXECUTOR_PREFIX, LIMITS_PREFIX, PARAMETERS
from wafer_reasoner.runtime.core import WARN, ReasonerCore
from wafer_reasoner.runtime.emulation import emulator_for, reasoning_for
from wafer_reasoner.runtime.resources import ResourceError, config_file
from wafer_reasoner.runtime.worker import PlanningWorker
from wafer_reasoner.sim.scenario import ScenarioError, load_places_file

NODE_NAME = "reasoner_node"
SEMANTIC_MAP_FILE = "semantic_map.yaml"
MAX_SPEECH_BATCH = 1024  # utterances heard in one speech callback at most
GIL_SWITCH_INTERVAL_S = 0.0005
__all__ = ["PARAMETERS", "ReasonerNode", "main"]

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
                                  gripper_replies=self._param("manipulator_replies_to_gripper"),
                                  reply_ids=self._param("manipulator_reply_ids"),
                                  queue_depth=self._param("speech_queue_depth"))
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
        self._lock = threading.Lock()  # the core is used by the node's executor and by the emergency stop's thread
        self._rejected = dict.fromkeys(("perception", "odom", "callback_errors"), 0)
        self._out = CoreOutputs(self, self._core)
        subscriptions = ((String, "speech/transcript", self._on_speech, SPEECH_QOS),
                         (String, "perception/objects", self._on_perception, SENSOR_QOS),
                         (Odometry, "odom", self._on_odom, SENSOR_QOS),
                         (String, "manipulator/status", self._on_manipulator_status, COMMAND_QOS))
        created = {topic: self.create_subscription(msg_type, topic, self._guarded(topic, callback), qos)
                   for msg_type, topic, callback, qos in subscriptions}
        self._speech_sub = created["speech/transcript"]
        self._planned_signal = self.create_guard_condition(self._guarded("planner", self._on_planned))
        self._worker = PlanningWorker(self._core.plan, self._planned_signal.trigger)
        self.create_timer(1.0 / self._param("control_rate_hz"), self._guarded("control", self._on_control_tick))
        self.create_timer(1.0 / self._param("diagnostics_rate_hz"), self._guarded("diagnostics", self._on_diagnostics))
        self._estop = EmergencyStopListener(self, self._on_emergency_stop)

    def destroy_node(self) -> None:
        for helper in (getattr(self, "_estop", None), getattr(self, "_worker", None)):
            if helper is not None:
                helper.close()
        super().destroy_node()

    # ---- callbacks: convert, call the core, publish -----------------------------------------------------------

    def _guarded(self, name: str, callback):
        """The callback under the core lock; an exception is logged (throttled) and counted, never fatal."""

        def run(*args) -> None:
            with self._lock:
                try:
                    callback(*args)
                except Exception as error:  # noqa: BLE001 - one bad message must not take the node down
                    self._rejected["callback_errors"] += 1
                    where = traceback.extract_tb(error.__traceback__)[-1]
                    self._out.log(WARN, f"{name} callback failed, the node goes on: {type(error).__name__}: "
                                  f"{str(error)[:200]} ({where.filename}:{where.lineno})", f"callback_{name}")

        return run

    def _now(self) -> float:
        return conversions.seconds_from_nanoseconds(self.get_clock().now().nanoseconds)

    def _on_speech(self, msg: String) -> None:
        """This message and every one already waiting behind it, heard in one go: a burst costs one executor
        round trip per batch, not per message, and a stop at its end acts before the batch is answered."""
        texts = [msg.data] + [pending.data for pending in self._take_waiting(self._speech_sub, MAX_SPEECH_BATCH)]
        now_s = self._now()
        self._out.publish(self._core.hear_all(texts, now_s))
        self._feed_planner(now_s)

    @staticmethod
    def _take_waiting(subscription, limit: int) -> list:
        """Messages already received on ``subscription``, taken without a callback each (what rclpy's executor
        does for one message, repeated; None when there is no more)."""
        taken = []
        with subscription.handle:
            while len(taken) < limit:
                message = subscription.handle.take_message(subscription.msg_type, subscription.raw)
                if message is None:
                    break
                taken.append(message[0])
        return taken

    def _on_planned(self) -> None:
        for job, result in self._worker.take():
            self._out.publish(self._core.planned(job, result, self._now()))
        self._feed_planner(self._now())

    def _feed_planner(self, now_s: float) -> None:
        """Hand the oldest queued utterance to the planning thread when it is free; re-arm the release timer."""
        job = self._core.next_job(now_s)
        if job is not None:
            self._worker.submit(job)
        self._arm_release_timer()

    def _on_emergency_stop(self) -> None:
        self._out.zero_velocity()  # first, without waiting for the lock
        self._guarded("emergency_stop", self._emergency_stop)()

    def _emergency_stop(self) -> None:
        self._out.publish(self._core.emergency_stop(self._now()))
        self._arm_release_timer()

    def _on_release_timer(self) -> None:
        self._out.publish(self._core.release_due(self._now()))
        self._arm_release_timer()

    def _arm_release_timer(self) -> None:
        """A one-shot timer for the next held answer (none when nothing is held)."""
        if self._release_timer is not None:
            self.destroy_timer(self._release_timer)
            self._release_timer = None
        due_s = self._core.next_release_s
        if due_s is not None:
            self._release_timer = self.create_timer(max(due_s - self._now(), 1e-4),
                                                    self._guarded("release", self._on_release_timer))

    def _on_perception(self, msg: String) -> None:
        try:
            scene = parse_perception_json(msg.data, places=self._places, robot=self._core.pose)
        except SceneError as error:
            self._rejected["perception"] += 1
            self._out.log(WARN, f"perception/objects ignored, keeping the previous scene: {error}", "perception")
            return
        self._out.publish(self._core.on_scene(scene, self._now()))

    def _on_odom(self, msg: Odometry) -> None:
        pose = conversions.pose_from_odometry(msg)
        if pose is None:
            self._rejected["odom"] += 1
            self._out.log(WARN, "odom ignored: a pose that is not finite or out of range", "odom")
            return
        self._out.publish(self._core.on_odom(pose, conversions.base_velocity_from_odometry(msg), self._now()))

    def _on_manipulator_status(self, msg: String) -> None:
        self._out.publish(self._core.on_reply(msg.data, self._now()))

    def _on_control_tick(self) -> None:
        self._out.publish(self._core.tick(self._now()))

    def _on_diagnostics(self) -> None:
        now_s, core = self._now(), self._core
        status = core.status(now_s)
        problems = status["problems"]
        self._out.diagnostics.publish(conversions.diagnostics_to_msg(
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
                "plan_records_published": core.counts["records"],
                "speech_queue_depth": core.waiting,
                "speech_queue_capacity": core.queue_depth,
                "utterances_dropped_busy": core.counts["busy"],
                "utterances_dropped_by_stop": core.counts["stopped"],
                "emergency_stops": core.counts["emergency_stops"],
                "manipulator_replies_ignored": core.counts["stray_replies"],
                "perception_rejected": self._rejected["perception"],
                "odom_rejected": self._rejected["odom"],
                "callback_errors": self._rejected["callback_errors"],
            },
            stamp_s=now_s,
        ))


def main(args=None) -> int:
    # Three threads share the GIL: the node's executor, the emergency stop's and the planner's. Python hands the GIL
    # over every 5 ms by default, which alone would put an emergency stop at 5-15 ms during a burst; 0.5 ms
    # keeps it near 1 ms and costs the planner a few percent.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    return run_node(ReasonerNode, NODE_NAME, (ModelLoadError, ConfigurationError, ParameterException), args)


if __name__ == "__main__":
    sys.exit(main())
