"""Prompt layout, tokenizer and the corpus's reference planner (the contract the model learns)."""

import random

import pytest

from wafer_reasoner.engine.prompt import build_prompt, plan_to_tokens, tokens_to_plan
from wafer_reasoner.engine.tokenizer import SLOT_TOKENS, Tokenizer
from wafer_reasoner.planner.language import parse_plan
from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.training.reference_planner import Expression, reference_plan
from wafer_reasoner.training.vocab import build_tokenizer
from wafer_reasoner.understanding.mentions import mention_spans
from wafer_reasoner.understanding.words import utterance_words

TOKENIZER = build_tokenizer()


def room(**kwargs) -> Scene:
    objects = (
        SceneObject("cup_red", "cup", "red", 2.0, 0.0),
        SceneObject("cup_blue", "cup", "blue", 4.0, 0.0),
        SceneObject("table_1", "table", "", 4.5, 0.5),
        SceneObject("book_1", "book", "", -3.0, 0.0),
    )
    defaults = dict(objects=objects, people=(Person("user", 0.0, -2.0),), places=(NamedPlace("kitchen", 5, 5),),
                    robot=RobotPose(0.0, 0.0, 0.0))
    return Scene(**{**defaults, **kwargs})


def test_words_and_digits():
    assert utterance_words("Turn LEFT 90 degrees, please!") == ["turn", "left", "9", "0", "degrees", "please"]


def test_longer_label_wins_the_mention():
    words = utterance_words("bring me the coffee mug then the cup")
    spans = mention_spans(words, ["mug", "coffee_mug", "cup", "book"])
    assert [label for label, _, _ in spans] == ["coffee_mug", "cup"]


def test_the_prompt_carries_only_what_was_mentioned_and_held():
    prompt = build_prompt(room(), "bring me the red cup", TOKENIZER)
    assert prompt.slot_ids == ("cup_red",)  # the blue cup, the table and the book were not mentioned
    assert " ".join(prompt.tokens).endswith("<say> bring me the red @1 <scene> @1 <o0> <hold> none <plan>")


def test_place_names_are_tagged_in_the_utterance_only_when_the_map_has_them():
    scene = room(places=(NamedPlace("kitchen", 5, 5), NamedPlace("living_room", 1, 1)))
    prompt = build_prompt(scene, "go to the living room then the kitchen then the garage", TOKENIZER)
    said = prompt.tokens[prompt.tokens.index("<say>") + 1:prompt.tokens.index("<scene>")]
    assert " ".join(said) == "go to the #1 then the #2 then the garage"
    assert prompt.place_names == ("living_room", "kitchen")


def test_heldout_families_only_use_words_that_training_families_use():
    from wafer_reasoner.training import corpus

    def words(templates):
        return {w for t in templates for w in utterance_words(t.replace("{", " ").replace("}", " "))}

    trained = set()
    for train, _ in [*corpus.TEMPLATES.values(), corpus.CONNECTORS]:
        trained |= words(train)
    for name, (_, heldout) in [*corpus.TEMPLATES.items(), ("connectors", corpus.CONNECTORS)]:
        assert words(heldout) <= trained, (name, words(heldout) - trained)


def test_plan_tokens_round_trip_through_slots():
    prompt = build_prompt(room(), "put the red cup in the kitchen", TOKENIZER)
    plan = "navigate(obj:cup_red); pick(obj:cup_red); navigate(place:kitchen); place(obj:cup_red, place:kitchen)"
    tokens = plan_to_tokens(plan, prompt, TOKENIZER)
    assert SLOT_TOKENS[0] in tokens and "cup_red" not in tokens
    assert tokens_to_plan(tokens, prompt) == plan


def test_plan_with_an_object_outside_the_prompt_cannot_be_encoded():
    with pytest.raises(ValueError):
        plan_to_tokens("pick(obj:ghost)", build_prompt(room(), "pick up the ghost", TOKENIZER), TOKENIZER)


