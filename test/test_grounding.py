"""Symbolic grounding (understanding/grounding.py) and the prompt that carries its answers to the model; the number
literals and refusal labels a grammar lets a plan write."""

import random
import re

import pytest

from wafer_reasoner.engine.grammar import grammar_for_query
from wafer_reasoner.engine.prompt import build_prompt, tokens_to_plan
from wafer_reasoner.engine.tokenizer import AMBIGUOUS, EOS, MISSING
from wafer_reasoner.planner.scene import NamedPlace, RobotPose, Scene, SceneObject
from wafer_reasoner.training import speech_corpus
from wafer_reasoner.training.vocab import build_tokenizer
from wafer_reasoner.understanding.grounding import ABSENT, Reference, ground, resolve
from wafer_reasoner.understanding.mentions import hear
from wafer_reasoner.understanding.words import said_numbers, speech_words


def obj(object_id, label, color="", x=0.0, y=0.0):
    return SceneObject(object_id, label, color, x=x, y=y)


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


def room(**kwargs) -> Scene:
    """Two cups (red near the robot, blue far away beside the table), one table, one book; a kitchen near the
    blue cup and an office near the red one."""
    defaults = dict(objects=(obj("cup_1", "cup", "red", 1.0, 0.0), obj("cup_2", "cup", "blue", 5.0, 0.0),
                             obj("table_3", "table", "", 5.5, 0.5), obj("book_4", "book", "green", -3.0, 2.0)),
                    places=(NamedPlace("kitchen", 6.0, 1.0), NamedPlace("office", 0.0, 1.0)),
                    robot=RobotPose(0.0, 0.0, 0.0))
    return Scene(**{**defaults, **kwargs})


def meant(scene: Scene, say: str, antecedent: str = "") -> list:
    """Per object mention: the object id, "ambiguous" or "missing"."""
    grounding = ground(scene, hear(scene, say), antecedent)
    return [answer if isinstance(answer, str) else answer.id for _, answer in grounding.objects]


def references(scene: Scene, say: str) -> list:
    return [reference for reference, _ in ground(scene, hear(scene, say)).objects if reference is not None]


# ---- resolution: the contract's rules -------------------------------------------------------------------------


def test_a_label_alone_is_ambiguous_when_two_objects_share_it_and_unique_otherwise():
    assert resolve(room(), "cup") == "ambiguous"
    assert resolve(room(), "table").id == "table_3"
    assert resolve(room(), "sofa") == "missing"


def test_colour_superlative_locators_pick_one_object():
    scene = room()
    assert resolve(scene, "cup", color="blue").id == "cup_2"
    assert resolve(scene, "cup", color="pink") == "missing"
    assert resolve(scene, "cup", superlative="nearest").id == "cup_1"
    assert resolve(scene, "cup", superlative="farthest").id == "cup_2"
    assert resolve(scene, "cup", near_label="table").id == "cup_2"
    assert resolve(scene, "cup", near_label="book") == "missing"
    assert resolve(scene, "cup", near_place="kitchen").id == "cup_2"
    assert resolve(scene, "cup", near_place="office").id == "cup_1"


def test_near_means_any_object_of_that_label_close_by_so_an_unmentioned_one_changes_nothing():
    crowded = room(objects=room().objects + (obj("pen_5", "pen", "", 5.1, 0.2),))  # nearer the cup than the table
    assert resolve(crowded, "cup", near_label="table").id == "cup_2"


def test_perception_spelling_variants_are_one_colour():
    scene = room(objects=(obj("cup_1", "cup", "grey", 1.0, 0.0), obj("cup_2", "cup", "blue", 5.0, 0.0)))
    assert meant(scene, "bring me the gray cup") == ["cup_1"]


# ---- reading references off speech --------------------------------------------------------------------------


def test_modifiers_are_read_around_the_label():
    cup, table = references(room(), "bring me the farthest red cup near the table")
    assert (cup.label, cup.color, cup.superlative, cup.near_label) == ("cup", "red", "farthest", "table")
    assert table == Reference("table", 8, 9)  # the anchor is a mention too; the model learns it is no argument


