"""reasoner_node as a managed node, driven over real DDS through its lifecycle services (what `ros2 lifecycle
set` and Nav2's lifecycle manager call): unconfigured -> inactive -> active -> inactive -> active -> inactive ->
unconfigured -> finalized, with what the robot sees at each step. The node runs in its own process."""

import math
import time

import pytest

rclpy = pytest.importorskip("rclpy")

import test_reasoner_node as base  # noqa: E402
from lifecycle_msgs.msg import State, Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from test_reasoner_node import (  # noqa: E402
    ROBOT_START,
    NodeProcess,
    Probe,
    _test_model_dir,
    red_cup_scene,
)

KITCHEN = (4.0, 2.5)  # config/semantic_map.yaml
SERVICE_SETTLE_S = 0.5
domain_id, ros_context = base.domain_id, base.ros_context  # its module-scoped fixtures, used here by name


class LifecycleProbe(Probe):
    """The probe plus clients of the node's lifecycle services."""

    def __init__(self, context, process) -> None:
        super().__init__(context, process)
        self.change = self.node.create_client(ChangeState, "/reasoner_node/change_state")
        self.get = self.node.create_client(GetState, "/reasoner_node/get_state")
        self._ready = set()

    def call(self, client, request):
        if client not in self._ready:
            self.spin_until(lambda: client.service_is_ready(), f"the {client.srv_name} service")
            # ready means the request reader matched; the reply path is discovered on its own, and Fast DDS drops a
            # reply whose reader it has not matched yet ("failed to send response (timeout)"): give it a moment
            deadline = time.monotonic() + SERVICE_SETTLE_S
            self.spin_until(lambda: time.monotonic() > deadline, "the reply path")
            self._ready.add(client)
        future = client.call_async(request)
        self.spin_until(future.done, f"an answer from {client.srv_name}")
        return future.result()

    def state(self) -> int:
        return self.call(self.get, GetState.Request()).current_state.id

    def transition(self, transition_id: int) -> bool:
        return self.call(self.change, ChangeState.Request(transition=Transition(id=transition_id))).success

    def hearing(self) -> bool:
        return self.speech.get_subscription_count() > 0

    def lifecycle_diagnostics(self, state: str) -> dict:
        self.wait_for_fresh_diagnostics(lambda d: d.get("lifecycle_state") == state, f"diagnostics: {state}")
        return self.diagnostics()


@pytest.fixture
def managed(ros_context, domain_id, tmp_path):
    process = NodeProcess(domain_id, tmp_path / "reasoner_node.log", "autostart:=false",
                          f"model_dir:={_test_model_dir()}", "diagnostics_rate_hz:=10.0",
                          "limits.max_scene_age_s:=10.0", "navigation.mode:=topic")
    probe = base.probe_of(ros_context, process, LifecycleProbe)
    try:
        yield probe
    finally:
        probe.close()
        process.close()


