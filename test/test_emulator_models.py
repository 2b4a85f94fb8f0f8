"""Emulator data: target shapes and parameter counts, hardware profiles, and bad YAML giving clear errors."""

import json

import pytest
import yaml

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.hardware import load_hardware, pick
from wafer_reasoner.emulator.targets import load_targets, planner_target, with_group_precision, with_precision
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


def test_every_preset_matches_its_published_total_within_one_percent(targets):
    checked = 0
    for name, model in targets.items():
        assert model.source, name
        if model.published_params:
            assert model.total_params == pytest.approx(model.published_params, rel=0.01), name
            checked += 1
    assert checked >= len(targets) - 1  # every preset but the EAGLE-3 draft head (no published total)


@pytest.mark.parametrize("name, active", [("Mixtral-8x7B", 12.9e9), ("Qwen3-235B-A22B", 22.0e9),
                                          ("Llama-4-Maverick", 17.0e9)])
def test_mixtures_of_experts_match_their_published_active_counts(targets, name, active):
    model = targets[name]
    assert model.published_active_params == active
    assert model.active_params == pytest.approx(active, rel=0.02)


def test_maverick_alternates_dense_and_expert_layers(targets):
    maverick = targets["Llama-4-Maverick"]
    assert (maverick.moe_layers, maverick.dense_mlp_layers) == (24, 24)
    groups = maverick.group_params()
    # 24 MoE layers x 128 routed experts of 3 x 5120 x 8192; 24 dense MLPs 16384 wide + 24 shared experts
    assert groups["experts"] == 24 * 128 * 3 * 5120 * 8192
    assert groups["mlp"] == 24 * 3 * 5120 * 16384 + 24 * 3 * 5120 * 8192


def test_precision_per_group_weighs_each_group(targets):
    oss = targets["gpt-oss-120b"]
    groups = oss.group_params()
    assert oss.group_bytes("experts") == 0.53125 and oss.group_bytes("attention") == 2
    assert oss.weight_bytes == pytest.approx(groups["experts"] * 0.53125
                                             + (groups["attention"] + groups["mlp"] + groups["embeddings"]) * 2)
    assert oss.weight_bytes < 0.3 * oss.total_params * 2  # 4-bit experts: under a third of the 16-bit size
    fp8 = with_group_precision(oss, {"default": 1, "kv_cache": 2})
    assert fp8.group_bytes("experts") == 1 and fp8.group_bytes("kv_cache") == 2 and fp8.bytes_per_param == 1
    with pytest.raises(EmulatorDataError, match="unknown precision group"):
        with_group_precision(oss, {"router": 1})


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


def test_calibrated_physics_reaches_every_wafer(profiles):
    assert profiles["WSE-2"].fabric_hop_latency_s == profiles["WSE-3"].fabric_hop_latency_s > 0
    for profile in profiles.values():  # software constants live with the stacks, not the hardware
        assert not hasattr(profile, "memory_efficiency") and not hasattr(profile, "routing_stage_latency_s")


def _config_copy(tmp_path, name, mutate):
    """config/``name`` copied to tmp_path with ``mutate`` applied to its data."""
    data = yaml.safe_load(open(SOURCE_CONFIG / name, encoding="utf-8"))
    mutate(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def _hardware_file(tmp_path, mutate):
    return _config_copy(tmp_path, "hardware.yaml", mutate)


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


# -- serving stacks -----------------------------------------------------------------------------------------------
def test_every_stack_loads_with_a_source_for_each_software_constant(stacks, profiles):
    named, defaults = stacks
    assert set(defaults) == set(profiles)  # every hardware has a default stack
    for name, stack in named.items():
        sources = dict(stack.sources)
        assert stack.date[:4].isdigit() and stack.source, name
        for constant in stack.constants():
            assert constant in sources, f"{name}.{constant}"
        assert set(stack.hardware) <= set(profiles), name
        for entry in stack.speculative:
            assert entry.draft_tokens >= 1 and entry.target and entry.draft_model


def test_stack_for_picks_the_default_or_checks_the_named_one(stacks, profiles):
    from wafer_reasoner.emulator.stacks import stack_for

    assert stack_for(*stacks, profiles["WSE-3"]).name == stacks[1]["WSE-3"]
    assert stack_for(*stacks, profiles["H200"], "sglang-2025").name == "sglang-2025"
    with pytest.raises(EmulatorDataError, match="runs on .*not on 'WSE-3'"):
        stack_for(*stacks, profiles["WSE-3"], "sglang-2025")
    with pytest.raises(EmulatorDataError, match="unknown stack 'vllm-9'"):
        stack_for(*stacks, profiles["H100"], "vllm-9")


def _stacks_file(tmp_path, mutate):
    return _config_copy(tmp_path, "stacks.yaml", mutate)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["stacks"]["sglang-2025"]["sources"].pop("memory_efficiency"), "no source given for memory_eff"),
    (lambda d: d["stacks"]["sglang-2025"].update(memory_efficiency=1.5), "memory_efficiency.*\\(0, 1\\]"),
    (lambda d: d["stacks"]["sglang-2025"].update(fitted=["routing_stage_latency_s"]), "'fitted' names"),
    (lambda d: d["stacks"]["cerebras-2025-h2"].update(layout="spiral"), "layout must be one of"),
    (lambda d: d["stacks"]["sglang-2025"].update(kind="tpu"), "'kind' must be one of"),
    (lambda d: d["defaults"].update(A100="cerebras-2025-h2"), "does not list hardware 'A100'"),
    (lambda d: d["stacks"]["sglang-2025"].update(speculative={"Qwen3-8B": {"draft_model": "x"}}),
     "needs exactly draft_model and draft_tokens"),
])
def test_bad_stacks_yaml_gives_a_clear_error(tmp_path, mutate, message):
    from wafer_reasoner.emulator.stacks import load_stacks

    with pytest.raises(EmulatorDataError, match=message):
        load_stacks(_stacks_file(tmp_path, mutate))
