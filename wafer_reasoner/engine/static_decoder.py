"""The decoder for the engine's own export (training/kv_export.py): one KV cache, written in place.

The graph's ``past_key_values.N.*`` and ``present.N.*`` are bound to the SAME preallocated buffer
[B max, H, T max, Dh] per tensor, and GroupQueryAttention writes only the new rows into it: a step moves no cache
at all (the genai layout's graph, engine/decoder.py, copies the whole cache through Concat every step). Each row
keeps its own length, so

- rows of a batch feed chunks of different lengths in one step (``query_seqlens``; pads are never written);
- a rejected draft is forgotten by moving the row's length back: the next chunk overwrites those rows;
- positions are each row's length onwards (``position_ids``), with no attention mask to carry;
- ``logits_from`` leaves the output head out for a chunk's first positions (a prompt needs logits after its last
  token only, and at the draft fed with it).

The inputs a step reads (ids, positions, lengths) are views of preallocated int32 buffers, the logits a view of a
preallocated float32 one, and every (batch, chunk length) shape is bound once to a ``StepRunner`` call, so a step
is a few small writes and one onnxruntime call. The interface is ``BoundDecoder``'s, so FastEngine drives either.
"""

from __future__ import annotations

import numpy as np

from wafer_reasoner.engine.decoder import StepRunner, aligned_zeros, row_zero_state

KV_LAYOUT = "wafer_reasoner-inplace-kv-v1"  # training/kv_export.py writes it into the model's metadata
WARM_PROMPT_TOKENS = 64  # prefill shapes bound at load: prompts up to this long (longer ones when first seen)
WARM_KEPT = 9  # ... with logits for their last 1..9 positions (the prompt's last token + a draft of up to 8)
STEP_INPUTS = ("input_ids", "position_ids", "seqlens_k", "total_sequence_length", "query_seqlens", "logits_from")


def is_kv_session(session) -> bool:
    """Whether an onnxruntime session holds the in-place-KV export."""
    return session.get_modelmeta().custom_metadata_map.get("layout") == KV_LAYOUT


class _Shape:
    """One (batch, chunk length, positions with logits) step, bound once: the views its inputs are staged in,
    and the call. The views and their OrtValues are shared by every shape they fit (StaticDecoder._value)."""

    __slots__ = ("run", "ids", "positions", "seqlens", "total", "chunk_lengths", "logits", "logits_from")

    def __init__(self, decoder: "StaticDecoder", batch: int, seq: int, kept: int):
        lay, value = decoder.layout, decoder._value
        staged = [value("ids", batch, seq), value("positions", batch, seq),  # [B, S] each
                  value("seqlens", batch), value("total", 0),  # [B] each row's length after the step - 1; []
                  value("chunk_lengths", batch), value("logits_from", 1)]  # [B] real tokens per row; [1]
        (self.ids, self.positions, self.seqlens, self.total, self.chunk_lengths,
         self.logits_from) = (view for view, _ in staged)
        self.logits, logits_value = value("logits", batch, kept)  # [B, kept, V]
        caches = decoder._cache_values(batch)
        inputs = [*zip(STEP_INPUTS, (ortvalue for _, ortvalue in staged)), *zip(lay.kv_names, caches)]
        outputs = [("logits", logits_value), *zip(lay.present_names, caches)]  # the same cache values
        self.run = decoder._runner.prepare(inputs, outputs)


