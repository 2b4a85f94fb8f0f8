"""The Emulator object (plan_time) and choosing the pair from config/emulator.yaml."""

import json

import pytest
import yaml

from wafer_reasoner.emulator import (
    Emulator,
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


def test_plan_time_is_prefill_plus_decode_steps(profiles, targets):
    emulator = Emulator(targets["Llama-3.1-8B"], profiles["WSE-3"])
    timing = emulator.plan_time(prompt_tokens=100, generated_tokens=21)
    assert timing.prefill_s == pytest.approx(emulator.forward(100, 0).seconds)
    # 20 decode steps after the prefill's token, at the mean context 100 + 19 / 2
    assert timing.per_token_s == pytest.approx(emulator.forward(1, 109.5).seconds)
    assert timing.decode_s == pytest.approx(20 * timing.per_token_s)
    assert timing.total_s == pytest.approx(timing.prefill_s + timing.decode_s)
    assert timing.emulated_ms == pytest.approx(timing.total_s * 1000)
    assert (timing.bound, timing.devices, timing.speculative, timing.tokens_per_step) == (
        "fabric-latency", 1, False, 1.0)


def test_same_inputs_give_the_same_times(profiles, targets):
    first = Emulator(targets["Llama-3.1-70B"], profiles["H100"]).plan_time(300, 40)
    second = Emulator(targets["Llama-3.1-70B"], profiles["H100"]).plan_time(300, 40)
    assert first == second
    assert first.to_dict() == second.to_dict()


def test_longer_answers_and_bigger_models_take_longer(profiles, targets):
    emulator = Emulator(targets["Llama-3.1-8B"], profiles["H200"])
    assert emulator.plan_time(100, 50).total_s > emulator.plan_time(100, 10).total_s
    assert emulator.plan_time(1000, 10).prefill_s > emulator.plan_time(100, 10).prefill_s
    bigger = Emulator(targets["Llama-3.1-70B"], profiles["H200"]).plan_time(100, 10)
    assert bigger.total_s > emulator.plan_time(100, 10).total_s


def test_nothing_generated_costs_only_the_prefill(profiles, targets):
    timing = Emulator(targets["Llama-3.1-8B"], profiles["A100"]).plan_time(64, 0)
    assert timing.decode_s == 0.0 and timing.total_s == timing.prefill_s > 0
    one = Emulator(targets["Llama-3.1-8B"], profiles["A100"]).plan_time(64, 1)
    assert one.decode_s == 0.0 and one.total_s == timing.total_s


def test_bad_token_counts_are_refused(profiles, targets):
    emulator = Emulator(targets["Llama-3.1-8B"], profiles["A100"])
    for prompt, generated in ((-1, 5), (5, -2), (1.5, 2), (True, 2)):
        with pytest.raises(ValueError, match="whole number"):
            emulator.plan_time(prompt, generated)


def test_speculative_decoding_only_when_asked_and_by_the_formula(profiles, targets):
    target, draft = targets["Llama-3.1-70B"], targets["Llama-3.2-1B"]
    plain = Emulator(target, profiles["H200"]).plan_time(100, 65)
    settings = SpeculativeSettings(draft=draft, draft_tokens=4, acceptance_rate=0.8)
    fast = Emulator(target, profiles["H200"], speculative=settings).plan_time(100, 65)
    assert fast.speculative and not plain.speculative
    assert fast.tokens_per_step == pytest.approx((1 - 0.8**5) / 0.2)  # 3.3616
    assert fast.decode_s < plain.decode_s
    never = SpeculativeSettings(draft=draft, draft_tokens=4, acceptance_rate=0.0)
    assert Emulator(target, profiles["H200"], speculative=never).plan_time(100, 65).decode_s > plain.decode_s


def test_speculative_settings_are_checked(targets, profiles):
    with pytest.raises(EmulatorDataError, match="acceptance_rate"):
        SpeculativeSettings(draft=targets["Llama-3.2-1B"], acceptance_rate=1.5)
    with pytest.raises(EmulatorDataError, match="draft_tokens"):
        SpeculativeSettings(draft=targets["Llama-3.2-1B"], draft_tokens=0)
    mixtral_draft = SpeculativeSettings(draft=targets["Mixtral-8x7B"])
    with pytest.raises(EmulatorDataError, match="share a vocabulary"):
        Emulator(targets["Llama-3.1-70B"], profiles["H200"], speculative=mixtral_draft)


def test_select_picks_the_named_pair(profiles, targets):
    settings = {"target_model": "Llama-3.1-70B", "hardware": "H100", "bytes_per_param": 1,
                "placement": {"tensor_parallel": 8}, "speculative": {"enabled": False}}
    target, hardware, speculative, options = select(settings, profiles, targets)
    assert (target.name, target.bytes_per_param, hardware.name, speculative) == ("Llama-3.1-70B", 1.0, "H100", None)
    assert options == PlacementOptions(tensor_parallel=8)
    settings["speculative"] = {"enabled": True, "draft_model": "Llama-3.2-1B", "draft_tokens": 3,
                               "acceptance_rate": 0.7}
    _, _, speculative, _ = select(settings, profiles, targets)
    assert (speculative.draft.name, speculative.draft.bytes_per_param) == ("Llama-3.2-1B", 1.0)
    assert (speculative.draft_tokens, speculative.acceptance_rate) == (3, 0.7)


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
])
def test_select_errors_are_clear(profiles, targets, change, message):
    settings = {"target_model": "Llama-3.1-8B", "hardware": "WSE-3", **change}
    with pytest.raises(EmulatorDataError, match=message):
        select(settings, profiles, targets)


def test_shipped_config_names_a_valid_pair(planner_dir):
    settings = read_yaml(SOURCE_CONFIG / "emulator.yaml")
    assert set(settings["speculative"]) == {"enabled", "draft_model", "draft_tokens", "acceptance_rate"}
    emulator = emulator_for(planner_dir=planner_dir)
    assert (emulator.target.name, emulator.hardware.name) == (settings["target_model"], settings["hardware"])
    assert emulator.plan_time(120, 30).total_s > 0


def test_config_file_with_speculation_and_an_extra_hardware_file(tmp_path, planner_dir):
    extra = tmp_path / "host.yaml"
    host = read_yaml(SOURCE_CONFIG / "hardware.yaml")["profiles"]["host"]
    extra.write_text(yaml.safe_dump({"profiles": {"bench-host": host}}))
    config = tmp_path / "emulator.yaml"
    config.write_text(yaml.safe_dump({
        "target_model": "Llama-3.1-8B", "hardware": "bench-host", "hardware_files": [str(extra)],
        "speculative": {"enabled": True, "draft_model": "Llama-3.2-1B", "draft_tokens": 4, "acceptance_rate": 0.6},
    }))
    emulator = emulator_for(settings_path=config, planner_dir=planner_dir)
    assert emulator.hardware.name == "bench-host" and emulator.speculative.acceptance_rate == 0.6
    assert "planner" in known_targets(SOURCE_CONFIG / "target_models.yaml", planner_dir)
