"""Placement and the cost formulas, each against a value computed by hand on small round numbers."""

import math

import pytest

from wafer_reasoner.emulator import wafer_timing
from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.hardware import DeviceProfile, WaferProfile
from wafer_reasoner.emulator.placement import PlacementOptions, place, placement_report
from wafer_reasoner.emulator.stacks import ServingStack
from wafer_reasoner.emulator.targets import TargetModel, with_precision
from wafer_reasoner.emulator.timing import (
    allreduce_seconds,
    expected_tokens_per_step,
    fabric_collectives,
    first_token_seconds,
    forward,
    gpu_kernels,
    speculative_step,
)
from wafer_reasoner.runtime.emulation import hardware_profiles, target_models

# A tiny llama: attention 2*4*4 + 2*4*2 = 48, MLP 3*4*8 = 96, norms 8 -> 152 per layer; embedding 40,
# LM head 40 + final norm 4; total 2*152 + 40 + 44 = 388 parameters.
TINY = TargetModel(name="tiny", architecture="llama", layers=2, hidden_size=4, heads=2, kv_heads=1, head_size=2,
                   ffn_size=8, vocab_size=10, context_tokens=4, bytes_per_param=2, tied_embeddings=False)
# 3 x 5 grid; per core: 100 FLOP/s, 1000 B/s SRAM, 64 B SRAM (all usable); fabric link 10 B/s one direction
WAFER = WaferProfile(name="w", kind="wafer", cores=15, fabric_rows=3, fabric_cols=5, sram_bytes_per_core=64,
                     sram_bytes_per_s_total=15_000, fabric_bits_per_s_total=9600, peak_flops_per_s_total=1500,
                     sram_usable_fraction=1.0, system_link_bytes_per_s=100, fabric_hop_latency_s=1e-3, source="test")
DEVICE = DeviceProfile(name="d", kind="gpu", memory_bytes=1000, memory_bytes_per_s=1000, peak_flops_per_s=2000,
                       devices_per_node=8, device_link_bytes_per_s=80, node_link_bytes_per_s=10,
                       node_link_latency_s=0.25, memory_usable_fraction=0.5, source="test")
GRID = ServingStack(name="g", kind="wafer", date="2025-01", source="test", hardware=("w",), layout="grid",
                    routing_stage_latency_s=1e-2, system_link_latency_s=0.5)
REGION = ServingStack(name="r", kind="wafer", date="2025-01", source="test", hardware=("w",), layout="region",
                      routing_stage_latency_s=1e-2, system_link_latency_s=0.5)
ENGINE = ServingStack(name="e", kind="gpu", date="2025-01", source="test", hardware=("d",), memory_efficiency=0.5,
                      kernel_overhead_s=0.01, allreduce_step_latency_s=0.1, compute_efficiency=0.5)


def test_tiny_model_counts():
    assert (TINY.layer_params, TINY.total_params, TINY.read_params(1)) == (152, 388, 348)
    assert TINY.matmul_flops(1) == 2 * (2 * 152 + 40)  # 688
    assert TINY.attention_flops(1, 3) == 4 * 2 * 2 * 2 * 4  # 128: one query over 3 cached keys + itself
    assert TINY.kv_bytes_per_token == 2 * 2 * 1 * 2 * 2  # 16
    assert fabric_collectives(TINY) == 2 * 10 + 3
    assert gpu_kernels(TINY) == 2 * 9 + 4
    assert gpu_kernels(TINY, fused_allreduce=True) == 2 * 7 + 4  # the two norms ride on the all-reduces


def test_fabric_terms_by_hand():
    assert wafer_timing.grid_hops(3, 5) == 6
    assert (wafer_timing.region_side(6), wafer_timing.region_side(9), wafer_timing.region_side(10)) == (3, 3, 4)
    assert wafer_timing.region_hops(6) == 4  # a 3 x 3 region: 2 hops along, 2 across
    assert wafer_timing.collective_latency_s(100, 8, 1e-3, 1e-2) == pytest.approx(0.1 + 0.08)
    assert wafer_timing.fabric_bandwidth_s(23, 8, 3, 10) == pytest.approx(23 * 8 / 30)
    assert wafer_timing.system_links_s(1, 0.5, 8, 100) == 0.0
    assert wafer_timing.system_links_s(3, 0.5, 8, 100) == pytest.approx(3 * (0.5 + 0.08))
    # tokens one layer apart through 80 layer regions: the last leaves 80 + n - 1 layer-steps after the first enters
    assert wafer_timing.pipeline_factor(1, 80) == 1.0
    assert wafer_timing.pipeline_factor(5, 80) == pytest.approx(84 / 80)
    assert wafer_timing.pipeline_factor(1000, 80) == pytest.approx(1079 / 80)


