"""How the speech corpus says a sampled command: referring expressions, numbers, templates, wrappers, context
sentences, non-native phrasing and recogniser noise. Every choice keeps the meaning the contract gives it
(docs/action_language.md section 2.2: what never changes the plan).
"""

from __future__ import annotations

import random

from wafer_reasoner.training import speech_lexicon as lex
from wafer_reasoner.training.reference_planner import Expression
from wafer_reasoner.understanding.words import NUMBER_WORDS, utterance_words

# ---- pseudo-words: labels, colours, places and verbs the model has never seen --------------------------------
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


def _template_words(tables) -> list:
    return [t.replace("{", " ").replace("}", " ") for train, heldout in tables for t in train + heldout]


def _known_words() -> set:
    """Real words of the lexicons, held-out ones included: pseudo-words must never collide with them."""
    from wafer_reasoner.understanding import lexicon

    texts = [*lex.SMALL, *lex.FURNITURE, *lex.COLORS, *lex.HELDOUT_SMALL, *lex.HELDOUT_FURNITURE, *lex.PLACES,
             *lex.UNSUPPORTED, *lex.HELDOUT_UNSUPPORTED, *lex.FILLER_WORDS, *lex.DROPPABLE, *lex.PEOPLE,
             *lex.PEOPLE_PHRASES, *lex.ADJECTIVES, *lex.NUMBER_WORD_LIST]
    for table in (lex.PREFIXES, lex.SUFFIXES, lex.CONTEXT, lex.NON_NATIVE, lex.MANNER):
        texts += table[0] + table[1]
    texts += _template_words([*lex.TEMPLATES.values(), lex.UNSUPPORTED_VERBS, lex.UNSUPPORTED_PEOPLE,
                              lex.RUN_TEMPLATES, *lex.CONNECTORS.values(), *lex.PAIR_TEMPLATES.values(),
                              *lex.PRONOUN_TEMPLATES.values()])
    texts += [w for alts in lex.HOMOPHONES.values() for w in alts] + list(lex.HOMOPHONES)
    words = {word for text in texts for word in utterance_words(text)}
    return words | lexicon.NEVER_A_LABEL | lexicon.COLOR_WORDS


_KNOWN = None


def known_words() -> set:
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = _known_words()
    return _KNOWN


_UNITS = frozenset({"minute", "minutes", "second", "seconds", "hour", "hours", "degree", "degrees"})


# ---- numbers ------------------------------------------------------------------------------------------------------


