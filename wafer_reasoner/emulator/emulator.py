"""The Emulator: the time a (target model, hardware) pair would take for one planning query.

    emulator = Emulator(target, hardware)      # runtime/emulation.py builds one from config/emulator.yaml
    timing = emulator.plan_time(prompt_tokens=120, generated_tokens=30)
    timing.emulated_ms, timing.bound

Pure: no clocks, no randomness, no I/O after construction; the same inputs give the same times. Speed never
changes a plan, only the time charged for it. Speculative decoding is used only when SpeculativeSettings are
given (config: speculative.enabled), with an explicit acceptance rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from wafer_reasoner.emulator.datafiles import EmulatorDataError, check_value
from wafer_reasoner.emulator.hardware import pick
from wafer_reasoner.emulator.placement import DEFAULT_PLACEMENT, PlacementOptions, place
from wafer_reasoner.emulator.targets import PLANNER, TargetModel, load_targets, planner_target, with_precision
from wafer_reasoner.emulator.timing import forward, speculative_step


@dataclass(frozen=True)
class SpeculativeSettings:
    draft: TargetModel  # the small model that drafts tokens (same vocabulary as the target)
    draft_tokens: int = 4  # k: tokens drafted per step
    acceptance_rate: float = 0.8  # probability that the target accepts each drafted token

    def __post_init__(self):
        if not isinstance(self.draft_tokens, int) or self.draft_tokens < 1:
            raise EmulatorDataError(f"speculative draft_tokens must be a whole number >= 1, got {self.draft_tokens!r}")
        if not 0.0 <= self.acceptance_rate <= 1.0:
            raise EmulatorDataError(f"speculative acceptance_rate must be in [0, 1], got {self.acceptance_rate!r}")


@dataclass(frozen=True)
class EmulatedTiming:
    prefill_s: float  # the prompt's forward pass (it yields the first generated token)
    decode_s: float  # the remaining generated_tokens - 1 tokens
    total_s: float
    per_token_s: float  # mean decode time per generated token
    bound: str  # what limits decode (prefill when nothing is decoded): fabric-latency, memory-bandwidth, ...
    prompt_tokens: int
    generated_tokens: int
    target: str
    hardware: str
    devices: int  # wafer systems or GPUs in use
    speculative: bool
    tokens_per_step: float = 1.0  # expected tokens per decode step (> 1 only with speculative decoding)
    candidates: int = 1  # best-of-N plans decoded as one batch (generated_tokens is the longest one's)

    @property
    def emulated_ms(self) -> float:
        return self.total_s * 1000.0

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.per_token_s if self.per_token_s > 0 else 0.0

    def to_dict(self) -> dict:
        return {
            "target": self.target, "hardware": self.hardware, "devices": self.devices,
            "prompt_tokens": self.prompt_tokens, "generated_tokens": self.generated_tokens,
            "prefill_ms": self.prefill_s * 1e3, "decode_ms": self.decode_s * 1e3, "emulated_ms": self.emulated_ms,
            "per_token_ms": self.per_token_s * 1e3, "tokens_per_s": self.tokens_per_s, "bound": self.bound,
            "speculative": self.speculative, "tokens_per_step": self.tokens_per_step, "candidates": self.candidates,
        }


class Emulator:
    """Charges a target model's time on a hardware profile; placement is computed once, here."""

    def __init__(self, target: TargetModel, hardware, *, speculative: SpeculativeSettings | None = None,
                 options: PlacementOptions = DEFAULT_PLACEMENT):
        self.target = target
        self.hardware = hardware
        self.speculative = speculative
        self.options = options
        self.placement = place(target, hardware, options)
        self.draft_placement = None
        if speculative is not None:
            if speculative.draft.vocab_size != target.vocab_size:
                raise EmulatorDataError(f"draft {speculative.draft.name} and target {target.name} must share a "
                                        f"vocabulary ({speculative.draft.vocab_size} != {target.vocab_size})")
            grid = options.grid if isinstance(options.grid, str) else "full"
            draft_options = PlacementOptions(grid=grid, context_tokens=options.context_tokens)
            self.draft_placement = place(speculative.draft, hardware, draft_options)

    def forward(self, tokens: int, past_tokens: float = 0.0, batch: int = 1):
        """The target's ForwardCost for ``tokens`` new tokens after ``past_tokens`` cached ones (x ``batch``)."""
        return forward(self.target, self.hardware, self.placement, tokens, past_tokens, batch)

    def decode_step(self, past_tokens: float, batch: int = 1) -> tuple:
        """(seconds per generated token of each sequence, bound, expected tokens per step) at a context of
        ``past_tokens``, ``batch`` sequences decoded together."""
        if self.speculative is None:
            cost = self.forward(1, past_tokens, batch)
            return cost.seconds, cost.bound, 1.0
        settings = self.speculative
        draft_one = forward(settings.draft, self.hardware, self.draft_placement, 1, past_tokens, batch)
        verify = self.forward(settings.draft_tokens + 1, past_tokens, batch)
        step = speculative_step(draft_one, verify, settings.draft_tokens, settings.acceptance_rate)
        return step.per_token_s, step.bound, step.tokens

    def prefill(self, prompt_tokens: int) -> float:
        if prompt_tokens < 1:
            return 0.0
        seconds = self.forward(prompt_tokens, 0.0).seconds
        if self.speculative is not None:  # the draft needs the prompt's KV cache too (run after the target's)
            seconds += forward(self.speculative.draft, self.hardware, self.draft_placement, prompt_tokens, 0.0).seconds
        return seconds

    def plan_time(self, prompt_tokens: int, generated_tokens: int, candidates: int = 1) -> EmulatedTiming:
        """Prefill of the prompt (yields the first token), then generated_tokens - 1 decode steps.

        Step i (1-based) attends over prompt + i keys; steps are charged at the mean context prompt + (steps - 1) / 2,
        exact while the step time is linear in the context (it is, as long as one bound holds). Best-of-N:
        ``candidates`` sequences share the one prefill and decode together until the longest
        (``generated_tokens``) is done."""
        for name, value in (("prompt_tokens", prompt_tokens), ("generated_tokens", generated_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
            raise ValueError(f"candidates must be a whole number >= 1, got {candidates!r}")
        prefill_s = self.prefill(prompt_tokens)
        steps = max(generated_tokens - 1, 0)
        per_token_s, bound, tokens_per_step = self.decode_step(prompt_tokens + max(steps - 1, 0) / 2.0, candidates)
        decode_s = steps * per_token_s
        if steps == 0:
            bound = self.forward(max(prompt_tokens, 1), 0.0).bound
        return EmulatedTiming(
            prefill_s=prefill_s, decode_s=decode_s, total_s=prefill_s + decode_s, per_token_s=per_token_s,
            bound=bound, prompt_tokens=prompt_tokens, generated_tokens=generated_tokens, target=self.target.name,
            hardware=self.hardware.name, devices=self.placement.devices, speculative=self.speculative is not None,
            tokens_per_step=tokens_per_step, candidates=candidates,
        )


# -- choosing the pair from config/emulator.yaml ----------------------------------------------------------------
SETTINGS_KEYS = {"target_model", "hardware", "bytes_per_param", "placement", "speculative", "hardware_files"}


def known_targets(targets_path, planner_dir) -> dict:
    """Presets from ``targets_path``, plus the planner in ``planner_dir`` when its genai_config.json is there."""
    targets = load_targets(targets_path)
    try:
        targets[PLANNER] = planner_target(planner_dir)
    except EmulatorDataError:
        pass  # no shipped model yet: choosing "planner" reports it (select)
    return targets


def _placement_options(settings: dict) -> PlacementOptions:
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


def select(settings: dict, hardware_profiles: dict, targets: dict) -> tuple:
    """(target, hardware, speculative settings or None, placement options) named by the settings mapping.

    Pure: every name is looked up in the given mappings; an unknown name is an EmulatorDataError listing the
    known ones."""
    if not isinstance(settings, dict):
        raise EmulatorDataError("emulator settings must be a mapping")
    unknown = set(settings) - SETTINGS_KEYS
    if unknown:
        raise EmulatorDataError(f"emulator settings: unknown field(s) {', '.join(sorted(unknown))}")
    for key in ("target_model", "hardware"):
        if not isinstance(settings.get(key), str):
            raise EmulatorDataError(f"emulator settings: '{key}' must name one of the known entries")
    name = settings["target_model"]
    if name == PLANNER and PLANNER not in targets:
        raise EmulatorDataError("target 'planner' needs the shipped model's genai_config.json "
                                "(wafer_reasoner/models/; run `make train`)")
    target = pick(targets, name, "target model")
    precision = settings.get("bytes_per_param")
    if precision is not None:
        target = with_precision(target, check_value("emulator settings", "bytes_per_param", precision, "positive"))
    hardware = pick(hardware_profiles, settings["hardware"])
    speculative = None
    spec = settings.get("speculative") or {}
    if not isinstance(spec, dict):
        raise EmulatorDataError("emulator settings: 'speculative' must be a mapping")
    if not isinstance(spec.get("enabled", False), bool):
        raise EmulatorDataError("emulator settings: speculative.enabled must be true or false")
    if spec.get("enabled", False):
        unknown = set(spec) - {"enabled", "draft_model", "draft_tokens", "acceptance_rate"}
        if unknown:
            raise EmulatorDataError(f"emulator settings: unknown speculative field(s) {', '.join(sorted(unknown))}")
        for key in ("draft_model", "draft_tokens", "acceptance_rate"):
            if key not in spec:
                raise EmulatorDataError(f"emulator settings: speculative.enabled needs '{key}'")
        draft = with_precision(pick(targets, spec["draft_model"], "draft model"), target.bytes_per_param)
        rate = spec["acceptance_rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise EmulatorDataError(f"emulator settings: speculative acceptance_rate must be a number, got {rate!r}")
        speculative = SpeculativeSettings(draft=draft, draft_tokens=spec["draft_tokens"], acceptance_rate=float(rate))
    return target, hardware, speculative, _placement_options(settings)
