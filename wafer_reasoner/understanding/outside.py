"""What the language cannot do, known without the model: questions, verbs it does not have, other people.

A query refused here is ``clarify(unsupported)`` before the planner is asked (docs/action_language.md section
2.5), so no model, however it was trained, can act on it:

- a question ("where is my phone", "what's your name"; not "what a morning" nor "(it) is for the flowers");
- a part whose verb, after lead-ins, is one the language never does (``UNSUPPORTED_VERBS``: "wash the cup") or a
  word no table knows in a verb's place ("polish the lamp", "sprint to the door") that names nothing in view or
  on the map and is no recogniser's slip of a command verb;
- a part about someone other than the speaker ("give the cup to the guest", "follow him", "take it to Priya");
- a wait with no duration ("wait a bit", "hold on a while", "pause for a moment"): no number is invented;
- a manner of motion it cannot honour ("go slowly", "carefully bring me the mug", "drive backwards").

The model-independent safety envelope after the planner (runtime/envelope.py) is a separate check: it asks
whether the words license a plan's motion, not what the request is.
"""

from __future__ import annotations

import re

from wafer_reasoner.understanding.clauses import LEAD_INS, SERIAL, WORDS, scene_names, split_clauses
from wafer_reasoner.understanding.lexicon import (
    COLOR_WORDS,
    COME_VERBS,
    COMMAND_VERBS,
    DESTINATION_WORDS,
    DETERMINERS,
    DEVICE_VERBS,
    GO_VERBS,
    MAKE_WAY,
    MANNERS_REFUSED,
    NEEDS_DESTINATION,
    NEGATIONS,
    NEVER_A_LABEL,
    NO_DIRECT_OBJECT_VERBS,
    OTHER_PEOPLE,
    OTHER_VERBS,
    POLITENESS,
    PRONOUNS,
    QUESTION_WORDS,
    REPEATS,
    REQUEST_WORDS,
    TITLES,
    TURN_FRACTIONS,
    TURN_VERBS,
    UNSUPPORTED_VERBS,
    VAGUE_AMOUNTS,
)
from wafer_reasoner.understanding.words import FILLERS, NUMBER_WORDS, speech_words

_QUESTION_OPENERS = QUESTION_WORDS | {"is", "are", "was", "were", "does", "did", "has", "have", "isn't", "aren't",
                                      "doesn't", "what's", "where's", "who's", "how's", "when's", "why's"}


_VERB_WORDS = COMMAND_VERBS | OTHER_VERBS | {"do", "does", "did", "can", "could", "will", "would", "should"}
_SUBJECT_PRONOUNS = frozenset({"i", "we", "you", "he", "she", "they", "it"})
_STATEMENT_AFTER_VERB = frozenset({"for", "to", "in", "on", "at", "from", "with", "because", "so", "very", "too",
                                   "not", "just", "really", "already", "still"})


_FIRST_SENTENCE = re.compile(r"[^.!?]*[.!?]?")


def _exclaims(part: str, index: int) -> bool:
    """Whether the question word at word ``index`` opens an exclamation: its sentence ends with "." or "!" and
    says no verb after it ("Ugh, what weather.", "how lovely!")."""
    sentence = _FIRST_SENTENCE.match(part).group(0).rstrip()
    after = WORDS.findall(sentence.lower())[index + 1:]
    return sentence.endswith((".", "!")) and bool(after) and not any(
        word in _QUESTION_OPENERS or word in _VERB_WORDS or "'" in word for word in after)


# a question asked as a statement ("I'd like to know if the printer has paper", "tell me whether it's on", "I
# wonder where it went"); "I wonder if you could ..." is a request, taken off before (understanding/context.py)
_INDIRECT_QUESTION = re.compile(
    r"\b(?:i'd like|i would like|i want|i need|i'd love|i wanna|i'm trying|i am trying) to (?:know|find out|check)\b|"
    r"\b(?:tell me|let me know|find out|check|see) (?:if|whether|what|where|when|how|who|which)\b|"
    r"\bi (?:wonder|was wondering|am wondering|'m wondering) (?:if|whether|what|where|when|how|who|which)\b",
    re.IGNORECASE)
