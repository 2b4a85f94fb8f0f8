"""The speech corpus: (scene, utterance) -> plan examples that sound like real speech.

Built on corpus.py's scene builder, grounding rules and reference planner (the contract does not change); what
is new is the *speech* and the *vocabulary*:

- many verbs and synonyms per intent, politeness and fillers as separate wrapper layers ("um", "hey robot",
  "could you please ... thanks"), word-order variants ("the red cup, bring it to me"), numbers as digits or
  words ("one hundred and thirty five degrees"), compounds of one to three clauses;
- ASR-style noise: dropped function words, homophones ("two" for "to", "write" for "right"), stutters,
  fillers, plural or one-typo labels, case and punctuation;
- a large label vocabulary (real household / office / warehouse objects, 15 colours, 24 places, several
  people, the robot holding something or not) plus made-up *pseudo-words* as labels and colours, so the model
  learns to handle a spelled word it has never seen (open vocabulary) instead of memorising label words.

Everything a held-out category tests is kept out of training: held-out phrasing families (templates,
wrappers, connectors), held-out real labels and colour words, four-clause compositions (training has at most
three), and heavy noise. ``heldout_set(category, count)`` generates each from its own fixed seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from wafer_reasoner.planner.language import Clarify, format_plan
from wafer_reasoner.planner.scene import NamedPlace, Person, Scene
from wafer_reasoner.training.corpus import Lexicon, SceneBuilder, add_clutter, plan_expression, until_feasible
from wafer_reasoner.training.reference_planner import (
    Expression,
    Infeasible,
    NeedsClarify,
    PlanState,
    clause_steps,
    label_key,
)
from wafer_reasoner.training.speech_lexicon import (
    COLORS,
    CONNECTORS,
    DROPPABLE,
    FILLER_WORDS,
    FURNITURE,
    HELDOUT_COLORS,
    HELDOUT_FURNITURE,
    HELDOUT_SMALL,
    HELDOUT_UNSUPPORTED,
    HOMOPHONES,
    INTENT_WEIGHTS,
    MAX_PLAN_STEPS,
    NUMBER_WORD_LIST,
    OBJECT_INTENTS,
    PEOPLE,
    PLACES,
    PREFIXES,
    SHORT_INTENTS,
    SMALL,
    SUFFIXES,
    TEMPLATES,
    UNSUPPORTED,
    UNSUPPORTED_VERBS,
)
from wafer_reasoner.understanding.mentions import mention_spans
from wafer_reasoner.understanding.words import NUMBER_WORDS, label_words, speech_words


@dataclass(frozen=True)
class Options:
    """How one example is drawn; a held-out category is a set of these."""

    split: int = 0  # 0: training phrasing families, 1: held-out families
    clauses: tuple = (0.72, 0.22, 0.06)  # probability of 1, 2, 3 (, 4) clauses
    small: tuple = SMALL
    furniture: tuple = FURNITURE
    colors: tuple = COLORS
    places: tuple = PLACES
    unsupported: tuple = UNSUPPORTED
    pseudo_labels: float = 0.3  # chance that a said object label is a made-up word
    pseudo_colors: float = 0.15  # chance that an example's colours include made-up words
    kind: str = ""  # force the referring-expression kind ("color" for the held-out colour set)
    noise: float = 0.3  # chance of ASR noise on an utterance
    noise_ops: tuple = (1, 2)  # noise operations when noisy
    number_words: float = 0.5  # chance that a number is spoken as words
    wrappers: float = 0.45  # chance of a politeness prefix / suffix


TRAIN = Options()
# the shipped model trains on more compositions: with grounding done by understanding/, what is left to learn is
# mostly how clauses, roles and refusals combine (still at most three clauses; four are held out)
TRAIN_V2 = replace(TRAIN, clauses=(0.5, 0.3, 0.2))


# ---- pseudo-words: labels and colours the model has never seen, to be read and copied by their spelling ----
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gl", "pl", "st",
           "tr", "sk", "sn", "gr", "fl", "ch", "sh", "th", "w", "j", "h")
_VOWELS = ("a", "e", "i", "o", "u", "oo", "ee", "ai", "ou", "y")
_CODAS = ("", "", "n", "r", "t", "k", "m", "p", "s", "l", "x", "nd", "rt", "sk", "mp", "ng")


def pseudo_word(rng: random.Random, avoid) -> str:
    """A pronounceable made-up word of 3-8 letters that is not in ``avoid``."""
    while True:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                       for _ in range(rng.choice((1, 2, 2, 3))))
        if 3 <= len(word) <= 8 and word not in avoid:
            return word


def _known_words() -> set:
    """Real words of the lexicons, held-out ones included: pseudo-words must never collide with them."""
    from wafer_reasoner.understanding.words import utterance_words

    texts = [*SMALL, *FURNITURE, *COLORS, *HELDOUT_SMALL, *HELDOUT_FURNITURE, *HELDOUT_COLORS, *PLACES, *UNSUPPORTED,
             *HELDOUT_UNSUPPORTED, *PREFIXES[0], *PREFIXES[1], *SUFFIXES[0], *SUFFIXES[1], *FILLER_WORDS, *DROPPABLE]
    for train, heldout in [*TEMPLATES.values(), UNSUPPORTED_VERBS, *CONNECTORS.values()]:
        texts += [t.replace("{", " ").replace("}", " ") for t in train + heldout]
    texts += [w for alts in HOMOPHONES.values() for w in alts] + list(HOMOPHONES) + list(NUMBER_WORD_LIST)
    return {word for text in texts for word in utterance_words(text)}


_KNOWN = None


def known_words() -> set:
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = _known_words()
    return _KNOWN


# ---- speech rendering ----------------------------------------------------------------------------------------


def number_words(value: int) -> str:
    """Spoken English for 0..999: 135 -> 'one hundred and thirty five'."""
    ones = [w for w, k in sorted(NUMBER_WORDS.items(), key=lambda item: item[1]) if k < 20]
    tens = {k: w for w, k in NUMBER_WORDS.items() if k >= 20}
    if value < 20:
        return ones[value]
    if value < 100:
        return tens[value - value % 10] + ("" if value % 10 == 0 else " " + ones[value % 10])
    rest = value % 100
    head = ones[value // 100] + " hundred"
    return head if rest == 0 else f"{head} and {number_words(rest)}"


def _number(rng: random.Random, value: int, unit: str, options: Options) -> str:
    spoken = number_words(value) if rng.random() < options.number_words else str(value)
    return f"{spoken} {unit}{'' if value == 1 else 's'}"


def _noisy_label(rng: random.Random, words: list) -> list:
    """A plural or a one-letter slip on one word of a label, as an ASR system writes it."""
    index = rng.randrange(len(words))
    word = words[index]
    if len(word) >= 5 and rng.random() < 0.5:
        k = rng.randrange(1, len(word) - 1)
        word = rng.choice((word[:k] + word[k + 1:], word[:k] + word[k] + word[k:]))  # letter dropped or doubled
    elif not word.endswith("s"):
        word = word + ("es" if word.endswith(("x", "ch", "sh")) else "s")
    return words[:index] + [word] + words[index + 1:]


def render_expression(rng: random.Random, expr: Expression, noisy_label: bool) -> str:
    words = [rng.choices(("the", "that", "this", "my"), (16, 2, 1, 1))[0]]
    if expr.superlative:
        words = ["the", expr.superlative]
    if expr.color:
        words.append(expr.color)
    label = expr.label.split("_")
    words += _noisy_label(rng, label) if noisy_label else label
    if expr.near_label:
        words += [*expr.near_word.split(), "the", *expr.near_label.split("_")]
    return " ".join(words)


def _render_clause(rng: random.Random, clause: dict, scene: Scene, options: Options, noisy: bool) -> tuple:
    """(text, imperative): imperative clauses may take a politeness prefix."""
    intent = clause["intent"]
    if intent == "unsupported":
        return clause["text"], True
    template = rng.choice(TEMPLATES[intent][options.split])
    fields = {}
    labels = {o.label for o in scene.objects}
    for key in ("o", "d"):
        value = clause.get(key)
        if isinstance(value, Expression):  # a said label may be noisy only when the scene has it (else: copied)
            fields[key] = render_expression(rng, value, noisy and value.label in labels and rng.random() < 0.5)
        elif value is not None:
            fields[key] = "the " + value.replace("_", " ")
    if "p" in clause:
        fields["p"] = ("the " if rng.random() < 0.6 else "") + clause["p"].replace("_", " ")
    if intent in ("turn_left", "turn_right"):
        fields["n"] = _number(rng, clause["n"], "degree", options)
    if intent == "wait":
        fields["n"] = _number(rng, clause["n"], "second", options)
    return template.lstrip("=").format(**fields), not template.startswith("=")


def _wrap(rng: random.Random, text: str, options: Options, imperative: bool) -> str:
    if imperative and rng.random() < options.wrappers:
        text = rng.choice(PREFIXES[options.split]) + " " + text
    if rng.random() < options.wrappers * 0.5:
        text = text + " " + rng.choice(SUFFIXES[options.split])
    return text


def asr_noise(rng: random.Random, text: str, operations: int) -> str:
    """Word-level recognition noise that keeps the meaning: drop a function word, hear a homophone, stutter,
    add a filler; then case and punctuation as a recogniser might write them."""
    words = text.replace(",", " ,").replace(".", " .").split()
    for _ in range(operations):
        kind = rng.choice(("drop", "homophone", "stutter", "filler"))
        candidates = [k for k, w in enumerate(words) if (w in DROPPABLE if kind == "drop" else
                                                         w in HOMOPHONES if kind == "homophone" else w.isalpha())]
        if not candidates:
            continue
        k = rng.choice(candidates)
        if kind == "drop" and len(words) > 3:
            del words[k]
        elif kind == "homophone":
            words[k] = rng.choice(HOMOPHONES[words[k]])
        elif kind == "stutter":
            words.insert(k, words[k])
        elif kind == "filler":
            words.insert(k, rng.choice(FILLER_WORDS) + rng.choice(("", ",", "...")))
    words = [w for w in words if w not in (",", ".")] if rng.random() < 0.5 else words
    text = " ".join(words).replace(" ,", ",").replace(" .", ".")
    style = rng.random()
    if style < 0.3:
        text = text[:1].upper() + text[1:] + rng.choice((".", "?", "!", ""))
    elif style < 0.4:
        text = text.upper()
    return text


# ---- sampling ----------------------------------------------------------------------------------------------------


def _lexicon(rng: random.Random, options: Options) -> tuple:
    """(Lexicon, said labels): the example's label and colour pools, with pseudo-words mixed in."""
    avoid = known_words()
    colors = options.colors
    if rng.random() < options.pseudo_colors:
        colors = colors + tuple(pseudo_word(rng, avoid) for _ in range(3))
    pseudo = tuple(pseudo_word(rng, avoid) + ("" if rng.random() < 0.85 else " " + pseudo_word(rng, avoid))
                   for _ in range(4))
    said_pool = pseudo if rng.random() < options.pseudo_labels else options.small
    return Lexicon(options.small + pseudo, options.furniture, colors), said_pool


