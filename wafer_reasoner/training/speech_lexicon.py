"""The speech corpus's words: labels, colours, places, phrasing families, wrappers, noise (literal lists only).

Each phrasing table is (training families, held-out families); held-out ones never reach training. The families
follow docs/action_language.md section 2 (the wordings the contract guarantees) and their close variants.
A template starting with "=" takes no politeness prefix (it is not an imperative). {o} object expression,
{d} destination, {p} place, {n} number phrase, {w} a person's name.
"""

from __future__ import annotations

from wafer_reasoner.understanding.words import NUMBER_WORDS

SMALL = (
    "cup", "mug", "bottle", "book", "ball", "box", "apple", "banana", "phone", "remote", "keys", "plate", "bowl",
    "spoon", "fork", "knife", "towel", "toy", "soda can", "glass", "pen", "pencil", "notebook", "laptop", "bag",
    "backpack", "shoe", "hat", "sponge", "jar", "wrench", "screwdriver", "hammer", "tape", "folder", "coffee mug",
    "water bottle", "tennis ball", "cereal box", "charger", "wallet", "scissors", "marker", "headphones", "camera",
    "umbrella", "pillow", "blanket", "basket", "bucket", "tray", "lemon", "carrot", "tablet", "mouse", "keyboard",
    "battery", "flashlight", "drill", "helmet", "glove", "toolbox", "package", "parcel", "crate", "cone", "clipboard",
    "calculator", "candle", "teddy bear", "soap", "toothbrush", "cable", "first aid kit", "remote control", "juice",
    "coke", "beer", "milk", "water", "sandwich", "orange", "pills", "medicine", "walker", "cane", "glasses", "lamp",
    "kettle", "thermos", "vase", "spatula", "ladle", "pan", "pot", "stapler", "magazine", "newspaper", "letter",
    "envelope", "key", "watch", "charger cable", "power bank", "test tube", "beaker", "pipette", "sample box",
    "clip board", "mask", "gloves", "syringe", "bandage", "thermometer", "blood pressure cuff", "tool", "bolt",
    "screw", "nail", "brush", "paint can", "spray bottle", "rag", "mop", "broom", "dustpan", "plant", "flower pot",
)
FURNITURE = (
    "table", "sofa", "shelf", "counter", "chair", "desk", "bin", "cabinet", "bed", "dresser", "fridge", "sink",
    "stool", "bench", "cart", "workbench", "rack", "pallet", "couch", "armchair", "nightstand", "bookshelf",
    "coffee table", "side table", "kitchen counter", "trolley", "locker", "cupboard", "drawer", "windowsill",
    "oven", "microwave", "dishwasher", "washing machine", "tv stand", "filing cabinet", "trash can", "crate stack",
)
COLORS = ("red", "orange", "yellow", "green", "blue", "purple", "violet", "pink", "brown", "black", "white", "gray",
          "silver", "gold", "beige", "maroon", "navy", "teal", "turquoise", "cyan", "magenta", "lavender", "crimson",
          "olive", "tan", "cream", "ivory", "khaki", "lime", "indigo", "dark", "light")
ADJECTIVES = ("big", "small", "little", "large", "tiny", "old", "new", "dirty", "clean", "empty", "full", "heavy",
              "wooden", "plastic", "metal", "favourite", "spare", "round", "tall", "short")
# never in training (nor in the vocabulary): they reach the model spelled, like the pseudo-words it trained on
HELDOUT_SMALL = (
    "whisk", "mallet", "funnel", "tripod", "dumbbell", "frisbee", "kazoo", "skillet", "trowel", "padlock", "compass",
    "binoculars", "harmonica", "yoyo", "abacus", "corkscrew", "hairbrush", "stethoscope", "ukulele", "baguette",
)
HELDOUT_FURNITURE = ("ottoman", "credenza", "sideboard", "hutch")
PLACES = (
    "kitchen", "dock", "living room", "hallway", "office", "bedroom", "bathroom", "garage", "entrance",
    "charging station", "lab", "storage room", "lobby", "workshop", "dining room", "reception", "pantry",
    "laundry room", "porch", "warehouse", "loading bay", "break room", "meeting room", "nursery", "front door",
    "back door", "garden", "balcony", "terrace", "basement", "attic", "study", "library", "corridor", "staircase",
    "patio", "cafeteria", "nurse station", "waiting room", "pharmacy", "server room", "mail room", "supply closet",
    "conference room", "kids room", "guest room", "master bedroom", "utility room", "parking lot", "shipping area",
    "receiving dock", "charging dock", "home base", "elevator", "main hall", "east wing", "west wing", "ward",
    "bay", "room", "aisle", "gate", "station", "zone", "shelf area", "desk area", "exam room", "lounge",
)
NUMBERED_PLACES = ("room", "bay", "aisle", "gate", "station", "zone", "ward", "dock", "lab", "office", "bed")
PEOPLE = ("alice", "bob", "carol", "dave", "emma", "john", "maria", "guest", "nurse", "doctor", "grandma", "tom",
          "sarah", "mike", "person_1", "person_2")
