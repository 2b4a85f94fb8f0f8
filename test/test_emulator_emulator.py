"""The Emulator object (plan_time) and choosing the triple from config/emulator.yaml."""

import json

import pytest
import yaml

from wafer_reasoner.emulator import (
    EmulatorDataError,
    SpeculativeSettings,
    known_targets,
    select,
)
from wafer_reasoner.emulator.datafiles import read_yaml
from wafer_reasoner.emulator.placement import PlacementOptions
from wafer_reasoner.runtime.emulation import emulator_for
from wafer_reasoner.runtime.resources import SOURCE_CONFIG

PLANNER_GENAI_CONFIG = {  # genai_config.json as training/export.py writes it (no ffn_size: 4 x hidden)
    "model": {"context_length": 256, "vocab_size": 320,
              "decoder": {"head_size": 32, "hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 4,
                          "num_hidden_layers": 4}},
}


@pytest.fixture
def planner_dir(tmp_path):
    (tmp_path / "genai_config.json").write_text(json.dumps(PLANNER_GENAI_CONFIG))
    return tmp_path


def test_plan_time_is_serving_prefill_and_decode_steps(emulator_on, targets):
    emulator = emulator_on(targets["Llama-3.1-8B"], "WSE-3")
    timing = emulator.plan_time(prompt_tokens=100, generated_tokens=21)
    assert timing.prefill_s == pytest.approx(emulator.forward(100, 0).seconds)
    # 20 decode steps after the prefill's token, at the mean context 100 + 19 / 2
    assert timing.per_token_s == pytest.approx(emulator.forward(1, 109.5).seconds)
    assert timing.decode_s == pytest.approx(20 * timing.per_token_s)
    assert timing.serving_s == emulator.stack.serving_overhead_s > 0  # a production service: an API in the path
    assert timing.total_s == pytest.approx(timing.serving_s + timing.prefill_s + timing.decode_s)
    assert timing.first_token_s == pytest.approx(timing.serving_s + timing.prefill_s)
    assert timing.emulated_ms == pytest.approx(timing.total_s * 1000)
    assert (timing.bound, timing.devices, timing.speculative, timing.tokens_per_step) == (
        "fabric-latency", 1, False, 1.0)
    local = emulator_on(targets["Llama-3.1-8B"], "WSE-3", serving=False).plan_time(100, 21)
    assert local.serving_s == 0.0 and local.total_s == pytest.approx(timing.total_s - timing.serving_s)


def test_reasoning_tokens_are_decoded_before_the_plan(emulator_on, targets):
    emulator = emulator_on(targets["Llama-3.1-70B"], "H200", serving=False)
    plain = emulator.plan_time(100, 21)
    thinking = emulator.plan_time(100, 21, reasoning_tokens=1000)
    # 1020 decode steps at the mean context 100 + 1019 / 2 instead of 20 at 100 + 19 / 2
    assert thinking.decode_s == pytest.approx(1020 * emulator.decode_step(100 + 1019 / 2)[0])
    assert thinking.prefill_s == plain.prefill_s and thinking.reasoning_tokens == 1000
    assert thinking.total_s > 40 * plain.total_s
    with pytest.raises(ValueError, match="reasoning_tokens"):
        emulator.plan_time(100, 21, reasoning_tokens=-1)


def test_same_inputs_give_the_same_times(emulator_on, targets):
    first = emulator_on(targets["Llama-3.1-70B"], "H100").plan_time(300, 40)
    second = emulator_on(targets["Llama-3.1-70B"], "H100").plan_time(300, 40)
    assert first == second
    assert first.to_dict() == second.to_dict()


def test_longer_answers_and_bigger_models_take_longer(emulator_on, targets):
    emulator = emulator_on(targets["Llama-3.1-8B"], "H200")
    assert emulator.plan_time(100, 50).total_s > emulator.plan_time(100, 10).total_s
    assert emulator.plan_time(1000, 10).prefill_s > emulator.plan_time(100, 10).prefill_s
    bigger = emulator_on(targets["Llama-3.1-405B"], "H200").plan_time(100, 10)
    assert bigger.total_s > emulator.plan_time(100, 10).total_s


