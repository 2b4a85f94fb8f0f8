"""Speech normalisation: the words an utterance is made of, as the rest of understanding reads them.

    speech_words("Um, turn ninety degrees to the the left!") -> ['turn', '9', '0', 'degrees', 'to', 'the', 'left']

Lower case; one spelling per word (``grey`` -> ``gray``); fillers dropped; a word said twice in a row said once;
numbers spoken before a unit ("one hundred and twenty seconds") written as digits, one word per digit, so the
model and the grammar copy them digit by digit. ``said_numbers`` collects the number literals a plan may copy.
"""

from __future__ import annotations

import functools
import re

from wafer_reasoner.planner.syntax import MAX_DECIMALS, MAX_SAID_DIGITS

MAX_UTTERANCE_WORDS = 64
SPELLING_VARIANTS = {"grey": "gray", "colour": "color"}  # one spelling per word, in speech and in perception
HEARD_AS = {"read": "red", "blew": "blue"}  # homophones a recogniser writes for colour words
FILLERS = frozenset({"um", "uh", "uhm", "erm", "er", "hmm", "mm", "ah", "eh"})
UNIT_WORDS = frozenset({"degree", "degrees", "second", "seconds", "sec", "secs", "minute", "minutes", "min", "mins",
                        "hour", "hours", "hr", "hrs"})
