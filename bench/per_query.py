"""Per-query latency against onnxruntime-genai, measured as a new user would (bench_engine.py's headline table).

Each round loads both afresh: ``PlannerModel(model_dir)`` with its defaults (the fast engine on its best export,
the grammar, drafts, clause by clause) and onnxruntime-genai 0.18 on the float32 genai-readable ``planner.onnx``
(greedy, the same prompt). A query is timed from (scene, utterance) to plan text, prompt building included for
both. Queries are held-out phrasings on the package's map (config/semantic_map.yaml, plus the places the expected
plan names), interleaved query by query with the order rotating; every round has its own queries. Reported per
round: p50 and p99 of each, the ratio genai p50 / this engine's p50, and exact match against the expected plan.
Not a test: nothing here asserts timings.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.engine.prompt import build_prompt, tokens_to_plan
from wafer_reasoner.planner.scene import NamedPlace
from wafer_reasoner.training import speech_corpus

REPO = Path(__file__).resolve().parents[1]
PACKAGE_MAP = REPO / "config" / "semantic_map.yaml"
WARMUP = 3  # queries run by both before a round's timing (first touch of arenas and caches), not counted


def package_places() -> tuple:
    data = yaml.safe_load(PACKAGE_MAP.read_text(encoding="utf-8"))
    return tuple(NamedPlace(p["name"], float(p["x"]), float(p["y"]), float(p.get("yaw", 0.0)))
                 for p in data["places"])


def package_map_queries(count: int, seed: int) -> list:
    """(scene, utterance, expected plan): held-out phrasings, each scene on the package's map plus the places
    its expected plan names (so the expected plan stays right)."""
    rng, base = random.Random(seed), package_places()
    queries = []
    for _ in range(count):
        example = speech_corpus.sample(rng, speech_corpus.HELDOUT)
        named = [p for p in example["scene"].places if f"place:{p.name}" in example["plan"]]
        places = tuple(named) + tuple(p for p in base if p.name not in {n.name for n in named})
        queries.append((replace(example["scene"], places=places), example["say"], example["plan"]))
    return queries


class GenaiPlanner:
    """(scene, utterance) -> plan text with onnxruntime-genai greedy decoding of the same prompt."""

    def __init__(self, folder: Path, tokenizer, max_new_tokens: int):
        import onnxruntime_genai as og

        self.og, self.model = og, og.Model(str(folder))
        self.tokenizer, self.max_new_tokens = tokenizer, max_new_tokens

    def __call__(self, scene, say) -> str:
        prompt = build_prompt(scene, say, self.tokenizer)
        ids = np.array([[self.tokenizer.id(t) for t in prompt.tokens]], dtype=np.int32)  # [1, S]
        params = self.og.GeneratorParams(self.model)
        params.set_search_options(max_length=ids.shape[1] + self.max_new_tokens, do_sample=False)
        generator = self.og.Generator(self.model, params)
        generator.append_tokens(ids)
        while not generator.is_done():
            generator.generate_next_token()
        out = [int(t) for t in generator.get_sequence(0)[ids.shape[1]:]]
        return tokens_to_plan([self.tokenizer.tokens[t] for t in out], prompt)


def one_round(model_dir: Path, genai_folder: Path, threads: int, queries: list, shift: int) -> dict:
    ours = PlannerModel(model_dir, threads=threads)
    planners = {"this engine": lambda scene, say: ours.generate(scene, say).text,
                "genai": GenaiPlanner(genai_folder, ours.tokenizer, ours.max_new_tokens)}
    for scene, say, _ in queries[:WARMUP]:
        for plan in planners.values():
            plan(scene, say)
    times = {name: [] for name in planners}
    correct = {name: 0 for name in planners}
    names = list(planners)
    for index, (scene, say, gold) in enumerate(queries[WARMUP:]):
        turn = (index + shift) % len(names)
        for name in names[turn:] + names[:turn]:
            start = time.perf_counter()
            text = planners[name](scene, say)
            times[name].append((time.perf_counter() - start) * 1e3)
            correct[name] += text == gold
    row = {"export": ours.session.get_modelmeta().custom_metadata_map.get("precision", "float32 (planner.onnx)")}
    for name in names:
        row[f"{name} p50 ms"] = float(np.percentile(times[name], 50))
        row[f"{name} p99 ms"] = float(np.percentile(times[name], 99))
        row[f"{name} exact"] = correct[name] / len(times[name])
    row["ratio p50"] = row["genai p50 ms"] / row["this engine p50 ms"]
    row["ratio p99"] = row["genai p99 ms"] / row["this engine p99 ms"]
    return row


def per_query_table(model_dir: Path, genai_folder: Path, threads: int, rounds: int = 3, queries: int = 140) -> dict:
    rows = [one_round(model_dir, genai_folder, threads, package_map_queries(queries + WARMUP, 9000 + r), r)
            for r in range(rounds)]
    ratios = [row["ratio p50"] for row in rows]
    return {"rounds": rows, "ratio_p50_median": statistics.median(ratios), "ratio_p50_min": min(ratios),
            "queries_per_round": queries}
