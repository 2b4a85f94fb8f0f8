"""The remote backend through the reasoner core (runtime/backends.py, remote/planner.py): what a robot does when
the server answers, is slow, times out, is down or writes garbage.

Server answers are exchanges recorded from the real llama.cpp server (test/data/remote/, `make serve-record`),
replayed by a loopback HTTP server; a timeout and a refused connection, which a recording cannot hold, come from
loopback servers written here. The emulator, verifier, executor and (as the fallback) the shipped embedded
planner are the real ones. No assertion is about how long anything took.
"""

import json
import re
import threading

import pytest
from remote_fakes import HANG, LoopbackServer, closed_port, load_recording, replaying, sent_requests

from wafer_reasoner.planner import output_grammar
from wafer_reasoner.planner.commands import NavigationGoal, Say, VelocityCommand
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.language import PlanSyntaxError, parse_plan
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import NamedPlace, RobotPose, parse_perception_json
from wafer_reasoner.remote.client import BackendProtocolError, BackendTimeout, BackendUnavailable
from wafer_reasoner.remote.planner import RemotePlanner, RemoteSettings, plan_text, request_body
from wafer_reasoner.remote.prompt import EXAMPLES, SYSTEM_PROMPT, chat_messages
from wafer_reasoner.runtime.backends import backend_status, remote_planner, remote_settings
from wafer_reasoner.runtime.core import PlanRecord, ReasonerCore
from wafer_reasoner.runtime.emulation import emulator_for
from wafer_reasoner.runtime.worker import PlanningWorker

LIMITS = SafetyLimits()
RECORDED = ("bring_red_cup_gbnf", "go_to_kitchen_json_object", "joke_unconstrained", "bad_request")


def recorded_scene(recording: dict, stamp_s: float = 0.0):
    case = recording["case"]
    places = tuple(NamedPlace(p["name"], p["x"], p["y"], p["yaw"]) for p in case["places"])
    text = json.dumps({**case["scene"], "stamp": stamp_s})
    return parse_perception_json(text, places=places, robot=RobotPose(0.0, 0.0, 0.0))


@pytest.fixture(scope="module")
def emulator():
    return emulator_for("Llama-3.1-70B", "WSE-3")


@pytest.fixture(scope="module")
def embedded():
    from wafer_reasoner.engine.planner_model import PlannerModel

    return PlannerModel(None)  # the shipped model: the fallback a robot would have


def core_for(planner, emulator, recording) -> ReasonerCore:
    scene = recorded_scene(recording)
    core = ReasonerCore(planner, emulator, LIMITS, Executor(LIMITS), places=scene.places)
    core.on_scene(scene, 0.0)
    core.on_odom(RobotPose(0.0, 0.0, 0.0), (0.0, 0.0), 0.0)
    return core


def of(kind, outputs) -> list:
    return [item for item in outputs if isinstance(item, kind)]


def settings(base_url: str, **options) -> RemoteSettings:
    return RemoteSettings(base_url=base_url, **({"timeout_s": 10.0} | options))


# ---- the prompt and the request ---------------------------------------------------------------------------------

def test_the_system_prompt_names_every_step_and_every_example_is_a_valid_plan_of_its_scene():
    from wafer_reasoner.planner.syntax import CLARIFY_REASONS, STEP_FORMS

    for form in STEP_FORMS:
        assert f"{form.name}(" in SYSTEM_PROMPT, form.name
    for reason in CLARIFY_REASONS:
        assert reason in SYSTEM_PROMPT
    for scene, said, plan in EXAMPLES:
        parse_plan(plan)
        assert re.fullmatch(output_grammar.regex(scene), plan), (said, plan)


def test_the_fixed_part_of_the_prompt_comes_first_and_never_changes():
    recording = load_recording("bring_red_cup_gbnf")
    one = chat_messages(recorded_scene(recording), "go to the kitchen")
    two = chat_messages(recorded_scene(recording, 5.0).with_robot(RobotPose(1.0, 1.0, 0.0)), "bring me the book")
    assert one[:-1] == two[:-1] and one[-1] != two[-1]
    assert "obj:cup_red = red cup" in one[-1]["content"] and one[-1]["content"].endswith("Request: go to the kitchen")


