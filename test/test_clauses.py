"""Clause by clause planning (understanding/clauses.py) and PlannerModel's use of it."""

from pathlib import Path

import pytest

from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.planner.scene import RobotPose, Scene, SceneObject
from wafer_reasoner.understanding import clauses, outside

TINY = Path(__file__).resolve().parent / "data" / "tiny_planner"


@pytest.mark.parametrize("say, parts", [
    ("go to the kitchen then bring me the cup", ["go to the kitchen", "bring me the cup"]),
    ("first turn left 90 degrees, and then wait 5 seconds. After that, come along and finally stop",
     ["first turn left 90 degrees", "wait 5 seconds", "come along", "stop"]),
    ("drop the cup on the sofa than fetch the remote", ["drop the cup on the sofa", "fetch the remote"]),
    ("put the book on the table and afterwards go to the dock", ["put the book on the table", "go to the dock"]),
    # never a split: "and" or a comma after a bare "go" or before a noun, a connector word inside another word
    ("go and get the first aid kit", ["go and get the first aid kit"]),
    ("the red cup, bring it to me", ["the red cup, bring it to me"]),
    ("listen, bring me the cup", ["listen, bring me the cup"]),
    ("i just got home. if you don't mind, turn left", ["i just got home. if you don't mind, turn left"]),
    ("could could you please go, grab the cup", ["could could you please go, grab the cup"]),
    # "and" or a comma before a command verb, after a part with a verb of its own
    ("go to the kitchen and turn around", ["go to the kitchen", "turn around"]),
    ("pick up the cup, put it on the table", ["pick up the cup", "put it on the table"]),
    ("bring me the thenar pad", ["bring me the thenar pad"]),
    ("then", ["then"]),
])
def test_an_utterance_splits_only_at_clause_connectors(say, parts):
    assert clauses.split_clauses(say) == parts


def test_plans_join_as_the_contract_joins_clauses():
    assert clauses.join_plans(["rotate(90)", "wait(5)"]) == "rotate(90); wait(5)"
    assert clauses.join_plans(["rotate(90)", "clarify(not_found:cup)", "clarify(unsupported)"]) == \
        "clarify(not_found:cup)"


def test_the_next_part_sees_what_the_robot_will_hold():
    scene = Scene(objects=(SceneObject("cup_1", "cup", "", x=1.0, y=0.0),), holding="")
    after_pick = clauses.scene_after(scene, "navigate(obj:cup_1); pick(obj:cup_1)")
    assert after_pick.holding == "cup_1"
    assert clauses.scene_after(after_pick, "navigate(person:user); handover(obj:cup_1, person:user)").holding == ""
    assert clauses.scene_after(scene, "not a plan") is scene


def test_a_model_plans_each_part_with_the_state_the_parts_before_leave():
    model = PlannerModel(TINY)
    scene = Scene(objects=(SceneObject("cup_1", "cup", "red", x=1.0, y=0.0),
                           SceneObject("table_2", "table", "", x=3.0, y=1.0)), robot=RobotPose(0.0, 0.0, 0.0))
    say = "go to the red cup then go to the table and after that turn 90 degrees"
    whole = model.generate(scene, say)
    parts, antecedent = [], ""
    for part in clauses.split_clauses(say):
        parts.append(model.generate(scene, part, antecedent=antecedent))
        scene = clauses.scene_after(scene, parts[-1].text)
        antecedent = clauses.acted_on(parts[-1].text) or antecedent
    assert whole.parts == 3 and all(part.parts == 1 for part in parts)
    assert whole.text == clauses.join_plans([part.text for part in parts])
    assert whole.tokens == sum(part.tokens for part in parts)


@pytest.mark.parametrize("part", ["wash the cup", "could you please vacuum the rug", "go and mop the floor",
                                  "shut the door",
                                  "I need you to water the plants", "robot, lock the door", "hey, fry an egg",
                                  "the red cup, wash it"])
def test_a_verb_the_language_cannot_do_asks_outside(part):
    assert outside.asks_outside(part)


@pytest.mark.parametrize("part", ["bring me the cup", "go to the kitchen", "turn left", "set the cup on the table",
                                  "put the cup close to the sink", "the red cup, bring it to me", "bring me the iron",
                                  "read cup"])
def test_a_supported_command_or_a_noun_first_does_not(part):
    assert not outside.asks_outside(part)


def test_a_word_that_names_something_in_view_is_no_verb():
    assert outside.asks_outside("iron, bring it to me")
    assert not outside.asks_outside("iron, bring it to me", frozenset({"iron"}))


