"""The speech corpus: coverage, held-out separation, reproducibility and the evaluation."""

import random
from collections import Counter

import pytest

from wafer_reasoner.engine.prompt import build_prompt, plan_to_tokens, tokens_to_plan
from wafer_reasoner.planner.language import parse_plan
from wafer_reasoner.training import speech_corpus as sc
from wafer_reasoner.training import speech_lexicon as lex
from wafer_reasoner.training import speech_render as render
from wafer_reasoner.training.evaluate import error_kind, evaluate
from wafer_reasoner.training.vocab import build_tokenizer
from wafer_reasoner.understanding.words import NUMBER_WORDS, speech_words, utterance_words

TOKENIZER = build_tokenizer()
CATEGORIES = ["train", *sc.HELDOUT_CATEGORIES]


def words(texts) -> set:
    return {w for t in texts for w in utterance_words(t.replace("{", " ").replace("}", " ")) if not w.isdigit()}


def test_lexicon_is_large():
    assert len(lex.SMALL) + len(lex.FURNITURE) >= 150
    assert len(lex.COLORS) >= 30 and len(lex.PLACES) >= 60 and len(lex.PEOPLE) >= 10
    for intent in ("bring", "pick", "put", "go_place", "go_object", "come", "turn_left", "wait", "follow"):
        assert len(lex.TEMPLATES[intent][0]) >= 10, intent


def test_heldout_labels_are_outside_the_vocabulary_and_the_training_lists():
    held = words(lex.HELDOUT_SMALL + lex.HELDOUT_FURNITURE)
    assert not held & set(TOKENIZER.ids)
    assert not held & words(lex.SMALL + lex.FURNITURE + lex.COLORS)


def test_heldout_phrasing_families_only_use_words_that_training_families_use():
    trained = words([t for train, _ in lex.TEMPLATES.values() for t in train] + lex.PREFIXES[0] + lex.SUFFIXES[0]
                    + [c for train, _ in lex.CONNECTORS.values() for c in train])
    for name, families in [*lex.TEMPLATES.items(), ("prefixes", lex.PREFIXES), ("suffixes", lex.SUFFIXES),
                           *[(f"connectors{n}", c) for n, c in lex.CONNECTORS.items()]]:
        assert words(families[1]) <= trained, (name, words(families[1]) - trained)
        assert not set(families[0]) & set(families[1]), name


def test_pseudo_words_never_collide_with_real_words():
    rng = random.Random(0)
    known = render.known_words()
    pseudo = {render.pseudo_word(rng, known) for _ in range(500)}
    assert not pseudo & known and all(3 <= len(w) <= 8 and w.isalpha() for w in pseudo)


@pytest.mark.parametrize("value", [0, 1, 7, 13, 20, 45, 90, 100, 101, 135, 180, 300, 359, 1000, 2500])
def test_spoken_numbers_normalise_to_their_digits(value):
    assert speech_words(render.number_words(value) + " degrees") == [*str(value), "degrees"]


@pytest.mark.parametrize("category", CATEGORIES)
def test_examples_of_every_category_parse_encode_and_fit_the_decoder(category):
    for example in sc.heldout_set(category, 150):
        parse_plan(example["plan"])
        prompt = build_prompt(example["scene"], example["say"], TOKENIZER)
        plan = plan_to_tokens(example["plan"], prompt, TOKENIZER)
        assert all(TOKENIZER.id(t) != TOKENIZER.unk_id for t in [*prompt.tokens, *plan]), example["say"]
        assert tokens_to_plan(plan, prompt) == example["plan"]
        assert len(plan) <= 60, example["say"]


def test_every_said_label_the_scene_has_is_tagged_in_the_prompt():
    for example in sc.heldout_set("noisy", 150):
        prompt = build_prompt(example["scene"], example["say"], TOKENIZER)
        if example["plan"].startswith(("navigate(obj:", "clarify(ambiguous:")):
            assert "@1" in prompt.tokens[prompt.tokens.index("<scene>"):], example["say"]


def test_heldout_sets_are_reproducible_and_categories_differ_from_training():
    first, again = sc.heldout_set("labels", 40), sc.heldout_set("labels", 40)
    assert [(e["say"], e["plan"]) for e in first] == [(e["say"], e["plan"]) for e in again]
    label_words = words(lex.HELDOUT_SMALL)
    assert sum(bool(set(utterance_words(e["say"])) & label_words) for e in first) >= 20
    colours = words(lex.COLORS)
    assert sum(bool(set(utterance_words(e["say"])) & colours) for e in sc.heldout_set("colours", 40)) >= 20
    assert all(len(e["intents"]) == 4 for e in sc.heldout_set("compose4", 20))
    assert all(e["noisy"] for e in sc.heldout_set("noisy", 20))