def test_tokenizer_rejects_an_incomplete_vocabulary():
    with pytest.raises(ValueError, match="lacks"):
        Tokenizer(["<pad>", "<bos>"])


@pytest.mark.parametrize(
    "expression, clauses_intent, expected",
    [
        (Expression("cup", color="red"), "bring",
         "navigate(obj:cup_red); pick(obj:cup_red); navigate(person:user); handover(obj:cup_red, person:user)"),
        (Expression("cup"), "bring", "clarify(ambiguous:cup)"),
        (Expression("cup", superlative="farthest"), "pick", "navigate(obj:cup_blue); pick(obj:cup_blue)"),
        (Expression("cup", superlative="nearest"), "go_object", "navigate(obj:cup_red)"),
        (Expression("cup", near_label="table"), "go_object", "navigate(obj:cup_blue)"),
        (Expression("cup", color="green"), "pick", "clarify(not_found:cup)"),
        (Expression("stapler"), "pick", "clarify(not_found:stapler)"),
    ],
)
def test_reference_planner_follows_the_grounding_contract(expression, clauses_intent, expected):
    assert reference_plan(room(), [{"intent": clauses_intent, "o": expression}]) == expected


def test_put_skips_the_pick_when_the_object_is_already_held():
    clause = {"intent": "put", "o": Expression("cup", color="red"), "d": "kitchen"}
    plan = reference_plan(room(holding="cup_red"), [clause])
    assert plan == "navigate(place:kitchen); place(obj:cup_red, place:kitchen)"


def test_a_clarify_anywhere_makes_the_whole_plan_a_clarify():
    clauses = [{"intent": "go_place", "p": "kitchen"}, {"intent": "bring", "o": Expression("cup")}]
    assert reference_plan(room(), clauses) == "clarify(ambiguous:cup)"


def test_generated_examples_parse_and_encode_in_the_vocabulary():
    rng = random.Random(5)
    for options in (speech_corpus.TRAIN, speech_corpus.HELDOUT):
        for _ in range(300):
            example = speech_corpus.sample(rng, options)
            parse_plan(example["plan"])
            prompt = build_prompt(example["scene"], example["say"], TOKENIZER)
            tokens = list(prompt.tokens) + plan_to_tokens(example["plan"], prompt, TOKENIZER)
            assert all(t in TOKENIZER.ids for t in tokens), example["say"]
            assert tokens_to_plan(plan_to_tokens(example["plan"], prompt, TOKENIZER), prompt) == example["plan"]


def test_spelling_variants_meet_in_one_word():
    scene = room(objects=(SceneObject("sofa_1", "sofa", "gray", 2.0, 0.0),))
    prompt = build_prompt(scene, "go to the Grey sofa", TOKENIZER)
    assert "go to the gray @1 <scene> @1 <o0>" in " ".join(prompt.tokens)
    assert utterance_words("the Grey sofa") == ["the", "gray", "sofa"]


# sha256 of 20 examples per held-out category and 120 training examples (seed 7) with their prompts and plan
# tokens, as the shipped model was trained and evaluated: the corpus, its held-out sets and the prompt layout
# must stay the same (a change means retraining and re-measuring, and updating this on purpose)
CORPUS_FINGERPRINT = "c39f3a982c44f032260a8f6bec02d7d1dac5df545ce7553882d2dce481ddaeb4"


def test_corpus_and_prompts_are_unchanged_from_the_same_seed():
    import hashlib

    digest = hashlib.sha256()
    rng = random.Random(7)
    examples = speech_corpus.heldout_examples(20) + [speech_corpus.sample(rng, speech_corpus.TRAIN)
                                                     for _ in range(120)]
    for example in examples:
        prompt = build_prompt(example["scene"], example["say"], TOKENIZER)
        digest.update(repr((example["say"], example["plan"], prompt.tokens, prompt.slot_ids,
                            plan_to_tokens(example["plan"], prompt, TOKENIZER))).encode())
    assert digest.hexdigest() == CORPUS_FINGERPRINT
