"""The engine end to end on a tiny random model in the shipped layout (spelled, speech-normalised prompts with
mentions grounded): prompt, grammar, decode.

A tiny random model (test/data/tiny_planner, made by test/data/make_tiny_planner.py) stands in for a trained one,
so this needs no torch and holds whatever the shipped model has learnt.
"""

import random
from pathlib import Path

import pytest

from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.engine.grammar import grammar_for_query
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.engine.prompt import build_prompt
from wafer_reasoner.engine.tokenizer import EOS, KIND
from wafer_reasoner.planner.language import parse_plan
from wafer_reasoner.planner.scene import Scene, SceneObject
from wafer_reasoner.training import speech_corpus

TINY = Path(__file__).resolve().parent / "data" / "tiny_planner"


@pytest.fixture(scope="module")
def model():
    return PlannerModel(TINY)


def cases(count: int) -> list:
    """Examples of every held-out category (unseen labels and colours, noisy speech, long compositions)."""
    per = max(1, count // len(speech_corpus.HELDOUT_CATEGORIES))
    return [e for name in speech_corpus.HELDOUT_CATEGORIES for e in speech_corpus.heldout_set(name, per)]


def test_the_model_reads_prompts_in_the_layout_it_was_trained_with(model):
    assert model.tokenizer.kind == KIND
    scene = Scene(objects=(SceneObject("cup_1", "cup", "", x=1.0, y=0.0),))  # no krellix: the word stays, spelled
    prompt = model.fit_prompt(scene, "um could you bring me the krellix")
    assert prompt == build_prompt(scene, "um could you bring me the krellix", model.tokenizer)
    assert "K" in prompt.tokens and "##r" in prompt.tokens  # an unknown word is spelled, not <unk>
    assert "um" not in prompt.tokens and "<unk>" not in prompt.tokens


def test_a_label_never_seen_can_be_named_in_a_clarify(model):
    scene = Scene()
    say = "bring me the zorbit"
    prompt = model.fit_prompt(scene, say)
    grammar = grammar_for_query(model.tokenizer, prompt, scene, say)
    ids = model.tokenizer.ids
    spelled = list(model.tokenizer.spell_name("zorbit"))
    assert "zorbit" not in ids and len(spelled) == len("zorbit")
    assert grammar.accepts([ids["clarify("], ids["not_found:"], *spelled, ids[")"], ids[EOS]])
    other = list(model.tokenizer.spell_name("krellix"))
    assert not grammar.accepts([ids["clarify("], ids["not_found:"], *other, ids[")"], ids[EOS]])  # not said


def test_every_constrained_output_parses_on_held_out_speech(model):
    checked = 0
    for example in cases(140):
        generation = model.generate(example["scene"], example["say"])
        parse_plan(generation.text)  # raises on anything the grammar should have prevented
        checked += 1
    assert checked >= 100


def test_fast_unconstrained_greedy_equals_the_reference_loop_on_speech_prompts():
    plain = EngineConfig(constrained=False, prefix_cache=0, draft_tokens=0, export="kv")  # float32: exact
    fast = PlannerModel(TINY, engine_config=plain)
    reference = PlannerModel(TINY, engine="reference")
    for example in random.Random(4).sample(cases(70), 12):
        assert fast.generate(example["scene"], example["say"]).text == \
            reference.generate(example["scene"], example["say"]).text