@pytest.mark.parametrize("constraint, field", [("gbnf", "grammar"), ("vllm_regex", "guided_regex"),
                                               ("vllm_grammar", "guided_grammar"), ("json_schema", "response_format"),
                                               ("json_object", "response_format"), ("none", None)])
def test_each_constraint_puts_the_derived_grammar_where_its_server_reads_it(constraint, field):
    scene = recorded_scene(load_recording("bring_red_cup_gbnf"))
    body = request_body(settings("http://127.0.0.1:1/v1"), "m", constraint, scene, "go to the kitchen")
    extra = set(body) - {"model", "messages", "max_tokens", "temperature", "stream"}
    assert extra == ({field} if field else set())
    expected = {"grammar": output_grammar.gbnf(scene), "guided_regex": output_grammar.regex(scene),
                "guided_grammar": output_grammar.gbnf(scene)}
    if field in expected:
        assert body[field] == expected[field]
    if constraint == "json_schema":
        assert body[field]["json_schema"]["schema"] == output_grammar.json_schema(scene)
    if constraint == "json_object":  # llama-cpp-python's form
        assert body[field] == {"type": "json_object", "schema": output_grammar.json_schema(scene)}


def test_plan_text_takes_the_plan_field_under_a_schema_and_passes_anything_else_on():
    assert plan_text('{"plan": " stop() "}', "json_schema") == "stop()"
    assert plan_text("not json", "json_schema") == "not json"
    assert plan_text('{"other": 1}', "json_schema") == '{"other": 1}'
    assert plan_text('{"plan": "stop()"}', "json_object") == "stop()"
    assert plan_text("  navigate(place:dock)\n", "gbnf") == "navigate(place:dock)"


def test_remote_settings_take_the_api_key_from_the_environment_variable_named():
    values = {"base_url": "http://127.0.0.1:8080/v1", "api_key_env": "MY_KEY", "timeout_s": 2.0}
    assert remote_settings(values, environ={"MY_KEY": "sk-1"}).api_key == "sk-1"
    assert remote_settings(values, environ={}).api_key == ""
    assert remote_settings({**values, "api_key_env": ""}, environ={"MY_KEY": "sk-1"}).api_key == ""
    with pytest.raises(ValueError, match="constraint"):
        remote_settings({**values, "constraint": "regex"})
    with pytest.raises(ValueError, match="fallback"):
        remote_planner(remote_settings(values), fallback_mode="sometimes")


# ---- recorded answers of the real server ------------------------------------------------------------------------

@pytest.mark.parametrize("name", RECORDED)
def test_the_client_sends_what_was_recorded(name):
    """A prompt or grammar change makes this fail: record again from the real server (`make serve-record`)."""
    recording = load_recording(name)
    if not recording["case"]:
        pytest.skip("a hand-made request, not the planner's")
    case = recording["case"]
    with replaying(recording) as server:
        planner = RemotePlanner(settings(server.base_url, constraint=case["constraint"]))
        planner.generate(recorded_scene(recording), case["utterance"])
    assert sent_requests(server) == [exchange["request"] for exchange in recording["exchanges"]]


def test_a_recorded_plan_goes_through_the_same_query_path_and_reports_its_measured_time(emulator):
    recording = load_recording("bring_red_cup_gbnf")
    with replaying(recording) as server:
        core = core_for(RemotePlanner(settings(server.base_url)), emulator, recording)
        out = core.on_utterance(recording["case"]["utterance"], 0.1)
    [record] = of(PlanRecord, out)
    content = json.loads(recording["exchanges"][-1]["response"]["body"])["choices"][0]["message"]["content"]
    assert record.result.plan == content  # the grammar held the server to canonical plan text
    assert re.fullmatch(output_grammar.regex(recorded_scene(recording)), content)
    body = record.result.to_json_dict()
    assert body["backend"]["answered_by"] == "openai" and body["backend"]["constraint"] == "gbnf"
    assert body["timings_ms"]["remote_ms"] > 0 and body["emulated"]["target"] == "Llama-3.1-70B"
    assert body["timings_ms"]["prefill_ms"] is None  # the server does not say: not made up
    usage = json.loads(recording["exchanges"][-1]["response"]["body"])["usage"]
    assert (record.result.prompt_tokens, record.result.tokens) == (usage["prompt_tokens"], usage["completion_tokens"])
    if record.result.status.value == "ok":
        assert of(NavigationGoal, out)