def test_wafer_grid_forward_by_hand():
    placement = place(TINY, WAFER, PlacementOptions(systems=1))
    cost = forward(TINY, WAFER, GRID, placement, tokens=1, past_tokens=3)
    assert cost.flops == 816 and cost.weight_bytes == 696 and cost.kv_bytes == 64
    assert cost.compute_s == pytest.approx(816 / (15 * 100))  # 0.544
    assert cost.memory_s == pytest.approx(760 / (15 * 1000))
    assert cost.hops == 23 * (2 + 4) and cost.routing_stages == 23 * 4
    hops, stages = 138 * 1e-3, 92 * 1e-2  # the hop latency overlaps the arithmetic; the relay stages do not
    bandwidth = 23 * (1 * 4 * 2) / (3 * 10)  # 23 collectives x 8-byte vector over the 3-link narrow side
    assert cost.fabric_s == pytest.approx(hops + stages + bandwidth)
    assert cost.link_s == 0.0
    assert cost.seconds == pytest.approx(max(0.544, hops) + stages + bandwidth)
    assert cost.bound == "fabric-bandwidth"


def test_wafer_region_forward_by_hand():
    """Each layer on its own region: 152 x 2 B + 32 B of KV = 336 B -> 6 cores (side 3); the LM head 80 B -> 2."""
    placement = place(TINY, WAFER, PlacementOptions(systems=1))
    assert (placement.dense_layer_cores, placement.head_cores) == (6, 2)
    cost = forward(TINY, WAFER, REGION, placement, tokens=1, past_tokens=3)
    # per core along the path: 2 layers x 2 x 152 / 6 + 2 x 40 / 2 (head) + 128 attention FLOPs / 6
    core_flops = 2 * 2 * 152 / 6 + 2 * 40 / 2 + 128 / 6
    core_bytes = 2 * 304 / 6 + 80 / 2 + 64 / 6
    assert cost.compute_s == pytest.approx(core_flops / 100)
    assert cost.memory_s == pytest.approx(core_bytes / 1000)
    assert cost.hops == 20 * 4 + 3 * 2 and cost.routing_stages == 23 * 4  # 20 over the 3x3 layers, 3 over the head
    bandwidth = 23 * 8 / (3 * 10)  # links: the layer region's side
    assert cost.seconds == pytest.approx(core_flops / 100 + 0.92 + bandwidth)
    assert cost.bound == "fabric-bandwidth"


# a tiny mixture of experts: 4 routed experts (1 per token) + 1 shared, each 3 x 4 x 4 = 48 parameters
TINY_MOE = TargetModel(name="moe", architecture="llama", layers=2, hidden_size=4, heads=2, kv_heads=1, head_size=2,
                       ffn_size=8, vocab_size=10, context_tokens=4, bytes_per_param=2, tied_embeddings=False,
                       experts=4, experts_per_token=1, expert_ffn_size=4, shared_experts=1)


def test_mixture_of_experts_on_wafer_regions_by_hand():
    """attention + norms + router 72 params x 2 B + 32 B of KV = 176 B -> 3 cores; routed experts 4 x 48 x 2 B
    -> 6 cores (interleaved); the shared expert 96 B -> 2 cores; a whole MoE layer 656 B -> 11 cores."""
    placement = place(TINY_MOE, WAFER, PlacementOptions(systems=1))
    assert (placement.attention_cores, placement.expert_cores, placement.shared_expert_cores,
            placement.moe_layer_cores, placement.head_cores) == (3, 6, 2, 11, 2)
    cost = forward(TINY_MOE, WAFER, REGION, placement, tokens=1, past_tokens=3)
    # per layer: attention 2 x 72 / 3; experts: max(routed 2 x 1 x 48 / 6, shared 2 x 48 / 2); head; attention
    core_flops = 2 * (2 * 72 / 3 + max(2 * 48 / 6, 2 * 48 / 2)) + 2 * 40 / 2 + 128 / 3
    core_bytes = 2 * (2 * 72 / 3 + max(1 * 48 * 2 / 6, 48 * 2 / 2)) + 80 / 2 + 64 / 3
    assert cost.compute_s == pytest.approx(core_flops / 100)
    assert cost.memory_s == pytest.approx(core_bytes / 1000)
    # 8 collectives per layer over the 3-core attention (2 hops), 3 over the 6 expert cores (4 hops), 3 over the
    # head (2 hops), and the token to its expert and back across the 11-core layer (side 4)
    assert cost.hops == 2 * 8 * 2 + 2 * 3 * 4 + 3 * 2 + 2 * 2 * 4
    assert cost.routing_stages == (2 * 8 + 2 * 3 + 3) * 4
    three = forward(TINY_MOE, WAFER, REGION, placement, tokens=3, past_tokens=3)  # 3 tokens through 2 layers
    assert three.routing_stages == pytest.approx(cost.routing_stages * (1 + 2 / 2))
    assert TINY_MOE.experts_touched(1) == 1 and TINY_MOE.experts_touched(2) == pytest.approx(4 * (1 - 0.75**2))


