"""The gripper through a GripperCommand action (gripper.mode action): reasoner_node's client against sim_world's
server, real processes over real DDS, on the test-only copy of control_msgs' action (wafer_test_control_msgs,
built into .venv by make setup). The action's result is the reply the motion gate matches by command id."""

import importlib.util
import json

import pytest

from wafer_reasoner.ros.gripper_action import gripper_succeeded

TEST_ACTION = "wafer_test_control_msgs/action/GripperCommand"
needs_test_action = pytest.mark.skipif(importlib.util.find_spec("wafer_test_control_msgs") is None,
                                       reason="wafer_test_control_msgs not built (make setup)")


def test_an_open_must_reach_its_goal_and_a_close_must_stall_on_the_object():
    assert gripper_succeeded(True, reached_goal=True, stalled=False)
    assert not gripper_succeeded(True, reached_goal=False, stalled=True)  # blocked while opening
    assert gripper_succeeded(False, reached_goal=False, stalled=True)  # closed on the object
    assert not gripper_succeeded(False, reached_goal=True, stalled=False)  # closed on nothing


rclpy = pytest.importorskip("rclpy")
from dds_probe import ProbeNode  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from test_integration import CONFIG, SCENARIO, startable_model_dir  # noqa: E402

from wafer_reasoner.demo.processes import reserve_domain_id, ros_env, start_node, stop_process  # noqa: E402
from wafer_reasoner.ros.qos import COMMAND_QOS, PLAN_QOS, SENSOR_QOS, SPEECH_QOS  # noqa: E402


@needs_test_action
def test_a_pick_closes_the_gripper_through_the_action_and_the_result_finishes_it(tmp_path):
    lease = reserve_domain_id()
    env, clock = ros_env(lease.domain_id), ["-p", "use_sim_time:=true"]
    processes = {
        "sim_world": start_node("sim_world", [
            "--params-file", str(CONFIG / "sim_world.yaml"), "-p", f"scenario:={SCENARIO}", "-p",
            f"gripper_action_type:={TEST_ACTION}", "-p", "publish_clock:=true", "-p", "real_time_factor:=3.0"],
            env, log_path=tmp_path / "sim_world.log"),
        "reasoner_node": start_node("reasoner_node", [
            "--params-file", str(CONFIG / "reasoner.yaml"), "-p", f"model_dir:={startable_model_dir()}", *clock,
            "-p", "gripper.mode:=action", "-p", f"gripper.action_type:={TEST_ACTION}"], env,
            log_path=tmp_path / "reasoner_node.log"),
    }
    probe = ProbeNode(lease.domain_id, "gripper_probe", processes=processes, log_dir=tmp_path)
    try:
        stream, topic_commands, scenes = [], [], []
        probe.node.create_subscription(String, "reasoner/plan", lambda m: stream.append(json.loads(m.data)), PLAN_QOS)
        probe.node.create_subscription(Float64MultiArray, "gripper/commands", topic_commands.append, COMMAND_QOS)
        probe.node.create_subscription(String, "perception/objects", lambda m: scenes.append(json.loads(m.data)),
                                       SENSOR_QOS)
        speech = probe.node.create_publisher(String, "speech/transcript", SPEECH_QOS)
        log = tmp_path / "reasoner_node.log"
        probe.spin_until(lambda: "gripper_cmd action (wafer_test_control_msgs)" in log.read_text(), "action mode")
        probe.spin_until(lambda: speech.get_subscription_count() > 0 and scenes, "the reasoner and a scene")
        plan = probe.plan_once_ready(lambda: speech.publish(String(data="pick up the red cup")), stream)
        assert plan["plan"] == "navigate(obj:cup_red); pick(obj:cup_red)", plan

        def ended():
            return [b["event"] for b in stream if b["type"] == "event" and b["event"].startswith("plan_")]

        assert probe.spin_until(ended, "the plan to end", timeout_s=90.0) == ["plan_succeeded"]
        assert probe.spin_until(lambda: scenes[-1].get("holding"), "the cup in the gripper") == "cup_red"
        assert topic_commands == []  # open and close went through the action, answered by its results
    finally:
        probe.close()
        for process in processes.values():
            stop_process(process)
        lease.release()
