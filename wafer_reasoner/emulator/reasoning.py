"""Reasoning budgets: hidden tokens a target thinks before it writes its plan.

A high-reasoning model decodes hundreds or thousands of tokens before its answer; the robot waits for all of
them. The emulator charges them (``Emulator.plan_time(..., reasoning_tokens=n)``) and never decodes them: the
host's planner writes the same plan whatever the budget, so speed never changes a plan.

    settings = reasoning_from_dict({"min_tokens": 1000, "max_tokens": 4000,
                                    "classes": {"single": {"tokens": 500}}})
    settings.tokens_for("Llama-3.1-70B", "go to the kitchen", "single")     # 500

A budget is a fixed count (``tokens``) or a range drawn per query (``min_tokens`` .. ``max_tokens``, uniform,
the draw a pure function of the seed and the query's text, so the same query is always charged the same).
Budgets can differ per target (``targets``) and per query class (``classes``; the runtime names the class:
``single`` for one clause, ``compound`` for several); the most specific wins: the target's class, the target's,
the class, the default. Pure: no clocks, no global random state.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from wafer_reasoner.emulator.datafiles import EmulatorDataError, check_value

QUERY_CLASSES = ("single", "compound")


@dataclass(frozen=True)
class ReasoningBudget:
    tokens: int = 0  # fixed hidden tokens per query (when no range is given)
    min_tokens: int = 0  # a range drawn per query: min_tokens .. max_tokens, uniform
    max_tokens: int = 0
    seed: int = 0  # the draw's seed

    def __post_init__(self):
        for name in ("tokens", "min_tokens", "max_tokens", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise EmulatorDataError(f"reasoning {name} must be a whole number >= 0, got {value!r}")
        if self.max_tokens and self.max_tokens < self.min_tokens:
            raise EmulatorDataError(f"reasoning max_tokens ({self.max_tokens}) < min_tokens ({self.min_tokens})")
        if self.max_tokens and self.tokens:
            raise EmulatorDataError("reasoning: give either tokens or min_tokens/max_tokens, not both")

    @property
    def drawn(self) -> bool:
        return self.max_tokens > 0

    @property
    def mean_tokens(self) -> float:
        return (self.min_tokens + self.max_tokens) / 2.0 if self.drawn else float(self.tokens)

    def tokens_for(self, query: str) -> int:
        """The budget charged for ``query``: the fixed count, or the query's own draw from the range."""
        if not self.drawn:
            return self.tokens
        digest = hashlib.sha256(f"{self.seed}\n{query}".encode("utf-8")).digest()
        return self.min_tokens + int.from_bytes(digest[:8], "big") % (self.max_tokens - self.min_tokens + 1)


@dataclass(frozen=True)
class ReasoningSettings:
    default: ReasoningBudget = ReasoningBudget()
    classes: tuple = ()  # ((query class, ReasoningBudget), ...)
    targets: tuple = ()  # ((target name, ReasoningSettings without targets), ...)

    def budget(self, target: str, query_class: str = "") -> ReasoningBudget:
        """The most specific budget: the target's class, the target's, the class, the default."""
        for name, settings in self.targets:
            if name == target:
                return settings.budget("", query_class)
        for name, budget in self.classes:
            if name == query_class:
                return budget
        return self.default

    def tokens_for(self, target: str, query: str, query_class: str = "") -> int:
        return self.budget(target, query_class).tokens_for(query)


NO_REASONING = ReasoningSettings()
BUDGET_KEYS = ("tokens", "min_tokens", "max_tokens", "seed")


def _budget(where: str, data: dict) -> ReasoningBudget:
    values = {key: check_value(where, key, data[key], "nonnegative") for key in BUDGET_KEYS if key in data}
    if any(int(value) != value for value in values.values()):
        raise EmulatorDataError(f"{where}: reasoning token counts and seed must be whole numbers")
    return ReasoningBudget(**{key: int(value) for key, value in values.items()})


def reasoning_from_dict(data, *, where: str = "emulator settings reasoning", nested: bool = True) -> ReasoningSettings:
    """ReasoningSettings from a mapping (config/emulator.yaml's ``reasoning``); None or {} is no reasoning."""
    if data in (None, {}):
        return NO_REASONING
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{where}: expected a mapping")
    allowed = set(BUDGET_KEYS) | {"classes"} | ({"targets"} if nested else set())
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise EmulatorDataError(f"{where}: unknown field(s) {', '.join(unknown)}")
    classes = data.get("classes") or {}
    if not isinstance(classes, dict) or set(classes) - set(QUERY_CLASSES):
        raise EmulatorDataError(f"{where}: 'classes' must map query classes ({', '.join(QUERY_CLASSES)}) to budgets")
    class_budgets = tuple(sorted((name, _budget(f"{where}.classes.{name}", entry or {}))
                                 for name, entry in classes.items()))
    targets = data.get("targets") or {}
    if not isinstance(targets, dict):
        raise EmulatorDataError(f"{where}: 'targets' must map target names to budgets")
    target_settings = tuple(sorted((str(name), reasoning_from_dict(entry or {}, where=f"{where}.targets.{name}",
                                                                   nested=False))
                                   for name, entry in targets.items()))
    return ReasoningSettings(default=_budget(where, data), classes=class_budgets, targets=target_settings)