PEOPLE_PHRASES = ("my mother", "my wife", "the guest", "my son", "the nurse", "the doctor", "my friend", "the kids",
                  "my husband", "the visitor", "grandpa", "the boss", "my colleague", "the patient")

# ---- phrasing families per intent ------------------------------------------------------------------------------
TEMPLATES = {
    "bring": (
        ["bring me {o}", "bring {o} to me", "fetch {o}", "fetch me {o}", "get me {o}", "grab me {o}", "hand me {o}",
         "give me {o}", "bring {o} over here", "bring {o} here", "go get {o} for me", "get {o} for me",
         "fetch {o} for me", "bring over {o}", "pass me {o}", "=i need {o}", "=i want {o}", "=i would like {o}",
         "={o}, bring it to me", "={o} please, i need it", "go and get me {o}", "give {o} to me", "hand {o} to me",
         "deliver {o} to me", "carry {o} to me", "take {o} to me", "=can i have {o}", "=i'd like {o}", "bring {o}",
         "pick up {o} for me", "take {o} for me", "go get me {o}", "bring {o} back to me", "get {o} and bring it here",
         "=could i have {o}", "bring me over {o}", "fetch {o} and bring it to me", "get {o} over here",
         "={o}. bring it to me", "={o}. give it to me"],
        ["grab {o} for me", "go and fetch {o} for me", "bring {o} over to me", "pass {o} to me", "=i need {o} here",
         "={o}, fetch it for me", "hand over {o}", "=can i get {o}", "give me over {o}", "pick {o} up for me"],
    ),
    "pick": (
        ["pick up {o}", "pick {o} up", "grab {o}", "take {o}", "lift {o}", "get hold of {o}", "collect {o}",
         "lift up {o}", "={o}, pick it up", "get {o}", "grasp {o}", "take hold of {o}", "go get {o}",
         "go and grab {o}", "pick {o}", "go pick up {o}"],
        ["grab hold of {o}", "collect {o} up", "={o}, grab it", "go and pick up {o}", "lift {o} up"],
    ),
    "put": (
        ["put {o} on {d}", "place {o} on {d}", "put {o} in {d}", "set {o} on {d}", "drop {o} on {d}",
         "leave {o} on {d}", "take {o} to {d}", "move {o} to {d}", "carry {o} to {d}", "bring {o} to {d}",
         "put {o} into {d}", "place {o} onto {d}", "set {o} down on {d}", "drop {o} off at {d}", "put {o} at {d}",
         "deliver {o} to {d}", "transfer {o} to {d}", "place {o} in {d}", "put {o} onto {d}", "leave {o} at {d}",
         "set {o} on top of {d}", "put {o} under {d}", "take {o} into {d}", "bring {o} over to {d}",
         "={o}, put it on {d}", "={o} goes on {d}, please put it there"],
        ["leave {o} in {d}", "carry {o} over to {d}", "move {o} onto {d}", "drop {o} off in {d}",
         "={o}, put it in {d}", "set {o} down in {d}", "place {o} at {d}", "put {o} down on {d}"],
    ),
    "go_place": (
        ["go to {p}", "drive to {p}", "head to {p}", "move to {p}", "navigate to {p}", "go over to {p}",
         "head over to {p}", "make your way to {p}", "get to {p}", "go into {p}", "drive into {p}", "walk to {p}",
         "take me to {p}", "return to {p}", "go back to {p}", "proceed to {p}", "roll over to {p}", "go to {p} now",
         "head to {p} please", "move over to {p}", "travel to {p}"],
        ["drive over to {p}", "head into {p}", "make your way over to {p}", "navigate over to {p}", "walk over to {p}",
         "head back to {p}"],
    ),
    "go_object": (
        ["go to {o}", "drive to {o}", "approach {o}", "move to {o}", "go over to {o}", "head to {o}",
         "navigate to {o}", "find {o}", "look for {o}", "search for {o}", "locate {o}", "walk over to {o}",
         "go find {o}", "go look for {o}", "head over to {o}", "move over to {o}"],
        ["drive over to {o}", "make your way to {o}", "go and find {o}", "search for {o} please", "walk to {o}"],
    ),
    "come": (
        ["come here", "come to me", "come over here", "come over", "get over here", "come back", "come back here",
         "come here please", "come to me please", "come over to me", "come on over here", "come here now"],
        ["come back to me", "come over here to me", "get back here"],
    ),
    "turn_left": (
        ["turn left {n}", "rotate left {n}", "turn {n} left", "rotate {n} to the left", "spin left {n}",
         "turn to the left by {n}", "turn left by {n}", "turn counterclockwise {n}", "rotate {n} counterclockwise",
         "turn anticlockwise {n}", "turn {n} to the left", "rotate left by {n}"],
        ["spin {n} to the left", "rotate to the left by {n}", "turn {n} counterclockwise", "spin left by {n}"],
    ),
    "turn_right": (
        ["turn right {n}", "rotate right {n}", "turn {n} right", "rotate {n} to the right", "spin right {n}",
         "turn to the right by {n}", "turn right by {n}", "turn clockwise {n}", "rotate {n} clockwise",
         "turn {n} to the right", "rotate right by {n}"],
        ["spin {n} to the right", "rotate to the right by {n}", "turn {n} clockwise", "spin right by {n}"],
    ),
    "turn_unsigned": (["turn {n}", "rotate {n}", "rotate by {n}", "spin {n}", "turn by {n}"], ["spin by {n}"]),
    "turn_left_bare": (["turn left", "turn to the left", "rotate left", "turn to your left", "spin left"],
                       ["rotate to the left", "spin to the left"]),
    "turn_right_bare": (["turn right", "turn to the right", "rotate right", "turn to your right", "spin right"],
                        ["rotate to the right", "spin to the right"]),
    "turn_around": (
        ["turn around", "spin around", "turn yourself around", "turn all the way around", "turn round",
         "rotate around"],
        ["spin yourself around", "rotate all the way around", "turn right around"],
    ),
    "wait": (
        ["wait {n}", "wait for {n}", "pause for {n}", "hold on for {n}", "stay there for {n}",
         "hold still for {n}", "=give me {n}", "wait here for {n}", "pause {n}", "stay put for {n}"],
        ["hold on {n}", "stay still for {n}", "wait there for {n}", "wait around for {n}"],
    ),
    "follow": (
        ["follow me", "come with me", "come along", "come along with me", "stay with me", "walk with me",
         "follow behind me", "keep up with me", "follow me please", "follow me to {p}", "come with me to {p}",
         "accompany me"],
        ["walk along with me", "come follow me", "walk behind me", "follow me over to {p}"],
    ),
}

