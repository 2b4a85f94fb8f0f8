"""The query core (validate -> stop? -> model -> parse -> verify) and stop detection.

The model here is a TEST DOUBLE: ``FixedTextModel`` returns the plan text each test gives it, so
these tests check parsing, verification and stop handling only.  The real ONNX engine
(``wafer_reasoner.engine.planner_model``) has its own tests.
"""

import json
import math
from dataclasses import dataclass

import pytest

from wafer_reasoner.planner.language import Stop
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import Person, RobotPose, Scene, SceneObject
from wafer_reasoner.runtime.query import MAX_UTTERANCE_CHARS, PlanStatus, answer, utterance_problem
from wafer_reasoner.understanding.stop import is_stop_command

LIMITS = SafetyLimits()
NOW_S = 50.0
SCENE = Scene(
    objects=(SceneObject("cup_1", "cup", "red", 2.0, 0.0, 0.8), SceneObject("cup_2", "cup", "blue", 2.0, 1.0, 0.8)),
    people=(Person("user", -1.0, 0.0),),
    robot=RobotPose(0.0, 0.0, 0.0),
    stamp_s=NOW_S - 0.2,
)
FETCH = "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"


@dataclass(frozen=True)
class FakeGeneration:
    """Same fields as the engine's Generation."""

    text: str
    tokens: int = 12
    prefill_ms: float = 3.0
    decode_ms: float = 9.0
    total_ms: float = 12.5
    tokens_per_s: float = 1000.0


class FixedTextModel:
    """Test double for the planner model: returns ``text`` for any query and records what it was asked."""

    def __init__(self, text: str = FETCH, **numbers) -> None:
        self.text = text
        self.numbers = numbers
        self.calls = []

    def generate(self, scene, utterance):
        self.calls.append(utterance)
        return FakeGeneration(self.text, **self.numbers)


class FailingModel:
    """Test double for a model whose runtime breaks."""

    def generate(self, scene, utterance):
        raise RuntimeError("onnxruntime: bad input shape")


class FakeClock:
    """Each call advances 5 ms, so host_total_ms is exact without reading the wall clock."""

    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        self.now_s += 0.005
        return self.now_s


def ask(utterance, model=None, scene=SCENE, now_s=NOW_S):
    return answer(model or FixedTextModel(), scene, utterance, LIMITS, now_s=now_s, clock=FakeClock())


# -- the normal path -----------------------------------------------------------------------------


def test_ok_plan_is_parsed_verified_and_canonical():
    model = FixedTextModel("navigate( obj:cup_1 );pick(obj:cup_1)")
    result = ask("pick up the red cup", model)
    assert result.status is PlanStatus.OK
    assert result.plan == "navigate(obj:cup_1); pick(obj:cup_1)"
    assert len(result.steps) == 2
    assert result.reasons == ()
    assert model.calls == ["pick up the red cup"]
    assert (result.tokens, result.tokens_per_s) == (12, 1000.0)
    assert dict(result.timings_ms) == {"host_total_ms": pytest.approx(5.0), "prefill_ms": 3.0, "decode_ms": 9.0}


def test_json_form_has_exactly_the_reasoner_plan_fields():
    data = ask("bring me the red cup").to_json_dict()
    assert set(data) == {"utterance", "plan", "status", "reasons", "timings_ms", "tokens", "tokens_per_s"}
    assert data["status"] == "ok" and data["plan"] == FETCH and data["reasons"] == []
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_non_finite_numbers_become_null_in_json():
    result = ask("bring me the red cup", FixedTextModel(tokens_per_s=math.inf, decode_ms=math.nan))
    data = result.to_json_dict()
    assert data["tokens_per_s"] is None and data["timings_ms"]["decode_ms"] is None
    json.dumps(data, allow_nan=False)


def test_emulated_time_can_be_added_later():
    result = ask("bring me the red cup").with_timing("emulated_ms", 0.25)
    assert result.timings_ms["emulated_ms"] == 0.25
    assert "emulated_ms" in result.to_json_dict()["timings_ms"]


def test_result_timings_cannot_be_changed_in_place():
    with pytest.raises(TypeError):
        ask("bring me the red cup").timings_ms["host_total_ms"] = 0.0


def test_whitespace_is_folded_before_the_model_sees_it():
    model = FixedTextModel()
    result = ask("  bring me\tthe red cup\n", model)
    assert model.calls == ["bring me the red cup"]
    assert result.utterance == "bring me the red cup"


# -- rejections ----------------------------------------------------------------------------------


def test_unparseable_model_output_is_rejected_with_the_parser_reason():
    result = ask("bring me the red cup", FixedTextModel("navigate(obj:cup_1); fly(obj:cup_1)"))
    assert result.status is PlanStatus.REJECTED
    assert result.plan == "" and result.steps == ()
    assert "unknown action 'fly'" in result.reasons[0]
    assert result.tokens == 12  # the model did run


