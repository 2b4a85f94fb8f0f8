"""Scenarios: the world sim_world starts from, what the demo operator says, and what must then be true (no ROS).

A scenario is a YAML file in ``config/scenarios/``::

    name: bring_red_cup                      # optional; defaults to the file name
    description: Fetch the red cup from the kitchen table and hand it to the user.
    robot: {x: 0.0, y: 0.0, yaw: 0.0}        # start pose in map (m, rad)
    objects:                                 # scene.py object records plus an optional 'fixed'
      - {id: table_1, label: table, color: brown, x: 4.8, y: 3.0, z: 0.0, fixed: true}   # fixed: never grasped
      - {id: cup_red, label: cup, color: red, x: 4.6, y: 3.2, z: 0.75}
    people:
      - {id: user, x: -1.0, y: -1.5}         # the speaker is always person 'user'
    turns:                                   # said in order, each judged before the next is said
      - say: bring me the red cup
        expect:
          timeout_s: 120                     # sim seconds allowed for this turn (default 120)
          holding: ""                        # gripper content at the end: an object id, "" = empty
          near:                              # each subject ends within within_m (horizontal) of its target
            - {subject: "obj:cup_red", target: "person:user", within_m: 1.0}

The ``expect`` contract (every key optional):

* ``clarify: not_found | ambiguous | unsupported``: the plan must be a single ``clarify`` step with that reason.
  Without ``clarify`` the plan must be an action plan (not a clarification).
* ``holding`` and ``near`` are judged on the world as the demo sees it (``perception/objects`` + ``odom``).
  Subjects are ``robot`` or ``obj:ID``; targets are ``obj:ID``, ``person:ID`` or ``place:NAME`` (named places
  from ``config/semantic_map.yaml``). A handover is done when the object was released near the person.
* A turn passes when ``check_plan`` passes and ``unmet_conditions`` is empty at one moment before
  ``timeout_s``. Both return the unmet conditions as text (empty list = met).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import yaml

from wafer_reasoner.planner.language import CLARIFY_REASONS, SPEAKER, Clarify, PlanSyntaxError, parse_plan
from wafer_reasoner.planner.scene import Scene, SceneError, distance, load_places, scene_from_dict

DEFAULT_TIMEOUT_S = 120.0
MAX_TURNS = 32
MAX_SAY_CHARS = 500
MAX_SCENARIO_BYTES = 256 * 1024

_TOP_KEYS = {"name", "description", "robot", "objects", "people", "holding", "turns"}
_OBJECT_KEYS = {"id", "label", "color", "x", "y", "z", "score", "fixed"}
_EXPECT_KEYS = {"timeout_s", "holding", "near", "clarify"}
_NEAR_KEYS = {"subject", "target", "within_m"}


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message says where and why."""


@dataclass(frozen=True)
class Near:
    subject: str  # "robot" or "obj:ID"
    target: str  # "obj:ID", "person:ID" or "place:NAME"
    within_m: float  # horizontal distance, metres


@dataclass(frozen=True)
class Expectation:
    timeout_s: float = DEFAULT_TIMEOUT_S
    holding: Optional[str] = None  # None: not checked; "": the gripper must be empty
    near: tuple = ()  # tuple[Near, ...]
    clarify: str = ""  # "": an action plan is expected; else the clarify reason


@dataclass(frozen=True)
class Turn:
    say: str
    expect: Expectation


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    scene: Scene  # the start: robot pose, objects, people, holding (no places)
    fixed_ids: frozenset  # objects that can never be grasped (furniture)
    turns: tuple  # tuple[Turn, ...]


def _split_ref(text, where: str, kinds: tuple) -> tuple:
    if not isinstance(text, str):
        raise ScenarioError(f"{where}: expected KIND:NAME text, got {text!r}")
    kind, sep, name = text.partition(":")
    if not sep or kind not in kinds or not name:
        raise ScenarioError(f"{where}: {text!r} must be one of {'/'.join(k + ':NAME' for k in kinds)}")
    return kind, name