# ---- what the robot cannot do: clarify(unsupported) -------------------------------------------------------------
UNSUPPORTED = (
    "sing a song", "open the window", "what time is it", "tell me a joke", "clean the floor", "call my mother",
    "turn on the lights", "make some coffee", "open the door", "dance for me", "what is the weather", "play music",
    "close the curtains", "water the plants", "read me the news", "wash the dishes", "fly to the moon",
    "charge my phone", "do my homework", "order a pizza", "turn off the tv", "lock the door", "feed the cat",
    "who are you", "set an alarm", "send an email", "jump", "laugh", "what is your name", "switch off the lights",
    "turn up the heating", "make me a sandwich", "cook dinner", "boil some water", "how are you", "tidy up the room",
    "take out the trash", "do the laundry", "mop the floor", "dust the shelves", "tell me the time",
    "is it going to rain", "what day is it", "play some jazz", "turn the volume down", "start the dishwasher",
    "wait", "wait a moment", "hold on", "wait here", "hold on a bit", "just wait", "put it down", "drop it",
    "turn around twice", "do a 180", "do a quarter turn", "go home", "sit down", "run", "hurry up", "go upstairs",
    "go downstairs", "drive backwards", "spin around and around", "walk the dog", "answer the door",
    "call an ambulance",
)
HELDOUT_UNSUPPORTED = ("vacuum the carpet", "iron my shirt", "tell me a story", "sweep the floor", "fold the laundry",
                       "book a flight", "solve this puzzle", "bake a cake", "make the bed", "water the garden",
                       "what is the temperature", "wait a bit", "go dance")
