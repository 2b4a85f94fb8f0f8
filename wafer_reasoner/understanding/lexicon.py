"""The words understanding knows by their role: verbs by the intent they can express, the little words around
them, colours, and the words that can never be the name of a thing (literal tables only).

docs/action_language.md section 2 lists the wordings the contract guarantees; these tables hold them and their
close variants. Nothing here decides a plan: the tables say which words are verbs (so a refusal never names
one), where a clause can start (so "and" can join two commands), and which phrase after an object is where it
goes rather than where it is.
"""

from __future__ import annotations

# verbs by what they can mean; a verb may be in several (take: pick up, or put with a destination)
BRING_VERBS = frozenset({"bring", "fetch", "give", "hand", "pass", "deliver", "get", "grab", "take", "carry",
                         "retrieve", "gimme", "bringing", "fetching", "getting", "handing", "passing"})
PICK_VERBS = frozenset({"pick", "take", "grab", "get", "lift", "collect", "grasp", "hold", "seize", "picking",
                        "taking", "grabbing", "lifting", "collecting"})
PUT_VERBS = frozenset({"put", "place", "set", "drop", "leave", "move", "carry", "take", "bring", "deliver",
                       "transfer", "stick", "lay", "placing", "putting", "setting", "dropping", "leaving", "moving",
                       "carrying", "taking", "bringing"})
GO_VERBS = frozenset({"go", "drive", "head", "move", "navigate", "walk", "roll", "travel", "proceed", "return",
                      "approach", "going", "driving", "heading", "moving", "walking", "goto"})
COME_VERBS = frozenset({"come", "coming"})
FIND_VERBS = frozenset({"find", "locate", "search", "look", "finding", "locating", "searching", "looking"})
TURN_VERBS = frozenset({"turn", "rotate", "spin", "pivot", "turning", "rotating", "spinning"})
WAIT_VERBS = frozenset({"wait", "pause", "hold", "stay", "waiting", "pausing", "holding", "staying"})
FOLLOW_VERBS = frozenset({"follow", "following", "accompany"})
COMMAND_VERBS = (BRING_VERBS | PICK_VERBS | PUT_VERBS | GO_VERBS | COME_VERBS | FIND_VERBS | TURN_VERBS | WAIT_VERBS
                 | FOLLOW_VERBS)
# a request: a verb of section 2.1 (with "weight", as a recogniser hears "wait"), or "I need / want / like / have",
# "make your way", "keep up with me", "hang on". Without one nothing is asked (the envelope, docs/action_language.md
# 4.1, and understanding/outside.py before the model)
REQUEST_WORDS = COMMAND_VERBS | {"need", "want", "like", "have", "way", "weight", "keep", "hang"}
# verbs of requests outside the action language (a refusal still never names them)
OTHER_VERBS = frozenset({
    "open", "close", "shut", "switch", "turn", "wash", "clean", "wipe", "cook", "make", "heat", "boil", "fill",
    "pour", "throw", "toss", "kick", "break", "eat", "drink", "paint", "fix", "repair", "cut", "hide", "smell",
    "check", "see", "tell", "say", "sing", "dance", "jump", "run", "call", "play", "read", "write", "charge",
    "plug", "unplug", "water", "feed", "iron", "fold", "vacuum", "sweep", "mop", "dust", "shake", "stir",
    "hug", "push", "pull", "press", "lock", "unlock", "show", "help", "count", "order", "buy", "sell", "do",
    "tidy", "empty", "load", "unload", "squeeze", "rinse", "dry", "bake", "fry", "microwave", "lift", "watch",
    "listen", "answer", "ring", "knock", "climb", "crawl", "fly", "swim", "hurry", "rush", "sit", "lie",
    "sleep", "wake", "remind", "remember", "set", "dim", "brighten", "start", "stop", "keep", "let", "try",
    "know", "think", "want", "need", "like", "love", "would", "could", "can", "will", "shall", "should",
    "may", "might", "must", "please", "thank", "thanks", "is", "are", "was", "were", "be", "been", "am",
    "has", "have", "had", "does", "did", "done", "got", "gotten", "went", "came", "took", "brought", "gave",
})
# words among the verb tables that frame talk rather than ask for an action: modals, auxiliaries, thanks and the
# verbs of wanting and thinking ("could you ...", "I need ...", "you know ..."); never where a command starts
FRAMING_VERBS = frozenset({"please", "thank", "thanks", "could", "can", "would", "will", "shall", "should", "may",
                           "might", "must", "is", "are", "was", "were", "be", "been", "am", "has", "have", "had",
                           "does", "did", "done", "need", "want", "like", "love", "know", "think", "let", "try",
                           "keep"})
