"""Emulator data: target shapes and parameter counts, hardware profiles, and bad YAML giving clear errors."""

import json

import pytest
import yaml

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.hardware import load_hardware, pick
from wafer_reasoner.emulator.targets import load_targets, planner_target, with_precision
from wafer_reasoner.runtime.resources import SOURCE_CONFIG

PLANNER_GENAI_CONFIG = {  # the layout training/export.py genai_config() writes for the default PlannerConfig
    "model": {
        "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "context_length": 256, "type": "gpt2",
        "vocab_size": 320,
        "decoder": {"head_size": 32, "hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 4,
                    "num_hidden_layers": 4},
    },
    "wafer_reasoner": {"planner_config": {"vocab_size": 320, "context_length": 256, "hidden_size": 128,
                                          "num_layers": 4, "num_heads": 4, "ffn_size": 512, "dropout": 0.0}},
}


def write_planner_config(folder, config=PLANNER_GENAI_CONFIG):
    (folder / "genai_config.json").write_text(json.dumps(config))
    return folder


# -- targets ------------------------------------------------------------------------------------------------------
def test_llama_8b_parameter_count_matches_hugging_face_exactly(targets):
    model = targets["Llama-3.1-8B"]
    # hand count: 32 x (attention 41,943,040 + MLP 176,160,768 + norms 8,192) + 2 x 525,336,576 + 4,096
    assert model.layer_params == 41_943_040 + 176_160_768 + 8_192
    assert model.total_params == 8_030_261_248
    assert model.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2  # 131,072 B per token at 16 bits


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Mixtral-8x7B",
                                  "Llama-2-13B", "Llama-3.2-1B"])
def test_every_preset_matches_its_published_total_within_one_percent(targets, name):
    model = targets[name]
    assert model.published_params > 0 and model.source
    assert model.total_params == pytest.approx(model.published_params, rel=0.01)


def test_mixture_of_experts_counts_active_parameters(targets):
    mixtral = targets["Mixtral-8x7B"]
    assert mixtral.active_params == pytest.approx(12.9e9, rel=0.01)
    assert mixtral.total_params == pytest.approx(46.7e9, rel=0.01)
    # one token reads only its 2 experts; a long prompt touches nearly all 8
    one, many = mixtral.read_params(1), mixtral.read_params(512)
    assert one == mixtral.active_params - mixtral.embedding_params
    assert many == pytest.approx(mixtral.total_params - mixtral.embedding_params, rel=1e-3)


def test_work_formulas_on_a_hand_sized_model(targets):
    model = targets["Llama-3.1-8B"]
    assert model.matmul_flops(3) == 2.0 * 3 * (32 * model.active_layer_params + 128_256 * 4096)
    # 2 queries after 10 cached keys see 11 + 12 keys: 4 x layers x heads x head_size x 23
    assert model.attention_flops(2, 10) == 4.0 * 32 * 32 * 128 * 23


def test_planner_target_is_read_from_genai_config(tmp_path):
    planner = planner_target(write_planner_config(tmp_path))
    assert (planner.name, planner.architecture, planner.layers, planner.hidden_size) == ("planner", "gpt2", 4, 128)
    assert (planner.ffn_size, planner.vocab_size, planner.context_tokens, planner.bytes_per_param) == (512, 320, 256, 4)
    # hand count (gpt2, tied embeddings): per layer 4h^2 + 2hf + biases (3h + h + f + h) + norms 4h = 198,272;
    # embeddings (320 + 256 positions) x 128 = 73,728; final LayerNorm 256
    assert planner.layer_params == 198_272
    assert planner.total_params == 4 * 198_272 + 73_728 + 256


def test_planner_target_without_ffn_size_assumes_four_times_hidden(tmp_path):
    config = {"model": PLANNER_GENAI_CONFIG["model"]}
    assert planner_target(write_planner_config(tmp_path, config)).ffn_size == 4 * 128


@pytest.mark.skipif(not (SOURCE_CONFIG.parent / "wafer_reasoner" / "models" / "genai_config.json").is_file(),
                    reason="the shipped model is absent (run `make train`)")
def test_shipped_planner_layout_matches_its_config():
    config = json.loads((SOURCE_CONFIG.parent / "wafer_reasoner" / "models" / "genai_config.json").read_text())
    planner = planner_target(SOURCE_CONFIG.parent / "wafer_reasoner" / "models")
    decoder = config["model"]["decoder"]
    assert (planner.layers, planner.hidden_size, planner.heads) == (
        decoder["num_hidden_layers"], decoder["hidden_size"], decoder["num_attention_heads"])
    assert planner.vocab_size == config["model"]["vocab_size"] and planner.bytes_per_param == 4