# verbs the robot cannot do to an object it can see: clarify(unsupported), never an invented action
UNSUPPORTED_VERBS = (
    ["throw {o}", "wash {o}", "open {o}", "kick {o}", "break {o}", "eat {o}", "paint {o}", "clean {o}", "hide {o}",
     "smell {o}", "fix {o}", "cut {o}", "switch on {o}", "switch off {o}", "turn on {o}", "turn off {o}", "wipe {o}",
     "fill {o}", "empty {o}", "heat {o}", "heat up {o}", "check whether {o} is warm", "=is {o} hot",
     "=where is {o}", "=what color is {o}", "look at {o}", "show me {o}", "charge {o}", "plug in {o}", "unplug {o}",
     "cook {o}", "pour {o}", "close {o}", "lock {o}", "shake {o}", "rinse {o}", "count {o}", "push {o}",
     "pull {o}", "=can you see {o}", "=do you know where {o} is", "tell me where {o} is", "dry {o}", "repair {o}",
     "read {o}", "play with {o}", "hug {o}", "squeeze {o}", "open up {o}", "turn {o} on", "turn {o} off"],
    ["juggle {o}", "polish {o}", "stir {o}", "sharpen {o}", "=is {o} clean", "switch {o} on", "sniff {o}"],
)
# a request about another person: only the speaker is addressable by speech
UNSUPPORTED_PEOPLE = (
    ["give {o} to {w}", "bring {o} to {w}", "hand {o} to {w}", "follow {w}", "go to {w}", "bring {w} {o}",
     "take {o} to {w}", "bring {o} for {w}", "fetch {o} for {w}", "find {w}", "take {w} to {p}"],
    ["pass {o} to {w}", "go over to {w}", "deliver {o} to {w}"],
)
# manner words the robot cannot honour
MANNER = (["quickly", "fast", "slowly", "carefully", "gently", "very slowly", "as fast as you can", "quietly"],
          ["really quickly", "nice and slow", "super fast"])
RUN_TEMPLATES = (["run to {p}", "hurry to {p}", "rush over to {p}", "race to {p}", "sprint to {p}", "run to me"],
                 ["dash to {p}"])

# ---- around a command ---------------------------------------------------------------------------------------------
PREFIXES = (["please", "hey robot", "robot", "could you", "can you", "could you please", "would you",
             "i need you to", "okay robot", "hey", "um", "uh", "please could you", "hey robot please", "so",
             "robot, please", "hi robot, could you", "would you mind to", "i'd like you to", "i want you to",
             "can you please", "excuse me, could you", "okay so", "alright", "if you don't mind,", "oh, and",
             "when you have a moment,", "dear robot, please", "yo", "listen,", "right,", "buddy, can you"],
            ["would you please", "hey robot could you", "robot please", "okay could you", "um could you",
             "hi robot, could you please", "if you can,", "i need you to now"])
SUFFIXES = (["please", "thanks", "now", "right now", "thank you", "if you can", "okay", "for me", "thanks a lot",
             "please and thank you", "when you can", "okay?", "would you?", "cheers", "if possible", "asap please"],
            ["now please", "please thank you", "okay thanks", "thank you a lot", "if you can okay"])
# sentences that ask nothing of the robot: never change the plan
CONTEXT = (["i'm so tired today.", "it's been a long day.", "my back hurts.", "i'm thirsty.", "we have guests coming.",
            "sorry to bother you.", "the kids are asleep.", "okay, listen.", "so here's the thing.", "well,",
            "oh, by the way,", "i was thinking.", "you're a great help.", "that would be great.", "thanks a lot.",
            "i hope that's not too much trouble.", "the weather is nice today.", "my hands are full.",
            "i just got home.", "it's almost dinner time.", "we're running late.", "i'm cooking right now."],
           ["i'm exhausted.", "long story short,", "you know what,", "that would help me a lot."])
