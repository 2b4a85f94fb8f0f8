"""The shipped planner on the decisions of docs/action_language.md sections 2.7-2.10 (questions the authors of
blind sets C, D and E left open, and the rules written after reading D): one scene, each decision's example (in
wordings of our own where a set gave one) and the plan the contract gives."""

import pytest

from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.planner.scene import scene_from_dict
from wafer_reasoner.runtime.resources import SOURCE_CONFIG

OBJECTS = [("cup_1", "cup", "red", 2.0, 1.0), ("stapler_1", "stapler", "black", 3.0, -1.0),
           ("crate_1", "crate", "brown", 1.0, 1.0), ("crate_2", "crate", "brown", 6.0, 6.0)]
PLACES = [("kitchen", 5.0, 5.0), ("bay_4", 7.0, 7.0), ("lab", -4.0, 2.0), ("zorbix_hall", -6.0, -2.0),
          ("dock_17", 9.0, -3.0), ("room_19", -2.0, -8.0)]
BRING_CUP = "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"


def scene(extra=(), holding=""):
    data = {"robot": {"x": 0.0, "y": 0.0, "yaw": 0.0}, "people": [{"id": "user", "x": 1.0, "y": 2.0}],
            "objects": [dict(id=i, label=label, color=colour, x=x, y=y, z=0.7)
                        for i, label, colour, x, y in [*OBJECTS, *extra]],
            "places": [dict(name=name, x=x, y=y, yaw=0.0) for name, x, y in PLACES]}
    if holding:
        data["holding"] = holding
    return scene_from_dict(data)


@pytest.fixture(scope="module")
def model():
    return PlannerModel(SOURCE_CONFIG.parent / "wafer_reasoner" / "models")


HELD_CUP = (("cup_9", "cup", "blue", 0.0, 0.0),)


@pytest.mark.parametrize("extra, holding, say, plan", [
    (HELD_CUP, "cup_9", "bring me the nearest cup", "navigate(person:user); handover(obj:cup_9, person:user)"),
    (HELD_CUP, "cup_9", "bring me the farthest cup", BRING_CUP),
    ((), "", "bring me the hammer and wash the cup", "clarify(not_found:hammer)"),
    ((), "", "go to dock 7", "clarify(not_found:dock_7)"),
    ((), "", "go to room 9", "clarify(not_found:room_9)"),
    ((), "", "come and get me the cup", BRING_CUP),
    ((), "", "come pick up the stapler", "navigate(obj:stapler_1); pick(obj:stapler_1)"),
    ((), "", "I need a towel", "clarify(not_found:towel)"),
    ((), "", "I need a break. bring me the cup", "clarify(unsupported)"),
    ((), "", "I always get lost. go to the kitchen", "navigate(place:kitchen)"),
    ((), "", "take the closest crate to bay 4",
     "navigate(obj:crate_1); pick(obj:crate_1); navigate(place:bay_4); place(obj:crate_1, place:bay_4)"),
    ((), "", "wait a minute", "wait(60)"),
    ((), "", "stay there for a minute", "wait(60)"),
    ((), "", "wait a bit", "clarify(unsupported)"),
    ((), "", "hold on a while", "clarify(unsupported)"),
    ((), "", "do a quarter turn to the left", "clarify(unsupported)"),
    ((), "", "Follow me. Now!", "follow(person:user)"),
    ((), "", "grab the furthest crates", "navigate(obj:crate_2); pick(obj:crate_2)"),
    ((), "", "wait two and a half minutes", "wait(150)"),
    ((), "", "wait four 5 seconds", "wait(5)"),
    ((), "", "follow me to the garage", "follow(person:user)"),
    ((), "", "follow me to the kitchen", "follow(person:user)"),
    ((), "", "wait 30 second", "wait(30)"),
    ((), "", "turn left 120 degree", "rotate(120)"),
    ((), "", "bring me the chartreuse cup", BRING_CUP),
    ((), "", "bring me the mint cup", BRING_CUP),
    ((), "", "walk to the zorbix lab", "clarify(not_found:zorbix_lab)"),
    ((), "", "hold on a second", "wait(1)"),
])
def test_the_planner_follows_the_decided_corner_cases(model, extra, holding, say, plan):
    assert model.generate(scene(extra, holding), say).text == plan


FETCH_STAPLER = ("navigate(obj:stapler_1); navigate(obj:stapler_1); pick(obj:stapler_1); navigate(person:user); "
                 "handover(obj:stapler_1, person:user)")
GREY_MUG = (("mug_1", "mug", "grey", -1.0, 3.0), ("mug_2", "mug", "white", -3.0, 3.0))


