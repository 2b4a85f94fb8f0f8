"""Serving stacks as data: the software a target runs under on a hardware profile (config/stacks.yaml).

The same hardware's published rate moves several-fold as its serving software changes, so the emulated pair is a
triple: target model, hardware, stack. A stack carries

* its published facts: the hardware it runs on, its date, the wafer layout (``grid``: every layer spread over
  the whole grid, WaferLLM's decode layout; ``region``: each layer on its own region of cores, the layer pipeline
  of Cerebras' pipelined execution), the serving precision, tensor parallelism, a fused one-shot all-reduce,
  the targets it decodes speculatively and with which draft;
* its software constants (``SOFTWARE``): collective, launch and bandwidth efficiency constants, the compute
  efficiency of large matrix products, the serving overhead before the first token, the draft acceptance rate.
  Each is fitted on the stack's own published rows where those rows depend on it (``fitted``), otherwise it is
  the median of the other stacks' fits (calibration.py); ``sources`` says which.

The physics constants live with the hardware (hardware.py) and are shared by every stack on it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from wafer_reasoner.emulator.datafiles import EmulatorDataError, build, check_value, read_yaml

LAYOUTS = ("grid", "region")
# How a device stack launches a step's kernels (a published fact of the software): "compiled" (CUDA graphs, a
# TensorRT engine, a C++ runtime: the launches cost a few us each) or "eager" (each kernel launched from Python,
# one after another: tens of us each). Software constants are pooled within one execution model only.
EXECUTIONS = ("compiled", "eager")
# The software constants of a stack, per kind of hardware.
SOFTWARE = {
    "wafer": ("routing_stage_latency_s", "system_link_latency_s", "compute_efficiency", "serving_overhead_s",
              "acceptance_rate"),
    "gpu": ("memory_efficiency", "kernel_overhead_s", "allreduce_step_latency_s", "compute_efficiency",
            "serving_overhead_s", "acceptance_rate"),
    "cpu": ("memory_efficiency", "kernel_overhead_s", "allreduce_step_latency_s", "compute_efficiency",
            "serving_overhead_s", "acceptance_rate"),
}
# Constants that are not a property of the hardware kind: a stack that cannot fit them takes the median over
# the stacks of every kind (drafting and the API path are the same problem on a wafer and on a GPU).
ANY_KIND = ("serving_overhead_s", "acceptance_rate")
# Constants pooled across execution models (the library's, not the launcher's): a small all-reduce's latency step.
ANY_EXECUTION = ("allreduce_step_latency_s",)


@dataclass(frozen=True)
class Speculation:
    """How a stack decodes one target speculatively (a published fact of the stack, or a stated assumption)."""

    target: str
    draft_model: str  # a preset: the small model (or draft head) that proposes tokens
    draft_tokens: int  # tokens drafted per step


@dataclass(frozen=True)
class ServingStack:
    name: str
    kind: str  # "wafer", "gpu" or "cpu": the kind of hardware it runs on
    date: str  # "YYYY-MM" of the software the figures describe
    source: str
    hardware: tuple = ()  # profile names it runs on
    layout: str = "region"  # wafer: "grid" or "region" (see the module docstring)
    execution: str = "compiled"  # devices: "compiled" or "eager" (EXECUTIONS)
    bytes_per_param: float = 0.0  # serving precision of every group (0: the target's own)
    tensor_parallel: int = 0  # devices: the stack's tensor-parallel degree (0: the fewest devices that hold it)
    fused_allreduce: bool = False  # devices: one-shot all-reduce fused with the next norm
    speculative: tuple = ()  # Speculation per target
    routing_stage_latency_s: float = 0.0  # wafer: one software relay stage of a fabric collective
    system_link_latency_s: float = 0.0  # wafer: one hand-off of the activations to the next system, as driven
    memory_efficiency: float = 1.0  # devices: achieved / peak memory bandwidth of decode's weight streaming
    kernel_overhead_s: float = 0.0  # devices: exposed cost of one kernel launch
    allreduce_step_latency_s: float = 0.0  # devices: one latency step of a small all-reduce
    compute_efficiency: float = 1.0  # achieved / peak FLOP/s of large matrix products (prefill)
    serving_overhead_s: float = 0.0  # before the first token: API, network, tokenization, queueing
    acceptance_rate: float = 0.0  # probability the target accepts each drafted token
    fitted: tuple = ()  # software constants fitted on this stack's own rows
    pooled: tuple = ()  # software constants taken as the median of the other stacks' fits (no row of its own)
    sources: tuple = ()

    def speculation(self, target: str) -> Speculation | None:
        for entry in self.speculative:
            if entry.target == target:
                return entry
        return None

    def constants(self) -> dict:
        """{name: value} of this stack's software constants."""
        return {name: getattr(self, name) for name in SOFTWARE[self.kind]}


STACK_KINDS = {
    "name": "text", "kind": "text", "date": "text", "source": "text", "layout": "text", "execution": "text",
    "bytes_per_param": "nonnegative", "tensor_parallel": "nonnegative", "fused_allreduce": "flag",
    "routing_stage_latency_s": "nonnegative", "system_link_latency_s": "nonnegative", "memory_efficiency": "fraction",
    "kernel_overhead_s": "nonnegative", "allreduce_step_latency_s": "nonnegative", "compute_efficiency": "fraction",
    "serving_overhead_s": "nonnegative", "acceptance_rate": "nonnegative",
}
STACK_DEFAULTS = {"layout": "region", "execution": "compiled", "bytes_per_param": 0.0, "tensor_parallel": 0,
                  "fused_allreduce": False,
                  "routing_stage_latency_s": 0.0, "system_link_latency_s": 0.0, "memory_efficiency": 1.0,
                  "kernel_overhead_s": 0.0, "allreduce_step_latency_s": 0.0, "compute_efficiency": 1.0,
                  "serving_overhead_s": 0.0, "acceptance_rate": 0.0}


