"""The blind sets: commands, scenes and expected plans written by authors who never saw the training generator.

Each line of ``test/data/blind/blind_*.jsonl`` is ``{"id", "style", "kind", "say", "scene", "expect"}``; the scene
has the scenario shape (``robot``, ``objects``, ``people``, ``places``, ``holding``). The authors worked from
``docs/action_language.md`` and the scene format only; their notes are beside the sets. Never tune on a set's
failures one by one: a fresh set, written the same way, is the check.
"""

from __future__ import annotations

import json
from pathlib import Path

from wafer_reasoner.planner.scene import scene_from_dict

BLIND_DIR = Path(__file__).resolve().parents[2] / "test" / "data" / "blind"
BLIND_SETS = ("blind_a", "blind_b", "blind_c", "blind_d", "blind_e", "blind_f", "blind_g")


# development sets, written the same way (from the contract alone) to be read: where the planner's rules were
# checked and mended. Their figures measure nothing blind (docs/MODEL_CARD.md)
DEV_DIR = BLIND_DIR.parent / "dev"
DEV_SETS = ("dev_r", "dev_s", "dev_t")


def dev_path(name: str) -> Path:
    return DEV_DIR / f"{name}.jsonl"


def blind_path(name: str) -> Path:
    return BLIND_DIR / f"{name}.jsonl"


def load_blind(path) -> list:
    """Examples in evaluate()'s shape: scene, say, plan (the expected one), category (the case's kind), style."""
    examples = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            case = json.loads(line)
            examples.append({"scene": scene_from_dict(case["scene"]), "say": case["say"], "plan": case["expect"],
                             "category": case["kind"], "style": case["style"], "id": case["id"]})
    return examples
