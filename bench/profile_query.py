"""Where a planning query's host time goes: cProfile over bench_planning.py's queries, folded by layer.

    .venv/bin/python bench/profile_query.py [--model-dir DIR] [--queries 300] [--candidates 1] [--top 12]

Every function's own time (cProfile ``tottime``) is charged to the layer its file belongs to, a flat flame graph:
onnxruntime (the model runs: the C++ call, GIL released), understanding/ (speech normalisation, mentions,
grounding, refusal labels, coverage, clauses), the prompt and grammar (engine/prompt.py, grammar.py,
automaton.py), the engine's decode loop (fast_engine.py, drafter.py, the decoders' staging), the planner's
parser, numpy, and the rest. Then the functions with the most own time. Profiling slows Python down more than
it slows onnxruntime, so the Python shares are upper bounds; the table is for finding what to work on, and the
latency figures come from bench_planning.py without a profiler.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_planning import typical_queries  # noqa: E402

from wafer_reasoner.engine.fast_engine import EngineConfig  # noqa: E402
from wafer_reasoner.engine.planner_model import PlannerModel  # noqa: E402

LAYERS = (  # (layer, what a file path or function name contains), first match wins
    # the decoders call onnxruntime through a functools.partial, which cProfile cannot see into: the C++ run is
    # charged to feed() itself (whose own Python is a few lines of staging)
    ("onnxruntime (model runs)", ("run_with_ortvaluevector", "run_with_iobinding", "onnxruntime", "decoder.py feed")),
    ("understanding/", ("wafer_reasoner/understanding/",)),
    ("prompt + grammar", ("engine/prompt.py", "engine/grammar.py", "engine/automaton.py", "engine/tokenizer.py")),
    ("engine decode loop", ("engine/fast_engine.py", "engine/drafter.py", "engine/decoder.py",
                            "engine/static_decoder.py", "engine/planner_model.py")),
    ("plan parser / verifier", ("wafer_reasoner/planner/",)),
    ("numpy", ("numpy",)),
)


def layer_of(path: str, name: str) -> str:
    where = f"{path} {name}"
    for layer, marks in LAYERS:
        if any(mark in where for mark in marks):
            return layer
    return "other Python (builtins, dataclasses, ...)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--objects", type=int, default=8)
    parser.add_argument("--candidates", type=int, default=1)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    model = PlannerModel(args.model_dir, engine_config=EngineConfig(candidates=args.candidates))
    queries = typical_queries(args.queries + 10, args.objects)
    for scene, say, _ in queries[:10]:
        model.generate(scene, say)
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for scene, say, _ in queries[10:]:
        model.generate(scene, say)
    profile.disable()
    per_query_ms = (time.perf_counter() - started) / args.queries * 1e3
    stats = pstats.Stats(profile).stats  # (file, line, name) -> (calls, primitive calls, tottime, cumtime, callers)
    layers, functions = {}, []
    for (path, line, name), (_, _, own, _, _) in stats.items():
        layers[layer_of(path, name)] = layers.get(layer_of(path, name), 0.0) + own
        functions.append((own, f"{Path(path).name}:{line} {name}"))
    total = sum(layers.values())
    print(f"# Host time of a planning query by layer (cProfile, {args.queries} queries, best-of-{args.candidates}, "
          f"{per_query_ms:.2f} ms per query under the profiler)\n")
    print("| layer | ms per query | share |\n|---|---|---|")
    for layer, own in sorted(layers.items(), key=lambda item: -item[1]):
        print(f"| {layer} | {own / args.queries * 1e3:.3f} | {own / total:.1%} |")
    print("\n| function (own time) | ms per query |\n|---|---|")
    for own, where in sorted(functions, reverse=True)[:args.top]:
        print(f"| {where} | {own / args.queries * 1e3:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
