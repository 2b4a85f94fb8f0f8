"""Timing model: the seconds one forward pass takes, as small pure functions returning a ForwardCost record.

A forward pass handles ``tokens`` new tokens after ``past_tokens`` cached ones, in each of ``batch`` sequences
(best-of-N candidates decoded together): a decode step is tokens=1, a prefill is tokens=prompt, a speculative
verification is tokens=k+1. A batch streams the weights once but does the arithmetic, reads the KV cache and
moves the activations of every sequence. docs/emulator.md gives the formulas.

The physics comes from the hardware profile, the software constants and facts from the serving stack:

Wafer (wafer_timing.py):
    seconds = max(compute, SRAM) + fabric latency + fabric bandwidth + system links
    fabric latency = hops x fabric_hop_latency_s (hardware) + stages x routing_stage_latency_s (stack)
Devices (GPUs, the host):
    seconds = memory + compute + kernel launches + all-reduces + node links
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wafer_reasoner.emulator import wafer_timing as wafer_terms
from wafer_reasoner.emulator.hardware import WaferProfile
from wafer_reasoner.emulator.targets import TargetModel

# Kernels per layer of a fused GPU decode step: norm, QKV GEMM, rotary + KV write, attention, output GEMM,
# residual + norm, gate/up GEMM, activation, down GEMM (TensorRT-LLM / SGLang layer structure).
KERNELS_PER_LAYER = {"llama": 9, "gpt2": 9}
MOE_EXTRA_KERNELS = 4  # router GEMM, top-k, permute tokens to their experts, unpermute + weigh (TensorRT-LLM MoE)
FUSED_NORM_KERNELS = 2  # a fused all-reduce carries the residual add + norm that follow each all-reduce
KERNELS_PER_TOKEN = 4  # embedding, final norm, LM head, sampling
ALLREDUCES_PER_LAYER = 2  # Megatron tensor parallelism: after the attention output and after the MLP down GEMM


@dataclass(frozen=True)
class ForwardCost:
    """One forward pass. Seconds by kind; ``bound`` names the largest. Counts let calibration fit the constants."""

    tokens: int
    past_tokens: float
    flops: float
    weight_bytes: float  # weights streamed
    kv_bytes: float  # KV cache read (past + new)
    compute_s: float
    memory_s: float  # HBM/RAM (devices) or SRAM (wafer) streaming
    fabric_s: float  # wafer: collectives' hop + routing-stage latency + fabric bandwidth
    overhead_s: float  # devices: kernel launches
    allreduce_s: float  # devices: tensor-parallel all-reduces
    link_s: float  # between wafer systems / device nodes
    seconds: float
    bound: str
    hops: float = 0.0  # wafer: hops summed over collectives (seconds per unit of fabric_hop_latency_s)
    routing_stages: float = 0.0  # wafer: routing stages summed over collectives
    allreduce_steps: float = 0.0  # devices: latency steps summed over all-reduces
    batch: int = 1  # sequences in the pass (best-of-N candidates), each with ``tokens`` new tokens


def _bound(terms: dict) -> str:
    return max(terms.items(), key=lambda item: item[1])[0]


def fabric_collectives(target: TargetModel) -> int:
    """Collectives of one forward pass in the grid layout (every one spans the grid)."""
    parts = wafer_terms.COLLECTIVES[target.architecture]
    return (target.layers * (parts["attention"] + parts["mlp"]) + target.moe_layers * wafer_terms.ROUTER_COLLECTIVES
            + wafer_terms.HEAD_COLLECTIVES)


def gpu_kernels(target: TargetModel, fused_allreduce: bool = False) -> int:
    """Kernels of one forward pass on a device; a fused all-reduce absorbs the two norms that follow it."""
    per_layer = KERNELS_PER_LAYER[target.architecture] - (FUSED_NORM_KERNELS if fused_allreduce else 0)
    return target.layers * per_layer + target.moe_layers * MOE_EXTRA_KERNELS + KERNELS_PER_TOKEN


def work(target: TargetModel, tokens: int, past_tokens: float, batch: int = 1) -> tuple:
    """(FLOPs, weight bytes streamed, KV bytes read) of one forward pass over ``batch`` sequences."""
    flops = target.matmul_flops(tokens * batch) + batch * target.attention_flops(tokens, past_tokens)
    weight_bytes = target.read_bytes(tokens * batch)  # once for the whole batch
    kv_bytes = batch * target.kv_bytes_per_token * (past_tokens + tokens)
    return flops, weight_bytes, kv_bytes


def wafer_forward(target: TargetModel, wafer: WaferProfile, stack, placement, tokens: int, past_tokens: float,
                  batch: int = 1):
    """Layers run one after another, in the stack's layout (wafer_timing.py): over the whole grid, every token of
    the pass at once; or as a pipeline of layer regions that the pass's tokens follow one another through."""
    flops, weight_bytes, kv_bytes = work(target, tokens, past_tokens, batch)
    peak_flops = wafer.flops_per_s_per_core * stack.compute_efficiency
    if stack.layout == "grid":
        cores = placement.grid_rows * placement.grid_cols
        compute_s = flops / (cores * peak_flops)
        memory_s = (weight_bytes + kv_bytes) / (cores * wafer.sram_bytes_per_s_per_core)
        collectives, hops, stages = wafer_terms.grid_fabric(target, placement)
        links, factor, message_tokens = min(placement.grid_rows, placement.grid_cols), 1.0, tokens * batch
    else:  # one token's pass through the regions, stretched by the pipeline of all the pass's tokens
        one_kv = target.kv_bytes_per_token * (past_tokens + 1)
        core_flops, core_bytes = wafer_terms.region_work_per_core(
            target, placement, 1, 1, target.attention_flops(1, past_tokens), one_kv)
        factor = wafer_terms.pipeline_factor(tokens * batch, target.layers)
        compute_s = core_flops / peak_flops * factor
        memory_s = core_bytes / wafer.sram_bytes_per_s_per_core * factor
        collectives, hops, stages = wafer_terms.region_fabric(target, placement)
        links = wafer_terms.region_side(placement.attention_cores if target.moe_layers
                                        else placement.dense_layer_cores)
        message_tokens = 1
    hop_s = wafer_terms.collective_latency_s(hops, 0.0, wafer.fabric_hop_latency_s, 0.0) * factor
    stage_s = wafer_terms.collective_latency_s(0.0, stages, 0.0, stack.routing_stage_latency_s) * factor
    message = message_tokens * target.hidden_size * target.activation_bytes  # activation vectors moved at once
    bandwidth_s = wafer_terms.fabric_bandwidth_s(collectives, message, links, wafer.fabric_link_bytes_per_s) * factor
    link_s = wafer_terms.system_links_s(placement.systems, stack.system_link_latency_s, message,
                                        wafer.system_link_bytes_per_s) * factor
    seconds = max(compute_s, memory_s, hop_s) + stage_s + bandwidth_s + link_s
    bound = _bound({"compute": compute_s, "sram-bandwidth": memory_s, "fabric-latency": hop_s + stage_s,
                    "fabric-bandwidth": bandwidth_s, "system-link": link_s})
    return ForwardCost(tokens=tokens, past_tokens=past_tokens, flops=flops, weight_bytes=weight_bytes,
                       kv_bytes=kv_bytes, compute_s=compute_s, memory_s=memory_s,
                       fabric_s=hop_s + stage_s + bandwidth_s, overhead_s=0.0, allreduce_s=0.0, link_s=link_s,
                       seconds=seconds, bound=bound, hops=hops * factor, routing_stages=stages * factor, batch=batch)