# verbs that ask for something the action language cannot do whatever follows them (docs/action_language.md 2.5:
# cleaning, cooking, handling it cannot honour, calls, chores). Verbs that also open supported commands ("turn
# left", "set the cup on the table", "open" / "close" as in "close to") or sound like other words ("read": "red",
# "write": "right") are not here: the model decides those.
UNSUPPORTED_VERBS = frozenset({
    "wash", "clean", "wipe", "cook", "heat", "boil", "fill", "pour", "throw", "toss", "kick", "break", "eat",
    "drink", "paint", "fix", "repair", "cut", "hide", "smell", "sing", "dance", "jump", "call", "play", "charge",
    "plug", "unplug", "water", "feed", "iron", "fold", "vacuum", "sweep", "mop", "dust", "shake", "stir", "hug",
    "push", "pull", "press", "lock", "unlock", "count", "buy", "sell", "tidy", "load", "unload", "squeeze",
    "rinse", "bake", "fry", "microwave", "climb", "crawl", "swim", "sleep", "wake", "remind", "dim", "brighten",
    "shut", "help", "make", "sit",
    # handling, watching and chores (sixth session): "stack the boxes", "watch the kettle", "start the dishwasher"
    "watch", "monitor", "guard", "inspect", "measure", "sort", "arrange", "organise", "organize", "unpack", "wrap",
    "pack", "hang", "spray", "stack", "start", "empty", "check", "run",
    # work in shops, wards, labs and offices the robot cannot do ("sign for it", "scan the pallet", "log it")
    "sign", "scan", "weigh", "label", "log", "print", "email", "text", "restock", "sterilise", "sterilize",
    "dispense", "hoover", "fluff", "plump", "remember", "record", "photograph", "film",
})
# verbs that put a thing somewhere only with a destination (docs/action_language.md 2.5: "drop it", "put it down"
# and "put it here" have none; 2.10.21: "move the chair")
NEEDS_DESTINATION = frozenset({"put", "place", "set", "drop", "leave", "lay", "stick", "move"})
# a command said negated ("don't go to the kitchen", "never touch the kettle"): nothing in the language undoes or
# forbids an action, and acting on the words left would do what was forbidden
NEGATIONS = frozenset({"don't", "dont", "never", "do not", "not"})
# "make your way to the dock" is the one way "make" opens a command the language has (section 2.1: go)
MAKE_WAY = frozenset({"your", "my", "its", "their"})
# verbs the language has only without a direct object ("turn left", "drive to the dock", "walk over here"); with
# one they ask for something it cannot do (docs/action_language.md 2.5): a device ("turn the fan down", "switch on
# the lamp") or moving something other than itself somewhere ("drive the forklift to bay 3")
DEVICE_VERBS = frozenset({"turn", "switch", "rotate", "spin", "twist"})  # "rotate the dial to the left"
MOVING_VERBS = frozenset({"drive", "walk", "ride", "roll", "navigate", "steer", "wheel"})
NO_DIRECT_OBJECT_VERBS = DEVICE_VERBS | MOVING_VERBS
# sounds that only show a feeling ("ugh, get me the phone"): never a verb, a name or a request
INTERJECTIONS = frozenset({"oof", "ugh", "argh", "phew", "wow", "gosh", "geez", "jeez", "oops", "whoops", "whoa",
                           "ooh", "aw", "aww", "meh", "yikes", "damn", "dang", "darn", "blimey", "golly", "eek",
                           "ouch", "ow", "yay", "hooray", "alas", "huh", "ha", "haha", "ahem", "psst", "shh",
                           "welp", "hm", "mhm", "ahh", "uhh", "umm", "errr", "erm", "uhm"})
# around a command: vocatives, politeness, hedges, fillers
POLITENESS = INTERJECTIONS | frozenset({"please", "pls", "plz", "kindly", "thanks", "thank", "thx", "cheers", "robot",
                                        "hey", "hi",
                        "hello", "ok", "okay", "alright", "so", "um", "uh", "er", "hmm", "now", "just", "maybe",
                        "perhaps", "possibly", "mind", "buddy", "friend", "sir", "dear", "yes", "yeah", "well",
                        "oh", "sorry", "excuse", "again", "also", "too"})