@pytest.mark.parametrize("extra, say, plan", [
    ((), "find the stapler, then bring it to me", FETCH_STAPLER),  # 1
    ((), "bring me the crates", "clarify(ambiguous:crate)"),  # 2
    ((), "turn left a bit", "clarify(unsupported)"),  # 5
    ((), "rotate a little to the right", "clarify(unsupported)"),
    ((), "bring me the cup immediately", BRING_CUP),  # 6
    ((), "bring me the cup right away", BRING_CUP),
    ((), "bring me the cup so I can wash it", BRING_CUP),  # 7
    ((), "I have a meeting at three. bring me the cup", BRING_CUP),  # 8
    (GREY_MUG, "bring me the gray mug",
     "navigate(obj:mug_1); pick(obj:mug_1); navigate(person:user); handover(obj:mug_1, person:user)"),  # 9
    ((), "show me the way to the kitchen", "clarify(unsupported)"),  # 10
    ((), "Wait. Five seconds.", "clarify(unsupported)"),  # 11
    ((), "go to dock seven", "clarify(not_found:dock_7)"),  # 15
    ((), "sit with me for a while", "clarify(unsupported)"),  # 16
    ((), "I wonder if you could bring me the cup", BRING_CUP),  # 17
    ((), "would you be so kind as to bring me the cup", BRING_CUP),
])
def test_the_planner_follows_the_questions_decided_after_blind_set_d(model, extra, say, plan):
    assert model.generate(scene(extra), say).text == plan


REMOTE = (("remote_1", "remote", "black", -1.0, -1.0), ("chair_1", "chair", "blue", -2.0, 1.0),
          ("specs_1", "specs", "black", 2.0, -2.0))
FIND_REMOTE = "navigate(obj:remote_1)"


@pytest.mark.parametrize("extra, say, plan", [
    ((), "fech me the cup", BRING_CUP),  # 2.9.1
    ((), "stack the crates", "clarify(unsupported)"),
    ((), "hold on a sec", "wait(1)"),  # 2.9.2
    ((), "the kettle is boiling, honestly, could you start the dishwasher", "clarify(unsupported)"),  # 2.9.3
    ((), "give the cup to her", "clarify(unsupported)"),  # 2.9.4
    ((), "bring me the hammer from the attic", "clarify(not_found:hammer)"),  # 2.9.6
    ((), "bring me the cup that is on the crate", "clarify(unsupported)"),  # 2.9.7
    ((), "go to the chemistry lab", "clarify(not_found:chemistry_lab)"),  # 2.9.8
    ((), "go to the kitchen, no, go to the lab instead", "navigate(place:lab)"),  # 2.10.3
    ((), "come with me to the kitchen", "follow(person:user)"),  # 2.10.4
    (REMOTE, "find me the remote", FIND_REMOTE),  # 2.10.5
    (REMOTE, "have a look for my specs", "navigate(obj:specs_1)"),  # 2.10.8
    ((), "wait half a minute", "wait(30)"),  # 2.10.10
    ((), "hang on a sec", "wait(1)"),  # 2.10.11
    ((), "spin around three times", "clarify(unsupported)"),  # 2.10.12
    ((), "turn clockwise", "rotate(-90)"),  # 2.10.16
    ((), "is the kitchen open? then wait 5 seconds", "clarify(unsupported)"),  # 2.10.17
    ((), "Alexa, bring me the cup", BRING_CUP),  # 2.10.18
    ((), "bring me the cup, there's a good lad", BRING_CUP),  # 2.10.19
    ((), "go to the pantrie", "clarify(not_found:pantrie)"),  # 2.10.20
    (REMOTE, "move the chair", "clarify(unsupported)"),  # 2.10.21
    ((), "please go to kitchen", "navigate(place:kitchen)"),  # 2.10.22
    ((), "bring me the cup, no rush", BRING_CUP),
    ((), "please stop", "stop()"),  # obeyed at once, as runtime/query.answer does (section 4)
    ((), "take me to the stapler", "navigate(obj:stapler_1)"),  # 2.11
    ((), "bring me the cup at eight", "clarify(unsupported)"),
    ((), "in ten minutes, go to the kitchen", "clarify(unsupported)"),
    ((), "turn counterclockwise", "rotate(90)"),
    ((), "pause 5 seconds", "wait(5)"),
    ((), "wait here for 10 seconds", "wait(10)"),
    ((), "give me a sec", "wait(1)"),
    ((), "get the door", "clarify(unsupported)"),
    ((), "stop following me", "stop()"),
])
def test_the_planner_follows_the_rules_after_blind_set_d_and_the_questions_of_blind_set_e(model, extra, say, plan):
    assert model.generate(scene(extra), say).text == plan
