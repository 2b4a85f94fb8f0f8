"""Every input path, fuzzed without ROS: at least MIN_INPUTS generated inputs per input type (hypothesis).

Each parser either returns a value within the contract or raises the project's own error; nothing else escapes,
nothing non-finite comes out, and the core keeps its previous state after bad input. In ``make test`` the runs
are derandomized (the same inputs each run, so CI cannot flake); ``make fuzz`` runs this file with
FUZZ_PURE_EXAMPLES=10000 random inputs per type, then sends random messages over DDS (fuzz_over_dds.py).
"""

import functools
import json
import math
import os
import re
from dataclasses import fields
from types import MappingProxyType

import pytest
from fuzz_strategies import floats, genai_configs, json_values, manipulator_replies, perception_texts, utterances
from fuzz_strategies import yaml_texts as yaml_text_inputs
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wafer_reasoner.emulator import EmulatorDataError
from wafer_reasoner.emulator.pacing import check_mode
from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.engine.planner_model import SHIPPED_MODEL_DIR, ModelLoadError, PlannerModel, read_model_config
from wafer_reasoner.planner.commands import MAX_SAY_CHARS, Say
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.limits import LimitsError, SafetyLimits
from wafer_reasoner.planner.scene import (
    MAX_COORDINATE_M,
    MAX_STAMP_S,
    NamedPlace,
    RobotPose,
    SceneError,
    load_places,
    parse_perception_json,
)
from wafer_reasoner.runtime.core import PlanRecord, ReasonerCore
from wafer_reasoner.runtime.emulation import emulator_for
from wafer_reasoner.runtime.resources import ResourceError
from wafer_reasoner.sim.scenario import ScenarioError, parse_yaml_text, scenario_from_dict

MIN_INPUTS = int(os.environ.get("FUZZ_PURE_EXAMPLES", "1000"))  # make fuzz: 10,000, random each run
FUZZ = settings(max_examples=MIN_INPUTS, derandomize="FUZZ_PURE_EXAMPLES" not in os.environ, database=None,
                deadline=None, suppress_health_check=list(HealthCheck))
PLACES = (NamedPlace("kitchen", 4.0, 0.0),)
_FRAME = re.compile(r"[A-Za-z0-9_]+(/[A-Za-z0-9_]+)*")
COUNTS: dict = {}
NUMBERS = st.integers(-(2**40), 2**40) | floats


def counted(kind: str) -> None:
    COUNTS[kind] = COUNTS.get(kind, 0) + 1


def _bounded(value: float) -> bool:
    return math.isfinite(value) and abs(value) <= MAX_COORDINATE_M


# ---- perception/objects ----------------------------------------------------------------------------------------


@FUZZ
@given(perception_texts)
@example("[" * 1000 + "]" * 1000)
@example('{"a":' * 1000 + "1" + "}" * 1000)
@example('{"stamp": ' + "9" * 5000 + "}")
@example('{"stamp": 1' + "0" * 400 + "}")
@example('{"stamp": 1e308, "frame_id": "/etc/passwd"}')
@example(json.dumps({"stamp": 1.0, "frame_id": "x" * 100_000}))
@example(json.dumps({"stamp": 1.0, "frame_id": {"a": 1}}))
def test_perception_json_gives_a_bounded_scene_or_a_scene_error(text):
    counted("perception")
    try:
        scene = parse_perception_json(text, places=PLACES)
    except SceneError:
        return
    assert 0.0 <= scene.stamp_s <= MAX_STAMP_S
    assert _FRAME.fullmatch(scene.frame_id) and len(scene.frame_id) <= 64
    for item in (*scene.objects, *scene.people):
        assert re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", item.id)
        assert all(_bounded(v) for v in (item.x, item.y, getattr(item, "z", 0.0), getattr(item, "score", 0.0)))


# ---- speech/transcript: the whole path an utterance takes, with the shipped model --------------------------------


@pytest.fixture(scope="module")
def shipped_core():
    if not (SHIPPED_MODEL_DIR / "planner.onnx").is_file():
        pytest.skip("needs the shipped planner model")
    model = PlannerModel(SHIPPED_MODEL_DIR)
    return ReasonerCore(model, emulator_for(planner_dir=model.model_dir), SafetyLimits(), Executor(SafetyLimits()),
                        places=PLACES)


