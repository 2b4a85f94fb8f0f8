"""Synthetic (scene, utterance) -> plan corpus with a reference planner that follows the contract.

The contract is docs/action_language.md. This module samples a scene, an intent and a referring
expression, renders an utterance from a phrasing template and computes the gold plan with the same
grounding rules the model must learn (colour, nearest/closest/farthest from the robot, "the X near
the Y", ambiguity and absence -> clarify).

Templates are split into TRAIN and HELDOUT families per intent; the held-out families never reach
training and measure how well the model generalises to new phrasings of words it knows.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject, distance
from wafer_reasoner.training.reference_planner import Expression, Infeasible, label_key, reference_plan
from wafer_reasoner.understanding.grounding import NEAR_RADIUS_M

SMALL_LABELS = (
    "cup", "mug", "bottle", "book", "ball", "box", "apple", "banana", "phone", "remote", "keys", "plate",
    "bowl", "spoon", "towel", "toy", "can", "glass", "pen", "notebook", "laptop", "bag", "shoe", "hat",
    "sponge", "jar", "wrench", "screwdriver", "tape", "folder", "coffee mug", "water bottle", "tennis ball",
    "cereal box", "charger", "wallet", "scissors", "marker",
)
FURNITURE_LABELS = ("table", "sofa", "shelf", "counter", "chair", "desk", "bin", "cabinet")
COLORS = ("red", "blue", "green", "yellow", "black", "white", "orange", "purple", "pink", "brown", "gray", "silver")
PLACE_NAMES = (
    "kitchen", "dock", "living room", "hallway", "office", "bedroom", "bathroom", "garage", "entrance",
    "charging station", "lab", "storage room", "lobby", "workshop", "dining room", "reception",
)
UNSUPPORTED = (
    "sing a song", "open the window", "what time is it", "tell me a joke", "clean the floor", "call my mother",
    "turn on the lights", "make some coffee", "open the door", "dance for me", "what is the weather", "play music",
    "close the curtains", "water the plants", "read me the news", "wash the dishes", "fly to the moon",
    "charge my phone", "do my homework", "order a pizza", "turn off the tv", "lock the door", "feed the cat",
)
STOP_PHRASES = ("stop", "halt", "stop now", "please stop", "freeze", "stop right now")

WORKSPACE_M = 8.0  # objects and the robot are sampled in [-8, 8] m
MIN_SEPARATION_M = 1.6  # unrelated objects are at least this far apart, so "near" stays unambiguous
SURFACE_SEPARATION_M = 0.2  # things standing on one table
SURFACE_RADIUS_M = 0.7
SURFACE_SCENES = 0.4  # share of scenes with a crowded surface
NUMBER_WORDS = {}  # this corpus speaks digits; speech_corpus.py adds numbers written as words

# Phrasing families per intent: (train, heldout). {o} = object expression, {d} = destination, {p} = place,
# {n} = number. Held-out families only re-use words that the training families contain.
TEMPLATES = {
    "bring": (
        [
            "bring me {o}", "bring {o} to me", "can you bring me {o}", "fetch {o}", "fetch me {o}", "get me {o}",
            "please bring me {o}", "i need {o}", "hand me {o}", "give me {o}", "bring me {o} please",
            "could you get me {o}", "hey robot bring me {o}", "go get {o} for me", "i want {o}", "bring {o} over here",
        ],
        [
            "could you please fetch me {o}", "please get me {o}", "can you give me {o}", "robot i need {o} please",
            "go and fetch {o} for me", "bring {o} over to me",
        ],
    ),
    "pick": (
        [
            "pick up {o}", "pick {o} up", "grab {o}", "take {o}", "please pick up {o}", "can you pick up {o}",
            "lift {o}", "robot grab {o}", "could you take {o}",
        ],
        ["please grab {o}", "can you lift {o}", "could you pick {o} up", "hey robot take {o}"],
    ),
    "put": (
        [
            "put {o} on {d}", "place {o} on {d}", "put {o} in {d}", "move {o} to {d}", "drop {o} on {d}",
            "leave {o} on {d}", "take {o} to {d}", "please put {o} on {d}", "could you place {o} in {d}",
            "carry {o} to {d}",
        ],
        ["can you move {o} to {d}", "please drop {o} in {d}", "robot leave {o} in {d}", "could you carry {o} to {d}"],
    ),
    "go_place": (
        [
            "go to {p}", "drive to {p}", "head to {p}", "move to {p}", "navigate to {p}", "please go to {p}",
            "can you go to {p}", "robot go to {p}",
        ],
        ["could you drive to {p}", "please head to {p}", "hey robot move to {p}"],
    ),
    "go_object": (
        ["go to {o}", "drive to {o}", "approach {o}", "move to {o}", "please go to {o}"],
        ["can you approach {o}", "head to {o}"],
    ),
    "turn_left": (
        ["turn left {n} degrees", "rotate left {n} degrees", "turn {n} degrees left", "rotate {n} degrees"],
        ["please turn left {n} degrees", "can you rotate {n} degrees left"],
    ),
    "turn_right": (
        ["turn right {n} degrees", "rotate right {n} degrees", "turn {n} degrees right"],
        ["please rotate right {n} degrees", "can you turn {n} degrees right"],
    ),
    "turn_around": (["turn around", "please turn around"], ["can you turn around"]),
    "wait": (
        ["wait {n} seconds", "wait for {n} seconds", "pause for {n} seconds", "hold on for {n} seconds"],
        ["please wait {n} seconds", "can you pause {n} seconds"],
    ),
    "follow": (["follow me", "come with me", "please follow me", "come along with me"], ["can you follow me"]),
    "stop": (list(STOP_PHRASES), ["please stop right now", "halt now", "robot stop"]),
    # held out: known requests in new wrappings (a request made of unknown words is the open vocabulary's case)
    "unsupported": (
        list(UNSUPPORTED) + ["please " + u for u in UNSUPPORTED[:12]],
        ["could you " + u for u in UNSUPPORTED[8:20]] + ["robot " + u + " please" for u in UNSUPPORTED[:6]],
    ),
}
CONNECTORS = ((["{a} then {b}", "{a} and then {b}", "first {a} then {b}", "{a} and after that {b}"]),
              (["{a} after that {b}", "first {a} and then {b}"]))
# relative frequency of intents in a sample
INTENT_WEIGHTS = {
    "bring": 5, "pick": 3, "put": 4, "go_place": 2, "go_object": 2, "turn_left": 1, "turn_right": 1,
    "turn_around": 0.3, "wait": 1, "follow": 0.6, "stop": 0.4, "unsupported": 1.2,
}
OBJECT_INTENTS = ("bring", "pick", "put", "go_object")


@dataclass(frozen=True)
class Lexicon:
    """The labels and colours a scene is drawn from (this module's lists; speech_corpus passes its own)."""

    small: tuple = SMALL_LABELS  # things the robot picks up
    furniture: tuple = FURNITURE_LABELS  # destinations ("put X on the table"), never picked
    colors: tuple = COLORS


V0_LEXICON = Lexicon()


class SceneBuilder:
    """Places objects with controlled geometry so every relation the utterance uses is clear-cut."""

    def __init__(self, rng: random.Random, lexicon: Lexicon = V0_LEXICON):
        self.rng = rng
        self.lexicon = lexicon
        self.objects: list = []
        self.counter = 0
        self.robot = RobotPose(rng.uniform(-4, 4), rng.uniform(-4, 4), rng.uniform(-math.pi, math.pi))
        self.surface = None  # a piece of furniture things stand on, as in a real room ("cups on the table")
        self.places = ()  # the map's places, for "the mug from the kitchen"

    def add_surface(self, label: str) -> None:
        self.surface = self.add(label, self.rng.choice(("",) + self.lexicon.colors))

    def add_on_surface(self, label: str, color: str):
        """On the surface when there is one (objects crowd together there), else anywhere."""
        if self.surface is None or self.rng.random() < 0.3:
            return self.add(label, color)
        point = self._free_point(min_sep=SURFACE_SEPARATION_M, near=self.surface, radius=SURFACE_RADIUS_M)
        return self._create(label, color, point)

    def _free_point(self, min_sep=MIN_SEPARATION_M, near=None, radius=None):
        for _ in range(200):
            if near is None:
                x, y = self.rng.uniform(-WORKSPACE_M, WORKSPACE_M), self.rng.uniform(-WORKSPACE_M, WORKSPACE_M)
            else:
                angle, r = self.rng.uniform(0, 2 * math.pi), self.rng.uniform(min(0.35, radius / 2), radius)
                x, y = near.x + r * math.cos(angle), near.y + r * math.sin(angle)
            if abs(x) > WORKSPACE_M or abs(y) > WORKSPACE_M:
                continue
            if distance(x, y, self.robot.x, self.robot.y) < 0.8:
                continue
            others = [o for o in self.objects if o is not near]
            if all(distance(x, y, o.x, o.y) >= min_sep for o in others):
                return x, y
        return None

    def add(self, label: str, color: str, near=None, radius=NEAR_RADIUS_M * 0.6):
        return self._create(label, color, self._free_point(near=near, radius=radius))

    def _create(self, label: str, color: str, point):
        if point is None:
            return None
        self.counter += 1
        furniture = label in self.lexicon.furniture
        obj = SceneObject(
            id=f"{label_key(label)}_{self.counter}", label=label_key(label), color=color, x=round(point[0], 2),
            y=round(point[1], 2), z=0.75 if not furniture else 0.0, score=round(self.rng.uniform(0.6, 0.99), 2),
        )
        self.objects.append(obj)
        return obj


def sample_places(rng: random.Random) -> tuple:
    names = rng.sample(PLACE_NAMES, rng.randint(3, 7))
    return tuple(NamedPlace(label_key(n), round(rng.uniform(-7, 7), 1), round(rng.uniform(-7, 7), 1)) for n in names)


def _other_colors(rng, exclude, k, colors=COLORS):
    return rng.sample([c for c in colors if c not in exclude], k)


EXPRESSION_KINDS = ("unique", "color", "superlative", "near", "ambiguous", "missing", "place", "indefinite")
LOCATOR_WORDS = ("near", "next to", "by", "beside", "on", "in", "from", "at", "close to", "under")
PLACE_LOCATOR_WORDS = ("in", "from", "at", "by", "near")


def _far_point(builder: "SceneBuilder", place, radius_m: float):
    """A free point more than ``radius_m`` from place (None after many tries)."""
    for _ in range(50):
        point = builder._free_point()
        if point is not None and distance(point[0], point[1], place.x, place.y) > radius_m:
            return point
    return None


def _place_expression(rng: random.Random, builder: "SceneBuilder", label: str, colors: tuple) -> Expression:
    """One copy of label within PLACE_RADIUS_M of a place, the others farther: "the mug from the kitchen"."""
    from wafer_reasoner.understanding.grounding import PLACE_RADIUS_M

    key = label_key(label)
    place = rng.choice(builder.places)
    builder._create(label, rng.choice(("",) + colors), builder._free_point(near=place, radius=PLACE_RADIUS_M * 0.7))
    for _ in range(rng.randint(1, 2)):
        builder._create(label, rng.choice(("",) + colors), _far_point(builder, place, PLACE_RADIUS_M * 1.3))
    return Expression(key, near_place=place.name, near_word=rng.choice(PLACE_LOCATOR_WORDS))


def plan_expression(rng: random.Random, builder: SceneBuilder, label: str, *, furniture=False, kind=None,
                    kind_weights=(3, 3, 2, 2, 1, 1, 0, 0)) -> Expression:
    """Pick a referring-expression kind for `label` (unless given) and populate the scene to match it."""
    key = label_key(label)
    colors = builder.lexicon.colors
    kind = kind or rng.choices(EXPRESSION_KINDS, kind_weights)[0]
    if furniture and kind in ("near", "place", "indefinite"):
        kind = "unique"
    if kind == "place" and not builder.places:
        kind = "unique"
    if kind == "missing":
        return Expression(key)
    place = builder.add if furniture else builder.add_on_surface
    if kind == "unique":
        place(label, rng.choice(("",) + colors))
        return Expression(key)
    if kind in ("ambiguous", "indefinite"):
        for color in _other_colors(rng, (), rng.randint(2, 3), colors):
            place(label, color if rng.random() < 0.7 else "")
        return Expression(key, indefinite=kind == "indefinite")
    if kind == "color":
        present = _other_colors(rng, (), rng.randint(2, 4), colors)
        for color in present:
            place(label, color)
        chosen = rng.choice(present) if rng.random() < 0.9 else _other_colors(rng, present, 1, colors)[0]
        return Expression(key, color=chosen)
    if kind == "superlative":
        for color in _other_colors(rng, (), rng.randint(2, 3), colors):
            builder.add(label, color if rng.random() < 0.5 else "")
        return Expression(key, superlative=rng.choice(["nearest", "closest", "farthest"]))
    if kind == "place":
        return _place_expression(rng, builder, label, colors)
    # near: one copy next to an anchor of another label, the other copies away from everything
    anchor_label = rng.choice([f for f in builder.lexicon.furniture + builder.lexicon.small if f != label])
    anchor = builder.add(anchor_label, rng.choice(colors) if rng.random() < 0.5 else "")
    if anchor is not None:
        builder.add(label, rng.choice(colors) if rng.random() < 0.5 else "", near=anchor)
    for _ in range(rng.randint(1, 2)):
        builder.add(label, rng.choice(colors) if rng.random() < 0.5 else "")
    return Expression(key, near_label=label_key(anchor_label), near_word=rng.choice(LOCATOR_WORDS))


def add_clutter(rng: random.Random, builder: SceneBuilder, avoid: set, count: int) -> None:
    lexicon = builder.lexicon
    pool = [lbl for lbl in lexicon.small + lexicon.furniture if label_key(lbl) not in avoid]
    for label in rng.sample(pool, min(count, len(pool))):
        place = builder.add if label in lexicon.furniture else builder.add_on_surface
        place(label, rng.choice(("",) + lexicon.colors))


# ---- sampling ---------------------------------------------------------------------------------------------


def _render(rng: random.Random, clause: dict, split: int) -> str:
    template = rng.choice(TEMPLATES[clause["intent"]][split])
    if clause["intent"] == "unsupported":
        return template
    fields = {}
    if "o" in clause:
        fields["o"] = clause["o"].render()
    if "d" in clause:
        dest = clause["d"]
        fields["d"] = dest.render() if isinstance(dest, Expression) else "the " + dest.replace("_", " ")
    if "p" in clause:
        fields["p"] = ("the " if rng.random() < 0.6 else "") + clause["p"].replace("_", " ")
    if "n" in clause:
        fields["n"] = str(clause["n"])
    return template.format(**fields)


def _sample_clause(rng: random.Random, builder: SceneBuilder, places: tuple, used: set, intent: str) -> dict:
    clause = {"intent": intent}
    if intent in OBJECT_INTENTS:
        label = rng.choice([lbl for lbl in SMALL_LABELS if label_key(lbl) not in used])
        used.add(label_key(label))
        clause["o"] = plan_expression(rng, builder, label)
    if intent == "put":
        if rng.random() < 0.55:
            dest = rng.choice([lbl for lbl in FURNITURE_LABELS if label_key(lbl) not in used])
            used.add(label_key(dest))
            clause["d"] = plan_expression(rng, builder, dest, furniture=True)
        else:
            clause["d"] = rng.choice(places).name if rng.random() < 0.9 else label_key(rng.choice(PLACE_NAMES))
    if intent == "go_place":
        clause["p"] = rng.choice(places).name if rng.random() < 0.9 else label_key(rng.choice(PLACE_NAMES))
    if intent in ("turn_left", "turn_right"):
        clause["n"] = rng.choice([15, 30, 45, 60, 90, 120, 135, 180, rng.randint(1, 359)])
    if intent == "wait":
        clause["n"] = rng.choice([1, 2, 3, 5, 10, 15, 20, 30, rng.randint(1, 60)])
    return clause


def sample_example(rng: random.Random, split: int = 0) -> dict:
    """One example: {"scene": Scene, "say": str, "plan": str, "intents": [...]} for split 0=train, 1=heldout.

    Commands the robot could not carry out as said (holding two things at once) are drawn again."""
    return until_feasible(_sample_once, rng, split)


def until_feasible(draw, *args):
    """draw(*args), drawn again while it raises Infeasible."""
    while True:
        try:
            return draw(*args)
        except Infeasible:
            continue


def _sample_once(rng: random.Random, split: int) -> dict:
    builder = SceneBuilder(rng)
    places = sample_places(rng)
    intents, weights = zip(*INTENT_WEIGHTS.items())
    count = 1 if rng.random() < 0.75 else 2
    simple = [i for i in intents if i not in ("stop", "unsupported")]
    if count == 1:
        chosen = rng.choices(intents, weights)
    else:
        chosen = rng.choices(simple, [INTENT_WEIGHTS[i] for i in simple], k=2)
        if chosen[0] == "follow":  # follow() runs until preempted, so it can only come last
            if chosen[1] == "follow":
                raise Infeasible("follow twice")
            chosen.reverse()
    used: set = set()
    if rng.random() < SURFACE_SCENES:
        surface = rng.choice(FURNITURE_LABELS)
        used.add(surface)
        builder.add_surface(surface)
    clauses = [_sample_clause(rng, builder, places, used, intent) for intent in chosen]
    add_clutter(rng, builder, used, rng.randint(0, 6))
    rng.shuffle(builder.objects)
    people = [Person("user", round(rng.uniform(-6, 6), 2), round(rng.uniform(-6, 6), 2))]
    holding = ""
    small = [o for o in builder.objects if o.label not in FURNITURE_LABELS]
    if small and "pick" not in chosen and rng.random() < 0.15:
        holding = rng.choice(small).id
    scene = Scene(
        objects=tuple(builder.objects), people=tuple(people), places=places, robot=builder.robot, holding=holding
    )
    texts = [_render(rng, clause, split) for clause in clauses]
    say = texts[0] if len(texts) == 1 else rng.choice(CONNECTORS[split]).format(a=texts[0], b=texts[1])
    return {"scene": scene, "say": say, "plan": reference_plan(scene, clauses), "intents": list(chosen)}
