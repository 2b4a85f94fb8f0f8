"""How the robot behaves with a large reasoner on each hardware profile, in simulated time.

    make study                                   # = python -m wafer_reasoner.studies.hardware_study
    python -m wafer_reasoner.studies.hardware_study [--config config/study.yaml] [--out runs/study] [--cases N]

A profile is a hardware name (run under its default serving stack, config/stacks.yaml) or "HARDWARE/STACK".

(a) Redirect: the robot drives from the dock to the kitchen; a few seconds later the person says "no, go to the
    office instead". Per profile: the emulated latency of that plan, the time and distance the robot keeps going
    the wrong way before it turns, and when it reaches the office.
(b) Clutter: ambiguous, cluttered scenes (held-out phrasings), best-of-N under a fixed deadline in emulated
    time. The host decodes every candidate once per case; each profile keeps the first n that its batch time
    fits in the deadline (``emulator/deadline.py``), the verifier filters them and the best score wins. Per
    profile: candidates kept, correct plans (exact match with the reference planner) and correct plans
    delivered within the deadline.
(c) Reasoning budgets (reasoning_study.py): a high-reasoning target thinking 1,000-4,000 hidden tokens first.

The planner model (the shipped one) writes every plan; the target models in config/study.yaml are only charged.
Lockstep simulated time (``sim/lockstep.py``) makes every number repeat exactly, whatever the host. Prints
markdown tables, writes ``study.json`` and, with matplotlib installed (``make study`` installs the pinned
requirements-study.txt), ``redirect.png``, ``clutter.png``, ``reasoning_reaction.png``,
``reasoning_candidates.png`` and ``reasoning_redirect.png``, the same bytes every run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wafer_reasoner.emulator.datafiles import read_yaml
from wafer_reasoner.runtime.resources import config_file
from wafer_reasoner.sim.scenario import load_places_file
from wafer_reasoner.studies import plots, reasoning_study
from wafer_reasoner.studies.experiments import (  # noqa: F401  (the study's experiments, importable from here)
    canonical,
    clutter_cases,
    clutter_row,
    decode_candidates,
    profile_emulators,
    redirect_run,
)


def run_study(settings: dict, *, model_dir=None) -> dict:
    from wafer_reasoner.engine.fast_engine import EngineConfig
    from wafer_reasoner.engine.planner_model import PlannerModel

    places = load_places_file(str(config_file("semantic_map.yaml")))
    pairs = profile_emulators(settings["target_model"], settings["profiles"], settings["serving_overhead"])
    greedy = PlannerModel(model_dir)
    redirect = [redirect_run(greedy, emulator, places, settings["redirect"], label=label)
                for label, emulator in pairs]
    clutter = settings["clutter"]
    best_of_n = PlannerModel(model_dir, engine_config=EngineConfig(
        candidates=clutter["candidates"], temperature=clutter["temperature"], top_k=clutter["top_k"],
        seed=clutter["engine_seed"]))
    decoded = decode_candidates(best_of_n, clutter_cases(clutter))
    rows = [clutter_row(emulator, decoded, clutter["deadline_ms"], label=label) for label, emulator in pairs]
    reasoning = reasoning_study.run_reasoning(_reasoning_settings(settings), greedy, places, decoded)
    return {"target_model": settings["target_model"], "redirect": redirect, "clutter": rows,
            "reasoning": reasoning, "settings": settings}


def _reasoning_settings(settings: dict) -> dict:
    """The reasoning section's settings, with the profiles, serving and candidates of the study."""
    return {**settings["reasoning"], "profiles": settings["profiles"], "serving_overhead": settings["serving_overhead"],
            "candidates": settings["clutter"]["candidates"], "cases": settings["clutter"]["cases"]}


def _number(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def tables(study: dict) -> str:
    target, clutter = study["target_model"], study["settings"]["clutter"]
    redirect = study["settings"]["redirect"]
    lines = [
        f"(a) '{redirect['redirect']}' {redirect['redirect_after_s']:g} s after '{redirect['first']}'; "
        f"{target} charged (emulated), simulated time",
        "",
        "| profile | stack | emulated plan latency ms | keeps going the wrong way s | wrong-way distance m | "
        "at the office after s |",
        "|---|---|---|---|---|---|",
    ]
    for row in study["redirect"]:
        lines.append(f"| {row['profile']} | {row.get('stack', '-')} | {_number(row.get('emulated_ms'), 1)} | "
                     f"{_number(row.get('reaction_s'), 3)} | {_number(row.get('wrong_way_m'), 3)} | "
                     f"{_number(row.get('arrival_s'), 2)} |")
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
    lines += ["", reasoning_study.tables(study["reasoning"], _reasoning_settings(study["settings"]))]
    return "\n".join(lines)


def write_plots(study: dict, out: Path) -> list:
    """The study's PNGs; [] (with a message) without matplotlib."""
    plt = plots.pyplot()
    if plt is None:
        return []
    target, settings = study["target_model"], study["settings"]
    clutter, reasoning = settings["clutter"], study["reasoning"]
    budget = settings["reasoning"]["redirect"]["budget"]
    return [
        plots.redirect_plot(plt, study["redirect"], f"'{settings['redirect']['redirect']}': {target}, emulated, "
                            "simulated time", out / "redirect.png"),
        plots.clutter_plot(plt, study["clutter"], f"best-of-{clutter['candidates']}, {clutter['deadline_ms']:g} ms "
                           f"deadline: {target}, emulated", out / "clutter.png"),
        plots.reaction_plot(plt, reasoning["reaction"], settings["reasoning"]["budgets"],
                            f"{reasoning['target_model']}: time to the redirect's plan after thinking",
                            out / "reasoning_reaction.png"),
        plots.candidates_plot(plt, reasoning["candidates"], settings["reasoning"]["deadlines_ms"],
                              f"candidates (of {reasoning_study.MAX_CANDIDATES}) that fit each deadline, each "
                              f"thinking first: {reasoning['target_model']}",
                              out / "reasoning_candidates.png"),
        plots.redirect_plot(plt, reasoning["redirect"],
                            f"'{settings['redirect']['redirect']}': {reasoning['target_model']} thinking "
                            f"{budget['min_tokens']:,}-{budget['max_tokens']:,} tokens",
                            out / "reasoning_redirect.png"),
    ]


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
    for path in write_plots(study, out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