def _sample_clause(rng, builder, places, used, intent, said_pool, options: Options) -> dict:
    clause = {"intent": intent}
    kind = options.kind or None
    if intent in OBJECT_INTENTS or intent == "unsupported_verb":
        label = rng.choice([lbl for lbl in said_pool if label_key(lbl) not in used] or
                           [lbl for lbl in options.small if label_key(lbl) not in used])
        used.add(label_key(label))
        clause["o"] = plan_expression(rng, builder, label, kind=kind)
    if intent == "unsupported_verb":
        clause["intent"] = "unsupported"
        clause["text"] = rng.choice(UNSUPPORTED_VERBS[options.split]).format(o=clause["o"].render())
    elif intent == "unsupported":
        clause["text"] = rng.choice(options.unsupported)
    if intent == "put":
        if rng.random() < 0.55:
            dest = rng.choice([lbl for lbl in options.furniture if label_key(lbl) not in used])
            used.add(label_key(dest))
            clause["d"] = plan_expression(rng, builder, dest, furniture=True,
                                          kind=kind if kind != "near" else "unique")
        else:
            clause["d"] = rng.choice(places).name if rng.random() < 0.9 else label_key(rng.choice(options.places))
    if intent == "go_place":
        clause["p"] = rng.choice(places).name if rng.random() < 0.9 else label_key(rng.choice(options.places))
    if intent in ("turn_left", "turn_right"):
        clause["n"] = rng.choice([15, 30, 45, 60, 90, 120, 135, 180, rng.randint(1, 359)])
    if intent == "wait":
        clause["n"] = rng.choice([1, 2, 3, 5, 10, 15, 20, 30, rng.randint(1, 60)])
    return clause