def test_wafer_forward_charges_the_stacks_system_hand_offs_when_a_run_spans_systems():
    placement = place(TINY, WAFER, PlacementOptions(systems=2))
    cost = forward(TINY, WAFER, GRID, placement, tokens=1, past_tokens=3)
    # 1 hand-off to the second system + the sampled token back: 2 x (0.5 s + 8 B / 100 B/s)
    assert cost.link_s == pytest.approx(2 * (0.5 + 8 / 100))


def test_device_forward_by_hand():
    placement = place(TINY, DEVICE, PlacementOptions(tensor_parallel=2))
    cost = forward(TINY, DEVICE, ENGINE, placement, tokens=1, past_tokens=3)
    assert cost.compute_s == pytest.approx(816 / (2 * 2000 * 0.5))  # 0.408
    assert cost.memory_s == pytest.approx(760 / (2 * 1000 * 0.5))  # 0.76
    assert cost.overhead_s == pytest.approx(22 * 0.01)
    # 2 all-reduces x 2 layers, each 2 x log2(2) = 2 steps of 0.1 s, plus 2 x (1/2) x 8 B / 80 B/s
    assert cost.allreduce_steps == 8
    assert cost.allreduce_s == pytest.approx(8 * 0.1 + 4 * 2 * 0.5 * 8 / 80)
    assert cost.seconds == pytest.approx(0.76 + 0.408 + 0.22 + 1.2)  # streaming and arithmetic do not overlap
    assert cost.bound == "all-reduce"


def test_a_fused_one_shot_all_reduce_takes_one_step_and_carries_the_norms():
    assert allreduce_seconds(0.1, 80, 8, 8, count=4, fused=True) == pytest.approx((4 * 0.1 + 4 * 2 * 7 / 8 * 8 / 80,
                                                                                    4.0))
    assert allreduce_seconds(0.1, 80, 8, 8, count=4)[1] == 4 * 2 * 3  # tree: 2 log2(8) steps each
    assert allreduce_seconds(0.1, 80, 1, 8, count=4) == (0.0, 0.0)
    fused = ServingStack(**{**vars(ENGINE), "fused_allreduce": True})
    cost = forward(TINY, DEVICE, fused, place(TINY, DEVICE, PlacementOptions(tensor_parallel=2)), 1, 3)
    assert cost.allreduce_steps == 4 and cost.overhead_s == pytest.approx(18 * 0.01)


def test_first_token_is_the_serving_overhead_plus_the_prefill():
    assert first_token_seconds(0.05, 0.12) == pytest.approx(0.17)
    assert first_token_seconds(0.05, 0.0) == 0.05


def test_prefill_of_many_tokens_becomes_compute_bound_on_a_gpu(stacks):
    profiles, targets = hardware_profiles(), target_models()
    h100, model = profiles["H100"], targets["Llama-3.1-8B"]
    stack = stacks[0]["sglang-2025"]
    placement = place(model, h100)
    assert forward(model, h100, stack, placement, 1, 0).bound == "memory-bandwidth"
    prefill = forward(model, h100, stack, placement, 2048, 0)
    assert prefill.bound == "compute"
    assert prefill.compute_s == pytest.approx(prefill.flops / (989e12 * stack.compute_efficiency))


def test_forward_needs_a_token():
    with pytest.raises(ValueError):
        forward(TINY, WAFER, GRID, place(TINY, WAFER), 0, 0)


def test_speculative_formulas_by_hand():
    assert expected_tokens_per_step(0.5, 2) == pytest.approx(1.75)  # 1 + 0.5 + 0.25
    assert expected_tokens_per_step(0.0, 4) == 1.0
    assert expected_tokens_per_step(1.0, 4) == 5.0
    draft = forward(TINY, DEVICE, ENGINE, place(TINY, DEVICE), 1, 3)
    verify = forward(TINY, DEVICE, ENGINE, place(TINY, DEVICE), 3, 3)
    step = speculative_step(draft, verify, draft_tokens=2, acceptance_rate=0.5)
    assert step.seconds == pytest.approx(2 * draft.seconds + verify.seconds)
    assert step.per_token_s == pytest.approx(step.seconds / 1.75)


