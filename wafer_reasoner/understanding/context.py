"""What a person says around a command: sentences and asides that ask nothing of the robot.

"Ugh, what a morning, my neck is so stiff. Anyway, hand me the tape measure, would you? Thanks." asks for one
thing; the rest never changes the plan (docs/action_language.md section 2.2). The planner reads only the
sentences that ask: ones that open, after hedges and discourse words ("anyway", "in the meantime", "could you
please"), with a verb, a request ("I need / I want / I'd like / can I have"), or a question (a question is a
request outside the language, so it stays and is refused). Inside a sentence that asks, an aside after a comma
that opens with a subject ("..., I think I left a cable there", "..., that's where it lives") is dropped too.
When no sentence asks, the utterance is left whole for the planner to refuse.
"""

from __future__ import annotations

import re

from wafer_reasoner.understanding.lexicon import (
    BASE_VERBS,
    BRING_VERBS,
    COMMAND_VERBS,
    FIND_VERBS,
    FRAMING_VERBS,
    INTERJECTIONS,
    MANNERS_REFUSED,
    OTHER_VERBS,
    PICK_VERBS,
    POLITENESS,
    PUT_VERBS,
    QUESTION_WORDS,
    UNSUPPORTED_VERBS,
    VERB_SLIPS,
)
from wafer_reasoner.understanding.outside import asks_for_later, is_question, opens_with_unknown_verb

_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_ELLIPSIS = re.compile(r"\.{2,}|…")
_TITLES = re.compile(r"\b(?:dr|mr|mrs|ms|st|prof|no|vs|etc)\.", re.IGNORECASE)
_WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")
_OPENERS = re.compile(
    r"^(?:(?:anyway|anyhow|meanwhile|in the meantime|for now|so|okay|ok|alright|right|oh|ah|well|also|and|then|than|"
    r"after that|afterwards|finally|next|now|scratch that|on second thought|change of plans?|"
    r"just|honestly|actually|basically|first|um|uh|er|erm|uhm|hmm|mm|hey|hi|hello|robot|please to|please|dear|"
    r"yes|yeah|no|nope|nah|sorry|look(?=\s*,)|listen(?=\s*,)|"
    r"could you|can you|would you|will you|would you mind|do you mind|if you can|if you don't mind|kindly|"
    r"is possible to|is it possible to|you can|you must|you will|i want that you|you)\b[\s,]*)+")
# words that only mark a turn of talk ("no, go to the office instead"): the sentence asks what it asks without
# them, so they are taken off a sentence that opens with a verb after them
_DISCOURSE = re.compile(r"^(?:(?:no|nope|nah|actually|anyway|anyhow|okay|ok|alright|oh|ah|well|so|um|uh|er|hmm|"
                        r"sorry|oops|wait no|change of plans?|scratch that|on second thought|in the meantime|"
                        r"meanwhile)\b[\s,;:.!-]*)+", re.IGNORECASE)
# why the person asks, after the request: "..., so I can sign it", "so that nobody trips on it" (never a step)
_PURPOSE = re.compile(r"[,]?\s+so(?: that)? (?:i|we|you|he|she|they|it|nobody|no one|everyone|everybody|somebody|"
                      r"someone|the \w+)\b(?: can| could| will| won't| doesn't| don't| isn't| is| are| has| have|"
                      r" trips| gets| falls)\b[^.?!]*", re.IGNORECASE)
