"""reasoner_node with ``backend: openai`` over real DDS, against loopback servers written here: a server that never
answers (timeout: a spoken refusal, nothing moves, and a stop still acts at once) and a port nobody listens on
(the embedded fallback plans, /diagnostics says why). The real llama.cpp server is test_serve.py's
(`make serve-test`). Nodes and servers are stopped by their fixtures; nothing asserts how long anything took.
"""


import pytest

rclpy = pytest.importorskip("rclpy")

import test_reasoner_node as base  # noqa: E402
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from remote_fakes import HANG, LoopbackServer, closed_port  # noqa: E402
from test_node_reliability import start as reliability_start  # noqa: E402
from test_reasoner_node import (  # noqa: E402
    ROBOT_START,
    Probe,
    _assert_nothing_moved,
    _test_model_dir,
    red_cup_scene,
)

from wafer_reasoner.remote.client import BackendTimeout, BackendUnavailable  # noqa: E402

domain_id, ros_context = base.domain_id, base.ros_context  # its module-scoped fixtures, used here by name


def reasoner_status(probe: Probe):
    """The latest reasoner DiagnosticStatus."""
    return next(status for array in reversed(probe.received["/diagnostics"]) for status in array.status
                if status.name.endswith(": reasoner"))


def assert_fallback_reported(probe: Probe) -> None:
    """/diagnostics counts one fallback and warns that the embedded planner answers."""
    probe.wait_for_fresh_diagnostics(lambda d: d.get("backend_requests_fallbacks") == "1", "the fallback count")
    status = reasoner_status(probe)
    assert status.level == DiagnosticStatus.WARN and "the embedded planner answers" in status.message


def start(ros_context, domain_id, tmp_path, *params) -> Probe:
    """A ready reasoner_node with ``backend: openai`` and ``params`` (test_node_reliability's start)."""
    return reliability_start(ros_context, domain_id, tmp_path, "backend:=openai", *params)


@pytest.fixture
def hanging_server():
    with LoopbackServer(lambda method, path, body: HANG) as server:
        yield server


def test_a_server_that_never_answers_is_refused_aloud_and_a_stop_meanwhile_acts_first(
        ros_context, domain_id, tmp_path, hanging_server):
    probe = start(ros_context, domain_id, tmp_path, f"base_url:={hanging_server.base_url}",
                  "backend_model:=m", "backend_constraint:=gbnf", "backend_timeout_s:=3.0")
    try:
        probe.publish_odom_and_wait(*ROBOT_START)
        probe.publish_scene_and_wait(red_cup_scene())
        probe.speech.publish(base.String(data="bring me the red cup"))
        probe.spin_until(lambda: hanging_server.requests, "the request to reach the server")
        probe.speech.publish(base.String(data="stop"))  # answered while the planning thread waits for the server
        records = probe.spin_until(lambda: len(probe.plans()) >= 2 and probe.plans(), "the stop's records")
        assert [r.get("shed", "") for r in records] == ["stopped", ""] and records[1]["plan"] == "stop()"
        assert probe.received["cmd_vel"], "the stop acted"
        timed_out = probe.say("go to the kitchen")  # planned after the stop; this one times out
        assert timed_out["status"] == "rejected" and timed_out["reasons"] == [BackendTimeout.spoken]
        assert timed_out["backend"]["error"].startswith("timeout") and timed_out["timings_ms"]["remote_ms"] > 0
        assert "emulated_ms" in timed_out["timings_ms"]
        probe.spin_until(lambda: BackendTimeout.spoken in probe.said(), "the refusal on say")
        _assert_nothing_moved(probe, ROBOT_START)
        # both requests timed out: the one the stop dropped (its answer discarded) and this one
        probe.wait_for_fresh_diagnostics(lambda d: d.get("backend_requests_timeout") == "2",
                                         "the timeouts on /diagnostics")
        assert probe.diagnostics()["backend"] == "openai" and probe.diagnostics()["backend_requests"] == "2"
    finally:
        probe.close()
        probe.process.close()


def test_a_server_that_is_down_falls_back_to_the_embedded_planner_and_diagnostics_say_so(
        ros_context, domain_id, tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    probe = start(ros_context, domain_id, tmp_path, f"base_url:={url}", "backend_retries:=1")
    try:
        probe.publish_odom_and_wait(*ROBOT_START)
        probe.publish_scene_and_wait(red_cup_scene())
        record = probe.say("bring me the red cup")
        assert record["status"] == "ok" and record["plan"].startswith("navigate(obj:cup_red)")
        assert record["backend"]["answered_by"] == "embedded" and record["backend"]["attempts"] == 2
        assert record["backend"]["error"].startswith("unavailable")
        probe.spin_until(lambda: probe.received["goal_pose"], "a goal from the fallback's plan")
        assert_fallback_reported(probe)
    finally:
        probe.close()
        probe.process.close()


def test_without_a_fallback_a_server_that_is_down_is_a_spoken_refusal(ros_context, domain_id, tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    probe = start(ros_context, domain_id, tmp_path, f"base_url:={url}", "backend_retries:=0",
                  "backend_fallback:=none")
    try:
        probe.publish_odom_and_wait(*ROBOT_START)
        probe.publish_scene_and_wait(red_cup_scene())
        record = probe.say("bring me the red cup")
        assert record["status"] == "rejected" and record["reasons"] == [BackendUnavailable.spoken]
        _assert_nothing_moved(probe, ROBOT_START)
        assert record["backend"]["answered_by"] == "openai"  # the record itself (a second reader may lag)
    finally:
        probe.close()
        probe.process.close()


@pytest.mark.parametrize("param, why", [("backend:=cloud", "'backend' must be one of"),
                                        ("base_url:=localhost:8080", "base_url"),
                                        ("backend_constraint:=regex", "constraint")])
def test_bad_backend_parameters_stop_the_node_with_the_reason(domain_id, tmp_path, param, why):
    code, output = base.exit_of_failed_start(domain_id, tmp_path, f"model_dir:={_test_model_dir()}",
                                             "backend:=openai", param)
    assert code != 0 and why in output
