"""How the robot behaves with a large reasoner on each hardware profile, in simulated time.

    make study                                   # = python -m wafer_reasoner.studies.hardware_study
    python -m wafer_reasoner.studies.hardware_study [--config config/study.yaml] [--out runs/study] [--cases N]

(a) Redirect: the robot drives from the dock to the kitchen; a few seconds later the person says "no, go to the
    office instead". Per profile: the emulated latency of that plan, the time and distance the robot keeps going
    the wrong way before it turns, and when it reaches the office.
(b) Clutter: ambiguous, cluttered scenes (held-out phrasings), best-of-N under a fixed deadline in emulated
    time. The host decodes every candidate once per case; each profile keeps the first n that its batch time
    fits in the deadline (``emulator/deadline.py``), the verifier filters them and the best score wins. Per
    profile: candidates kept, correct plans (exact match with the reference planner) and correct plans
    delivered within the deadline.

The planner model (the shipped one) writes every plan; the target model in config/study.yaml is only charged.
Lockstep simulated time (``sim/lockstep.py``) makes every number repeat exactly, whatever the host. Prints
markdown tables, writes ``study.json`` and, with matplotlib installed (``make study`` installs
requirements-study.txt), ``redirect.png`` and ``clutter.png``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from wafer_reasoner.emulator import Emulator
from wafer_reasoner.emulator.datafiles import read_yaml
from wafer_reasoner.emulator.deadline import choose_within_deadline
from wafer_reasoner.planner.language import PlanSyntaxError, format_plan, parse_plan
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import RobotPose
from wafer_reasoner.runtime.emulation import hardware_profiles, target_models
from wafer_reasoner.runtime.query import verifier_accepts
from wafer_reasoner.runtime.resources import config_file
from wafer_reasoner.sim.lockstep import Lockstep, path_length_m
from wafer_reasoner.sim.scenario import load_places_file
from wafer_reasoner.sim.world import World

ARRIVAL_M = 0.3  # "reached the office": base centre this close to the place
OBJECT_INTENTS = {"bring", "pick", "put", "go_object"}
LIMITS = SafetyLimits()  # the node's default safety limits


# ---- (a) redirect --------------------------------------------------------------------------------------------


def redirect_run(model, emulator: Emulator, places, settings: dict, limits=LIMITS) -> dict:
    """One lockstep run of the redirect; the numbers of one profile."""
    start = RobotPose(**settings["start"])
    run = Lockstep(World(robot=start), model, emulator, limits, places=places)
    run.say(settings["first"])
    run.advance(settings["redirect_after_s"])
    said_s = run.now_s
    result = run.say(settings["redirect"])
    run.advance(settings["observe_s"])
    new_goals = [(time_s, goal) for time_s, goal in run.goals if time_s > said_s]
    if result.status.value != "ok" or not new_goals:
        return {"profile": emulator.hardware.name, "plan": result.plan, "status": result.status.value}
    turned_s, goal = new_goals[0]
    arrived = [s.time_s for s in run.trace if s.time_s >= turned_s and
               ((s.x - goal.x) ** 2 + (s.y - goal.y) ** 2) ** 0.5 <= ARRIVAL_M]
    return {
        "profile": emulator.hardware.name,
        "plan": result.plan,
        "status": result.status.value,
        "emulated_ms": result.timings_ms["emulated_ms"],
        "reaction_s": turned_s - said_s,
        "wrong_way_m": path_length_m(run.trace, said_s, turned_s),
        "arrival_s": arrived[0] - said_s if arrived else None,
    }


# ---- (b) clutter ---------------------------------------------------------------------------------------------


def clutter_cases(settings: dict) -> list:
    """Held-out-phrasing examples whose scenes are cluttered and have a label to tell apart."""
    from wafer_reasoner.training.corpus import sample_example  # the study's data generator, not a node's

    rng = random.Random(settings["seed"])
    cases = []
    while len(cases) < settings["cases"]:
        example = sample_example(rng, 1)
        scene = example["scene"]
        counts = Counter(obj.label for obj in scene.objects)
        if (len(scene.objects) >= settings["min_objects"] and counts and
                max(counts.values()) >= settings["min_same_label"] and OBJECT_INTENTS & set(example["intents"])):
            cases.append(example)
    return cases


def canonical(text: str) -> str:
    try:
        return format_plan(parse_plan(text))
    except PlanSyntaxError:
        return ""


def decode_candidates(model, cases, limits=LIMITS) -> list:
    """Per case, once on the host: prompt tokens, and per candidate row (tokens, score, valid, correct)."""
    decoded = []
    for example in cases:
        scene = example["scene"]
        generation = model.generate(scene, example["say"])
        accept = verifier_accepts(scene, limits, now_s=scene.stamp_s, utterance=example["say"])
        texts = generation.candidate_texts or (generation.text,)
        finished = generation.candidate_finished or (True,)
        decoded.append({
            "prompt_tokens": generation.prompt_tokens,
            "lengths": generation.candidate_tokens or (generation.tokens,),
            "scores": generation.candidate_scores or (generation.score,),
            "valid": tuple(done and accept(text) for text, done in zip(texts, finished)),
            "correct": tuple(canonical(text) == example["plan"] for text in texts),
        })
    return decoded


def clutter_row(emulator: Emulator, decoded: list, deadline_ms: float) -> dict:
    """One profile: how many candidates fit, and how often the kept best one is right (and on time)."""
    kept, correct, on_time, greedy_on_time, over = [], 0, 0, 0, 0
    for case in decoded:
        choice = choose_within_deadline(emulator, case["prompt_tokens"], case["lengths"], case["scores"],
                                        case["valid"], deadline_ms)
        kept.append(choice.candidates)
        right = case["correct"][choice.index]
        correct += right
        on_time += right and not choice.over_deadline
        greedy_on_time += case["correct"][0] and not choice.over_deadline
        over += choice.over_deadline
    count = len(decoded)
    return {
        "profile": emulator.hardware.name,
        "mean_candidates": sum(kept) / count,
        "correct": correct / count,
        "correct_within_deadline": on_time / count,
        "greedy_correct_within_deadline": greedy_on_time / count,
        "over_deadline": over / count,
        "cases": count,
    }


# ---- running it ----------------------------------------------------------------------------------------------


def emulators(settings: dict) -> list:
    hardware, targets = hardware_profiles(), target_models()
    target = targets[settings["target_model"]]
    return [Emulator(target, hardware[name]) for name in settings["profiles"]]


def run_study(settings: dict, *, model_dir=None) -> dict:
    from wafer_reasoner.engine.fast_engine import EngineConfig
    from wafer_reasoner.engine.planner_model import PlannerModel

    places = load_places_file(str(config_file("semantic_map.yaml")))
    pairs = emulators(settings)
    greedy = PlannerModel(model_dir)
    redirect = [redirect_run(greedy, emulator, places, settings["redirect"]) for emulator in pairs]
    clutter = settings["clutter"]
    best_of_n = PlannerModel(model_dir, engine_config=EngineConfig(
        candidates=clutter["candidates"], temperature=clutter["temperature"], top_k=clutter["top_k"],
        seed=clutter["engine_seed"]))
    decoded = decode_candidates(best_of_n, clutter_cases(clutter))
    rows = [clutter_row(emulator, decoded, clutter["deadline_ms"]) for emulator in pairs]
    return {"target_model": settings["target_model"], "redirect": redirect, "clutter": rows,
            "settings": settings}


def _number(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def tables(study: dict) -> str:
    target, clutter = study["target_model"], study["settings"]["clutter"]
    redirect = study["settings"]["redirect"]
    lines = [
        f"(a) '{redirect['redirect']}' {redirect['redirect_after_s']:g} s after '{redirect['first']}'; "
        f"{target} charged (emulated), simulated time",
        "",
        "| profile | emulated plan latency ms | keeps going the wrong way s | wrong-way distance m | "
        "at the office after s |",
        "|---|---|---|---|---|",
    ]
    for row in study["redirect"]:
        lines.append(f"| {row['profile']} | {_number(row.get('emulated_ms'), 1)} | {_number(row.get('reaction_s'), 3)} "
                     f"| {_number(row.get('wrong_way_m'), 3)} | {_number(row.get('arrival_s'), 2)} |")
    lines += [
        "",
        f"(b) {study['clutter'][0]['cases']} ambiguous cluttered scenes, best-of-{clutter['candidates']} under a "
        f"{clutter['deadline_ms']:g} ms deadline (emulated {target})",
        "",
        "| profile | candidates kept (mean) | correct plan | correct within deadline | greedy only, within deadline "
        "| over deadline |",
        "|---|---|---|---|---|---|",
    ]
    for row in study["clutter"]:
        lines.append(f"| {row['profile']} | {row['mean_candidates']:.2f} | {row['correct']:.1%} | "
                     f"{row['correct_within_deadline']:.1%} | {row['greedy_correct_within_deadline']:.1%} | "
                     f"{row['over_deadline']:.1%} |")
    return "\n".join(lines)


def plots(study: dict, out: Path) -> list:
    """redirect.png and clutter.png; [] (with a message) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots (pip install -r requirements-study.txt)", file=sys.stderr)
        return []
    target = study["target_model"]
    written = []
    rows = [row for row in study["redirect"] if "wrong_way_m" in row]
    figure, axis = plt.subplots(figsize=(7, 4))
    axis.bar([row["profile"] for row in rows], [row["wrong_way_m"] for row in rows], color="tab:red")
    axis.set_ylabel("distance driven the wrong way (m)")
    axis.set_title(f"'{study['settings']['redirect']['redirect']}': {target}, emulated, simulated time")
    for index, row in enumerate(rows):
        axis.annotate(f"{row['emulated_ms']:.0f} ms", (index, row["wrong_way_m"]), ha="center", va="bottom")
    figure.tight_layout()
    figure.savefig(out / "redirect.png", dpi=120)
    written.append(out / "redirect.png")
    plt.close(figure)
    rows = study["clutter"]
    figure, axis = plt.subplots(figsize=(7, 4))
    names = [row["profile"] for row in rows]
    positions = range(len(rows))
    axis.bar([p - 0.2 for p in positions], [row["correct"] for row in rows], 0.4, label="correct plan")
    axis.bar([p + 0.2 for p in positions], [row["correct_within_deadline"] for row in rows], 0.4,
             label="correct within deadline")
    axis.set_xticks(list(positions), names)
    axis.set_ylim(0, 1)
    axis.set_ylabel("share of cases")
    clutter = study["settings"]["clutter"]
    axis.set_title(f"best-of-{clutter['candidates']}, {clutter['deadline_ms']:g} ms deadline: {target}, emulated")
    axis.legend(loc="lower left")
    figure.tight_layout()
    figure.savefig(out / "clutter.png", dpi=120)
    written.append(out / "clutter.png")
    plt.close(figure)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=None, help="study settings (default: config/study.yaml)")
    parser.add_argument("--out", default="runs/study", help="folder for study.json and the plots")
    parser.add_argument("--cases", type=int, default=None, help="clutter cases (overrides the config)")
    parser.add_argument("--model-dir", default=None, help="planner model folder (default: the shipped one)")
    args = parser.parse_args(argv)
    settings = read_yaml(config_file("study.yaml", args.config))
    if args.cases is not None:
        settings["clutter"]["cases"] = args.cases
    study = run_study(settings, model_dir=args.model_dir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "study.json").write_text(json.dumps(study, indent=1), encoding="utf-8")
    print(tables(study))
    for path in plots(study, out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