# phrases that only soften or frame a request, wherever they stand ("when you have a moment, put the cup in the
# sink", "you know what, go to the office", "I'd like you to turn left"): they ask nothing, and "when ..." must not
# read as a question
_HEDGES = re.compile(
    r"\b(?:(?:when|whenever|if) you (?:(?:have|get|find)\s+)+(?:(?:a|the|some) )?"
    r"(?:moment|minute|second|sec|chance|time)|"
    r"whenever you can|when you(?:'re| are) (?:free|ready|done)|at your (?:earliest )?convenience|"
    r"you know what|(?:to make a )?long story short|(?:i|i'm|i am) ask(?:ing)? you to|"
    r"(?:i'd|i would) like (?:that )?you(?: to)?|(?:i|we) (?:want|need) you to|"
    r"(?:would you )?be so (?:kind|good) as to|do me a favou?r(?: and)?|make sure (?:that )?(?:you )?(?:to )?|"
    # terms of endearment before a request ("be a love and bring ...", "be a star and fetch ...")
    r"be (?:a |an )?(?:love|dear|darling|sweetheart|sweetie|star|doll|pet|gem|angel|good (?:boy|girl|lad|robot))"
    r"(?: and)?|"
    # how other languages frame a request ("is necessary you follow me", "I hoped you could fetch ...")
    r"(?:it )?is necessary (?:that )?you(?: to)?|"
    r"(?:i|we) (?:hope|hoped|was hoping|were hoping|am hoping|'m hoping) (?:that )?you(?:'d| could| would| can| will|"
    r" might)|"
    # indirect requests people make every day ("it would be lovely if you could fetch the mug", "would it be
    # possible to get the remote", "any chance you could grab the plate", "I'd be grateful if you could ...")
    r"(?:it'd|it would|that'd|that would|it'll|it will) be (?:great|lovely|nice|good|wonderful|brilliant|super|"
    r"awesome|amazing|helpful|perfect|fab|ace|handy|kind of you) if you(?:'d| could| would| can| will)?|"
    r"(?:would|will|could) it be (?:possible|ok|okay|alright|all right) (?:for you )?(?:to|if you(?: could| would)?)|"
    r"is it (?:possible|ok|okay|alright|all right) (?:for you )?(?:to|if you(?: could| would)?)|"
    r"(?:is there )?any chance (?:that )?(?:you (?:could|can|would|might)|of you)|"
    r"(?:i'd|i would|we'd|we would) (?:really )?(?:appreciate it|be (?:so |very |really )?(?:grateful|glad|happy|"
    r"thankful)) if you(?:'d| could| would| can)?|"
    r"(?:why don't you|how about you|what about you)|"
    # informal and regional ways to ask ("reckon you could grab the bottle", "go on then, bring me the lamp",
    # "do the needful and ...", "y'all ...")
    r"(?:do you |d'you |you )?reckon you (?:could|can)|go ahead and|(?:kindly )?do the needful and|y'all|youse|"
    r"(?:i|we) (?:wonder|wondered|was wondering|were wondering|am wondering|'m wondering) (?:if|whether) you "
    r"(?:could|would|can|might)|"
    # urgency asks for no manner the robot cannot honour: it acts at once anyway (2.8)
    r"right away|straight away|immediately|at once|asap|"
    # no hurry asked for is no manner either ("bring me the cup, no rush")
    r"(?:there's |there is )?no (?:rush|hurry)|take your time|in your own time|"
    # a negation that only reminds ("don't forget to bring the cup") asks for the verb after it
    r"(?:don't|dont|do not) forget to|"
    # a word that only softens, which the model never learnt inside a request ("would you kindly lift the basket")
    r"kindly)"
    r"\b[\s,]*",
    re.IGNORECASE)
# a verb said in the past after "if you" ("I'd appreciate it if you brought me the cup"): the verb
_PAST_FORMS = {"brought": "bring", "fetched": "fetch", "got": "get", "grabbed": "grab", "took": "take",
               "handed": "hand", "passed": "pass", "picked": "pick", "carried": "carry", "moved": "move",
               "went": "go", "came": "come", "followed": "follow", "turned": "turn", "waited": "wait", "put": "put",
               "placed": "place", "delivered": "deliver", "dropped": "drop", "headed": "head",
               "collected": "collect"}
_IF_YOU_DID = re.compile(r"\b(if you )(%s)\b" % "|".join(_PAST_FORMS), re.IGNORECASE)
# "come and get me the cup" asks for the cup as "go and get me the cup" does: the robot is not to come to the
# speaker first (section 2.2). Only before a verb that acts on a thing: "come here", "come with me", "come back"
# and "come and follow me" stay as they are.
_COME_AND = re.compile(r"\bcome\s+(?:and\s+)?(?=(?:%s)\b)" % "|".join(sorted(
    (BRING_VERBS | PICK_VERBS | PUT_VERBS | FIND_VERBS) - {"come", "follow", "hold", "move"})), re.IGNORECASE)
