"""The open vocabulary: spelled words, speech normalisation, spelling-tolerant mentions of labels and places."""

import pytest

from wafer_reasoner.engine.prompt import build_prompt, plan_to_tokens, tokens_to_plan
from wafer_reasoner.engine.tokenizer import KIND, LETTERS, Tokenizer, spell_word
from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject
from wafer_reasoner.training.vocab import build_tokenizer
from wafer_reasoner.understanding.mentions import hear, mention_spans, word_matches
from wafer_reasoner.understanding.words import plannable_numbers, speech_words, unplannable_number

TOKENIZER = build_tokenizer()


def room(objects=None, **kwargs) -> Scene:
    objects = objects or (
        SceneObject("cup_red", "cup", "red", 2.0, 0.0),
        SceneObject("cup_blue", "cup", "blue", 4.0, 0.0),
        SceneObject("table_1", "table", "", 4.5, 0.5),
        SceneObject("book_1", "book", "", -3.0, 0.0),
        SceneObject("krellix_1", "krellix", "teal", 0.0, 3.0),
    )
    defaults = dict(objects=objects, people=(Person("user", 0.0, -2.0),), places=(NamedPlace("kitchen", 5, 5),),
                    robot=RobotPose(0.0, 0.0, 0.0))
    return Scene(**{**defaults, **kwargs})


def said(prompt) -> str:
    return " ".join(prompt.tokens[prompt.tokens.index("<say>") + 1:prompt.tokens.index("<scene>")])


def scene_part(prompt) -> str:
    return " ".join(prompt.tokens[prompt.tokens.index("<scene>") + 1:prompt.tokens.index("<hold>")])


def mentioned(words, labels, tolerant=False) -> list:
    return [label for label, _, _ in mention_spans(words, labels, tolerant)]


def test_unknown_words_are_spelled_and_letters_map_back_to_text():
    assert spell_word("zorbit") == ["Z", "##o", "##r", "##b", "##i", "##t"]
    assert TOKENIZER.word_tokens("cup") == ["cup"] and TOKENIZER.word_tokens("krellix")[0] == "K"
    assert tokens_to_plan(["clarify(", "not_found:", *spell_word("zorbit"), ")", "<eos>"], None) == \
        "clarify(not_found:zorbit)"


def test_a_label_never_trained_is_tagged_spelled_and_copyable():
    prompt = build_prompt(room(), "bring me the krellix", TOKENIZER)
    assert said(prompt) == "bring me the @1"  # found: its slot is all the plan needs
    assert scene_part(prompt) == "@1 <o0>" and prompt.slot_ids == ("krellix_1",)
    two = room(objects=(SceneObject("k_1", "krellix", "", 1.0, 0.0), SceneObject("k_2", "krellix", "", 2.0, 0.0)))
    ambiguous = build_prompt(two, "bring me the krellix", TOKENIZER)
    assert said(ambiguous) == "bring me the @1 K ##r ##e ##l ##l ##i ##x"  # a refusal may name it: spelled
    assert all(t in TOKENIZER.ids for t in prompt.tokens)
    missing = build_prompt(room(), "pick up the zorbit", TOKENIZER)
    tokens = plan_to_tokens("clarify(not_found:zorbit)", missing, TOKENIZER)
    assert tokens[2:8] == spell_word("zorbit") and tokens_to_plan(tokens, missing) == "clarify(not_found:zorbit)"


@pytest.mark.parametrize("heard, label", [("cups", "cup"), ("boxes", "box"), ("batteries", "battery"),
                                          ("scisors", "scissors"), ("laptob", "laptop"), ("read", "red")])
def test_tolerant_word_matches(heard, label):
    assert word_matches(heard, label)


@pytest.mark.parametrize("heard, label", [("cap", "cup"), ("mug", "bug"), ("tables", "cable"), ("bowl", "ball")])
def test_short_or_distant_words_do_not_match(heard, label):
    assert not word_matches(heard, label)


def test_noisy_mentions_are_rewritten_as_the_scene_spells_them():
    prompt = build_prompt(room(), "um bring me the read cups", TOKENIZER)
    assert said(prompt) == "bring me the read @1"
    assert " ".join(prompt.heard.said) == "bring me the read @1 cup"
    assert scene_part(prompt) == "@1 <o0>" and prompt.slot_ids == ("cup_red",)  # "read" heard for "red"


def test_a_heard_word_that_is_another_label_never_matches_tolerantly():
    assert mentioned(["the", "laptop"], ["laptop", "laptops_bag"], tolerant=True) == ["laptop"]
    assert mentioned(["the", "cable"], ["table", "cable"], tolerant=True) == ["cable"]


