"""Choosing the emulated triple (target model, hardware, serving stack) from a settings mapping
(config/emulator.yaml, the node's ``emulator.*`` parameters, the command line's flags).

Pure: every name is looked up in the mappings given; an unknown name is an EmulatorDataError listing the known
ones. Speculative decoding comes from the stack's data (the targets it decodes speculatively, with its draft and
its fitted acceptance rate) unless the settings ask for their own (speculative.enabled with an explicit rate) or
turn it off (speculative.stack: false).
"""

from __future__ import annotations

from wafer_reasoner.emulator.datafiles import EmulatorDataError, check_value
from wafer_reasoner.emulator.emulator import Emulator, SpeculativeSettings
from wafer_reasoner.emulator.hardware import pick
from wafer_reasoner.emulator.placement import PlacementOptions
from wafer_reasoner.emulator.stacks import stack_for
from wafer_reasoner.emulator.targets import PLANNER, load_targets, planner_target, with_precision

SETTINGS_KEYS = {"target_model", "hardware", "stack", "bytes_per_param", "placement", "speculative", "reasoning",
                 "serving_overhead", "hardware_files"}
SPECULATIVE_KEYS = {"enabled", "stack", "draft_model", "draft_tokens", "acceptance_rate"}


def known_targets(targets_path, planner_dir) -> dict:
    """Presets from ``targets_path``, plus the planner in ``planner_dir`` when its genai_config.json is there."""
    targets = load_targets(targets_path)
    try:
        targets[PLANNER] = planner_target(planner_dir)
    except EmulatorDataError:
        pass  # no shipped model yet: choosing "planner" reports it (select)
    return targets


def placement_options(settings: dict) -> PlacementOptions:
    data = settings.get("placement") or {}
    if not isinstance(data, dict):
        raise EmulatorDataError("emulator settings: 'placement' must be a mapping")
    unknown = set(data) - {"grid", "systems", "tensor_parallel", "context_tokens"}
    if unknown:
        raise EmulatorDataError(f"emulator settings: unknown placement field(s) {', '.join(sorted(unknown))}")
    grid = data.get("grid", "full")
    grid = tuple(grid) if isinstance(grid, list) else grid
    values = {}
    for name in ("systems", "tensor_parallel", "context_tokens"):
        if data.get(name) is not None:
            values[name] = check_value("emulator settings placement", name, data[name], "count")
    return PlacementOptions(grid=grid, **values)


def stack_speculation(stack, target, targets: dict) -> SpeculativeSettings | None:
    """The stack's own speculative decoding of ``target`` (its draft at the target's precision, its acceptance
    rate), or None where the stack's data names none for that target."""
    entry = stack.speculation(target.name)
    if entry is None:
        return None
    draft = with_precision(pick(targets, entry.draft_model, "draft model"), target.bytes_per_param)
    return SpeculativeSettings(draft=draft, draft_tokens=entry.draft_tokens, acceptance_rate=stack.acceptance_rate)


def _asked_speculation(spec: dict, target, targets: dict) -> SpeculativeSettings:
    for key in ("draft_model", "draft_tokens", "acceptance_rate"):
        if key not in spec:
            raise EmulatorDataError(f"emulator settings: speculative.enabled needs '{key}'")
    draft = with_precision(pick(targets, spec["draft_model"], "draft model"), target.bytes_per_param)
    rate = spec["acceptance_rate"]
    if isinstance(rate, bool) or not isinstance(rate, (int, float)):
        raise EmulatorDataError(f"emulator settings: speculative acceptance_rate must be a number, got {rate!r}")
    return SpeculativeSettings(draft=draft, draft_tokens=spec["draft_tokens"], acceptance_rate=float(rate))


def _checked_mapping(value, known: set, what: str, field: str) -> dict:
    """``value`` if it is a mapping with only ``known`` keys, else an EmulatorDataError naming ``what``."""
    if not isinstance(value, dict):
        raise EmulatorDataError(f"emulator settings: {what} must be a mapping")
    unknown = set(value) - known
    if unknown:
        raise EmulatorDataError(f"emulator settings: unknown {field}field(s) {', '.join(sorted(unknown))}")
    return value


def speculation(settings: dict, stack, target, targets: dict) -> SpeculativeSettings | None:
    spec = _checked_mapping(settings.get("speculative") or {}, SPECULATIVE_KEYS, "'speculative'", "speculative ")
    for key in ("enabled", "stack"):
        if not isinstance(spec.get(key, key == "stack"), bool):
            raise EmulatorDataError(f"emulator settings: speculative.{key} must be true or false")
    if spec.get("enabled", False):
        return _asked_speculation(spec, target, targets)
    return stack_speculation(stack, target, targets) if spec.get("stack", True) else None


def select(settings: dict, hardware_profiles: dict, stacks: tuple, targets: dict) -> tuple:
    """(target, hardware, stack, speculative settings or None, placement options) named by the settings mapping.

    ``stacks``: (stacks, defaults) as load_stacks returns them; settings 'stack' names one, or empty / absent
    for the hardware's default stack. The stack's serving precision applies unless 'bytes_per_param' is set."""
    _checked_mapping(settings, SETTINGS_KEYS, "the settings", "")
    for key in ("target_model", "hardware"):
        if not isinstance(settings.get(key), str):
            raise EmulatorDataError(f"emulator settings: '{key}' must name one of the known entries")
    stack_name = settings.get("stack")
    if stack_name is not None and not isinstance(stack_name, str):
        raise EmulatorDataError("emulator settings: 'stack' must name a stack (or be empty for the default)")
    name = settings["target_model"]
    if name == PLANNER and PLANNER not in targets:
        raise EmulatorDataError("target 'planner' needs the shipped model's genai_config.json "
                                "(wafer_reasoner/models/; run `make train`)")
    target = pick(targets, name, "target model")
    hardware = pick(hardware_profiles, settings["hardware"])
    stack = stack_for(*stacks, hardware, stack_name)
    precision = settings.get("bytes_per_param")
    if precision is not None:
        target = with_precision(target, check_value("emulator settings", "bytes_per_param", precision, "positive"))
    elif stack.bytes_per_param:
        target = with_precision(target, stack.bytes_per_param)
    return target, hardware, stack, speculation(settings, stack, target, targets), placement_options(settings)


def emulator_from_settings(settings: dict, hardware_profiles: dict, stacks: tuple, targets: dict) -> Emulator:
    """The Emulator the settings name (``select``); 'serving_overhead' (default false: the robot's own engine)
    charges the stack's serving overhead (its API path) before the first token of every query."""
    serving = settings.get("serving_overhead", False)
    if not isinstance(serving, bool):
        raise EmulatorDataError("emulator settings: 'serving_overhead' must be true or false")
    target, hardware, stack, speculative, options = select(settings, hardware_profiles, stacks, targets)
    return Emulator(target, hardware, stack, speculative=speculative, options=options, serving=serving)
