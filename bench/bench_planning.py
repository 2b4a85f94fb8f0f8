"""Planning-query latency on typical scenes: one utterance in, one plan out, through PlannerModel.generate.

    .venv/bin/python bench/bench_planning.py [--model-dir DIR] [--queries 300] [--objects 8] [--places N]
                                             [--candidates N] [--export auto|kv-int8|kv|genai] [--json OUT]

A "typical" query: a scene with exactly --objects objects, a held-out phrasing of the speech corpus, the node's
engine settings (fast engine, greedy, grammar on, the best export in the model folder; --candidates 8: best-of-8
as one batch, every candidate verified, no deadline; --export: another export). --places N gives every scene a
map of exactly N places: the places its plan names, then made-up ones ("bench_area_7"); without it each scene
keeps the corpus's map.
Every query has its own map, so nothing of its prompt is cached (the node pins its one map at start-up, so it is
faster). Prints p50/p90/p99/max of the host time of generate (prompt, grammar, decode), the prompt and plan
lengths, and the exact-match share (a sanity check, not the accuracy figure: `make eval` is that).
Not a test: nothing here asserts timings.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's wafer_reasoner

from wafer_reasoner.engine.fast_engine import EngineConfig  # noqa: E402
from wafer_reasoner.engine.planner_model import PlannerModel  # noqa: E402
from wafer_reasoner.planner.limits import SafetyLimits  # noqa: E402
from wafer_reasoner.planner.scene import NamedPlace  # noqa: E402

WARMUP_QUERIES = 10


def typical_queries(count: int, objects: int, seed: int = 8) -> list:
    """(scene, utterance, gold plan) with exactly ``objects`` objects, held-out phrasings."""
    from wafer_reasoner.training import speech_corpus  # the bench's data generator

    rng = random.Random(seed)
    queries = []
    while len(queries) < count:
        example = speech_corpus.sample(rng, speech_corpus.HELDOUT)
        if len(example["scene"].objects) == objects:
            queries.append((example["scene"], example["say"], example["plan"]))
    return queries


def with_places(scene, count: int, plan: str):
    """The scene with a map of exactly ``count`` places: those the plan names first (the gold plan stays right:
    places nothing mentions never change a plan), then made-up ones far from everything."""
    named = [place for place in scene.places if f"place:{place.name}" in plan]
    filler = (NamedPlace(f"bench_area_{k}", 50.0 + k, -50.0) for k in range(count))
    places = (named + list(filler))[:max(count, len(named))]
    return replace(scene, places=tuple(places))


def accepting(scene, say):
    """The node's verifier for best-of-N candidates (runtime/query.py), at the scene's own time."""
    from wafer_reasoner.runtime.query import verifier_accepts

    return verifier_accepts(scene, SafetyLimits(), now_s=scene.stamp_s, utterance=say)


def percentile(values, q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--objects", type=int, default=8)
    parser.add_argument("--places", type=int, default=None, help="map size for every scene (0-64)")
    parser.add_argument("--candidates", type=int, default=1, help="best-of-N as one batch (default 1: greedy)")
    parser.add_argument("--export", default="auto", help="which export of the model folder (EngineConfig.export)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    model = PlannerModel(args.model_dir, engine_config=EngineConfig(candidates=args.candidates, export=args.export))
    queries = typical_queries(args.queries + WARMUP_QUERIES, args.objects)
    if args.places is not None:
        queries = [(with_places(scene, args.places, gold), say, gold) for scene, say, gold in queries]
    latencies, prompt_tokens, plan_tokens, correct = [], [], [], 0
    for index, (scene, say, gold) in enumerate(queries):
        started = time.perf_counter()
        generation = model.generate(scene, say, accept=accepting(scene, say) if args.candidates > 1 else None)
        elapsed_ms = (time.perf_counter() - started) * 1e3
        if index < WARMUP_QUERIES:
            continue
        latencies.append(elapsed_ms)
        prompt_tokens.append(generation.prompt_tokens)
        plan_tokens.append(generation.tokens)
        correct += generation.text == gold
    report = {
        "model_dir": str(model.model_dir), "tokenizer_kind": model.tokenizer.kind, "queries": len(latencies),
        "objects": args.objects, "places": args.places, "host": platform.processor() or platform.machine(),
        "candidates": args.candidates,
        "export": model.session.get_modelmeta().custom_metadata_map.get("precision", "float32 (planner.onnx)"),
        "latency_ms": {f"p{q}": round(percentile(latencies, q), 2) for q in (50, 90, 99)}
        | {"max": round(max(latencies), 2)},
        "prompt_tokens_mean": round(float(np.mean(prompt_tokens)), 1),
        "plan_tokens_mean": round(float(np.mean(plan_tokens)), 1),
        "exact_match": round(correct / len(latencies), 3),
    }
    lat = report["latency_ms"]
    places = "the corpus's maps" if args.places is None else f"{args.places}-place maps"
    print(f"planning query, {args.objects}-object scenes, {places}, {report['queries']} queries "
          f"({model.tokenizer.kind}; export {report['export']}; best-of-{args.candidates}):")
    print("| p50 ms | p90 ms | p99 ms | max ms | prompt tokens | plan tokens | exact match |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {lat['p50']} | {lat['p90']} | {lat['p99']} | {lat['max']} | {report['prompt_tokens_mean']} | "
          f"{report['plan_tokens_mean']} | {report['exact_match']:.1%} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
