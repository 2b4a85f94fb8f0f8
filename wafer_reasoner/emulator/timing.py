"""Timing model: the seconds one forward pass takes, as small pure functions returning a ForwardCost record.

A forward pass handles ``tokens`` new tokens after ``past_tokens`` cached ones, in each of ``batch`` sequences
(best-of-N candidates decoded together): a decode step is tokens=1, a prefill is tokens=prompt, a speculative
verification is tokens=k+1. A batch streams the weights once but does the arithmetic, reads the KV cache and
moves the activations of every sequence. docs/emulator.md gives the formulas.

Wafer (WaferLLM's PLMR device model: many cores, non-uniform latency, small per-core memory, limited routing):
    seconds = max(compute, SRAM) + fabric latency + fabric bandwidth + system links
    fabric latency = collectives x (hops x fabric_hop_latency_s + stages x routing_stage_latency_s)
Devices (GPUs, the host):
    seconds = max(memory, compute) + kernel overheads + all-reduces + node links
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wafer_reasoner.emulator.hardware import DeviceProfile, WaferProfile
from wafer_reasoner.emulator.targets import TargetModel

# Fabric collectives (reduce along one grid axis, broadcast along the other) per layer of one forward pass, in
# WaferLLM's decode layout where every GEMV spans the grid. llama: 2 RMSNorm sums + 4 GEMVs (QKV, output,
# gate/up, down) + 4 in attention (scores, softmax max, softmax sum, weighted values). gpt2: LayerNorm needs a
# mean and a variance, so 2 x 2 + 4 + 4.
COLLECTIVES_PER_LAYER = {"llama": 10, "gpt2": 12}
MOE_EXTRA_COLLECTIVES = 1  # the router's top-k
HEAD_COLLECTIVES = 3  # final norm, LM-head GEMV, argmax over the vocabulary
# Routing stages per collective: WaferLLM's all-reduce is a two-phase K-tree (decode config root_1st_phase,
# root_2nd_phase); 2 phases to reduce + 2 to broadcast. Each stage is a software relay through a core's router.
ROUTING_STAGES_PER_COLLECTIVE = 4

# Kernels per layer of a fused GPU decode step: norm, QKV GEMM, rotary + KV write, attention, output GEMM,
# residual + norm, gate/up GEMM, activation, down GEMM (TensorRT-LLM / SGLang layer structure).
KERNELS_PER_LAYER = {"llama": 9, "gpt2": 9}
MOE_EXTRA_KERNELS = 2  # router GEMM, top-k + token permutation
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
    per_layer = COLLECTIVES_PER_LAYER[target.architecture] + (MOE_EXTRA_COLLECTIVES if target.experts > 1 else 0)
    return target.layers * per_layer + HEAD_COLLECTIVES


def gpu_kernels(target: TargetModel) -> int:
    per_layer = KERNELS_PER_LAYER[target.architecture] + (MOE_EXTRA_KERNELS if target.experts > 1 else 0)
    return target.layers * per_layer + KERNELS_PER_TOKEN


def work(target: TargetModel, tokens: int, past_tokens: float, batch: int = 1) -> tuple:
    """(FLOPs, weight bytes streamed, KV bytes read) of one forward pass over ``batch`` sequences."""
    flops = target.matmul_flops(tokens * batch) + batch * target.attention_flops(tokens, past_tokens)
    weight_bytes = target.read_params(tokens * batch) * target.bytes_per_param  # once for the whole batch
    kv_bytes = batch * target.kv_bytes_per_token * (past_tokens + tokens)
    return flops, weight_bytes, kv_bytes


def wafer_forward(target: TargetModel, wafer: WaferProfile, placement, tokens: int, past_tokens: float,
                  batch: int = 1):
    """Layers run one after another, each spread over its system's grid of ``grid_rows x grid_cols`` cores."""
    rows, cols = placement.grid_rows, placement.grid_cols
    cores = rows * cols
    flops, weight_bytes, kv_bytes = work(target, tokens, past_tokens, batch)
    compute_s = flops / (cores * wafer.flops_per_s_per_core)
    memory_s = (weight_bytes + kv_bytes) / (cores * wafer.sram_bytes_per_s_per_core)
    collectives = fabric_collectives(target)
    hops = collectives * ((rows - 1) + (cols - 1))  # reduce along a row, broadcast along a column
    stages = collectives * ROUTING_STAGES_PER_COLLECTIVE
    latency_s = hops * wafer.fabric_hop_latency_s + stages * wafer.routing_stage_latency_s
    message = tokens * batch * target.hidden_size * target.activation_bytes  # one activation vector per token
    bandwidth_s = collectives * message / (min(rows, cols) * wafer.fabric_link_bytes_per_s)
    # S - 1 hand-offs along the pipeline of systems, plus the sampled token back to the first one
    crossings = placement.systems if placement.systems > 1 else 0
    link_s = crossings * (wafer.system_link_latency_s + message / wafer.system_link_bytes_per_s)
    seconds = max(compute_s, memory_s) + latency_s + bandwidth_s + link_s
    bound = _bound({"compute": compute_s, "sram-bandwidth": memory_s, "fabric-latency": latency_s,
                    "fabric-bandwidth": bandwidth_s, "system-link": link_s})
    return ForwardCost(tokens=tokens, past_tokens=past_tokens, flops=flops, weight_bytes=weight_bytes,
                       kv_bytes=kv_bytes, compute_s=compute_s, memory_s=memory_s,
                       fabric_s=latency_s + bandwidth_s, overhead_s=0.0, allreduce_s=0.0, link_s=link_s,
                       seconds=seconds, bound=bound, hops=hops, routing_stages=stages, batch=batch)