# what a request may end with that only asks whether it is all right: "..., is that OK?"
_TAG_WORDS = frozenset({"is", "that", "it", "ok", "okay", "alright", "all", "right", "fine", "cool", "please",
                        "possible", "good", "would", "could", "can", "will", "you", "won't", "wouldn't", "yeah"})


def asks_a_question(utterance: str) -> bool:
    """Whether an utterance asks a question anywhere: at its start (``is_question``), as a statement ("I'd like
    to know if ..."), or as its last clause before a "?" ("bring me the charger, and is the battery full?"), not
    a tag that only asks whether the request is all right ("..., is that OK?")."""
    if is_question(utterance) or _INDIRECT_QUESTION.search(utterance):
        return True
    if not utterance.rstrip().endswith("?"):
        return False
    last = re.split(r",|\band\b", utterance)[-1]
    return is_question(last) and not set(WORDS.findall(last.lower())) <= _TAG_WORDS


def is_question(part: str) -> bool:
    """Whether a part asks rather than commands: it opens (after lead-ins such as "okay" or "first") with a
    question word or an auxiliary ("is the cup clean", "where is my phone", "have you seen the keys").
    "could you / can you / would you ..." and "is possible to ..." are requests, not questions, and "what
    weather." an exclamation. Questions are outside the language."""
    words = WORDS.findall(part.lower())
    for index, word in enumerate(words[:5]):
        if word in ("what", "how") and _exclaims(part, index):
            return False
        if word in QUESTION_WORDS and words[index + 1:index + 2] and words[index + 1] in _SUBJECT_PRONOUNS and \
                not part.rstrip().endswith("?"):
            return False  # "when I was a girl, ...", "what I need is the cup": a clause that tells, no question
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
_KNOWN_OPENERS = NEVER_A_LABEL | COLOR_WORDS | frozenset(NUMBER_WORDS) | FILLERS | LEAD_INS | {
    "straight", "directly", "ahead", "forward", "forwards", "backward", "sideways"}  # "go straight to the kitchen"
# what follows a verb: its object or where it goes ("polish the lamp", "juggle it", "tiptoe into the nursery")
_OBJECT_STARTS = DETERMINERS | PRONOUNS | COLOR_WORDS | {"to", "into", "onto", "across", "through", "toward",
                                                          "towards"}
# what follows a verb used on a thing: "hammer the nail in", "drill a hole", "turn it off" (not "turn all the way
# around")
_DIRECT_OBJECT = (DETERMINERS - {"some", "any", "each", "every", "all", "both"}) | {"it", "them"}
_SENDS_SOMEWHERE = frozenset({"to", "into", "onto"})
# where a put sends its object: "there" points back at one said before ("the sponge goes on the shelf, put it
# there"); "move the box over here" is no row of 2.1
_DESTINATIONS = (DESTINATION_WORDS - {"over"}) | {"there"}
_NOT_WHERE = frozenset({"for", "please", "now", "again", "then", "and", "up", "down", "off", "too", "love", "dear"})


def _says_a_destination(words: list) -> bool:
    """Whether words say where a put sends its object: a destination word before what it names ("on the shelf",
    "in bay 3", "there"), not one that ends the phrase ("put the kettle on for me": a device)."""
    return any(word in _DESTINATIONS and (word == "there" or (index + 1 < len(words) and
                                                               words[index + 1] not in _NOT_WHERE))
               for index, word in enumerate(words))


def _one_letter_off(word: str, verb: str) -> bool:
    """A letter dropped, added or two swapped ("fech", "bringg", "tunr"). A letter changed is not a slip: it
    makes another word too often ("stack" for "stick", "pack" for "pick")."""
    if abs(len(word) - len(verb)) == 1:
        short, long_ = sorted((word, verb), key=len)
        return any(long_[:k] + long_[k + 1:] == short for k in range(len(long_)))
    return len(word) == len(verb) and any(
        word[:k] + word[k + 1] + word[k] + word[k + 2:] == verb for k in range(len(word) - 1))


def _misheard_command(word: str) -> bool:
    """A one-letter slip of a command verb of four letters or more, as a recogniser makes them ("fech", "bringg",
    "tunr"; not "sprint", not "stack")."""
    return any(len(verb) >= 4 and _one_letter_off(word, verb) for verb in COMMAND_VERBS)


