"""``wafer-reasoner plan``: plan utterances against scenes from files, through the reasoner core.

    wafer-reasoner plan --scene SCENE.yaml --say "bring me the red cup"
    wafer-reasoner plan --batch CASES.jsonl [--out RESULTS.jsonl]

A scene file has the scenario shape: ``robot: {x, y, yaw}``, ``objects``, ``people``, ``places`` (optional:
the package's semantic map is used when absent), optional ``holding``; a scenario file with a ``scene:`` key
works too. Batch lines are ``{"scene": {...}, "say": "..."}``; each gets one output line: the ``reasoner/plan``
record the node would publish (``plan``, ``status`` ok/clarify/rejected, ``reasons``, timings, the emulated
time of config/emulator.yaml's pair) plus ``latency_ms``. Offline planning treats the scene as fresh (its stamp is
"now") and the robot pose as known.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import SceneError, scene_from_dict
from wafer_reasoner.runtime.core import PlanRecord, ReasonerCore
from wafer_reasoner.runtime.resources import ResourceError, config_file
from wafer_reasoner.sim.scenario import ScenarioError, load_places_file


def add_parser(commands) -> None:
    plan = commands.add_parser("plan", help="plan one utterance or a batch of cases")
    plan.add_argument("--scene", help="scene YAML/JSON file (scenario shape)")
    plan.add_argument("--say", help="the utterance")
    plan.add_argument("--batch", help="JSON lines of {scene, say}")
    plan.add_argument("--out", help="with --batch: write results here instead of stdout")
    plan.add_argument("--model-dir", default=None, help="folder with planner.onnx (default: the shipped model)")


def default_places() -> tuple:
    """Named places of the package's semantic map."""
    return load_places_file(str(config_file("semantic_map.yaml")))


def scene_from_data(data, places: tuple):
    if isinstance(data, dict) and isinstance(data.get("scene"), dict):
        data = data["scene"]
    if isinstance(data, dict) and not data.get("places"):
        return scene_from_dict(data, places=list(places))
    return scene_from_dict(data)


def plan_one(model, emulator, scene, say: str, limits: SafetyLimits) -> dict:
    """The plan record a fresh reasoner publishes for ``say`` in ``scene``."""
    core = ReasonerCore(model, emulator, limits, Executor(limits), places=scene.places)
    now_s = scene.stamp_s
    core.on_scene(scene, now_s)
    core.on_odom(scene.robot, None, now_s)
    record = next(item for item in core.on_utterance(say, now_s) if isinstance(item, PlanRecord))
    body = record.result.to_json_dict()
    body["latency_ms"] = body["timings_ms"]["host_total_ms"]
    return body


def _batch_line(model, emulator, line: str, places: tuple, limits: SafetyLimits) -> dict:
    try:
        case = json.loads(line)
        if not isinstance(case, dict) or not isinstance(case.get("say"), str):
            raise SceneError('each line must be {"scene": {...}, "say": "..."}')
        scene = scene_from_data(case.get("scene", {}), places)
    except (ValueError, SceneError) as error:
        return {"plan": "", "status": "rejected", "reasons": [f"bad case: {error}"], "latency_ms": 0.0}
    return plan_one(model, emulator, scene, case["say"], limits)


def run_batch(model, emulator, source, sink, places: tuple, limits: SafetyLimits) -> int:
    count = 0
    for line in source:
        if not line.strip():
            continue
        sink.write(json.dumps(_batch_line(model, emulator, line, places, limits)) + "\n")
        count += 1
    return count


def command_plan(args) -> int:
    from wafer_reasoner.emulator import EmulatorDataError
    from wafer_reasoner.engine.planner_model import ModelLoadError, PlannerModel
    from wafer_reasoner.runtime.emulation import emulator_for

    try:
        model = PlannerModel(args.model_dir)
        emulator = emulator_for(planner_dir=model.model_dir)
        places = default_places()
    except (ModelLoadError, EmulatorDataError, ResourceError, ScenarioError) as error:
        print(f"wafer-reasoner: {error}", file=sys.stderr)
        return 2
    limits = SafetyLimits()
    if args.batch:
        with open(args.batch, encoding="utf-8") as source:
            sink = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
            try:
                run_batch(model, emulator, source, sink, places, limits)
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
    print(json.dumps(plan_one(model, emulator, scene, args.say, limits), indent=2))
    return 0
