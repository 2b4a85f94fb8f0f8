"""Prompt format v1 (issue 3): spelled open vocabulary, speech normalisation, tolerant mentions, near @k."""

import pytest

from wafer_reasoner.engine.prompt import (
    KIND_V0,
    KIND_V1,
    Tokenizer,
    build_prompt,
    mention_order,
    plan_to_tokens,
    speech_words,
    spell_word,
    tokens_to_plan,
    word_matches,
)
from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject
from wafer_reasoner.training.vocab import build_tokenizer

V1 = build_tokenizer(KIND_V1)


def room(objects=None, **kwargs) -> Scene:
    objects = objects or (
        SceneObject("cup_red", "cup", "red", 2.0, 0.0),
        SceneObject("cup_blue", "cup", "blue", 4.0, 0.0),
        SceneObject("table_1", "table", "", 4.5, 0.5),
        SceneObject("book_1", "book", "", -3.0, 0.0),
        SceneObject("thermos_1", "thermos", "teal", 0.0, 3.0),
    )
    defaults = dict(objects=objects, people=(Person("user", 0.0, -2.0),), places=(NamedPlace("kitchen", 5, 5),),
                    robot=RobotPose(0.0, 0.0, 0.0))
    return Scene(**{**defaults, **kwargs})


def said(prompt) -> str:
    return " ".join(prompt.tokens[prompt.tokens.index("<say>") + 1:prompt.tokens.index("<scene>")])


def scene_part(prompt) -> str:
    return " ".join(prompt.tokens[prompt.tokens.index("<scene>") + 1:prompt.tokens.index("<hold>")])


def test_unknown_words_are_spelled_and_letters_map_back_to_text():
    assert spell_word("stapler") == ["S", "##t", "##a", "##p", "##l", "##e", "##r"]
    assert V1.word_tokens("cup") == ["cup"] and V1.word_tokens("thermos")[0] == "T"
    assert tokens_to_plan(["clarify(", "not_found:", *spell_word("stapler"), ")", "<eos>"], None) == \
        "clarify(not_found:stapler)"


def test_a_label_never_trained_is_tagged_spelled_and_copyable():
    prompt = build_prompt(room(), "bring me the thermos", V1)
    assert said(prompt) == "bring me the @1 T ##h ##e ##r ##m ##o ##s"
    assert scene_part(prompt) == "@1 T ##e ##a ##l T ##h ##e ##r ##m ##o ##s <o0>"
    assert all(V1.id(t) != V1.unk_id for t in prompt.tokens)
    missing = build_prompt(room(), "pick up the stapler", V1)
    tokens = plan_to_tokens("clarify(not_found:stapler)", missing, V1)
    assert tokens[2:9] == spell_word("stapler") and tokens_to_plan(tokens, missing) == "clarify(not_found:stapler)"


def test_v1_lists_only_mentioned_and_held_objects_and_tags_near_by_mention():
    prompt = build_prompt(room(holding="book_1"), "bring me the cup near the table", V1)
    assert prompt.slot_ids == ("cup_red", "book_1", "cup_blue", "table_1")
    assert "@1 blue cup near @2 <o2>" in scene_part(prompt)
    assert "@1 red cup <o0>" in scene_part(prompt)  # its nearest other-label object is not the table
    assert prompt.tokens[-3:] == ("<hold>", "<o1>", "<plan>")


@pytest.mark.parametrize("heard, label", [("cups", "cup"), ("boxes", "box"), ("batteries", "battery"),
                                          ("scisors", "scissors"), ("laptob", "laptop"), ("read", "red")])
def test_tolerant_word_matches(heard, label):
    assert word_matches(heard, label)


@pytest.mark.parametrize("heard, label", [("cap", "cup"), ("mug", "bug"), ("tables", "cable"), ("bowl", "ball")])
def test_short_or_distant_words_do_not_match(heard, label):
    assert not word_matches(heard, label)