def _check_ref(text, where: str, kinds: tuple, scene: Scene, places) -> None:
    kind, name = _split_ref(text, where, kinds)
    if kind == "obj" and scene.object(name) is None:
        raise ScenarioError(f"{where}: no object {name!r} in the scenario")
    if kind == "person" and scene.person(name) is None:
        raise ScenarioError(f"{where}: no person {name!r} in the scenario")
    if kind == "place" and places is not None and not any(p.name == name for p in places):
        raise ScenarioError(f"{where}: no place {name!r} in the semantic map")


def _positive(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise ScenarioError(f"{where}: must be a positive number, got {value!r}")
    return float(value)


def _unknown_keys(record: dict, allowed: set, where: str) -> None:
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")


def parse_expectation(data, where: str, scene: Scene, places=None) -> Expectation:
    if data is None:
        return Expectation()
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: must be a mapping")
    _unknown_keys(data, _EXPECT_KEYS, where)
    holding = data.get("holding")
    if holding is not None:
        if not isinstance(holding, str) or (holding and scene.object(holding) is None):
            raise ScenarioError(f'{where}.holding: must be an object id of the scenario or "", got {holding!r}')
    clarify = data.get("clarify", "")
    if clarify not in ("",) + CLARIFY_REASONS:
        raise ScenarioError(f"{where}.clarify: must be one of {CLARIFY_REASONS}, got {clarify!r}")
    near_records = data.get("near", []) or []
    if not isinstance(near_records, list):
        raise ScenarioError(f"{where}.near: must be a list")
    near = []
    for index, record in enumerate(near_records):
        at = f"{where}.near[{index}]"
        if not isinstance(record, dict):
            raise ScenarioError(f"{at}: must be a mapping with subject, target, within_m")
        _unknown_keys(record, _NEAR_KEYS, at)
        subject, target = record.get("subject"), record.get("target")
        if subject != "robot":
            _check_ref(subject, f"{at}.subject", ("obj",), scene, places)
        _check_ref(target, f"{at}.target", ("obj", "person", "place"), scene, places)
        near.append(Near(subject, target, _positive(record.get("within_m"), f"{at}.within_m")))
    return Expectation(
        timeout_s=_positive(data.get("timeout_s", DEFAULT_TIMEOUT_S), f"{where}.timeout_s"),
        holding=holding,
        near=tuple(near),
        clarify=clarify,
    )


def scenario_from_dict(data, *, name: str = "scenario", places=None) -> Scenario:
    """Validate a parsed scenario; ``places`` (NamedPlace records), if given, are used to check place refs."""
    if not isinstance(data, dict):
        raise ScenarioError("a scenario must be a YAML mapping")
    _unknown_keys(data, _TOP_KEYS, "scenario")
    objects = data.get("objects", []) or []
    if not isinstance(objects, list):
        raise ScenarioError("'objects' must be a list")
    fixed = set()
    for index, record in enumerate(objects):
        if isinstance(record, dict):
            _unknown_keys(record, _OBJECT_KEYS, f"objects[{index}]")
            if not isinstance(record.get("fixed", False), bool):
                raise ScenarioError(f"objects[{index}].fixed must be true or false")
            if record.get("fixed", False):
                fixed.add(record.get("id"))
    try:
        scene = scene_from_dict(
            {key: data[key] for key in ("robot", "objects", "people", "holding") if key in data}, places=[]
        )
    except SceneError as error:
        raise ScenarioError(str(error)) from None
    if scene.holding in fixed:
        raise ScenarioError(f"'holding' names the fixed object {scene.holding!r}")
    turns_data = data.get("turns", []) or []
    if not isinstance(turns_data, list) or len(turns_data) > MAX_TURNS:
        raise ScenarioError(f"'turns' must be a list of at most {MAX_TURNS} entries")
    if turns_data and scene.person(SPEAKER) is None:
        raise ScenarioError(f"the scenario has turns but no person {SPEAKER!r} (the speaker)")
    turns = []
    for index, record in enumerate(turns_data):
        where = f"turns[{index}]"
        if not isinstance(record, dict):
            raise ScenarioError(f"{where}: must be a mapping with 'say' and 'expect'")
        _unknown_keys(record, {"say", "expect"}, where)
        say = record.get("say")
        if not isinstance(say, str) or not say.strip() or len(say) > MAX_SAY_CHARS:
            raise ScenarioError(f"{where}.say: must be non-empty text of at most {MAX_SAY_CHARS} characters")
        turns.append(Turn(say.strip(), parse_expectation(record.get("expect"), f"{where}.expect", scene, places)))
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ScenarioError("'description' must be text")
    scenario_name = data.get("name", name)
    if not isinstance(scenario_name, str) or not scenario_name:
        raise ScenarioError("'name' must be non-empty text")
    return Scenario(scenario_name, description.strip(), scene, frozenset(fixed), tuple(turns))


def _read_yaml(path: str, what: str):
    """The file's YAML; read at most MAX_SCENARIO_BYTES + 1 (a device or a pipe has no size to check first)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SCENARIO_BYTES + 1)
    except OSError as error:
        raise ScenarioError(f"cannot read {what} {path}: {error.strerror or error}") from None
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"{what} {path} is over {MAX_SCENARIO_BYTES} bytes")
    return parse_yaml_text(raw.decode("utf-8", errors="replace"), f"{what} {path}")


def parse_yaml_text(text: str, what: str):
    """yaml.safe_load that raises only ScenarioError (PyYAML recurses once per nesting level)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ScenarioError(f"{what} is not valid YAML: {error}") from None
    except RecursionError:
        raise ScenarioError(f"{what} nests too deep") from None
    except ValueError as error:  # e.g. an integer of more than 4300 digits
        raise ScenarioError(f"{what} has a value that cannot be read: {str(error)[:120]}") from None


def load_scenario(path: str, *, places=None) -> Scenario:
    """Read and validate a scenario file; errors name the file."""
    data = _read_yaml(path, "scenario")
    try:
        return scenario_from_dict(data, name=os.path.splitext(os.path.basename(path))[0], places=places)
    except ScenarioError as error:
        raise ScenarioError(f"scenario {path}: {error}") from None


def load_places_file(path: str) -> tuple:
    """Named places from a semantic map file (``places: [{name, x, y, yaw}]``)."""
    try:
        return load_places(_read_yaml(path, "semantic map"))
    except SceneError as error:
        raise ScenarioError(f"semantic map {path}: {error}") from None


# ---- judging a turn --------------------------------------------------------------------------------------------


def check_plan(expect: Expectation, plan_text: str) -> list:
    """Unmet plan conditions (empty = met): clarify reason or an action plan, as the expectation says."""
    try:
        steps = parse_plan(plan_text)
    except PlanSyntaxError as error:
        return [f"the plan is not valid: {error}"]
    is_clarify = len(steps) == 1 and isinstance(steps[0], Clarify)
    if expect.clarify:
        if not is_clarify or steps[0].reason != expect.clarify:
            return [f"expected clarify({expect.clarify}...), got {plan_text.strip()!r}"]
        return []
    if is_clarify:
        return [f"expected an action plan, got {plan_text.strip()!r}"]
    return []


def position(ref: str, scene: Scene):
    """(x, y) of ``robot``, ``obj:ID``, ``person:ID`` or ``place:NAME`` in the scene; None when it is not there."""
    if ref == "robot":
        return (scene.robot.x, scene.robot.y)
    kind, _, name = ref.partition(":")
    lookup = {"obj": scene.object, "person": scene.person, "place": scene.place}.get(kind)
    found = lookup(name) if lookup else None
    return None if found is None else (found.x, found.y)


def unmet_conditions(expect: Expectation, scene: Scene) -> list:
    """Unmet world conditions (empty = met). ``scene`` must carry the robot pose and named places."""
    unmet = []
    if expect.holding is not None and scene.holding != expect.holding:
        want = expect.holding or "nothing"
        unmet.append(f"robot should hold {want}, holds {scene.holding or 'nothing'}")
    for near in expect.near:
        subject, target = position(near.subject, scene), position(near.target, scene)
        if subject is None or target is None:
            missing = near.subject if subject is None else near.target
            unmet.append(f"{missing} is not in the scene")
            continue
        gap = distance(subject[0], subject[1], target[0], target[1])
        if gap > near.within_m:
            unmet.append(f"{near.subject} is {gap:.2f} m from {near.target}; should be within {near.within_m:g} m")
    return unmet
