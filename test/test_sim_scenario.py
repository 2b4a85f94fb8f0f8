"""Scenario files, the semantic map and the expect contract (no ROS)."""

import math
from dataclasses import replace
from pathlib import Path

import pytest

from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.sim.scenario import (
    Expectation,
    Near,
    ScenarioError,
    check_plan,
    load_places_file,
    load_scenario,
    scenario_from_dict,
    unmet_conditions,
)
from wafer_reasoner.sim.world import GripperCommand, ManipulationStatus, World, WorldConfig

CONFIG = Path(__file__).resolve().parents[1] / "config"
SCENARIOS = sorted((CONFIG / "scenarios").glob("*.yaml"))
WORKSPACE_M = 10.0


@pytest.fixture(scope="module")
def places():
    return load_places_file(str(CONFIG / "semantic_map.yaml"))


def test_semantic_map_has_the_named_places_inside_the_workspace(places):
    names = {place.name for place in places}
    assert {"kitchen", "dock", "living_room", "hallway", "office"} <= names
    assert all(abs(p.x) <= WORKSPACE_M and abs(p.y) <= WORKSPACE_M and math.isfinite(p.yaw) for p in places)


def test_the_shipped_scenarios_are_there():
    assert {"bring_red_cup", "visit_places", "clarify_cup"} <= {path.stem for path in SCENARIOS}


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_shipped_scenario_is_valid(path, places):
    scenario = load_scenario(str(path), places=places)
    assert scenario.name == path.stem
    assert scenario.turns and all(turn.say for turn in scenario.turns)
    assert scenario.scene.person("user") is not None
    points = [scenario.scene.robot] + list(scenario.scene.objects) + list(scenario.scene.people)
    assert all(abs(p.x) <= WORKSPACE_M and abs(p.y) <= WORKSPACE_M for p in points)


def test_bring_red_cup_has_a_cluttered_room(places):
    scenario = load_scenario(str(CONFIG / "scenarios" / "bring_red_cup.yaml"), places=places)
    labels = {obj.label for obj in scenario.scene.objects}
    assert {"cup", "bottle", "book", "table"} <= labels
    assert "table_1" in scenario.fixed_ids and "cup_red" not in scenario.fixed_ids
    first = scenario.turns[0]
    assert first.say == "bring me the red cup"
    assert first.expect.holding == ""
    assert first.expect.near == (Near("obj:cup_red", "person:user", 1.0),)
    assert first.expect.clarify == ""


def _scenario(**overrides):
    data = {
        "objects": [{"id": "cup_red", "label": "cup", "color": "red", "x": 1.0, "y": 0.0, "z": 0.7}],
        "people": [{"id": "user", "x": -1.0, "y": 0.0}],
        "turns": [
            {
                "say": "bring me the red cup",
                "expect": {"near": [{"subject": "obj:cup_red", "target": "person:user", "within_m": 0.5}]},
            }
        ],
    }
    data.update(overrides)
    return data


def test_defaults_of_a_minimal_scenario():
    scenario = scenario_from_dict(_scenario(), name="mini")
    assert scenario.name == "mini"
    assert scenario.turns[0].expect.timeout_s == 120.0
    assert scenario.turns[0].expect.holding is None