@pytest.mark.parametrize("say, expected", [
    ("bring me the blue cup", ["cup_2"]),
    ("bring me the blew cup", ["cup_2"]),  # a recogniser's homophone for the colour
    ("bring me the closest cup", ["cup_1"]),
    ("bring me a cup", ["cup_1"]),  # an indefinite: the nearest of several
    ("bring me the cup", ["ambiguous"]),
    ("bring me the big cup", ["ambiguous"]),  # an adjective that is no colour: ignored
    ("bring me the pink cup", ["missing"]),  # a colour no cup has: not "any cup"
    ("bring me the teal cup", ["missing"]),  # a colour word of the contract's list
    ("bring me the big red cup", ["cup_1"]),
    ("bring me the cup next to the table", ["cup_2", "table_3"]),
    ("bring me the cup on the table", ["cup_2", "table_3"]),  # a locator, after a verb that is no put
    ("bring me the cup next two the table", ["cup_2", "table_3"]),  # "to" heard as "two"
    ("bring me the cup by bye the table", ["cup_2", "table_3"]),  # a stutter heard as a homophone
    ("bring me the the cups cups by the the table", ["cup_2", "table_3"]),  # stutters
    ("bring me the cup from the kitchen", ["cup_2"]),  # a place locator
    ("um give me the red cup then put the blue cup on the table", ["cup_1", "cup_2", "table_3"]),
])
def test_what_each_mention_means(say, expected):
    assert meant(room(), say) == expected


def test_after_a_put_verb_the_first_phrase_is_where_the_object_goes():
    assert meant(room(), "put the cup on the table") == ["ambiguous", "table_3"]  # not "the cup on the table"
    assert meant(room(), "put the cup from the kitchen on the table") == ["cup_2", "table_3"]
    assert meant(room(), "take the cup on the table") == ["cup_2", "table_3"]  # take: only "to" sends it
    assert meant(room(), "put the book and the cup on the table") == ["book_4", "ambiguous", "table_3"]


def test_an_anchor_that_is_neither_a_label_nor_a_place_matches_nothing():
    [cup] = references(room(), "bring me the cup by the thermos")  # thermos: no scene label, no place
    assert cup.near_label == ABSENT
    assert meant(room(), "bring me the cup by the thermos") == ["missing"]


def test_a_pronoun_means_the_object_before_it_else_the_previous_part_else_the_held_one():
    assert meant(room(), "the red cup, bring it to me") == ["cup_1", "cup_1"]
    assert meant(room(), "put it on the table", antecedent="book_4") == ["book_4", "table_3"]
    assert meant(room(holding="cup_2"), "put it on the table") == ["cup_2", "table_3"]
    assert meant(room(), "put it on the table") == ["missing", "table_3"]  # nothing it could be
    assert meant(room(), "bring them to me") == ["missing"]  # several things: nothing the language acts on


# ---- the prompt --------------------------------------------------------------------------------------------


def test_the_prompt_tags_every_mention_and_gives_one_answer_each(tokenizer):
    scene = room()
    prompt = build_prompt(scene, "give me the red cup then put the cup in the kitchen", tokenizer)
    text = " ".join(prompt.tokens)
    assert "<say> give me the red @1 then put the @2 cup in the #1 <scene>" in text  # a found object: no label
    assert f"<scene> @1 <o0> @2 {AMBIGUOUS} #1 <p0> <hold> none <plan>" in text
    assert prompt.slot_ids == ("cup_1",) and prompt.place_names == ("kitchen",)
    assert tokens_to_plan(["navigate(", "place:", "<p0>", ")", EOS], prompt) == "navigate(place:kitchen)"


def test_the_held_object_shares_its_slot_with_the_mention_that_means_it(tokenizer):
    scene = room(holding="cup_2")
    prompt = build_prompt(scene, "put the blue cup on the table", tokenizer)
    assert " ".join(prompt.tokens).endswith("@1 <o0> @2 <o1> <hold> <o0> <plan>")
    assert build_prompt(room(), "go to the sofa", tokenizer).tokens[-4:] == ("<scene>", "<hold>", "none", "<plan>")
    assert MISSING in build_prompt(room(), "go to the pink cup", tokenizer).tokens


def test_every_object_a_gold_plan_names_is_grounded_in_the_prompt(tokenizer):
    """The grounder agrees with the corpus's reference planner on the training distribution: each object a gold
    plan acts on is one of the prompt's slots, and a refusal about a scene label has its answer in the prompt
    (save the rare draw whose noise makes the words say something else; training skips those)."""
    rng, disagree = random.Random(5), 0
    for _ in range(400):
        example = speech_corpus.sample(rng, speech_corpus.TRAIN)
        prompt = build_prompt(example["scene"], example["say"], tokenizer)
        named = re.findall(r"obj:([a-z0-9_]+)", example["plan"])
        refusal = re.fullmatch(r"clarify\((ambiguous|not_found):(\w+)\)", example["plan"])
        missing = refusal and refusal.group(2) in {o.label for o in example["scene"].objects} and \
            (AMBIGUOUS if refusal.group(1) == "ambiguous" else MISSING) not in prompt.tokens
        disagree += bool(missing or set(named) - set(prompt.slot_ids))
    assert disagree <= 6


