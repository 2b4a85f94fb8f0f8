"""The shipped planner on the read development sets (test/data/dev): R and T of requests to refuse, S of requests
to act on, written by helpers from docs/action_language.md alone and read while the understanding rules were
mended. Not a measure of generalisation (the blind sets are); a guard that the classes they showed stay fixed."""

import pytest

from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.training import blind
from wafer_reasoner.training.evaluate import evaluate

# the figures measured when the sets were read (sixth session), one example of slack each
FLOORS = {"dev_r": 0.984, "dev_s": 0.998, "dev_t": 0.996}


@pytest.fixture(scope="module")
def model():
    return PlannerModel()


@pytest.mark.parametrize("name", blind.DEV_SETS)
def test_the_planner_holds_the_development_sets(model, name):
    report = evaluate(model, blind.load_blind(blind.dev_path(name)))
    assert report["exact_match"] >= FLOORS[name], name
    assert report["refusals_acted_on"] == 0, name
