"""The speech corpus's words: labels, colours, places, phrasing families, wrappers, noise (literal lists only).

Each phrasing table is (training families, held-out families); held-out ones never reach training.
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
    "calculator", "candle", "teddy bear", "soap", "toothbrush", "cable", "first aid kit",
)
FURNITURE = (
    "table", "sofa", "shelf", "counter", "chair", "desk", "bin", "cabinet", "bed", "dresser", "fridge", "sink",
    "stool", "bench", "cart", "workbench", "rack", "pallet",
)
COLORS = ("red", "blue", "green", "yellow", "black", "white", "orange", "purple", "pink", "brown", "gray", "silver",
          "gold", "dark", "light")
# never in training (nor in the vocabulary): they reach the model spelled, like the pseudo-words it trained on
HELDOUT_SMALL = (
    "stapler", "thermos", "kettle", "vase", "ladle", "whisk", "mallet", "funnel", "tripod", "dumbbell", "frisbee",
    "kazoo", "skillet", "spatula", "trowel", "padlock", "compass", "binoculars", "harmonica", "yoyo",
)
HELDOUT_FURNITURE = ("ottoman", "nightstand", "locker", "credenza")
HELDOUT_COLORS = ("teal", "beige", "maroon", "navy", "turquoise", "magenta", "cyan", "lavender", "crimson", "olive")
PLACES = (
    "kitchen", "dock", "living room", "hallway", "office", "bedroom", "bathroom", "garage", "entrance",
    "charging station", "lab", "storage room", "lobby", "workshop", "dining room", "reception", "pantry",
    "laundry room", "porch", "warehouse", "loading bay", "break room", "meeting room", "nursery",
)
PEOPLE = ("alice", "bob", "carol", "dave", "person_1", "person_2", "guest")

# Phrasing families per intent: (train, heldout). {o} object expression, {d} destination, {p} place, {n} number.
# A template starting with "=" takes no politeness prefix (it is not an imperative). Held-out families re-use
# only words the training families contain (a test checks), so they measure new *combinations*.
TEMPLATES = {
    "bring": (
        ["bring me {o}", "bring {o} to me", "fetch {o}", "fetch me {o}", "get me {o}", "grab me {o}", "hand me {o}",
         "give me {o}", "bring {o} over here", "bring {o} here", "go get {o} for me", "get {o} for me",
         "fetch {o} for me", "bring over {o}", "pass me {o}", "=i need {o}", "=i want {o}", "=i would like {o}",
         "={o}, bring it to me", "={o} please, i need it", "go and get {o}"],
        ["grab {o} for me", "go and fetch {o} for me", "bring {o} over to me", "pass {o} to me", "=i need {o} here",
         "={o}, fetch it for me"],
    ),
    "pick": (
        ["pick up {o}", "pick {o} up", "grab {o}", "take {o}", "lift {o}", "get hold of {o}", "collect {o}",
         "lift up {o}", "={o}, pick it up"],
        ["take hold of {o}", "grab hold of {o}", "collect {o} up", "={o}, grab it"],
    ),
    "put": (
        ["put {o} on {d}", "place {o} on {d}", "put {o} in {d}", "set {o} on {d}", "drop {o} on {d}",
         "leave {o} on {d}", "take {o} to {d}", "move {o} to {d}", "carry {o} to {d}", "bring {o} to {d}",
         "put {o} into {d}", "place {o} onto {d}", "set {o} down on {d}", "drop {o} off at {d}"],
        ["leave {o} in {d}", "carry {o} over to {d}", "move {o} onto {d}", "drop {o} off in {d}",
         "={o}, put it on {d}"],
    ),
    "go_place": (
        ["go to {p}", "drive to {p}", "head to {p}", "move to {p}", "navigate to {p}", "go over to {p}",
         "head over to {p}", "make your way to {p}", "get to {p}", "go into {p}", "drive into {p}"],
        ["drive over to {p}", "head into {p}", "make your way over to {p}", "navigate over to {p}"],
    ),
    "go_object": (
        ["go to {o}", "drive to {o}", "approach {o}", "move to {o}", "go over to {o}", "head to {o}",
         "navigate to {o}"],
        ["drive over to {o}", "make your way to {o}", "move over to {o}"],
    ),
    "turn_left": (
        ["turn left {n}", "rotate left {n}", "turn {n} left", "rotate {n} to the left", "spin left {n}",
         "turn to the left by {n}", "turn left by {n}", "rotate {n}"],
        ["spin {n} to the left", "rotate to the left by {n}", "turn {n} to the left"],
    ),
    "turn_right": (
        ["turn right {n}", "rotate right {n}", "turn {n} right", "rotate {n} to the right", "spin right {n}",
         "turn to the right by {n}", "turn right by {n}"],
        ["spin {n} to the right", "rotate to the right by {n}", "turn {n} to the right"],
    ),
    "turn_around": (
        ["turn around", "spin around", "turn yourself around", "turn all the way around"],
        ["spin yourself around", "rotate all the way around"],
    ),
    "wait": (
        ["wait {n}", "wait for {n}", "pause for {n}", "hold on for {n}", "stay there for {n}",
         "hold still for {n}", "=give me {n}", "wait here for {n}"],
        ["pause {n}", "hold on {n}", "stay still for {n}", "wait there for {n}"],
    ),
    "follow": (
        ["follow me", "come with me", "come along", "come along with me", "stay with me", "walk with me",
         "follow behind me", "keep up with me"],
        ["walk along with me", "come follow me", "walk behind me"],
    ),
    "stop": (["stop", "halt", "stop now", "freeze", "stop right now", "stop moving", "halt now"],
             ["stop moving now", "freeze right now", "halt right now"]),
}
UNSUPPORTED = (
    "sing a song", "open the window", "what time is it", "tell me a joke", "clean the floor", "call my mother",
    "turn on the lights", "make some coffee", "open the door", "dance for me", "what is the weather", "play music",
    "close the curtains", "water the plants", "read me the news", "wash the dishes", "fly to the moon",
    "charge my phone", "do my homework", "order a pizza", "turn off the tv", "lock the door", "feed the cat",
    "who are you", "set an alarm", "send an email", "jump", "laugh", "what is your name",
)
HELDOUT_UNSUPPORTED = ("vacuum the carpet", "iron my shirt", "tell me a story", "sweep the floor",
                       "fold the laundry", "book a flight", "solve this puzzle", "bake a cake")
# verbs the robot cannot do to an object it can see: clarify(unsupported), never an invented action
UNSUPPORTED_VERBS = (["throw {o}", "wash {o}", "open {o}", "kick {o}", "break {o}", "eat {o}", "paint {o}",
                      "clean {o}", "hide {o}", "smell {o}", "fix {o}", "cut {o}"],
                     ["hug {o}", "juggle {o}", "polish {o}", "shake {o}"])
PREFIXES = (["please", "hey robot", "robot", "could you", "can you", "could you please", "would you",
             "i need you to", "okay robot", "hey", "um", "uh", "please could you", "hey robot please", "so"],
            ["would you please", "hey robot could you", "robot please", "okay could you", "um could you"])
SUFFIXES = (["please", "thanks", "now", "right now", "thank you", "if you can", "okay"],
            ["now please", "please thank you", "okay thanks"])
CONNECTORS = {
    2: (["{0} then {1}", "{0} and then {1}", "first {0} then {1}", "{0} and after that {1}", "{0}, then {1}",
         "{0} and {1}", "{0}. then {1}", "{0}, afterwards {1}", "{0}. after that {1}"],
        ["{0} after that {1}", "first {0} and then {1}", "{0} and afterwards {1}", "first {0}, after that {1}"]),
    3: (["{0} then {1} then {2}", "first {0}, then {1}, and finally {2}", "{0}, {1} and then {2}",
         "{0} and then {1} and after that {2}"],
        ["first {0} then {1} and finally {2}", "{0}, then {1}, after that {2}"]),
    4: ([], ["{0} then {1} then {2} then {3}", "first {0}, then {1}, then {2}, and finally {3}"]),
}
INTENT_WEIGHTS = {
    "bring": 5, "pick": 3, "put": 4, "go_place": 2, "go_object": 2, "turn_left": 1, "turn_right": 1,
    "turn_around": 0.3, "wait": 1, "follow": 0.6, "stop": 0.4, "unsupported": 1.4,
}
MAX_PLAN_STEPS = 10  # about 55 plan tokens: fits the engine's 64 new tokens
SHORT_INTENTS = ("go_place", "go_object", "turn_left", "turn_right", "turn_around", "wait")
OBJECT_INTENTS = ("bring", "pick", "put", "go_object")
# ASR noise: words that may be dropped, and what a recogniser may hear instead of a word
DROPPABLE = ("the", "please", "me", "up", "to", "you", "could", "a", "for", "over")  # none is a label
HOMOPHONES = {"to": ("two", "too"), "for": ("four",), "right": ("write",), "wait": ("weight",), "by": ("buy", "bye"),
              "here": ("hear",), "then": ("than", "them"), "red": ("read",), "blue": ("blew",), "you": ("u",),
              "i": ("eye",), "know": ("no",), "whole": ("hole",)}
FILLER_WORDS = ("um", "uh", "er", "hmm")
NUMBER_WORD_LIST = (*NUMBER_WORDS, "hundred", "and", "degree", "degrees", "second", "seconds")