MANNER_WORDS = frozenset({"quickly", "fast", "faster", "slowly", "slow", "slower", "carefully", "gently", "gentle",
                          "quietly", "loudly", "hurry", "hurriedly", "rapidly", "immediately", "backwards",
                          "backward", "sideways", "upstairs", "downstairs", "asap", "quick"})
# manner words a part is refused for without the model (docs/action_language.md 2.6: "quickly", "fast", "slowly",
# "carefully", "gently", "hurry"; 2.5: "drive backwards", "go upstairs"); urgency ("immediately", "asap", "quick")
# is politeness (section 2.8), taken off before planning
MANNERS_REFUSED = MANNER_WORDS - {"immediately", "asap", "quick"}
# a vague amount said with a turn ("turn left a bit"): less than the quarter turn "turn left" means, and no number
VAGUE_AMOUNTS = frozenset({"bit", "little", "slightly", "tad", "touch", "smidge"})
# a turn said again ("turn around twice", "spin three times"): the language turns once per step (2.6)
REPEATS = frozenset({"twice", "thrice", "times"})
# a turn said as a share of a whole one ("a quarter turn", "half a turn"): not in the language (2.6, 2.7.9)
TURN_FRACTIONS = frozenset({"quarter", "half", "full", "whole"})
PRONOUNS = frozenset({"it", "them", "they", "those", "these", "this", "that", "one", "ones"})
PERSONAL = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "you", "your", "yours", "yourself",
                      "he", "him", "his", "she", "her", "hers", "their", "theirs"})
DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "his", "her",
                         "their", "some", "any", "each", "every", "all", "both"})
INDEFINITES = frozenset({"a", "an", "any", "some"})
# where the object is: a locator restricts which object is meant; it never adds steps
LOCATOR_WORDS = (("next", "to"), ("close", "to"), ("close", "two"), ("close", "too"), ("near",), ("by",),
                 ("beside",), ("next",), ("on",), ("in",), ("inside",), ("from",), ("at",), ("off",), ("under",),
                 ("underneath",), ("beneath",), ("behind",), ("next", "two"), ("next", "too"), ("bye",), ("buy",),
                 ("onto",), ("into",), ("out", "of"))
# where a put's object goes
DESTINATION_WORDS = frozenset({"on", "onto", "in", "into", "to", "at", "under", "inside", "over", "two", "too"})
CONNECTORS = frozenset({"and", "then", "than", "after", "afterwards", "finally", "next", "also"})
QUESTION_WORDS = frozenset({"what", "where", "when", "why", "who", "whom", "whose", "which", "how"})
PREPOSITIONS = frozenset({"to", "in", "into", "on", "onto", "of", "at", "by", "near", "next", "for", "with", "from",
                          "off", "under", "over", "up", "down", "out", "around", "about", "through", "across",
                          "behind", "beside", "inside", "outside", "toward", "towards", "back", "here", "there",
                          "away", "along", "until", "till", "via", "left", "right", "degrees", "degree", "seconds",
                          "second", "minutes", "minute", "hours", "hour", "sec", "secs", "min", "mins"})
# colour words (docs/action_language.md section 3); perception's own colours count too
COLOR_WORDS = frozenset({"red", "orange", "yellow", "green", "blue", "purple", "violet", "pink", "brown", "black",
                         "white", "gray", "silver", "gold", "beige", "maroon", "navy", "teal", "turquoise", "cyan",
                         "magenta", "lavender", "crimson", "olive", "tan", "cream", "ivory", "khaki", "lime",
                         "indigo", "dark", "light"})
# adjectives that are no colour: ignored in front of a label, never part of a refusal's label
ADJECTIVES = frozenset({"big", "small", "little", "large", "tiny", "huge", "old", "new", "dirty", "clean", "empty",
                        "full", "heavy", "round", "square", "tall", "short", "long", "wooden", "plastic", "metal",
                        "glass", "nice", "good", "favourite", "favorite", "usual", "other", "same", "spare",
                        "broken", "open", "closed", "hot", "cold", "warm", "fresh", "shiny", "soft", "hard",
                        "wet", "dry", "striped", "plain", "leather", "ceramic", "paper", "cardboard",
                        "whole", "entire", "only", "single", "main", "extra"})