def test_a_recorded_unconstrained_answer_goes_through_the_same_parser_and_verifier(emulator):
    recording = load_recording("joke_unconstrained")
    content = json.loads(recording["exchanges"][-1]["response"]["body"])["choices"][0]["message"]["content"]
    with replaying(recording) as server:
        core = core_for(RemotePlanner(settings(server.base_url, constraint="none")), emulator, recording)
        out = core.on_utterance(recording["case"]["utterance"], 0.1)
    [record] = of(PlanRecord, out)
    assert record.result.plan == format_or_empty(content)  # what the model wrote, as the parser reads it
    if record.result.status.value != "ok":
        assert not of(NavigationGoal, out) and of(Say, out)


def format_or_empty(text: str) -> str:
    from wafer_reasoner.planner.language import format_plan

    try:
        return format_plan(parse_plan(text))
    except PlanSyntaxError:
        return ""


def test_recorded_garbage_is_rejected_by_the_parser_and_moves_nothing(emulator):
    """llama-cpp-python's server took the JSON schema but did not hold the model to it: the recorded answer is
    JSON of other keys, cut at max_tokens. It reaches the parser as text and is refused there."""
    recording = load_recording("go_to_kitchen_json_object")
    reply = json.loads(recording["exchanges"][-1]["response"]["body"])
    content = reply["choices"][0]["message"]["content"]
    assert plan_text(content, "json_object") == content.strip()  # no {"plan": ...} in it
    with pytest.raises(PlanSyntaxError):
        parse_plan(content)
    with replaying(recording) as server:
        core = core_for(RemotePlanner(settings(server.base_url, constraint="json_object")), emulator, recording)
        out = core.on_utterance(recording["case"]["utterance"], 0.1)
    [record] = of(PlanRecord, out)
    assert record.result.status.value == "rejected" and "can't run" in record.result.reasons[0]
    assert not of(NavigationGoal, out) and of(Say, out)
    assert record.result.backend["finish_reason"] == reply["choices"][0]["finish_reason"]


def test_a_request_the_real_server_refused_with_http_500_is_retried_then_handed_to_the_fallback(embedded):
    """llama-cpp-python answers a request it cannot validate with HTTP 500 (recorded), which a client cannot tell
    from a failing server: retried, then the embedded planner answers; without a fallback, a spoken refusal."""
    recording = load_recording("bad_request")
    assert recording["exchanges"][0]["response"]["status"] == 500
    scene = recorded_scene(load_recording("bring_red_cup_gbnf"))
    with replaying(recording) as server:
        planner = RemotePlanner(settings(server.base_url, model="x", constraint="none", retries=1), fallback=embedded)
        generation = planner.generate(scene, "go to the kitchen")
    assert len(server.requests) == 2 and planner.counts["fallbacks"] == 1
    assert generation.report["answered_by"] == "embedded" and generation.report["error"].startswith("unavailable")
    assert generation.text == embedded.generate(scene, "go to the kitchen").text
    with replaying(recording) as server:
        with pytest.raises(BackendUnavailable) as caught:
            RemotePlanner(settings(server.base_url, model="x", constraint="none", retries=0)).generate(
                scene, "go to the kitchen")
    assert "HTTP 500" in str(caught.value) and caught.value.report["error"].startswith("unavailable")


def test_an_answer_that_is_no_chat_completion_is_refused_aloud_and_never_falls_back(emulator, embedded):
    recording = load_recording("bring_red_cup_gbnf")
    with LoopbackServer(lambda method, path, body: (200, b"<html>proxy login</html>")) as server:
        planner = RemotePlanner(settings(server.base_url, model="m", constraint="gbnf"), fallback=embedded)
        core = core_for(planner, emulator, recording)
        out = core.on_utterance("bring me the red cup", 0.1)
    [record] = of(PlanRecord, out)
    assert record.result.reasons == (BackendProtocolError.spoken,) and not of(NavigationGoal, out)
    assert planner.counts["protocol"] == 1 and planner.counts["fallbacks"] == 0


# ---- failures a recording cannot hold ---------------------------------------------------------------------------

