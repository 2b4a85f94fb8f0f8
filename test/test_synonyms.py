"""The word-knowledge experiment (training/synonyms.py, training/minilm.py): alias table, rewrite, encoder I/O."""

import json
import struct

import numpy as np
import pytest

from wafer_reasoner.planner.scene import NamedPlace, Scene, SceneObject
from wafer_reasoner.training.synonyms import alias_table, rewrite
from wafer_reasoner.training.vocab import build_tokenizer

TOKENIZER = build_tokenizer()


class FixedEncoder:
    """Vectors chosen by hand: "retrieve" lies near "fetch", "zebra" near nothing."""

    VECTORS = {"fetch": [1.0, 0.0, 0.0, 0.0], "wash": [0.0, 1.0, 0.0, 0.0], "retrieve": [0.9, 0.1, 0.0, 0.0],
               "scrub": [0.1, 0.95, 0.0, 0.0], "zebra": [0.0, 0.0, 1.0, 0.0]}
    OTHER = [0.0, 0.0, 0.0, 1.0]  # every other verb

    def whole_words(self):
        return ["retrieve", "scrub", "zebra", "fetch"]

    def encode(self, words):
        vectors = np.array([self.VECTORS.get(w, self.OTHER) for w in words])  # [N, 4]
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_an_unknown_word_gets_the_nearest_known_verb_only_above_the_threshold():
    table = alias_table(FixedEncoder(), TOKENIZER, threshold=0.8)
    assert table["retrieve"] == "fetch" and table["scrub"] == "wash"
    assert "zebra" not in table and "fetch" not in table  # too far; already known


def test_rewrite_leaves_known_words_and_what_the_scene_names():
    scene = Scene(objects=(SceneObject("retrieve_1", "retrieve", "", 1.0, 0.0),),
                  places=(NamedPlace("scrub_room", 2.0, 2.0),))
    aliases = {"retrieve": "fetch", "scrub": "wash", "snag": "grab"}
    assert rewrite("Snag the cup", Scene(), aliases, TOKENIZER) == "grab the cup"
    assert rewrite("snag the retrieve in the scrub room", scene, aliases, TOKENIZER) == \
        "grab the retrieve in the scrub room"


def test_safetensors_are_read_by_name_dtype_and_shape():
    pytest.importorskip("torch")  # training/minilm.py runs the encoder in torch: the [train] extra
    from wafer_reasoner.training.minilm import read_safetensors

    weights = np.arange(6, dtype=np.float32).reshape(2, 3)
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                         "__metadata__": {"format": "pt"}}).encode()
    blob = struct.pack("<Q", len(header)) + header + weights.tobytes()
    assert np.array_equal(read_safetensors(blob)["w"], weights)


def test_wordpiece_takes_the_longest_piece_first():
    pytest.importorskip("torch")
    from wafer_reasoner.training.minilm import WordPiece

    vocab = {"[CLS]": 0, "[SEP]": 1, "[UNK]": 2, "fetch": 3, "fet": 4, "##ch": 5, "##ing": 6, "##c": 7, "##h": 8}
    pieces = WordPiece(vocab)
    assert pieces.word_ids("fetching") == [3, 6]
    assert pieces.word_ids("fetch") == [3] and pieces.word_ids("qq") == [2]
    assert pieces.encode("Fetching") == [0, 3, 6, 1]


def test_the_shipped_encoder_puts_synonyms_nearer_than_unrelated_words():
    pytest.importorskip("torch")
    pytest.importorskip("all_minilm_l6_v2")
    from wafer_reasoner.training.minilm import MiniLM

    vectors = MiniLM.from_wheel().encode(["fetch", "retrieve", "banana"])  # [3, 384]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