# -- placement ----------------------------------------------------------------------------------------------------
def test_wafer_placement_by_hand():
    placement = place(TINY, WAFER)
    # layer: 152 params x 2 B + KV 16/2 B x 4 tokens = 336 B -> ceil(336 / 64) = 6 cores
    assert placement.cores_per_layer == 6
    assert placement.cores_for_embeddings == math.ceil(80 / 64) + math.ceil(88 / 64)  # 2 + 2
    # 15-core systems: [embedding 2, layer 6, layer 6] [head 2]
    assert (placement.systems_needed, placement.layers_per_system) == (2, (2, 0))
    assert placement.systems == 2 and placement.fits


def test_model_that_outgrows_one_wafer_needs_several():
    profiles, targets = hardware_profiles(), target_models()
    wse3 = profiles["WSE-3"]
    assert place(targets["Llama-3.1-8B"], wse3).systems_needed == 1  # Cerebras: 8B fits one CS-3
    assert place(targets["Llama-3.1-70B"], wse3).systems_needed == 4  # Cerebras: 70B spans 4 CS-3
    big = place(targets["Llama-3.1-405B"], wse3)
    # 812 GB of weights over 37.4 GB usable per wafer: at least 22 systems
    assert big.systems_needed >= math.ceil(big.weight_bytes / (wse3.grid_cores * wse3.usable_bytes_per_core))
    assert sum(big.layers_per_system) == 126


def test_a_layer_bigger_than_a_system_spans_systems():
    wide = with_precision(TINY, 40)  # 152 x 40 B = 6080 B per layer: 95+ cores, more than a 15-core wafer
    placement = place(wide, WAFER)
    assert placement.cores_per_layer > WAFER.grid_cores
    assert placement.systems_needed >= 2 * math.ceil(placement.cores_per_layer / WAFER.grid_cores)
    assert any("spans systems" in note for note in placement.notes)


def test_published_run_with_too_few_systems_is_reported():
    placement = place(TINY, WAFER, PlacementOptions(systems=1))
    assert placement.systems == 1 and not placement.fits
    assert "timing follows the published run" in placement_report(placement)


def test_wafer_grid_choices():
    assert place(TINY, WAFER, PlacementOptions(grid=(2, 3))).grid_rows == 2
    smallest = place(TINY, WAFER, PlacementOptions(grid="smallest"))
    assert (smallest.grid_rows, smallest.grid_cols) == (3, 5)  # 16 cores do not fit 15: the whole fabric
    with pytest.raises(EmulatorDataError, match="exceeds"):
        place(TINY, WAFER, PlacementOptions(grid=(4, 5)))
    with pytest.raises(EmulatorDataError, match="grid must be"):
        place(TINY, WAFER, PlacementOptions(grid="huge"))


def test_gpu_placement_needs_ceil_weights_over_memory_devices():
    profiles, targets = hardware_profiles(), target_models()
    h100, model = profiles["H100"], targets["Llama-3.1-405B"]
    placement = place(model, h100)
    usable = 80e9 * 0.9
    assert placement.devices_needed == math.ceil((model.weight_bytes + model.kv_bytes_per_token * 8192) / usable)
    assert placement.devices_needed == 12
    assert (placement.tensor_parallel, placement.pipeline_stages, placement.devices) == (8, 2, 16)
    assert place(targets["Llama-3.1-70B"], h100).tensor_parallel == 2  # 143.8 GB over 72 GB
    assert place(targets["Llama-3.1-8B"], profiles["H200"]).devices == 1


def test_gpu_tensor_parallel_checks():
    with pytest.raises(EmulatorDataError, match="tensor_parallel 16"):
        place(TINY, DEVICE, PlacementOptions(tensor_parallel=16))
    six_heads = TargetModel(name="six", architecture="llama", layers=1, hidden_size=12, heads=6, kv_heads=6,
                            head_size=2, ffn_size=8, vocab_size=10, context_tokens=4, bytes_per_param=2,
                            tied_embeddings=False)
    placement = place(six_heads, DEVICE, PlacementOptions(tensor_parallel=4))
    assert placement.tensor_parallel == 2 and "lowered" in placement.notes[0]
    assert "tensor parallel 2" in placement_report(placement)
