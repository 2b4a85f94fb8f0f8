"""What a planning query's model passes cost on this host, and the floor they put under a query.

    .venv/bin/python bench/bench_pass_cost.py [--model-dir DIR] [--queries 300] [--rounds 60] [--candidates N]
                                              [--json OUT]

Two measurements on the engine's default export (int8, in-place KV cache), one thread:

1. **One pass** (`StaticDecoder.feed`): a chunk of S tokens after a 20-token prefix, logits for its last
   position, S = 1, 2, 4, 8, 12, 16, 24; the chunk sizes interleaved round by round, median per size. A least-squares
   line through the medians gives a pass's fixed cost (the intercept: onnxruntime's call, ~40 kernels' dispatch)
   and its cost per token fed (the slope: the arithmetic of ~1.5M weights per token).
2. **What a query feeds** (`bench_planning.typical_queries`, 8-object scenes, N = 1, one PlannerModel): model
   passes and tokens fed per query (counted at `decoder.feed`), prompts (parts) per query, the query's host
   time, and the part of it spent outside the passes (timed at `decoder.feed`: what a query would take with a
   model that cost nothing). ``--candidates 8``: the same for best-of-8 (one batch, the node's verifier), where
   the floor line is left out (it counts one row's tokens).

From them: the time the passes alone take at the measured costs, and a floor no decoding strategy can go under
with this model on this host: every prompt token and every plan token fed once (tokens x slope), in one pass per
prompt (prompts x intercept). Not a test: nothing here asserts timings.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's wafer_reasoner
sys.path.insert(0, str(REPO / "bench"))

from bench_planning import WARMUP_QUERIES, accepting, percentile, typical_queries  # noqa: E402

from wafer_reasoner.engine.fast_engine import EngineConfig  # noqa: E402
from wafer_reasoner.engine.planner_model import PlannerModel  # noqa: E402

CHUNKS = (1, 2, 4, 8, 12, 16, 24)
PREFIX_TOKENS = 20
FILLER_TOKEN = 5  # any id in the vocabulary: the cost of a pass does not depend on which tokens it carries


def pass_costs(decoder, rounds: int) -> dict:
    """{chunk size: median seconds of one feed of that many tokens after PREFIX_TOKENS}, sizes interleaved."""
    samples = {size: [] for size in CHUNKS}
    order = list(CHUNKS)
    for _ in range(rounds):
        order = order[1:] + order[:1]
        for size in order:
            decoder.reset(1)
            decoder.feed([[FILLER_TOKEN] * PREFIX_TOKENS], logits_from=PREFIX_TOKENS - 1)
            started = time.perf_counter()
            decoder.feed([[FILLER_TOKEN] * size], logits_from=size - 1)
            samples[size].append(time.perf_counter() - started)
    return {size: float(np.median(values)) for size, values in samples.items()}


def fixed_and_per_token(costs: dict) -> tuple:
    """(intercept s, slope s per token) of the least-squares line through (chunk size, median seconds)."""
    sizes = np.array(list(costs), dtype=np.float64)  # [K]
    seconds = np.array(list(costs.values()), dtype=np.float64)  # [K]
    slope, intercept = np.polyfit(sizes, seconds, 1)
    return float(intercept), float(slope)


class FeedCounter:
    """Counts the passes and tokens a decoder is fed, and the seconds spent in them (wraps its ``feed``; the
    decoder works as before)."""

    def __init__(self, decoder):
        self.passes = self.tokens = 0
        self.seconds = 0.0
        self._feed = decoder.feed
        decoder.feed = self

    def __call__(self, rows, logits_from: int = 0):
        self.passes += 1
        self.tokens += sum(len(chunk) for chunk in rows)
        started = time.perf_counter()
        try:
            return self._feed(rows, logits_from)
        finally:
            self.seconds += time.perf_counter() - started


def timed_query(model, counter: FeedCounter, scene, say: str, candidates: int) -> tuple:
    """(generation, host seconds, seconds outside the model's passes) of one query; best-of-N candidates are
    checked by the node's verifier, as in bench_planning.py."""
    before = counter.seconds
    started = time.perf_counter()
    generation = model.generate(scene, say, accept=accepting(scene, say) if candidates > 1 else None)
    elapsed = time.perf_counter() - started
    return generation, elapsed, elapsed - (counter.seconds - before)


def query_work(model, queries, candidates: int = 1) -> dict:
    """Passes, tokens fed and prompts per query, and the queries' host time (after the warm-up)."""
    counter = FeedCounter(model.engine.decoder)
    latencies, outside, prompts, needed = [], [], [], []
    passes = tokens = 0
    for index, (scene, say, _gold) in enumerate(queries):
        before = (counter.passes, counter.tokens)
        generation, elapsed, beside = timed_query(model, counter, scene, say, candidates)
        if index < WARMUP_QUERIES:
            continue
        latencies.append(elapsed)
        outside.append(beside)
        passes += counter.passes - before[0]
        tokens += counter.tokens - before[1]
        prompts.append(generation.parts + generation.continued)
        # every prompt token not reused from the prefix cache, and every plan token but each part's last (<eos>)
        needed.append(generation.prompt_tokens - generation.reused_tokens + generation.tokens - generation.parts)
    count = len(latencies)
    return {"queries": count, "passes": passes / count, "tokens_fed": tokens / count,
            "prompts": float(np.mean(prompts)),
            "tokens_needed": float(np.mean(needed)), "p50_s": percentile(latencies, 50),
            "p99_s": percentile(latencies, 99), "mean_s": float(np.mean(latencies)),
            "outside_p50_s": percentile(outside, 50), "outside_p99_s": percentile(outside, 99),
            "outside_mean_s": float(np.mean(outside)),
            "inside_mean_s": float(np.mean(latencies) - np.mean(outside))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=60, help="interleaved rounds of the pass measurement")
    parser.add_argument("--candidates", type=int, default=1, help="best-of-N as one batch (default 1: greedy)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    model = PlannerModel(args.model_dir, engine_config=EngineConfig(candidates=args.candidates))
    queries = typical_queries(args.queries + WARMUP_QUERIES, 8)
    work = query_work(model, queries, args.candidates)
    costs = pass_costs(model.engine.decoder, args.rounds)
    fixed_s, per_token_s = fixed_and_per_token(costs)
    passes_s = work["passes"] * fixed_s + work["tokens_fed"] * per_token_s
    floor_s = work["prompts"] * fixed_s + work["tokens_needed"] * per_token_s
    print(f"one pass, {PREFIX_TOKENS}-token prefix, median of {args.rounds} interleaved rounds:")
    print("| tokens in the chunk | " + " | ".join(map(str, costs)) + " |")
    print("|---" * (len(costs) + 1) + "|")
    print("| ms | " + " | ".join(f"{seconds * 1e3:.3f}" for seconds in costs.values()) + " |")
    print(f"fit: {fixed_s * 1e6:.0f} us a pass + {per_token_s * 1e6:.1f} us a token")
    print(f"\n{work['queries']} queries (8-object scenes, N = {args.candidates}): {work['passes']:.2f} passes, "
          f"{work['tokens_fed']:.1f} tokens fed, {work['prompts']:.2f} prompts a query; host time p50 "
          f"{work['p50_s'] * 1e3:.2f} ms, p99 {work['p99_s'] * 1e3:.2f} ms, mean {work['mean_s'] * 1e3:.2f} ms")
    if args.candidates == 1:  # the fit is of one row's passes
        print(f"the passes at these costs: {passes_s * 1e3:.2f} ms a query "
              f"({passes_s / work['mean_s']:.0%} of the mean host time)")
        print(f"the floor: {work['tokens_needed']:.1f} tokens fed once, in one pass per prompt: "
              f"{floor_s * 1e3:.2f} ms a query, before any Python")
    print(f"timed at decoder.feed: the passes {work['inside_mean_s'] * 1e3:.2f} ms a query on average; the host "
          f"time outside them (Python, with a model that cost nothing): p50 {work['outside_p50_s'] * 1e3:.2f} ms, "
          f"p99 {work['outside_p99_s'] * 1e3:.2f} ms, mean {work['outside_mean_s'] * 1e3:.2f} ms")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"pass_median_s": costs, "fixed_s": fixed_s, "per_token_s": per_token_s,
                                               "query": work, "passes_s": passes_s, "floor_s": floor_s}, indent=1),
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