def test_planner_target_missing_file_says_how_to_make_it(tmp_path):
    with pytest.raises(EmulatorDataError, match="genai_config.json.*make train"):
        planner_target(tmp_path)


def test_with_precision_changes_bytes_only(targets):
    fp8 = with_precision(targets["Llama-3.1-70B"], 1)
    assert fp8.weight_bytes == pytest.approx(targets["Llama-3.1-70B"].weight_bytes / 2)
    assert fp8.total_params == targets["Llama-3.1-70B"].total_params
    with pytest.raises(EmulatorDataError):
        with_precision(fp8, -1)


# -- hardware -----------------------------------------------------------------------------------------------------
def test_shipped_profiles_load_with_a_source_for_every_figure(profiles):
    assert {"WSE-2", "WSE-3", "A100", "H100", "H200", "B200", "host"} <= set(profiles)
    for profile in profiles.values():
        sources = dict(profile.sources)
        numbers = [name for name, value in vars(profile).items()
                   if isinstance(value, (int, float)) and not isinstance(value, bool)]
        assert numbers and all(name in sources for name in numbers), profile.name


def test_wafer_derived_per_core_figures(profiles):
    wse2 = profiles["WSE-2"]
    assert wse2.sram_bytes_per_s_per_core == pytest.approx(20e15 / 850_000)
    assert wse2.flops_per_s_per_core == pytest.approx(7.5e15 / 850_000)
    assert wse2.fabric_link_bytes_per_s == pytest.approx(220e15 / 8 / 850_000 / 8)  # ~4 GB/s = 32 bit x 1.1 GHz
    assert wse2.usable_bytes_per_core == pytest.approx(49152 * 0.85)


def test_calibrated_constants_reach_every_profile_of_the_kind_but_not_the_host(profiles):
    assert profiles["WSE-2"].fabric_hop_latency_s == profiles["WSE-3"].fabric_hop_latency_s > 0
    assert profiles["A100"].memory_efficiency == profiles["B200"].memory_efficiency < 1
    assert profiles["host"].memory_efficiency == 1.0


def _hardware_file(tmp_path, mutate):
    data = yaml.safe_load(open(SOURCE_CONFIG / "hardware.yaml", encoding="utf-8"))
    mutate(data)
    path = tmp_path / "hardware.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["profiles"]["H100"].pop("memory_bytes_per_s"), "H100.*missing field 'memory_bytes_per_s'"),
    (lambda d: d["profiles"]["H100"].update(memory_bytes_per_s=-3.35e12), "memory_bytes_per_s.*must be > 0"),
    (lambda d: d["profiles"]["WSE-3"].update(sram_usable_fraction=1.5), "sram_usable_fraction.*\\(0, 1\\]"),
    (lambda d: d["profiles"]["WSE-3"].update(cores="many"), "cores.*expected a number"),
    (lambda d: d["profiles"]["WSE-3"].update(sram_bytes=1), "unknown field.*sram_bytes"),
    (lambda d: d["profiles"]["WSE-3"]["sources"].pop("cores"), "no source given for cores"),
    (lambda d: d["profiles"]["A100"].update(kind="tpu"), "'kind' must be one of"),
    (lambda d: d["profiles"]["WSE-2"].update(fabric_rows=10_000), "exceeds cores"),
])
def test_bad_hardware_yaml_gives_a_clear_error(tmp_path, mutate, message):
    with pytest.raises(EmulatorDataError, match=message):
        load_hardware(_hardware_file(tmp_path, mutate))


def test_unknown_profile_name_lists_the_known_ones(profiles):
    with pytest.raises(EmulatorDataError, match="unknown hardware profile 'TPU-v5'.*WSE-3"):
        pick(profiles, "TPU-v5")


def test_bad_target_yaml_gives_a_clear_error(tmp_path):
    data = yaml.safe_load(open(SOURCE_CONFIG / "target_models.yaml", encoding="utf-8"))
    del data["models"]["Llama-3.1-8B"]["kv_heads"]
    path = tmp_path / "targets.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(EmulatorDataError, match="Llama-3.1-8B.*missing field 'kv_heads'"):
        load_targets(path)
    data["models"]["Llama-3.1-8B"]["kv_heads"] = 5  # 32 heads do not split into 5 groups
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(EmulatorDataError, match="multiple of kv_heads"):
        load_targets(path)


def test_missing_or_empty_files_are_reported(tmp_path):
    with pytest.raises(EmulatorDataError, match="cannot read"):
        load_hardware(tmp_path / "absent.yaml")
    empty = tmp_path / "empty.yaml"
    empty.write_text("profiles: {}\n")
    with pytest.raises(EmulatorDataError, match="non-empty 'profiles'"):
        load_hardware(empty)