# ---- numbers a plan may write -----------------------------------------------------------------------------------


def test_said_numbers_are_the_turns_and_waits():
    assert said_numbers(speech_words("turn two hundred and seventy three degrees"), "") == ("273",)
    say = "wait 1.5 seconds then turn ninety degrees"
    # the words lose the point ("1 5"), the text keeps it: both readings may be written
    assert said_numbers(speech_words(say), say) == ("1.5", "15", "90")
    assert said_numbers(speech_words("wait two minutes"), "") == ("120",)
    assert said_numbers(speech_words("turn left ninety"), "") == ("90",)
    assert said_numbers(speech_words("go to room 214 and bring me 2 cups"), "") == ()  # no turn, no wait


def test_the_grammar_writes_only_the_numbers_said(tokenizer):
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


def test_a_number_said_is_planned_as_said_however_large(tokenizer):
    ids, scene, say = tokenizer.ids, room(), "wait one hundred thousand seconds"
    grammar = grammar_for_query(tokenizer, build_prompt(scene, say, tokenizer), scene, say)
    assert grammar.accepts([ids[t] for t in ("wait(", "1", "0", "0", "0", "0", "0", ")", EOS)])


def test_the_grammar_refuses_about_a_scene_label_only_as_its_mentions_grounded(tokenizer):
    ids = tokenizer.ids
    scene = room()

    def accepts(say, *tokens):
        grammar = grammar_for_query(tokenizer, build_prompt(scene, say, tokenizer), scene, say)
        pieces = [ids[t] if t in ids else None for t in tokens]
        spelled = [list(tokenizer.spell_name(t[1:])) if p is None else [p] for t, p in zip(tokens, pieces)]
        return grammar.accepts([i for part in spelled for i in part] + [ids[EOS]])

    assert accepts("bring me the cup", "clarify(", "ambiguous:", "=cup", ")")
    assert not accepts("bring me the red cup", "clarify(", "ambiguous:", "=cup", ")")  # it grounded to one cup
    assert not accepts("bring me the red cup", "clarify(", "not_found:", "=cup", ")")
    assert accepts("bring me the pink cup", "clarify(", "not_found:", "=cup", ")")  # no cup is pink
    assert accepts("bring me the thermos", "clarify(", "not_found:", "=thermos", ")")  # not a scene label
    assert not accepts("bring me the thermos", "clarify(", "not_found:", "=bring", ")")  # never a verb


def test_a_not_found_phrase_never_runs_into_a_function_word(tokenizer):
    scene, say = room(), "move over to the keys near the desk and afterwards spin left"
    grammar = grammar_for_query(tokenizer, build_prompt(scene, say, tokenizer), scene, say)

    def not_found(*words):
        name = "_".join(words)
        return grammar.accepts([tokenizer.ids["clarify("], tokenizer.ids["not_found:"], *tokenizer.spell_name(name),
                                tokenizer.ids[")"], tokenizer.ids[EOS]])

    assert not_found("keys") and not_found("desk")
    assert not not_found("desk", "and") and not not_found("the", "keys") and not not_found("move")


def test_a_not_found_names_the_object_not_its_colour_nor_a_place_on_the_map(tokenizer):
    scene = room()
    say = "take the teal cup to the kitchen then go to the garage"
    grammar = grammar_for_query(tokenizer, build_prompt(scene, say, tokenizer), scene, say)

    def not_found(name):
        return grammar.accepts([tokenizer.ids["clarify("], tokenizer.ids["not_found:"], *tokenizer.spell_name(name),
                                tokenizer.ids[")"], tokenizer.ids[EOS]])

    assert not_found("cup") and not_found("garage")  # no teal cup; no garage on the map
    assert not not_found("teal") and not not_found("kitchen")


def test_a_verb_said_exactly_is_no_slip_of_a_label():
    scene = room(objects=(obj("plate_1", "plate", "", 1.0, 0.0), obj("table_3", "table", "", 5.5, 0.5)))
    assert [label for label, _, _ in hear(scene, "place the cup on the table").spans] == ["table"]
    assert [label for label, _, _ in hear(scene, "bring me the platr").spans] == ["plate"]  # a slip still is


def test_a_pronoun_with_nothing_before_it_points_at_nothing():
    from wafer_reasoner.understanding.grounding import points_at_nothing

    def nothing(scene, say, antecedent=""):
        heard = hear(scene, say)
        return points_at_nothing(heard, ground(scene, heard, antecedent))

    assert nothing(room(), "put it on the table")
    assert not nothing(room(), "put it on the table", antecedent="cup_1")
    assert not nothing(room(holding="cup_1"), "put it on the table")
    assert not nothing(room(), "the red cup, put it on the table")
    assert not nothing(room(), "the new mallet, put it on the table")  # a not-found, which the model writes