# fixed phrases said in the words the planner knows: "turn right around" is a half turn, not a right turn; "walk
# behind me" and "keep up with me" are "follow me"; "on top of" is "on" (docs/action_language.md section 2.1)
_IDIOMS = (
    (_COME_AND, ""),
    (_IF_YOU_DID, lambda m: m.group(1) + _PAST_FORMS[m.group(2).lower()]),
    # "could you maybe possibly bring ...": the hedges after "could you" only soften it
    (re.compile(r"\b((?:could|can|would|will) you)\s+(?:(?:maybe|perhaps|possibly|just)\s+)+", re.IGNORECASE),
     r"\1 "),
    (re.compile(r"\b(turn|spin|rotate|turning|spinning)\s+right\s+around\b", re.IGNORECASE), r"\1 around"),
    (re.compile(r"\b(?:walk|stay|keep|go|come)\s+(?:right\s+)?behind\s+(me|us)\b", re.IGNORECASE), r"follow \1"),
    (re.compile(r"\bkeep\s+up\s+with\s+(me|us)\b", re.IGNORECASE), r"follow \1"),
    (re.compile(r"\bon\s+(?:the\s+)?top\s+of\b", re.IGNORECASE), "on"),  # "set it on top of the sofa"
    (re.compile(r"\bgimme\b", re.IGNORECASE), "give me"),
    (re.compile(r"\btake\s+(me|us)\s+(?=to\b)", re.IGNORECASE), "go "),  # "take me to the lamp" is go (2.8.10)
    # "get the pillow to the cart" is a put (2.11.14), as "take the pillow to the cart"; "get me the cup" stays
    (re.compile(r"\bget\s+(?=(?:the|a|an|my|this|that)\s+(?:[a-z]+\s+){0,3}?(?:to|into|onto)\s+"
                r"(?:the|a|an|my|this|that)\b)", re.IGNORECASE), "take "),
    # informal speech said plainly: "could ye / ya / u", "gonna need", "wanna", "gotta"
    (re.compile(r"\b(could|can|would|will)\s+(?:ye|ya|u)\b", re.IGNORECASE), r"\1 you"),
    (re.compile(r"\b(?:i'm |i am |we're |we are )?gonna need\b", re.IGNORECASE), "I need"),
    (re.compile(r"\b(?:(?:do )?(?:you |ya |u )?wanna|(?:you've |you have |you )?(?:gotta|got to))\s+(?=[a-z])",
                re.IGNORECASE), ""),
    # a voice assistant's wake word before the request ("Hey Siri bring me the cup"): a vocative
    (re.compile(r"^(?:(?:hey|ok|okay|hi)\s+)?(?:alexa|siri|google|cortana|bixby|jarvis|computer)\b[\s,:]*",
                re.IGNORECASE), ""),
    # openers that only urge, at the start of a sentence ("go on then, bring me the lamp", "right then, ..."); never
    # inside one, where "turn right then go to the office" is two commands
    # and acknowledgements ("Roger that, turn left", "Got it. Bring me the cup.")
    (re.compile(r"(?:^|(?<=[.!?] ))(?:(?:go on|come on|right|okay|ok|alright|well) then\b[\s,]*|"
                r"(?:go on|come on|(?:roger|copy)(?: that)?|got it|gotcha|understood|noted|will do|sure thing|"
                r"of course|no problem)\s*[,.!]\s*)", re.IGNORECASE), ""),
    (re.compile(r"\bhave\s+a\s+look\s+(?=for|at|around)", re.IGNORECASE), "look "),  # "have a look for my specs"
    (re.compile(r"\bkeep\s+(?:an|a close)\s+eye\s+on\b|\bkeep\s+track\s+of\b", re.IGNORECASE),
     "watch"),  # a chore (2.9), not "keep"
    # the speaker may speak for several ("bring us the jug"): the one who receives is still the speaker
    (re.compile(r"\b(bring|give|hand|pass|get|fetch|grab|deliver)\s+us\b", re.IGNORECASE), r"\1 me"),
    # "go down stairs" is "go downstairs", a manner of motion (2.5); "down the stairs" stays
    (re.compile(r"\b(up|down)\s+stairs\b", re.IGNORECASE), r"\1stairs"),
    # "take the plate off the counter" takes it from there (2.4): "off" is where it is, as "from" (after "take",
    # "off" also reads as "take off", which the model took for a put)
    (re.compile(r"\b(tak(?:e|ing)\s+(?:the|a|an|my|your|this|that)\s+(?:[a-z]+\s+){0,3}?)off\s+"
                r"(?=(?:of\s+)?(?:the|a|an|my|your|this|that)\b)", re.IGNORECASE), r"\1from "),
    (re.compile(r"\bhang\s+on\b", re.IGNORECASE), "hold on"),  # a wait, as "hold on" (2.7)
    # "hold on a second" is "wait a second" (2.7.8); "hold on to the rail" stays
    (re.compile(r"\bhold\s+on\s+(?=(?:for\s+)?(?:a|an|one|\d+)\s+(?:sec|secs|second|seconds|min|mins|minute|minutes|"
                r"hour|hours)\b)", re.IGNORECASE), "wait "),
    # "put it down on the counter": the destination says where it goes down (2.1: "set the X down on the Y")
    (re.compile(r"\b((?:put|set|place|lay)\s+(?:it|them|this|that)\s+)down\s+(?=(?:on|onto|in|into|at|inside)\b)",
                re.IGNORECASE), r"\1"),
    (re.compile(r"\b(?:i am|i'm) needing\b", re.IGNORECASE), "I need"),  # a request (2.7)
)
# a request said as a statement with a tag ("you'll bring me the cup, won't you?", "you couldn't grab the mug, could
# you?"): the tag and the "you" before the verb only soften it
_TAGGED = re.compile(r"^(?:you(?:'ll| will| could| couldn't| can| can't| would| wouldn't)\s+)?(.*?),?\s*"
                     r"(?:won't|will|would|could|can|can't|couldn't|wouldn't) you\s*\??\s*$", re.IGNORECASE)