def number_words(value: int) -> str:
    """Spoken English for 0..999999: 135 -> 'one hundred and thirty five'."""
    ones = [w for w, k in sorted(NUMBER_WORDS.items(), key=lambda item: item[1]) if k < 20]
    tens = {k: w for w, k in NUMBER_WORDS.items() if k >= 20}
    if value >= 1000:
        head, rest = divmod(value, 1000)
        return f"{number_words(head)} thousand" + ("" if rest == 0 else f" {number_words(rest)}")
    if value < 20:
        return ones[value]
    if value < 100:
        return tens[value - value % 10] + ("" if value % 10 == 0 else " " + ones[value % 10])
    rest = value % 100
    head = ones[value // 100] + " hundred"
    return head if rest == 0 else f"{head} and {number_words(rest)}"


def spoken_number(rng: random.Random, value: int, chance_words: float) -> str:
    return number_words(value) if rng.random() < chance_words else str(value)


def angle_phrase(rng: random.Random, degrees: int, chance_words: float) -> str:
    """'90 degrees', 'ninety degrees', or the bare number (a turn's number is degrees)."""
    said = spoken_number(rng, degrees, chance_words)
    return said if rng.random() < 0.15 else f"{said} degree{'' if degrees == 1 else 's'}"


def duration_phrase(rng: random.Random, seconds: int, chance_words: float) -> str:
    """A duration as people say it: '5 seconds', 'two minutes', 'an hour', 'half a minute'."""
    if seconds == 30 and rng.random() < 0.2:
        return "half a minute"
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size and rng.random() < 0.7:
            count = seconds // size
            if count == 1 and rng.random() < 0.5:
                return f"{'an' if unit == 'hour' else 'a'} {unit}"
            return f"{spoken_number(rng, count, chance_words)} {unit}{'' if count == 1 else 's'}"
    if seconds == 1 and rng.random() < 0.3:
        return "a second"
    return f"{spoken_number(rng, seconds, chance_words)} second{'' if seconds == 1 else 's'}"


# ---- referring expressions ---------------------------------------------------------------------------------------


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
    """The words for an expression: a determiner ('the', 'my', 'that', 'a' for an indefinite), maybe an ignored
    adjective, the colour, the label, the locator."""
    if expr.indefinite:
        words = [rng.choices(("a", "any", "some"), (8, 1, 1))[0]]
    elif expr.superlative:
        words = ["the", expr.superlative]
    else:
        words = [rng.choices(("the", "that", "this", "my", "your"), (16, 2, 1, 2, 1))[0]]
    if rng.random() < 0.1:
        words.append(rng.choice(lex.ADJECTIVES))
    if expr.color:
        words.append(expr.color)
    label = expr.label.split("_")
    words += _noisy_label(rng, label) if noisy_label else label
    anchor = expr.near_label or expr.near_place
    if anchor:
        words += [*expr.near_word.split(), "the", *anchor.split("_")]
    if words[0] == "a" and words[1][:1] in "aeio":
        words[0] = "an"
    return " ".join(words)


def place_phrase(rng: random.Random, name: str) -> str:
    return ("the " if rng.random() < 0.7 else "") + name.replace("_", " ")


# ---- around the command --------------------------------------------------------------------------------------------


def wrap(rng: random.Random, text: str, split: int, imperative: bool, chance: float) -> str:
    """Politeness, vocatives, hedges, a non-native start, a sentence of context before or after."""
    if imperative and rng.random() < chance:
        text = rng.choice(lex.PREFIXES[split]) + " " + text
    elif imperative and rng.random() < 0.06:
        text = rng.choice(lex.NON_NATIVE[split]) + " " + text
    if rng.random() < chance * 0.5:
        text = text + " " + rng.choice(lex.SUFFIXES[split])
    if rng.random() < chance * 0.25:
        context = rng.choice(lex.CONTEXT[split])
        text = f"{context} {text}" if rng.random() < 0.6 else f"{text}. {context}"
    return text


def non_native(rng: random.Random, text: str) -> str:
    """Articles dropped, as a speaker of a language without them says it (the meaning is kept)."""
    words = text.split()
    return " ".join(w for w in words if w != "the" or rng.random() < 0.5)  # "a" says "any one": kept


def asr_noise(rng: random.Random, text: str, operations: int) -> str:
    """Word-level recognition noise that keeps the meaning: drop a function word, hear a homophone, stutter,
    add a filler; then case and punctuation as a recogniser might write them."""
    words = text.replace(",", " ,").replace(".", " .").split()
    for _ in range(operations):
        kind = rng.choice(("drop", "homophone", "stutter", "filler"))
        candidates = [k for k, w in enumerate(words) if (w in lex.DROPPABLE if kind == "drop" else
                                                         w in lex.HOMOPHONES if kind == "homophone" else w.isalpha())
                      and not (k + 1 < len(words) and words[k + 1].rstrip(",.") in _UNITS)
                      and not (kind == "drop" and k > 0 and words[k - 1] in ("close", "next"))]  # keeps locators
        if not candidates:
            continue
        k = rng.choice(candidates)
        if kind == "drop" and len(words) > 3:
            del words[k]
        elif kind == "homophone":
            words[k] = rng.choice(lex.HOMOPHONES[words[k]])
        elif kind == "stutter":
            words.insert(k, words[k])
        elif kind == "filler":
            words.insert(k, rng.choice(lex.FILLER_WORDS) + rng.choice(("", ",", "...")))
    words = [w for w in words if w not in (",", ".")] if rng.random() < 0.5 else words
    text = " ".join(words).replace(" ,", ",").replace(" .", ".")
    style = rng.random()
    if style < 0.3:
        text = text[:1].upper() + text[1:] + rng.choice((".", "?", "!", ""))
    elif style < 0.4:
        text = text.upper()
    return text
