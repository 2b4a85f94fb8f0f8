"""Two model folders on the same planning queries, interleaved query by query: host time, and the part of it in
the model's passes and outside them.

    .venv/bin/python bench/compare_models.py OTHER_DIR [--model-dir DIR] [--queries 300] [--candidates N]

bench_planning.py's 8-object queries; both models are loaded in one process and each query runs on both, the
order alternating, so the host's drift falls on both alike. The time in passes is taken at ``decoder.feed``
(bench_pass_cost.FeedCounter); the rest is Python (understanding, prompt, grammar, decode loop, verifier).
Prints p50 / p99 / mean per model and the ratios of the first to the second. Not a test: nothing here asserts
timings.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's wafer_reasoner
sys.path.insert(0, str(REPO / "bench"))

from bench_pass_cost import FeedCounter, timed_query  # noqa: E402
from bench_planning import WARMUP_QUERIES, percentile, typical_queries  # noqa: E402

from wafer_reasoner.engine.fast_engine import EngineConfig  # noqa: E402
from wafer_reasoner.engine.planner_model import PlannerModel  # noqa: E402


def interleaved(models: dict, queries, candidates: int) -> dict:
    """{name: (host seconds per query, seconds outside the passes per query)} after the warm-up."""
    counters = {name: FeedCounter(model.engine.decoder) for name, model in models.items()}
    times = {name: ([], []) for name in models}
    names = list(models)
    for index, (scene, say, _gold) in enumerate(queries):
        for name in names if index % 2 else names[::-1]:
            _, elapsed, outside = timed_query(models[name], counters[name], scene, say, candidates)
            if index >= WARMUP_QUERIES:
                times[name][0].append(elapsed)
                times[name][1].append(outside)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("other_dir", help="the second model folder")
    parser.add_argument("--model-dir", default=None, help="the first model folder (default: the shipped model)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--candidates", type=int, default=1, help="best-of-N as one batch (default 1: greedy)")
    args = parser.parse_args(argv)
    config = EngineConfig(candidates=args.candidates)
    models = {args.model_dir or "shipped": PlannerModel(args.model_dir, engine_config=config),
              args.other_dir: PlannerModel(args.other_dir, engine_config=config)}
    times = interleaved(models, typical_queries(args.queries + WARMUP_QUERIES, 8), args.candidates)
    print(f"{args.queries} queries, 8-object scenes, N = {args.candidates}, interleaved (ms)\n")
    print("| model | p50 | p99 | mean | outside the passes p50 | outside p99 | in the passes, mean |")
    print("|---|---|---|---|---|---|---|")
    for name, (host, outside) in times.items():
        inside = np.asarray(host) - np.asarray(outside)
        print(f"| {name} | {percentile(host, 50) * 1e3:.2f} | {percentile(host, 99) * 1e3:.2f} | "
              f"{np.mean(host) * 1e3:.2f} | {percentile(outside, 50) * 1e3:.2f} | "
              f"{percentile(outside, 99) * 1e3:.2f} | {inside.mean() * 1e3:.2f} |")
    first, second = (times[name][0] for name in models)
    print(f"\nfirst / second: p50 {percentile(first, 50) / percentile(second, 50):.2f}, "
          f"p99 {percentile(first, 99) / percentile(second, 99):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