_MIND_DOING = re.compile(r"\b((?:would|do|will) you )?mind\s+([a-z]+ing)\b", re.IGNORECASE)


def _gerunds() -> dict:
    """A command verb's -ing form -> the verb ("getting" -> "get", "leaving" -> "leave", "waiting" -> "wait")."""
    forms = {}
    for verb in BASE_VERBS:
        for form in (verb + "ing", verb[:-1] + "ing" if verb.endswith("e") else "", verb + verb[-1] + "ing"):
            if form:
                forms.setdefault(form, verb)
    return forms


_GERUNDS = _gerunds()
_INSTEAD = re.compile(r"[\s,]+(?:instead|instead of that|rather)(?=[\s.!,]*$)", re.IGNORECASE)
_REQUESTS = re.compile(r"^(?:i need|i want|i'd like|i would like|i'd love|(?:can|could|may) i (?:have|get)|let's|"
                       r"i'm going to need|we need)\b")
# a request that asks after a comma ("..., um, can I have the water bottle"); "I need / I want" there may only
# tell a feeling ("..., what a week, I need a holiday")
_ASKING = re.compile(r"^(?:can|could|may) i (?:have|get)\b")
_SUBJECTS = frozenset({"i", "i'm", "i've", "i'll", "i'd", "it's", "that's", "there's", "we", "we're", "we've",
                       "they", "they're", "he", "she", "he's", "she's"})
_POINTERS = frozenset({"it", "that", "this", "them", "those", "these", "one"})

_CONDITIONS = frozenset({"if", "when", "whenever", "unless", "once", "before", "after", "while", "until", "till",
                         "as", "since", "because"})