def test_noisy_mentions_are_rewritten_as_the_scene_spells_them():
    prompt = build_prompt(room(), "um bring me the read cups", V1)
    assert said(prompt) == "bring me the read @1 cup"
    assert "@1 * red cup <o0>" in scene_part(prompt)


def test_a_heard_word_that_is_another_label_never_matches_tolerantly():
    labels = ["laptop", "laptops_bag"]
    assert mention_order(["the", "laptop"], labels, tolerant=True) == {"laptop": 1}
    assert mention_order(["the", "cable"], ["table", "cable"], tolerant=True) == {"cable": 1}


def test_v0_matching_stays_exact():
    assert mention_order(["the", "cups"], ["cup"]) == {}
    assert mention_order(["the", "cups"], ["cup"], tolerant=True) == {"cup": 1}


def test_places_are_matched_tolerantly_and_written_as_the_map_names_them():
    scene = room(places=(NamedPlace("kitchen", 5, 5), NamedPlace("living_room", 1, 1)))
    prompt = build_prompt(scene, "go to the livng room then the kichen", V1)
    assert said(prompt) == "go to the # living room then the # kitchen"


@pytest.mark.parametrize("text, words", [
    ("Turn left NINETY degrees!", ["turn", "left", "9", "0", "degrees"]),
    ("rotate one hundred and thirty five degrees", ["rotate", "1", "3", "5", "degrees"]),
    ("wait a hundred seconds", ["wait", "1", "0", "0", "seconds"]),
    ("um, wait uh five seconds", ["wait", "5", "seconds"]),
    ("wait for one second", ["wait", "for", "1", "second"]),
    ("go two the kitchen", ["go", "two", "the", "kitchen"]),  # a number without a unit stays a word
    ("bring me four cups", ["bring", "me", "four", "cups"]),
])
def test_speech_normalisation(text, words):
    assert speech_words(text) == words


def test_tokenizer_kind_round_trips_and_selects_the_format(tmp_path):
    V1.save(tmp_path / "tokenizer.json")
    loaded = Tokenizer.load(tmp_path / "tokenizer.json")
    assert loaded.kind == KIND_V1 and loaded.tokens == V1.tokens
    assert build_tokenizer().kind == KIND_V0
    with pytest.raises(ValueError, match="kind"):
        Tokenizer(V1.tokens, "wafer_reasoner-words-v9")
    with pytest.raises(ValueError, match="lacks"):
        Tokenizer(build_tokenizer().tokens, KIND_V1)  # v0's vocabulary has no letters


def test_spell_name_writes_any_place_or_label_in_v1_but_only_known_words_in_v0():
    assert V1.spell_name("living_room") == (V1.ids["living"], V1.ids["_"], V1.ids["room"])
    assert V1.spell_name("attic") == tuple(V1.ids[t] for t in spell_word("attic"))
    assert build_tokenizer().spell_name("attic") is None
    assert V1.spell_name("Bad Name") is None


def test_v0_prompt_is_what_it_was_without_a_tokenizer_or_with_a_v0_one():
    v0 = build_tokenizer()
    scene = room()
    assert build_prompt(scene, "bring me the red cup") == build_prompt(scene, "bring me the red cup", v0)
    assert "thermos" in build_prompt(scene, "bring me the thermos").tokens  # v0 writes the word (<unk> id)


def test_hear_gives_the_normalised_words_mentions_and_say_section():
    from wafer_reasoner.engine.prompt import hear

    heard = hear(room(), "um could you bring me the cups then go to the kichen", V1.format)
    assert heard.words[:3] == ("could", "you", "bring")
    assert [label for label, _, _ in heard.spans] == ["cup"]
    assert " ".join(heard.said).endswith("the @1 cup then go to the # kitchen")
    assert hear(room(), "bring me the cups").said[-1] == "cups"  # v0: exact words, no tags
