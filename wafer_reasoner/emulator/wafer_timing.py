"""Wafer-scale timing (WaferLLM's PLMR device model: many cores, non-uniform latency, small per-core memory,
limited routing), as small pure functions. docs/emulator.md gives each formula.

    seconds = max(compute, SRAM) + fabric latency + fabric bandwidth + system links
    fabric latency = hops x fabric_hop_latency_s (physics) + routing stages x routing_stage_latency_s (the stack)

Two layouts (a published fact of the stack):
* ``grid`` (WaferLLM's decode layout): every layer spread over the system's whole grid of R x C cores; every
  collective spans the grid.
* ``region`` (a layer pipeline, Cerebras' pipelined execution): each layer sits on its own region of cores, the
  weights fill those cores' SRAM, and a collective spans only the region its weights occupy. In a mixture of
  experts every expert has its own region; a token's experts run in parallel, the rest stay idle.
"""

from __future__ import annotations

import math

# Fabric collectives (reduce along one axis, broadcast along the other) per layer part. llama: attention = 1
# RMSNorm sum + QKV GEMV + output GEMV + 4 in attention (scores, softmax max, softmax sum, weighted values);
# MLP = 1 RMSNorm sum + gate/up GEMV + down GEMV. gpt2: LayerNorm needs a mean and a variance (2 each).
COLLECTIVES = {"llama": {"attention": 7, "mlp": 3}, "gpt2": {"attention": 8, "mlp": 4}}
ROUTER_COLLECTIVES = 1  # top-k over the router's logits
EXPERT_TRANSFERS = 2  # a token's activation to its experts' regions and their sum back (point to point)
HEAD_COLLECTIVES = 3  # final norm, LM-head GEMV, argmax over the vocabulary
# Routing stages per collective: WaferLLM's all-reduce is a two-phase K-tree (decode config root_1st_phase,
# root_2nd_phase); 2 phases to reduce + 2 to broadcast. Each stage is a software relay through a core's router.
ROUTING_STAGES_PER_COLLECTIVE = 4


def grid_hops(rows: int, cols: int) -> int:
    """Hops of one collective over a rows x cols grid: reduce along a row, broadcast along a column."""
    return (rows - 1) + (cols - 1)


def region_side(cores: int) -> int:
    """Side of the near-square region of ``cores`` cores."""
    return max(1, math.ceil(math.sqrt(max(cores, 1))))


def region_hops(cores: int) -> int:
    """Hops of one collective over a square region of ``cores`` cores (as grid_hops on its side)."""
    side = region_side(cores)
    return grid_hops(side, side)


def collective_latency_s(hops: float, stages: float, hop_latency_s: float, stage_latency_s: float) -> float:
    """Fabric latency of collectives summing to ``hops`` core-to-core hops and ``stages`` software relay stages."""
    return hops * hop_latency_s + stages * stage_latency_s


def fabric_bandwidth_s(collectives: float, message_bytes: float, links: int, link_bytes_per_s: float) -> float:
    """Serialisation of ``collectives`` messages of ``message_bytes`` over ``links`` parallel fabric links."""
    return collectives * message_bytes / (max(links, 1) * link_bytes_per_s)


def system_links_s(systems: int, latency_s: float, message_bytes: float, link_bytes_per_s: float) -> float:
    """Hand-offs between wafer systems: S - 1 down the pipeline + the sampled token back to the first (0 for one)."""
    crossings = systems if systems > 1 else 0
    return crossings * (latency_s + message_bytes / link_bytes_per_s)


def pipeline_factor(tokens: int, layers: int) -> float:
    """A pass of ``tokens`` tokens (a prompt's, a verification's, a batch's) through a pipeline of ``layers`` layer
    regions, in units of one token's pass: the tokens follow each other one layer apart, so the last leaves
    (layers + tokens - 1) layer-steps after the first enters: 1 + (tokens - 1) / layers."""
    return 1.0 + (max(tokens, 1) - 1) / layers


def grid_fabric(target, placement) -> tuple:
    """(collectives, hops, routing stages) of one forward pass in the grid layout."""
    parts = COLLECTIVES[target.architecture]
    collectives = (target.layers * (parts["attention"] + parts["mlp"])
                   + target.moe_layers * ROUTER_COLLECTIVES + HEAD_COLLECTIVES)
    hops = collectives * grid_hops(placement.grid_rows, placement.grid_cols)
    return collectives, hops, collectives * ROUTING_STAGES_PER_COLLECTIVE


def region_fabric(target, placement) -> tuple:
    """(collectives, hops, routing stages) of one forward pass in the region layout."""
    parts = COLLECTIVES[target.architecture]
    dense_collectives = target.dense_mlp_layers * (parts["attention"] + parts["mlp"])
    attention_collectives = target.moe_layers * (parts["attention"] + ROUTER_COLLECTIVES)
    expert_collectives = target.moe_layers * parts["mlp"]
    collectives = dense_collectives + attention_collectives + expert_collectives + HEAD_COLLECTIVES
    hops = (dense_collectives * region_hops(placement.dense_layer_cores)
            + attention_collectives * region_hops(placement.attention_cores)
            + expert_collectives * region_hops(placement.expert_cores)
            + HEAD_COLLECTIVES * region_hops(placement.head_cores)
            + target.moe_layers * EXPERT_TRANSFERS * region_side(placement.moe_layer_cores))
    return collectives, hops, collectives * ROUTING_STAGES_PER_COLLECTIVE


def region_work_per_core(target, placement, tokens: int, batch: int, attention_flops: float,
                         kv_bytes: float) -> tuple:
    """(FLOPs, SRAM bytes) per core summed along a token's path in the region layout: each part works on its own
    cores, one after another, and reads its own weights once. A dense layer is one part; an MoE layer is its
    attention, then its experts: the routed experts the tokens reach, spread over all routed-expert cores, in
    parallel with the shared experts on theirs. The attention part also reads the KV cache and does the
    attention arithmetic. compute = FLOPs / a core's FLOP/s, SRAM = bytes / a core's B/s."""
    per_weight = 2.0 * tokens * batch  # FLOPs per active weight of the pass
    dense = target.layer_group_params(False)
    attention = target.layer_group_params(True, 0)["attention"]
    head = target.head_width * target.hidden_size
    attention_cores = placement.attention_cores if target.moe_layers else placement.dense_layer_cores
    flops = (target.dense_mlp_layers * per_weight * (dense["attention"] + dense["mlp"]) / placement.dense_layer_cores
             + per_weight * head / placement.head_cores + attention_flops / attention_cores)
    nbytes = (target.dense_mlp_layers * target.layer_bytes(False) / placement.dense_layer_cores
              + head * target.group_bytes("embeddings") / placement.head_cores + kv_bytes / attention_cores)
    if target.moe_layers:
        expert = target.expert_params
        routed = (per_weight * target.experts_per_token * expert / placement.expert_cores,
                  target.experts_touched(tokens * batch) * expert * target.group_bytes("experts")
                  / placement.expert_cores)
        shared = (0.0, 0.0) if not target.shared_experts else (
            per_weight * target.shared_experts * expert / placement.shared_expert_cores,
            target.shared_experts * expert * target.group_bytes("mlp") / placement.shared_expert_cores)
        flops += target.moe_layers * (per_weight * attention / placement.attention_cores + max(routed[0], shared[0]))
        nbytes += target.moe_layers * (attention * target.group_bytes("attention") / placement.attention_cores
                                       + max(routed[1], shared[1]))
    return flops, nbytes