def _speculation(where: str, data) -> tuple:
    if data in (None, {}):
        return ()
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{where}: 'speculative' must map target names to {{draft_model, draft_tokens}}")
    entries = []
    for target, entry in sorted(data.items()):
        if not isinstance(entry, dict) or set(entry) != {"draft_model", "draft_tokens"}:
            raise EmulatorDataError(f"{where}: speculative.{target} needs exactly draft_model and draft_tokens")
        draft = check_value(where, f"speculative.{target}.draft_model", entry["draft_model"], "text")
        tokens = check_value(where, f"speculative.{target}.draft_tokens", entry["draft_tokens"], "count")
        entries.append(Speculation(str(target), draft, tokens))
    return tuple(entries)


def stack_from_dict(name: str, data: dict, *, where: str = "stacks") -> ServingStack:
    where = f"{where} stack '{name}'"
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{where}: expected a mapping")
    data = dict(data)
    kind = data.get("kind")
    if kind not in SOFTWARE:
        raise EmulatorDataError(f"{where}: 'kind' must be one of {', '.join(SOFTWARE)}, got {kind!r}")
    hardware = data.pop("hardware", None)
    if not isinstance(hardware, list) or not hardware or not all(isinstance(h, str) for h in hardware):
        raise EmulatorDataError(f"{where}: 'hardware' must list the profile names the stack runs on")
    speculative = _speculation(where, data.pop("speculative", None))
    fitted, pooled = (_constant_list(where, kind, key, data.pop(key, None)) for key in ("fitted", "pooled"))
    if set(fitted) & set(pooled):
        raise EmulatorDataError(f"{where}: a constant is either fitted or pooled, not both")
    sourced = tuple(name for name in SOFTWARE[kind] if name in data or name in fitted or name in pooled)
    stack = build(ServingStack, where, {**data, "name": name}, STACK_KINDS, defaults=STACK_DEFAULTS, sourced=sourced)
    if stack.layout not in LAYOUTS:
        raise EmulatorDataError(f"{where}: layout must be one of {', '.join(LAYOUTS)}")
    if stack.execution not in EXECUTIONS:
        raise EmulatorDataError(f"{where}: execution must be one of {', '.join(EXECUTIONS)}")
    if stack.acceptance_rate > 1.0:
        raise EmulatorDataError(f"{where}: acceptance_rate must be in [0, 1]")
    if int(stack.tensor_parallel) != stack.tensor_parallel:
        raise EmulatorDataError(f"{where}: tensor_parallel must be a whole number")
    return replace(stack, hardware=tuple(hardware), speculative=speculative, fitted=fitted, pooled=pooled,
                   tensor_parallel=int(stack.tensor_parallel))


def _constant_list(where: str, kind: str, key: str, names) -> tuple:
    names = names or []
    unknown = sorted(set(names) - set(SOFTWARE[kind])) if isinstance(names, list) else ["(not a list)"]
    if unknown:
        raise EmulatorDataError(f"{where}: '{key}' names {', '.join(map(str, unknown))}; the software constants of "
                                f"a {kind} stack are {', '.join(SOFTWARE[kind])}")
    return tuple(names)


def load_stacks(path, extra_paths=()) -> tuple:
    """({name: ServingStack}, {hardware name: default stack name}) from a stacks file (config/stacks.yaml) and
    the ``stacks`` / ``defaults`` sections of each extra file (e.g. a host bench), later files winning."""
    stacks, defaults = {}, {}
    for index, file in enumerate([Path(path), *map(Path, extra_paths)]):
        data = read_yaml(file)
        entries = data.get("stacks")
        if index == 0 and (not isinstance(entries, dict) or not entries):
            raise EmulatorDataError(f"{file}: expected a non-empty 'stacks' mapping")
        for name, entry in (entries or {}).items():
            stacks[str(name)] = stack_from_dict(str(name), entry, where=str(file))
        named = data.get("defaults") or {}
        if not isinstance(named, dict):
            raise EmulatorDataError(f"{file}: 'defaults' must map hardware profile names to stack names")
        defaults.update({str(hw): str(stack) for hw, stack in named.items()})
    for hardware, name in defaults.items():
        if name not in stacks:
            raise EmulatorDataError(f"stack defaults: {hardware} -> unknown stack {name!r}")
        if hardware not in stacks[name].hardware:
            raise EmulatorDataError(f"stack defaults: stack {name!r} does not list hardware {hardware!r}")
    return stacks, defaults


def stack_for(stacks: dict, defaults: dict, hardware, name: str | None = None) -> ServingStack:
    """The stack ``name`` (or the hardware's default) checked to run on ``hardware`` (a profile)."""
    if not name:
        if hardware.name not in defaults:
            runs = sorted(stack_name for stack_name, stack in stacks.items() if hardware.name in stack.hardware)
            raise EmulatorDataError(f"hardware {hardware.name!r} has no default stack; name one of {', '.join(runs)}")
        name = defaults[hardware.name]
    if name not in stacks:
        raise EmulatorDataError(f"unknown stack {name!r}; known: {', '.join(sorted(stacks))}")
    stack = stacks[name]
    if hardware.name not in stack.hardware:
        raise EmulatorDataError(f"stack {name!r} runs on {', '.join(stack.hardware)}, not on {hardware.name!r}")
    if stack.kind != hardware.kind:
        raise EmulatorDataError(f"stack {name!r} is for {stack.kind} hardware; {hardware.name} is {hardware.kind}")
    return stack