def _unknown_verb(word: str, following: str, names, place_words=frozenset()) -> bool:
    """A word no table knows (nor a contraction: "here's the thing"), no command verb sounds like, followed by
    what follows a verb ("polish the lamp", "juggle it", "sprint to the door"): a verb the language does not have.
    A word that names something in view is no verb ("iron, bring it to me"), unless a determiner
    follows it at once, as only a verb's object does ("hammer the nail in", "drill a hole"); a word of a place's
    name never is ("scullery, the cup")."""
    names_a_thing = word in names and (following not in _DIRECT_OBJECT or word in place_words)
    return following in _OBJECT_STARTS and word not in _KNOWN_OPENERS and not names_a_thing and \
        "'" not in word and not word.isdigit() and not _misheard_command(word)


def _verb_outside(word: str, following: list, label_words) -> bool:
    """A verb the language never does ("wash"; "make" but for "make your way"), or one it has only without a
    direct object that has one ("turn the fan down", "switch on the lamp", "drive the forklift")."""
    if word in label_words and not (following[:1] and following[0] in _DIRECT_OBJECT):
        return False  # "the iron, bring it to me"; but "water the plants", "wrap the pallet" with water, wrap in view
    if word in UNSUPPORTED_VERBS:
        return not (word == "make" and following[:1] and following[0] in MAKE_WAY)
    if word in NEEDS_DESTINATION and following:  # "move the chair", "leave the mug": a put with no destination (2.5)
        if following[0] in ("on", "off") and following[1:2] and following[1] in _DIRECT_OBJECT:
            # "put on the kettle", "put on your coat": a device or clothes; "drop off the box at the dock" is a put
            return not _says_a_destination(following[2:])
        return following[0] in _DIRECT_OBJECT and not _says_a_destination(following[1:])
    if word in NO_DIRECT_OBJECT_VERBS and following:
        if word in DEVICE_VERBS:  # "turn the fan down", "switch on the lamp", "turn it off"
            return following[0] in _DIRECT_OBJECT or (following[0] in ("on", "off", "up", "down") and
                                                       following[1:2] != [] and following[1] in _DIRECT_OBJECT)
        # moving something else somewhere: "drive the forklift to bay 3" ("drive the toy" is "drive to the toy"
        # with a word lost)
        return following[0] in _DIRECT_OBJECT and bool(_SENDS_SOMEWHERE.intersection(following[1:]))
    return False


def opens_with_unknown_verb(text: str, names=frozenset()) -> bool:
    """Whether ``text`` opens with a verb the language does not have ("wrap the gift box for me")."""
    words = WORDS.findall(text.lower())
    return bool(words) and _unknown_verb(words[0], "".join(words[1:2]), names)


_JOINT = re.compile(r"(\band\b|,)")


def asks_outside(part: str, label_words=frozenset(), place_words=frozenset()) -> bool:
    """Whether a part's command verb, after lead-ins ("could you", "go and"), is one the language cannot do:
    one it names as such ("wash the cup", "go and vacuum the rug") or a word no table knows in a verb's place
    ("polish the lamp"); after "and", where clauses.split_clauses joins what it does not know for a verb ("take
    the crate to bay 2 and log it"), a verb it never does or a word no table knows. A word that names something in
    the scene or the map is no verb here ("iron, bring it to me" with an iron in view)."""
    pieces = _JOINT.split(part)  # chunk, joint, chunk, ...
    return _opens_outside(part, label_words, place_words) or any(
        _opens_outside(chunk, label_words, place_words, joint) for joint, chunk in zip(pieces[1::2], pieces[2::2]))


def _opens_outside(part: str, label_words=frozenset(), place_words=frozenset(), joint: str = "") -> bool:
    """Whether text opens, after lead-ins, with a verb the language cannot do (``asks_outside``). After "and"
    or a comma only a verb it never does counts, and a word no table knows after "and": "put the fork and the
    spoon in the sink" and "move the mop and the pail to the shed" say their destination once, at the end, and a
    recogniser's noise after a comma is no verb ("transfer beakr, beakr to corridor")."""
    words = WORDS.findall(part.lower())
    for index, word in enumerate(words[:6]):
        if word in UNSUPPORTED_VERBS or (not joint and (word in NO_DIRECT_OBJECT_VERBS or word in NEEDS_DESTINATION)):
            return _verb_outside(word, words[index + 1:], label_words)
        if joint != "," and _unknown_verb(word, "".join(words[index + 1:index + 2]), label_words, place_words):
            return True
        if word not in LEAD_INS and word not in SERIAL:
            return False
    return False


