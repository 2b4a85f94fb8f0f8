"""Clause by clause: a long command is planned one part at a time.

The planner is near perfect on one clause and loses its way in long compositions. Connectors that can only join
clauses split the utterance: "then" (and "than", which a recogniser writes for it), "after that", "afterwards",
"finally", each with an optional "and" and punctuation before it; and "and" or a comma when a command verb
follows ("pick up the cup and put it on the table"), but not after a bare "go" or "come" ("go and get the cup")
nor after words that only open a command ("listen, bring me the cup"; "if you don't mind, turn left").
"and" before a noun ("the cup and the plate") and a comma before one ("the red cup, bring it to me") stay inside
a part. Each part is planned with the robot's state after the parts before it (what it holds, and which object
"it" means), and the parts' plans are joined as the contract joins clauses: the first refusal is the whole plan,
otherwise the steps in order.
"""

from __future__ import annotations

import re
from dataclasses import replace
from difflib import SequenceMatcher

from wafer_reasoner.planner.language import Handover, Pick, PlaceOn, PlanSyntaxError, Ref, parse_plan
from wafer_reasoner.understanding.lexicon import (
    COLOR_WORDS,
    COME_VERBS,
    COMMAND_VERBS,
    DETERMINERS,
    GO_VERBS,
    NEVER_A_LABEL,
    OTHER_PEOPLE,
    OTHER_VERBS,
    POLITENESS,
    PRONOUNS,
    QUESTION_WORDS,
    TITLES,
    UNSUPPORTED_VERBS,
)
from wafer_reasoner.understanding.words import FILLERS, NUMBER_WORDS

_CONNECTOR = re.compile(r"[,.;!?]?\s*\b(?:and\s+)?(?:then|than|after\s+that|afterwards|finally)\b[,.]?", re.IGNORECASE)
_AND = re.compile(r"\s*(?:,\s*and\b|\band\b|[,;])\s*", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]")
_SENTENCE_END = re.compile(r"[.!?]\s")
_WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")
# words that only open a command: "listen, ...", "if you don't mind, ...", "right, ..." (heard as "write"), "first go
# and ..."
_LEAD_INS = POLITENESS | {"also", "then", "could", "can", "would", "will", "you", "i", "need", "want", "to", "if",
                          "don't", "do", "listen", "look", "right", "write", "me", "is", "possible", "first",
                          "now", "next"}
_SERIAL = frozenset({"go", "come", "and"})  # "go and get the cup" is one command
_POINTERS = frozenset({"it", "them"})
_VERBS = (COMMAND_VERBS | OTHER_VERBS) - {"please", "thank", "thanks", "could", "can", "would", "will", "shall",
                                           "should", "may", "might", "must", "is", "are", "was", "were", "be", "been",
                                           "am", "has", "have", "had", "does", "did", "done", "need", "want", "like",
                                           "love", "know", "think", "let", "try", "keep"}


def _starts_command(text: str) -> bool:
    """Whether text begins with a command verb, after lead-ins such as "please" or "could you"."""
    for word in _WORDS.findall(text.lower())[:5]:
        if word in _VERBS:
            return True
        if word not in _LEAD_INS:
            return False
    return False


def _says_a_verb(text: str, names) -> bool:
    """Whether the last sentence of ``text`` holds a verb of its own, besides lead-ins, "go and" and words that
    name something in view ("the paint can", "the water bottle" hold no verb)."""
    sentence = _SENTENCE_END.split(text)[-1]  # "i just got home. if you don't mind, ..."
    said = set(_WORDS.findall(sentence.lower())) - _LEAD_INS
    return bool(_VERBS.intersection(said - names)) and not said <= _SERIAL


def _topic(chunk: str, following: str, names) -> bool:
    """A chunk that only names what the command after it points at: "the red cup" in "..., the red cup, bring it
    to me"."""
    return not _says_a_verb(chunk, names) and _starts_command(following) and \
        bool(_POINTERS.intersection(_WORDS.findall(following.lower())))


def _split_at_and(part: str, names=frozenset()) -> list:
    """A part split where "and" or a comma joins two commands: before a command verb when the part so far holds
    a verb of its own ("the red cup, bring it to me" is one command), and before a chunk that only names what the
    next command points at ("turn left, the red cup, bring it to me": "turn left" | "the red cup, bring it ...")."""
    pieces = _AND.split(part)  # chunks, joints, chunks, ... (the pattern has no groups: rebuilt below)
    joints = [match.group(0) for match in _AND.finditer(part)]
    out = [pieces[0]]
    for index, chunk in enumerate(pieces[1:]):
        following = pieces[index + 2] if index + 2 < len(pieces) else ""
        opens = _starts_command(chunk) or _topic(chunk, following, names)
        if opens and _says_a_verb(out[-1], names):
            out.append(chunk)
        else:
            out[-1] += joints[index] + chunk
    return out