def test_plan_failing_verification_is_rejected_with_spoken_reasons():
    result = ask("bring me the stapler", FixedTextModel("navigate(obj:stapler_1); pick(obj:stapler_1)"))
    assert result.status is PlanStatus.REJECTED
    assert result.plan == "navigate(obj:stapler_1); pick(obj:stapler_1)"  # kept for the log
    assert result.reasons == ("I can't see stapler 1.",)


def test_stale_scene_is_rejected():
    result = ask("bring me the red cup", now_s=NOW_S + 10.0)
    assert result.status is PlanStatus.REJECTED
    assert "seconds old" in result.reasons[0]


def test_model_crash_is_a_rejection_not_an_exception():
    result = ask("bring me the red cup", FailingModel())
    assert result.status is PlanStatus.REJECTED
    assert "RuntimeError: onnxruntime: bad input shape" in result.reasons[0]


@pytest.mark.parametrize(
    "utterance, fragment",
    [
        ("", "didn't hear anything"),
        ("   \t ", "didn't hear anything"),
        ("x" * (MAX_UTTERANCE_CHARS + 1), "1001 characters"),
        ("bring me\x00 the cup", "control characters"),
        ("bring me the cup\x1b[2J", "control characters"),
        (None, "must be text"),
        (b"bring me the cup", "must be text"),
    ],
)
def test_bad_utterances_are_rejected_without_calling_the_model(utterance, fragment):
    model = FixedTextModel()
    result = ask(utterance, model)
    assert result.status is PlanStatus.REJECTED
    assert fragment in result.reasons[0]
    assert model.calls == []
    assert len(result.utterance) <= MAX_UTTERANCE_CHARS
    json.dumps(result.to_json_dict())


def test_utterance_at_the_length_limit_is_accepted():
    assert utterance_problem("x" * MAX_UTTERANCE_CHARS) == ""


def test_control_characters_are_shown_escaped_in_the_result():
    assert ask("a\x00b").utterance == "a\\x00b"


# -- clarify and stop ----------------------------------------------------------------------------


def test_clarify_plan_is_status_clarify_with_the_question_as_reason():
    result = ask("bring me the cup", FixedTextModel("clarify(ambiguous:cup)"))
    assert result.status is PlanStatus.CLARIFY
    assert result.plan == "clarify(ambiguous:cup)"
    assert result.reasons == ("I see two cups — which one do you mean?",)


def test_clarify_is_fine_even_on_a_stale_scene():
    result = ask("bring me a stapler", FixedTextModel("clarify(not_found:stapler)"), now_s=NOW_S + 100)
    assert (result.status, result.reasons) == (PlanStatus.CLARIFY, ("I can't see a stapler.",))


@pytest.mark.parametrize("utterance", ["stop", "STOP!!", "wait stop!", "emergency stop"])
def test_stop_utterances_skip_the_model(utterance):
    model = FixedTextModel("navigate(obj:cup_1)")
    result = ask(utterance, model)
    assert model.calls == []
    assert (result.status, result.plan, result.steps) == (PlanStatus.OK, "stop()", (Stop(),))
    assert (result.tokens, result.timings_ms["prefill_ms"], result.timings_ms["decode_ms"]) == (0, 0.0, 0.0)


def test_stop_works_even_when_perception_is_stale():
    assert ask("halt", now_s=NOW_S + 1000).status is PlanStatus.OK


def test_dont_stop_goes_to_the_model():
    model = FixedTextModel("clarify(unsupported)")
    assert ask("don't stop", model).status is PlanStatus.CLARIFY
    assert model.calls == ["don't stop"]


# -- stop detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "utterance",
    [
        "stop",
        "halt",
        "freeze",
        "stop now",
        "emergency stop",
        "wait stop!",
        "STOP!!",
        "please stop",
        "Stop.",
        "abort",
        "cancel that",
        "no, stop!",
        "stop the robot",
        "stop moving",
        "stop following me",
        "e-stop",
        "hey robot, stop it right now",
        "stop stop stop stop stop stop stop stop",
    ],
)
def test_stop_commands(utterance):
    assert is_stop_command(utterance)


@pytest.mark.parametrize(
    "utterance",
    [
        "don't stop",
        "don\u2019t stop",
        "do not stop",
        "never stop",
        "bring me the stop sign",
        "the stop sign",
        "go to the bus stop",
        "stop by the kitchen and get my cup",
        "wait",
        "wait 5 seconds",
        "",
        "   ",
        "!!!",
        "stopwatch",
        "cancel my appointment",
    ],
)
def test_not_stop_commands(utterance):
    assert not is_stop_command(utterance)


def test_stop_detection_of_non_text_is_false():
    assert not is_stop_command(None)
