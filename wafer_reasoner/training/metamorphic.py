"""Metamorphic checks: change what the utterance does not mention, and the plan must not move.

For a drawn (scene, map, utterance), each variant changes one thing the contract says never matters
(docs/action_language.md section 2.2):

- ``add_places`` / ``drop_places``: places the utterance does not name added (up to 64, the map's cap) or taken away;
- ``add_objects`` / ``drop_objects``: objects of labels the utterance does not say added (up to 64) or taken away;
- ``people``: other people added or taken away;
- ``rename``: unmentioned objects and places renamed (new ids, labels and names), mentioned objects given new ids
  (their ids in the plan change with them, nothing else);
- ``shuffle``: the order perception and the map list things in.

"Mentioned" is what understanding hears (``understanding.mentions.hear``); a variant whose new names happen to
be heard in the utterance is drawn again. ``check(model, cases)`` plans each case and its variant and counts the
plans that moved.
"""

from __future__ import annotations

import random
from dataclasses import replace

from wafer_reasoner.planner.scene import MAX_OBJECTS, MAX_PEOPLE, NamedPlace, Person, SceneObject
from wafer_reasoner.training import speech_lexicon as lex
from wafer_reasoner.training.speech_render import known_words, pseudo_word
from wafer_reasoner.understanding.mentions import hear

CHANGES = ("add_places", "drop_places", "add_objects", "drop_objects", "people", "rename", "shuffle")
MAX_PLACES = 64


def _mentioned(scene, utterance: str) -> tuple:
    heard = hear(scene, utterance)
    return {label for label, _, _ in heard.spans}, {name for name, _, _ in heard.places}


def _fresh_name(rng: random.Random, taken: set) -> str:
    while True:
        name = pseudo_word(rng, known_words() | taken) + rng.choice(("", "_" + pseudo_word(rng, known_words())))
        if name not in taken:
            return name


def _point(rng: random.Random) -> tuple:
    return round(rng.uniform(-9, 9), 2), round(rng.uniform(-9, 9), 2)


def _add_places(rng, scene, labels, places):
    taken = {p.name for p in scene.places} | {o.label for o in scene.objects}
    room = MAX_PLACES - len(scene.places)
    extra = [NamedPlace(_fresh_name(rng, taken), *_point(rng)) for _ in range(rng.randint(1, max(1, room)))]
    return replace(scene, places=tuple(scene.places) + tuple(extra[:room]))


def _drop_places(rng, scene, labels, places):
    kept = [p for p in scene.places if p.name in places or rng.random() < 0.3]
    return replace(scene, places=tuple(kept))


def _add_objects(rng, scene, labels, places):
    taken = {o.label for o in scene.objects} | {p.name for p in scene.places}
    room = MAX_OBJECTS - len(scene.objects)
    extra = []
    for index in range(rng.randint(1, max(1, room))):
        label = rng.choice([lbl.replace(" ", "_") for lbl in lex.SMALL + lex.FURNITURE
                            if lbl.replace(" ", "_") not in taken] or [_fresh_name(rng, taken)])
        extra.append(SceneObject(f"extra_{index}_{label}", label, rng.choice(("",) + lex.COLORS), *_point(rng), 0.5))
    return replace(scene, objects=tuple(scene.objects) + tuple(extra[:room]))


def _drop_objects(rng, scene, labels, places):
    kept = [o for o in scene.objects if o.label in labels or o.id == scene.holding or rng.random() < 0.3]
    return replace(scene, objects=tuple(kept))


def _people(rng, scene, labels, places):
    others = [p for p in scene.people if p.id != "user"]
    user = [p for p in scene.people if p.id == "user"]
    if others and rng.random() < 0.5:
        return replace(scene, people=tuple(user))
    extra = [Person(f"visitor_{k}", *_point(rng)) for k in range(rng.randint(1, MAX_PEOPLE - len(scene.people)))]
    return replace(scene, people=tuple(scene.people) + tuple(extra))


def _rename(rng, scene, labels, places):
    taken = {o.label for o in scene.objects} | {p.name for p in scene.places}
    new_labels = {label: _fresh_name(rng, taken) for label in {o.label for o in scene.objects} - labels}
    objects = []
    for obj in scene.objects:
        label = new_labels.get(obj.label, obj.label)
        objects.append(replace(obj, id=f"r{len(objects)}_{label}", label=label))
    holding = next((o.id for o, old in zip(objects, scene.objects) if old.id == scene.holding), "")
    named = [p if p.name in places else replace(p, name=_fresh_name(rng, taken)) for p in scene.places]
    return replace(scene, objects=tuple(objects), places=tuple(named), holding=holding)


def _shuffle(rng, scene, labels, places):
    lists = [list(scene.objects), list(scene.people), list(scene.places)]
    for items in lists:
        rng.shuffle(items)
    return replace(scene, objects=tuple(lists[0]), people=tuple(lists[1]), places=tuple(lists[2]))


_MAKERS = {"add_places": _add_places, "drop_places": _drop_places, "add_objects": _add_objects,
           "drop_objects": _drop_objects, "people": _people, "rename": _rename, "shuffle": _shuffle}


def variant(rng: random.Random, scene, utterance: str, change: str):
    """(changed scene, id map old -> new) for one change; None when no variant keeps what is heard or changes
    anything."""
    labels, places = _mentioned(scene, utterance)
    for _ in range(10):
        changed = _MAKERS[change](rng, scene, labels, places)
        vacuous = changed == scene and change != "shuffle"  # nothing to drop: no case
        if not vacuous and _mentioned(changed, utterance) == (labels, places):
            ids = {old.id: new.id for old, new in zip(scene.objects, changed.objects)} if change == "rename" else {}
            return changed, ids
    return None


def renamed(plan: str, ids: dict) -> str:
    """The plan with object ids mapped (``obj:ID`` only)."""
    for old, new in sorted(ids.items(), key=lambda item: -len(item[0])):
        plan = plan.replace(f"obj:{old})", f"obj:{new})").replace(f"obj:{old},", f"obj:{new},")
    return plan


def cases(count: int, seed: int = 20261202) -> list:
    """``count`` (scene, utterance, change) cases from the training distribution, changes in turn."""
    from wafer_reasoner.training import speech_corpus

    rng = random.Random(seed)
    drawn = []
    while len(drawn) < count:
        example = speech_corpus.sample(rng, speech_corpus.TRAIN)
        change = CHANGES[len(drawn) % len(CHANGES)]
        made = variant(rng, example["scene"], example["say"], change)
        if made is not None:
            drawn.append({"scene": example["scene"], "say": example["say"], "change": change,
                          "variant": made[0], "ids": made[1]})
    return drawn


def check(model, drawn: list) -> dict:
    """Plans each case and its variant; {"cases", "moved", "per_change": {change: moved}, "samples": [...]}."""
    moved, per_change, samples = 0, {change: 0 for change in CHANGES}, []
    for case in drawn:
        before = renamed(model.generate(case["scene"], case["say"]).text, case["ids"])
        after = model.generate(case["variant"], case["say"]).text
        if before != after:
            moved += 1
            per_change[case["change"]] += 1
            if len(samples) < 8:
                samples.append({"say": case["say"], "change": case["change"], "before": before, "after": after})
    return {"cases": len(drawn), "moved": moved, "invariance": 1 - moved / max(1, len(drawn)),
            "per_change": per_change, "samples": samples}