# what may follow a wait verb in a wait that says no time: "wait a bit", "hold on a while", "pause for a moment"
_NO_TIME = NEVER_A_LABEL | frozenset({"bit", "while", "moment", "little", "tick", "jiffy", "second", "sec", "here",
                                       "there", "just", "still", "now", "on", "several", "few", "couple", "some",
                                       "many", "put"})


def _without_lead_ins(part: str) -> list:
    """The part's speech words without lead-ins and politeness ("could you please hold on" -> hold, on)."""
    return [word for word in speech_words(part) if word not in LEAD_INS and word not in POLITENESS]


def waits_without_duration(part: str) -> bool:
    """Whether a part, after lead-ins, is a wait ("wait", "pause", "hold on") that says no time: the language
    plans a wait only for a duration said (section 2.1), and "a bit" names no object either. "a second" is a
    duration: the words say it as 1 second. A wait followed by anything else ("wait, bring me the cup") is
    not this."""
    words = _without_lead_ins(part)
    if words[:2] == ["hold", "on"]:
        rest = words[2:]
    elif words[:1] in (["wait"], ["pause"]):
        rest = words[1:]
    elif words[:2] in (["stay", "there"], ["stay", "here"], ["stay", "put"], ["stay", "still"]):
        rest = words[2:]  # "stay there a while"; "stay with me" is a follow
    else:
        return False
    if any(word in ("until", "till") for word in rest):  # "wait here until the truck arrives": no time said
        return not any(word.isdigit() for word in rest)
    return all(word in _NO_TIME for word in rest)  # a duration says a digit ("1 seconds"), never in _NO_TIME


_NAMED_AFTER = frozenset({"to", "follow", "give", "hand", "for", "help", "with", "tell", "call", "find", "fetch"})
_TO_A_PLACE = GO_VERBS | COME_VERBS | {"me", "us", "way", "over", "back", "up", "down", "it", "them"}
_HANDING = frozenset({"give", "hand", "pass"})  # "give it to Sam": these verbs send a thing to a person, not a place
_CAPITALISED = re.compile(r"(?<=[a-z,] )([A-Z][a-z]+)\b")  # a capital inside a sentence: a name


def _a_person(word: str, following: list, names) -> bool:
    """A word for someone else standing for a person: a title ("Dr. Okafor"), or a person word that ends a
    phrase ("to the guest", "follow him", "my dad in the garage"), not one in front of a noun ("the guest
    room", "the kids room": a place that happens to be named after people) or a name in view."""
    if word in TITLES:
        return True
    return word in OTHER_PEOPLE and word not in names and (not following or following[0] in NEVER_A_LABEL)


_TO_THEM = re.compile(r"\b(?:to|for)\s+them\b\s*(?:[.,!?]|please|now|$)", re.IGNORECASE)  # "give this cup to them"


def names_someone_else(part: str, names=frozenset()) -> bool:
    """Whether a part is about a person other than the speaker: a word for one ("the guest", "him", "my dad")
    or a capitalised name after "to", "follow", "give" ... ("take the folder to Priya"), neither naming
    anything in view or on the map. Only the speaker is addressable by speech."""
    words = WORDS.findall(part.lower())
    if any(_a_person(word, words[index + 1:index + 2], names) for index, word in enumerate(words)) or \
            _TO_THEM.search(part):
        return True
    for match in _CAPITALISED.finditer(part):
        word = match.group(1).lower()
        before = WORDS.findall(part[:match.start()].lower())[-2:]
        a_place = before[-1:] == ["to"] and (len(before) < 2 or before[0] in _TO_A_PLACE) and \
            not _HANDING.intersection(words)  # "take me to Zorbin", "take it to Zorbin"; not "give it to Sam"
        if before and before[-1] in _NAMED_AFTER and not a_place and word not in names and \
                word not in _KNOWN_OPENERS and word not in COMMAND_VERBS:
            return True
    return False


