"""Stop detection: utterances the node obeys at once, without waiting for the model.

A stop command is a short phrase made only of stop words ("stop", "halt", "freeze", "abort", "cancel")
and a few harmless fillers ("please", "now", "robot", "emergency", ...), with at least one stop word.
Every other word disqualifies it, which is what keeps "don't stop", "never stop" and
"bring me the stop sign" away from here: they go to the model like any other request.
A false positive only stops the robot, so the filler list leans generous; the word limit keeps
longer requests that merely mention stopping out.
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset({"stop", "halt", "freeze", "abort", "cancel", "estop"})
# words that may surround a stop word without changing what it means
FILLER_WORDS = frozenset(
    {
        "please", "now", "right", "immediately", "wait", "emergency", "e", "robot", "hey", "ok", "okay",
        "no", "oh", "just", "it", "that", "this", "all", "everything", "the", "plan", "moving", "motion",
        "following", "turning", "driving", "me", "you", "there",
    }
)  # fmt: skip
MAX_STOP_PHRASE_WORDS = 6  # distinct words
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?")


def normalised_words(utterance: str) -> list:
    """Lower-case words without punctuation: "Wait, STOP!!" -> ['wait', 'stop']; "don't" stays one word."""
    text = utterance.lower().replace("\u2019", "'")  # typographic apostrophe from some speech engines
    return _WORD_RE.findall(text)


def is_stop_command(utterance: str) -> bool:
    """True for "stop", "STOP!!", "please stop", "emergency stop", "wait stop!"; False for "don't stop"."""
    if not isinstance(utterance, str):
        return False
    words = normalised_words(utterance)
    # distinct words, so a panicked "stop stop stop stop stop stop stop" still counts
    if not words or len(set(words)) > MAX_STOP_PHRASE_WORDS:
        return False
    has_stop_word = any(word in STOP_WORDS for word in words)
    only_known_words = all(word in STOP_WORDS or word in FILLER_WORDS for word in words)
    return has_stop_word and only_known_words


def holds_a_stop(utterances) -> bool:
    """Whether any of ``utterances`` is a stop command (one that is not text never is)."""
    return any(is_stop_command(utterance) for utterance in utterances)