_RELATIVES = frozenset({"which", "that", "who", "whom", "whose", "where"})
_COLON = re.compile(r":\s+")
_MANNER_FIRST = re.compile(r"^(?:(?:%s)\b[\s,]*)+" % "|".join(sorted(MANNERS_REFUSED)))
# verbs a comma chunk opens with when it asks ("..., so pick up the walker", "..., could you start the dishwasher"):
# the language's and any other verb, but not the ones that frame talk ("you know", "let's just say", "see, ...")
# nor modals, auxiliaries and past forms, which tell
_FRAMING = FRAMING_VERBS | {"see", "say", "mind", "do", "got", "gotten", "went", "came", "took", "brought", "gave",
                            "listen", "watch", "remember", "stop"}
_IMPERATIVES = COMMAND_VERBS | UNSUPPORTED_VERBS | (OTHER_VERBS - _FRAMING)
_TELLING = frozenset({"is", "are", "was", "were", "isn't", "aren't", "it's", "that's", "there's", "has", "have"})
# verbs that tell rather than ask, early in a comma chunk ("my ride is here", "mummy says ..."); how early
_TELLING_VERBS = _TELLING | {"been", "wasn't", "weren't", "had", "says", "said", "needs", "should", "will", "won't",
                             "can't", "does", "doesn't", "did", "didn't", "gets", "got", "looks", "seems", "feels",
                             "wants", "likes", "keeps", "told"}
_TELLING_REACH = 6
_BASE_COMMANDS = COMMAND_VERBS & BASE_VERBS
# verbs a request may open with ("weight": wait); never an auxiliary or a past form ("Got it, bring me the cup")
_VERBS = (COMMAND_VERBS | OTHER_VERBS | {"weight"}) - POLITENESS - {"is", "are", "was", "were", "be", "have", "has",
                                                                    "had", "do", "does", "did", "done", "been", "got",
                                                                    "gotten", "went", "came", "took", "brought",
                                                                    "gave"}


def _opening(text: str) -> str:
    """The text lower-cased, without the hedges and discourse words it opens with, and without a manner word
    before them ("carefully can I have the mug" asks; the manner stays in the sentence planned, which refuses it)."""
    opened = _OPENERS.sub("", text.lower().strip(" ,;:-")).strip(" ,")
    return _OPENERS.sub("", _MANNER_FIRST.sub("", opened)).strip(" ,")


def _opens_a_request(text: str, names=frozenset()) -> bool:
    """Whether ``text`` opens, after hedges and discourse words, with a verb (one the language has or not: "wrap
    the gift") or a request ("I need ...")."""
    rest = _opening(text)
    words = _WORDS.findall(rest)
    return bool(words) and (words[0] in _VERBS or bool(_REQUESTS.match(rest)) or opens_with_unknown_verb(rest, names))


def _opens_a_command(chunk: str) -> bool:
    """Whether a comma chunk opens, after hedges and discourse words, with a command verb ("so pick up the walker
    by the bed") or asks for a thing ("um, can I have the water bottle"); not with a word that also frames talk ("you
    know", "bless her", "let's just say")."""
    rest = _opening(chunk)
    words = _WORDS.findall(rest)
    return bool(words) and (words[0] in _IMPERATIVES or bool(_ASKING.match(rest)))


def asks(sentence: str, names=frozenset()) -> bool:
    """Whether a sentence asks something of the robot: a verb first, a request, a question, a thing named and
    then asked for ("the red cup, bring it to me"), or a request after what only sets the scene ("the driver is
    late, poor bloke, so take the parcel to dock 4")."""
    rest = _opening(sentence)
    return bool(_WORDS.findall(rest)) and (_opens_a_request(sentence, names) or is_question(sentence) or
                                            _topic_first(rest) or
                                            any(_opens_a_command(chunk) for chunk in sentence.split(",")[1:]))