# what the language does not have (docs/action_language.md 2.6): a self-correction of the thing meant ("bring me the
# cup, no wait, the red one"), an apposition ("the sandwich, the one on the side table") and a relative clause ("the
# book that is on the shelf")
_SELF_CORRECTION = re.compile(r"[a-z0-9](?:,\s*(?:no,?\s+wait|wait,?\s+no|no|i mean|or rather|sorry|actually)|"
                              r"\s+(?:no wait|i mean|or rather|sorry))\b[\s,]+(?:the|a|an|that|this|my)\s",
                              re.IGNORECASE)  # "grab the mug sorry the bowl": a recogniser writes no comma
_APPOSITION = re.compile(r"[a-z],\s*(?:the|that)\s+(?:[a-z]+\s+)?one\b", re.IGNORECASE)  # ", the big one"
# a noun, then "that / which / who" and a verb or a subject: "the mug that has coffee in it", "the pillow that's on
# the bed", "the cardigan that my daughter knitted", "the toy that squeaks"
_RELATIVE = re.compile(r"\b([a-z]+)\s+(?:that|which|who)(?:'s|\s+(?:is|are|was|were|has|have|had|i|you|we|he|she|"
                       r"they|my|your|our|his|her|their|came|went|got|fell|sat|broke|stood|[a-z]+s|[a-z]+ed))\b",
                       re.IGNORECASE)
_NOT_A_COLOUR_HERE = frozenset({"dark", "light"})  # "the desk light", "the lamp light": part of a name


def _colour_after_label(words: list, label_words) -> bool:
    """A colour said after a label at the end of the phrase ("pick up the mug blue"), not a name that ends with
    a colour word ("the desk light")."""
    return any(word in label_words and following in COLOR_WORDS and following not in _NOT_A_COLOUR_HERE and
               following not in label_words and (not rest or rest[0] in NEVER_A_LABEL)
               for word, following, rest in ((words[k], words[k + 1], words[k + 2:]) for k in range(len(words) - 1)))


def says_what_language_lacks(part: str, label_words=frozenset()) -> bool:
    """Whether a part refers to its object in a way the language does not have: a self-correction, an
    apposition, a relative clause after a noun or a colour after the label."""
    relative = any(match.group(1).lower() not in NEVER_A_LABEL for match in _RELATIVE.finditer(part))
    return bool(_SELF_CORRECTION.search(part) or _APPOSITION.search(part)) or relative or \
        _colour_after_label(WORDS.findall(part.lower()), label_words)


def negates_a_command(part: str) -> bool:
    """Whether a part, after politeness, forbids rather than asks ("please don't go to the kitchen", "never touch
    the kettle"): the language has no step for it."""
    words = [word for word in WORDS.findall(part.lower()) if word not in POLITENESS]
    return bool(words) and (words[0] in NEGATIONS or " ".join(words[:2]) in NEGATIONS)


_HOURS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight|lunchtime|dinnertime|bedtime"
# a time in the future the request is for ("bring me the mug at eight", "in ten minutes, go to the kitchen", "every
# morning"): the language has no step that waits for a clock; "wait ten minutes" says a duration, not a time
_SCHEDULED = re.compile(
    rf"\b(?:at (?:\d{{1,2}}(?::\d\d)?|{_HOURS})(?: o'clock| ?am| ?pm| thirty| sharp)?(?=\W|$)|tomorrow|tonight|"
    r"later (?:today|on)|this (?:afternoon|evening)|every (?:day|morning|evening|night|hour|week)|"
    r"in (?:a|an|\d+|half an|a couple of|[a-z]+ty|ten|five|two|three|four|fifteen|twenty) (?:minutes?|hours?)(?=\W|$))",
    re.IGNORECASE)
# a condition on an event ("bring me the pen if the doorbell rings", "when the kettle boils", "after lunch"): no
# step waits for an event (2.11.4). Hedges ("if you can", "when you have a moment") are taken off before this
_CONDITIONAL = re.compile(
    r"\b(?:if|when|whenever|once|as soon as|unless)\s+(?:the|a|an|my|your|his|her|their|it|it's|someone|somebody|"
    r"anyone|i|i'm|we|he|she|they|there|you\s+(?!(?:(?:um|uh|er|erm|hmm)\W+)*(?:could|would|can|will|don't|do\b|have|"
    r"get a|find (?:a|the)|want|like|wish|please|mind)))\b|"
    r"\b(?:after|before)\s+(?:lunch|dinner|breakfast|supper|tea|work|school|class|the meeting|my nap|my shift)\b",
    re.IGNORECASE)
