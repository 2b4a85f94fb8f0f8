"""reasoner_node: spoken requests in, verified plans out, executed step by step. A managed (lifecycle) ROS shell.

All behaviour lives in ``runtime/core.py`` (``ReasonerCore``): callbacks convert the message
(``conversions.py``), call the core with the node clock's time and publish what it returns, in order. Topics
(relative names, remappable; QoS from ``wafer_reasoner.ros.qos``):

  subscribes  speech/transcript        std_msgs/String             one utterance per message (SPEECH_QOS)
              emergency_stop           std_msgs/Empty              zero cmd_vel, stop the plan, drop the queue
              perception/objects       std_msgs/String             JSON scene (planner/scene.py schema)
              odom                     nav_msgs/Odometry           robot pose (x, y, yaw) in the scene frame
              manipulator/status       std_msgs/String             'succeeded <id>' / 'failed <id>', one per
                                                                   command (order only: manipulator_reply_ids)
  publishes   goal_pose                geometry_msgs/PoseStamped   navigation goals (Nav2's topic), or the
                                                                   navigate_to_pose action (navigation.mode)
              cmd_vel                  geometry_msgs/Twist         rotations and stops, clamped to the caps
              manipulator/target_pose  geometry_msgs/PoseStamped   pick / place / handover points
              gripper/commands         std_msgs/Float64MultiArray  [1.0] open, [0.0] close (as sim_world)
              say                      std_msgs/String             questions, refusals, failures (for TTS)
              reasoner/plan            std_msgs/String             JSON stream: {"type": "plan" | "event", ...}
              reasoner/markers         visualization_msgs/MarkerArray   scene, plan, goals for RViz
              /diagnostics             diagnostic_msgs/DiagnosticArray   ~1 Hz, from configure on

Lifecycle (rclpy managed node; ``ros2 lifecycle set /reasoner_node configure`` ...):

  configure   load the semantic map and the model (the slow part), build the core, create the publishers
  activate    subscriptions, planning thread, timers, emergency stop: the node hears and acts
  deactivate  the robot stops (zero cmd_vel, navigation cancelled, plan stopped, waiting utterances dropped),
              then nothing is heard or planned until the next activate
  cleanup     release the model and the core (back to unconfigured); shutdown: deactivate and clean up
  autostart   (parameter, default true) configure + activate at start; a configure that fails then ends the
              process with "cannot start: <why>" (exit 1), as before the node was managed

Threads: the speech callback only hears (a stop acts at once; anything else is queued, or answered "busy" when
``speech_queue_depth`` utterances wait); a PlanningWorker thread plans one queued utterance at a time; its
answer comes back through a guard condition to the node's executor, which publishes it in plan_id order. All
callbacks that touch the core run on the node's executor, one at a time, under a lock; ``emergency_stop`` has
an executor thread of its own (ros/emergency_stop.py). Every callback runs inside ``_guarded``: an exception is
logged (throttled), counted on /diagnostics, and the node goes on. Every time is the node clock, so
``use_sim_time`` works. ``config/reasoner.yaml`` mirrors ``PARAMETERS``.
"""

from __future__ import annotations

import sys
import threading
import traceback

from nav_msgs.msg import Odometry
from rclpy.exceptions import ParameterException
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from std_msgs.msg import String

from wafer_reasoner.engine.planner_model import ModelLoadError
from wafer_reasoner.planner.scene import SceneError, parse_perception_json
from wafer_reasoner.ros import conversions
from wafer_reasoner.ros.emergency_stop import EmergencyStopListener
from wafer_reasoner.ros.gripper_action import gripper_for
from wafer_reasoner.ros.navigation import navigator_for
from wafer_reasoner.ros.node_main import run_node
from wafer_reasoner.ros.params import declare_parameters, parameter_values
from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS, SPEECH_QOS
from wafer_reasoner.ros.reasoner_diagnostics import diagnostics_msg
from wafer_reasoner.ros.reasoner_outputs import CoreOutputs
from wafer_reasoner.ros.reasoner_params import PARAMETERS, reasoner_from_parameters
from wafer_reasoner.runtime.assembly import ConfigurationError
from wafer_reasoner.runtime.core import WARN
from wafer_reasoner.runtime.intake import hear_in_slices
from wafer_reasoner.runtime.worker import PlanningWorker

NODE_NAME = "reasoner_node"
GIL_SWITCH_INTERVAL_S = 0.0005
SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE
__all__ = ["PARAMETERS", "ConfigurationError", "ReasonerNode", "main"]