def allreduce_seconds(step_latency_s: float, link_bytes_per_s: float, tensor_parallel: int, message_bytes: float,
                      count: int, fused: bool = False) -> tuple:
    """(seconds, latency steps) of ``count`` all-reduces of ``message_bytes`` over ``tensor_parallel`` devices.

    Latency: 2 x log2(tp) steps (tree reduce + broadcast), or 1 for a one-shot all-reduce (every device reads
    every other's vector once over the switch and reduces locally); bandwidth: the ring's
    2 (tp - 1) / tp x bytes / link bandwidth."""
    if tensor_parallel <= 1:
        return 0.0, 0.0
    steps = count * (1.0 if fused else 2 * math.log2(tensor_parallel))
    transfer = count * 2 * (tensor_parallel - 1) / tensor_parallel * message_bytes / link_bytes_per_s
    return steps * step_latency_s + transfer, steps


def device_forward(target: TargetModel, device, stack, placement, tokens: int, past_tokens: float, batch: int = 1):
    """Tensor parallel within a node, pipeline stages across nodes (run one after another for one request)."""
    tp, stages = placement.tensor_parallel, placement.pipeline_stages
    fused = stack.fused_allreduce and tp > 1
    flops, weight_bytes, kv_bytes = work(target, tokens, past_tokens, batch)
    compute_s = flops / (tp * device.peak_flops_per_s * stack.compute_efficiency)
    memory_s = (weight_bytes + kv_bytes) / (tp * device.memory_bytes_per_s * stack.memory_efficiency)
    overhead_s = gpu_kernels(target, fused) * stack.kernel_overhead_s
    message = tokens * batch * target.hidden_size * target.activation_bytes
    allreduce_s, steps = allreduce_seconds(stack.allreduce_step_latency_s, device.device_link_bytes_per_s, tp,
                                           message, ALLREDUCES_PER_LAYER * target.layers, fused)
    crossings = stages if stages > 1 else 0
    link_s = crossings * (device.node_link_latency_s + message / device.node_link_bytes_per_s)
    # streaming and arithmetic do not overlap: the roofline's max is a pass's best case, which one near the ridge
    # point (a short prompt's prefill) reaches neither side of (docs/emulator.md, "Devices")
    seconds = memory_s + compute_s + overhead_s + allreduce_s + link_s
    bound = _bound({"compute": compute_s, "memory-bandwidth": memory_s, "kernel-overhead": overhead_s,
                    "all-reduce": allreduce_s, "node-link": link_s})
    return ForwardCost(tokens=tokens, past_tokens=past_tokens, flops=flops, weight_bytes=weight_bytes,
                       kv_bytes=kv_bytes, compute_s=compute_s, memory_s=memory_s, fabric_s=0.0,
                       overhead_s=overhead_s, allreduce_s=allreduce_s, link_s=link_s, seconds=seconds,
                       bound=bound, allreduce_steps=steps, batch=batch)


