"""Evaluation of an ONNX planner through the real engine (``make eval``): three sets.

    python -m wafer_reasoner.training.evaluate [--model-dir DIR] [--count N] [--seed-offset K] [--metamorphic N]
                                               [--sets heldout,blind,metamorphic] [--json OUT]

- held out: N=200 examples per speech_corpus.HELDOUT_CATEGORIES category (each from its own fixed seed) plus
  "train" (fresh examples of the training distribution, for reference; not counted in "all");
- blind: the sets in test/data/blind/, written from the contract by authors who never saw the generator
  (training/blind.py);
- metamorphic: N cases (default 2,000) whose unmentioned places, objects and people are added, removed, renamed or
  shuffled; the plan must not move (training/metamorphic.py).
Prints exact-match accuracy per category, clarify precision and a confusion summary of error kinds. Needs only
the runtime dependencies (no torch).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter, defaultdict

from wafer_reasoner.engine.fast_engine import EXPORTS, EngineConfig
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.planner.language import PlanSyntaxError, is_clarification, parse_plan
from wafer_reasoner.runtime.envelope import breach
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


def plan_text(model: PlannerModel, example: dict) -> tuple:
    """(plan text, host ms); a prompt the model cannot take is an answer that is no plan."""
    try:
        generation = model.generate(example["scene"], example["say"])
    except ValueError as error:
        return f"<refused: {error}>", 0.0
    return generation.text, generation.total_ms


def evaluate(model: PlannerModel, examples: list) -> dict:
    per_category = defaultdict(lambda: [0, 0])
    errors = Counter()
    samples = []
    clarify_predicted = clarify_correct = refusals = acted = unsupported = acted_unsupported = enveloped = 0
    latencies = []
    for example in examples:
        text, host_ms = plan_text(model, example)
        latencies.append(host_ms)
        correct = text == example["plan"]
        bucket = per_category[category(example)]
        bucket[0] += correct
        bucket[1] += 1
        acts = _acts(text)
        if text.startswith("clarify("):
            clarify_predicted += 1
            clarify_correct += example["plan"].startswith("clarify(")
        if example["plan"].startswith("clarify("):
            refusals, acted = refusals + 1, acted + acts
            enveloped += acts and not breach(parse_plan(text), example["scene"], example["say"])
        if example["plan"] == "clarify(unsupported)":
            unsupported, acted_unsupported = unsupported + 1, acted_unsupported + acts
        if not correct:
            kind = error_kind(text, example["plan"])
            errors[kind] += 1
            if len(samples) < 12:
                samples.append({"say": example["say"], "gold": example["plan"], "got": text, "kind": kind})
    counted = [(c, n) for name, (c, n) in per_category.items() if name != "train"]
    total_correct, total = sum(c for c, _ in counted), sum(n for _, n in counted)
    latencies.sort()
    return {
        "examples": len(examples),
        "exact_match": total_correct / max(1, total),
        "per_category": {name: {"exact_match": c / n, "count": n} for name, (c, n) in sorted(per_category.items())},
        "clarify_precision": clarify_correct / clarify_predicted if clarify_predicted else 1.0,
        "refusals": refusals, "refusals_acted_on": acted,
        "refusals_acted_on_after_envelope": enveloped,  # what the node would still move for (runtime/envelope.py)
        "unsupported": unsupported, "unsupported_acted_on": acted_unsupported,
        "errors": dict(errors.most_common()),
        "error_samples": samples,
        "latency_ms_p50": latencies[len(latencies) // 2] if latencies else 0.0,
    }


def _acts(text: str) -> bool:
    """Whether a plan would move the robot (parses and is no clarify)."""
    try:
        return not is_clarification(parse_plan(text))
    except PlanSyntaxError:
        return False


def print_report(report: dict, title: str = "held-out", samples: bool = True) -> None:
    """The report as text; ``samples=False`` for the blind sets, whose failures nobody reads one by one (a set
    looked at is no longer blind)."""
    print(f"{title} exact match: {report['exact_match']:.1%} over {report['examples']} examples"
          " (a 'train' row, if any, is not counted)")
    print(f"{'category':<14} {'exact':>7} {'count':>6}")
    for name, row in report["per_category"].items():
        print(f"{name:<14} {row['exact_match']:>7.1%} {row['count']:>6}")
    print(f"clarify precision: {report['clarify_precision']:.1%}; acted on a request to refuse: "
          f"{report['refusals_acted_on']}/{report['refusals']} ({report['unsupported_acted_on']}/"
          f"{report['unsupported']} of clarify(unsupported)); after the safety envelope: "
          f"{report['refusals_acted_on_after_envelope']}/{report['refusals']}")
    print("error kinds:", json.dumps(report["errors"]))
    for sample in report["error_samples"] if samples else ():
        print(f"  [{sample['kind']}] {sample['say']!r}\n      gold: {sample['gold']}\n      got:  {sample['got']}")
    print(f"planning latency p50 (host, greedy): {report['latency_ms_p50']:.1f} ms")


def run_sets(model: PlannerModel, args) -> dict:
    """The reports of the sets asked for."""
    from wafer_reasoner.training import blind, metamorphic

    reports = {}
    if "heldout" in args.sets:
        examples = speech_corpus.heldout_examples(args.count or 200, ["train", *speech_corpus.HELDOUT_CATEGORIES],
                                                  seed_offset=args.seed_offset)
        reports["heldout"] = evaluate(model, examples)
        print_report(reports["heldout"], "held-out")
    if "blind" in args.sets:
        for name in blind.BLIND_SETS:
            reports[name] = evaluate(model, blind.load_blind(blind.blind_path(name)))
            print()
            reports[name].pop("error_samples")
            print_report(reports[name], name, samples=False)
    if "metamorphic" in args.sets:
        reports["metamorphic"] = metamorphic.check(model, metamorphic.cases(args.metamorphic))
        row = reports["metamorphic"]
        print(f"\nmetamorphic invariance: {row['invariance']:.1%} over {row['cases']} cases (moved: "
              f"{json.dumps(row['per_change'])})")
        for sample in row["samples"]:
            print(f"  [{sample['change']}] {sample['say']!r}\n      before: {sample['before']}\n      after:  "
                  f"{sample['after']}")
    return reports


def published_figures(reports: dict) -> dict:
    """The figures the model card publishes and test/test_engine.py holds the shipped model to."""
    figures = {}
    for name, report in reports.items():
        if name == "metamorphic":
            figures[name] = {"cases": report["cases"], "invariance": report["invariance"]}
            continue
        figures[name] = {key: report[key] for key in ("examples", "exact_match", "clarify_precision", "refusals",
                                                       "refusals_acted_on", "refusals_acted_on_after_envelope",
                                                       "unsupported", "unsupported_acted_on")}
        figures[name]["per_category"] = {k: v["exact_match"] for k, v in report["per_category"].items()}
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=None, help="folder with planner.onnx (default: the shipped model)")
    parser.add_argument("--count", type=int, default=None, help="held-out examples per category (default 200)")
    parser.add_argument("--json", default=None, help="also write the reports as JSON here")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="draw every held-out category from its seed + this (a fresh confirmation set)")
    parser.add_argument("--metamorphic", type=int, default=2000, help="metamorphic cases (default 2000)")
    parser.add_argument("--sets", default="heldout,blind,metamorphic", help="which sets, comma-separated")
    parser.add_argument("--publish", default=None,
                        help="write the published figures here (wafer_reasoner/models/published_figures.json when "
                        "shipping a model; test/test_engine.py holds planner.onnx to them, and the export the node "
                        "loads to within 0.5 points of them)")
    parser.add_argument("--export", default=None, choices=EXPORTS,
                        help="which export the engine runs (default: genai with --publish, the figures being "
                        "planner.onnx's; else auto, the node's)")
    args = parser.parse_args(argv)
    args.sets = set(args.sets.split(","))
    export = args.export or ("genai" if args.publish else "auto")
    model = PlannerModel(args.model_dir, engine_config=EngineConfig(export=export))
    started = time.perf_counter()
    reports = run_sets(model, args)
    print(f"\n{time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(reports, handle, indent=1)
    if args.publish:
        with open(args.publish, "w", encoding="utf-8") as handle:
            json.dump(published_figures(reports), handle, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
