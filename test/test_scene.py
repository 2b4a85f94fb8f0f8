"""The scene model: perception JSON and scenario dictionaries, and their rejections."""

import json

import pytest

from wafer_reasoner.planner.scene import (
    MAX_SCENE_JSON_BYTES,
    NamedPlace,
    RobotPose,
    SceneError,
    load_places,
    parse_perception_json,
    scene_from_dict,
    scene_to_dict,
)

PERCEPTION = {
    "stamp": 12.5,
    "frame_id": "map",
    "objects": [
        {"id": "cup_1", "label": "Cup", "color": "red", "x": 1.0, "y": 2.0, "z": 0.8, "score": 0.9},
        {"id": "mug_2", "label": "coffee mug", "x": -1.0, "y": 0.5},
    ],
    "people": [{"id": "user", "x": 0.0, "y": -1.0}],
}


def test_perception_json_becomes_a_scene():
    places = (NamedPlace("kitchen", 3.0, 4.0),)
    scene = parse_perception_json(json.dumps(PERCEPTION), places=places, robot=RobotPose(1.0, 1.0, 0.0))
    assert [o.label for o in scene.objects] == ["cup", "coffee_mug"]
    assert scene.object("mug_2").color == ""
    assert scene.object("mug_2").score == 1.0
    assert scene.person("user").y == -1.0
    assert scene.place("kitchen").x == 3.0
    assert scene.robot.x == 1.0
    assert scene.stamp_s == 12.5


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"objects": []}), "no 'stamp'"),
        ('{"stamp": 1, "objects": [{"id": "a", "label": "cup", "x": NaN, "y": 0}]}', "finite"),
        ('{"stamp": 1, "objects": [{"id": "a", "label": "cup", "x": Infinity, "y": 0}]}', "finite"),
        (json.dumps({"stamp": 1, "objects": [{"id": "a", "label": "cup", "x": "1", "y": 0}]}), "must be a number"),
        (json.dumps({"stamp": 1, "objects": [{"id": "a b", "label": "cup", "x": 1, "y": 0}]}), "'id'"),
        (json.dumps({"stamp": 1, "objects": [{"id": "a", "x": 1, "y": 0}]}), "missing 'label'"),
        (json.dumps({"stamp": 1, "objects": {"id": "a"}}), "must be a list"),
        (json.dumps({"stamp": 1, "objects": [{"id": "a", "label": "cup", "x": 1, "y": 0}] * 2}), "duplicate"),
        (json.dumps({"stamp": 1, "holding": "ghost"}), "not an object"),
        ("x" * (MAX_SCENE_JSON_BYTES + 1), "over"),
    ],
)
def test_bad_perception_is_rejected_with_a_reason(text, reason):
    with pytest.raises(SceneError, match=reason):
        parse_perception_json(text)


def test_scenario_dict_round_trips():
    data = {**PERCEPTION, "robot": {"x": 1, "y": 2, "yaw": 0.5}, "places": [{"name": "Living Room", "x": 1, "y": 1}]}
    scene = scene_from_dict(data)
    assert scene.place("living_room") is not None
    again = scene_from_dict(scene_to_dict(scene))
    assert again == scene


def test_semantic_map_places_load_and_reject_duplicates():
    assert load_places({"places": [{"name": "dock", "x": 0, "y": 0, "yaw": 1.5}]})[0].yaw == 1.5
    with pytest.raises(SceneError, match="duplicate"):
        load_places({"places": [{"name": "dock", "x": 0, "y": 0}, {"name": "Dock", "x": 1, "y": 0}]})
    with pytest.raises(SceneError):
        load_places(["dock"])