def _names_what_follows(sentences: list, index: int, names=frozenset()) -> bool:
    """A sentence that only names a thing the next one points at: "The wrench. Bring it to me.", "The cup next
    to the sink. Bring it to me.". With ``names`` (the words naming things in view) it must name one and hold
    no verb ("The kids are asleep. Bring it to me." names nothing); without them it must be short."""
    words = _WORDS.findall(_opening(sentences[index]))
    following = _WORDS.findall(sentences[index + 1].lower()) if index + 1 < len(sentences) else []
    names_a_thing = bool(names.intersection(words)) and not _TELLING.intersection(words) if names else \
        len(words) <= 4
    return bool(words) and len(words) <= 10 and names_a_thing and words[0] not in _SUBJECTS and \
        words[0] not in _VERBS and not POLITENESS.issuperset(words) and bool(_POINTERS.intersection(following))


def _topic_first(sentence: str) -> bool:
    """A sentence that names a thing, then asks for it after a comma: "the orange tape, pick it up"."""
    chunks = sentence.split(",")
    return any(_WORDS.findall(chunk.lower())[:1] and _WORDS.findall(chunk.lower())[0] in _VERBS and
               _POINTERS.intersection(_WORDS.findall(chunk.lower())) for chunk in chunks[1:])


def _tells(words: list) -> bool:
    """Whether words (a comma chunk, after its openers) only tell: a subject first, a telling verb early ("my
    feet are so cold", "the physio says ...", "the drone frame needs gluing") or "'s" for "is" / "has" after the
    subject ("the other one's dead")."""
    return bool(words) and words[0] not in _VERBS and (
        words[0] in _SUBJECTS or bool(_TELLING_VERBS.intersection(words[:_TELLING_REACH])) or
        any(word.endswith("'s") for word in words[1:3]))  # "the other one's dead", "my dad's been ..."


_CORRECTS = re.compile(r"(?:i mean|or rather|no wait|sorry)\b", re.IGNORECASE)


def _aside(chunk: str, names=frozenset()) -> bool:
    """A comma chunk after the request that only tells: it opens with a subject and is no request ("I think I
    left a cable there"), or it tells and names nothing in view ("my ride is here", "the pizza guy is on his
    way"); never a relative clause ("which is on the table") nor one that names a thing ("the one by the sink")."""
    rest = _opening(chunk)
    words = _WORDS.findall(rest)
    if _REQUESTS.match(rest) and _POINTERS.intersection(words) and not names.intersection(words):
        return True  # "..., I want it now": the request again, about what it asked for (2.12)
    if not words or _REQUESTS.match(rest) or _CORRECTS.match(chunk.strip()):
        return False  # "..., I mean the office": a correction, which the planner must see (and refuse)
    if words[0] == "what" and words[1:2] in (["a"], ["an"]):
        return True  # an exclamation: "..., what a day"
    if is_question(chunk) and chunk.rstrip().endswith("?"):
        return False  # "..., and is the battery full?": a question, refused later
    return words[0] in _SUBJECTS or (_tells(words) and words[0] not in _RELATIVES and not names.intersection(words))


_NOT_A_TOPIC = QUESTION_WORDS | INTERJECTIONS  # "what a morning, ..." names nothing a later "it" points at