def test_any_part_outside_makes_the_whole_a_refusal_without_the_model():
    model = PlannerModel(TINY)
    scene = Scene(robot=RobotPose(0.0, 0.0, 0.0), objects=(SceneObject("cup_1", "cup", "red", 1.0, 0.0),))
    assert model.generate(scene, "wash the cup").tokens == 0  # the model is not asked
    for say in ("wash the cup", "bring me the cup and then wash it", "go to the cup and wipe it"):
        assert model.generate(scene, say).text == "clarify(unsupported)", say


@pytest.mark.parametrize("part, refused", [
    ("wait a bit", True), ("hold on a while", True), ("could you pause for a moment please", True),
    ("wait here", True), ("hold on", True), ("wait for me", True),
    ("wait a second", False), ("hold on a minute", False), ("wait 5 seconds", False), ("wait five seconds", False),
    ("wait, bring me the cup", False), ("hold the cup", False), ("go to the kitchen", False),
])
def test_a_wait_that_says_no_time_is_refused_without_the_model(part, refused):
    assert outside.waits_without_duration(part) is refused


def test_a_wait_without_a_time_never_reaches_the_model():
    model = PlannerModel(TINY)
    scene = Scene(robot=RobotPose(0.0, 0.0, 0.0), objects=(SceneObject("cup_1", "cup", "red", 1.0, 0.0),))
    assert model.generate(scene, "wait there for a bit").tokens == 0  # the model is not asked
    for say in ("wait there for a bit", "go to the cup and wait there for a bit"):
        assert model.generate(scene, say).text == "clarify(unsupported)", say


_NAMES = frozenset({"paint", "can", "sandwich", "water", "bottle", "trolley", "cup", "counter", "kitchen"})


@pytest.mark.parametrize("say, parts", [
    # a word of a name in view is no verb: no split before "grab it"
    ("the paint can near the sandwich, grab it", ["the paint can near the sandwich, grab it"]),
    ("the water bottle under the trolley, pick it up", ["the water bottle under the trolley, pick it up"]),
    # a chunk that only names what the next command points at opens that command's part
    ("turn left, the red cup, bring it to me", ["turn left", "the red cup, bring it to me"]),
    # a place's name does not make "go to kitchen" a bare "go"
    ("pick up the cup, go to kitchen, and put it on the counter",
     ["pick up the cup", "go to kitchen", "put it on the counter"]),
])
def test_names_in_view_are_never_taken_for_verbs_when_splitting(say, parts):
    assert clauses.split_clauses(say, _NAMES) == parts


def test_without_the_names_a_verb_word_in_a_label_still_splits():
    assert clauses.split_clauses("the paint can near the sandwich, grab it") == \
        ["the paint can near the sandwich", "grab it"]


_DELIVERY = "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"


def test_a_part_that_only_repeats_the_delivery_just_made_adds_nothing():
    assert clauses.join_plans([_DELIVERY, _DELIVERY]) == _DELIVERY
    assert clauses.join_plans([_DELIVERY, _DELIVERY, "rotate(90)"]) == _DELIVERY + "; rotate(90)"
    # another object, or anything between the two, is planned as said
    other = _DELIVERY.replace("cup_1", "mug_1")
    assert clauses.join_plans([_DELIVERY, other]) == f"{_DELIVERY}; {other}"
    assert clauses.join_plans([_DELIVERY, "rotate(90)", _DELIVERY]) == f"{_DELIVERY}; rotate(90); {_DELIVERY}"
    assert not clauses.repeats_delivery("navigate(obj:cup_1); pick(obj:cup_1)", _DELIVERY)


@pytest.mark.parametrize("part", ["polish the lamp", "could you juggle it", "sprint to the door",
                                  "please sharpen my pencil"])
def test_a_word_no_table_knows_in_a_verbs_place_asks_outside(part):
    assert outside.asks_outside(part)


@pytest.mark.parametrize("part", ["fech the cup", "brng me the cup", "gizmo, bring it to me", "tunr left",
                                  "the cup, bring it", "rond to the sink"])
def test_a_misheard_verb_or_a_name_first_does_not(part):
    assert not outside.asks_outside(part, frozenset({"rond"}))


def test_a_word_that_names_a_place_on_the_map_is_no_verb():
    scene = Scene(objects=(SceneObject("cup_1", "cup", "", 1.0, 0.0),), places=())
    assert outside.refused_without_model(scene, "scullery the cup, grab it")
    from wafer_reasoner.planner.scene import NamedPlace
    mapped = Scene(objects=scene.objects, places=(NamedPlace("scullery", 2.0, 0.0),))
    assert not outside.refused_without_model(mapped, "scullery the cup, grab it")