_QUESTION_OPENERS = QUESTION_WORDS | {"is", "are", "was", "were", "does", "did", "has", "have", "isn't", "aren't",
                                      "doesn't", "what's", "where's", "who's", "how's", "when's", "why's"}


_STATEMENT_AFTER_VERB = frozenset({"for", "to", "in", "on", "at", "from", "with", "because", "so", "very", "too",
                                   "not", "just", "really", "already", "still"})


def is_question(part: str) -> bool:
    """Whether a part asks rather than commands: it opens (after lead-ins such as "okay" or "first") with a
    question word or an auxiliary ("is the cup clean", "where is my phone", "have you seen the keys").
    "could you / can you / would you ..." and "is possible to ..." are requests, not questions. Questions are
    outside the language."""
    words = _WORDS.findall(part.lower())
    for index, word in enumerate(words[:5]):
        if word in _QUESTION_OPENERS:
            # "is possible to bring ...": a request; "what a morning": an exclamation; "(it) is for the
            # flowers": a statement with its subject dropped, no question
            following = words[index + 1:index + 2]
            return following != ["possible"] and not (word == "what" and following in (["a"], ["an"])) and \
                not (word not in QUESTION_WORDS and following and following[0] in _STATEMENT_AFTER_VERB)
        if word not in POLITENESS and word not in {"first", "then", "also", "now", "and", "so"}:
            return False
    return False


# words that may open a part and are no verb the language lacks: every word of the tables, colours, numbers, fillers
_KNOWN_OPENERS = NEVER_A_LABEL | COLOR_WORDS | frozenset(NUMBER_WORDS) | FILLERS | _LEAD_INS
# what follows a verb: its object or where it goes ("polish the lamp", "juggle it", "tiptoe into the nursery")
_OBJECT_STARTS = DETERMINERS | PRONOUNS | COLOR_WORDS | {"to", "into", "onto", "across", "through", "toward",
                                                          "towards"}
MISHEARD_RATIO = 0.75  # a word this close to a command verb may be that verb misheard


def _misheard_command(word: str) -> bool:
    """A one-letter slip of a command verb, as a recogniser makes them ("fech", "bringg", "tunr"; not "sprint")."""
    return any(abs(len(word) - len(verb)) <= 1 and SequenceMatcher(None, word, verb).ratio() >= MISHEARD_RATIO
               for verb in COMMAND_VERBS)


def _unknown_verb(word: str, following: str, names) -> bool:
    """A word no table knows (nor a contraction: "here's the thing"), no thing in view is called and no command
    verb sounds like, followed by what follows a verb ("polish the lamp", "juggle it", "sprint to the door"): a
    verb the language does not have."""
    return following in _OBJECT_STARTS and word not in _KNOWN_OPENERS and word not in names and \
        "'" not in word and not word.isdigit() and not _misheard_command(word)


def opens_with_unknown_verb(text: str, names=frozenset()) -> bool:
    """Whether ``text`` opens with a verb the language does not have ("wrap the gift box for me")."""
    words = _WORDS.findall(text.lower())
    return bool(words) and _unknown_verb(words[0], "".join(words[1:2]), names)


def asks_outside(part: str, label_words=frozenset()) -> bool:
    """Whether a part's command verb, after lead-ins ("could you", "go and"), is one the language cannot do:
    one it names as such ("wash the cup", "go and vacuum the rug") or a word no table knows in a verb's place
    ("polish the lamp"). A word that names something in the scene or the map is no verb here ("iron, bring it
    to me" with an iron in view)."""
    words = _WORDS.findall(part.lower())
    for index, word in enumerate(words[:6]):
        if word in UNSUPPORTED_VERBS:
            return word not in label_words
        if _unknown_verb(word, "".join(words[index + 1:index + 2]), label_words):
            return True
        if word not in _LEAD_INS and word not in _SERIAL:
            return False
    return False


_NAMED_AFTER = frozenset({"to", "follow", "give", "hand", "for", "help", "with", "tell", "call", "find", "fetch"})
_TO_A_PLACE = GO_VERBS | COME_VERBS | {"me", "us", "way", "over", "back", "up", "down", "it", "them"}
_CAPITALISED = re.compile(r"(?<=[a-z,] )([A-Z][a-z]+)\b")  # a capital inside a sentence: a name


def _a_person(word: str, following: list, names) -> bool:
    """A word for someone else standing for a person: a title ("Dr. Okafor"), or a person word that ends a
    phrase ("to the guest", "follow him", "my dad in the garage"), not one in front of a noun ("the guest
    room", "the kids room": a place that happens to be named after people) or a name in view."""
    if word in TITLES:
        return True
    return word in OTHER_PEOPLE and word not in names and (not following or following[0] in NEVER_A_LABEL)


