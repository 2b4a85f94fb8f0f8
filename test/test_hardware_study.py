"""Speed never changes a plan, the lockstep loop, reasoning budgets, and the study's reproducibility."""

import json
import random

import pytest

from wafer_reasoner.emulator import Emulator
from wafer_reasoner.emulator.datafiles import read_yaml
from wafer_reasoner.emulator.reasoning import ReasoningBudget, ReasoningSettings
from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.runtime.best_of_n import EmulatedBestOfN
from wafer_reasoner.runtime.emulation import emulator_for, hardware_profiles, serving_stacks, target_models
from wafer_reasoner.runtime.query import answer, verifier_accepts
from wafer_reasoner.runtime.resources import config_file
from wafer_reasoner.sim.scenario import load_places_file
from wafer_reasoner.studies import hardware_study, plots, reasoning_study
from wafer_reasoner.training.corpus import sample_example
from wafer_reasoner.understanding import clauses, outside
from wafer_reasoner.understanding.context import what_is_asked

LIMITS = SafetyLimits()
TARGETS = ("Llama-3.1-8B", "Llama-3.1-70B", "Mixtral-8x7B", "Llama-4-Maverick", "gpt-oss-120b")


@pytest.fixture(scope="module")
def every_triple():
    """Every (target, hardware, stack) triple: each target on each hardware under each stack that runs there."""
    hardware, targets = hardware_profiles(), target_models()
    stacks, _ = serving_stacks()
    return [Emulator(targets[t], hardware[h], stack) for t in TARGETS for h in hardware
            for stack in stacks.values() if h in stack.hardware]


@pytest.fixture(scope="module")
def settings():
    return read_yaml(config_file("study.yaml"))


@pytest.fixture(scope="module")
def places():
    return load_places_file(str(config_file("semantic_map.yaml")))


@pytest.fixture(scope="module")
def greedy():
    return PlannerModel()


def _queries_the_model_plans(rng, count: int) -> list:
    """Drawn examples that reach the model: one refused by rules (understanding/outside.py) costs no model time on
    any triple, so it could not show the triples charging different times."""
    found = []
    while len(found) < count:
        example = sample_example(rng, 1)
        scene = example["scene"]
        if not outside.refused_without_model(scene, what_is_asked(example["say"], clauses.scene_names(scene))):
            found.append(example)
    return found


@pytest.mark.parametrize("candidates, reasoning_tokens", [(1, 0), (4, 0), (1, 3000)])
def test_the_same_query_gives_byte_identical_plans_under_every_triple(every_triple, candidates, reasoning_tokens):
    """The node's path (EmulatedBestOfN around the model, then query.answer) on every (target, hardware, stack)
    triple, with and without a reasoning budget: one plan text per query, only the emulated time differs. (With a
    deadline, the count of candidates may differ by design.)"""
    model = PlannerModel(engine_config=EngineConfig(candidates=candidates, seed=2))
    rng = random.Random(29)
    assert len({(e.target.name, e.hardware.name, e.stack.name) for e in every_triple}) == len(every_triple) > 40
    for example in _queries_the_model_plans(rng, 4):
        scene = example["scene"]
        plans, times = set(), set()
        for triple in every_triple:
            wrapped = EmulatedBestOfN(model, triple, deadline_ms=0.0, reasoning_tokens=reasoning_tokens,
                                      accept=verifier_accepts(scene, LIMITS, now_s=scene.stamp_s))
            result = answer(wrapped, scene, example["say"], LIMITS, now_s=scene.stamp_s)
            plans.add((result.plan, result.status, result.reasons))
            times.add(round(wrapped.last_choice.timing.emulated_ms, 6))
        assert len(plans) == 1, plans
        assert len(times) > len(every_triple) // 2  # the triples really do charge different times


def test_the_redirect_repeats_exactly_and_a_slower_profile_drives_further_the_wrong_way(greedy, places, settings):
    slow, fast = emulator_for("Llama-3.1-70B", "A100"), emulator_for("Llama-3.1-70B", "WSE-3")
    first = hardware_study.redirect_run(greedy, slow, places, settings["redirect"])
    again = hardware_study.redirect_run(greedy, slow, places, settings["redirect"])
    quick = hardware_study.redirect_run(greedy, fast, places, settings["redirect"])
    assert first == again
    assert first["plan"] == quick["plan"] == "navigate(place:office)"
    assert first["reaction_s"] == pytest.approx(first["emulated_ms"] / 1000.0, abs=1e-6)
    assert quick["emulated_ms"] < first["emulated_ms"]
    assert quick["wrong_way_m"] < first["wrong_way_m"]
    assert first["wrong_way_m"] > 0.0 and first["arrival_s"] is not None


def _case(correct, valid, lengths=(6, 6, 6)):
    return {"prompt_tokens": 50, "lengths": lengths, "scores": (-3.0, -1.0, -2.0), "valid": valid,
            "correct": correct}


