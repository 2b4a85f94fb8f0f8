"""Fuzz over real DDS (``make fuzz``, not part of ``make test``): FUZZ_EXAMPLES generated messages per input topic
(default 10,000) sent to a running reasoner_node, random each run (hypothesis, not derandomized).

Per topic: the node is alive afterwards, no callback failed (/diagnostics ``callback_errors`` stays 0), nothing
it published is non-finite or over a limit (cmd_vel within the speed caps, goals inside the workspace), and it
still has a scene and a pose. speech/transcript also checks that every transcript got exactly one plan record.
String topics get raw CDR too: truncated, with invalid UTF-8, with lengths that lie.
"""

import json
import math
import os
import random

import pytest

rclpy = pytest.importorskip("rclpy")

import test_reasoner_node as base  # noqa: E402
from fuzz_strategies import floats, manipulator_replies, perception_texts, utterances  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from test_node_reliability import BurstProbe, start  # noqa: E402

from wafer_reasoner.planner.limits import SafetyLimits  # noqa: E402
from wafer_reasoner.ros.qos import COMMAND_QOS  # noqa: E402

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10000"))
FUZZ = settings(max_examples=EXAMPLES, database=None, deadline=None, suppress_health_check=list(HealthCheck))
LIMITS = SafetyLimits()
domain_id, ros_context = base.domain_id, base.ros_context
SENT: dict = {}


@pytest.fixture(scope="module")
def node(ros_context, domain_id, tmp_path_factory):
    probe = start(ros_context, domain_id, tmp_path_factory.mktemp("fuzz"))
    probe.ready_to_plan()
    yield probe
    print(f"messages sent per topic: {SENT}")
    probe.close()
    probe.process.close()


def mangled_cdr(data: bytes, rng: random.Random) -> bytes:
    """A serialized message torn, flipped or with a lying length field."""
    data = bytearray(data)
    choice = rng.randrange(4)
    if choice == 0 and len(data) > 4:
        return bytes(data[: rng.randrange(4, len(data))])
    if choice == 1 and len(data) > 8:
        data[rng.randrange(8, len(data))] = rng.randrange(0x80, 0x100)  # invalid UTF-8
    elif choice == 2 and len(data) >= 8:
        data[4:8] = rng.randrange(2**32).to_bytes(4, "little")  # the string length
    else:
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    return bytes(data)


def check_alive_and_within_limits(node: BurstProbe) -> None:
    node.publish_odom(*base.ROBOT_START)  # the node keeps (or gets back) a pose and a scene
    node.publish_scene_and_wait(base.red_cup_scene())
    values = node.wait_for_fresh_diagnostics(lambda d: True, "diagnostics after the fuzz")
    values = node.diagnostics()
    assert node.process.alive() and values["callback_errors"] == "0", values
    for twist in node.received["cmd_vel"]:
        assert all(math.isfinite(v) for v in (twist.linear.x, twist.angular.z))
        assert abs(twist.linear.x) <= LIMITS.max_linear_speed_mps
        assert abs(twist.angular.z) <= LIMITS.max_angular_speed_radps
    for goal in node.received["goal_pose"]:
        p = goal.pose.position
        assert LIMITS.workspace_min_x_m <= p.x <= LIMITS.workspace_max_x_m
        assert LIMITS.workspace_min_y_m <= p.y <= LIMITS.workspace_max_y_m


def send(node: BurstProbe, topic: str, publisher, msg) -> None:
    SENT[topic] = SENT.get(topic, 0) + 1
    publisher.publish(msg)
    if SENT[topic] % 20 == 0:
        for _ in range(40):  # keep up with what the node sends back (its plan stream keeps 1024)
            node.executor.spin_once(timeout_sec=0.0)


def test_perception(node):
    rng = random.Random()

    @FUZZ
    @given(perception_texts)
    def one(text):
        msg = String(data=text.encode("utf-8", "replace").decode("utf-8"))
        send(node, "perception/objects", node.perception, msg)
        if rng.random() < 0.1:
            send(node, "perception/objects", node.perception, mangled_cdr(serialize_message(msg), rng))

    one()
    check_alive_and_within_limits(node)


def test_odom(node):
    @FUZZ
    @given(st.lists(floats, min_size=9, max_size=9))
    def one(values):
        msg = Odometry()
        p, q, twist = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
        p.x, p.y, q.x, q.y, q.z, q.w, twist.linear.x, twist.linear.y, twist.angular.z = values
        send(node, "odom", node.odom, msg)

    one()
    check_alive_and_within_limits(node)


def test_manipulator_status(node):
    status = node.node.create_publisher(String, "manipulator/status", COMMAND_QOS)
    node.spin_until(lambda: status.get_subscription_count() > 0, "the node on manipulator/status")
    rng = random.Random()

    @FUZZ
    @given(manipulator_replies)
    def one(text):
        msg = String(data=text.encode("utf-8", "replace").decode("utf-8"))
        raw = rng.random() < 0.1
        send(node, "manipulator/status", status, mangled_cdr(serialize_message(msg), rng) if raw else msg)

    one()
    check_alive_and_within_limits(node)


def test_speech_every_transcript_gets_one_record(node):
    before = len(node.plans())
    values = node.wait_for_fresh_diagnostics(lambda d: True, "diagnostics before the speech fuzz")
    values = node.diagnostics()
    published_before, heard_before = int(values["plan_records_published"]), int(values["plans_received"])
    texts = []

    @FUZZ
    @given(utterances)
    def one(text):
        text = text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "")  # DDS strings end at NUL
        texts.append(text)
        send(node, "speech/transcript", node.speech, String(data=text))

    one()
    # the node's own count: one record published per transcript heard (a reader that lags more than PLAN_QOS's
    # depth behind would lose some on its side; that is the reader's depth, not a record the node left out)
    node.spin_until(lambda: int(node.diagnostics().get("plan_records_published", -1)) == published_before + len(texts)
                    and int(node.diagnostics()["plans_received"]) == heard_before + len(texts), "every record",
                    timeout_s=600.0)
    plans = node.plans()[before:]
    ids = [p["plan_id"] for p in plans]
    assert ids == sorted(set(ids)) and all(json.dumps(p, allow_nan=False) for p in plans)  # in order, no repeats
    print(f"speech: {len(texts)} transcripts, {len(plans)} records received here")
    check_alive_and_within_limits(node)