# non-native ways to start a request
NON_NATIVE = (["please to", "you can", "you must", "you will", "i want that you", "is possible to", "please you"],
              ["you should please", "i ask you to"])
CONNECTORS = {
    2: (["{0} then {1}", "{0} and then {1}", "first {0} then {1}", "{0} and after that {1}", "{0}, then {1}",
         "{0} and {1}", "{0}. then {1}", "{0}, afterwards {1}", "{0}. after that {1}", "{0}, and {1}", "{0}, {1}",
         "{0} and also {1}", "{0}. {1}", "{0}, and then {1}", "first {0}, and then {1}"],
        ["{0} after that {1}", "first {0} and then {1}", "{0} and afterwards {1}", "first {0}, after that {1}",
         "{0}; then {1}"]),
    3: (["{0} then {1} then {2}", "first {0}, then {1}, and finally {2}", "{0}, {1} and then {2}",
         "{0} and then {1} and after that {2}", "{0}, {1}, and {2}", "{0} and {1} and then {2}"],
        ["first {0} then {1} and finally {2}", "{0}, then {1}, after that {2}"]),
    4: ([], ["{0} then {1} then {2} then {3}", "first {0}, then {1}, then {2}, and finally {3}",
             "{0}, {1}, {2} and then {3}"]),
}
# one verb, two objects: one clause per object
PAIR_TEMPLATES = {
    "bring": (["bring me {o} and {o2}", "get me {o} and {o2}", "fetch {o} and {o2}", "hand me {o} and {o2}"],
              ["give me {o} and {o2}"]),
    "put": (["put {o} and {o2} on {d}", "place {o} and {o2} in {d}", "take {o} and {o2} to {d}"],
            ["move {o} and {o2} to {d}"]),
    "pick": (["pick up {o} and {o2}", "grab {o} and {o2}"], ["collect {o} and {o2}"]),
}
# a later clause about the object of the one before: "it"
PRONOUN_TEMPLATES = {
    "bring": (["bring it to me", "give it to me", "bring it here", "hand it to me", "bring it over"],
              ["pass it to me"]),
    "put": (["put it on {d}", "place it in {d}", "take it to {d}", "leave it on {d}", "put it in {d}",
             "drop it off at {d}", "set it on {d}"], ["move it to {d}"]),
    "pick": (["pick it up", "grab it", "take it", "lift it"], ["get hold of it"]),
    "go_object": (["go to it", "drive to it"], ["approach it"]),
}
INTENT_WEIGHTS = {
    "bring": 5, "pick": 2.5, "put": 4, "go_place": 2.5, "go_object": 2, "come": 0.8, "turn_left": 0.8,
    "turn_right": 0.8, "turn_unsigned": 0.3, "turn_left_bare": 0.4, "turn_right_bare": 0.4, "turn_around": 0.3,
    "wait": 1, "follow": 0.6, "unsupported": 1.2, "unsupported_verb": 1.4, "unsupported_people": 0.6,
    "unsupported_manner": 0.6,
}
MAX_PLAN_STEPS = 10  # about 55 plan tokens: fits the engine's 64 new tokens
SHORT_INTENTS = ("go_place", "go_object", "turn_left", "turn_right", "turn_around", "wait", "come",
                 "turn_left_bare", "turn_right_bare")
OBJECT_INTENTS = ("bring", "pick", "put", "go_object")
# ASR noise: words that may be dropped, and what a recogniser may hear instead of a word
DROPPABLE = ("the", "please", "me", "up", "to", "you", "could", "for", "over")  # none is a label, none an indefinite
HOMOPHONES = {"to": ("two", "too"), "for": ("four",), "right": ("write",), "wait": ("weight",), "by": ("buy", "bye"),
              "here": ("hear",), "then": ("than",), "red": ("read",), "blue": ("blew",), "you": ("u",),
              "i": ("eye",), "know": ("no",), "whole": ("hole",)}
FILLER_WORDS = ("um", "uh", "er", "hmm")
NUMBER_WORD_LIST = (*NUMBER_WORDS, "hundred", "thousand", "and", "degree", "degrees", "second", "seconds",
                    "minute", "minutes", "hour", "hours", "half", "an", "a")