def test_nothing_generated_costs_only_the_prefill(emulator_on, targets):
    timing = emulator_on(targets["Llama-3.1-8B"], "A100").plan_time(64, 0)
    assert timing.decode_s == 0.0 and timing.total_s == timing.prefill_s > 0
    one = emulator_on(targets["Llama-3.1-8B"], "A100").plan_time(64, 1)
    assert one.decode_s == 0.0 and one.total_s == timing.total_s


def test_bad_token_counts_are_refused(emulator_on, targets):
    emulator = emulator_on(targets["Llama-3.1-8B"], "A100")
    for prompt, generated in ((-1, 5), (5, -2), (1.5, 2), (True, 2)):
        with pytest.raises(ValueError, match="whole number"):
            emulator.plan_time(prompt, generated)


def test_speculative_decoding_by_the_formula(emulator_on, targets):
    target, draft = targets["Llama-3.1-8B"], targets["Llama-3.2-1B"]
    plain = emulator_on(target, "H200").plan_time(100, 65)
    settings = SpeculativeSettings(draft=draft, draft_tokens=4, acceptance_rate=0.8)
    fast = emulator_on(target, "H200", speculative=settings).plan_time(100, 65)
    assert fast.speculative and not plain.speculative
    assert fast.tokens_per_step == pytest.approx((1 - 0.8**5) / 0.2)  # 3.3616
    assert fast.decode_s < plain.decode_s
    never = SpeculativeSettings(draft=draft, draft_tokens=4, acceptance_rate=0.0)
    assert emulator_on(target, "H200", speculative=never).plan_time(100, 65).decode_s > plain.decode_s


def test_speculative_decoding_on_a_wafer_runs_the_draft_on_its_own_system(emulator_on, targets):
    settings = SpeculativeSettings(draft=targets["Llama-3.2-1B"], draft_tokens=4, acceptance_rate=0.8)
    emulator = emulator_on(targets["Llama-3.1-70B"], "WSE-3", "cerebras-2025-h1", speculative=settings)
    assert emulator.draft_placement.systems == 1 and emulator.placement.systems == 4
    plain = emulator_on(targets["Llama-3.1-70B"], "WSE-3", "cerebras-2025-h1", speculative=None)
    assert emulator.decode_step(1024)[0] < plain.decode_step(1024)[0]


def test_speculative_settings_are_checked(targets, emulator_on):
    with pytest.raises(EmulatorDataError, match="acceptance_rate"):
        SpeculativeSettings(draft=targets["Llama-3.2-1B"], acceptance_rate=1.5)
    with pytest.raises(EmulatorDataError, match="draft_tokens"):
        SpeculativeSettings(draft=targets["Llama-3.2-1B"], draft_tokens=0)
    mixtral_draft = SpeculativeSettings(draft=targets["Mixtral-8x7B"])
    with pytest.raises(EmulatorDataError, match="share a vocabulary"):
        emulator_on(targets["Llama-3.1-70B"], "H200", speculative=mixtral_draft)


def test_select_picks_the_named_triple(profiles, stacks, targets):
    settings = {"target_model": "Llama-3.1-8B", "hardware": "H100", "bytes_per_param": 1,
                "placement": {"tensor_parallel": 8}, "speculative": {"enabled": False}}
    target, hardware, stack, speculative, options = select(settings, profiles, stacks, targets)
    assert (target.name, target.bytes_per_param, hardware.name, speculative) == ("Llama-3.1-8B", 1.0, "H100", None)
    assert stack.name == stacks[1]["H100"] and options == PlacementOptions(tensor_parallel=8)
    settings["speculative"] = {"enabled": True, "draft_model": "Llama-3.2-1B", "draft_tokens": 3,
                               "acceptance_rate": 0.7}
    _, _, _, speculative, _ = select(settings, profiles, stacks, targets)
    assert (speculative.draft.name, speculative.draft.bytes_per_param) == ("Llama-3.2-1B", 1.0)
    assert (speculative.draft_tokens, speculative.acceptance_rate) == (3, 0.7)


