"""Symbolic grounding (understanding/grounding.py) and the prompt that carries its answers to the model; the
number literals a grammar lets a plan write."""

import random
import re

import pytest

from wafer_reasoner.engine.grammar import grammar_for_query
from wafer_reasoner.engine.prompt import build_prompt, tokens_to_plan
from wafer_reasoner.engine.tokenizer import AMBIGUOUS, EOS, MISSING
from wafer_reasoner.planner.scene import NamedPlace, RobotPose, Scene, SceneObject
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.training.vocab import build_tokenizer
from wafer_reasoner.understanding.grounding import ABSENT, Reference, read_references, resolve, resolve_reference
from wafer_reasoner.understanding.mentions import mention_spans
from wafer_reasoner.understanding.words import said_numbers, speech_words


def obj(object_id, label, color="", x=0.0, y=0.0):
    return SceneObject(object_id, label, color, x=x, y=y)


@pytest.fixture(scope="module")
def v2():
    return build_tokenizer()


def room() -> Scene:
    """Two cups (red near the robot, blue far away beside the table), one table, one book."""
    return Scene(objects=(obj("cup_1", "cup", "red", 1.0, 0.0), obj("cup_2", "cup", "blue", 5.0, 0.0),
                          obj("table_3", "table", "", 5.5, 0.5), obj("book_4", "book", "green", -3.0, 2.0)),
                 robot=RobotPose(0.0, 0.0, 0.0))


def references(scene: Scene, say: str, known=lambda word: True) -> list:
    words = speech_words(say, destutter=True)
    spans = mention_spans(words, [o.label for o in scene.objects], tolerant=True, every=True)
    return read_references(words, spans, scene, known)


def meant(scene: Scene, say: str, known=lambda word: True) -> list:
    """Per mention: the object id, "ambiguous" or "missing"."""
    answers = [resolve_reference(scene, ref) for ref in references(scene, say, known)]
    return [answer if isinstance(answer, str) else answer.id for answer in answers]


# ---- resolution: the contract's rules -------------------------------------------------------------------------


def test_a_label_alone_is_ambiguous_when_two_objects_share_it_and_unique_otherwise():
    assert resolve(room(), "cup") == "ambiguous"
    assert resolve(room(), "table").id == "table_3"
    assert resolve(room(), "sofa") == "missing"


def test_colour_superlative_and_near_pick_one_object():
    scene = room()
    assert resolve(scene, "cup", color="blue").id == "cup_2"
    assert resolve(scene, "cup", color="pink") == "missing"
    assert resolve(scene, "cup", superlative="nearest").id == "cup_1"
    assert resolve(scene, "cup", superlative="farthest").id == "cup_2"
    assert resolve(scene, "cup", near_label="table").id == "cup_2"
    assert resolve(scene, "cup", near_label="book") == "missing"


# ---- reading references off speech --------------------------------------------------------------------------


def test_modifiers_are_read_around_the_label():
    cup, table = references(room(), "bring me the farthest red cup near the table")
    assert cup == Reference("cup", 5, 6, color="red", superlative="farthest", near_label="table")
    assert table == Reference("table", 8, 9)  # the anchor is a mention too; the model learns it is no argument


@pytest.mark.parametrize("say, expected", [
    ("bring me the blue cup", ["cup_2"]),
    ("bring me the blew cup", ["cup_2"]),  # a recogniser's homophone for the colour
    ("bring me the closest cup", ["cup_1"]),
    ("bring me the cup", ["ambiguous"]),
    ("bring me the pink cup", ["missing"]),  # a colour no cup has: not "any cup"
    ("bring me the cup next to the table", ["cup_2", "table_3"]),
    ("bring me the cup next two the table", ["cup_2", "table_3"]),  # "to" heard as "two"
    ("bring me the cup next the table", ["cup_2", "table_3"]),  # "to" dropped
    ("bring me the cup by bye the table", ["cup_2", "table_3"]),  # a stutter heard as a homophone
    ("bring me the the cups cups by the the table", ["cup_2", "table_3"]),  # stutters
    ("um give me the red cup then put the blue cup on the table", ["cup_1", "cup_2", "table_3"]),
])
def test_what_each_mention_means(say, expected):
    assert meant(room(), say) == expected


def test_an_unknown_word_before_a_label_is_a_colour_that_no_object_has():
    known = lambda word: word not in ("teal", "thermos")  # noqa: E731
    assert meant(room(), "bring me the teal cup", known) == ["missing"]
    assert meant(room(), "bring me the big cup") == ["ambiguous"]  # a known word that is no colour: no filter


def test_an_anchor_the_scene_does_not_have_matches_nothing():
    known = lambda word: word != "thermos"  # noqa: E731
    [cup] = references(room(), "bring me the cup by the thermos", known)  # thermos: no scene label, no mention
    assert cup.near_label == ABSENT
    assert resolve_reference(room(), cup) == "missing"


# ---- the prompt --------------------------------------------------------------------------------------------


def test_the_prompt_tags_every_mention_and_gives_one_answer_each(v2):
    scene = room()
    prompt = build_prompt(scene, "give me the red cup then put the cup on the table", v2)
    text = " ".join(prompt.tokens)
    assert "<say> give me the red @1 cup then put the @2 cup on the @3 table <scene>" in text
    assert f"<scene> @1 <o0> @2 {AMBIGUOUS} @3 <o1> <hold> none <plan>" in text
    assert prompt.slot_ids == ("cup_1", "table_3")
    assert tokens_to_plan(["navigate(", "obj:", "<o1>", ")", EOS], prompt) == "navigate(obj:table_3)"