def test_a_timeout_is_a_spoken_refusal_and_no_motion(emulator, embedded):
    recording = load_recording("bring_red_cup_gbnf")
    with LoopbackServer(lambda method, path, body: HANG) as server:
        planner = RemotePlanner(settings(server.base_url, model="m", constraint="gbnf", timeout_s=0.3),
                                fallback=embedded)  # a timeout never falls back: the time is spent
        core = core_for(planner, emulator, recording)
        out = core.on_utterance("bring me the red cup", 0.1)
    [record] = of(PlanRecord, out)
    assert record.result.status.value == "rejected"
    assert record.result.reasons == (BackendTimeout.spoken,) and Say(BackendTimeout.spoken) in out
    assert not of(NavigationGoal, out) and planner.counts["timeout"] == 1 and planner.counts["fallbacks"] == 0
    body = record.result.to_json_dict()
    assert body["backend"]["error"].startswith("timeout") and body["timings_ms"]["remote_ms"] >= 300.0 - 1.0
    problems, values = backend_status(planner)
    assert "timeout" in problems[0] and values["backend_requests_timeout"] == 1


def test_a_slow_answer_past_the_timeout_is_refused_and_a_slow_one_within_it_measured(emulator):
    recording = load_recording("bring_red_cup_gbnf")
    with replaying(recording, delay_s=0.4) as server:
        core = core_for(RemotePlanner(settings(server.base_url, timeout_s=0.2)), emulator, recording)
        [late] = of(PlanRecord, core.on_utterance("bring me the red cup", 0.1))
    assert late.result.reasons == (BackendTimeout.spoken,)
    with replaying(recording, delay_s=0.3) as server:
        core = core_for(RemotePlanner(settings(server.base_url, timeout_s=10.0)), emulator, recording)
        [slow] = of(PlanRecord, core.on_utterance("bring me the red cup", 0.1))
    assert slow.result.backend["answered_by"] == "openai" and slow.result.timings_ms["remote_ms"] >= 300.0 - 1.0


def test_a_server_down_falls_back_to_the_embedded_planner_with_the_reason_on_record(emulator, embedded):
    recording = load_recording("bring_red_cup_gbnf")
    planner = RemotePlanner(settings(f"http://127.0.0.1:{closed_port()}/v1", retries=1), fallback=embedded)
    core = core_for(planner, emulator, recording)
    out = core.on_utterance("bring me the red cup", 0.1)
    [record] = of(PlanRecord, out)
    assert record.result.status.value == "ok" and record.result.plan.startswith("navigate(obj:cup_red)")
    assert of(NavigationGoal, out)
    report = record.result.backend
    assert (report["backend"], report["answered_by"], report["attempts"]) == ("openai", "embedded", 2)
    assert report["error"].startswith("unavailable")
    problems, values = backend_status(planner)
    assert "the embedded planner answers" in problems[0] and values["backend_requests_fallbacks"] == 1


def test_a_server_down_without_a_fallback_is_a_spoken_refusal(emulator):
    recording = load_recording("bring_red_cup_gbnf")
    planner = remote_planner(settings(f"http://127.0.0.1:{closed_port()}/v1", retries=0), fallback_mode="none")
    core = core_for(planner, emulator, recording)
    out = core.on_utterance("bring me the red cup", 0.1)
    assert of(PlanRecord, out)[0].result.reasons == (BackendUnavailable.spoken,)
    assert not of(NavigationGoal, out)


def test_a_stop_acts_at_once_while_the_planning_thread_waits_for_the_server(emulator):
    recording = load_recording("bring_red_cup_gbnf")
    with LoopbackServer(lambda method, path, body: HANG) as server:
        core = core_for(RemotePlanner(settings(server.base_url, model="m", constraint="gbnf", timeout_s=30.0)),
                        emulator, recording)
        woken = threading.Event()
        worker = PlanningWorker(core.plan, woken.set)
        try:
            core.hear("bring me the red cup", 0.1)
            worker.submit(core.next_job(0.1))
            while not server.requests:  # the request is on the wire and the server is not answering
                threading.Event().wait(0.01)
            out = core.hear_all(["stop"], 0.2)
            assert out[0] == VelocityCommand(0.0, 0.0) and not woken.is_set()  # stopped before any answer
            records = of(PlanRecord, out)
            assert [r.result.shed for r in records] == ["stopped", ""] and records[1].result.plan == "stop()"
        finally:
            server.released.set()
            worker.close()