def test_the_stack_speculates_where_its_data_says_and_sets_its_precision(profiles, stacks, targets):
    settings = {"target_model": "Llama-4-Maverick", "hardware": "B200"}
    target, _, stack, speculative, _ = select(settings, profiles, stacks, targets)
    assert stack.name == "tensorrt-llm-2025-05" and target.bytes_per_param == 1.0  # the stack serves FP8
    assert (speculative.draft.name, speculative.draft_tokens) == ("Llama-4-Maverick-Eagle3", 3)
    assert speculative.acceptance_rate == stack.acceptance_rate
    off = select({**settings, "speculative": {"stack": False}}, profiles, stacks, targets)[3]
    assert off is None
    plain = select({**settings, "target_model": "Qwen3-32B"}, profiles, stacks, targets)[3]
    assert plain is None  # the stack's data names no speculation for that target


@pytest.mark.parametrize("change, message", [
    ({"hardware": "TPU"}, "unknown hardware profile 'TPU'.*known: A100"),
    ({"target_model": "GPT-5"}, "unknown target model 'GPT-5'"),
    ({"target_model": "planner"}, "genai_config.json"),
    ({"hardware": None}, "'hardware' must name"),
    ({"speed": 3}, "unknown field.*speed"),
    ({"speculative": {"enabled": True, "draft_model": "Llama-3.2-1B", "draft_tokens": 4}}, "needs 'acceptance_rate'"),
    ({"placement": {"grid": "full", "tp": 2}}, "unknown placement field.*tp"),
    ({"placement": {"tensor_parallel": 0}}, "tensor_parallel.*>= 1"),
    ({"speculative": {"enabled": "yes"}}, "true or false"),
    ({"stack": "tensorrt-llm-2025-05"}, "runs on B200, not on 'WSE-3'"),
    ({"stack": 3}, "'stack' must name a stack"),
])
def test_select_errors_are_clear(profiles, stacks, targets, change, message):
    settings = {"target_model": "Llama-3.1-8B", "hardware": "WSE-3", **change}
    with pytest.raises(EmulatorDataError, match=message):
        select(settings, profiles, stacks, targets)


def test_shipped_config_names_a_valid_triple(planner_dir):
    settings = read_yaml(SOURCE_CONFIG / "emulator.yaml")
    assert set(settings["speculative"]) == {"enabled", "stack", "draft_model", "draft_tokens", "acceptance_rate"}
    emulator = emulator_for(planner_dir=planner_dir)
    assert (emulator.target.name, emulator.hardware.name) == (settings["target_model"], settings["hardware"])
    assert emulator.stack.name == read_yaml(SOURCE_CONFIG / "stacks.yaml")["defaults"][settings["hardware"]]
    timing = emulator.plan_time(120, 30)
    assert timing.total_s > 0
    # the engine next to the robot: the service's API path is charged only when asked (serving_overhead: true)
    assert settings["serving_overhead"] is False and timing.serving_s == 0.0 < emulator.stack.serving_overhead_s
    other = emulator_for("Llama-3.1-70B", "H200", planner_dir=planner_dir)  # another hardware: its default stack
    assert other.stack.name == "tensorrt-llm-2024-12"


def test_config_file_with_speculation_and_an_extra_hardware_file(tmp_path, planner_dir):
    extra = tmp_path / "host.yaml"
    host = read_yaml(SOURCE_CONFIG / "hardware.yaml")["profiles"]["host"]
    stack = {**read_yaml(SOURCE_CONFIG / "stacks.yaml")["stacks"]["host"], "hardware": ["bench-host"]}
    extra.write_text(yaml.safe_dump({"profiles": {"bench-host": host}, "stacks": {"bench-host": stack},
                                     "defaults": {"bench-host": "bench-host"}}))
    config = tmp_path / "emulator.yaml"
    config.write_text(yaml.safe_dump({
        "target_model": "Llama-3.1-8B", "hardware": "bench-host", "hardware_files": [str(extra)],
        "speculative": {"enabled": True, "draft_model": "Llama-3.2-1B", "draft_tokens": 4, "acceptance_rate": 0.6},
    }))
    emulator = emulator_for(settings_path=config, planner_dir=planner_dir)
    assert emulator.hardware.name == "bench-host" and emulator.speculative.acceptance_rate == 0.6
    assert emulator.stack.name == "bench-host"
    assert "planner" in known_targets(SOURCE_CONFIG / "target_models.yaml", planner_dir)
