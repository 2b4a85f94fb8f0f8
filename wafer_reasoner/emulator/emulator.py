"""The Emulator: the time a (target model, hardware, serving stack) triple would take for one planning query.

    emulator = Emulator(target, hardware, stack)      # runtime/emulation.py builds one from config/emulator.yaml
    timing = emulator.plan_time(prompt_tokens=120, generated_tokens=30, reasoning_tokens=0)
    timing.emulated_ms, timing.bound

Pure: no clocks, no randomness, no I/O after construction; the same inputs give the same times. Speed never
changes a plan, only the time charged for it. Speculative decoding is used when SpeculativeSettings are given:
``select`` gives them where the stack's data says the service decodes that target speculatively, or where the
settings ask for it (speculative.enabled) with an explicit acceptance rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.placement import DEFAULT_PLACEMENT, PlacementOptions, place
from wafer_reasoner.emulator.targets import TargetModel
from wafer_reasoner.emulator.timing import first_token_seconds, forward, speculative_step


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
    decode_s: float  # the remaining reasoning_tokens + generated_tokens - 1 tokens
    total_s: float  # serving_s + prefill_s + decode_s
    per_token_s: float  # mean decode time per generated token
    bound: str  # what limits decode (prefill when nothing is decoded): fabric-latency, memory-bandwidth, ...
    prompt_tokens: int
    generated_tokens: int  # the plan's tokens (the longest candidate's)
    target: str
    hardware: str
    devices: int  # wafer systems or GPUs in use
    speculative: bool
    tokens_per_step: float = 1.0  # expected tokens per decode step (> 1 only with speculative decoding)
    candidates: int = 1  # best-of-N plans decoded as one batch (generated_tokens is the longest one's)
    stack: str = ""  # the serving stack
    serving_s: float = 0.0  # the stack's serving overhead before the first token
    reasoning_tokens: int = 0  # hidden tokens decoded before the plan (charged, never shown)

    @property
    def emulated_ms(self) -> float:
        return self.total_s * 1000.0

    @property
    def first_token_s(self) -> float:
        return first_token_seconds(self.prefill_s, self.serving_s)

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.per_token_s if self.per_token_s > 0 else 0.0

    def to_dict(self) -> dict:
        return {
            "target": self.target, "hardware": self.hardware, "stack": self.stack, "devices": self.devices,
            "prompt_tokens": self.prompt_tokens, "reasoning_tokens": self.reasoning_tokens,
            "generated_tokens": self.generated_tokens, "serving_ms": self.serving_s * 1e3,
            "prefill_ms": self.prefill_s * 1e3, "decode_ms": self.decode_s * 1e3, "emulated_ms": self.emulated_ms,
            "per_token_ms": self.per_token_s * 1e3, "tokens_per_s": self.tokens_per_s, "bound": self.bound,
            "speculative": self.speculative, "tokens_per_step": self.tokens_per_step, "candidates": self.candidates,
        }


def _whole(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return value


class Emulator:
    """Charges a target model's time on a hardware profile under a serving stack; placement is computed once."""

    def __init__(self, target: TargetModel, hardware, stack, *, speculative: SpeculativeSettings | None = None,
                 options: PlacementOptions = DEFAULT_PLACEMENT, serving: bool = True):
        if options.tensor_parallel is None and getattr(stack, "tensor_parallel", 0):
            options = PlacementOptions(grid=options.grid, systems=options.systems,
                                       tensor_parallel=min(stack.tensor_parallel, hardware.devices_per_node),
                                       context_tokens=options.context_tokens)
        self.target = target
        self.hardware = hardware
        self.stack = stack
        self.serving = serving  # charge the stack's serving overhead before the first token
        self.speculative = speculative
        self.options = options
        self.placement = place(target, hardware, options)
        self.draft_placement = None
        if speculative is not None:
            if speculative.draft.vocab_size != target.vocab_size:
                raise EmulatorDataError(f"draft {speculative.draft.name} and target {target.name} must share a "
                                        f"vocabulary ({speculative.draft.vocab_size} != {target.vocab_size})")
            # a wafer's draft gets its own system(s); on devices it runs in the target's engine, over its devices
            grid = options.grid if isinstance(options.grid, str) else "full"
            tensor_parallel = getattr(self.placement, "tensor_parallel", None)
            draft_options = PlacementOptions(grid=grid, context_tokens=options.context_tokens,
                                             tensor_parallel=tensor_parallel)
            self.draft_placement = place(speculative.draft, hardware, draft_options)

    def forward(self, tokens: int, past_tokens: float = 0.0, batch: int = 1):
        """The target's ForwardCost for ``tokens`` new tokens after ``past_tokens`` cached ones (x ``batch``)."""
        return forward(self.target, self.hardware, self.stack, self.placement, tokens, past_tokens, batch)

    def decode_step(self, past_tokens: float, batch: int = 1) -> tuple:
        """(seconds per generated token of each sequence, bound, expected tokens per step) at a context of
        ``past_tokens``, ``batch`` sequences decoded together."""
        if self.speculative is None:
            cost = self.forward(1, past_tokens, batch)
            return cost.seconds, cost.bound, 1.0
        settings = self.speculative
        draft_one = forward(settings.draft, self.hardware, self.stack, self.draft_placement, 1, past_tokens, batch)
        verify = self.forward(settings.draft_tokens + 1, past_tokens, batch)
        step = speculative_step(draft_one, verify, settings.draft_tokens, settings.acceptance_rate)
        return step.per_token_s, step.bound, step.tokens

    def prefill(self, prompt_tokens: int) -> float:
        if prompt_tokens < 1:
            return 0.0
        seconds = self.forward(prompt_tokens, 0.0).seconds
        if self.speculative is not None:  # the draft needs the prompt's KV cache too (run after the target's)
            draft = self.speculative.draft
            seconds += forward(draft, self.hardware, self.stack, self.draft_placement, prompt_tokens, 0.0).seconds
        return seconds

    def first_token(self, prompt_tokens: int) -> float:
        """Seconds to the first token: the stack's serving overhead (when ``serving``) + the prefill."""
        return first_token_seconds(self.prefill(prompt_tokens), self.stack.serving_overhead_s if self.serving else 0.0)

    def plan_time(self, prompt_tokens: int, generated_tokens: int, candidates: int = 1,
                  reasoning_tokens: int = 0) -> EmulatedTiming:
        """Serving overhead, prefill of the prompt (yields the first token), then reasoning_tokens +
        generated_tokens - 1 decode steps: the hidden reasoning first, then the plan.

        Step i (1-based) attends over prompt + i keys; steps are charged at the mean context prompt + (steps - 1) / 2,
        exact while the step time is linear in the context (it is, as long as one bound holds). Best-of-N:
        ``candidates`` sequences share the one prefill and decode together (each its own reasoning) until the
        longest (``generated_tokens``) is done."""
        _whole("prompt_tokens", prompt_tokens, 0)
        _whole("generated_tokens", generated_tokens, 0)
        _whole("reasoning_tokens", reasoning_tokens, 0)
        _whole("candidates", candidates, 1)
        prefill_s = self.prefill(prompt_tokens)
        steps = max(reasoning_tokens + generated_tokens - 1, 0)
        per_token_s, bound, tokens_per_step = self.decode_step(prompt_tokens + max(steps - 1, 0) / 2.0, candidates)
        decode_s = steps * per_token_s
        if steps == 0:
            bound = self.forward(max(prompt_tokens, 1), 0.0).bound
        serving_s = self.stack.serving_overhead_s if self.serving else 0.0
        return EmulatedTiming(
            prefill_s=prefill_s, decode_s=decode_s, total_s=serving_s + prefill_s + decode_s,
            per_token_s=per_token_s, bound=bound, prompt_tokens=prompt_tokens, generated_tokens=generated_tokens,
            target=self.target.name, hardware=self.hardware.name, devices=self.placement.devices,
            speculative=self.speculative is not None, tokens_per_step=tokens_per_step, candidates=candidates,
            stack=self.stack.name, serving_s=serving_s, reasoning_tokens=reasoning_tokens,
        )