# words that can never be (part of) the name of a thing a refusal names
NEVER_A_LABEL = (COMMAND_VERBS | OTHER_VERBS | POLITENESS | MANNER_WORDS | PRONOUNS | PERSONAL | DETERMINERS
                 | CONNECTORS | QUESTION_WORDS | PREPOSITIONS | ADJECTIVES
                 | frozenset({"not", "no", "never", "don't", "dont", "can't", "cant", "won't", "if", "or", "but",
                              "so", "as", "because", "while", "when", "before", "after", "where", "there", "here",
                              "yes", "also", "very", "really", "right", "now", "soon", "later", "today", "around",
                              "something", "anything", "thing", "stuff", "somewhere", "everything", "nothing",
                              "bit", "moment", "sec", "time", "way", "please"}))
# words that are never inside a name a refusal gives ("the_cup", "cup_on"), where verbs and adjectives may be
# ("waiting room", "main hall", "trash can")
HARD_FUNCTION = (DETERMINERS | PRONOUNS | PERSONAL | CONNECTORS | QUESTION_WORDS | POLITENESS
                 | frozenset({"to", "from", "for", "with", "of", "on", "in", "into", "onto", "at", "by", "near",
                              "next", "up", "down", "off", "over", "out", "here", "there", "about", "around",
                              "through", "toward", "towards", "not", "no", "or", "but", "if", "very", "really"}))
# a verb as people say it to a robot (not the -ing form that names things: "waiting room", "washing machine")


def _is_gerund(word: str, verbs: frozenset) -> bool:
    """"getting", "leaving", "waiting" are forms of a verb in ``verbs``; "bring", "sing" and "ring" are verbs."""
    return word.endswith("ing") and any(stem in verbs for stem in (word[:-3], word[:-3] + "e", word[:-4]))


BASE_VERBS = frozenset(w for w in COMMAND_VERBS | OTHER_VERBS if not _is_gerund(w, COMMAND_VERBS | OTHER_VERBS))
# people other than the speaker, whom speech cannot address (docs/action_language.md 2.5: "give the cup to Bob",
# "follow him", "bring the book to the guest"); titles before a name ("Dr. Okafor")
OTHER_PEOPLE = frozenset({
    "him", "guest", "guests", "visitor", "visitors", "patient", "patients", "nurse", "doctor", "mom", "mum", "mommy",
    "mummy", "dad", "daddy", "father", "mother", "parents", "brother", "sister", "son", "daughter", "wife",
    "husband", "grandma", "grandpa", "granny", "grandmother", "grandfather", "baby", "kid", "kids", "child",
    "children", "colleague", "colleagues", "boss", "intern", "neighbour", "neighbor", "everyone", "everybody",
    "somebody", "someone", "anyone", "anybody", "friend", "friends", "customer", "customers", "client", "manager",
    "teacher", "student", "students", "chef", "driver", "courier", "boy", "girl", "man", "woman", "lady", "guy",
    "resident", "residents", "staff", "coworker", "receptionist", "technician", "supervisor", "operator", "picker",
    "worker", "workers", "cleaner", "porter", "janitor", "caretaker", "waiter", "waitress", "postman", "mailman",
    "plumber", "electrician", "engineer", "surgeon", "pharmacist", "secretary", "assistant", "foreman", "her",
    "grandson", "granddaughter", "grandchild", "grandchildren", "grandkids", "grandad", "granddad", "nana", "nephew",
    "niece", "cousin", "aunt", "auntie", "uncle", "partner", "girlfriend", "boyfriend", "fiance", "fiancee", "roommate",
    "flatmate", "housemate", "toddler", "nanny", "babysitter", "carer", "caregiver", "boss's"})
TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof"})
# verbs a recogniser may drop or swap a letter of ("fech", "brng", "birng"): long enough that the slip is no other
# word. A slip is heard as the verb (docs/action_language.md 2.5); "pace", "brig" and "bing" are words of their own
SLIP_PRONE_VERBS = ("bring", "fetch", "carry", "deliver", "retrieve", "follow", "rotate", "collect", "place")
NOT_SLIPS = frozenset({"pace", "brig", "bing"})


def _slips(verb: str) -> set:
    """A verb's one-letter slips that keep its first letter: a letter dropped ("fech") or two swapped ("birng")."""
    dropped = {verb[:k] + verb[k + 1:] for k in range(1, len(verb))}
    swapped = {verb[:k] + verb[k + 1] + verb[k] + verb[k + 2:] for k in range(1, len(verb) - 1)}
    return (dropped | swapped) - {verb}


VERB_SLIPS = {slip: verb for verb in SLIP_PRONE_VERBS for slip in sorted(_slips(verb))
              if slip not in NOT_SLIPS and slip not in COMMAND_VERBS and slip not in OTHER_VERBS}