def _intents(rng: random.Random, count: int) -> list:
    names, weights = zip(*INTENT_WEIGHTS.items())
    if count == 1:
        chosen = rng.choices(names, weights)
        if chosen[0] == "unsupported" and rng.random() < 0.4:
            chosen = ["unsupported_verb"]
        return chosen
    pool = [i for i in names if i not in ("stop", "unsupported")]
    if count == 4:  # the held-out length: short clauses and at most one fetch, so the plan fits the decoder
        pool = list(SHORT_INTENTS)
    chosen = rng.choices(pool, [INTENT_WEIGHTS[i] for i in pool], k=count)
    if count == 4:
        chosen[rng.randrange(4)] = rng.choice(("bring", "pick", "put"))
    if chosen.count("follow") > 1:
        raise Infeasible("follow twice")
    if "follow" in chosen:  # follow() runs until preempted, so it can only come last
        chosen.remove("follow")
        chosen.append("follow")
    return chosen


def plan_for(scene: Scene, clauses: list) -> str:
    """corpus.reference_plan, with clarify(unsupported) for any clause outside the action language."""
    state = PlanState(holding=scene.holding)
    steps = []
    try:
        for clause in clauses:
            if clause["intent"] == "unsupported":
                raise NeedsClarify(Clarify("unsupported"))
            steps += clause_steps(scene, clause, state)
    except NeedsClarify as clarify:
        return format_plan([clarify.step])
    return format_plan(steps)