def test_transitions_over_dds_load_act_stop_the_robot_and_release(managed):
    probe = managed
    assert probe.state() == State.PRIMARY_STATE_UNCONFIGURED
    assert not probe.hearing() and probe.received["/diagnostics"] == []  # nothing loaded, nothing running

    assert probe.transition(Transition.TRANSITION_CONFIGURE)  # loads the map and the model
    assert probe.state() == State.PRIMARY_STATE_INACTIVE
    values = probe.lifecycle_diagnostics("inactive")
    assert values["model_loaded"] == "true" and not probe.hearing()

    assert probe.transition(Transition.TRANSITION_ACTIVATE)
    assert probe.state() == State.PRIMARY_STATE_ACTIVE
    probe.spin_until(probe.hearing, "the speech subscription")
    probe.lifecycle_diagnostics("active")
    probe.publish_odom_and_wait(*ROBOT_START)
    probe.publish_scene_and_wait(red_cup_scene())
    plan = probe.say("go to the kitchen")
    assert plan["status"] == "ok" and plan["plan"] == "navigate(place:kitchen)", plan
    goal = probe.spin_until(lambda: probe.received["goal_pose"], "the goal to the kitchen")[0].pose.position
    assert math.hypot(goal.x - KITCHEN[0], goal.y - KITCHEN[1]) < 1e-6

    assert probe.transition(Transition.TRANSITION_DEACTIVATE)  # the robot stops, the plan ends
    probe.spin_until(lambda: probe.received["cmd_vel"], "a zero cmd_vel on deactivate")
    assert all(t.linear.x == 0.0 and t.angular.z == 0.0 for t in probe.received["cmd_vel"])
    hold = probe.spin_until(lambda: probe.received["goal_pose"][1:], "the hold-position goal")[0].pose.position
    assert math.hypot(hold.x - ROBOT_START[0], hold.y - ROBOT_START[1]) < 1e-6
    preempted = probe.spin_until(  # published by the executor after the hold goal, not necessarily before it arrives
        lambda: [b for b in probe.stream() if b["type"] == "event" and b["event"] == "plan_preempted"],
        "the plan_preempted event")
    assert [b["plan_id"] for b in preempted] == [plan["plan_id"]]
    assert probe.state() == State.PRIMARY_STATE_INACTIVE
    probe.lifecycle_diagnostics("inactive")
    probe.spin_until(lambda: not probe.hearing(), "the speech subscription to go")

    assert probe.transition(Transition.TRANSITION_ACTIVATE)  # acts again, numbering goes on
    probe.spin_until(probe.hearing, "the speech subscription again")
    probe.publish_scene_and_wait(red_cup_scene())
    stop = probe.say("stop")
    assert (stop["plan"], stop["plan_id"]) == ("stop()", plan["plan_id"] + 1)

    assert probe.transition(Transition.TRANSITION_DEACTIVATE)
    assert probe.transition(Transition.TRANSITION_CLEANUP)  # model and core released
    assert probe.state() == State.PRIMARY_STATE_UNCONFIGURED
    assert probe.transition(Transition.TRANSITION_UNCONFIGURED_SHUTDOWN)
    assert probe.state() == State.PRIMARY_STATE_FINALIZED
    assert probe.process.alive() and "Traceback" not in probe.process.output()


def test_a_configure_that_cannot_load_fails_and_leaves_the_node_unconfigured(ros_context, domain_id, tmp_path):
    process = NodeProcess(domain_id, tmp_path / "reasoner_node.log", "autostart:=false",
                          f"model_dir:={tmp_path / 'no_model'}")
    probe = base.probe_of(ros_context, process, LifecycleProbe)
    try:
        assert not probe.transition(Transition.TRANSITION_CONFIGURE)
        assert probe.state() == State.PRIMARY_STATE_UNCONFIGURED
        probe.spin_until(lambda: "configure failed" in process.output(), "the reason in the log")
        assert str(tmp_path / "no_model") in process.output() and process.alive()
    finally:
        probe.close()
        process.close()


def test_a_transition_that_raises_is_answered_error_and_logged(ros_context, monkeypatch):
    """rclpy turns an exception in a transition callback into ERROR without a word; the node says what it was."""
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.parameter import Parameter

    from wafer_reasoner.ros.reasoner_node import ReasonerNode

    node = ReasonerNode(context=ros_context, parameter_overrides=[Parameter("autostart", value=False)])
    logged = []
    monkeypatch.setattr(node, "_release", lambda: (_ for _ in ()).throw(RuntimeError("release broke")))
    monkeypatch.setattr(node, "get_logger", lambda: type("Log", (), {"error": staticmethod(logged.append)})())
    try:
        assert node.on_shutdown(None) == TransitionCallbackReturn.ERROR
        assert len(logged) == 1 and logged[0].startswith("shutdown failed: RuntimeError: release broke")
        assert "_shut_down" in logged[0]  # with the traceback
    finally:
        monkeypatch.undo()
        node.destroy_node()
