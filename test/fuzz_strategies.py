"""Hypothesis strategies for every input the reasoner takes from outside: shared by the pure fuzz tests
(test_fuzz_parsers.py, in ``make test``) and the fuzz over DDS (bench/fuzz_topics.py, ``make fuzz``)."""

from __future__ import annotations

import json
import math

from hypothesis import strategies as st

NASTY_FLOATS = (math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 1e6 + 1, 2.0**31, 2.0**63)
NASTY_TEXT = ("", " ", "\x00", "\x1b[31m", "\ud800", "../../etc/passwd", "/map", "map//odom", "💥", "ℵ", "\u202e",
              "SUCCEEDED", "succeeded", "failed", "stop", "[" * 1000 + "]" * 1000, "9" * 5000, "1" + "0" * 400)

floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(NASTY_FLOATS)
integers = st.integers() | st.sampled_from((2**31, 2**63, -(2**63), 10**400))
texts = st.text(max_size=80) | st.sampled_from(NASTY_TEXT)
scalars = st.none() | st.booleans() | integers | floats | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6),
    max_leaves=40,
)


def _field(valid):
    """Mostly a valid value, sometimes anything at all."""
    return st.one_of(valid, valid, valid, json_values)


ids = st.from_regex(r"[A-Za-z0-9_.\-]{1,64}", fullmatch=True)
coordinates = st.floats(min_value=-20.0, max_value=20.0)
scene_objects = st.fixed_dictionaries(
    {"id": _field(ids), "label": _field(st.sampled_from(["cup", "Coffee Mug", "book", "table"])),
     "x": _field(coordinates), "y": _field(coordinates)},
    optional={"color": _field(st.sampled_from(["red", "blue", ""])), "z": _field(coordinates),
              "score": _field(st.floats(0.0, 1.0)), "extra": json_values},
)
people = st.fixed_dictionaries({"id": _field(st.sampled_from(["user", "bob"])), "x": _field(coordinates),
                                "y": _field(coordinates)})
scenes = st.fixed_dictionaries(
    {"stamp": _field(st.floats(0.0, 1e4))},
    optional={"frame_id": _field(st.sampled_from(["map", "odom", "robot1/map"])),
              "objects": _field(st.lists(scene_objects, max_size=8)), "people": _field(st.lists(people, max_size=3)),
              "holding": _field(ids)},
)


@st.composite
def mutated(draw, text_strategy):
    """A text, sometimes cut short or with a few characters replaced (a torn or corrupted message)."""
    text = draw(text_strategy)
    if text and draw(st.booleans()):
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.text(max_size=4)) + text[cut + draw(st.integers(0, 3)):]
    return text


def _dumps(value) -> str:
    return json.dumps(value, allow_nan=True)


perception_texts = st.one_of(
    mutated(scenes.map(_dumps)),
    json_values.map(_dumps),
    texts,
    st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 3000).map(lambda n: '{"a":' * n + "1" + "}" * n),
)
utterances = st.one_of(
    texts,
    st.sampled_from(["bring me the red cup", "go to the kitchen", "stop", "turn left 90 degrees",
                     "wait 5 seconds", "follow me", "please stop", "pick up the book"]),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=300),
    st.integers(1000, 5000).map(lambda n: "x" * n),
)
manipulator_replies = st.one_of(
    texts,
    st.sampled_from(["succeeded", "failed"]).flatmap(
        lambda word: st.one_of(st.just(word), st.integers(-5, 2**64).map(lambda n: f"{word} {n}"))),
)
yaml_texts = st.one_of(
    texts,
    json_values.map(_dumps),  # JSON is YAML
    st.integers(1, 1200).map(lambda n: "[" * n),
    st.just("a: &a [*a]"),
    st.fixed_dictionaries({"places": st.lists(st.fixed_dictionaries(
        {"name": _field(st.sampled_from(["kitchen", "dock"])), "x": _field(coordinates), "y": _field(coordinates)},
        optional={"yaw": _field(coordinates)}), max_size=4)}).map(_dumps),
)
genai_configs = st.one_of(
    json_values,
    st.fixed_dictionaries({"model": st.fixed_dictionaries(
        {"vocab_size": _field(st.integers(1, 1000)), "context_length": _field(st.integers(1, 1000)),
         "decoder": _field(st.fixed_dictionaries(
             {key: _field(st.integers(1, 64)) for key in ("num_hidden_layers", "num_key_value_heads", "head_size")}))},
    )}),
)
