"""Plan coverage (understanding/coverage.py) and resuming a grammar mid-plan (the continuation pass)."""

import random

import pytest

from wafer_reasoner.engine.grammar import grammar_for_query
from wafer_reasoner.engine.prompt import build_prompt
from wafer_reasoner.engine.tokenizer import EOS
from wafer_reasoner.planner.scene import NamedPlace, RobotPose, Scene, SceneObject
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.training.vocab import build_tokenizer
from wafer_reasoner.understanding import coverage
from wafer_reasoner.understanding.grounding import ground
from wafer_reasoner.understanding.mentions import hear


@pytest.fixture(scope="module")
def v3():
    return build_tokenizer()


def room() -> Scene:
    return Scene(objects=(SceneObject("cup_1", "cup", "red", x=1.0, y=0.0),
                          SceneObject("cup_2", "cup", "blue", x=5.0, y=0.0),
                          SceneObject("table_3", "table", "", x=5.5, y=0.5)), robot=RobotPose(0.0, 0.0, 0.0))


def need(scene: Scene, say: str) -> coverage.Coverage:
    heard = hear(scene, say)
    return coverage.required(ground(scene, heard), heard.said, say)


def test_a_plan_that_acts_must_name_every_grounded_mention_but_not_an_anchor(v3):
    scene = room()
    assert need(scene, "go to the cup near the table then turn 90 degrees") == \
        coverage.Coverage(("cup_2",), ("90",))
    need_both = need(scene, "bring me the red cup then go to the table and wait 1.5 seconds")
    assert need_both == coverage.Coverage(("cup_1", "table_3"), ())  # a decimal is not also "15"
    assert need_both.gaps("navigate(obj:cup_1); pick(obj:cup_1)") == ["obj:table_3"]
    assert need_both.gaps("clarify(not_found:table)") == []  # a refusal names nothing
    assert need(scene, "turn left 90 degrees").gaps("rotate(-90)") == []


def test_a_plan_that_acts_must_name_every_place_said_but_not_a_locators_place():
    scene = Scene(objects=(SceneObject("cup_1", "cup", "red", x=1.0, y=0.0),),
                  places=(NamedPlace("kitchen", 1.5, 0.0), NamedPlace("dock", -3.0, 2.0)),
                  robot=RobotPose(0.0, 0.0, 0.0))
    assert need(scene, "go to the dock then bring me the cup in the kitchen") == \
        coverage.Coverage(("cup_1",), (), ("dock",))
    assert need(scene, "go to the dock").gaps("navigate(obj:cup_1)") == ["place:dock"]
    assert need(scene, "go to the dock").gaps("navigate(place:dock)") == []


def test_every_gold_plan_that_acts_covers_what_it_must(v3):
    """The reference planner never leaves a grounded mention or a said number out of a plan that acts: the
    continuation pass asks for nothing the contract does not."""
    rng, checked = random.Random(11), 0
    for _ in range(900):
        example = speech_corpus.sample(rng, speech_corpus.TRAIN)
        if example["plan"].startswith("clarify("):
            continue
        gaps = need(example["scene"], example["say"]).gaps(example["plan"])
        assert gaps == [], (example["say"], example["plan"])
        checked += 1
    assert checked > 300


def test_a_resumed_grammar_writes_only_what_may_follow_the_plan_so_far(v3):
    ids, scene, say = v3.ids, room(), "go to the red cup then go to the table"
    grammar = grammar_for_query(v3, build_prompt(scene, say, v3), scene, say)
    head = [ids[t] for t in ("navigate(", "obj:", "<o0>", ")", "; ")]
    resumed = grammar.resumed(head)
    assert resumed.accepts([ids[t] for t in ("navigate(", "obj:", "<o1>", ")", EOS)])
    assert not resumed.accepts([ids[t] for t in ("clarify(", "unsupported", ")", EOS)])  # clarify only comes first
    assert grammar.resumed([ids["pick("], ids[")"]]) is None  # not a path