def test_clutter_row_counts_what_each_profile_keeps():
    fast, slow = emulator_for("Llama-3.1-70B", "WSE-3"), emulator_for("Llama-3.1-70B", "A100")
    # greedy (row 0) wrong, row 1 right and the best scored: only a profile that fits 2+ candidates gets it
    decoded = [_case((False, True, False), (True, True, True))]
    deadline = fast.plan_time(50, 6, candidates=3).emulated_ms * 1.01
    assert slow.plan_time(50, 6).emulated_ms > deadline
    quick = hardware_study.clutter_row(fast, decoded, deadline)
    late = hardware_study.clutter_row(slow, decoded, deadline)
    assert (quick["mean_candidates"], quick["correct"], quick["correct_within_deadline"]) == (3, 1.0, 1.0)
    assert (late["mean_candidates"], late["correct"], late["over_deadline"]) == (1, 0.0, 1.0)
    assert quick["greedy_correct_within_deadline"] == 0.0


def test_the_study_command_repeats_its_numbers(tmp_path, settings):
    small = tmp_path / "study.yaml"
    data = json.loads(json.dumps(settings))
    data["profiles"] = ["WSE-3", "A100/sglang-2024-waferllm"]
    data["clutter"]["cases"] = 4
    data["redirect"]["observe_s"] = 2.0
    data["reasoning"]["budgets"] = [1000]
    data["reasoning"]["redirect"]["observe_s"] = 80.0
    small.write_text(json.dumps(data))  # JSON is YAML
    outputs = []
    for run in ("one", "two"):
        assert hardware_study.main(["--config", str(small), "--out", str(tmp_path / run)]) == 0
        outputs.append(json.loads((tmp_path / run / "study.json").read_text()))
    assert outputs[0] == outputs[1]
    assert [row["profile"] for row in outputs[0]["clutter"]] == ["WSE-3", "A100/sglang-2024-waferllm"]
    text = hardware_study.tables(outputs[0])
    assert text.count("| A100/sglang-2024-waferllm |") == 5  # (a), (b), (c1), (c2), (c3)
    reaction = {row["profile"]: row["reaction_s"]["1000"] for row in outputs[0]["reasoning"]["reaction"]}
    assert reaction["WSE-3"] < reaction["A100/sglang-2024-waferllm"]
    for run in ("one", "two"):
        pngs = sorted(path.name for path in (tmp_path / run).glob("*.png"))
        assert pngs in ([], ["clutter.png", "reasoning_candidates.png", "reasoning_reaction.png",
                             "reasoning_redirect.png", "redirect.png"])
        for name in pngs:
            assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_reasoning_before_the_redirect_makes_it_later_and_further(greedy, places, settings):
    emulator = emulator_for("DeepSeek-R1-Distill-Llama-70B", "H200")
    redirect = {**settings["reasoning"]["redirect"], "observe_s": 60.0}
    thinking = ReasoningSettings(default=ReasoningBudget(tokens=1000))
    slow = hardware_study.redirect_run(greedy, emulator, places, redirect, reasoning=thinking)
    quick = hardware_study.redirect_run(greedy, emulator, places, redirect)
    assert slow["plan"] == quick["plan"] == "navigate(place:office)"  # the plan never depends on the budget
    assert (slow["reasoning_tokens"], quick["reasoning_tokens"]) == (1000, 0)
    assert slow["reaction_s"] > quick["reaction_s"] + 1.0 and slow["wrong_way_m"] > quick["wrong_way_m"]
    assert slow["reaction_s"] == pytest.approx(slow["emulated_ms"] / 1000.0, abs=1e-6)


def test_most_candidates_is_the_largest_batch_within_the_deadline():
    emulator = emulator_for("Llama-3.1-70B", "H200")
    limit = emulator.plan_time(60, 12, candidates=5, reasoning_tokens=200).emulated_ms
    assert reasoning_study.most_candidates(emulator, 60, 12, 200, limit) >= 5
    count = reasoning_study.most_candidates(emulator, 60, 12, 200, limit)
    assert emulator.plan_time(60, 12, candidates=count, reasoning_tokens=200).emulated_ms <= limit
    if count < reasoning_study.MAX_CANDIDATES:
        assert emulator.plan_time(60, 12, candidates=count + 1, reasoning_tokens=200).emulated_ms > limit
    assert reasoning_study.most_candidates(emulator, 60, 12, 200, 1.0) == 0  # not even one fits 1 ms


def test_the_plots_are_the_same_bytes_every_time(tmp_path):
    plt = plots.pyplot()
    if plt is None:
        pytest.skip("matplotlib is not installed (make study installs requirements-study.txt)")
    rows = [{"profile": "A", "wrong_way_m": 0.5, "emulated_ms": 120.0}, {"profile": "B", "wrong_way_m": 2.0,
                                                                          "emulated_ms": 4000.0}]
    first = plots.redirect_plot(plt, rows, "title", tmp_path / "one.png").read_bytes()
    second = plots.redirect_plot(plt, rows, "title", tmp_path / "two.png").read_bytes()
    assert first == second and b"Software" not in first  # no version or time in the PNG's text chunks
