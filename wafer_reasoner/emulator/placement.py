"""Placement: where a target's weights and KV cache live.

Wafer: each layer's weights + its KV cache for ``context_tokens`` are spread over cores with small SRAM
(``cores_per_layer = ceil(layer_bytes / usable_bytes_per_core)``); embedding, layers and LM head are packed in
order onto systems whose grid holds ``grid_rows x grid_cols`` cores; a model that outgrows one wafer needs
several systems (Cerebras: Llama 3.1 70B at 16 bits spans 4 CS-3).

Devices (GPUs, the host): ``devices_needed = ceil((weights + KV) / usable memory per device)``; tensor-parallel
degree = that rounded up to a power of two within a node; beyond one node, pipeline stages across nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.hardware import DeviceProfile, WaferProfile
from wafer_reasoner.emulator.targets import TargetModel

GB = 1e9


@dataclass(frozen=True)
class PlacementOptions:
    grid: object = "full"  # wafer grid per system: "full" (usable fabric), "smallest" (fits the model), (rows, cols)
    systems: int | None = None  # wafer: the system count of a published run (placement reports if it cannot hold all)
    tensor_parallel: int | None = None  # devices: the TP degree of a published run
    context_tokens: int | None = None  # KV cache reserved for one request (default: the target's)


DEFAULT_PLACEMENT = PlacementOptions()


@dataclass(frozen=True)
class WaferPlacement:
    target: str
    hardware: str
    context_tokens: int
    weight_bytes: float
    kv_bytes: float
    usable_bytes_per_core: float
    cores_per_layer: int  # one layer's weights + KV cache
    cores_for_embeddings: int  # token embedding + LM head
    grid_rows: int  # the grid each system uses
    grid_cols: int
    layers_per_system: tuple  # how many layers land on each system
    systems_needed: int
    systems: int  # what the timing uses (= systems_needed unless a published run forces it)
    # a layer-region layout: the cores holding each part (weights, and the attention's KV cache)
    attention_cores: int = 1  # one layer's attention (+ norms, router, its KV cache)
    expert_cores: int = 1  # one MoE layer's routed experts, interleaved: every core holds a slice of each
    shared_expert_cores: int = 0  # one MoE layer's shared experts
    dense_layer_cores: int = 1  # a whole dense layer
    moe_layer_cores: int = 0  # a whole MoE layer (attention + every expert)
    head_cores: int = 1  # the LM-head matrix (the token table's cores when the head is tied to it)
    notes: tuple = ()

    kind = "wafer"

    @property
    def devices(self) -> int:
        return self.systems

    @property
    def fits(self) -> bool:
        return self.systems >= self.systems_needed


@dataclass(frozen=True)
class DevicePlacement:
    target: str
    hardware: str
    context_tokens: int
    weight_bytes: float
    kv_bytes: float
    usable_bytes_per_device: float
    devices_needed: int  # ceil((weights + KV) / usable memory of one device)
    tensor_parallel: int  # devices sharing each layer (in one node)
    pipeline_stages: int  # nodes the layers are split across
    notes: tuple = ()

    kind = "device"

    @property
    def devices(self) -> int:
        return self.tensor_parallel * self.pipeline_stages

    @property
    def fits(self) -> bool:
        return self.devices >= self.devices_needed


def _pack(items: list, capacity: int) -> tuple:
    """Greedy in-order packing of (is_layer, cores) items onto systems of ``capacity`` cores.

    Returns (systems, layers per system). An item bigger than a system takes ceil(cores / capacity) systems."""
    layers, free = [], 0
    for is_layer, cores in items:
        if cores > capacity:
            layers += [int(is_layer)] + [0] * (math.ceil(cores / capacity) - 1)
            free = 0
            continue
        if not layers or cores > free:
            layers.append(0)
            free = capacity
        layers[-1] += int(is_layer)
        free -= cores
    return len(layers), tuple(layers)


def _grid(wafer: WaferProfile, grid, cores_needed: int) -> tuple:
    if grid == "full":
        return wafer.fabric_rows, wafer.fabric_cols
    if grid == "smallest":
        if cores_needed > wafer.grid_cores:
            return wafer.fabric_rows, wafer.fabric_cols
        rows = min(math.ceil(math.sqrt(cores_needed)), wafer.fabric_rows)
        return rows, math.ceil(cores_needed / rows)
    try:
        rows, cols = (int(value) for value in grid)
    except (TypeError, ValueError):
        raise EmulatorDataError(f"grid must be 'full', 'smallest' or [rows, cols], got {grid!r}") from None
    if not (1 <= rows <= wafer.fabric_rows and 1 <= cols <= wafer.fabric_cols):
        raise EmulatorDataError(f"grid {rows}x{cols} exceeds {wafer.name}'s {wafer.fabric_rows}x{wafer.fabric_cols}")
    return rows, cols


def place_on_wafer(target: TargetModel, wafer: WaferProfile, options: PlacementOptions = DEFAULT_PLACEMENT):
    context = options.context_tokens or target.context_tokens
    per_core = wafer.usable_bytes_per_core
    kv_per_layer = target.kv_bytes_per_token / target.layers * context
    regions = layer_regions(target, per_core, kv_per_layer)
    embed_cores = math.ceil(target.embedding_params * target.group_bytes("embeddings") / per_core)
    head_cores = math.ceil(target.head_params * target.group_bytes("embeddings") / per_core)
    # the cores that hold the LM-head matrix: its own, or the token table's when the head is tied to it
    head_matrix_cores = max(1, math.ceil(target.head_width * target.hidden_size * target.group_bytes("embeddings")
                                         / per_core))
    layer_items = ([(True, regions["dense_layer"])] * target.dense_mlp_layers
                   + [(True, regions["moe_layer"])] * target.moe_layers)
    cores_per_layer = max(cores for _, cores in layer_items)
    total_cores = embed_cores + sum(cores for _, cores in layer_items) + head_cores
    rows, cols = _grid(wafer, options.grid, total_cores)
    needed, layers_per_system = _pack([(False, embed_cores)] + layer_items + [(False, head_cores)], rows * cols)
    notes = []
    if cores_per_layer > rows * cols:
        notes.append(f"one layer needs {cores_per_layer} cores, more than a {rows}x{cols} grid: it spans systems")
    systems = needed
    if options.systems is not None:
        systems = int(options.systems)
        if systems < needed:
            held = systems * rows * cols * per_core / GB
            notes.append(f"the published run used {systems} system(s) with a {rows}x{cols} grid, which holds "
                         f"{held:.1f} GB of the {(target.weight_bytes + target.kv_bytes_per_token * context) / GB:.1f}"
                         f" GB needed; timing follows the published run")
    return WaferPlacement(
        target=target.name, hardware=wafer.name, context_tokens=context, weight_bytes=target.weight_bytes,
        kv_bytes=target.kv_bytes_per_token * context, usable_bytes_per_core=per_core,
        cores_per_layer=cores_per_layer, cores_for_embeddings=embed_cores + head_cores, grid_rows=rows,
        grid_cols=cols, layers_per_system=layers_per_system, systems_needed=needed, systems=systems,
        attention_cores=regions["attention"], expert_cores=regions["experts"],
        shared_expert_cores=regions["shared"], dense_layer_cores=regions["dense_layer"],
        moe_layer_cores=regions["moe_layer"], head_cores=head_matrix_cores, notes=tuple(notes),
    )


def layer_regions(target: TargetModel, usable_bytes_per_core: float, kv_bytes_per_layer: float) -> dict:
    """Cores of each part of a layer when every part holds its own weights (and the attention its KV cache):
    attention (+ norms, router), the routed experts (interleaved: each core holds a slice of every expert, so a
    token's active experts are spread over all of them), the shared experts, a whole dense and MoE layer."""
    def cores(nbytes: float) -> int:
        return max(1, math.ceil(nbytes / usable_bytes_per_core))

    moe = target.layer_group_params(True)
    return {
        "attention": cores(moe["attention"] * target.group_bytes("attention") + kv_bytes_per_layer),
        "experts": cores(moe["experts"] * target.group_bytes("experts")) if target.moe_layers else 0,
        "shared": cores(moe["mlp"] * target.group_bytes("mlp")) if target.shared_experts else 0,
        "dense_layer": cores(target.layer_bytes(False) + kv_bytes_per_layer),
        "moe_layer": cores(target.layer_bytes(True) + kv_bytes_per_layer) if target.moe_layers else 0,
    }


def _power_of_two_at_least(value: int) -> int:
    return 1 << max(0, math.ceil(math.log2(value)))


def place_on_devices(target: TargetModel, device: DeviceProfile, options: PlacementOptions = DEFAULT_PLACEMENT):
    context = options.context_tokens or target.context_tokens
    kv_bytes = target.kv_bytes_per_token * context
    needed = max(1, math.ceil((target.weight_bytes + kv_bytes) / device.usable_bytes))
    notes = []
    if options.tensor_parallel is not None:
        tp = int(options.tensor_parallel)
        if not 1 <= tp <= device.devices_per_node:
            raise EmulatorDataError(f"tensor_parallel {tp} must be in 1..{device.devices_per_node} for {device.name}")
    else:
        tp = min(_power_of_two_at_least(needed), device.devices_per_node)
    while target.heads % tp:  # ends at 1 at the latest
        tp //= 2
        notes.append(f"tensor-parallel degree lowered to {tp}: {target.heads} heads must split evenly")
    stages = math.ceil(needed / tp)
    if stages > 1:
        notes.append(f"{needed} devices needed, {device.devices_per_node} per node: {stages} pipeline stages")
    return DevicePlacement(
        target=target.name, hardware=device.name, context_tokens=context, weight_bytes=target.weight_bytes,
        kv_bytes=kv_bytes, usable_bytes_per_device=device.usable_bytes, devices_needed=needed,
        tensor_parallel=tp, pipeline_stages=stages, notes=tuple(notes),
    )


@lru_cache(maxsize=4096)
def place(target: TargetModel, hardware, options: PlacementOptions = DEFAULT_PLACEMENT):
    if isinstance(hardware, WaferProfile):
        return place_on_wafer(target, hardware, options)
    return place_on_devices(target, hardware, options)


def placement_report(placement) -> str:
    """Plain-text lines for `wafer-reasoner emulate --placement`."""
    lines = [
        f"target {placement.target} on {placement.hardware}",
        f"  weights {placement.weight_bytes / GB:.3f} GB; KV cache {placement.kv_bytes / GB:.3f} GB "
        f"for {placement.context_tokens} tokens",
    ]
    if placement.kind == "wafer":
        lines += [
            f"  usable SRAM per core {placement.usable_bytes_per_core:.0f} B; cores per layer "
            f"{placement.cores_per_layer}; embeddings + LM head {placement.cores_for_embeddings} cores",
            f"  grid per system {placement.grid_rows}x{placement.grid_cols} "
            f"({placement.grid_rows * placement.grid_cols} cores); layers per system "
            f"{', '.join(str(n) for n in placement.layers_per_system)}",
            f"  systems needed {placement.systems_needed}; fits one system: "
            f"{'yes' if placement.systems_needed == 1 else 'no'}; timing uses {placement.systems}",
        ]
    else:
        lines += [
            f"  usable memory per device {placement.usable_bytes_per_device / GB:.1f} GB; devices needed "
            f"{placement.devices_needed} (fits one device: {'yes' if placement.devices_needed == 1 else 'no'})",
            f"  tensor parallel {placement.tensor_parallel} x pipeline stages {placement.pipeline_stages} = "
            f"{placement.devices} devices",
        ]
    lines += [f"  note: {note}" for note in placement.notes]
    return "\n".join(lines)