def forward(target: TargetModel, hardware, stack, placement, tokens: int, past_tokens: float,
            batch: int = 1) -> ForwardCost:
    if tokens < 1 or batch < 1:
        raise ValueError(f"a forward pass needs at least one token and one sequence, got {tokens} x {batch}")
    if isinstance(hardware, WaferProfile):
        return wafer_forward(target, hardware, stack, placement, tokens, past_tokens, batch)
    return device_forward(target, hardware, stack, placement, tokens, past_tokens, batch)


def first_token_seconds(prefill_s: float, serving_overhead_s: float) -> float:
    """Time to the first token a client sees: the stack's serving overhead (API, network, tokenization,
    queueing) + the prompt's forward pass, which yields the first token."""
    return serving_overhead_s + prefill_s


def expected_tokens_per_step(acceptance_rate: float, draft_tokens: int) -> float:
    """Tokens one speculative step yields: (1 - a^(k+1)) / (1 - a) (Leviathan et al., ICML 2023, eq. 1),
    each drafted token accepted independently with probability a; k drafted tokens plus the target's own."""
    if acceptance_rate >= 1.0:
        return float(draft_tokens + 1)
    return (1.0 - acceptance_rate ** (draft_tokens + 1)) / (1.0 - acceptance_rate)


@dataclass(frozen=True)
class SpeculativeStep:
    draft_s: float  # k draft decode steps
    verify_s: float  # one target forward over k + 1 tokens
    seconds: float
    tokens: float  # expected tokens per step
    per_token_s: float
    bound: str  # the verification's bound


def speculative_step(draft_one: ForwardCost, verify: ForwardCost, draft_tokens: int,
                     acceptance_rate: float) -> SpeculativeStep:
    draft_s = draft_tokens * draft_one.seconds
    seconds = draft_s + verify.seconds
    tokens = expected_tokens_per_step(acceptance_rate, draft_tokens)
    return SpeculativeStep(draft_s=draft_s, verify_s=verify.seconds, seconds=seconds, tokens=tokens,
                           per_token_s=seconds / tokens, bound=verify.bound)