def test_a_number_in_a_not_found_name_is_one_word_and_written_whole(tokenizer):
    scene = room()
    for say, name in (("go to dock twelve", "dock_12"), ("go to room 214", "room_214")):
        prompt = build_prompt(scene, say, tokenizer)
        grammar = grammar_for_query(tokenizer, prompt, scene, say)
        spelled = tokenizer.spell_name("_".join(name.replace("_", " ").replace("12", "1 2").replace("214", "2 1 4")
                                                .split()))
        tokens = [tokenizer.ids["clarify("], tokenizer.ids["not_found:"], *spelled, tokenizer.ids[")"],
                  tokenizer.ids[EOS]]
        assert grammar.accepts(tokens), say
        assert tokens_to_plan([tokenizer.tokens[t] for t in tokens], prompt) == f"clarify(not_found:{name})"


def test_a_source_that_is_not_there_is_never_what_is_not_found(tokenizer):
    scene = room()
    say = "bring me the stapler from the attic"  # neither a stapler nor an attic
    grammar = grammar_for_query(tokenizer, build_prompt(scene, say, tokenizer), scene, say)

    def not_found(name):
        return grammar.accepts([tokenizer.ids["clarify("], tokenizer.ids["not_found:"], *tokenizer.spell_name(name),
                                tokenizer.ids[")"], tokenizer.ids[EOS]])

    assert not_found("stapler") and not not_found("attic")  # the locator leaves nothing: the stapler (2.6)


def test_a_place_said_with_a_word_before_it_that_no_table_knows_is_not_that_place():
    scene = Scene(places=(NamedPlace("lab", 1.0, 1.0), NamedPlace("zorbix_hall", 2.0, 2.0)))
    assert hear(scene, "go to the zorbix lab").places == ()  # every word said belongs to one name (2.7.3)
    assert [name for name, _, _ in hear(scene, "go to the main lab").places] == ["lab"]  # an adjective
    assert [name for name, _, _ in hear(scene, "go to the zorbix hall").places] == ["zorbix_hall"]
    assert hear(scene, "go to the lab 2").places == ()  # a number more: another place (2.7.4)
    assert [name for name, _, _ in hear(scene, "wait in the lab 5 seconds").places] == ["lab"]  # a quantity


@pytest.mark.parametrize("say", [
    "put the red cup from the office and the blue cup on the table",  # the first object's own locator, then "and"
    "put the red cup and the farthest cup on the table",  # a superlative after "and"
    "leave the empty red cup in the kitchen",  # "empty" is no verb after "the"
    "after that place the red cup at the kitchen",  # "place" is a verb after "that"
])
def test_every_object_of_a_put_goes_where_the_put_says(say):
    scene = room()
    answers = meant(scene, say)
    assert "missing" not in answers and "ambiguous" not in answers, answers
    assert all(r.near_label == "" and r.near_place in ("", "office") for r in references(scene, say))


@pytest.mark.parametrize(("say", "antecedent", "expected"), [
    ("the book, put them on the table", "", ["book_4", "book_4", "table_3"]),  # "them" for one thing is "it"
    ("put them on the table", "book_4", ["book_4", "table_3"]),
    ("the book and the table, put them in the kitchen", "", ["book_4", "table_3", "missing"]),  # several
    ("put those on the table", "book_4", ["missing", "table_3"]),
])
def test_them_stands_for_one_thing_and_never_for_several(say, antecedent, expected):
    assert meant(room(), say, antecedent) == expected


def test_them_after_a_part_that_picked_several_things_is_no_one_object():
    from wafer_reasoner.understanding.clauses import picks_several
    assert picks_several("navigate(obj:a); pick(obj:a); navigate(obj:b); pick(obj:b)")
    assert not picks_several("navigate(obj:a); pick(obj:a); navigate(obj:b); place(obj:a, obj:b); pick(obj:a)")


def test_a_mention_that_names_nothing_or_several_things_leaves_only_a_clarify(tokenizer):
    ids, scene = tokenizer.ids, room()

    def moves(say):
        grammar = grammar_for_query(tokenizer, build_prompt(scene, say, tokenizer), scene, say)
        return grammar.accepts([ids["navigate("], ids["obj:"], ids["<o0>"], ids[")"], ids[EOS]])

    assert not moves("go to the cup")  # two cups
    assert not moves("go to the blue cup in the office")  # the blue cup is not in the office: nothing is
    assert moves("go to the red cup")
    assert not moves("go to the book on the table")  # the book is not on the table
    assert moves("go to the cup on the table")  # the blue cup; the table, an anchor, names one anyway
