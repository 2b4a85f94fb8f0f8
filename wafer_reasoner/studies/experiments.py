"""The study's experiments, one function each: the redirect in lockstep simulated time and best-of-N on cluttered
scenes under a deadline, for any (target, hardware, stack) triple and reasoning budget. The runner is
hardware_study.py; the reasoning-budget section is reasoning_study.py."""

from __future__ import annotations

import random
from collections import Counter

from wafer_reasoner.emulator import Emulator
from wafer_reasoner.emulator.deadline import choose_within_deadline
from wafer_reasoner.emulator.stacks import stack_for
from wafer_reasoner.planner.language import PlanSyntaxError, format_plan, parse_plan
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import RobotPose
from wafer_reasoner.runtime.emulation import hardware_profiles, serving_stacks, target_models
from wafer_reasoner.runtime.query import verifier_accepts
from wafer_reasoner.sim.lockstep import Lockstep, path_length_m
from wafer_reasoner.sim.world import World

ARRIVAL_M = 0.3  # "reached the office": base centre this close to the place
START_STEP_S = 0.1  # waiting for the first plan to start the robot, in steps of this
OBJECT_INTENTS = {"bring", "pick", "put", "go_object"}
LIMITS = SafetyLimits()  # the node's default safety limits


# ---- the profiles -------------------------------------------------------------------------------------------


def profile_emulators(target_name: str, profiles: list, serving: bool) -> list:
    """[(label, Emulator)]: one per profile entry, "HARDWARE" (its default stack) or "HARDWARE/STACK"."""
    hardware, stacks, targets = hardware_profiles(), serving_stacks(), target_models()
    target = targets[target_name]
    found = []
    for entry in profiles:
        name, _, stack = str(entry).partition("/")
        stack = stack_for(*stacks, hardware[name], stack or None)
        found.append((str(entry), Emulator(target, hardware[name], stack, serving=serving)))
    return found


# ---- (a) redirect --------------------------------------------------------------------------------------------


def redirect_run(model, emulator: Emulator, places, settings: dict, limits=LIMITS, *, label: str | None = None,
                 reasoning=None) -> dict:
    """One lockstep run of the redirect; the numbers of one profile (``reasoning``: ReasoningSettings charged)."""
    start = RobotPose(**settings["start"])
    run = Lockstep(World(robot=start), model, emulator, limits, places=places, reasoning=reasoning)
    run.say(settings["first"])
    if settings.get("redirect_after_start", False):  # count from when the robot starts to move
        waited_s = 0.0
        while not run.goals and waited_s < settings["observe_s"]:
            run.advance(START_STEP_S)
            waited_s += START_STEP_S
    run.advance(settings["redirect_after_s"])
    said_s = run.now_s
    result = run.say(settings["redirect"])
    run.advance(settings["observe_s"])
    new_goals = [(time_s, goal) for time_s, goal in run.goals if time_s > said_s]
    profile = label or emulator.hardware.name
    if result.status.value != "ok" or not new_goals:
        return {"profile": profile, "plan": result.plan, "status": result.status.value}
    turned_s, goal = new_goals[0]
    arrived = [s.time_s for s in run.trace if s.time_s >= turned_s and
               ((s.x - goal.x) ** 2 + (s.y - goal.y) ** 2) ** 0.5 <= ARRIVAL_M]
    return {
        "profile": profile,
        "stack": emulator.stack.name,
        "plan": result.plan,
        "status": result.status.value,
        "emulated_ms": result.timings_ms["emulated_ms"],
        "reasoning_tokens": result.emulated["reasoning_tokens"],
        "prompt_tokens": result.emulated["prompt_tokens"],
        "plan_tokens": result.emulated["generated_tokens"],
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


def clutter_row(emulator: Emulator, decoded: list, deadline_ms: float, *, label: str | None = None,
                reasoning_tokens: int = 0) -> dict:
    """One profile: how many candidates fit, and how often the kept best one is right (and on time), each candidate
    thinking ``reasoning_tokens`` hidden tokens first."""
    kept, correct, on_time, greedy_on_time, over = [], 0, 0, 0, 0
    for case in decoded:
        choice = choose_within_deadline(emulator, case["prompt_tokens"], case["lengths"], case["scores"],
                                        case["valid"], deadline_ms, reasoning_tokens)
        kept.append(choice.candidates)
        right = case["correct"][choice.index]
        correct += right
        on_time += right and not choice.over_deadline
        greedy_on_time += case["correct"][0] and not choice.over_deadline
        over += choice.over_deadline
    count = len(decoded)
    return {
        "profile": label or emulator.hardware.name,
        "mean_candidates": sum(kept) / count,
        "correct": correct / count,
        "correct_within_deadline": on_time / count,
        "greedy_correct_within_deadline": greedy_on_time / count,
        "over_deadline": over / count,
        "cases": count,
    }
