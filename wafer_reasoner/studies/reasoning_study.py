"""Reasoning budgets in the hardware study: a high-reasoning target thinks 1,000-4,000 hidden tokens before it
writes its plan. Per profile (a hardware and its serving stack):

(c1) how long it takes to react: the redirect's plan charged with each budget;
(c2) how many best-of-N candidates fit a 1 s and a 5 s deadline, each candidate thinking the budget first: the
     most that fit (of MAX_CANDIDATES) for the median prompt and plan of the cluttered scenes of (b), and how often
     best-of-8 on those scenes delivers a correct plan in time;
(c3) the redirect run again in lockstep with the reasoning target, its budget drawn per query from a range.

The host's planner writes every plan (the same plans as without reasoning); only the time charged changes.
"""

from __future__ import annotations

import statistics

from wafer_reasoner.emulator.reasoning import ReasoningBudget, ReasoningSettings
from wafer_reasoner.studies.experiments import clutter_row, profile_emulators, redirect_run

MAX_CANDIDATES = 64  # the most best-of-N candidates (c2) looks for


def _number(value, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def reaction_rows(pairs: list, prompt_tokens: int, plan_tokens: int, budgets: list) -> list:
    """(c1) per profile: seconds from the query to the plan, for each budget."""
    return [{"profile": label, "stack": emulator.stack.name,
             "reaction_s": {str(budget): emulator.plan_time(prompt_tokens, plan_tokens,
                                                            reasoning_tokens=budget).total_s for budget in budgets}}
            for label, emulator in pairs]


def most_candidates(emulator, prompt_tokens: int, plan_tokens: int, reasoning_tokens: int, deadline_ms: float,
                    cap: int = MAX_CANDIDATES) -> int:
    """The most candidates (<= cap) whose batch, each thinking ``reasoning_tokens`` first, fits the deadline; 0
    when not even one does. A batch's time grows with its size, so the count is found by bisection."""
    def fits(count: int) -> bool:
        timing = emulator.plan_time(prompt_tokens, plan_tokens, candidates=count, reasoning_tokens=reasoning_tokens)
        return timing.emulated_ms <= deadline_ms

    if not fits(1):
        return 0
    low, high = 1, cap
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def candidate_rows(pairs: list, decoded: list, budgets: list, deadlines_ms: list) -> list:
    """(c2) per profile and budget, for each deadline: the most candidates that fit the median case, and how often
    best-of-N on the decoded cases delivers a correct plan within it."""
    prompt = int(statistics.median(case["prompt_tokens"] for case in decoded))
    plan = int(statistics.median(max(case["lengths"]) for case in decoded))
    rows = []
    for label, emulator in pairs:
        for budget in budgets:
            per_deadline = {}
            for deadline in deadlines_ms:
                row = clutter_row(emulator, decoded, deadline, label=label, reasoning_tokens=budget)
                per_deadline[str(deadline)] = {
                    "most_candidates": most_candidates(emulator, prompt, plan, budget, deadline),
                    "correct_within_deadline": row["correct_within_deadline"],
                    "over_deadline": row["over_deadline"]}
            rows.append({"profile": label, "reasoning_tokens": budget, "deadlines": per_deadline})
    return rows


def run_reasoning(settings: dict, model, places, decoded: list) -> dict:
    """The three parts of the reasoning section for ``settings`` (config/study.yaml's ``reasoning``)."""
    pairs = profile_emulators(settings["target_model"], settings["profiles"], settings["serving_overhead"])
    redirect = settings["redirect"]
    drawn = ReasoningSettings(default=ReasoningBudget(**redirect["budget"]))
    runs = [redirect_run(model, emulator, places, redirect, label=label, reasoning=drawn)
            for label, emulator in pairs]
    plain = next(row for row in runs if "prompt_tokens" in row)
    return {
        "target_model": settings["target_model"],
        "reaction": reaction_rows(pairs, plain["prompt_tokens"], plain["plan_tokens"], settings["budgets"]),
        "candidates": candidate_rows(pairs, decoded, settings["budgets"], settings["deadlines_ms"]),
        "redirect": runs,
    }


def tables(section: dict, settings: dict) -> str:
    budgets, deadlines = settings["budgets"], settings["deadlines_ms"]
    target = section["target_model"]
    lines = [f"(c1) {target} thinking before it plans the redirect: emulated seconds from the query to the plan", "",
             "| profile | stack | " + " | ".join(f"{b:,} tokens" for b in budgets) + " |",
             "|---|---|" + "---|" * len(budgets)]
    for row in section["reaction"]:
        lines.append(f"| {row['profile']} | {row['stack']} | "
                     + " | ".join(f"{row['reaction_s'][str(b)]:.2f}" for b in budgets) + " |")
    cases = settings.get("cases", "the")
    lines += ["", f"(c2) best-of-N with every candidate thinking the budget first: the most candidates (of "
              f"{MAX_CANDIDATES}) that fit each deadline for the median cluttered scene, and how often best-of-"
              f"{settings['candidates']} on the {cases} scenes of (b) delivers a correct plan within it", "",
              "| profile | reasoning tokens | " + " | ".join(f"fit {d / 1000:g} s" for d in deadlines) + " | "
              + " | ".join(f"correct within {d / 1000:g} s" for d in deadlines) + " |",
              "|---|---|" + "---|" * (2 * len(deadlines))]
    for row in section["candidates"]:
        fit = [str(row["deadlines"][str(d)]["most_candidates"]) for d in deadlines]
        correct = [f"{row['deadlines'][str(d)]['correct_within_deadline']:.1%}" for d in deadlines]
        lines.append(f"| {row['profile']} | {row['reasoning_tokens']:,} | " + " | ".join(fit + correct) + " |")
    budget = settings["redirect"]["budget"]
    lines += ["", f"(c3) the redirect with {target} thinking {budget['min_tokens']:,}-{budget['max_tokens']:,} tokens "
              "(drawn per query)", "",
              "| profile | reasoning tokens | emulated plan latency s | keeps going the wrong way s | "
              "wrong-way distance m | at the office after s |", "|---|---|---|---|---|---|"]
    for row in section["redirect"]:
        latency = row.get("emulated_ms")
        lines.append(f"| {row['profile']} | {_number(row.get('reasoning_tokens'), 0)} | "
                     f"{_number(latency / 1000 if latency is not None else None, 2)} | "
                     f"{_number(row.get('reaction_s'), 2)} | {_number(row.get('wrong_way_m'), 2)} | "
                     f"{_number(row.get('arrival_s'), 2)} |")
    return "\n".join(lines)