@pytest.mark.parametrize(
    "overrides, reason",
    [
        ({"colour": "red"}, "unknown key"),
        ({"people": []}, "speaker"),
        ({"turns": [{"say": ""}]}, "say"),
        (
            {
                "turns": [
                    {"say": "hi", "expect": {"near": [{"subject": "obj:mug", "target": "person:user", "within_m": 1}]}}
                ]
            },
            "no object 'mug'",
        ),
        (
            {
                "turns": [
                    {"say": "hi", "expect": {"near": [{"subject": "robot", "target": "place:moon", "within_m": 1}]}}
                ]
            },
            "no place 'moon'",
        ),
        (
            {"turns": [{"say": "hi", "expect": {"near": [{"subject": "robot", "target": "kitchen", "within_m": 1}]}}]},
            "KIND:NAME|must be one of",
        ),
        ({"turns": [{"say": "hi", "expect": {"clarify": "confused"}}]}, "clarify"),
        ({"turns": [{"say": "hi", "expect": {"timeout_s": -1}}]}, "timeout_s"),
        ({"turns": [{"say": "hi", "expect": {"holding": "mug"}}]}, "holding"),
        ({"objects": [{"id": "t", "label": "table", "x": 0, "y": 0, "fixed": "yes"}]}, "fixed"),
        ({"robot": {"x": float("nan")}}, "finite"),
    ],
)
def test_bad_scenarios_are_rejected_with_a_reason(overrides, reason, places):
    with pytest.raises(ScenarioError, match=reason):
        scenario_from_dict(_scenario(**overrides), places=places)


def test_load_scenario_names_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("objects: [{id: cup, label: cup}]\n")
    with pytest.raises(ScenarioError, match="broken.yaml"):
        load_scenario(str(path))
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(str(tmp_path / "absent.yaml"))


@pytest.mark.parametrize(
    "expect, plan, unmet",
    [
        (Expectation(clarify="ambiguous"), "clarify(ambiguous:cup)", 0),
        (Expectation(clarify="ambiguous"), "clarify(not_found:cup)", 1),
        (Expectation(clarify="ambiguous"), "navigate(obj:cup_red)", 1),
        (Expectation(), "navigate(obj:cup_red); pick(obj:cup_red)", 0),
        (Expectation(), "clarify(unsupported)", 1),
        (Expectation(), "fly(away)", 1),
    ],
)
def test_check_plan(expect, plan, unmet):
    assert len(check_plan(expect, plan)) == unmet


def _step_until_idle(world: World, limit_s: float = 120.0) -> None:
    elapsed = 0.0
    while world.goal is not None and elapsed < limit_s:
        world.step(0.05)
        elapsed += 0.05


def _manipulate(world: World, command) -> ManipulationStatus:
    replies = command()
    while not replies:
        replies = world.step(0.05)
    return replies[-1]


def test_fetch_and_handover_in_the_world_meets_the_bring_red_cup_expectation(places):
    """What the executor will do, done by hand on the pure world, satisfies the scenario's first turn."""
    scenario = load_scenario(str(CONFIG / "scenarios" / "bring_red_cup.yaml"), places=places)
    start = scenario.scene
    world = World(
        WorldConfig(max_linear_speed_mps=1.0),
        robot=start.robot,
        objects=start.objects,
        people=start.people,
        fixed_ids=scenario.fixed_ids,
    )
    expect = scenario.turns[0].expect

    def with_places() -> Scene:
        return replace(world.scene(), places=places)

    assert unmet_conditions(expect, with_places())

    cup, user = world.object("cup_red"), start.person("user")
    world.set_goal(cup.x - 0.6, cup.y, 0.0)
    _step_until_idle(world)
    assert _manipulate(world, lambda: world.command_arm(cup.x, cup.y, cup.z)) is ManipulationStatus.SUCCEEDED
    assert _manipulate(world, lambda: world.command_gripper(GripperCommand.CLOSE)) is ManipulationStatus.SUCCEEDED
    world.set_goal(user.x + 0.7, user.y, math.pi)
    _step_until_idle(world)
    assert _manipulate(world, lambda: world.command_arm(user.x + 0.2, user.y, 1.0)) is ManipulationStatus.SUCCEEDED
    assert _manipulate(world, lambda: world.command_gripper(GripperCommand.OPEN)) is ManipulationStatus.SUCCEEDED

    assert unmet_conditions(expect, with_places()) == []
    (unmet,) = unmet_conditions(scenario.turns[1].expect, with_places())
    assert unmet.startswith("robot is ") and "from place:dock" in unmet