# a request word before what no robot can bring ("I need a break", "I could use a hand"; 2.7.6)
_NO_THING = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|just\s+)?(?:need|want|could use|would like|'d like|'d love)\s+(?:a |an |some )?"
    r"(?:break|rest|hand|help|hug|holiday|vacation|nap|sleep|breather|word|favou?r|chat|day off|fresh air|"
    r"moment|minute)\b\s*[.!]*\s*$|\b(?:give|lend)\s+(?:me|us)\s+a\s+hand\b", re.IGNORECASE)
# idioms that ask for a device ("get the door": open it; "get the lights": switch them)
_DEVICE_IDIOMS = re.compile(r"\bget\s+the\s+(?:door|lights?)\b", re.IGNORECASE)


def asks_for_later(part: str) -> bool:
    """Whether a part is for a time or an event to come ("bring me the mug at eight", "when the kettle boils"),
    not a wait said as a duration."""
    return bool(_SCHEDULED.search(part) or _CONDITIONAL.search(part)) and not waits_for_a_duration(part)


def waits_for_a_duration(part: str) -> bool:
    """Whether a part opens, after lead-ins, with a wait verb ("wait in the hall for ten minutes")."""
    words = _without_lead_ins(part)
    return words[:1] in (["wait"], ["pause"], ["stay"]) or words[:2] == ["hold", "on"]


_DIRECTIONS = frozenset({"left", "right", "forward", "forwards", "backward", "backwards", "back", "straight", "ahead",
                         "away", "sideways"})
_GOES = GO_VERBS - {"return", "approach", "navigate"}


def goes_a_direction(part: str) -> bool:
    """Whether a part asks to go a way rather than to a place ("go left", "move forward", "go back"): the language
    goes to places, objects and the speaker; "go back to the kitchen" names one, "turn left" is a turn."""
    words = speech_words(part)
    for index, word in enumerate(words[:-1]):
        if word in _GOES and words[index + 1] in _DIRECTIONS:
            rest = [w for w in words[index + 2:] if w not in _DIRECTIONS]
            return not rest or rest[0] not in ("to", "into", "over", "two", "too", "towards", "toward")
    return False


def says_a_manner(part: str, names=frozenset()) -> bool:
    """Whether a part asks for a manner of motion the robot cannot honour ("nice and slow navigate to the server
    room", "carefully can I have the mug", "go upstairs"), said as no name of a thing in view ("the slow cooker")."""
    return any(word in MANNERS_REFUSED and word not in names for word in WORDS.findall(part.lower()))


def turns_a_vague_amount(part: str) -> bool:
    """Whether a part asks to turn by an amount it does not say ("turn left a bit", "rotate a little to the
    right"): no number is invented, and "left" alone would mean a quarter turn, more than was asked (2.8); or to
    turn again and again ("turn around twice", "spin three times"), which the language has no step for (2.6)."""
    words = speech_words(part)
    if not TURN_VERBS.intersection(words):
        return False
    return bool(REPEATS.intersection(words)) or bool(TURN_FRACTIONS.intersection(words)) or (
        bool(VAGUE_AMOUNTS.intersection(words)) and not any(word.isdigit() for word in words))


def asks_nothing(utterance: str) -> bool:
    """Whether no word of the utterance makes a request ("the mug, please", "over here please"): the envelope
    would refuse any plan that moves (docs/action_language.md 4.1), so the planner refuses first."""
    return not REQUEST_WORDS.intersection(speech_words(utterance))


def refused_without_model(scene, utterance: str) -> bool:
    """A question, an utterance with no request word, or a part asking for what the language cannot do, about
    someone else than the speaker or for a wait without a duration: ``clarify(unsupported)`` without the model."""
    names = scene_names(scene)
    place_words = frozenset(word for place in scene.places for word in place.name.split("_"))
    return asks_a_question(utterance) or asks_nothing(utterance) or any(
        asks_outside(part, names, place_words) or names_someone_else(part, names) or waits_without_duration(part)
        or says_a_manner(part, names) or turns_a_vague_amount(part) or says_what_language_lacks(part, names)
        or negates_a_command(part) or asks_for_later(part)
        or bool(_DEVICE_IDIOMS.search(part) or _NO_THING.search(part))
        or goes_a_direction(part)
        for part in split_clauses(utterance, names))