DURATION_UNITS = {"second": 1, "seconds": 1, "sec": 1, "secs": 1, "minute": 60, "minutes": 60, "min": 60,
                  "mins": 60, "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600}
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {**{w: k for k, w in enumerate(_ONES)}, **{w: 10 * (k + 2) for k, w in enumerate(_TENS)}}
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|\d")
_HOMOPHONE_NUMBERS = frozenset({"two", "four", "one"})  # "to", "for", "won" as a recogniser may write them
_AFTER_HOMOPHONE = frozenset({"the", "a", "an", "my", "your", "this", "that", "me", "you", "us", "it", "them",
                              "our", "his", "her", "to"})
_BEFORE_TO = frozenset({"next", "close", "go", "come", "back", "walk", "head", "drive", "move", "get", "it", "over",
                        "up", "way", "them", "me", "this", "that"})  # "next two the", "bring it two me"
# a number is planned only where it is a turn's angle or a wait's length: before a unit, or after such a word
_NUMBER_CUES = frozenset({"turn", "rotate", "spin", "pivot", "wait", "pause", "hold", "stay", "left", "right",
                          "clockwise", "counterclockwise", "anticlockwise", "by", "for"})
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def canonical(word: str) -> str:
    return SPELLING_VARIANTS.get(word, word)


_STUTTER = re.compile(r"\b([a-z]{1,3})-(?=\1)")  # "g-go", "b-bring", "th-the": the word once
_ARTICLE_BEFORE_POSSESSIVE = re.compile(r"\b(?:the|a|an)\s+(?=(?:my|your|our|his|her|their)\b)")  # "the my phone"


def utterance_words(text: str) -> list:
    """Lower-case words and single digits: 'Turn 90 degrees!' -> ['turn', '9', '0', 'degrees']; a stuttered
    start ('g-go') and an article before a possessive ('the my phone') said once."""
    text = _ARTICLE_BEFORE_POSSESSIVE.sub("", _STUTTER.sub("", text.lower()))
    return [canonical(word) for word in _WORD_RE.findall(text)[:MAX_UTTERANCE_WORDS]]


def label_words(label: str) -> list:
    """The words of a label or place name: 'coffee_mug' -> ['coffee', 'mug']."""
    return [canonical(word) for word in label.split("_") if word]


def _below_thousand(words: list, start: int):
    """(value, words used) of a number under 1000 at words[start] ('one hundred and twenty'), or None."""
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


def _number_at(words: list, start: int):
    """(value, words used) of a spoken number at words[start], thousands included ('a hundred thousand'), or
    None."""
    head = _below_thousand(words, start)
    if head is None and start < len(words) and words[start] == "a" and start + 1 < len(words) and \
            words[start + 1] == "thousand":
        head = (1, 1)
    if head is None:
        return None
    value, used = head
    index = start + used
    if index < len(words) and words[index] == "thousand":
        index += 1
        if index < len(words) and words[index] == "and":
            index += 1
        tail = _below_thousand(words, index)
        if tail is None and words[index - 1] == "and":
            index -= 1
        value = value * 1000 + (tail[0] if tail else 0)
        index += tail[1] if tail else 0
    return value, index - start


def _numbers_as_digits(words: list) -> list:
    """Spoken numbers as digit words ('ninety' -> '9' '0'); a lone 'one' or 'a' stays a word ('the one on the
    left', 'a cup') unless a unit follows ('one second'), and so does a number right before another."""
    out, index = [], 0
    while index < len(words):
        number = _number_at(words, index)
        after = index + number[1] if number else index
        lone = number is not None and number[1] == 1 and words[index] in ("one", "a")
        # "wait four five minutes" ("for" heard as "four"): two numbers in a row, the first stays a word; so does
        # "two" / "four" before "the" or "me" ("go two the kitchen", "get it four me")
        another = after < len(words) and (words[after].isdigit() or _number_at(words, after) is not None)
        unit = after < len(words) and words[after] in UNIT_WORDS
        homophone = number is not None and number[1] == 1 and words[index] in _HOMOPHONE_NUMBERS and not unit and \
            ((after < len(words) and words[after] in _AFTER_HOMOPHONE) or (index and words[index - 1] in _BEFORE_TO))
        if number is not None and not another and not homophone and (not lone or unit):
            out += list(str(number[0]))
            index = after
        else:
            out.append(words[index])
            index += 1
    return out


def _digits_before(out: list) -> int:
    """How many digit words end ``out``."""
    count = 0
    while count < len(out) and out[-1 - count].isdigit():
        count += 1
    return count


_AND_A_HALF = ["and", "a", "half"]
_DECIMAL_DURATION = re.compile(r"\b(\d+\.\d+)\s*(hours?|hrs?|minutes?|mins?)\b", re.IGNORECASE)


def _decimal_durations(text: str) -> str:
    """'1.5 minutes' -> '90 seconds' in the text itself (the words lose the point); a value that is no whole
    number of seconds is left as said."""

    def seconds(match) -> str:
        value = float(match.group(1)) * DURATION_UNITS[match.group(2).lower()]
        return f"{value:.0f} seconds" if value == int(value) else match.group(0)

    return _DECIMAL_DURATION.sub(seconds, text)


def _count_before(out: list):
    """(count, words it took) of the number ending ``out`` before a unit: digits, 'a' / 'an' / 'one', 'half a',
    each with 'and a half' ('two and a half' -> 2.5); None when there is none."""
    half = out[-3:] == _AND_A_HALF
    head = out[:-3] if half else out
    digits = _digits_before(head)
    if digits:
        count, used = int("".join(head[-digits:])), digits
    elif head and head[-1] in ("a", "an", "one"):
        count, used = 1, 1
        if not half and len(head) > 1 and head[-2] == "half":
            count, used = 0.5, 2
    else:
        return None
    return count + 0.5 * half, used + 3 * half


def _durations_in_seconds(words: list) -> list:
    """'2 minutes' -> '1 2 0 seconds', 'an hour' -> '3 6 0 0 seconds', 'a second' -> '1 seconds', 'half a
    minute' -> '3 0 seconds', 'one and a half minutes' and 'a minute and a half' -> '9 0 seconds': waits are planned
    in seconds. A count that gives no whole number of seconds is left as said."""
    out, index = [], 0
    while index < len(words):
        word, scale = words[index], DURATION_UNITS.get(words[index])
        digits = _digits_before(out)
        leading_zero = scale == 1 and digits > 1 and out[-digits] == "0"  # "0.5 seconds" ('0 5'): not 5, as said
        found = _count_before(out) if scale is not None and not leading_zero else None
        if found is None:
            out.append(word)
            index += 1
            continue
        count, used = found
        trailing_half = words[index + 1:index + 4] == _AND_A_HALF and count == int(count)  # "a minute and a half"
        value = (count + 0.5 * trailing_half) * scale
        if value != int(value):
            out.append(word)
            index += 1
            continue
        del out[len(out) - used:]
        out += [*str(int(value)), "seconds"]
        index += 1 + 3 * trailing_half
    return out


def speech_words(text: str, destutter: bool = True) -> list:
    """utterance_words without fillers; a word said twice in a row said once ('the the cup'; ``destutter``);
    spoken numbers as digit words ('ninety degrees' -> '9 0 degrees'); minutes and hours as seconds."""
    return list(_speech_words(text, destutter))


@functools.lru_cache(maxsize=1024)  # a pure function of the text, asked by several rules for each part of a query
def _speech_words(text: str, destutter: bool) -> tuple:
    words = [word for word in utterance_words(_decimal_durations(text)) if word not in FILLERS]
    if destutter:
        words = [w for k, w in enumerate(words) if k == 0 or w != words[k - 1] or not w.isalpha()]
    return tuple(_durations_in_seconds(_numbers_as_digits(words))[:MAX_UTTERANCE_WORDS])


def _numbers_for_turn_or_wait(words) -> list:
    """Runs of digit words right before a unit or within a few words after a turn or wait word, joined."""
    words, found, index = list(words), [], 0
    while index < len(words):
        if not words[index].isdigit():
            index += 1
            continue
        end = index
        while end < len(words) and words[end].isdigit():
            end += 1
        run = "".join(words[index:end])
        if words[end:end + 3] == _AND_A_HALF:  # "3 and a half seconds" (minutes and hours are seconds by now)
            run, end = run + ".5", end + 3
        unit = end < len(words) and words[end] in UNIT_WORDS
        if unit or _NUMBER_CUES.intersection(words[max(0, index - 4):index]):
            found.append(run)
        index = end
    return found


def said_numbers(words, utterance: str) -> tuple:
    """Number literals said for a turn or a wait: runs of digit words of the normalised speech ("ninety degrees" ->
    9 0 -> "90", "2 minutes" -> "120") right before a unit or within a few words after a turn or wait word ("turn
    left 90"), and the decimals written in the utterance itself ("1.5"). A plan copies these, so a number cannot
    be cut short (rotate(27) for "273 degrees") nor made up; a number in a name ("room 214") is none of them."""
    decimals = {n for n in _NUMBER_RE.findall(_decimal_durations(utterance)) if "." in n}
    found = decimals | set(_numbers_for_turn_or_wait(words))
    return tuple(sorted(n for n in found if len(n.split(".")[0]) <= MAX_SAID_DIGITS
                        and len(n.partition(".")[2]) <= MAX_DECIMALS))


def plannable_numbers(words, utterance: str) -> tuple:
    """said_numbers without the digit run a decimal is also heard as ("1.5" is not also "15")."""
    said = said_numbers(words, utterance)
    decimals = {n.replace(".", "") for n in said if "." in n}
    return tuple(n for n in said if n not in decimals)


_EXPONENT = re.compile(r"\d(?:\.\d+)?e[+-]?\d", re.IGNORECASE)


def unplannable_number(words, utterance: str) -> bool:
    """Whether a turn or a wait was given a number no plan can copy: too long ("wait 99999999999 seconds"), in
    exponent notation ("1e308 degrees"), or none a plan could write ("turn left infinity degrees", "wait a few
    seconds": a unit with no number before it)."""
    words = list(words)
    unit_without_number = any(word in UNIT_WORDS and not (index and words[index - 1].isdigit())
                              and words[max(0, index - 3):index] != _AND_A_HALF for index, word in enumerate(words))
    return unit_without_number or bool(_EXPONENT.search(utterance)) or \
        any(len(run.split(".")[0]) > MAX_SAID_DIGITS for run in _numbers_for_turn_or_wait(words))