@pytest.mark.parametrize("said, question", [("what's your name robot?", True), ("where's my phone", True),
                                            ("what a morning", False), ("ugh, what a mess", False),
                                            ("Ugh, what weather. Fetch the coat.", False),
                                            ("what time is it", True), ("what weather is it?", True)])
def test_contracted_question_words_ask_and_exclamations_do_not(said, question):
    assert outside.is_question(said) is question


def test_a_contraction_or_an_interjection_is_never_a_verb_the_language_lacks():
    assert not outside.asks_outside("here's the thing")
    assert not outside.asks_outside("oof, this box is heavy")
    assert outside.opens_with_unknown_verb("wrap the gift box") and not outside.opens_with_unknown_verb("ugh the box")


@pytest.mark.parametrize("part", ["Take the folder to Priya, please", "Deliver the sample box to Dr. Okafor",
                                  "could you follow him", "go help my dad in the garage",
                                  "bring the cup to the guest", "Follow Alice"])
def test_a_part_about_someone_other_than_the_speaker_is_refused(part):
    assert outside.names_someone_else(part)


@pytest.mark.parametrize("part", ["bring me the baby monitor", "take me to Zorbin", "go to Zorbin", "Bring me the cup",
                                  "put it in the Kitchen"])
def test_the_speaker_things_in_view_and_places_are_nobody_else(part):
    assert not outside.names_someone_else(part, frozenset({"baby", "monitor", "kitchen"}))


def test_someone_else_makes_the_whole_a_refusal_without_the_model():
    scene = Scene(objects=(SceneObject("cup_1", "cup", "", 1.0, 0.0),))
    assert outside.refused_without_model(scene, "bring me the cup and then give the plate to the guest")
    assert not outside.refused_without_model(scene, "bring me the cup")


def test_an_unknown_verb_of_motion_asks_outside():
    assert outside.asks_outside("tiptoe into the nursery")


@pytest.mark.parametrize("part", ["follow her", "You give the plate to her, please", "give it to Sam",
                                  "give this cup to them", "hand over the clipboard to the supervisor",
                                  "bring the water bottle to my grandson", "take the keys to my niece"])
def test_pronouns_kin_and_a_name_after_a_handing_verb_are_someone_else(part):
    assert outside.names_someone_else(part)


def test_her_before_a_thing_is_a_possessive_not_a_person():
    assert not outside.names_someone_else("bring me her phone")
    assert not outside.names_someone_else("take it to Zorbin")  # a verb that may go to a place


@pytest.mark.parametrize(("part", "lacks"), [
    ("bring me the cup, no wait, the red one", True),  # a self-correction of the thing meant
    ("grab the mug, I mean the blue one", True),
    ("pick up the mug blue", True),  # a colour after the label
    ("bring me the sandwich, the one on the side table", True),  # an apposition
    ("bring me the book that is on the shelf", True),  # a relative clause
    ("hand me the box which is by the door", True),
    ("bring me the red cup", False),
    ("bring me the desk light", False),  # a name that ends with a colour word
    ("I want that you bring me the cup", False),  # a way to ask, no relative clause
    ("bring me the cup and then the blue one", False),
    ("grab the mug sorry the box", True),  # a recogniser writes no comma
    ("fetch the book, the green one", True),
    ("bring me the mug that has coffee in it", True),
    ("I'd like the cup that's on the box", True),
    ("get the box that squeaks", True),
    ("you bring the cup red to me", True),
    ("bring me the cup so that I can drink", False),
])
def test_what_the_language_lacks_is_known_without_the_model(part, lacks):
    assert outside.says_what_language_lacks(part, frozenset({"cup", "mug", "sandwich", "book", "box", "desk",
                                                             "light"})) is lacks


@pytest.mark.parametrize("part", ["don't go to the kitchen", "please do not touch the kettle",
                                  "never pick up the knife", "robot, don't move", "Not go to garage please"])
def test_a_command_said_negated_is_refused(part):
    assert outside.negates_a_command(part)


@pytest.mark.parametrize(("said", "nothing"), [
    ("the mug, please", True), ("over here please", True), ("Vai in cucina per favore", True),
    ("the cup, bring it to me", False), ("I need the stapler", False), ("hang on a second", False),
])
def test_without_a_request_word_nothing_is_asked(said, nothing):
    assert outside.asks_nothing(said) is nothing


@pytest.mark.parametrize(("said", "asks"), [
    ("I'd like to know if the printer has paper", True), ("tell me whether the kettle is on", True),
    ("Bring me the charger, and is the battery full?", True), ("I wonder where the remote is", True),
    ("bring me the cup, is that ok?", False), ("bring me the cup, would you?", False),
    ("bring me the cup", False),
])
def test_a_question_anywhere_in_the_utterance_is_one(said, asks):
    assert outside.asks_a_question(said) is asks


