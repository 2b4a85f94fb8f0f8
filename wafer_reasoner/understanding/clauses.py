"""Clause by clause: a long command is planned one part at a time.

The planner is near perfect on one clause and loses its way in long compositions it never trained on (four
clauses). Connectors that can only join clauses split the utterance: "then" (and "than", which a recogniser
writes for it), "after that", "afterwards", "finally", each with an optional "and" and punctuation before it.
A bare "and" or comma is never a split ("go and get the cup", "the red cup, bring it to me"); a part that still
holds two clauses is one the model was trained on. Each part is planned with the robot's state after the parts
before it (what it holds), and the parts' plans are joined as the contract joins clauses: the first refusal is
the whole plan, otherwise the steps in order.
"""

from __future__ import annotations

import re
from dataclasses import replace

from wafer_reasoner.planner.language import Handover, Pick, PlaceOn, PlanSyntaxError, parse_plan

_CONNECTOR = re.compile(r"[,.;!?]?\s*\b(?:and\s+)?(?:then|than|after\s+that|afterwards|finally)\b[,.]?", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]")


def split_clauses(utterance: str) -> list:
    """The utterance's parts between clause connectors (parts without a word dropped); one part if none."""
    parts = [part.strip(" ,.;!?") for part in _CONNECTOR.split(utterance)]
    return [part for part in parts if _WORD.search(part)] or [utterance]


def join_plans(plans: list) -> str:
    """The contract's composition: the first refusal (in clause order) is the plan, else the steps in order."""
    refusal = next((plan for plan in plans if plan.startswith("clarify(")), None)
    return refusal if refusal is not None else "; ".join(plans)


def scene_after(scene, plan_text: str):
    """The scene as the next part sees it: holding what the plan's last pick left in hand (none after a place
    or a handover). An unparseable plan changes nothing."""
    try:
        steps = parse_plan(plan_text)
    except PlanSyntaxError:
        return scene
    holding = scene.holding
    for step in steps:
        if isinstance(step, Pick):
            holding = step.obj.name
        elif isinstance(step, (PlaceOn, Handover)) and step.obj.name == holding:
            holding = ""
    return scene if holding == scene.holding else replace(scene, holding=holding)