def test_training_mix_covers_intents_noise_numbers_pseudo_words_and_clarify():
    rng = random.Random(11)
    examples = [sc.sample(rng) for _ in range(1500)]
    plans = Counter(e["plan"].split("(")[0] for e in examples)
    assert set(plans) >= {"navigate", "rotate", "wait", "follow", "clarify"}  # stop never reaches the model
    clarify = sum(e["plan"].startswith("clarify(") for e in examples) / len(examples)
    assert 0.12 < clarify < 0.4
    assert 0.2 < sum(e["noisy"] for e in examples) / len(examples) < 0.4
    assert max(len(e["intents"]) for e in examples) == 3
    assert any(w in NUMBER_WORDS and w != "one" for e in examples for w in utterance_words(e["say"]))
    assert max(len(e["scene"].places) for e in examples) >= 30 and min(len(e["scene"].places) for e in examples) == 0
    unknown = sum(any(not TOKENIZER.knows(w) and w.isalpha() for w in utterance_words(e["say"])) for e in examples)
    assert unknown / len(examples) > 0.2  # pseudo-word labels, colours and places are common in what training says
    assert any(e["plan"] == "clarify(unsupported)" and "the" in e["say"].split() for e in examples)


def test_unsupported_verbs_on_visible_objects_are_refused_not_invented():
    rng = random.Random(2)
    examples = [e for e in (sc.sample(rng) for _ in range(800)) if e["intents"] == ["unsupported_verb"]]
    assert len(examples) > 10 and all(e["plan"] == "clarify(unsupported)" for e in examples)
    assert sum(any(o.label in e["say"] for o in e["scene"].objects) for e in examples) > len(examples) / 2


class OracleThatFailsSome:
    """A stand-in model: the gold plan, except for chosen kinds of mistakes."""

    def __init__(self, wrong: dict):
        self.wrong = wrong  # say -> text to return

    def generate(self, scene, say):
        class Generation:
            total_ms = 1.0
        Generation.text = self.wrong.get(say, self.gold[say])
        return Generation


def test_evaluation_reports_categories_clarify_precision_and_error_kinds():
    examples = sc.heldout_examples(10, CATEGORIES)
    acts = [e for e in examples if not e["plan"].startswith("clarify(") and e["category"] != "train"]
    model = OracleThatFailsSome({acts[0]["say"]: "clarify(unsupported)", acts[1]["say"]: "stop()"})
    model.gold = {e["say"]: e["plan"] for e in examples}
    report = evaluate(model, examples)
    assert set(report["per_category"]) == set(CATEGORIES)
    assert report["clarify_precision"] < 1.0
    assert report["errors"].get("bad_clarify") == 1 and sum(report["errors"].values()) == 2
    counted = sum(e["category"] != "train" for e in examples)  # "train" is not counted
    assert report["exact_match"] == pytest.approx(1 - 2 / counted)


@pytest.mark.parametrize("got, gold, kind", [
    ("navigate(obj:a)", "navigate(obj:b)", "wrong_object_or_argument"),
    ("navigate(obj:a)", "navigate(obj:a); pick(obj:a)", "missing_step"),
    ("navigate(obj:a); pick(obj:a)", "navigate(obj:a)", "extra_step"),
    ("wait(3)", "rotate(3)", "wrong_action"),
    ("clarify(unsupported)", "wait(3)", "bad_clarify"),
    ("clarify(not_found:cup)", "clarify(ambiguous:cup)", "wrong_clarify_label"),
    ("navigate(", "wait(3)", "unparseable"),
])
def test_error_kinds(got, gold, kind):
    assert error_kind(got, gold) == kind


def test_a_seed_offset_draws_another_reproducible_set_of_the_same_category():
    base = [e["say"] for e in sc.heldout_set("compose3", 5)]
    fresh = [e["say"] for e in sc.heldout_set("compose3", 5, seed_offset=7777)]
    assert fresh != base
    assert fresh == [e["say"] for e in sc.heldout_set("compose3", 5, seed_offset=7777)]
