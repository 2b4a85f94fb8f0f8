"""`wafer-reasoner plan`: one scene file, and a batch of JSON lines with a bad line among them."""

import json

import pytest
import yaml

from wafer_reasoner.cli import main
from wafer_reasoner.engine.planner_model import MODEL_FILE, SHIPPED_MODEL_DIR

pytestmark = pytest.mark.skipif(
    not (SHIPPED_MODEL_DIR / MODEL_FILE).is_file(), reason="the shipped model is absent (run `make train`)"
)

SCENE = {
    "robot": {"x": 0.0, "y": 0.0, "yaw": 0.0},
    "objects": [
        {"id": "cup_red", "label": "cup", "color": "red", "x": 2.0, "y": 1.0, "z": 0.8},
        {"id": "cup_blue", "label": "cup", "color": "blue", "x": -2.0, "y": 1.5, "z": 0.8},
        {"id": "book_1", "label": "book", "color": "green", "x": 1.0, "y": -2.5, "z": 0.8},
    ],
    "people": [{"id": "user", "x": -1.0, "y": -1.0}],
    "places": [{"name": "kitchen", "x": 4.0, "y": 4.0}, {"name": "dock", "x": -4.0, "y": 0.0}],
}
BRING_RED_CUP = "navigate(obj:cup_red); pick(obj:cup_red); navigate(person:user); handover(obj:cup_red, person:user)"


def test_plan_one_scene_file(tmp_path, capsys):
    scene_file = tmp_path / "scene.yaml"
    scene_file.write_text(yaml.safe_dump(SCENE))
    assert main(["plan", "--scene", str(scene_file), "--say", "bring me the red cup"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["plan"] == BRING_RED_CUP
    assert result["status"] == "ok"
    assert result["latency_ms"] > 0 and result["tokens"] > 0


def test_batch_writes_one_line_per_case_and_survives_a_bad_line(tmp_path):
    cases = tmp_path / "cases.jsonl"
    lines = [
        json.dumps({"scene": SCENE, "say": "bring me the red cup"}),
        "{this is not json",
        json.dumps({"scene": SCENE, "say": "bring me the cup"}),
        json.dumps({"scene": SCENE, "say": "stop"}),
    ]
    cases.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["plan", "--batch", str(cases), "--out", str(out)]) == 0
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in results] == ["ok", "rejected", "clarify", "ok"]
    assert results[0]["plan"] == BRING_RED_CUP
    assert "bad case" in results[1]["reasons"][0]
    assert results[2]["plan"] == "clarify(ambiguous:cup)"
    assert results[3]["plan"] == "stop()"
    assert all("latency_ms" in r for r in results)


def test_missing_scene_file_is_a_clear_error(tmp_path, capsys):
    assert main(["plan", "--scene", str(tmp_path / "nope.yaml"), "--say", "stop"]) == 2
    assert "nope.yaml" in capsys.readouterr().err