def _check_mentions(scene: Scene, say: str, clauses: list) -> None:
    """The prompt builder's tolerant matching must find every said label the scene has, and must not turn a
    word into a label that was not said ('mallet' heard as the scene's 'pallet'); either would contradict the
    gold plan, so such a draw is made again."""
    words = speech_words(say)
    spans = mention_spans(words, [o.label for o in scene.objects], tolerant=True)
    said = {e.label for c in clauses for e in (c.get("o"), c.get("d")) if isinstance(e, Expression)}
    said |= {e.near_label for c in clauses for e in (c.get("o"), c.get("d")) if isinstance(e, Expression)}
    for label, start, end in spans:
        if label not in said and words[start:end] != label_words(label):
            raise Infeasible(f"{' '.join(words[start:end])!r} would be heard as {label!r}")
    found = {label for label, _, _ in spans}
    for label in said & {o.label for o in scene.objects}:
        if label not in found:
            raise Infeasible(f"{label!r} not heard in {say!r}")


def sample(rng: random.Random, options: Options = TRAIN) -> dict:
    """One example {"scene", "say", "plan", "intents", "noisy"}; infeasible commands are drawn again."""
    return until_feasible(_sample_once, rng, options)


def _sample_once(rng: random.Random, options: Options) -> dict:
    lexicon, said_pool = _lexicon(rng, options)
    builder = SceneBuilder(rng, lexicon)
    names = rng.sample(options.places, rng.randint(3, 7))
    places = tuple(NamedPlace(label_key(n), round(rng.uniform(-7, 7), 1), round(rng.uniform(-7, 7), 1))
                   for n in names)
    count = rng.choices(range(1, len(options.clauses) + 1), options.clauses)[0]
    chosen = _intents(rng, count)
    used: set = set()
    if rng.random() < 0.4:
        surface = rng.choice(options.furniture)
        used.add(surface)
        builder.add_surface(surface)
    clauses = [_sample_clause(rng, builder, places, used, intent, said_pool, options) for intent in chosen]
    add_clutter(rng, builder, used, rng.randint(0, max(0, 14 - len(builder.objects))))
    objects = builder.objects[:15]
    rng.shuffle(objects)
    people = [Person("user", round(rng.uniform(-6, 6), 2), round(rng.uniform(-6, 6), 2))]
    people += [Person(p, round(rng.uniform(-6, 6), 2), round(rng.uniform(-6, 6), 2))
               for p in rng.sample(PEOPLE, rng.choice((0, 0, 1, 2, 3)))]
    small = [o for o in objects if o.label not in lexicon.furniture]
    holding = rng.choice(small).id if small and "pick" not in chosen and rng.random() < 0.2 else ""
    scene = Scene(objects=tuple(objects), people=tuple(people), places=places, robot=builder.robot, holding=holding)
    noisy = rng.random() < options.noise
    texts, imperative = zip(*(_render_clause(rng, clause, scene, options, noisy) for clause in clauses))
    say = texts[0] if count == 1 else rng.choice(CONNECTORS[count][options.split]).format(*texts)
    say = _wrap(rng, say, options, imperative[0])
    if noisy:
        say = asr_noise(rng, say, rng.randint(*options.noise_ops))
    _check_mentions(scene, say, clauses)
    plan = plan_for(scene, clauses)
    if plan.count("; ") >= MAX_PLAN_STEPS:
        raise Infeasible("plan too long for the decoder's 64 new tokens")
    return {"scene": scene, "say": say, "plan": plan, "intents": list(chosen), "noisy": noisy}


# ---- held-out categories -----------------------------------------------------------------------------------------

HELDOUT = Options(split=1, pseudo_labels=0.0, pseudo_colors=0.0, noise=0.0)
HELDOUT_CATEGORIES = {
    # new phrasing families, wrappers, connectors and unsupported requests; training's words
    "phrasing": replace(HELDOUT, clauses=(0.75, 0.25), unsupported=HELDOUT_UNSUPPORTED),
    # labels never seen in training, reaching the model spelled
    "labels": replace(HELDOUT, split=0, small=HELDOUT_SMALL, furniture=HELDOUT_FURNITURE + FURNITURE[:4],
                      clauses=(0.8, 0.2)),
    # colour words never seen in training, as modifiers ("the teal cup")
    "colours": replace(HELDOUT, split=0, colors=HELDOUT_COLORS, kind="color", clauses=(0.85, 0.15)),
    # three clauses with held-out connectors (training has three clauses rarely)
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