def allreduce_seconds(device: DeviceProfile, tensor_parallel: int, message_bytes: float, count: int) -> tuple:
    """(seconds, latency steps) of ``count`` all-reduces of ``message_bytes`` over ``tensor_parallel`` devices.

    Small messages: 2 x log2(tp) latency steps (tree reduce + broadcast) plus the ring's bandwidth term
    2 (tp - 1) / tp x bytes / link bandwidth."""
    if tensor_parallel <= 1:
        return 0.0, 0.0
    steps = count * 2 * math.log2(tensor_parallel)
    transfer = count * 2 * (tensor_parallel - 1) / tensor_parallel * message_bytes / device.device_link_bytes_per_s
    return steps * device.allreduce_step_latency_s + transfer, steps


def device_forward(target: TargetModel, device: DeviceProfile, placement, tokens: int, past_tokens: float,
                   batch: int = 1):
    """Tensor parallel within a node, pipeline stages across nodes (run one after another for one request)."""
    tp, stages = placement.tensor_parallel, placement.pipeline_stages
    flops, weight_bytes, kv_bytes = work(target, tokens, past_tokens, batch)
    compute_s = flops / (tp * device.peak_flops_per_s * device.compute_efficiency)
    memory_s = (weight_bytes + kv_bytes) / (tp * device.memory_bytes_per_s * device.memory_efficiency)
    overhead_s = gpu_kernels(target) * device.kernel_overhead_s
    message = tokens * batch * target.hidden_size * target.activation_bytes
    allreduce_s, steps = allreduce_seconds(device, tp, message, ALLREDUCES_PER_LAYER * target.layers)
    crossings = stages if stages > 1 else 0
    link_s = crossings * (device.node_link_latency_s + message / device.node_link_bytes_per_s)
    seconds = max(compute_s, memory_s) + overhead_s + allreduce_s + link_s
    bound = _bound({"compute": compute_s, "memory-bandwidth": memory_s, "kernel-overhead": overhead_s,
                    "all-reduce": allreduce_s, "node-link": link_s})
    return ForwardCost(tokens=tokens, past_tokens=past_tokens, flops=flops, weight_bytes=weight_bytes,
                       kv_bytes=kv_bytes, compute_s=compute_s, memory_s=memory_s, fabric_s=0.0,
                       overhead_s=overhead_s, allreduce_s=allreduce_s, link_s=link_s, seconds=seconds,
                       bound=bound, allreduce_steps=steps, batch=batch)


def forward(target: TargetModel, hardware, placement, tokens: int, past_tokens: float, batch: int = 1) -> ForwardCost:
    if tokens < 1 or batch < 1:
        raise ValueError(f"a forward pass needs at least one token and one sequence, got {tokens} x {batch}")
    if isinstance(hardware, WaferProfile):
        return wafer_forward(target, hardware, placement, tokens, past_tokens, batch)
    return device_forward(target, hardware, placement, tokens, past_tokens, batch)


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