def test_exact_matching_stays_exact():
    assert mentioned(["the", "cups"], ["cup"]) == []
    assert mentioned(["the", "cups"], ["cup"], tolerant=True) == ["cup"]


def test_places_are_matched_tolerantly_tagged_and_mapped_back_to_the_maps_names():
    scene = room(places=(NamedPlace("kitchen", 5, 5), NamedPlace("living_room", 1, 1)))
    prompt = build_prompt(scene, "go to the livng room then the kichen", TOKENIZER)
    assert said(prompt) == "go to the #1 then the #2"  # a place's words are not the model's business
    assert scene_part(prompt) == "#1 <p0> #2 <p1>" and prompt.place_names == ("living_room", "kitchen")
    tokens = plan_to_tokens("navigate(place:kitchen)", prompt, TOKENIZER)
    assert "<p1>" in tokens and tokens_to_plan(tokens, prompt) == "navigate(place:kitchen)"


@pytest.mark.parametrize("text, words", [
    ("Turn left NINETY degrees!", ["turn", "left", "9", "0", "degrees"]),
    ("rotate one hundred and thirty five degrees", ["rotate", "1", "3", "5", "degrees"]),
    ("wait a hundred seconds", ["wait", "1", "0", "0", "seconds"]),
    ("um, wait uh five seconds", ["wait", "5", "seconds"]),
    ("wait for one second", ["wait", "for", "1", "seconds"]),
    ("wait two minutes", ["wait", "1", "2", "0", "seconds"]),
    ("wait a minute and a half", ["wait", "9", "0", "seconds"]),
    ("wait one and a half minutes", ["wait", "9", "0", "seconds"]),
    ("wait 1.5 minutes", ["wait", "9", "0", "seconds"]),
    ("wait half an hour", ["wait", "1", "8", "0", "0", "seconds"]),
    ("go two the kitchen", ["go", "two", "the", "kitchen"]),  # a number without a unit stays a word
    ("bring me four cups", ["bring", "me", "four", "cups"]),
])
def test_speech_normalisation(text, words):
    assert speech_words(text) == words


def test_a_stutter_is_said_once_when_understanding_hears_it():
    assert speech_words("the the cup", destutter=False) == ["the", "the", "cup"]
    assert speech_words("the the cup") == ["the", "cup"]


def test_the_tokenizer_names_its_prompt_layout_and_refuses_another(tmp_path):
    TOKENIZER.save(tmp_path / "tokenizer.json")
    loaded = Tokenizer.load(tmp_path / "tokenizer.json")
    assert loaded.kind == KIND and loaded.tokens == TOKENIZER.tokens
    with pytest.raises(ValueError, match="kind"):
        Tokenizer(TOKENIZER.tokens, "wafer_reasoner-words-v0")
    with pytest.raises(ValueError, match="lacks"):
        Tokenizer([t for t in TOKENIZER.tokens if t not in LETTERS])  # no letters: it could not spell


def test_spell_name_writes_any_place_or_label():
    assert TOKENIZER.spell_name("living_room") == (TOKENIZER.ids["living"], TOKENIZER.ids["_"], TOKENIZER.ids["room"])
    assert TOKENIZER.spell_name("krellix") == tuple(TOKENIZER.ids[t] for t in spell_word("krellix"))
    assert TOKENIZER.spell_name("Bad Name") is None


def test_hear_gives_the_normalised_words_mentions_and_annotated_utterance():
    heard = hear(room(), "um could you bring me the cups then go to the kichen")
    assert heard.words[:3] == ("could", "you", "bring")
    assert [label for label, _, _ in heard.spans] == ["cup"]
    assert " ".join(heard.said).endswith("the @1 cup then go to the #1")
    assert [name for name, _, _ in heard.places] == ["kitchen"]


@pytest.mark.parametrize("text, numbers", [
    ("wait three and a half seconds", ("3.5",)),
    ("wait 1.5 seconds", ("1.5",)),  # not also "15"
    ("turn left 90 then wait 2 minutes", ("120", "90")),
    ("go to room 214", ()),  # a number in a name is none
])
def test_numbers_a_plan_may_copy(text, numbers):
    assert plannable_numbers(speech_words(text), text) == numbers


@pytest.mark.parametrize("text, unplannable", [
    ("wait 99999999999 seconds", True), ("turn left 1e308 degrees", True), ("turn left infinity degrees", True),
    ("wait a few seconds", True), ("wait 5 seconds", False), ("turn left", False), ("wait a second", False),
])
def test_numbers_no_plan_can_copy(text, unplannable):
    assert unplannable_number(speech_words(text), text) is unplannable