def names_someone_else(part: str, names=frozenset()) -> bool:
    """Whether a part is about a person other than the speaker: a word for one ("the guest", "him", "my dad")
    or a capitalised name after "to", "follow", "give" ... ("take the folder to Priya"), neither naming
    anything in view or on the map. Only the speaker is addressable by speech."""
    words = _WORDS.findall(part.lower())
    if any(_a_person(word, words[index + 1:index + 2], names) for index, word in enumerate(words)):
        return True
    for match in _CAPITALISED.finditer(part):
        word = match.group(1).lower()
        before = _WORDS.findall(part[:match.start()].lower())[-2:]
        a_place = before[-1:] == ["to"] and (len(before) < 2 or before[0] in _TO_A_PLACE)  # "take me to Zorbin"
        if before and before[-1] in _NAMED_AFTER and not a_place and word not in names and \
                word not in _KNOWN_OPENERS and word not in COMMAND_VERBS:
            return True
    return False


def refused_without_model(scene, utterance: str) -> bool:
    """A question, or a part asking for what the language cannot do or about someone else than the speaker:
    ``clarify(unsupported)`` without the model."""
    names = scene_names(scene)
    return is_question(utterance) or any(asks_outside(part, names) or names_someone_else(part, names)
                                         for part in split_clauses(utterance, names))


def scene_names(scene) -> frozenset:
    """The words of the scene's object labels and the map's place names."""
    return frozenset(word for thing in scene.objects for word in thing.label.split("_")) | \
        frozenset(word for place in scene.places for word in place.name.split("_"))


def split_clauses(utterance: str, names=frozenset()) -> list:
    """The utterance's parts between clause connectors (parts without a word dropped); one part if none.
    ``names``: the words that name things in view and places on the map (``scene_names``), never taken for
    verbs."""
    parts = [piece for part in _CONNECTOR.split(utterance) for piece in _split_at_and(part, names)]
    parts = [part.strip(" ,.;!?") for part in parts]
    return [part for part in parts if _WORD.search(part)] or [utterance]


def _delivery(plan: str) -> str:
    """The object a plan ends by handing to the speaker ("" when it does not)."""
    last = plan.split("; ")[-1]
    return last[len("handover(obj:"):-len(", person:user)")] if last.startswith("handover(obj:") and \
        last.endswith(", person:user)") else ""


def repeats_delivery(before: str, plan: str) -> bool:
    """Whether ``plan`` only brings the speaker again what ``before`` just handed them: "fetch the cup and bring it
    to me" is one delivery, said twice."""
    delivered = _delivery(before)
    return bool(delivered) and plan == (f"navigate(obj:{delivered}); pick(obj:{delivered}); navigate(person:user); "
                                        f"handover(obj:{delivered}, person:user)")


def join_plans(plans: list) -> str:
    """The contract's composition: the first refusal (in clause order) is the plan, else the steps in order
    (a part that only repeats the delivery just made adds nothing); a part after a follow makes the plan a
    refusal (a follow runs until it is stopped)."""
    kept = []
    for index, plan in enumerate(plans):
        if plan.startswith("clarify("):
            return plan
        if index < len(plans) - 1 and plan.split("; ")[-1].startswith("follow("):
            return "clarify(unsupported)"
        if not (kept and repeats_delivery(kept[-1], plan)):
            kept.append(plan)
    return "; ".join(kept)


def scene_after(scene, plan_text: str):
    """The scene as the next part sees it: holding what the plan's last pick left in hand (none after a place
    or a handover). An unparseable plan changes nothing."""
    try:
        steps = parse_plan(plan_text)
    except PlanSyntaxError:
        return scene
    holding = scene.holding
    for step in steps:
        if isinstance(step, Pick):
            holding = step.obj.name
        elif isinstance(step, (PlaceOn, Handover)) and step.obj.name == holding:
            holding = ""
    return scene if holding == scene.holding else replace(scene, holding=holding)


def acted_on(plan_text: str) -> str:
    """The id of the object a plan acts on ("" when none): what "it" means in the part after it. The object of
    the first pick, place or handover ("put the mask on the machine. then lift it": the mask, though the plan
    first drives to the machine); else the first object it goes to ("go to the cup, then pick it up")."""
    try:
        steps = parse_plan(plan_text)
    except PlanSyntaxError:
        return ""
    for step in steps:
        if isinstance(step, (Pick, PlaceOn, Handover)):
            return step.obj.name
    for step in steps:
        for value in vars(step).values():
            if isinstance(value, Ref) and value.kind == "obj":
                return value.name
    return ""
