"""The fast engine: prefix reuse, constrained decoding with forced runs and drafts, best-of-N in one batch.

One query, in the order it runs::

    prompt ids --PrefixCache--> reused KV + the rest to prefill --BoundDecoder.feed--> last logits [V]
    N = 1: the prefill chunk also carries a draft of the plan's start (first token guessed from the prompt's
           words, then past plans' shape); loop: argmax over the tokens the grammar Cursor allows, + the forced
           run that follows, + a draft of what past plans of this shape said next (numbers copied from the
           utterance); feed all as one chunk; keep the longest drafted prefix that argmax agrees with (the rest
           is masked out of the cache)
    N > 1: broadcast to N rows; loop: row 0 argmax, rows 1..N-1 sampled, each + its forced run, all rows' chunks
           fed as one batched step; stop when all are done (or at the deadline, once one is); best valid one

Row 0 is always the greedy path, so N = 1 is plain greedy decoding and best-of-N never scores below it.
The score is a candidate's log-probability under the constrained model at temperature 1 (forced tokens count
as certain). Drafts and forced runs change how many model runs a plan takes, never the plan. Everything here is
deterministic for a given query, history of plans, configuration and seed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from wafer_reasoner.engine.decoder import BoundDecoder, DecoderLayout
from wafer_reasoner.engine.drafter import PlanDrafter
from wafer_reasoner.engine.static_decoder import StaticDecoder, is_kv_session

EXPORTS = ("auto", "kv-int8", "kv", "genai")  # EngineConfig.export; auto takes the first present of the others


@dataclass(frozen=True)
class EngineConfig:
    """How the fast engine decodes; every field is a node parameter (prefix ``engine_``)."""

    candidates: int = 1  # N plans decoded as one batch; 1 = greedy only (deterministic)
    temperature: float = 0.8  # sampling temperature of candidates 2..N
    top_k: int = 8  # candidates 2..N sample among the k most likely allowed tokens (0: all allowed)
    seed: int = 0  # sampler seed; the same query, configuration and seed give the same plan
    # best-of-N, host wall time: stop at the first finished candidate after this (from query start; 0: none). The
    # node's engine_deadline_ms is another thing, a deadline in emulated time (runtime/best_of_n.py)
    wall_deadline_ms: float = 0.0
    constrained: bool = True  # decode inside the plan grammar (False: plain argmax, like the reference loop)
    forced_runs: bool = True  # feed tokens the grammar forces as one chunk with the chosen token
    prefix_cache: int = 4  # prompts whose KV state is kept for reuse (0: none)
    draft_tokens: int = 8  # greedy: at most this many tokens drafted from past plans per step (0: no drafting)
    # which export of the model folder the fast engine runs: "auto" (the first present of kv-int8, kv, genai),
    # "kv" (planner_kv.onnx: in-place KV cache, float32), "kv-int8" (the same, int8 weights) or "genai"
    # (planner.onnx, onnxruntime-genai's layout); planner_model.EXPORT_FILES
    export: str = "auto"

    def __post_init__(self) -> None:
        if not 1 <= self.candidates <= 64:
            raise ValueError(f"candidates must be 1..64, got {self.candidates}")
        if not (self.temperature > 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be a positive number, got {self.temperature}")
        if min(self.top_k, self.prefix_cache, self.draft_tokens) < 0 or not self.wall_deadline_ms >= 0:
            raise ValueError("top_k, prefix_cache, draft_tokens and wall_deadline_ms must not be negative")
        if self.export not in EXPORTS:
            raise ValueError(f"export must be one of {EXPORTS}, got {self.export!r}")

    @classmethod
    def from_params(cls, params, prefix: str = "engine_") -> "EngineConfig":
        """From node parameters named ``engine_candidates``, ``engine_temperature``, ...; others are ignored,
        missing ones keep their defaults."""
        types = {"candidates": int, "temperature": float, "top_k": int, "seed": int, "wall_deadline_ms": float,
                 "constrained": bool, "forced_runs": bool, "prefix_cache": int, "draft_tokens": int, "export": str}
        try:
            values = {name: kind(params[prefix + name]) for name, kind in types.items() if prefix + name in params}
        except (TypeError, OverflowError) as error:  # e.g. int(inf): only ValueError leaves here
            raise ValueError(f"bad engine parameter: {error}") from None
        return cls(**values)


class Sampler:
    """Chooses one token among the allowed ones; owns its seeded generator (llama2.c's Sampler, with a grammar)."""

    def __init__(self, temperature: float, top_k: int, seed):  # seed: an int or a tuple of ints
        self.temperature = temperature
        self.top_k = top_k
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def sample(self, logits: np.ndarray, allowed: np.ndarray) -> int:
        """logits [V], allowed [k] token ids -> one of them, at temperature among the top_k."""
        scores = logits[allowed].astype(np.float64)  # [k]
        if 0 < self.top_k < scores.size:
            keep = np.argpartition(scores, -self.top_k)[-self.top_k:]
            allowed, scores = allowed[keep], scores[keep]
        scores = (scores - scores.max()) / self.temperature
        weights = np.exp(scores)  # [k]
        threshold = self.rng.random() * weights.sum()
        index = min(int(np.searchsorted(np.cumsum(weights), threshold, side="right")), allowed.size - 1)
        return int(allowed[index])


def log_prob(logits: np.ndarray, allowed: np.ndarray, token: int) -> float:
    """log p(token) under the model restricted to ``allowed`` (temperature 1)."""
    scores = logits[allowed].astype(np.float64)  # [k]
    top = scores.max()
    return float(logits[token] - top - math.log(np.exp(scores - top).sum()))


@dataclass
class PrefixEntry:
    tokens: tuple  # prompt token ids
    kv: np.ndarray  # [2L, H, len(tokens), Dh]
    logits: np.ndarray  # [V] after the last prompt token
    pinned: bool = False  # kept whatever else comes (the fixed prompt part)
    slot: tuple | None = None  # (kv buffer, logits buffer) the entry lives in, reused once it is evicted


class PrefixCache:
    """The KV state of recent prompts; a new prompt reuses the longest common prefix with any of them.

    Entries live in slots (buffers for a whole prompt's state) made once and handed on when an entry is
    evicted, so storing a prompt allocates nothing after the first ``capacity`` queries."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.entries = []  # oldest first
        self._spare = []  # slots of evicted entries

    def lookup(self, tokens: tuple):
        """(entry, reusable length): the whole prompt when an entry is exactly it, else the longest common
        prefix (at most len(tokens) - 1, so the last token is always fed to get its logits)."""
        best, best_length = None, 0
        for entry in self.entries:
            if entry.tokens == tokens:
                return entry, len(tokens)
            length = min(_common_prefix(entry.tokens, tokens), len(tokens) - 1)
            if length > best_length:
                best, best_length = entry, length
        return best, best_length

    def slot(self, kv_shape: tuple, vocab: int) -> tuple:
        """(kv [2L, H, T, Dh], logits [V]) buffers to store a prompt's state in: an evicted entry's, or new."""
        return self._spare.pop() if self._spare else (np.zeros(kv_shape, np.float32), np.zeros(vocab, np.float32))

    def store(self, entry: PrefixEntry) -> None:
        if self.capacity == 0 and not entry.pinned:
            return
        kept = [e for e in self.entries if e.tokens != entry.tokens]
        self._release([e for e in self.entries if e.tokens == entry.tokens])
        self.entries = kept + [entry]
        unpinned = [e for e in self.entries if not e.pinned]
        evicted = unpinned[:max(0, len(unpinned) - self.capacity)]
        self.entries = [e for e in self.entries if all(e is not old for old in evicted)]
        self._release(evicted)

    def _release(self, entries: list) -> None:
        self._spare += [entry.slot for entry in entries if entry.slot is not None]


def _common_prefix(a: tuple, b: tuple) -> int:
    length = min(len(a), len(b))
    for index in range(length):
        if a[index] != b[index]:
            return index
    return length


@dataclass
class Candidate:
    cursor: object  # grammar.Cursor, or None when unconstrained
    tokens: list = field(default_factory=list)  # chosen and forced token ids, <eos> last once finished
    score: float = 0.0  # sum of log p of the chosen tokens (forced ones count as certain)
    forced: int = 0  # tokens appended without a decode step of their own
    drafted: int = 0  # model-chosen tokens that came from an accepted draft (no decode step of their own)
    done: bool = False
    draft_state: object = None  # drafter.DraftState while drafting
    valid: bool = False  # finished with <eos> and accepted by the verifier (set the step it finishes)
    stopped: bool = False  # best-of-N: given up unfinished, it could no longer fit the emulated deadline


@dataclass(frozen=True)
class Decoded:
    tokens: tuple  # the chosen candidate's token ids, <eos> included when it finished
    score: float
    candidates: int  # rows decoded
    finished: int  # candidates complete when decoding stopped
    forced_tokens: int  # of the chosen candidate
    drafted_tokens: int  # of the chosen candidate: accepted draft tokens the grammar did not force
    steps: int  # decode steps (batched feeds after the prompt)
    reused_tokens: int  # prompt tokens whose KV came from the prefix cache
    prefill_s: float
    decode_s: float
    all_tokens: tuple = ()  # every candidate's token ids, row order
    scores: tuple = ()  # every candidate's score, row order
    valid: tuple = ()  # every candidate: finished and accepted, row order
    stopped: tuple = ()  # every candidate: given up unfinished because it could no longer fit the deadline


class FastEngine:
    """Decodes plans for one loaded model; owns the bound decoder, the prefix cache and the config."""

    def __init__(self, session, layout: DecoderLayout, *, eos_id: int, max_new_tokens: int,
                 config: EngineConfig = EngineConfig(), tokenizer=None):
        self.layout = layout
        self.eos_id = eos_id
        self.max_new_tokens = max_new_tokens
        self.config = config
        decoder = StaticDecoder if is_kv_session(session) else BoundDecoder
        self.decoder = decoder(session, layout, max_batch=config.candidates)
        self.prefix = PrefixCache(config.prefix_cache)
        # a prefix-cache slot holds the longest prompt that leaves room for a plan: [2L, H, T - new tokens, Dh]
        self._slot_shape = (2 * layout.num_layers, layout.num_heads, layout.context_length - max_new_tokens,
                            layout.head_size)
        self._all_tokens = np.arange(layout.vocab_size, dtype=np.int64)  # [V] the unconstrained choice
        self.drafter = PlanDrafter(tokenizer) if tokenizer is not None and config.draft_tokens else None

    def warm(self) -> None:
        self.decoder.warm(sorted({1, self.config.candidates}))

    def pin_prefix(self, tokens) -> None:
        """Compute the fixed prompt part (up to ``<say>``) now and keep its state for every later query."""
        tokens = tuple(int(t) for t in tokens)
        self.decoder.reset(1)
        logits = self.decoder.feed([list(tokens)], logits_from=len(tokens) - 1)[0, -1].copy()  # [V]
        self.prefix.store(PrefixEntry(tokens, self.decoder.save(), logits, pinned=True))

    # ---- one query -----------------------------------------------------------------------------------------

    def decode(self, prompt_ids, grammar=None, *, accept=None, started: float | None = None,
               fits=None) -> Decoded:
        """Decode up to ``config.candidates`` plans after prompt_ids; grammar None decodes unconstrained.

        ``accept(token_ids) -> bool`` verifies a candidate the step it finishes, while the others go on (default:
        every finished one is valid). ``fits(prompt_tokens, lengths, done) -> n`` (best-of-N): how many leading
        rows could still make the deadline, given each row's tokens so far and whether it is done; rows from n on
        are stopped, and decoding ends once rows 0..n-1 are. ``started`` is the query's perf_counter start, the
        origin of ``wall_deadline_ms``."""
        started = time.perf_counter() if started is None else started
        prefill_start = time.perf_counter()
        tokens = tuple(int(t) for t in prompt_ids)
        rows = self._candidates(grammar, tokens)
        logits, reused, draft, out = self._prefill(tokens, rows[0])  # [V]
        decode_start = time.perf_counter()
        if draft:  # the plan's start, drafted and fed with the prompt: keep what greedy would have chosen
            accepted = self._accept(rows[0], out, 0, draft)
            self.decoder.forget_last(len(draft) - accepted)
            logits = out[accepted]  # [V]
        if len(rows) > 1:
            self.decoder.broadcast(len(rows))
        stop = _Stop(accept, fits, len(tokens), started + self.config.wall_deadline_ms / 1e3
                     if self.config.wall_deadline_ms > 0 else math.inf)
        steps = self._decode_loop(rows, np.broadcast_to(logits, (len(rows), 1, logits.size)), [0] * len(rows), stop)
        finished = time.perf_counter()
        best = self._best(rows, accept)
        if self.drafter is not None and grammar is not None and best.done:
            self.drafter.learn(best.tokens, tokens, rows[0].draft_state if best is rows[0] else None)
        return Decoded(
            tokens=tuple(best.tokens), score=best.score, candidates=len(rows),
            finished=sum(row.done and not row.stopped for row in rows), forced_tokens=best.forced,
            drafted_tokens=best.drafted,
            steps=steps, reused_tokens=reused,
            prefill_s=decode_start - prefill_start, decode_s=finished - decode_start,
            all_tokens=tuple(tuple(row.tokens) for row in rows), scores=tuple(row.score for row in rows),
            valid=tuple(row.valid for row in rows), stopped=tuple(row.stopped for row in rows),
        )

    def _prefill(self, tokens: tuple, row: Candidate):
        """-> (logits [V] after the prompt, prompt tokens reused, draft, out [1 + len(draft), V]); leaves the
        prompt's state in the decoder. When ``row`` drafts, the start of its plan as the drafter expects it is fed
        in the same chunk as the prompt (a token more in a chunk costs a fraction of a step); out[k] are the
        logits that predict draft[k], for the caller to verify."""
        if len(tokens) + self.max_new_tokens > self.layout.context_length:
            raise ValueError(f"prompt of {len(tokens)} tokens + {self.max_new_tokens} new exceeds the context")
        entry, reused = self.prefix.lookup(tokens)
        if entry is None:
            self.decoder.reset(1)
        else:
            self.decoder.load(entry.kv, reused)
        if reused == len(tokens):
            return entry.logits, reused, [], None
        draft = self._draft_from(row, len(tokens)) if row.draft_state is not None else []
        out = self.decoder.feed([list(tokens[reused:]) + draft], logits_from=len(tokens) - reused - 1)[0]  # [1 + D, V]
        if not self.prefix.capacity:
            return out[0].copy(), reused, draft, out  # [V]
        slot = self.prefix.slot(self._slot_shape, self.layout.vocab_size)
        logits = slot[1]
        np.copyto(logits, out[0])  # [V]
        self.prefix.store(PrefixEntry(tokens, self.decoder.save(len(tokens), out=slot[0]), logits, slot=slot))
        return logits, reused, draft, out

    def _candidates(self, grammar, prompt: tuple) -> list:
        budget = self.max_new_tokens
        rows = [Candidate(grammar.cursor(budget) if grammar is not None else None)
                for _ in range(self.config.candidates)]
        if self.drafter is not None and grammar is not None and len(rows) == 1:
            rows[0].draft_state = self.drafter.start(prompt)
        return rows

    def _decode_loop(self, rows: list, logits: np.ndarray, last: list, stop: "_Stop") -> int:
        """Run until every row that can still count is done (or the wall deadline passed with one finished);
        returns decode steps."""
        if len(rows) == 1:
            steps = self._greedy_loop(rows[0], logits[0, 0])
            stop.verify(rows)
            return steps
        config = self.config
        # one generator per row, seeded (seed, row): row k samples the same tokens whatever N is, so a caller may
        # keep only the first n rows (the emulated deadline, runtime/best_of_n.py) and get what a batch of n would
        # have made
        samplers = [Sampler(config.temperature, config.top_k, (config.seed, index)) for index in range(len(rows))]
        active = list(range(len(rows)))  # candidates with a decoder row, in row order
        compact = hasattr(self.decoder, "keep")  # the in-place decoder drops finished rows from the batch
        steps = 0
        while True:
            chunks = [[] for _ in rows]
            for position, index in enumerate(active):
                chunks[index] = self._advance(rows[index], index, logits[position, last[position]], samplers[index])
            if stop.done(rows, chunks):
                return steps
            if compact and any(rows[index].done for index in active):
                # a batch step costs more the more rows it has (int8: 0.19 ms at 1 row, 0.70 ms at 8)
                self.decoder.keep([position for position, index in enumerate(active) if not rows[index].done])
                active = [index for index in active if not rows[index].done]
            fed = [chunks[index] for index in active]
            logits = self.decoder.feed(fed)  # [B, S, V]
            last = [max(len(chunk), 1) - 1 for chunk in fed]
            steps += 1

    def _greedy_loop(self, row: Candidate, logits: np.ndarray) -> int:
        """Batch 1: choose, append the forced run and a draft, feed them, keep what greedy would have chosen."""
        feed = self.decoder.feed
        steps = 0
        while True:
            chunk = self._advance(row, 0, logits, None)
            if row.done:
                return steps
            draft = self._draft(row, chunk)
            out = feed([chunk + draft])[0]  # [S, V]
            steps += 1
            index = len(chunk) - 1
            if draft:
                accepted = self._accept(row, out, index, draft)
                self.decoder.forget_last(len(draft) - accepted)
                index += accepted
                if row.done:
                    return steps
            logits = out[index]  # [V]

    def _draft(self, row: Candidate, chunk: list) -> list:
        """Tokens the drafter expects after the chunk, leaving room in the context for the plan's budget."""
        if row.draft_state is None:
            return []
        self.drafter.push(row.draft_state, chunk)
        return self._draft_from(row, self.decoder.length + len(chunk))

    def _draft_from(self, row: Candidate, length: int) -> list:
        """A draft to feed after ``length`` positions, at most ``draft_tokens`` and leaving room for the budget."""
        limit = min(self.config.draft_tokens, self.layout.context_length - length - row.cursor.remaining)
        return self.drafter.draft(row.draft_state, row.cursor, limit) if limit > 0 else []

    def _accept(self, row: Candidate, out: np.ndarray, index: int, draft: list) -> int:
        """Keep the draft's longest prefix that constrained argmax agrees with; out [S, V], out[index] predicts
        draft[0]. Returns the number kept."""
        cursor = row.cursor
        kept = 0
        for token in draft:
            allowed = cursor.options()  # [k]
            expected = int(allowed[0]) if allowed.size == 1 else int(allowed[out[index + kept][allowed].argmax()])
            if token != expected:
                break
            cursor.advance(token)
            row.tokens.append(token)
            row.forced += allowed.size == 1
            row.drafted += allowed.size > 1
            kept += 1
            if cursor.done:
                row.done = True
                break
        self.drafter.push(row.draft_state, draft[:kept])
        return kept

    def _advance(self, row: Candidate, index: int, logits: np.ndarray, sampler) -> list:
        """Choose row's next token from logits [V], append the forced run; returns the chunk to feed."""
        if row.done:
            return []
        cursor = row.cursor
        if cursor is None:
            allowed = self._all_tokens  # [V]
            token = int(logits.argmax()) if index == 0 else sampler.sample(logits, allowed)
        else:
            allowed = cursor.options()  # [k]
            if allowed.size == 1:
                token = int(allowed[0])
            elif index == 0:
                token = int(allowed[logits[allowed].argmax()])
            else:
                token = sampler.sample(logits, allowed)
        if self.config.candidates > 1:
            row.score += log_prob(logits, allowed, token)
        chunk = [token]
        if cursor is not None:
            cursor.advance(token)
            if self.config.forced_runs:
                forced = cursor.forced_run()
                row.forced += len(forced)
                chunk += forced
        row.tokens += chunk
        row.done = chunk[-1] == self.eos_id or len(row.tokens) >= self.max_new_tokens
        return [] if row.done else chunk

    @staticmethod
    def _best(rows: list, accept) -> Candidate:
        """The valid row (finished, accepted) with the highest score (row 0 on ties); row 0 when none is."""
        valid = [row for row in rows if row.valid]
        if not valid:
            return rows[0]
        return max(valid, key=lambda row: row.score)  # max() keeps the first of equal scores


class _Stop:
    """When a best-of-N batch may end: verifies each row the step it finishes, stops rows that can no longer fit
    the emulated deadline (``fits``), and watches the wall-clock deadline."""

    def __init__(self, accept, fits, prompt_tokens: int, wall_deadline: float):
        self.accept, self.fits, self.prompt_tokens, self.wall_deadline = accept, fits, prompt_tokens, wall_deadline
        self.checked = set()  # rows already verified

    def verify(self, rows: list) -> None:
        """Verify the rows that became done since the last call; a stopped row is never valid."""
        for index, row in enumerate(rows):
            if row.done and index not in self.checked:
                self.checked.add(index)
                row.valid = not row.stopped and (self.accept is None or self.accept(row.tokens))

    def done(self, rows: list, chunks: list) -> bool:
        self.verify(rows)
        if self.fits is not None:
            count = self.fits(self.prompt_tokens, [len(row.tokens) for row in rows], [row.done for row in rows])
            for index in range(max(count, 1), len(rows)):
                if not rows[index].done:
                    rows[index].done = rows[index].stopped = True
                    chunks[index] = []
        if all(row.done for row in rows):
            return True
        return any(row.done and not row.stopped for row in rows) and time.perf_counter() >= self.wall_deadline
