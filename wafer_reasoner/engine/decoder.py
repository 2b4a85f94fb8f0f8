"""The ONNX decoder with every buffer allocated once: nothing is allocated or copied per step.

The exported graph (training/export.py) takes ``past_key_values.N.key/value`` [B, H, P, Dh] and returns
``present.N.key/value`` [B, H, P+S, Dh]. Here both live in two preallocated flat buffers sized for the maximum
batch and context, used in turn: a step reads the past from one and ORT writes the present straight into the
other, which becomes the next step's past (the graph's own Concat is the only thing that moves the cache).
``input_ids``, ``attention_mask`` and ``logits`` are views of preallocated buffers too. Every tensor is handed
to ORT as an ``OrtValue`` wrapping such a view, and for each shape the whole step is prepared once: the OrtValues
go into prebuilt vectors for ``run_with_ortvaluevector``, which writes the outputs into the given buffers (the
same thing an IO binding does, in one call instead of one bind per tensor; the IO binding is the fallback).

Rows of a batch may feed chunks of different lengths in one step (a forced run beside a single token): shorter
rows are padded at the end with ``attention_mask`` 0, which the model skips for attention and for positions
(positions = cumsum(mask) - 1), so each row decodes exactly as it would alone. Rejected draft tokens are masked
out the same way.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

MAX_STEP_SHAPES = 4096  # prepared step shapes kept (a few KB each); warm() makes 2 x context of them per batch size
ALIGN_BYTES = 64  # buffers start on a cache line, as ORT's own allocations do (numpy's large arrays are 16-aligned)


def aligned_zeros(count: int, dtype) -> np.ndarray:
    """A zeroed 1-D array of ``count`` items whose data starts on an ``ALIGN_BYTES`` boundary."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.zeros(count + ALIGN_BYTES // itemsize, dtype)
    skip = (-raw.ctypes.data % ALIGN_BYTES) // itemsize
    return raw[skip:skip + count]


def row_zero_state(views: list, length: int, out: np.ndarray | None) -> np.ndarray:
    """Row 0's first ``length`` positions of each KV view [B, H, >=length, Dh], stacked: [2L, H, length, Dh],
    copied into ``out`` [2L, H, >=length, Dh] when given (no allocation)."""
    if out is None:
        return np.stack([view[0, :, :length] for view in views])
    for index, view in enumerate(views):
        np.copyto(out[index, :, :length], view[0, :, :length])
    return out[:, :, :length]


@dataclass(frozen=True)
class DecoderLayout:
    num_layers: int  # transformer blocks; 2 KV tensors each
    num_heads: int  # KV heads (H)
    head_size: int  # Dh
    vocab_size: int  # V
    context_length: int  # T max: prompt + plan tokens

    @classmethod
    def from_genai_config(cls, config: dict) -> "DecoderLayout":
        model = config["model"]
        decoder = model["decoder"]
        return cls(
            num_layers=int(decoder["num_hidden_layers"]),
            num_heads=int(decoder["num_key_value_heads"]),
            head_size=int(decoder["head_size"]),
            vocab_size=int(model["vocab_size"]),
            context_length=int(model["context_length"]),
        )

    @property
    def kv_names(self) -> list:
        return [f"past_key_values.{i}.{kind}" for i in range(self.num_layers) for kind in ("key", "value")]

    @property
    def present_names(self) -> list:
        return [f"present.{i}.{kind}" for i in range(self.num_layers) for kind in ("key", "value")]