class StaticDecoder:
    """A batch of sequences in one in-place KV cache; ``lengths[b]`` tokens of row b are in it."""

    def __init__(self, session, layout, max_batch: int, *, vectors: bool = True):
        import onnxruntime as ort

        self._ortvalue = ort.OrtValue.ortvalue_from_numpy
        self.layout = layout
        self.max_batch = max_batch
        lay, tmax = layout, layout.context_length
        self._row_floats = lay.num_heads * tmax * lay.head_size  # one row of one KV tensor: [H, T, Dh]
        self._kv = aligned_zeros(2 * lay.num_layers * max_batch * self._row_floats, np.float32)  # [2L, B, H, T, Dh]
        self._ids = aligned_zeros(max_batch * tmax, np.int32)
        self._positions = aligned_zeros(max_batch * tmax, np.int32)
        self._seqlens = aligned_zeros(max_batch, np.int32)
        self._total = aligned_zeros(1, np.int32)
        self._chunk_lengths = aligned_zeros(max_batch, np.int32)
        self._logits_from = aligned_zeros(1, np.int64)
        self._logits = aligned_zeros(max_batch * tmax * lay.vocab_size, np.float32)
        self._counting = np.arange(tmax, dtype=np.int32)  # [T] positions 0..T-1, sliced per chunk
        self._runner = StepRunner(session, vectors=vectors)
        self._caches = {}  # batch -> (views [B, H, T, Dh], their OrtValues), one entry per KV tensor
        self._values = {}  # (input, dims...) -> (view, OrtValue)
        self._shapes = {}  # (batch, seq, positions with logits) -> _Shape
        self.lengths = [0] * max_batch  # tokens in the cache per row (Python ints: read and written every step)
        self.batch = 1

    @property
    def length(self) -> int:
        """Row 0's length (the engine asks at batch 1)."""
        return self.lengths[0]

    # ---- state -------------------------------------------------------------------------------------------

    def reset(self, batch: int = 1) -> None:
        if not 1 <= batch <= self.max_batch:
            raise ValueError(f"batch {batch} is outside 1..{self.max_batch}")
        self.batch = batch
        self.lengths = [0] * self.max_batch

    def load(self, kv: np.ndarray, length: int) -> None:
        """Start batch 1 from a saved state: kv [2L, H, >=length, Dh] (one copy per query, not per token)."""
        self.reset(1)
        for index, view in enumerate(self._cache_views(1)):
            np.copyto(view[0, :, :length], kv[index, :, :length])  # [H, length, Dh]
        self.lengths[0] = length

    def save(self, length: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Row 0's cache for its first ``length`` positions (default: all), [2L, H, length, Dh]: copied into
        ``out`` [2L, H, >=length, Dh] when given (no allocation), else into a new array."""
        length = self.length if length is None else length
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot save {length} of {self.length} positions")
        return row_zero_state(self._cache_views(1), length, out)

    def broadcast(self, batch: int) -> None:
        """Grow a batch-1 state to ``batch`` identical rows."""
        if self.batch != 1:
            raise ValueError("broadcast starts from one row")
        if batch > self.max_batch:
            raise ValueError(f"batch {batch} is more than the {self.max_batch} rows allocated")
        length = self.length
        for view in self._cache_views(batch):
            view[1:, :, :length] = view[0, :, :length]  # [B-1, H, P, Dh] <- [H, P, Dh]
        self.lengths[:batch] = [length] * batch
        self.batch = batch

    def keep(self, rows: list) -> None:
        """Keep only these rows (indices in increasing order), moved to rows 0..len(rows)-1: finished best-of-N
        candidates leave the batch, and each later step runs on fewer rows."""
        if not rows or list(rows) != sorted(set(rows)) or rows[-1] >= self.batch:
            raise ValueError(f"cannot keep rows {rows} of a batch of {self.batch}")
        views = self._cache_views(self.batch)
        for new, old in enumerate(rows):
            if new != old:  # new < old: a row below is free (dropped, or already moved down)
                length = self.lengths[old]
                for view in views:
                    view[new, :, :length] = view[old, :, :length]  # [H, P, Dh]
                self.lengths[new] = length
        self.batch = len(rows)

    def forget_last(self, count: int) -> None:
        """Drop row 0's last ``count`` positions (rejected draft tokens): the next chunk is written over them."""
        if self.batch != 1 or not 0 <= count <= self.length:
            raise ValueError(f"cannot forget {count} of {self.length} positions in a batch of {self.batch}")
        self.lengths[0] -= count

    # ---- one step ------------------------------------------------------------------------------------------

    def feed(self, rows, logits_from: int = 0) -> np.ndarray:
        """Feed one chunk per row (lists of token ids; empty: the row only waits). Returns logits
        [B, S - logits_from, V]: the positions before ``logits_from`` get none (the output head skips them).

        A row's next-token logits are at index len(chunk) - 1 - logits_from."""
        batch = self.batch
        seq = len(rows[0]) if batch == 1 else max(len(chunk) for chunk in rows)
        if len(rows) != batch or seq == 0 or max(self.lengths[:batch]) + seq > self.layout.context_length \
                or not 0 <= logits_from < seq:
            raise ValueError(f"cannot feed {[len(c) for c in rows]} tokens to {batch} rows of lengths "
                             f"{self.lengths[:batch]} (context {self.layout.context_length}), logits from "
                             f"{logits_from}")
        key = (batch, seq, seq - logits_from)
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = _Shape(self, *key)
        if batch == 1:
            self._stage_one(shape, rows[0])
        else:
            self._stage_rows(shape, rows, seq)
        shape.logits_from[0] = logits_from
        shape.run()
        return shape.logits

    def _stage_one(self, shape: _Shape, chunk) -> None:
        start, seq = self.length, len(chunk)
        shape.ids[0] = chunk
        shape.positions[0] = self._counting[start:start + seq]
        shape.seqlens[0] = start + seq - 1
        shape.chunk_lengths[0] = seq
        shape.total[...] = start + seq
        self.lengths[0] = start + seq

    def _stage_rows(self, shape: _Shape, rows, seq: int) -> None:
        """Each row's chunk padded at the end; a waiting row feeds one pad that nothing keeps (it is past the
        row's length, so the row's next real chunk, if any, overwrites it)."""
        for row, chunk in enumerate(rows):
            start, real = self.lengths[row], len(chunk)
            shape.ids[row, :real] = chunk
            shape.ids[row, real:] = 0
            shape.positions[row, :real] = self._counting[start:start + real]
            shape.positions[row, real:] = min(start, self.layout.context_length - 1)
            fed = max(real, 1)
            shape.seqlens[row] = start + fed - 1
            shape.chunk_lengths[row] = fed
            self.lengths[row] = start + real
        shape.total[...] = int(shape.seqlens.max()) + 1

    # ---- the cache's views and their OrtValues, made once per batch size -------------------------------------

    def _cache_entry(self, batch: int) -> tuple:
        found = self._caches.get(batch)
        if found is None:
            lay, region = self.layout, self.max_batch * self._row_floats  # one KV tensor's floats
            views = [self._kv[j * region:j * region + batch * self._row_floats].reshape(
                batch, lay.num_heads, lay.context_length, lay.head_size)  # [B, H, T, Dh], contiguous
                for j in range(2 * lay.num_layers)]
            found = self._caches[batch] = (views, [self._ortvalue(view) for view in views])
        return found

    def _cache_views(self, batch: int) -> list:
        return self._cache_entry(batch)[0]

    def _cache_values(self, batch: int) -> list:
        return self._cache_entry(batch)[1]

    def _value(self, what: str, *dims: int) -> tuple:
        """(view, OrtValue) of a staged input or of the logits, made once per shape: ids/positions [B, S],
        seqlens/chunk_lengths [B], total [] (dims (0,)), logits_from [1], logits [B, kept, V]."""
        key = (what, *dims)
        found = self._values.get(key)
        if found is None:
            buffer = {"ids": self._ids, "positions": self._positions, "seqlens": self._seqlens, "total": self._total,
                      "chunk_lengths": self._chunk_lengths, "logits_from": self._logits_from,
                      "logits": self._logits}[what]
            shape = (*dims, self.layout.vocab_size) if what == "logits" else () if what == "total" else dims
            view = buffer[:int(np.prod(shape))].reshape(shape)
            found = self._values[key] = (view, self._ortvalue(view))
        return found

    def warm(self, batches=(1,), prompts: int = WARM_PROMPT_TOKENS, kept: int = WARM_KEPT) -> None:
        """Bind the common step shapes now rather than during a query: chunks of up to 16 tokens for every batch
        size asked for, and at batch 1 prompts of up to ``prompts`` tokens with logits for their last ``kept``."""
        wanted = [(batch, seq, seq) for batch in batches for seq in range(1, 17)]
        wanted += [(1, seq, keep) for seq in range(1, prompts + 1) for keep in range(1, min(seq, kept) + 1)]
        for key in wanted:
            if key not in self._shapes:
                self._shapes[key] = _Shape(self, *key)
