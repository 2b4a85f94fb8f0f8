"""The speech corpus: (scene, map, utterance) -> plan examples that sound the way people talk to a robot.

Built on corpus.py's scene builder and the reference planner (the contract, docs/action_language.md); what is
drawn here is *what is said and how*:

- every intent of the contract with many phrasings (speech_lexicon.TEMPLATES), politeness and vocatives, context
  sentences that ask nothing, non-native starts and dropped articles, numbers as digits or words, durations in
  seconds, minutes or hours;
- referring expressions with colours, superlatives, indefinites, possessives, ignored adjectives and locators to
  objects or to places of the map; pronouns for the object of the clause before; one verb with two objects;
- compositions of one to three clauses joined by then / and / commas (four are held out);
- requests outside the action language: devices, cleaning, questions, other people, manners of motion, verbs
  nobody taught the robot (made-up words), waits without a duration;
- maps of 0 to 40 places named from real, numbered and made-up names, many unmentioned objects and people;
- ASR-style noise; made-up labels and colours, so a spelled word the model never saw is read, not memorised.

Everything a held-out category tests is kept out of training: held-out phrasing families, labels, four-clause
compositions and heavy noise. ``heldout_set(category, count)`` draws each from its own fixed seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from wafer_reasoner.planner.scene import NamedPlace, Person, Scene
from wafer_reasoner.training import speech_lexicon as lex
from wafer_reasoner.training import speech_render as say
from wafer_reasoner.training.corpus import Lexicon, SceneBuilder, add_clutter, plan_expression, until_feasible
from wafer_reasoner.training.reference_planner import Expression, Infeasible, label_key, reference_plan
from wafer_reasoner.understanding import clauses as splitter
from wafer_reasoner.understanding.mentions import hear

OBJECT_PHRASED = ("bring", "pick", "put", "go_object", "unsupported_verb", "unsupported_people")


@dataclass(frozen=True)
class Options:
    """How one example is drawn; a held-out category is a set of these."""

    split: int = 0  # 0: training phrasing families, 1: held-out families
    clauses: tuple = (0.5, 0.3, 0.2)  # probability of 1, 2, 3 (, 4) clauses
    small: tuple = lex.SMALL
    furniture: tuple = lex.FURNITURE
    colors: tuple = lex.COLORS
    places: tuple = lex.PLACES
    unsupported: tuple = lex.UNSUPPORTED
    pseudo_labels: float = 0.3  # chance that a said object label is a made-up word
    pseudo_colors: float = 0.1  # chance that an example's colours include made-up words (perception's own)
    pseudo_places: float = 0.25  # chance that the map has made-up place names
    kind: str = ""  # force the referring-expression kind ("color" for a colour set)
    kind_weights: tuple = (3, 2.5, 1.2, 2, 1, 1, 1.2, 0.8)  # corpus.EXPRESSION_KINDS
    noise: float = 0.3  # chance of ASR noise on an utterance
    noise_ops: tuple = (1, 2)  # noise operations when noisy
    number_words: float = 0.5  # chance that a number is spoken as words
    wrappers: float = 0.45  # chance of a politeness prefix / suffix
    non_native: float = 0.06  # chance of dropped articles
    pronouns: float = 0.3  # chance that a later object clause says "it" for the object before
    pairs: float = 0.08  # chance that one verb takes two objects
    max_places: int = 40


TRAIN = Options()


# ---- the world -------------------------------------------------------------------------------------------------


def _place_names(rng: random.Random, options: Options, avoid: set) -> list:
    count = rng.choice((0, 1, rng.randint(2, 6), rng.randint(2, 12), rng.randint(6, options.max_places)))
    names = set()
    for _ in range(count * 3):
        if len(names) >= count:
            break
        roll = rng.random()
        if roll < options.pseudo_places:
            name = say.pseudo_word(rng, avoid) + rng.choice(("", " room", " hall", " lab", " " +
                                                              say.pseudo_word(rng, avoid)))
        elif roll < options.pseudo_places + 0.15:
            name = f"{rng.choice(lex.NUMBERED_PLACES)} {rng.randint(1, 250)}"
        else:
            name = rng.choice(options.places)
        names.add(label_key(name))
    return sorted(names - avoid)


def _world(rng: random.Random, options: Options) -> tuple:
    """(SceneBuilder, said-label pool): a lexicon with made-up words mixed in, the map, the robot."""
    avoid = say.known_words()
    colors = options.colors
    if rng.random() < options.pseudo_colors:
        colors = colors + tuple(say.pseudo_word(rng, avoid) for _ in range(3))
    pseudo = tuple(say.pseudo_word(rng, avoid) + ("" if rng.random() < 0.85 else " " + say.pseudo_word(rng, avoid))
                   for _ in range(4))
    said_pool = pseudo if rng.random() < options.pseudo_labels else options.small
    builder = SceneBuilder(rng, Lexicon(options.small + pseudo, options.furniture, colors))
    labels = {label_key(label) for label in options.small + options.furniture + pseudo}
    names = _place_names(rng, options, labels)
    rng.shuffle(names)
    builder.places = tuple(NamedPlace(n, round(rng.uniform(-9, 9), 1), round(rng.uniform(-9, 9), 1),
                                      round(rng.uniform(-3.1, 3.1), 2)) for n in names)
    return builder, said_pool


def _people(rng: random.Random) -> tuple:
    people = [Person("user", round(rng.uniform(-6, 6), 2), round(rng.uniform(-6, 6), 2))]
    return tuple(people + [Person(p, round(rng.uniform(-6, 6), 2), round(rng.uniform(-6, 6), 2))
                           for p in rng.sample(lex.PEOPLE, rng.choice((0, 0, 1, 2, 3)))])


# ---- clauses ------------------------------------------------------------------------------------------------------


def _new_object(rng, builder, used: set, said_pool, options: Options, furniture: bool = False) -> Expression:
    pool = options.furniture if furniture else said_pool
    label = rng.choice([lbl for lbl in pool if label_key(lbl) not in used] or
                       [lbl for lbl in options.small if label_key(lbl) not in used])
    used.add(label_key(label))
    kind = options.kind or None
    if furniture and kind in ("near", "place"):
        kind = "unique"
    return plan_expression(rng, builder, label, furniture=furniture, kind=kind, kind_weights=options.kind_weights)


def _place_or_unknown(rng, builder, options: Options) -> str:
    if builder.places and rng.random() < 0.9:
        return rng.choice(builder.places).name
    return label_key(rng.choice([p for p in options.places if label_key(p) not in {x.name for x in builder.places}]))


def _numbers(rng: random.Random, clause: dict) -> None:
    intent = clause["intent"]
    if intent in ("turn_left", "turn_right", "turn_unsigned"):
        clause["n"] = rng.choice([15, 30, 45, 60, 90, 120, 135, 180, 270, 360, rng.randint(1, 359),
                                  rng.choice((400, 720, 1000))])
    if intent == "wait":
        clause["n"] = rng.choice([1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120, 300, 3600, rng.randint(1, 60),
                                  rng.choice((600, 1800, 100000))])


def _sample_clause(rng, builder, used: set, intent: str, said_pool, options: Options, previous) -> dict:
    clause = {"intent": intent}
    if intent == "unsupported_manner":
        clause["base"] = rng.choice(("bring", "go_place", "go_object", "put", "come", "run"))
    base = clause.get("base", intent)
    if base in OBJECT_PHRASED:
        if previous is not None and intent in lex.PRONOUN_TEMPLATES and rng.random() < options.pronouns:
            clause["o"], clause["pronoun"] = previous, True
        else:
            clause["o"] = _new_object(rng, builder, used, said_pool, options)
    obj = clause.get("o")
    if base == "put" and isinstance(obj, Expression) and (obj.near_label or obj.near_place) and \
            not clause.get("pronoun"):
        clause["o"] = replace(obj, near_word="from")  # after a put verb "on the Y" would be where it goes
    if base == "put":
        clause["d"] = _new_object(rng, builder, used, said_pool, options, furniture=True) if rng.random() < 0.55 \
            else _place_or_unknown(rng, builder, options)
    if base in ("go_place", "follow", "run", "unsupported_people") or intent == "go_place":
        clause["p"] = _place_or_unknown(rng, builder, options)
    if intent == "unsupported":
        clause["text"] = rng.choice(options.unsupported)
    _numbers(rng, clause)
    return clause


def _intents(rng: random.Random, count: int) -> list:
    names, weights = zip(*lex.INTENT_WEIGHTS.items())
    if count == 1:
        return rng.choices(names, weights)
    pool = [i for i in names if i != "unsupported"]
    if count == 4:  # the held-out length: short clauses and at most one fetch, so the plan fits the decoder
        pool = list(lex.SHORT_INTENTS)
    chosen = rng.choices(pool, [lex.INTENT_WEIGHTS[i] for i in pool], k=count)
    if count == 4:
        chosen[rng.randrange(4)] = rng.choice(("bring", "pick", "put"))
    if "follow" in chosen[:-1] and rng.random() < 0.8:  # mostly last (anything after a follow is refused)
        chosen.remove("follow")
        chosen.append("follow")
    return chosen


# ---- saying it -------------------------------------------------------------------------------------------------------


def _fields(rng, clause: dict, scene: Scene, options: Options, noisy: bool) -> dict:
    labels = {o.label for o in scene.objects}
    fields = {}
    for key in ("o", "d"):
        value = clause.get(key)
        if isinstance(value, Expression):  # a said label may be noisy only when the scene has it (else: copied)
            fields[key] = say.render_expression(rng, value, noisy and value.label in labels and rng.random() < 0.5)
        elif value is not None:
            fields[key] = say.place_phrase(rng, value)
    if "p" in clause:
        fields["p"] = say.place_phrase(rng, clause["p"])
    if "n" in clause:
        phrase = say.duration_phrase if clause["intent"] == "wait" else say.angle_phrase
        fields["n"] = phrase(rng, clause["n"], options.number_words)
    people = [p.id for p in scene.people if p.id != "user" and "_" not in p.id]
    fields["w"] = rng.choice(people) if people and rng.random() < 0.6 else rng.choice(lex.PEOPLE_PHRASES)
    return fields


def _template(rng, clause: dict, split: int) -> str:
    intent = clause["intent"]
    if clause.get("pronoun"):
        return rng.choice(lex.PRONOUN_TEMPLATES[intent][split])
    if intent == "unsupported_verb":
        return rng.choice(lex.UNSUPPORTED_VERBS[split])
    if intent == "unsupported_people":
        return rng.choice(lex.UNSUPPORTED_PEOPLE[split])
    if intent == "unsupported_manner":
        base = clause["base"]
        if base == "run":
            return rng.choice(lex.RUN_TEMPLATES[split])
        manner = rng.choice(lex.MANNER[split])
        template = rng.choice(lex.TEMPLATES[base][split]).lstrip("=")
        return f"{manner} {template}" if rng.random() < 0.3 else f"{template} {manner}"
    return rng.choice(lex.TEMPLATES[intent][split])


def _render_clause(rng, clause: dict, scene: Scene, options: Options, noisy: bool) -> tuple:
    """(text, imperative): imperative clauses may take a politeness prefix."""
    if clause["intent"] == "unsupported":
        return clause["text"], True
    template = _template(rng, clause, options.split)
    text = template.lstrip("=").format(**_fields(rng, clause, scene, options, noisy))
    return text, not template.startswith("=")


def _pair(rng, clauses: list, builder, used: set, said_pool, options: Options) -> tuple:
    """Maybe turn the first clause into one verb with two objects: (clauses for the plan, the template or None)."""
    first = clauses[0]
    if first["intent"] not in lex.PAIR_TEMPLATES or first.get("pronoun") or rng.random() >= options.pairs:
        return clauses, None
    second = dict(first, o=_new_object(rng, builder, used, said_pool, options))
    return [first, second, *clauses[1:]], rng.choice(lex.PAIR_TEMPLATES[first["intent"]][options.split])


def _utterance(rng, scene: Scene, clauses: list, pair, options: Options, noisy: bool) -> str:
    if pair is not None:
        fields = _fields(rng, clauses[0], scene, options, noisy)
        fields["o2"] = say.render_expression(rng, clauses[1]["o"], False)
        texts, imperative = [pair.format(**fields)], [True]
        rest = clauses[2:]
    else:
        texts, imperative, rest = [], [], clauses
    for clause in rest:
        text, is_imperative = _render_clause(rng, clause, scene, options, noisy)
        texts.append(text)
        imperative.append(is_imperative)
    count = len(texts)
    text = texts[0] if count == 1 else rng.choice(lex.CONNECTORS[min(count, 4)][options.split]).format(*texts)
    text = say.wrap(rng, text, options.split, imperative[0], options.wrappers)
    if rng.random() < options.non_native:
        text = say.non_native(rng, text)
    return say.asr_noise(rng, text, rng.randint(*options.noise_ops)) if noisy else text


def _check_mentions(scene: Scene, utterance: str, clauses: list) -> None:
    """Understanding must find every said label the scene has and every said place the map has, and must not
    turn a word into a label or place that was not said ('mallet' heard as the scene's 'pallet'); either would
    contradict the gold plan, so such a draw is made again."""
    heard = hear(scene, utterance)
    expressions = [e for c in clauses for e in (c.get("o"), c.get("d")) if isinstance(e, Expression)]
    said = {e.label for e in expressions} | {e.near_label for e in expressions if e.near_label}
    said_places = {e.near_place for e in expressions if e.near_place} | \
        {v for c in clauses for v in (c.get("p"), c.get("d")) if isinstance(v, str)}
    found = {label for label, _, _ in heard.spans}
    found_places = {name for name, _, _ in heard.places}
    if not found <= said or (said & {o.label for o in scene.objects}) - found:
        raise Infeasible(f"labels heard {sorted(found)}, said {sorted(said)}: {utterance!r}")
    if not found_places <= said_places or (said_places & {p.name for p in scene.places}) - found_places:
        raise Infeasible(f"places heard {sorted(found_places)}, said {sorted(said_places)}: {utterance!r}")


def sample(rng: random.Random, options: Options = TRAIN) -> dict:
    """One example {"scene", "say", "plan", "intents", "noisy"}; a draw that cannot be said as drawn is made
    again."""
    return until_feasible(_sample_once, rng, options)


def _sample_once(rng: random.Random, options: Options) -> dict:
    builder, said_pool = _world(rng, options)
    count = rng.choices(range(1, len(options.clauses) + 1), options.clauses)[0]
    chosen = _intents(rng, count)
    used: set = set()
    if rng.random() < 0.4:
        surface = rng.choice(options.furniture)
        used.add(label_key(surface))
        builder.add_surface(surface)
    clauses, previous = [], None
    for intent in chosen:
        clauses.append(_sample_clause(rng, builder, used, intent, said_pool, options, previous))
        previous = clauses[-1].get("o") if isinstance(clauses[-1].get("o"), Expression) else None
    clauses, pair = _pair(rng, clauses, builder, used, said_pool, options)
    add_clutter(rng, builder, used, rng.randint(0, max(0, 24 - len(builder.objects))))
    objects = builder.objects[:40]
    rng.shuffle(objects)
    small = [o for o in objects if o.label not in {label_key(f) for f in builder.lexicon.furniture}]
    holding = rng.choice(small).id if small and rng.random() < 0.2 else ""
    scene = Scene(objects=tuple(objects), people=_people(rng), places=builder.places, robot=builder.robot,
                  holding=holding)
    noisy = rng.random() < options.noise
    utterance = _utterance(rng, scene, clauses, pair, options, noisy)
    _check_mentions(scene, utterance, clauses)
    plan = reference_plan(scene, clauses)
    if plan.count("; ") >= lex.MAX_PLAN_STEPS:
        raise Infeasible("plan too long for the decoder's 64 new tokens")
    return {"scene": scene, "say": utterance, "plan": plan, "intents": list(chosen), "noisy": noisy,
            "parts": _parts(scene, utterance, clauses if pair is None else None)}


def _parts(scene: Scene, utterance: str, clauses) -> list:
    """The parts the planner plans one by one (understanding/clauses.py), each with its own plan, the robot's
    state before it and the object "it" means: [(text, plan, scene, antecedent)], when the split meets the
    clauses one to one (else [])."""
    texts = splitter.split_clauses(utterance, splitter.scene_names(scene))
    if clauses is None or len(texts) != len(clauses) or len(texts) == 1:
        return []
    parts, antecedent = [], ""
    for text, clause in zip(texts, clauses):
        plan = reference_plan(scene, [clause])
        parts.append((text, plan, scene, antecedent))
        scene = splitter.scene_after(scene, plan)
        antecedent = splitter.acted_on(plan) or antecedent
    return parts


# ---- held-out categories -----------------------------------------------------------------------------------------

HELDOUT = Options(split=1, pseudo_labels=0.0, pseudo_colors=0.0, noise=0.0)
HELDOUT_CATEGORIES = {
    # new phrasing families, wrappers, connectors and unsupported requests; training's words
    "phrasing": replace(HELDOUT, clauses=(0.75, 0.25), unsupported=lex.HELDOUT_UNSUPPORTED),
    # labels never seen in training, reaching the model spelled
    "labels": replace(HELDOUT, split=0, small=lex.HELDOUT_SMALL, furniture=lex.HELDOUT_FURNITURE + lex.FURNITURE[:4],
                      clauses=(0.8, 0.2)),
    # colours as modifiers ("the teal cup"), every reference told apart by colour
    "colours": replace(HELDOUT, split=0, kind="color", clauses=(0.85, 0.15)),
    # locators to objects and places ("the mug from the kitchen", "the cup on the table")
    "locators": replace(HELDOUT, split=0, kind="near", clauses=(0.7, 0.3)),
    # three clauses with held-out connectors
    "compose3": replace(HELDOUT, clauses=(0.0, 0.0, 1.0)),
    # four clauses: longer than anything in training
    "compose4": replace(HELDOUT, clauses=(0.0, 0.0, 0.0, 1.0)),
    # heavy ASR noise on training phrasings
    "noisy": replace(HELDOUT, split=0, noise=1.0, noise_ops=(2, 3)),
}
HELDOUT_SEEDS = {name: 20261201 + k for k, name in enumerate(HELDOUT_CATEGORIES)}
TRAIN_FAMILY_SEED = 20261200  # "train families": fresh examples of the training distribution, for reference


def heldout_set(category: str, count: int, seed_offset: int = 0) -> list:
    """``count`` examples of one held-out category, from its fixed seed (plus ``seed_offset``: another draw of
    the same category, for a confirmation set), tagged with "category"."""
    if category == "train":
        rng, options = random.Random(TRAIN_FAMILY_SEED + seed_offset), TRAIN
    else:
        rng, options = random.Random(HELDOUT_SEEDS[category] + seed_offset), HELDOUT_CATEGORIES[category]
    return [{**sample(rng, options), "category": category} for _ in range(count)]


def heldout_examples(count_per_category: int, categories=None, seed_offset: int = 0) -> list:
    return [e for name in (categories or HELDOUT_CATEGORIES)
            for e in heldout_set(name, count_per_category, seed_offset)]