class BoundDecoder:
    """One batch of sequences decoding in step; ``length`` tokens (pads included) are in the cache."""

    def __init__(self, session, layout: DecoderLayout, max_batch: int, *, vectors: bool = True):
        import onnxruntime as ort

        self._ortvalue = ort.OrtValue.ortvalue_from_numpy
        self.session = session
        self.layout = layout
        self.max_batch = max_batch
        lay, tmax = layout, layout.context_length
        self._kv_stride = max_batch * lay.num_heads * tmax * lay.head_size  # floats per KV tensor region
        kv_floats = 2 * lay.num_layers * self._kv_stride
        self._kv = (aligned_zeros(kv_floats, np.float32),
                    aligned_zeros(kv_floats, np.float32))  # ping-pong [2L, B*H*T*Dh]
        self._ids = aligned_zeros(max_batch * tmax, np.int64)  # [B, S] views
        self._ones = aligned_zeros(max_batch * tmax, np.int64)
        self._ones[:] = 1  # attention_mask when no row has padding
        self._mask = aligned_zeros(max_batch * tmax, np.int64)  # [B, T] staged when some row has padding
        self._mask_rows = np.zeros((max_batch, tmax), np.int64)  # [B, Tmax] the mask as it grows
        self._logits = aligned_zeros(max_batch * tmax * lay.vocab_size, np.float32)  # [B, S, V] views
        self._values = {}  # (what, side, B, length) -> (numpy views, OrtValues), made once per shape
        self._runner = StepRunner(session, vectors=vectors)
        # (side, B, past, S, padded) -> _StepPlan, at most MAX_STEP_SHAPES (oldest made dropped first)
        self._step_shapes = {}
        self._kv_names, self._present_names = layout.kv_names, layout.present_names
        self.batch, self.length, self.side, self.padded = 1, 0, 0, False

    # ---- state -------------------------------------------------------------------------------------------

    def reset(self, batch: int = 1) -> None:
        if not 1 <= batch <= self.max_batch:
            raise ValueError(f"batch {batch} is outside 1..{self.max_batch}")
        self.batch, self.length, self.side, self.padded = batch, 0, 0, False

    def load(self, kv: np.ndarray, length: int) -> None:
        """Start batch 1 from a saved state: kv [2L, H, >=length, Dh] (one copy per query, not per token)."""
        self.reset(1)
        views = self._kv_views(self.side, 1, length)
        for index, view in enumerate(views):
            np.copyto(view[0], kv[index, :, :length])  # [H, length, Dh]
        self._mask_rows[0, :length] = 1
        self.length = length

    def save(self, length: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Row 0's cache for its first ``length`` positions (default: all), [2L, H, length, Dh]: copied into
        ``out`` [2L, H, >=length, Dh] when given (no allocation), else into a new array."""
        length = self.length if length is None else length
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot save {length} of {self.length} positions")
        return row_zero_state(self._kv_views(self.side, self.batch, self.length), length, out)

    def broadcast(self, batch: int) -> None:
        """Grow a batch-1 state to ``batch`` identical rows (row 0 keeps its memory: same offset in [B, H, P, Dh])."""
        if self.batch != 1 or self.padded:
            raise ValueError("broadcast starts from one row without masked positions")
        self.batch = batch
        if batch > self.max_batch:
            raise ValueError(f"batch {batch} is more than the {self.max_batch} rows allocated")
        for view in self._kv_views(self.side, batch, self.length):
            view[1:] = view[0]  # [B-1, H, P, Dh] <- [H, P, Dh]
        self._mask_rows[:batch, :self.length] = 1

    # ---- one step ------------------------------------------------------------------------------------------

    def feed(self, rows, logits_from: int = 0) -> np.ndarray:
        """Feed one chunk per row (lists of token ids; empty: the row only waits). Returns logits
        [B, S - logits_from, V] (this graph computes every position; the first ones are left out, as the
        in-place-KV decoder leaves them out).

        A row's next-token logits are at index len(chunk) - 1 - logits_from."""
        batch, past = self.batch, self.length
        seq = len(rows[0]) if batch == 1 else max(len(chunk) for chunk in rows)
        if len(rows) != batch or seq == 0 or past + seq > self.layout.context_length:
            raise ValueError(f"cannot feed {[len(c) for c in rows]} tokens to {batch} rows after {past} "
                             f"(context {self.layout.context_length})")
        if batch > 1:
            self._stage_rows(self._value("ids", 0, batch, seq)[0], rows, past, seq)
        elif self.padded:
            self._mask_rows[0, past:past + seq] = 1
        plan = self._step_shapes.get((self.side, batch, past, seq, self.padded))
        if plan is None:
            plan = self._plan(self.side, batch, past, seq, self.padded)
        if batch == 1:
            plan.ids[0] = rows[0]  # [1, S]: one row fills its chunk
        if self.padded:
            np.copyto(self._value("mask", 0, batch, past + seq)[0], self._mask_rows[:batch, :past + seq])
        plan.run()
        self.side ^= 1
        self.length = past + seq
        return plan.logits[:, logits_from:] if logits_from else plan.logits

    def forget_last(self, count: int) -> None:
        """Mask out the last ``count`` positions of row 0 (rejected draft tokens): the model skips them from now on,
        for attention and for positions, so nothing needs to move."""
        if self.batch != 1 or not 0 <= count <= self.length:
            raise ValueError(f"cannot forget {count} of {self.length} positions in a batch of {self.batch}")
        if count == 0:
            return
        if not self.padded:
            self._mask_rows[0, :self.length] = 1
            self.padded = True
        self._mask_rows[0, self.length - count:self.length] = 0

    def _stage_rows(self, ids_view: np.ndarray, rows, past: int, seq: int) -> None:
        for row, chunk in enumerate(rows):
            ids_view[row, :len(chunk)] = chunk
            ids_view[row, len(chunk):] = 0
            self._mask_rows[row, past:past + len(chunk)] = 1
            self._mask_rows[row, past + len(chunk):past + seq] = 0
            self.padded = self.padded or len(chunk) != seq

    def _plan(self, side: int, batch: int, past: int, seq: int, padded: bool) -> "_StepPlan":
        """One step of this shape, everything bound: made once, then each step is one call."""
        total = past + seq
        ids_view, ids_value = self._value("ids", 0, batch, seq)
        inputs = [("input_ids", ids_value), ("attention_mask", self._value("mask" if padded else "ones", 0, batch,
                                                                           total)[1])]
        inputs += list(zip(self._kv_names, self._kv_values(side, batch, past)))
        logits_view, logits_value = self._value("logits", 0, batch, seq)
        outputs = [("logits", logits_value), *zip(self._present_names, self._kv_values(side ^ 1, batch, total))]
        plan = _StepPlan(self._runner.prepare(inputs, outputs), logits_view, ids_view)
        if len(self._step_shapes) >= MAX_STEP_SHAPES:
            del self._step_shapes[next(iter(self._step_shapes))]
        self._step_shapes[(side, batch, past, seq, padded)] = plan
        return plan

    # ---- views and their OrtValues, made once per shape -----------------------------------------------------

    def _kv_views(self, side: int, batch: int, length: int) -> list:
        return self._kv_entry(side, batch, length)[0]

    def _kv_values(self, side: int, batch: int, length: int) -> list:
        return self._kv_entry(side, batch, length)[1]

    def _kv_entry(self, side: int, batch: int, length: int):
        key = ("kv", side, batch, length)
        found = self._values.get(key)
        if found is None:
            lay = self.layout
            size = batch * lay.num_heads * length * lay.head_size
            views = [
                self._kv[side][j * self._kv_stride:j * self._kv_stride + size].reshape(
                    batch, lay.num_heads, length, lay.head_size)  # [B, H, P, Dh], contiguous
                for j in range(2 * lay.num_layers)
            ]
            found = self._values[key] = (views, [self._ortvalue(view) for view in views])
        return found

    def _value(self, what: str, side: int, batch: int, length: int):
        key = (what, side, batch, length)
        found = self._values.get(key)
        if found is None:
            if what == "logits":
                size = batch * length * self.layout.vocab_size
                view = self._logits[:size].reshape(batch, length, self.layout.vocab_size)  # [B, S, V]
            else:
                buffer = {"ids": self._ids, "ones": self._ones, "mask": self._mask}[what]
                view = buffer[:batch * length].reshape(batch, length)  # [B, S] or [B, T]
            found = self._values[key] = (view, self._ortvalue(view))
        return found

    def warm(self, batches=(1,)) -> None:
        """Make the OrtValues of every cache length for these batch sizes now rather than during a query."""
        for batch in batches:
            for past in range(self.layout.context_length):
                for side in (0, 1):
                    self._plan(side, batch, past, 1, False)


class _StepPlan(NamedTuple):
    run: Callable  # () -> None: one model run, inputs read from and outputs written to the bound views
    logits: np.ndarray  # [B, S, V] view written by run
    ids: np.ndarray  # [B, S] view read by run


class StepRunner:
    """Turns (name, OrtValue) inputs and outputs into a ready call.

    Preferred: ``run_with_ortvaluevector`` with the OrtValues in prebuilt vectors, one C++ call per step that writes
    into the given outputs. Else: an IO binding, rebound and run per step (about 0.5 us per bind)."""

    def __init__(self, session, *, vectors: bool = True):
        from onnxruntime.capi import _pybind_state as capi

        self.session = session
        self._capi = capi
        self.vectors = vectors and hasattr(session, "_sess") and hasattr(session._sess, "run_with_ortvaluevector") \
            and hasattr(capi, "OrtValueVector")
        if self.vectors:
            self._options = capi.RunOptions()
            self._cpu = capi.OrtDevice(capi.OrtDevice.cpu(), capi.OrtDevice.default_memory(), 0)
        else:  # an onnxruntime without these names
            self._io = session.io_binding()

    def prepare(self, inputs: list, outputs: list) -> Callable:
        if not self.vectors:
            return functools.partial(self._bind_and_run, inputs, outputs)
        feeds, fetches = self._capi.OrtValueVector(), self._capi.OrtValueVector()
        for _, value in inputs:
            feeds.push_back(value._ortvalue)
        for _, value in outputs:
            fetches.push_back(value._ortvalue)
        return functools.partial(self.session._sess.run_with_ortvaluevector, self._options,
                                 [name for name, _ in inputs], feeds, [name for name, _ in outputs], fetches,
                                 [self._cpu] * len(outputs))

    def _bind_and_run(self, inputs: list, outputs: list) -> None:
        for name, value in inputs:
            self._io.bind_ortvalue_input(name, value)
        for name, value in outputs:
            self._io.bind_ortvalue_output(name, value)
        self.session.run_with_iobinding(self._io)
