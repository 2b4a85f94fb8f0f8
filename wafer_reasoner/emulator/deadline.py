"""Best-of-N under a deadline in emulated time: how many candidates the emulated hardware fits.

The host decodes all N candidates of a query as one batch (row 0 greedy, rows 1.. sampled, each row's tokens
independent of N). Which of them the robot may use is decided here, on the emulated (target, hardware, stack)
triple: a batch of the first n rows costs the serving overhead, one shared prefill, then decode steps at batch n
through each row's hidden reasoning (``reasoning_tokens``) and until the longest plan is done, and n is the
largest count whose emulated time fits the deadline. A slower profile therefore gets fewer
candidates, exactly as a batch sized for that hardware would. When not even one candidate fits, the greedy one
is used and the choice says it is over the deadline. Speed never changes a candidate, only how many are kept.

    choice = choose_within_deadline(emulator, prompt_tokens, lengths, scores, valid, deadline_ms=150.0,
                                    reasoning_tokens=0)

Pure: no clocks, no randomness. ``runtime/best_of_n.py`` applies it to a planner model's candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

from wafer_reasoner.emulator.emulator import EmulatedTiming, Emulator


@dataclass(frozen=True)
class DeadlineChoice:
    index: int  # chosen candidate row
    candidates: int  # rows kept: the first n, those that fit the deadline in emulated time
    decoded: int  # rows the host decoded
    deadline_ms: float  # 0: none
    timing: EmulatedTiming  # charged: the first ``candidates`` rows as one batch, until the longest is done
    over_deadline: bool  # not even the greedy candidate fits on this hardware

    def to_dict(self) -> dict:
        return {"candidates": self.candidates, "decoded": self.decoded, "chosen": self.index,
                "deadline_ms": self.deadline_ms, "over_deadline": self.over_deadline}


def batch_time(emulator: Emulator, prompt_tokens: int, lengths, reasoning_tokens: int = 0) -> EmulatedTiming:
    """The emulated time of decoding candidates of ``lengths`` generated tokens as one batch, each after
    ``reasoning_tokens`` hidden ones."""
    return emulator.plan_time(prompt_tokens, max(lengths), candidates=len(lengths), reasoning_tokens=reasoning_tokens)


def candidates_within(emulator: Emulator, prompt_tokens: int, lengths, deadline_ms: float,
                      reasoning_tokens: int = 0) -> tuple:
    """(n, timing of the first n rows): the most leading rows whose batch fits ``deadline_ms`` (0: no deadline);
    n = 1 when none fits."""
    lengths = tuple(lengths)
    if not lengths:
        raise ValueError("need at least one candidate")
    for count in range(len(lengths), 0, -1):
        timing = batch_time(emulator, prompt_tokens, lengths[:count], reasoning_tokens)
        if deadline_ms <= 0 or timing.emulated_ms <= deadline_ms or count == 1:
            return count, timing
    raise AssertionError("unreachable: count 1 always returns")


def best_row(scores, valid, count: int) -> int:
    """Among rows 0..count-1, the valid one with the highest score (the first on ties); row 0 when none is."""
    kept = [row for row in range(count) if valid[row]]
    if not kept:
        return 0
    return max(kept, key=lambda row: scores[row])  # max() keeps the first of equal scores


def choose_within_deadline(emulator: Emulator, prompt_tokens: int, lengths, scores, valid,
                           deadline_ms: float, reasoning_tokens: int = 0) -> DeadlineChoice:
    """lengths/scores/valid: one entry per decoded row, row order (row 0 greedy)."""
    if not len(lengths) == len(scores) == len(valid):
        raise ValueError("lengths, scores and valid need one entry per candidate")
    if not deadline_ms >= 0:
        raise ValueError(f"deadline_ms must be >= 0, got {deadline_ms!r}")
    count, timing = candidates_within(emulator, prompt_tokens, lengths, deadline_ms, reasoning_tokens)
    over = deadline_ms > 0 and timing.emulated_ms > deadline_ms
    return DeadlineChoice(index=best_row(scores, valid, count), candidates=count, decoded=len(lengths),
                          deadline_ms=float(deadline_ms), timing=timing, over_deadline=over)
