"""``wafer-reasoner``: plan from the command line, without ROS.

    wafer-reasoner plan --scene SCENE.yaml --say "bring me the red cup"
    wafer-reasoner plan --batch CASES.jsonl [--out RESULTS.jsonl]
    wafer-reasoner eval [--count 600]

A scene file has the scenario shape: ``robot: {x, y, yaw}``, ``objects``, ``people``, ``places`` (optional:
the package's semantic map is used when absent), optional ``holding``; a scenario file with a ``scene:`` key
works too. Batch lines are ``{"scene": {...}, "say": "..."}``; each gets one output line with ``plan``,
``status`` (ok/clarify/rejected), ``reasons``, ``latency_ms`` and the timings.
Offline planning treats the scene as fresh (its stamp is "now").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.query import answer
from wafer_reasoner.planner.scene import SceneError, load_places, scene_from_dict

PACKAGE_CONFIG = Path(__file__).resolve().parent.parent / "config"


def default_places() -> tuple:
    """Named places from the semantic map shipped with the package (source tree or install share dir)."""
    candidates = [PACKAGE_CONFIG / "semantic_map.yaml"]
    try:
        from ament_index_python.packages import get_package_share_directory

        candidates.append(Path(get_package_share_directory("wafer_reasoner")) / "config" / "semantic_map.yaml")
    except Exception:  # noqa: BLE001 - no ament index outside a ROS environment
        pass
    for path in candidates:
        if path.is_file():
            return load_places(yaml.safe_load(path.read_text(encoding="utf-8")))
    return ()


def scene_from_data(data, places: tuple):
    if isinstance(data, dict) and isinstance(data.get("scene"), dict):
        data = data["scene"]
    if isinstance(data, dict) and not data.get("places"):
        return scene_from_dict(data, places=list(places))
    return scene_from_dict(data)


def plan_one(model, scene, say: str, limits: SafetyLimits) -> dict:
    result = answer(model, scene, say, limits, now_s=scene.stamp_s)
    record = result.to_json_dict()
    record["latency_ms"] = record["timings_ms"]["host_total_ms"]
    return record


def _batch_line(model, line: str, places: tuple, limits: SafetyLimits) -> dict:
    try:
        case = json.loads(line)
        if not isinstance(case, dict) or not isinstance(case.get("say"), str):
            raise SceneError('each line must be {"scene": {...}, "say": "..."}')
        scene = scene_from_data(case.get("scene", {}), places)
    except (ValueError, SceneError) as error:
        return {"plan": "", "status": "rejected", "reasons": [f"bad case: {error}"], "latency_ms": 0.0}
    return plan_one(model, scene, case["say"], limits)


def run_batch(model, source, sink, places: tuple, limits: SafetyLimits) -> int:
    count = 0
    for line in source:
        if not line.strip():
            continue
        sink.write(json.dumps(_batch_line(model, line, places, limits)) + "\n")
        count += 1
    return count


def command_plan(args) -> int:
    from wafer_reasoner.engine.planner_model import ModelLoadError, PlannerModel

    try:
        model = PlannerModel(args.model_dir)
    except ModelLoadError as error:
        print(f"wafer-reasoner: {error}", file=sys.stderr)
        return 2
    limits = SafetyLimits()
    places = default_places()
    if args.batch:
        with open(args.batch, encoding="utf-8") as source:
            sink = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
            try:
                run_batch(model, source, sink, places, limits)
            finally:
                if sink is not sys.stdout:
                    sink.close()
        return 0
    if not args.scene or args.say is None:
        print("wafer-reasoner plan: give --scene FILE and --say TEXT, or --batch FILE", file=sys.stderr)
        return 2
    try:
        scene = scene_from_data(yaml.safe_load(Path(args.scene).read_text(encoding="utf-8")), places)
    except (OSError, yaml.YAMLError, SceneError) as error:
        print(f"wafer-reasoner: cannot use scene {args.scene}: {error}", file=sys.stderr)
        return 2
    print(json.dumps(plan_one(model, scene, args.say, limits), indent=2))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="wafer-reasoner", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="plan one utterance or a batch of cases")
    plan.add_argument("--scene", help="scene YAML/JSON file (scenario shape)")
    plan.add_argument("--say", help="the utterance")
    plan.add_argument("--batch", help="JSON lines of {scene, say}")
    plan.add_argument("--out", help="with --batch: write results here instead of stdout")
    plan.add_argument("--model-dir", default=None, help="folder with planner.onnx (default: the shipped model)")
    # prefix_chars="+": every "-..." argument goes to the sub-tool's own parser (REMAINDER alone stops at options)
    for name, help_text in (("eval", "held-out accuracy of the shipped model"),
                            ("emulate", "emulated time on wafer-scale or GPU hardware")):
        commands.add_parser(name, help=help_text, prefix_chars="+").add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "eval":
        from wafer_reasoner.training.evaluate import main as evaluate_main

        return evaluate_main(args.rest)
    if args.command == "emulate":
        from wafer_reasoner.emulator.cli import main as emulate_main

        return emulate_main(args.rest)
    return command_plan(args)


if __name__ == "__main__":
    raise SystemExit(main())