def _sets_the_scene(chunk: str, later: list, names=frozenset(), opened: bool = True) -> bool:
    """A comma chunk before the request that asks nothing of the robot: a vocative ("son, ...", "young robot,
    ..."), a remark ("busy night, ...", "no excuses, ..."), news ("mummy says my room is a disaster, so ...") or
    only openers ("and anyway, ...", "so, yeah, ..."). Kept: a condition ("if you see it, ..."), a place or thing
    said where it is ("in the kitchen, ..."), a thing named and then pointed at ("the hot water bottle, bring it to
    me") and any chunk with a command verb."""
    words = _WORDS.findall(_opening(chunk))
    if MANNERS_REFUSED.intersection(_WORDS.findall(chunk.lower())):
        return False  # "Hello, quickly, grab the toolbox": the manner asks something, refused later (2.11.2)
    if asks_for_later(chunk) and not _tells(words):
        return False  # "in ten minutes, go to the kitchen": when the request is for, refused later
    if not words:  # only openers: dropped after a remark ("..., and anyway, go ..."); "well, ..." stays
        return opened and bool(_WORDS.findall(chunk.lower()))
    if words[0] in _CONDITIONS or _BASE_COMMANDS.intersection(words):
        # a command verb may be one the opening hid ("you must quietly bring ...", "i er need ..."); an -ing form
        # tells ("my dad's been looking for it all day")
        return False
    # only a chunk that names a thing can be what a later "it" points at ("the hot water bottle, bring it to me",
    # "the new mallet, put it ..." also when no mallet is in view); one that tells names nothing it points at ("my
    # eyes aren't what they were, so would you grab the apple, put it on the desk": the apple)
    names_one = bool(names.intersection(words)) or not (_tells(words) or words[0] in _NOT_A_TOPIC)
    pointed_at = (not names or names_one) and any(_POINTERS.intersection(_WORDS.findall(c.lower())) for c in later)
    return not pointed_at and (_tells(words) or not names.intersection(words))


def _request_chunk(chunks: list, names=frozenset()) -> int:
    """The index of the comma chunk the request opens: the first, unless it asks nothing and a later one opens
    with a command verb."""
    if _opens_a_request(chunks[0], names):
        return 0
    return next((k for k, chunk in enumerate(chunks) if k and _opens_a_command(chunk)), 0)


# a comma chunk that only greets, thanks or addresses: never planned, wherever it stands
_COURTESY = re.compile(
    r"^\s*(?:(?:hello|hi|hey|good (?:morning|afternoon|evening)|thank you(?: very much| so much)?|thanks(?: a lot| so "
    r"much)?|cheers|ta|love|mate|dear|pet|darling|sweetie|sweetheart|honey|buddy|pal|sir|madam|ma'am|my friend|"
    r"my dear|robot|unit \w+|there's a good (?:lad|girl|boy|robot))\s*)+[.!?]*\s*$", re.IGNORECASE)


def _without_asides(sentence: str, names=frozenset()) -> str:
    """The sentence without what only sets the scene before its request and the asides after it."""
    chunks = sentence.split(",")
    first = _request_chunk(chunks, names)

    def kept(k: int, chunk: str) -> bool:
        if len(chunks) > 1 and _COURTESY.match(chunk):
            return False  # "Hello, ..., thank you", "..., love", "Unit alpha, ..."
        if k < first:
            return not _sets_the_scene(chunk, chunks[k + 1:], names, opened=k > 0)
        return k == first or not _aside(chunk, names)

    return ",".join(chunk for k, chunk in enumerate(chunks) if kept(k, chunk))


# a command taken back inside a sentence: "go to the kitchen, no, go to the office instead" (a bare "wait" may be
# the command itself: "go to the kitchen, wait, turn left" is not read so)
_TAKEN_BACK = re.compile(r",\s*(?:no wait|wait no|no|nope|sorry|actually|scratch that|i mean|or rather)\b[\s,]*",
                         re.IGNORECASE)


def _as_corrected(sentence: str) -> str:
    """The sentence from its last correction on, when a command verb follows the correction ("go to the
    kitchen, no, go to the office instead" -> "go to the office instead"); else the sentence."""
    for match in reversed(list(_TAKEN_BACK.finditer(sentence))):
        rest = sentence[match.end():]
        words = _WORDS.findall(_opening(rest))
        if words and words[0] in _VERBS:
            return rest
    return sentence


def _without_discourse(sentence: str) -> str:
    """"No, go to the office instead." -> "go to the office.": the turn-of-talk words (and a purpose clause
    after the request: "..., so I can sign it") off a sentence that then opens with a command verb; any other
    sentence as it is."""
    plain = _PURPOSE.sub("", _INSTEAD.sub("", _DISCOURSE.sub("", sentence.strip())))
    words = _WORDS.findall(_opening(plain))  # "on second thought, please return to the porch"
    return plain if plain != sentence.strip() and words and words[0] in _VERBS else sentence