@pytest.mark.parametrize("part", ["grab the parcel, sign for it, and bring it to me", "go to bay 3, scan the pallet",
                                  "navigate the cart to the dock", "take the box to bay 2, no, the crate"])
def test_work_the_robot_cannot_do_hidden_after_a_comma_is_refused(part):
    assert outside.asks_outside(part) or outside.says_what_language_lacks(part)


@pytest.mark.parametrize(("part", "later"), [
    ("bring me the mug at eight", True), ("bring me the mug at 8 pm", True), ("go to the office tomorrow", True),
    ("bring me the mug every morning", True), ("in ten minutes, go to the kitchen", True),
    ("bring me the pen if the doorbell rings", True), ("bring me the cup when the kettle boils", True),
    ("pick up the box after lunch", True), ("if you see my specs, bring them to me", True),
    ("wait in the hall for ten minutes", False), ("put the mug at the kitchen", False), ("wait 10 minutes", False),
    ("bring me the cup if you don't mind", False), ("go to the kitchen when you can", False),
    ("bring me the cup, then go to the office", False),
])
def test_a_request_for_a_time_or_an_event_to_come_is_known(part, later):
    assert outside.asks_for_later(part) is later


@pytest.mark.parametrize(("part", "way"), [
    ("go left", True), ("go back", True), ("move forward", True), ("go back please", True),
    ("go back to the kitchen", False), ("head back to the office", False), ("come back", False),
    ("turn left", False), ("go straight to the kitchen", False),
])
def test_going_a_way_is_not_going_to_a_place(part, way):
    assert outside.goes_a_direction(part) is way
    assert not outside.asks_outside("go straight to the kitchen")


@pytest.mark.parametrize(("said", "refused"), [
    ("Honestly, I need a break.", True), ("I could use a hand", True), ("give me a hand", True),
    ("I need the box", False), ("I need a break from the noise, bring me the cup", False),
])
def test_a_request_word_before_what_no_robot_can_bring(said, refused):
    scene = Scene(objects=(SceneObject("box_1", "box", "", 1.0, 0.0), SceneObject("cup_1", "cup", "", 2.0, 0.0)))
    assert outside.refused_without_model(scene, said) is refused


def test_a_put_particle_is_no_destination():
    assert outside.asks_outside("put the kettle on for me")
    assert not outside.asks_outside("put the mug on the box")


def test_noise_after_a_comma_is_no_verb():
    assert not outside.asks_outside("transfer beakr, beakr to corridor")


def test_a_request_is_no_negation():
    assert not outside.negates_a_command("bring me the cup, I don't need the plate")
    assert not outside.negates_a_command("go to the kitchen")


@pytest.mark.parametrize("part", ["watch the kettle", "stack the boxes", "start the dishwasher", "wrap the pallet",
                                  "water the plants"])
def test_chores_are_refused_even_when_the_verb_names_a_thing_in_view(part):
    assert outside.asks_outside(part, frozenset({"wrap", "water", "watch", "kettle", "pallet", "plants"}))


def test_a_word_that_names_a_thing_in_view_is_no_chore_verb_before_a_comma():
    assert not outside.asks_outside("water, bring it to me", frozenset({"water"}))


@pytest.mark.parametrize(("part", "refused"), [
    ("leave the mug", True), ("set the cup", True), ("put it here", True), ("put the cup away", True),
    ("leave the mug on the table", False), ("set the cup down on the tray", False),
    ("put on the kettle", True), ("drop off the battery at the dock", False),  # a device, and a put
    ("put it there", False),  # "there" points back at a destination said ("the sponge goes on the shelf, ...")
    ("rotate the dial to the left", True), ("rotate to the left", False),  # a device; a turn
    ("take the crate to bay 2 and log it", True), ("put the fork and the spoon in the sink", False),
    ("move the chair", True),  # a put with no destination
    ("could you move it", True),
    ("move the box over here", True),  # no row of the contract
    ("move the chair to the kitchen", False),
    ("move to the chair", False),
    ("move over to the lounge", False),
])
def test_puts_need_a_destination_devices_none_and_a_chore_after_and_counts(part, refused):
    assert outside.asks_outside(part) is refused


@pytest.mark.parametrize(("part", "refused"), [
    ("turn around three times", True), ("spin around twice", True), ("turn left 90 degrees 2 times", True),
    ("rotate a quarter turn to the left", True), ("turn half a turn", True),
    ("turn around", False), ("turn left 90 degrees", False),
])
def test_a_turn_said_again_is_not_in_the_language(part, refused):
    assert outside.turns_a_vague_amount(part) is refused


