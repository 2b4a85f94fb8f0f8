"""Speed never changes a plan, the lockstep loop, and the study's reproducibility."""

import json
import random

import pytest

from wafer_reasoner.emulator import Emulator
from wafer_reasoner.emulator.datafiles import read_yaml
from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.runtime.best_of_n import EmulatedBestOfN
from wafer_reasoner.runtime.emulation import hardware_profiles, target_models
from wafer_reasoner.runtime.query import answer, verifier_accepts
from wafer_reasoner.runtime.resources import config_file
from wafer_reasoner.sim.scenario import load_places_file
from wafer_reasoner.studies import hardware_study
from wafer_reasoner.training.corpus import sample_example

LIMITS = SafetyLimits()
TARGETS = ("Llama-3.1-8B", "Llama-3.1-70B", "Mixtral-8x7B")


@pytest.fixture(scope="module")
def every_pair():
    hardware, targets = hardware_profiles(), target_models()
    return [Emulator(targets[t], hardware[h]) for t in TARGETS for h in hardware]


@pytest.fixture(scope="module")
def settings():
    return read_yaml(config_file("study.yaml"))


@pytest.fixture(scope="module")
def places():
    return load_places_file(str(config_file("semantic_map.yaml")))


@pytest.fixture(scope="module")
def greedy():
    return PlannerModel()


@pytest.mark.parametrize("candidates", [1, 4])
def test_the_same_query_gives_byte_identical_plans_under_every_profile(every_pair, candidates):
    """The node's path (EmulatedBestOfN around the model, then query.answer) on every (target, hardware) pair:
    one plan text per query, only the emulated time differs. (With a deadline, the count of candidates may
    differ by design: that is item 7.)"""
    model = PlannerModel(engine_config=EngineConfig(candidates=candidates, seed=2))
    rng = random.Random(29)
    for _ in range(6):
        example = sample_example(rng, 1)
        scene = example["scene"]
        plans, times = set(), set()
        for pair in every_pair:
            wrapped = EmulatedBestOfN(model, pair, deadline_ms=0.0,
                                      accept=verifier_accepts(scene, LIMITS, now_s=scene.stamp_s))
            result = answer(wrapped, scene, example["say"], LIMITS, now_s=scene.stamp_s)
            plans.add((result.plan, result.status, result.reasons))
            times.add(round(wrapped.last_choice.timing.emulated_ms, 6))
        assert len(plans) == 1, plans
        assert len(times) > len(every_pair) // 2  # the pairs really do charge different times


def test_the_redirect_repeats_exactly_and_a_slower_profile_drives_further_the_wrong_way(greedy, places, settings):
    hardware, targets = hardware_profiles(), target_models()
    target = targets["Llama-3.1-70B"]
    slow, fast = Emulator(target, hardware["A100"]), Emulator(target, hardware["WSE-3"])
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
    hardware, target = hardware_profiles(), target_models()["Llama-3.1-70B"]
    fast, slow = Emulator(target, hardware["WSE-3"]), Emulator(target, hardware["A100"])
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
    data["profiles"] = ["WSE-3", "A100"]
    data["clutter"]["cases"] = 4
    data["redirect"]["observe_s"] = 2.0
    small.write_text(json.dumps(data))  # JSON is YAML
    outputs = []
    for run in ("one", "two"):
        assert hardware_study.main(["--config", str(small), "--out", str(tmp_path / run)]) == 0
        outputs.append(json.loads((tmp_path / run / "study.json").read_text()))
    assert outputs[0] == outputs[1]
    assert [row["profile"] for row in outputs[0]["clutter"]] == ["WSE-3", "A100"]
    assert hardware_study.tables(outputs[0]).count("| A100 |") == 2