def test_the_held_object_shares_its_slot_with_the_mention_that_means_it(v2):
    scene = Scene(objects=room().objects, holding="cup_2")
    prompt = build_prompt(scene, "put the blue cup on the table", v2)
    assert " ".join(prompt.tokens).endswith("@1 <o0> @2 <o1> <hold> <o0> <plan>")
    assert build_prompt(Scene(objects=room().objects), "go to the sofa", v2).tokens[-4:] == \
        ("<scene>", "<hold>", "none", "<plan>")
    assert MISSING in build_prompt(room(), "go to the pink cup", v2).tokens


def test_every_object_a_gold_plan_names_is_grounded_in_the_prompt(v2):
    """The grounder agrees with the corpus's reference planner on the training distribution: each object a gold
    plan acts on is one of the prompt's slots, and a refusal about a scene label has its answer in the prompt."""
    rng = random.Random(5)
    for _ in range(400):
        example = speech_corpus.sample(rng, speech_corpus.TRAIN_V2)
        prompt = build_prompt(example["scene"], example["say"], v2)
        for object_id in re.findall(r"obj:([a-z0-9_]+)", example["plan"]):
            assert object_id in prompt.slot_ids, (example["say"], example["plan"], prompt.tokens)
        refusal = re.fullmatch(r"clarify\((ambiguous|not_found):(\w+)\)", example["plan"])
        if refusal and refusal.group(2) in {o.label for o in example["scene"].objects}:
            answer = AMBIGUOUS if refusal.group(1) == "ambiguous" else MISSING
            assert answer in prompt.tokens, (example["say"], example["plan"], prompt.tokens)


# ---- numbers a plan may write -----------------------------------------------------------------------------------


def test_said_numbers_come_from_number_words_digits_and_decimals():
    assert said_numbers(speech_words("turn two hundred and seventy three degrees"), "") == ("273",)
    say = "wait 1.5 seconds then turn ninety degrees"
    # the words lose the point ("1 5"), the text keeps it: both readings may be written
    assert said_numbers(speech_words(say), say) == ("1.5", "15", "90")


def test_the_grammar_writes_only_the_numbers_said(v2):
    tokenizer = v2
    ids = tokenizer.ids
    scene, say = room(), "please spin left two hundred and seventy three degrees"
    grammar = grammar_for_query(tokenizer, build_prompt(scene, say, tokenizer), scene, say)

    def plan(*tokens):
        return [ids[t] for t in tokens] + [ids[EOS]]

    assert grammar.accepts(plan("rotate(", "2", "7", "3", ")"))
    assert grammar.accepts(plan("rotate(", "-", "2", "7", "3", ")"))
    assert grammar.accepts(plan("rotate(", "1", "8", "0", ")"))  # "turn around" says no number
    assert not grammar.accepts(plan("rotate(", "2", "7", ")"))  # cut short
    assert not grammar.accepts(plan("wait(", "5", ")"))  # never said


def test_the_grammar_refuses_about_a_scene_label_only_as_its_mentions_grounded(v2):
    ids = v2.ids
    scene = room()

    def accepts(say, *tokens):
        grammar = grammar_for_query(v2, build_prompt(scene, say, v2), scene, say)
        pieces = [ids[t] if t in ids else None for t in tokens]
        spelled = [list(v2.spell_name(t[1:])) if p is None else [p] for t, p in zip(tokens, pieces)]
        return grammar.accepts([i for part in spelled for i in part] + [ids[EOS]])

    assert accepts("bring me the cup", "clarify(", "ambiguous:", "=cup", ")")
    assert not accepts("bring me the red cup", "clarify(", "ambiguous:", "=cup", ")")  # it grounded to one cup
    assert not accepts("bring me the red cup", "clarify(", "not_found:", "=cup", ")")
    assert accepts("bring me the pink cup", "clarify(", "not_found:", "=cup", ")")  # no cup is pink
    assert accepts("bring me the thermos", "clarify(", "not_found:", "=thermos", ")")  # not a scene label


def test_a_not_found_phrase_never_runs_into_a_function_word(v2):
    scene, say = room(), "move over to the keys near the desk and afterwards spin left"
    grammar = grammar_for_query(v2, build_prompt(scene, say, v2), scene, say)

    def not_found(*words):
        name = "_".join(words)
        return grammar.accepts([v2.ids["clarify("], v2.ids["not_found:"], *v2.spell_name(name), v2.ids[")"],
                                v2.ids[EOS]])

    assert not_found("keys") and not_found("desk")
    assert not not_found("desk", "and") and not not_found("the", "keys")


def test_a_not_found_names_the_object_not_its_colour_nor_a_place_on_the_map(v2):
    scene = Scene(objects=room().objects, places=(NamedPlace("kitchen", 1.0, 1.0),))
    say = "take the teal cup to the kitchen then go to the garage"
    grammar = grammar_for_query(v2, build_prompt(scene, say, v2), scene, say)

    def not_found(name):
        return grammar.accepts([v2.ids["clarify("], v2.ids["not_found:"], *v2.spell_name(name), v2.ids[")"],
                                v2.ids[EOS]])

    assert not_found("cup") and not_found("garage")  # no teal cup; no garage on the map
    assert not not_found("teal") and not not_found("kitchen")