_MOVE_THE = re.compile(r"\bmove\s+(?=(?:the|a|an|my|your|this|that|some)\s)", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,.;!?]|\b(?:then|and)\b", re.IGNORECASE)
_SENDS = frozenset({"to", "into", "onto", "two", "too"})
_LOCATES = frozenset({"on", "in", "at", "under", "beneath", "underneath", "near", "by", "beside", "behind", "next",
                      "from", "off", "inside"})


def _move_as_meant(text: str) -> str:
    """"move the X under the Y" picks up the X under the Y (2.8.12): after "move" only "to / into / onto" send the
    object somewhere (2.4), so a locator says which X; "move" is then "pick up". Without a locator or a
    destination ("move the chair") it stays and is refused (2.10.21)."""
    def meant(match) -> str:
        clause = _CLAUSE_END.split(text[match.end():], maxsplit=1)[0]
        words = set(_WORDS.findall(clause.lower()))
        return "pick up " if words & _LOCATES and not words & _SENDS else match.group(0)
    return _MOVE_THE.sub(meant, text)


def without_hedges(text: str) -> str:
    """``text`` without the phrases that only soften a request ("when you have a moment, ..."), and its fixed
    phrases said plainly ("turn right around" -> "turn around")."""
    for idiom, plain in _IDIOMS:
        text = idiom.sub(plain, text)
    tagged = _TAGGED.match(text)
    if tagged and _WORDS.findall(_opening(tagged.group(1)))[:1] and \
            _WORDS.findall(_opening(tagged.group(1)))[0] in _VERBS:
        text = tagged.group(1)
    # "would you mind getting me the cup" asks "would you get me the cup" (section 2.2: "would you (mind) ...")
    text = _MIND_DOING.sub(lambda m: f"{m.group(1) or ''}{_GERUNDS[m.group(2).lower()]}"
                           if m.group(2).lower() in _GERUNDS else m.group(0), text)
    return _move_as_meant(_HEDGES.sub("", text))


_SLIP = re.compile(r"\b(?:%s)\b" % "|".join(sorted(VERB_SLIPS)), re.IGNORECASE)


def _verbs_as_meant(text: str, names=frozenset()) -> str:
    """``text`` with a recogniser's one-letter slips of a command verb written as the verb ("fech me the
    flashlight" -> "fetch me the flashlight"), unless the slip names something in view or on the map."""
    return _SLIP.sub(lambda m: m.group(0) if m.group(0).lower() in names else VERB_SLIPS[m.group(0).lower()], text)


def _sentences(utterance: str, names=frozenset()) -> tuple:
    """(the utterance without hedges, its sentences, whether each asks something of the robot)."""
    plain = _verbs_as_meant(without_hedges(utterance.strip()).strip(" ,"), names)
    paused = _ELLIPSIS.sub(",", plain)  # "um... the desk": a pause, not a sentence's end
    paused = _TITLES.sub(lambda match: match.group(0)[:-1], paused)  # "Dr. Okafor": one sentence
    paused = _COLON.sub(". ", paused)  # "I was told to ask you: take the tote to goods in"
    sentences = [s for s in _SENTENCES.split(paused) if s.strip()]
    asking = [asks(s, names) or _names_what_follows(sentences, k, names) for k, s in enumerate(sentences)]
    return plain, sentences, asking


def what_is_asked(utterance: str, names=frozenset()) -> str:
    """The sentences of ``utterance`` that ask, without their hedges, asides and turn-of-talk words; the whole
    utterance when none asks. ``names``: the words that name things in view and places on the map."""
    plain, sentences, asks_flags = _sentences(utterance, names)
    # why the person asks goes first: "so nobody trips on it" points at nothing the request needs
    asking = [_without_discourse(_without_asides(_as_corrected(_PURPOSE.sub("", s)), names))
              for s, flag in zip(sentences, asks_flags) if flag]
    if not asking or asking == sentences:
        return utterance if plain == utterance.strip() or not plain else plain
    return " ".join(part.strip() for part in asking)
