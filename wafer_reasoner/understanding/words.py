"""Speech normalisation: the words an utterance is made of, as the rest of understanding reads them.

    speech_words("Um, turn ninety degrees to the the left!") -> ['turn', '9', '0', 'degrees', 'to', 'the', 'left']

Lower case; one spelling per word (``grey`` -> ``gray``); fillers dropped; a word said twice in a row said once;
numbers spoken before a unit ("one hundred and twenty seconds") written as digits, one word per digit, so the
model and the grammar copy them digit by digit. ``said_numbers`` collects the number literals a plan may copy.
"""

from __future__ import annotations

import re

from wafer_reasoner.planner.syntax import MAX_DECIMALS, MAX_INTEGER_DIGITS

MAX_UTTERANCE_WORDS = 64
SPELLING_VARIANTS = {"grey": "gray", "colour": "color"}  # one spelling per word, in speech and in perception
HEARD_AS = {"read": "red", "blew": "blue"}  # homophones a recogniser writes for colour words
FILLERS = frozenset({"um", "uh", "uhm", "erm", "er", "hmm", "mm", "ah", "eh"})
UNIT_WORDS = frozenset({"degree", "degrees", "second", "seconds", "sec", "secs"})
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {**{w: k for k, w in enumerate(_ONES)}, **{w: 10 * (k + 2) for k, w in enumerate(_TENS)}}
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|\d")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def canonical(word: str) -> str:
    return SPELLING_VARIANTS.get(word, word)


def utterance_words(text: str) -> list:
    """Lower-case words and single digits: 'Turn 90 degrees!' -> ['turn', '9', '0', 'degrees']."""
    return [canonical(word) for word in _WORD_RE.findall(text.lower())[:MAX_UTTERANCE_WORDS]]


def label_words(label: str) -> list:
    """The words of a label or place name: 'coffee_mug' -> ['coffee', 'mug']."""
    return [canonical(word) for word in label.split("_") if word]


def _number_at(words: list, start: int):
    """(value, words used) of a spoken number at words[start] ('one hundred and twenty'), or None."""
    index, value = start, None
    if index < len(words) and (words[index] in NUMBER_WORDS or words[index] == "a") and \
            index + 1 < len(words) and words[index + 1] == "hundred":
        value = 100 * (NUMBER_WORDS.get(words[index], 1) or 1)
        index += 2
        if index + 1 < len(words) and words[index] == "and" and words[index + 1] in NUMBER_WORDS:
            index += 1
    rest = 0
    if index < len(words) and words[index] in _TENS:
        rest, index = NUMBER_WORDS[words[index]], index + 1
        if index < len(words) and words[index] in _ONES[1:10]:
            rest, index = rest + NUMBER_WORDS[words[index]], index + 1
    elif index < len(words) and words[index] in _ONES:
        rest, index = NUMBER_WORDS[words[index]], index + 1
    if index == start:
        return None
    return (value or 0) + rest, index - start


def speech_words(text: str, destutter: bool = False) -> list:
    """utterance_words without fillers, spoken numbers that precede a unit ('ninety degrees', 'one hundred and
    twenty seconds') as digits; ``destutter`` also drops a word said twice in a row ('the the cup'), as the
    prompt builder does (the corpus's checks read speech without it)."""
    words = [word for word in utterance_words(text) if word not in FILLERS]
    if destutter:
        words = [w for k, w in enumerate(words) if k == 0 or w != words[k - 1] or not w.isalpha()]
    out, index = [], 0
    while index < len(words):
        number = _number_at(words, index)
        if number is not None and index + number[1] < len(words) and words[index + number[1]] in UNIT_WORDS:
            out += list(str(number[0]))
            index += number[1]
        else:
            out.append(words[index])
            index += 1
    return out[:MAX_UTTERANCE_WORDS]


def said_numbers(words, utterance: str) -> tuple:
    """Number literals said: runs of digit words of the normalised speech ("ninety degrees" -> 9 0 -> "90") and
    the numbers written in the utterance itself ("1.5"). A plan copies these, so a number cannot be cut short
    (rotate(27) for "273 degrees")."""
    found, run = set(_NUMBER_RE.findall(utterance)), ""
    for word in [*words, ""]:
        if word.isdigit():
            run += word
        elif run:
            found.add(run)
            run = ""
    return tuple(sorted(n for n in found if len(n.split(".")[0]) <= MAX_INTEGER_DIGITS
                        and len(n.partition(".")[2]) <= MAX_DECIMALS))
