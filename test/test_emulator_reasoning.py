"""Reasoning budgets: hidden tokens a target thinks before its plan, charged by the emulator and counted against
the best-of-N deadline."""

import pytest

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.deadline import candidates_within
from wafer_reasoner.emulator.reasoning import NO_REASONING, ReasoningBudget, reasoning_from_dict
from wafer_reasoner.runtime.emulation import query_class, reasoning_for


def test_a_fixed_budget_charges_the_same_tokens_for_every_query():
    budget = ReasoningBudget(tokens=1200)
    assert budget.tokens_for("go to the kitchen") == budget.tokens_for("bring me the cup") == 1200
    assert budget.mean_tokens == 1200 and not budget.drawn
    assert NO_REASONING.tokens_for("any", "go", "single") == 0


def test_a_drawn_budget_is_the_querys_own_draw_within_the_range():
    budget = ReasoningBudget(min_tokens=1000, max_tokens=4000, seed=3)
    draws = [budget.tokens_for(f"query {i}") for i in range(200)]
    assert all(1000 <= d <= 4000 for d in draws)
    assert len(set(draws)) > 150  # spread over the range, not one value
    assert 2000 < sum(draws) / len(draws) < 3000 and budget.mean_tokens == 2500
    assert budget.tokens_for("query 7") == draws[7]  # the same query, the same draw
    reseeded = ReasoningBudget(min_tokens=1000, max_tokens=4000, seed=4)
    assert [reseeded.tokens_for(f"query {i}") for i in range(20)] != draws[:20]  # another seed, other draws


def test_the_most_specific_budget_wins():
    settings = reasoning_from_dict({
        "tokens": 100,
        "classes": {"compound": {"tokens": 300}},
        "targets": {"Big": {"tokens": 1000, "classes": {"compound": {"tokens": 4000}}}},
    })
    assert settings.tokens_for("Small", "go", "single") == 100
    assert settings.tokens_for("Small", "go then turn", "compound") == 300
    assert settings.tokens_for("Big", "go", "single") == 1000
    assert settings.tokens_for("Big", "go then turn", "compound") == 4000


@pytest.mark.parametrize("data, message", [
    ({"tokens": -1}, "nonnegative|>= 0"),
    ({"tokens": 1.5}, "whole numbers"),
    ({"min_tokens": 10, "max_tokens": 5}, "max_tokens"),
    ({"tokens": 10, "min_tokens": 1, "max_tokens": 5}, "either tokens"),
    ({"classes": {"long": {"tokens": 1}}}, "query classes"),
    ({"budget": 3}, "unknown field"),
    ({"targets": {"X": {"targets": {}}}}, "unknown field"),
])
def test_bad_reasoning_settings_are_refused(data, message):
    with pytest.raises(EmulatorDataError, match=message):
        reasoning_from_dict(data)


def test_the_query_class_counts_clauses():
    assert query_class("go to the kitchen") == "single"
    assert query_class("go to the kitchen then bring me the cup") == "compound"
    assert query_class(None) == "single"


def test_the_shipped_settings_charge_no_reasoning():
    """Defaults keep today's node: config/emulator.yaml charges no hidden tokens."""
    assert reasoning_for().tokens_for("planner", "go to the kitchen", "single") == 0


def test_reasoning_counts_against_the_best_of_n_deadline(emulator_on, targets):
    emulator = emulator_on(targets["Llama-3.1-70B"], "H200", serving=False)
    lengths = (9, 12, 7, 20, 11, 9, 15, 10)
    deadline = emulator.plan_time(60, 20, candidates=8).emulated_ms * 1.01
    assert candidates_within(emulator, 60, lengths, deadline)[0] == 8
    count, timing = candidates_within(emulator, 60, lengths, deadline, reasoning_tokens=500)
    assert count == 1 and timing.emulated_ms > deadline and timing.reasoning_tokens == 500