def _finite_json(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (dict, MappingProxyType)):
        return all(_finite_json(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite_json(v) for v in value)
    return True


def test_every_utterance_gets_exactly_one_record_and_speakable_words(shipped_core):
    core = shipped_core
    scene = {"stamp": 0.0, "objects": [{"id": "cup_red", "label": "cup", "color": "red", "x": 1.0, "y": 0.5, "z": 0.8}],
             "people": [{"id": "user", "x": -1.0, "y": 0.0}]}
    core.on_scene(parse_perception_json(json.dumps(scene), places=PLACES), 0.0)
    core.on_odom(RobotPose(0.0, 0.0, 0.0), (0.0, 0.0), 0.0)

    @FUZZ
    @given(utterances)
    @example("x" * 100_000)
    @example("go to the \x1b[31mkitchen")
    def one(text):
        counted("speech")
        before = core.plans
        out = core.on_utterance(text, 0.5)
        records = [item for item in out if isinstance(item, PlanRecord)]
        assert [r.plan_id for r in records] == [before + 1]
        body = records[0].result.to_json_dict()
        json.dumps(body, allow_nan=False)  # what the node publishes: JSON without NaN
        for said in (item for item in out if isinstance(item, Say)):
            assert len(said.text) <= MAX_SAY_CHARS and said.text.isprintable()
        core.emergency_stop(0.6)  # the next utterance starts from a robot at rest

    one()


# ---- manipulator/status -------------------------------------------------------------------------------------------


def test_manipulator_replies_never_raise_and_only_an_echoed_id_matches(shipped_core):
    core = shipped_core

    @FUZZ
    @given(manipulator_replies)
    @example("SUCCEEDED")
    @example("succeeded 99999999999999999999999")
    def one(text):
        counted("manipulator_status")
        before = core.counts["stray_replies"]
        out = core.on_reply(text, 1.0)
        assert core.counts["stray_replies"] == before + 1 and len(out) == 1  # nothing in flight: all stray

    one()


# ---- odom -----------------------------------------------------------------------------------------------------


@FUZZ
@given(st.lists(floats, min_size=9, max_size=9))
def test_odometry_gives_a_bounded_pose_or_none(values):
    counted("odom")
    from nav_msgs.msg import Odometry

    from wafer_reasoner.ros.conversions import base_velocity_from_odometry, pose_from_odometry

    msg = Odometry()
    p, q, twist = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
    p.x, p.y, q.x, q.y, q.z, q.w, twist.linear.x, twist.linear.y, twist.angular.z = values
    pose = pose_from_odometry(msg)
    assert pose is None or all(_bounded(v) for v in (pose.x, pose.y)) and math.isfinite(pose.yaw)
    velocity = base_velocity_from_odometry(msg)
    assert velocity is None or all(math.isfinite(v) for v in velocity)


# ---- parameters: what _configure hands to the pure validators ---------------------------------------------------


@FUZZ
@given(st.dictionaries(st.sampled_from([item.name for item in fields(SafetyLimits)]),
                       floats, max_size=12),
       st.lists(floats, min_size=4, max_size=4),
       st.dictionaries(st.sampled_from(["engine_candidates", "engine_temperature", "engine_top_k", "engine_seed",
                                        "engine_prefix_cache", "engine_draft_tokens"]), NUMBERS, max_size=6),
       st.sampled_from(["off", "emulated", "fast", "", "OFF"]),
       st.sampled_from(["planner", "Llama-3.1-70B", "nope", ""]), st.sampled_from(["WSE-3", "A100", "x", ""]))
def test_parameters_either_configure_or_raise_the_errors_the_node_reports(limits, executor, engine, pacing, target,
                                                                          hardware):
    counted("parameters")
    try:
        Executor(SafetyLimits.from_mapping(limits), *executor[:3], yaw_tolerance_rad=executor[3])
    except (LimitsError, ValueError):
        pass
    try:
        EngineConfig.from_params(engine)
    except ValueError:
        pass
    try:
        check_mode(pacing)
    except ValueError:
        pass
    assert _emulator_error(target, hardware) in ("", "EmulatorDataError", "ResourceError")


@functools.cache
def _emulator_error(target: str, hardware: str) -> str:
    """The error emulator_for raises for these names ("" for none); each pair is tried once (it reads files)."""
    try:
        emulator_for(target, hardware, planner_dir=SHIPPED_MODEL_DIR)
    except (EmulatorDataError, ResourceError) as error:
        return type(error).__name__
    return ""


# ---- YAML files (semantic map, scenarios) and model files --------------------------------------------------------


@FUZZ
@given(yaml_text_inputs)
@example("[" * 5000)
@example("a: &a [*a]")
def test_yaml_files_load_or_raise_a_scenario_error(text):
    counted("yaml")
    try:
        data = parse_yaml_text(text, "fuzzed file")
    except ScenarioError:
        return
    for load in (load_places, lambda d: scenario_from_dict(d, places=PLACES)):
        try:
            load(data)
        except (SceneError, ScenarioError):
            pass


@FUZZ
@given(genai_configs, json_values | st.just({"tokens": ["<pad>"]}))
def test_model_files_load_or_raise_a_model_load_error(tmp_path_factory, genai, tokenizer):
    counted("model_files")
    folder = tmp_path_factory.getbasetemp() / "fuzzed_model"
    folder.mkdir(exist_ok=True)
    (folder / "genai_config.json").write_text(json.dumps(genai, allow_nan=True))
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer, allow_nan=True))
    try:
        read_model_config(folder)
    except ModelLoadError:
        pass


def test_every_input_type_got_its_share():
    """Runs last in this file: each input type above saw at least MIN_INPUTS generated inputs."""
    expected = {"perception", "odom", "parameters", "yaml", "model_files"}
    if "speech" in COUNTS or (SHIPPED_MODEL_DIR / "planner.onnx").is_file():
        expected |= {"speech", "manipulator_status"}
    assert {kind: COUNTS.get(kind, 0) >= MIN_INPUTS for kind in expected} == dict.fromkeys(expected, True), COUNTS
    print(f"fuzzed inputs per type: {COUNTS}")