class ReasonerNode(LifecycleNode):
    """Feeds the reasoner core from the subscriptions and publishes what it returns, while active."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        declare_parameters(self, PARAMETERS)
        self._lock = threading.Lock()  # the core is used by the node's executor and by the emergency stop's thread
        self._reasoner = self._out = self._navigator = self._gripper = None
        self._rejected = dict.fromkeys(("perception", "odom", "callback_errors"), 0)
        self._active_parts: list = []  # (destroy function, entity) of the active state, in creation order
        self._release_timer = self._diagnostics_timer = None
        self._configure_error = ""
        if self._param("autostart"):
            self._autostart()

    def _param(self, name: str):
        return self.get_parameter(name).value

    @property
    def _core(self):
        return self._reasoner.core

    def _autostart(self) -> None:
        """configure + activate now; a failure ends the start (ConfigurationError: 'cannot start: <why>')."""
        if self.trigger_configure() != SUCCESS:
            raise ConfigurationError(self._configure_error or "configure failed")
        if self.trigger_activate() != SUCCESS:
            raise ConfigurationError("activate failed (see the log above)")

    # ---- lifecycle transitions --------------------------------------------------------------------------------

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            values = parameter_values(self, PARAMETERS)
            reasoner = reasoner_from_parameters(values, clock=self._now)
            navigator = navigator_for(self, values)
            try:
                gripper = gripper_for(self, values)
            except ConfigurationError:
                navigator.destroy()
                raise
        except (ConfigurationError, ModelLoadError) as error:
            self._configure_error = str(error)
            if not self._param("autostart"):  # autostart reports it once, as "cannot start"
                self.get_logger().error(f"configure failed, staying unconfigured: {error}")
            return FAILURE
        self._reasoner, self._navigator, self._gripper = reasoner, navigator, gripper
        self._out = CoreOutputs(self, reasoner.core, navigator, gripper)
        self._diagnostics_timer = self.create_timer(1.0 / self._param("diagnostics_rate_hz"),
                                                    self._guarded("diagnostics", self._on_diagnostics))
        self.get_logger().info(f"configured: {reasoner.summary()}; navigation through {navigator.describe()}; "
                               f"gripper through {gripper.describe() if gripper else 'gripper/commands'}")
        return super().on_configure(state)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._transition("activate", self._activate, super().on_activate, state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._transition("deactivate", lambda: self._stop_acting("deactivated"), super().on_deactivate,
                                state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._transition("cleanup", self._release, super().on_cleanup, state)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._transition("shutdown", self._shut_down, super().on_shutdown, state)

    def _transition(self, name: str, work, parent, state: LifecycleState) -> TransitionCallbackReturn:
        """``work()`` then the LifecycleNode's own callback; an exception is logged with where it came from (rclpy
        turns it into ERROR without a word) and answered ERROR."""
        try:
            work()
            return parent(state)
        except Exception as error:  # noqa: BLE001 - the transition fails, the node says why
            self.get_logger().error(f"{name} failed: {type(error).__name__}: {error}\n{traceback.format_exc()}")
            return TransitionCallbackReturn.ERROR

    def _activate(self) -> None:
        with self._lock:
            self._create_active_parts()
        self.get_logger().info("active: hearing speech/transcript")

    def _shut_down(self) -> None:
        if self._active_parts:
            self._stop_acting("shutting down")
        self._release()

    def _create_active_parts(self) -> None:
        subscriptions = ((String, "speech/transcript", self._on_speech, SPEECH_QOS),
                         (String, "perception/objects", self._on_perception, SENSOR_QOS),
                         (Odometry, "odom", self._on_odom, SENSOR_QOS),
                         (String, "manipulator/status", self._on_manipulator_status, COMMAND_QOS))
        created = {topic: self.create_subscription(msg_type, topic, self._guarded(topic, callback), qos)
                   for msg_type, topic, callback, qos in subscriptions}
        self._speech_sub = created["speech/transcript"]
        self._planned_signal = self.create_guard_condition(self._guarded("planner", self._on_planned))
        self._worker = PlanningWorker(self._core.plan, self._planned_signal.trigger)
        control = self._guarded("control", self._on_control_tick)
        timers = [self.create_timer(1.0 / self._param("control_rate_hz"), control)]
        if self._param("markers_rate_hz") > 0.0:
            timers.append(self.create_timer(1.0 / self._param("markers_rate_hz"),
                                            self._guarded("markers", self._out.publish_markers)))
        self._navigator.on_result = self._guarded("navigation", self._on_navigation_result)
        self._navigator.on_feedback = self._guarded("navigation_feedback", self._on_navigation_feedback)
        if self._gripper is not None:
            self._gripper.on_reply = self._guarded("gripper_action", self._on_manipulator_reply)
        estop = EmergencyStopListener(self, self._on_emergency_stop)
        self._active_parts = [*((self.destroy_subscription, sub) for sub in created.values()),
                              (self.destroy_guard_condition, self._planned_signal),
                              *((self.destroy_timer, timer) for timer in timers),
                              (PlanningWorker.close, self._worker), (EmergencyStopListener.close, estop)]

    def _stop_acting(self, why: str) -> None:
        """Deactivation: stop the robot and drop what waits, then stop hearing (the last outputs go out while the
        publishers are still enabled)."""
        with self._lock:
            self._out.publish(self._core.emergency_stop(self._now(), reason=why))
            self._navigator.on_result = self._navigator.on_feedback = None
            if self._gripper is not None:
                self._gripper.on_reply = None
        for destroy, part in reversed(self._active_parts):  # the helpers first: no callback after this
            destroy(part)
        with self._lock:  # the answer being planned when the worker closed was dropped by the stop: let it go
            for job, result in self._worker.take():
                self._out.publish(self._core.planned(job, result, self._now()))
            self._cancel_release_timer()
        self._active_parts = []
        self.get_logger().info(f"{why}: robot stopped, not hearing until activated")

    def _release(self) -> None:
        if self._diagnostics_timer is not None:
            self.destroy_timer(self._diagnostics_timer)
        if self._out is not None:
            self._out.destroy()
        for client in (self._navigator, self._gripper):
            if client is not None:
                client.destroy()
        self._reasoner = self._out = self._navigator = self._gripper = self._diagnostics_timer = None

    def destroy_node(self) -> None:
        for destroy, part in self._active_parts:
            if destroy in (PlanningWorker.close, EmergencyStopListener.close):  # threads end; rcl entities go anyway
                destroy(part)
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
        """This message and every one already waiting behind it, heard in one callback a slice at a time (a
        burst costs one executor round trip, not one per message); a stop among them zeroes cmd_vel as soon as
        it is taken (runtime/intake.py)."""
        hear_in_slices([msg.data], lambda limit: [m.data for m in self._take_waiting(self._speech_sub, limit)],
                       lambda texts: self._out.publish(self._core.hear_all(texts, self._now())),
                       self._out.zero_velocity)
        self._feed_planner(self._now())

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

    def _cancel_release_timer(self) -> None:
        if self._release_timer is not None:
            self.destroy_timer(self._release_timer)
            self._release_timer = None

    def _arm_release_timer(self) -> None:
        """A one-shot timer for the next held answer (none when nothing is held)."""
        self._cancel_release_timer()
        due_s = self._core.next_release_s
        if due_s is not None:
            self._release_timer = self.create_timer(max(due_s - self._now(), 1e-4),
                                                    self._guarded("release", self._on_release_timer))

    def _on_perception(self, msg: String) -> None:
        try:
            scene = parse_perception_json(msg.data, places=self._reasoner.places, robot=self._core.pose)
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
        self._on_manipulator_reply(msg.data)

    def _on_manipulator_reply(self, text: str) -> None:
        """A reply from manipulator/status, or the gripper action's result as the same text."""
        self._out.publish(self._core.on_reply(text, self._now()))

    def _on_navigation_result(self, succeeded: bool, detail: str) -> None:
        self._out.publish(self._core.on_navigation_result(succeeded, detail, self._now()))

    def _on_navigation_feedback(self, remaining_m: float) -> None:
        self._core.on_navigation_feedback(remaining_m, self._now())

    def _on_control_tick(self) -> None:
        self._out.publish(self._core.tick(self._now()))

    def _on_diagnostics(self) -> None:
        state = "active" if self._active_parts else "inactive"
        self._out.diagnostics.publish(diagnostics_msg(self, self._reasoner, state, self._rejected,
                                                      self._navigator, self._now()))


def main(args=None) -> int:
    # Three threads share the GIL: the node's executor, the emergency stop's and the planner's. Python hands the GIL
    # over every 5 ms by default, which alone would put an emergency stop at 5-15 ms during a burst; 0.5 ms
    # keeps it near 1 ms and costs the planner a few percent.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    return run_node(ReasonerNode, NODE_NAME, (ModelLoadError, ConfigurationError, ParameterException), args)


if __name__ == "__main__":
    sys.exit(main())
