"""reasoner_node under hostile or unlucky input, over real DDS: bursts, emergency stops, stray replies, messages
that used to kill it, a bad command line, and a restart in the middle of a plan.

Uses the node process, probe and fixtures of test_reasoner_node.py (a ROS_DOMAIN_ID of its own, localhost only,
processes ended by PID). Nothing here asserts on how long anything took: bench/bench_reliability.py measures.
"""

import json
import signal
import subprocess
import sys
import time

import pytest

rclpy = pytest.importorskip("rclpy")

import test_reasoner_node as base  # noqa: E402
from std_msgs.msg import Empty, String  # noqa: E402
from test_reasoner_node import (  # noqa: E402
    REPO,
    ROBOT_START,
    SHIPPED_MODEL,
    WAIT_S,
    NodeProcess,
    Probe,
    _node_env,
    _test_model_dir,
    red_cup_scene,
)

from wafer_reasoner.ros.qos import EMERGENCY_STOP_QOS, PLAN_QOS, SPEECH_QOS  # noqa: E402

BURST = 1000
domain_id, ros_context = base.domain_id, base.ros_context  # its module-scoped fixtures, used here by name
needs_trained_model = pytest.mark.skipif(not SHIPPED_MODEL.is_file(), reason="needs the shipped planner model")


class BurstProbe(Probe):
    """The probe with the deep speech and plan profiles a burst needs, and an emergency stop publisher."""

    def __init__(self, context, node_process) -> None:
        super().__init__(context, node_process)
        self.node.destroy_publisher(self.speech)
        self.speech = self.node.create_publisher(String, "speech/transcript", SPEECH_QOS)
        self.estop = self.node.create_publisher(Empty, "emergency_stop", EMERGENCY_STOP_QOS)
        self.received["plan_stream"] = []
        self._parsed, self._plans_seen, self._stream_seen = [], [], 0
        self._subs.append(self.node.create_subscription(String, "reasoner/plan", self.received["plan_stream"].append,
                                                        PLAN_QOS))

    def stream(self) -> list:
        """The plan stream so far, each message parsed once (a burst brings thousands)."""
        parsed, messages = self._parsed, self.received["plan_stream"]
        parsed += [json.loads(msg.data) for msg in messages[len(parsed):]]
        return parsed

    def plans(self) -> list:
        done = self._plans_seen
        done += [body for body in self.stream()[self._stream_seen:] if body["type"] == "plan"]
        self._stream_seen = len(self._parsed)
        return list(done)

    def wait_ready(self) -> None:
        super().wait_ready()
        self.spin_until(lambda: self.estop.get_subscription_count() > 0, "the node on emergency_stop")

    def ready_to_plan(self) -> None:
        self.publish_odom_and_wait(*ROBOT_START)
        self.publish_scene_and_wait(red_cup_scene())

    def burst(self, texts) -> None:
        for text in texts:
            self.speech.publish(String(data=text))

    def plans_up_to(self, count: int) -> list:
        return self.spin_until(lambda: len(self.plans()) >= count and self.plans(), f"{count} plan records",
                               timeout_s=WAIT_S * 6)


def start(ros_context, domain_id, tmp_path, *params) -> BurstProbe:
    process = NodeProcess(domain_id, tmp_path / "reasoner_node.log", f"model_dir:={_test_model_dir()}",
                          "diagnostics_rate_hz:=10.0", "limits.max_scene_age_s:=60.0", *params)
    probe = base.probe_of(ros_context, process, BurstProbe)
    try:
        probe.wait_ready()
    except BaseException:
        probe.close()
        process.close()
        raise
    return probe


@pytest.fixture
def node(ros_context, domain_id, tmp_path):
    probe = start(ros_context, domain_id, tmp_path)
    yield probe
    probe.close()
    probe.process.close()


@needs_trained_model
def test_a_burst_of_1000_gets_1000_records_in_order_and_a_stop_after_it_cancels_the_rest(node):
    node.ready_to_plan()
    node.burst([f"go to the kitchen {'please ' * (i % 3)}".strip() for i in range(BURST)] + ["stop"])
    plans = node.plans_up_to(BURST + 1)
    assert [p["plan_id"] for p in plans] == list(range(1, BURST + 2))  # one record each, in order
    *burst, stop = plans
    assert (stop["plan"], stop["status"]) == ("stop()", "ok")
    kinds = {p.get("shed", "planned") for p in burst}
    assert kinds <= {"planned", "busy", "stopped"} and "busy" in kinds, kinds
    assert all(p["status"] == "rejected" and p["reasons"] for p in burst if p.get("shed"))
    # nothing planned before the stop ran after it: the last thing on cmd_vel is the stop's zero
    node.spin_until(lambda: node.received["cmd_vel"], "the stop's zero cmd_vel")
    # /diagnostics is periodic: wait for a message taken after the last record went out (an empty queue alone can
    # be seen between two samples of the burst on a slow host), then compare its counts with the records
    node.spin_until(lambda: node.diagnostics().get("speech_queue_depth") == "0"
                    and node.diagnostics().get("plan_records_published") == str(BURST + 1),
                    "an empty queue after the last record")
    last = node.received["cmd_vel"][-1]
    assert (last.linear.x, last.angular.z) == (0.0, 0.0)
    values = node.diagnostics()
    shed = {kind: sum(p.get("shed") == kind for p in burst) for kind in ("busy", "stopped")}
    assert (int(values["utterances_dropped_busy"]), int(values["utterances_dropped_by_stop"])) == (
        shed["busy"], shed["stopped"])
    assert int(values["plan_records_published"]) == BURST + 1 and values["callback_errors"] == "0"


