"""Metamorphic invariance (training/metamorphic.py): what the utterance does not mention never moves the plan.

The prompt carries only what the utterance mentions (engine/prompt.py), so invariance holds by construction,
whatever the weights: the tiny random model checks the construction here over 2,000 cases, maps of 0-64 places;
test_engine.py checks the shipped model over the same cases.
"""

import random
from pathlib import Path

import pytest

from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.training import metamorphic
from wafer_reasoner.understanding.mentions import hear

TINY = Path(__file__).resolve().parent / "data" / "tiny_planner"
CASES = 2000


@pytest.fixture(scope="module")
def drawn():
    return metamorphic.cases(CASES)


def heard(scene, say) -> tuple:
    h = hear(scene, say)
    return sorted(label for label, _, _ in h.spans), sorted(name for name, _, _ in h.places)


def test_every_change_is_drawn_keeps_what_is_heard_and_changes_the_scene(drawn):
    assert {case["change"] for case in drawn} == set(metamorphic.CHANGES)
    for case in drawn:
        assert heard(case["scene"], case["say"]) == heard(case["variant"], case["say"]), case["say"]
        if case["change"] != "shuffle":
            assert case["variant"] != case["scene"], case["change"]


def test_maps_reach_from_none_to_the_cap(drawn):
    sizes = [len(c["variant"].places) for c in drawn] + [len(c["scene"].places) for c in drawn]
    assert min(sizes) == 0 and max(sizes) == metamorphic.MAX_PLACES


def test_renamed_maps_object_ids_only():
    plan = "navigate(obj:cup_1); pick(obj:cup_1); navigate(obj:cup_10); place(obj:cup_1, obj:cup_10)"
    assert metamorphic.renamed(plan, {"cup_1": "mug_7", "cup_10": "mug_8"}) == \
        "navigate(obj:mug_7); pick(obj:mug_7); navigate(obj:mug_8); place(obj:mug_7, obj:mug_8)"


def test_the_prompt_makes_any_model_invariant(drawn):
    report = metamorphic.check(PlannerModel(TINY), drawn)
    assert report["cases"] == CASES and report["moved"] == 0, report["samples"]


class MapReadingModel:
    """A planner that looks at the whole map: the check must catch it."""

    def generate(self, scene, say):
        class Generation:
            text = f"wait({len(scene.places) + len(scene.objects)})"
        return Generation


def test_the_check_catches_a_model_that_reads_unmentioned_things():
    report = metamorphic.check(MapReadingModel(), metamorphic.cases(70, seed=random.Random(1).randint(0, 99)))
    assert report["moved"] > 0 and report["invariance"] < 1.0
