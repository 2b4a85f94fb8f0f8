"""Held-out evaluation of an ONNX planner through the real engine (``make eval``).

    python -m wafer_reasoner.training.evaluate [--model-dir DIR] [--count N] [--seed-offset K] [--json OUT]

N=200 examples per speech_corpus.HELDOUT_CATEGORIES category (held-out phrasing, labels, colours, three and four
clauses, noisy speech; each from its own fixed seed) plus "train" (fresh examples of the training distribution, for
reference; not counted in "all").
Prints exact-match accuracy per category, clarify precision and a confusion summary of error kinds. Needs only
the runtime dependencies (no torch).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter, defaultdict

from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.planner.language import PlanSyntaxError, parse_plan
from wafer_reasoner.training import speech_corpus


def category(example: dict) -> str:
    if "category" in example:  # held-out sets name their category
        return example["category"]
    if len(example["intents"]) > 1:
        return "compound"
    if example["plan"].startswith("clarify(") and example["intents"][0] != "unsupported":
        return "clarify"
    return example["intents"][0]


def _actions(plan: str) -> list:
    return re.findall(r"([a-z_]+)\(", plan)


def error_kind(predicted: str, gold: str) -> str:
    """A coarse name for how a wrong plan is wrong."""
    try:
        parse_plan(predicted)
    except PlanSyntaxError:
        return "unparseable"
    if predicted.startswith("clarify(") != gold.startswith("clarify("):
        return "bad_clarify"
    if predicted.startswith("clarify("):
        return "wrong_clarify_label"
    if _actions(predicted) == _actions(gold):
        return "wrong_object_or_argument"
    if len(_actions(predicted)) < len(_actions(gold)):
        return "missing_step"
    if len(_actions(predicted)) > len(_actions(gold)):
        return "extra_step"
    return "wrong_action"


def evaluate(model: PlannerModel, examples: list) -> dict:
    per_category = defaultdict(lambda: [0, 0])
    errors = Counter()
    samples = []
    clarify_predicted = clarify_correct = 0
    latencies = []
    for example in examples:
        generation = model.generate(example["scene"], example["say"])
        latencies.append(generation.total_ms)
        correct = generation.text == example["plan"]
        bucket = per_category[category(example)]
        bucket[0] += correct
        bucket[1] += 1
        if generation.text.startswith("clarify("):
            clarify_predicted += 1
            clarify_correct += example["plan"].startswith("clarify(")
        if not correct:
            kind = error_kind(generation.text, example["plan"])
            errors[kind] += 1
            if len(samples) < 12:
                samples.append({"say": example["say"], "gold": example["plan"], "got": generation.text, "kind": kind})
    counted = [(c, n) for name, (c, n) in per_category.items() if name != "train"]
    total_correct, total = sum(c for c, _ in counted), sum(n for _, n in counted)
    latencies.sort()
    return {
        "examples": len(examples),
        "exact_match": total_correct / max(1, total),
        "per_category": {name: {"exact_match": c / n, "count": n} for name, (c, n) in sorted(per_category.items())},
        "clarify_precision": clarify_correct / clarify_predicted if clarify_predicted else 1.0,
        "errors": dict(errors.most_common()),
        "error_samples": samples,
        "latency_ms_p50": latencies[len(latencies) // 2] if latencies else 0.0,
    }


def print_report(report: dict) -> None:
    print(f"held-out exact match: {report['exact_match']:.1%} over {report['examples']} examples"
          " (a 'train' row, if any, is not counted)")
    print(f"{'category':<14} {'exact':>7} {'count':>6}")
    for name, row in report["per_category"].items():
        print(f"{name:<14} {row['exact_match']:>7.1%} {row['count']:>6}")
    print(f"clarify precision: {report['clarify_precision']:.1%}")
    print("error kinds:", json.dumps(report["errors"]))
    for sample in report["error_samples"]:
        print(f"  [{sample['kind']}] {sample['say']!r}\n      gold: {sample['gold']}\n      got:  {sample['got']}")
    print(f"planning latency p50 (host, greedy): {report['latency_ms_p50']:.1f} ms")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=None, help="folder with planner.onnx (default: the shipped model)")
    parser.add_argument("--count", type=int, default=None,
                        help="examples per category (default 200)")
    parser.add_argument("--json", default=None, help="also write the report as JSON here")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="draw every category from its seed + this (a fresh confirmation set)")
    args = parser.parse_args(argv)
    model = PlannerModel(args.model_dir)
    examples = speech_corpus.heldout_examples(args.count or 200, ["train", *speech_corpus.HELDOUT_CATEGORIES],
                                              seed_offset=args.seed_offset)
    started = time.perf_counter()
    report = evaluate(model, examples)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    print_report(report)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
