"""The remote planner's prompt: a system prompt and few-shot turns written from docs/action_language.md, then
the scene and the utterance. Independent of the embedded planner's prompt layout (engine/prompt.py).

    messages = chat_messages(scene, "bring me the red cup")

The fixed part (system prompt and examples) comes first and never changes, so a server that reuses the KV
state of a common prefix (llama.cpp does) computes it once; only the last user turn is new per query. A scene
is written as the reference ids a plan may use, with each object's colour and label, so the model copies ids
instead of inventing them; positions are left out (the verifier checks the geometry).
"""

from __future__ import annotations

from wafer_reasoner.planner.scene import NamedPlace, Person, Scene, SceneObject
from wafer_reasoner.planner.syntax import SPEAKER

SYSTEM_PROMPT = """\
You are the planner of a mobile robot with one arm. Turn the person's request into a plan and answer with the \
plan only.
A plan is steps joined by "; ". The steps:
navigate(REF): go to an object obj:ID, a place place:NAME or a person person:ID
pick(obj:ID): pick the object up
place(obj:ID, REF): put the held object on an object or at a place
handover(obj:ID, person:user): give the held object to the speaker
rotate(DEG): turn; left is positive, right is negative; "turn left" is 90, "turn right" -90, "turn around" 180
wait(SEC): wait that many seconds ("2 minutes" is 120)
stop(): stop
follow(person:user): follow the speaker; nothing comes after it
clarify(not_found:LABEL): nothing in the scene is called LABEL; the whole plan
clarify(ambiguous:LABEL): several objects are called LABEL and the request does not say which; the whole plan
clarify(unsupported): anything else (switches, cleaning, cooking, questions, other people, running); the whole plan
Rules:
- "bring / give / get / fetch me the X": navigate(obj:X); pick(obj:X); navigate(person:user); \
handover(obj:X, person:user). Leave out the first two steps when X is held.
- "pick up the X": navigate(obj:X); pick(obj:X).
- "put the X on the Y" / "take the X to the PLACE": navigate(obj:X); pick(obj:X); navigate(REF); place(obj:X, REF).
- "go to the PLACE": navigate(place:PLACE). "come here": navigate(person:user). "follow me": follow(person:user).
- me, my, I and us mean person:user. A colour said picks the object of that colour.
- Several requests joined by "and", "then" or "after that": the plans in order, joined by "; ".
- Use only the ids listed in the scene. Write numbers as plain digits."""

# (scene, utterance, plan): the few-shot turns, each a case of the contract (docs/action_language.md 2.1-2.5)
_KITCHEN = Scene(
    objects=(SceneObject("cup_1", "cup", "red", 1.0, 2.0), SceneObject("cup_2", "cup", "blue", 1.2, 2.1),
             SceneObject("book_1", "book", "green", -1.0, 0.5), SceneObject("table_1", "table", "", 2.0, 0.0)),
    people=(Person(SPEAKER, 0.0, -1.0),),
    places=(NamedPlace("kitchen", 3.0, 1.0), NamedPlace("office", -3.0, 2.0), NamedPlace("dock", 0.0, 0.0)),
)
_HOLDING_BOOK = Scene(objects=_KITCHEN.objects, people=_KITCHEN.people, places=_KITCHEN.places, holding="book_1")
EXAMPLES = (
    (_KITCHEN, "bring me the red cup",
     "navigate(obj:cup_1); pick(obj:cup_1); navigate(person:user); handover(obj:cup_1, person:user)"),
    (_KITCHEN, "please take the book to the office",
     "navigate(obj:book_1); pick(obj:book_1); navigate(place:office); place(obj:book_1, place:office)"),
    (_KITCHEN, "pick up the cup", "clarify(ambiguous:cup)"),
    (_KITCHEN, "put the blue cup on the table",
     "navigate(obj:cup_2); pick(obj:cup_2); navigate(obj:table_1); place(obj:cup_2, obj:table_1)"),
    (_HOLDING_BOOK, "give me the book", "navigate(person:user); handover(obj:book_1, person:user)"),
    (_KITCHEN, "go to the kitchen and then turn right 45 degrees", "navigate(place:kitchen); rotate(-45)"),
    (_KITCHEN, "can you get me the stapler", "clarify(not_found:stapler)"),
    (_KITCHEN, "switch on the lamp", "clarify(unsupported)"),
    (_KITCHEN, "wait ten seconds then follow me", "wait(10); follow(person:user)"),
)


def describe_scene(scene: Scene) -> str:
    """The scene as the prompt shows it: ids to use, each object's colour and label, what is held."""
    objects = "; ".join(f"obj:{obj.id} = {' '.join(filter(None, (obj.color, obj.label))).replace('_', ' ')}"
                        for obj in scene.objects) or "none"
    people = ", ".join(f"person:{person.id}" + (" (the speaker)" if person.id == SPEAKER else "")
                       for person in scene.people) or f"person:{SPEAKER} (the speaker)"
    places = ", ".join(f"place:{place.name}" for place in scene.places) or "none"
    holding = f"obj:{scene.holding}" if scene.holding else "nothing"
    return f"Objects: {objects}\nPeople: {people}\nPlaces: {places}\nHolding: {holding}"


def user_turn(scene: Scene, utterance: str) -> str:
    return f"{describe_scene(scene)}\nRequest: {utterance}"


def chat_messages(scene: Scene, utterance: str) -> list:
    """The chat messages of one query: system prompt, the examples as turns, then this scene and utterance."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for example_scene, said, plan in EXAMPLES:
        messages += [{"role": "user", "content": user_turn(example_scene, said)},
                     {"role": "assistant", "content": plan}]
    return messages + [{"role": "user", "content": user_turn(scene, utterance)}]
