"""The scene model: what the robot knows when it plans, built from plain data (no ROS).

Perception arrives as JSON (``perception/objects``, schema in ``docs/scene_schema.md``)::

    {"stamp": 12.5, "frame_id": "map",
     "objects": [{"id": "cup_1", "label": "cup", "color": "red", "x": 1.0, "y": 2.0, "z": 0.8, "score": 0.9}],
     "people": [{"id": "user", "x": 0.0, "y": -1.0}],
     "holding": "cup_1"}            # optional: id of the object in the gripper

Scenarios, the CLI and ``plan --batch`` use the same shape plus ``robot: {x, y, yaw}`` and ``places``.
Every parser here raises ``SceneError`` with a reason a person can act on; nothing half-parsed escapes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from wafer_reasoner.planner.bounded_json import BoundedJsonError, loads_bounded

MAX_SCENE_JSON_BYTES = 256 * 1024
MAX_OBJECTS = 64
MAX_PEOPLE = 16
# checked before decoding: the root, its lists, their records, and two more levels for a detector's extra fields
MAX_SCENE_JSON_DEPTH = 5
MAX_SCENE_JSON_CONTAINERS = 4 * (MAX_OBJECTS + MAX_PEOPLE) + 16
MAX_COORDINATE_M = 1.0e6  # |x|, |y|, |z| and yaw of anything in a scene; farther is a broken detector
MAX_STAMP_S = 2.0**31 - 1  # builtin_interfaces/Time.sec is an int32; stamps are 0 .. this
_ID_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
_WORD_RE = re.compile(r"^[a-z0-9_]{1,40}$")
# a tf2 frame id: name segments of letters, digits and '_', joined by '/' (no leading '/', no '..'), 1-64 chars
_FRAME_RE = re.compile(r"^[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)*$")
MAX_FRAME_ID_CHARS = 64


class SceneError(ValueError):
    """Scene data that cannot be used for planning; the message says why."""


@dataclass(frozen=True)
class SceneObject:
    id: str
    label: str  # normalised: lower case, words joined by '_' ("coffee_mug")
    color: str  # normalised like label; "" when unknown
    x: float  # metres, in the scene frame
    y: float
    z: float = 0.0
    score: float = 1.0


@dataclass(frozen=True)
class Person:
    id: str
    x: float
    y: float


@dataclass(frozen=True)
class NamedPlace:
    name: str
    x: float
    y: float
    yaw: float = 0.0  # radians


@dataclass(frozen=True)
class RobotPose:
    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0


@dataclass(frozen=True)
class Scene:
    objects: tuple = ()  # tuple[SceneObject, ...]
    people: tuple = ()  # tuple[Person, ...]
    places: tuple = ()  # tuple[NamedPlace, ...]
    robot: RobotPose = field(default_factory=RobotPose)
    holding: str = ""  # id of the held object, "" when the gripper is empty
    stamp_s: float = 0.0  # perception time stamp (node clock, seconds)
    frame_id: str = "map"

    def object(self, object_id: str):
        return next((obj for obj in self.objects if obj.id == object_id), None)

    def person(self, person_id: str):
        return next((p for p in self.people if p.id == person_id), None)

    def place(self, name: str):
        return next((p for p in self.places if p.name == name), None)

    def with_robot(self, robot: RobotPose) -> "Scene":
        return replace(self, robot=robot)


def normalise_word(text) -> str:
    """'Coffee Mug' -> 'coffee_mug'."""
    if not isinstance(text, str):
        raise SceneError(f"expected text, got {type(text).__name__}")
    word = "_".join(text.strip().lower().replace("-", " ").split())
    return word


def shown(value, limit: int = 40) -> str:
    """A value as an error message quotes it: its repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def _finite(record: dict, key: str, where: str, default=None, *, low=-MAX_COORDINATE_M,
            high=MAX_COORDINATE_M) -> float:
    value = record.get(key, default)
    if value is None:
        raise SceneError(f"{where}: missing '{key}'")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SceneError(f"{where}: '{key}' must be a number, got {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise SceneError(f"{where}: '{key}' is {value} (must be finite)")
    if not low <= value <= high:  # compared before float(): an int beyond the float range never converts
        raise SceneError(f"{where}: '{key}' must lie in [{low:g}, {high:g}], got {shown(value, 24)}")
    return float(value)


def frame_id_problem(frame_id) -> str:
    """Why ``frame_id`` cannot be the frame of published poses, or "" when it can."""
    if not isinstance(frame_id, str):
        return f"'frame_id' must be text, got {type(frame_id).__name__}"
    if len(frame_id) > MAX_FRAME_ID_CHARS or not _FRAME_RE.match(frame_id):
        return (f"'frame_id' must be 1-{MAX_FRAME_ID_CHARS} characters of letters, digits and '_' in segments "
                f"joined by '/', got {shown(frame_id)}")
    return ""


def _ident(record: dict, key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise SceneError(f"{where}: '{key}' must be 1-64 characters of letters, digits, '_', '.', '-', "
                         f"got {shown(value)}")
    return value


def _word(record: dict, key: str, where: str, *, required: bool) -> str:
    value = record.get(key, "" if not required else None)
    if value is None:
        raise SceneError(f"{where}: missing '{key}'")
    word = normalise_word(value)
    if (required or word) and not _WORD_RE.match(word):
        raise SceneError(f"{where}: '{key}' must be 1-40 letters/digits/spaces, got {shown(value)}")
    return word


def _records(data: dict, key: str, limit: int) -> list:
    records = data.get(key, [])
    if not isinstance(records, list):
        raise SceneError(f"'{key}' must be a list")
    if len(records) > limit:
        raise SceneError(f"'{key}' has {len(records)} entries; the limit is {limit}")
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise SceneError(f"{key}[{index}] must be an object")
    return records


def parse_object(record: dict, where: str) -> SceneObject:
    return SceneObject(
        id=_ident(record, "id", where),
        label=_word(record, "label", where, required=True),
        color=_word(record, "color", where, required=False),
        x=_finite(record, "x", where),
        y=_finite(record, "y", where),
        z=_finite(record, "z", where, default=0.0),
        score=_finite(record, "score", where, default=1.0),
    )


def parse_person(record: dict, where: str) -> Person:
    return Person(id=_ident(record, "id", where), x=_finite(record, "x", where), y=_finite(record, "y", where))


def parse_place(record: dict, where: str) -> NamedPlace:
    return NamedPlace(
        name=_word(record, "name", where, required=True),
        x=_finite(record, "x", where),
        y=_finite(record, "y", where),
        yaw=_finite(record, "yaw", where, default=0.0),
    )


def _parsed(data: dict, key: str, limit: int, parse) -> list:
    """Parse every record of data[key] with parse(record, where)."""
    return [parse(record, f"{key}[{index}]") for index, record in enumerate(_records(data, key, limit))]


def _unique(items, key: str, what: str) -> tuple:
    seen = set()
    for item in items:
        value = getattr(item, key)
        if value in seen:
            raise SceneError(f"duplicate {what} {value!r}")
        seen.add(value)
    return tuple(items)


def scene_from_dict(data: dict, *, places=None) -> Scene:
    """Build a Scene from the scenario/CLI shape; ``places`` (if given) override ``data['places']``."""
    if not isinstance(data, dict):
        raise SceneError(f"scene must be a JSON/YAML object, got {type(data).__name__}")
    objects = _unique(_parsed(data, "objects", MAX_OBJECTS, parse_object), "id", "object id")
    people = _unique(_parsed(data, "people", MAX_PEOPLE, parse_person), "id", "person id")
    if places is None:
        places = _parsed(data, "places", MAX_OBJECTS, parse_place)
    robot_data = data.get("robot", {}) or {}
    if not isinstance(robot_data, dict):
        raise SceneError("'robot' must be an object with x, y, yaw")
    robot = RobotPose(*(_finite(robot_data, key, "robot", 0.0) for key in ("x", "y", "yaw")))
    holding = data.get("holding") or ""
    if holding and (not isinstance(holding, str) or not any(o.id == holding for o in objects)):
        raise SceneError(f"'holding' names {shown(holding)}, which is not an object in the scene")
    frame_id = data.get("frame_id", "map")
    if frame_id_problem(frame_id):
        raise SceneError(frame_id_problem(frame_id))
    return Scene(
        objects=objects,
        people=people,
        places=_unique(places, "name", "place"),
        robot=robot,
        holding=holding,
        stamp_s=_finite(data, "stamp", "scene", 0.0, low=0.0, high=MAX_STAMP_S),
        frame_id=frame_id,
    )


def parse_perception_json(text: str, *, places=(), robot: RobotPose = RobotPose()) -> Scene:
    """Parse a ``perception/objects`` message body into a Scene (places and pose come from elsewhere)."""
    if not isinstance(text, str):
        raise SceneError("perception message must be text")
    try:
        # NaN/Infinity literals are parsed and then rejected by _finite with a clear reason
        data = loads_bounded(text, max_bytes=MAX_SCENE_JSON_BYTES, max_depth=MAX_SCENE_JSON_DEPTH,
                             max_containers=MAX_SCENE_JSON_CONTAINERS, what="perception message")
    except BoundedJsonError as error:
        raise SceneError(str(error)) from None
    if not isinstance(data, dict):
        raise SceneError("perception message must be a JSON object")
    if "stamp" not in data:
        raise SceneError("perception message has no 'stamp'")
    scene = scene_from_dict({**data, "places": []}, places=list(places))
    return scene.with_robot(robot)


def distance(ax: float, ay: float, bx: float, by: float) -> float:
    return math.hypot(ax - bx, ay - by)


def scene_to_dict(scene: Scene) -> dict:
    """The inverse of scene_from_dict (for JSON lines, logs and the sim world)."""
    return {
        "stamp": scene.stamp_s,
        "frame_id": scene.frame_id,
        "robot": {"x": scene.robot.x, "y": scene.robot.y, "yaw": scene.robot.yaw},
        "objects": [vars(o).copy() for o in scene.objects],
        "people": [vars(p).copy() for p in scene.people],
        "places": [vars(p).copy() for p in scene.places],
        **({"holding": scene.holding} if scene.holding else {}),
    }


def load_places(data) -> tuple:
    """Named places from a semantic map: ``{"places": [{"name", "x", "y", "yaw"}]}``."""
    if not isinstance(data, dict):
        raise SceneError("semantic map must be a mapping with a 'places' list")
    return _unique(_parsed(data, "places", MAX_OBJECTS, parse_place), "name", "place")