@needs_trained_model
def test_the_emergency_stop_during_a_burst_zeroes_cmd_vel_and_drops_what_waits(node):
    node.ready_to_plan()
    node.burst(["go to the kitchen"] * 200)
    node.estop.publish(Empty())
    node.spin_until(lambda: node.received["cmd_vel"], "the emergency stop's zero cmd_vel")
    plans = node.plans_up_to(200)
    assert [p["plan_id"] for p in plans] == list(range(1, 201))
    node.spin_until(lambda: node.diagnostics().get("emergency_stops") == "1", "the emergency stop counted")
    assert all((t.linear.x, t.angular.z) == (0.0, 0.0) for t in node.received["cmd_vel"])
    assert "emergency stop" in node.process.output()


def test_stray_and_malformed_replies_are_counted_and_logged_throttled(node):
    status = node.node.create_publisher(String, "manipulator/status", PLAN_QOS)
    node.spin_until(lambda: status.get_subscription_count() > 0, "the node on manipulator/status")
    for index in range(106):  # paced: manipulator/status keeps the last 10 (COMMAND_QOS), as a controller sends
        status.publish(String(data=("succeeded", "SUCCEEDED", f"failed {index}")[index % 3]))
        node.executor.spin_once(timeout_sec=0.01)
    node.spin_until(lambda: node.diagnostics().get("manipulator_replies_ignored") == "106", "106 ignored replies")
    lines = [line for line in node.process.output().splitlines() if "manipulator/status" in line]
    assert 1 <= len(lines) <= 3, lines  # throttled: 5 s between lines of one kind


def test_messages_that_used_to_kill_the_node_are_refused_and_the_scene_kept(node):
    node.ready_to_plan()
    for text in ("[" * 1000 + "]" * 1000, '{"a":' * 1000 + "1" + "}" * 1000, '{"stamp": ' + "9" * 5000 + "}",
                 json.dumps({**red_cup_scene(), "stamp": 1.0, "frame_id": "/etc/passwd"}),
                 json.dumps({**red_cup_scene(), "stamp": 1e308})):
        refused = int(node.diagnostics()["perception_rejected"])
        node.publish_scene(text)  # one at a time: perception keeps only the latest (SENSOR_QOS)
        node.spin_until(lambda n=refused: int(node.diagnostics()["perception_rejected"]) == n + 1,
                        f"{text[:30]} refused")
    assert node.diagnostics()["perception_rejected"] == "5"
    values = node.diagnostics()
    assert values["scene_age_s"] != "n/a" and values["callback_errors"] == "0" and node.process.alive()


def test_a_missing_params_file_is_refused_in_one_clear_line(domain_id, tmp_path):
    missing = tmp_path / "no_such_params.yaml"
    result = subprocess.run([sys.executable, "-m", "wafer_reasoner.ros.reasoner_node", "--ros-args",
                             "--params-file", str(missing)], cwd=REPO, env=_node_env(domain_id),
                            capture_output=True, text=True, timeout=WAIT_S)
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in output, output
    assert "cannot start" in output and str(missing) in output and "--params-file" in output


@needs_trained_model
def test_a_node_killed_mid_plan_and_started_again_sends_no_goal_until_it_hears_a_new_utterance(
        ros_context, domain_id, tmp_path):
    first = start(ros_context, domain_id, tmp_path)
    try:
        first.ready_to_plan()
        assert first.say("go to the kitchen")["status"] == "ok"
        first.spin_until(lambda: first.received["goal_pose"], "the first goal")
        first.process.proc.send_signal(signal.SIGKILL)  # mid-plan: the robot has not arrived
        first.process.wait(WAIT_S)
    finally:
        first.close()
        first.process.close()
    (tmp_path / "again").mkdir()
    second = start(ros_context, domain_id, tmp_path / "again")
    try:
        second.ready_to_plan()
        quiet_until = time.monotonic() + 3.0
        second.spin_until(lambda: time.monotonic() > quiet_until, "3 s of a restarted node with a scene and a pose")
        assert second.received["goal_pose"] == [] and second.plans() == []  # no old goal, no old utterance
        assert second.say("go to the dock")["plan_id"] == 1
        second.spin_until(lambda: second.received["goal_pose"], "a goal for the new utterance")
    finally:
        second.close()
        second.process.close()