def test_it_never_means_a_thing_its_own_part_names():
    scene = Scene(objects=(SceneObject("bottle_1", "bottle", "", 1.0, 0.0),
                           SceneObject("sink_1", "sink", "", 2.0, 0.0)))
    assert clauses.antecedent_for("put it in the sink", scene, ["bottle_1", "sink_1"]) == "bottle_1"
    assert clauses.antecedent_for("pick it up", scene, ["bottle_1", "sink_1"]) == "sink_1"
    assert clauses.antecedent_for("pick it up", scene, []) == ""


def test_a_place_named_after_people_is_no_person():
    assert not outside.names_someone_else("put the pillow down on nurse station")
    assert not outside.names_someone_else("drive into the kids room")
    assert outside.names_someone_else("bring the cup to the nurse, please")


def test_it_after_a_part_means_the_object_it_moved_not_where_it_drove():
    assert clauses.acted_on("navigate(obj:machine_1); place(obj:mask_1, obj:machine_1)") == "mask_1"
    assert clauses.acted_on("navigate(obj:cup_1); pick(obj:cup_1); navigate(obj:table_1); "
                            "place(obj:cup_1, obj:table_1)") == "cup_1"
    assert clauses.acted_on("navigate(obj:cup_1)") == "cup_1"
    assert clauses.acted_on("rotate(90)") == "" and clauses.acted_on("not a plan") == ""


def test_a_verb_the_language_lacks_before_a_colour_asks_outside():
    assert outside.asks_outside("sniff turquoise clipboard")


@pytest.mark.parametrize("part", [
    "make me a sandwich", "make up room 5", "turn the radio down", "switch on the fan", "turn off the tv",
    "drive the cart to the dock", "walk the trolley into the lift", "help me with my coat",
])
def test_verbs_the_language_has_only_without_an_object_or_never(part):
    scene = Scene(objects=(SceneObject("cart_1", "cart", "", 1.0, 0.0),), places=())
    assert outside.refused_without_model(scene, part)


@pytest.mark.parametrize("part", [
    "make your way to the kitchen", "turn all the way around", "turn left", "drive to the dock", "drive the cart",
])
def test_the_same_verbs_without_an_object_are_the_languages(part):
    scene = Scene(objects=(SceneObject("cart_1", "cart", "", 1.0, 0.0),), places=())
    assert not outside.refused_without_model(scene, part)


def test_a_word_that_names_a_thing_in_view_is_a_verb_when_a_determiner_follows_it():
    scene = Scene(objects=(SceneObject("hammer_1", "hammer", "", 1.0, 0.0), SceneObject("nail_1", "nail", "", 2, 0)),
                  places=())
    assert outside.refused_without_model(scene, "hammer the nail in")
    assert not outside.refused_without_model(scene, "hammer, bring it to me")


@pytest.mark.parametrize(("part", "refused"), [
    ("wait here until the bus comes", True), ("hang on a moment", True), ("hold on till they call", True),
    ("wait 5 seconds", False), ("hang on a second", False),
])
def test_a_wait_until_something_happens_says_no_time(part, refused):
    from wafer_reasoner.understanding.context import what_is_asked
    assert outside.refused_without_model(Scene(objects=(), places=()), what_is_asked(part)) is refused


@pytest.mark.parametrize(("said", "refused"), [
    ("nice and slow navigate over to the cart", True), ("go upstairs", True), ("bring me the cart, gently", True),
    ("bring me the cart", False),
])
def test_a_manner_the_robot_cannot_honour_is_refused_without_the_model(said, refused):
    from wafer_reasoner.understanding.context import what_is_asked
    scene = Scene(objects=(SceneObject("cart_1", "cart", "", 1.0, 0.0),), places=())
    assert outside.refused_without_model(scene, what_is_asked(said)) is refused


def test_a_manner_word_that_names_a_thing_in_view_is_no_manner():
    scene = Scene(objects=(SceneObject("sc_1", "slow_cooker", "", 2.0, 0.0),), places=())
    assert not outside.refused_without_model(scene, "bring me the slow cooker")
    assert outside.refused_without_model(Scene(objects=(), places=()), "bring me the slow cooker")


def test_a_sentence_that_opens_with_a_manner_word_still_asks():
    from wafer_reasoner.understanding.context import what_is_asked
    asked = what_is_asked("bring me the cart. after that carefully can i have the mug")
    assert "carefully can i have the mug" in asked
