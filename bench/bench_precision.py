"""Weight precision as a measured choice: accuracy, memory and bandwidth of each export of one model, side by side.

    .venv/bin/python bench/bench_precision.py [--model-dir DIR] [--count 200] [--baseline-src DIR] [--json OUT]

For every export in the model folder (planner.onnx in genai's layout, planner_kv.onnx float32, planner_kv_int8.onnx)
the fast engine at its defaults (greedy, N = 1) plans:
- the held-out set (``--count`` per category, as ``make eval``): exact match, and how many plans are byte-identical
  to the genai export's (the same weights at float32) and, with ``--baseline-src``, to the plans of the engine in
  that source tree (e.g. ``git archive planner-v3 | tar -x -C DIR``: the engine before this change), same model;
- blind set A: exact match;
- blind set B: exact match as an aggregate count only (the set is sealed: no case or failure is printed or kept).
And beside it: file size, weight bytes one step reads (the export's metadata), peak resident memory of a process
planning 100 queries with it (VmHWM), and single-token decode steps/s. The rule (issue 16): int8 ships only if
held-out and blind A move by at most 0.5 points against float32. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wafer_reasoner.engine.fast_engine import EngineConfig  # noqa: E402
from wafer_reasoner.engine.planner_model import EXPORT_FILES, SHIPPED_MODEL_DIR, PlannerModel  # noqa: E402
from wafer_reasoner.training import blind, speech_corpus  # noqa: E402

EXPORT_ORDER = ("genai", "kv", "kv-int8")
SHIP_RULE_POINTS = 0.5

_PLANS = """
import json, sys
sys.path.insert(0, {src!r})
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.training import speech_corpus
model = PlannerModel({model_dir!r}{config})
examples = speech_corpus.heldout_examples({count}, list(speech_corpus.HELDOUT_CATEGORIES))
plans = []
for e in examples:
    try:
        plans.append(model.generate(e["scene"], e["say"]).text)
    except ValueError as error:
        plans.append(f"<refused: {{error}}>")
{memory}print(json.dumps(plans))
"""
_MEMORY = """
print([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1])
"""


def plans_in_subprocess(src: Path, model_dir: Path, count: int, export: str | None) -> tuple:
    """(held-out plan texts, VmHWM KiB) from a fresh process importing the engine from ``src``."""
    config = f", engine_config=__import__('wafer_reasoner.engine.fast_engine', fromlist=['x']).EngineConfig(" \
             f"export={export!r})" if export else ""
    code = _PLANS.format(src=str(src), model_dir=str(model_dir), count=count, config=config, memory=_MEMORY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]), int(lines[-2])


def exact(model: PlannerModel, examples: list) -> tuple:
    """(correct, total) over examples; nothing else leaves this function (blind B stays sealed)."""
    correct = 0
    for example in examples:
        try:
            correct += model.generate(example["scene"], example["say"]).text == example["plan"]
        except ValueError:
            pass
    return correct, len(examples)


def decode_rate(model_dir: Path, export: str, examples: list) -> float:
    plain = PlannerModel(model_dir, engine_config=EngineConfig(export=export, constrained=False, prefix_cache=0,
                                                               draft_tokens=0))
    steps = seconds = 0.0
    for example in examples:
        result = plain.generate(example["scene"], example["say"])
        steps, seconds = steps + result.decode_steps, seconds + result.decode_ms / 1e3
    return steps / seconds


def measure(model_dir: Path, export: str, args, heldout: list) -> dict:
    model = PlannerModel(model_dir, engine_config=EngineConfig(export=export))
    meta = model.session.get_modelmeta().custom_metadata_map
    plans, peak_kib = plans_in_subprocess(REPO, model_dir, args.count, export)
    row = {"export": export, "precision": meta.get("precision", "float32"),
           "file_mb": (model_dir / EXPORT_FILES[export]).stat().st_size / 1e6,
           "step_weight_mb": int(meta["step_weight_bytes"]) / 1e6 if "step_weight_bytes" in meta else None,
           "peak_rss_mib": peak_kib / 1024,
           "heldout_exact": sum(p == e["plan"] for p, e in zip(plans, heldout)) / len(heldout),
           "decode_steps_per_s": decode_rate(model_dir, export, heldout[:60]), "plans": plans}
    for name in blind.BLIND_SETS:
        correct, total = exact(model, blind.load_blind(blind.blind_path(name)))
        row[f"{name}_exact"] = correct / total
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=None, help="model folder (default: the shipped model)")
    parser.add_argument("--count", type=int, default=200, help="held-out examples per category")
    parser.add_argument("--baseline-src", default=None, help="a source tree whose engine is the baseline")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    model_dir = Path(args.model_dir).resolve() if args.model_dir else SHIPPED_MODEL_DIR
    heldout = speech_corpus.heldout_examples(args.count, list(speech_corpus.HELDOUT_CATEGORIES))
    rows = [measure(model_dir, export, args, heldout) for export in EXPORT_ORDER
            if (model_dir / EXPORT_FILES[export]).is_file()]
    reference = rows[0]["plans"]
    baseline = plans_in_subprocess(Path(args.baseline_src), model_dir, args.count, None)[0] if args.baseline_src \
        else None
    fp32 = next((row for row in rows if row["export"] == "kv"), rows[0])
    for row in rows:
        row["same_as_genai"] = f"{sum(a == b for a, b in zip(row['plans'], reference))}/{len(reference)}"
        if baseline is not None:
            row["same_as_baseline"] = f"{sum(a == b for a, b in zip(row['plans'], baseline))}/{len(baseline)}"
        moved = max(abs(row[key] - fp32[key]) for key in ("heldout_exact", "blind_a_exact"))
        row["within_ship_rule"] = moved * 100 <= SHIP_RULE_POINTS
    headers = ["export", "precision", "file_mb", "step_weight_mb", "peak_rss_mib", "decode_steps_per_s",
               "heldout_exact", "blind_a_exact", "blind_b_exact", "same_as_genai",
               *(["same_as_baseline"] if baseline is not None else []), "within_ship_rule"]
    print(f"# Precision: {model_dir}, held-out {len(heldout)} ({args.count} per category), blind A and B "
          f"(B: aggregate only)\n")
    print("| " + " | ".join(headers) + " |\n|" + "---|" * len(headers))
    for row in rows:
        print("| " + " | ".join(_cell(h, row.get(h)) for h in headers) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps([{k: v for k, v in row.items() if k != "plans"} for row in rows],
                                              indent=1), encoding="utf-8")
    return 0


def _cell(header: str, value) -> str:
    if isinstance(value, float):
        return f"{value:.1%}" if header.endswith("_exact") else f"{value:.2f}" if value < 10 else f"{value:.0f}"
    return "-" if value is None else str(value)


if __name__ == "__main__":
    raise SystemExit(main())
