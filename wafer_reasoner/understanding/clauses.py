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

from wafer_reasoner.planner.language import Handover, Pick, PlaceOn, PlanSyntaxError, Ref, parse_plan
from wafer_reasoner.understanding.lexicon import (
    COMMAND_VERBS,
    FRAMING_VERBS,
    OTHER_VERBS,
    POLITENESS,
)

_CONNECTOR = re.compile(r"[,.;!?]?\s*\b(?:and\s+)?(?:then|than|after\s+that|afterwards|finally)\b[,.]?", re.IGNORECASE)
_AND = re.compile(r"\s*(?:,\s*and\b|\band\b|[,;])\s*", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]")
_SENTENCE_END = re.compile(r"[.!?]\s")
WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")
# words that only open a command: "listen, ...", "if you don't mind, ...", "right, ..." (heard as "write"), "first go
# and ..."
LEAD_INS = POLITENESS | {"also", "then", "could", "can", "would", "will", "you", "i", "need", "want", "to", "if",
                          "don't", "do", "listen", "look", "right", "write", "me", "is", "possible", "first",
                          "now", "next"}
SERIAL = frozenset({"go", "come", "and"})  # "go and get the cup" is one command
_POINTERS = frozenset({"it", "them"})
_VERBS = (COMMAND_VERBS | OTHER_VERBS) - FRAMING_VERBS


def _starts_command(text: str) -> bool:
    """Whether text begins with a command verb, after lead-ins such as "please" or "could you"."""
    for word in WORDS.findall(text.lower())[:5]:
        if word in _VERBS:
            return True
        if word not in LEAD_INS:
            return False
    return False


def _says_a_verb(text: str, names) -> bool:
    """Whether the last sentence of ``text`` holds a verb of its own, besides lead-ins, "go and" and words that
    name something in view ("the paint can", "the water bottle" hold no verb)."""
    sentence = _SENTENCE_END.split(text)[-1]  # "i just got home. if you don't mind, ..."
    said = set(WORDS.findall(sentence.lower())) - LEAD_INS
    return bool(_VERBS.intersection(said - names)) and not said <= SERIAL


def _topic(chunk: str, following: str, names) -> bool:
    """A chunk that only names what the command after it points at: "the red cup" in "..., the red cup, bring it
    to me"."""
    return not _says_a_verb(chunk, names) and _starts_command(following) and \
        bool(_POINTERS.intersection(WORDS.findall(following.lower())))


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


_LAST_NAMES: list = [None, None, frozenset()]  # (objects, places, their words) of the last scene asked about


def scene_names(scene) -> frozenset:
    """The words of the scene's object labels and the map's place names. A query asks for them once per part;
    the parts share the scene's objects and places (only what it holds changes), so the last answer is kept
    for the same tuples."""
    objects, places, names = _LAST_NAMES
    if scene.objects is objects and scene.places is places:
        return names
    names = frozenset(word for thing in scene.objects for word in thing.label.split("_")) | \
        frozenset(word for place in scene.places for word in place.name.split("_"))
    _LAST_NAMES[:] = [scene.objects, scene.places, names]
    return names


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


def antecedent_for(part: str, scene, antecedents: list) -> str:
    """What "it" in ``part`` stands for, given the objects earlier parts acted on (oldest first): the latest one
    the part does not name itself. A pronoun never means a thing its own clause names: in "pick up the bottle, go
    to the sink, then put it in the sink", "it" is the bottle."""
    said = set(WORDS.findall(part.lower()))
    for object_id in reversed(antecedents):
        thing = scene.object(object_id)
        if thing is None or not set(thing.label.split("_")) <= said:
            return object_id
    return antecedents[-1] if antecedents else ""


def picks_several(plan_text: str) -> bool:
    """Whether a plan picks up more than one object ("bring me the cup and the plate"): "them" in the part after
    it stands for several things, which the language cannot act on (docs/action_language.md 2.6)."""
    try:
        steps = parse_plan(plan_text)
    except PlanSyntaxError:
        return False
    return len({step.obj.name for step in steps if isinstance(step, Pick)}) > 1
