"""Engine benchmarks: the fast engine against onnxruntime-genai on the same model file, and alone.

    .venv/bin/python bench/bench_engine.py [--model-dir DIR] [--rounds 9] [--queries 40] [--validity 10000]
                                           [--json runs/bench_engine.json]

Prints markdown tables (and writes them as JSON):

(q) per query, as a new user would measure it (bench/per_query.py): 3 rounds of 140 held-out queries on the
    package's map, each round with a fresh PlannerModel (its defaults: the best export in the folder) and a fresh
    onnxruntime-genai on the float32 planner.onnx, interleaved; wall time from (scene, utterance) to plan text;
    p50/p99 per round and the ratio of the p50s.
(a) genai vs this engine, batch 1, greedy, runs interleaved query by query (engine order rotating) so the
    machine's drift cancels. Per round: plan tokens/s = finished plan tokens (forced and drafted tokens and <eos>
    included) over wall time from prompt ids to finished plan (prefill included; this engine's time includes
    building the grammar). Ratios are this engine over genai per round; median and range over rounds.
    Rows: constrained (grammar, forced runs, drafts from past plans), the same without drafts, the same with the
    map part of the prompt pinned (``prepare``: the node's steady state), and plain (unconstrained argmax, no
    tricks: the like-for-like decode).
(b) planning latency through ``PlannerModel.generate`` (prompt, grammar, decode, best pick) for N = 1, 4, 8,
    interleaved over the same fixed query set on one fixed map; p50/p90/p99/max.
Every round has its own queries (a fixed, seeded set; none repeats), so no cache ever sees a query twice.
(c) peak resident memory (VmHWM) of a process that loads the engine with N = 8 and plans 300 queries, next to a
    process that only imports the same modules.
(d) decode rate against the host's bound: single-token decode steps/s vs measured memory bandwidth (with the
    engine's thread count) / bytes read per step: the weights one step reads (the export's ``step_weight_bytes``
    metadata: every matrix, one row of each embedding table; planner.onnx: its file size) + the KV cache at the
    mean context; for each export in the folder (kv-int8, kv, and planner.onnx run by this engine).
(e) thread settings: plan tokens/s with intra-op threads 1 and 2, interleaved; each engine then runs with 2 threads
    only if 2 was faster in every round of the sweep (the engine's default, 1, is chosen from this).
(f) validity: share of constrained outputs that parse over --validity random scene/utterance cases (greedy) plus
    a tenth as many best-of-4 sampled candidates.

genai needs a genai_config.json with model type "decoder" and no keys of its own; when the model folder has an
older one (type "gpt2", a "wafer_reasoner" block), a corrected copy is written to a temporary folder next to a
symlink to the SAME planner.onnx, and the table says so. Without onnxruntime-genai installed (pip install -r
requirements-bench.txt), (a) is skipped with a message. Not a test: nothing here asserts timings.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's wafer_reasoner

from wafer_reasoner.engine.fast_engine import EngineConfig  # noqa: E402
from wafer_reasoner.engine.grammar import grammar_for_query  # noqa: E402
from wafer_reasoner.engine.planner_model import MODEL_FILE, SHIPPED_MODEL_DIR, PlannerModel  # noqa: E402
from wafer_reasoner.engine.prompt import build_prompt, tokens_to_plan  # noqa: E402
from wafer_reasoner.planner.language import PlanSyntaxError, parse_plan  # noqa: E402
from wafer_reasoner.training.corpus import sample_example  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from host_bound import decode_bound  # noqa: E402
from per_query import per_query_table  # noqa: E402

DEFAULT_JSON = REPO / "runs" / "bench_engine.json"
GENAI_ALLOWED_TOP_KEYS = ("model", "search")


# ---- queries -----------------------------------------------------------------------------------------------


def fixed_map_queries(rounds: int, per_round: int, seed: int = 4) -> list:
    """A fixed (seeded) set of distinct (scene, utterance) pairs from the held-out phrasings, split into rounds;
    every scene on the first example's map (a robot has one map). No query repeats, so neither the prefix cache
    nor the drafter ever sees the same query twice."""
    rng = random.Random(seed)
    places = sample_example(rng)["scene"].places
    pairs = [(replace(e["scene"], places=places), e["say"]) for e in (sample_example(rng, 1) for _ in
                                                                       range(rounds * per_round))]
    return [pairs[r * per_round:(r + 1) * per_round] for r in range(rounds)]


def percentile(values, q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else float("nan")


# ---- the runners: each plans one query and returns (plan tokens, plan text) -------------------------------------


class OursRunner:
    def __init__(self, model: PlannerModel, *, pin_map_of=None):
        self.model = model
        if pin_map_of is not None:
            model.prepare(pin_map_of)

    def __call__(self, scene, say):
        model = self.model
        prompt = build_prompt(scene, say, model.tokenizer)
        ids = [model.tokenizer.id(t) for t in prompt.tokens]
        grammar = grammar_for_query(model.tokenizer, prompt, scene, say) if model.engine.config.constrained else None
        decoded = model.engine.decode(ids, grammar)
        return len(decoded.tokens), tokens_to_plan([model.tokenizer.tokens[t] for t in decoded.tokens], prompt)


class GenaiRunner:
    def __init__(self, model_dir: Path, threads: int, max_new_tokens: int, tokenizer):
        import onnxruntime_genai as og

        self.og = og
        self.folder, self.notes = genai_folder(model_dir, threads)
        self.model = og.Model(str(self.folder))
        self.max_new_tokens = max_new_tokens
        self.tokenizer = tokenizer

    def __call__(self, scene, say):
        og = self.og
        prompt = build_prompt(scene, say, self.tokenizer)
        ids = np.array([[self.tokenizer.id(t) for t in prompt.tokens]], dtype=np.int32)  # [1, S]
        params = og.GeneratorParams(self.model)
        params.set_search_options(max_length=ids.shape[1] + self.max_new_tokens, do_sample=False)
        generator = og.Generator(self.model, params)
        generator.append_tokens(ids)
        generated = 0
        while not generator.is_done():
            generator.generate_next_token()
            generated += 1
        out = [int(t) for t in generator.get_sequence(0)[ids.shape[1]:]]  # genai leaves the final <eos> out
        return generated, tokens_to_plan([self.tokenizer.tokens[t] for t in out], prompt)


def genai_folder(model_dir: Path, threads: int):
    """A folder genai can load: a symlink to the same planner.onnx and a genai_config.json it accepts."""
    config = json.loads((model_dir / "genai_config.json").read_text(encoding="utf-8"))
    notes = []
    if config["model"].get("type") != "decoder":
        notes.append(f"model type {config['model'].get('type')!r} -> 'decoder' (genai's gpt2 wants combined past_%d)")
        config["model"]["type"] = "decoder"
    for key in [k for k in config if k not in GENAI_ALLOWED_TOP_KEYS]:
        notes.append(f"dropped top-level {key!r} (genai refuses unknown keys)")
        del config[key]
    options = config["model"]["decoder"].setdefault("session_options", {})
    options["intra_op_num_threads"] = threads
    options["inter_op_num_threads"] = 1
    folder = Path(tempfile.mkdtemp(prefix="genai_view_"))
    (folder / MODEL_FILE).symlink_to((model_dir / MODEL_FILE).resolve())
    (folder / "genai_config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return folder, notes


# ---- interleaving ------------------------------------------------------------------------------------------


def interleaved(runners: dict, rounds: list) -> dict:
    """Every query of every round through every runner, the order rotating per query; name -> list per round
    of (tokens, seconds), and name -> texts of all queries."""
    names = list(runners)
    totals = {name: [] for name in names}
    texts = {name: [] for name in names}
    warm = rounds[0][0]
    for _ in range(2):  # first touch of buffers and ORT's arenas
        for name in names:
            runners[name](*warm)
    for round_index, queries in enumerate(rounds):
        spent = {name: [0, 0.0] for name in names}
        for query_index, query in enumerate(queries):
            shift = (round_index + query_index) % len(names)
            for name in names[shift:] + names[:shift]:
                start = time.perf_counter()
                tokens, text = runners[name](*query)
                spent[name][1] += time.perf_counter() - start
                spent[name][0] += tokens
                texts[name].append(text)
        for name in names:
            totals[name].append(tuple(spent[name]))
    return {"rounds": totals, "texts": texts}


def ratio_rows(result: dict, baseline: str) -> list:
    rows = []
    base = [tokens / seconds for tokens, seconds in result["rounds"][baseline]]
    for name, per_round in result["rounds"].items():
        rates = [tokens / seconds for tokens, seconds in per_round]
        ratios = [rate / ref for rate, ref in zip(rates, base)]
        same = sum(a == b for a, b in zip(result["texts"][name], result["texts"][baseline]))
        rows.append({
            "engine": name, "tokens_per_s": statistics.median(rates), "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios), "plan_tokens": sum(t for t, _ in per_round),
            "same_plans": f"{same}/{len(result['texts'][name])}",
        })
    return rows


# ---- (b) latency -------------------------------------------------------------------------------------------


def latency_table(model_dir: Path, threads: int, rounds: list) -> list:
    models = {}
    for n in (1, 4, 8):
        models[n] = PlannerModel(model_dir, threads=threads, engine_config=EngineConfig(candidates=n, prefix_cache=0))
        models[n].prepare(rounds[0][0][0])
        models[n].generate(*rounds[0][0])  # first touch
    samples = {n: [] for n in models}
    for round_index, queries in enumerate(rounds):
        for query_index, (scene, say) in enumerate(queries):
            order = list(models)
            shift = (round_index + query_index) % len(order)
            for n in order[shift:] + order[:shift]:
                samples[n].append(models[n].generate(scene, say).total_ms)
    return [{
        "candidates": n, "p50_ms": percentile(ms, 50), "p90_ms": percentile(ms, 90), "p99_ms": percentile(ms, 99),
        "max_ms": max(ms), "samples": len(ms),
    } for n, ms in samples.items()]


# ---- (c) memory --------------------------------------------------------------------------------------------

_MEMORY_PROBE = """
import sys, random
sys.path.insert(0, {repo!r})
from wafer_reasoner.engine.planner_model import PlannerModel
from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.training.corpus import sample_example
import onnxruntime
if {load}:
    model = PlannerModel({model_dir!r}, threads={threads}, engine_config=EngineConfig(candidates=8))
    rng = random.Random(0)
    for _ in range(300):
        e = sample_example(rng)
        model.generate(e["scene"], e["say"])
print([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1])
"""


def peak_memory_kib(model_dir: Path, threads: int, load: bool) -> int:
    code = _MEMORY_PROBE.format(repo=str(REPO), model_dir=str(model_dir), threads=threads, load=load)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


# ---- (e) threads, (f) validity -------------------------------------------------------------------------------


def thread_sweep(model_dir: Path, rounds: list, tokenizer) -> tuple:
    """Constrained decoding and genai, intra-op threads 1 and 2, all interleaved -> (table rows, per-round result)."""
    runners = {f"this engine, threads={t}": OursRunner(PlannerModel(model_dir, threads=t, engine_config=EngineConfig(
        prefix_cache=0))) for t in (1, 2)}
    try:
        for threads in (1, 2):
            runners[f"genai, threads={threads}"] = GenaiRunner(model_dir, threads, 64, tokenizer)
    except ImportError:
        pass
    result = interleaved(runners, rounds)
    return ratio_rows(result, "this engine, threads=1"), result


def best_threads(result: dict, engine: str) -> int:
    """2 only when the engine was faster with 2 threads than with 1 in every round (the CPU is shared on a robot,
    so a second thread must clearly pay for itself); 0 when the engine was not measured."""
    per_round = result["rounds"]
    one, two = per_round.get(f"{engine}, threads=1"), per_round.get(f"{engine}, threads=2")
    if one is None or two is None:
        return 0
    faster = [t2 / s2 > t1 / s1 for (t1, s1), (t2, s2) in zip(one, two)]
    return 2 if all(faster) else 1


def validity(model_dir: Path, threads: int, cases: int) -> dict:
    greedy = PlannerModel(model_dir, threads=threads, engine_config=EngineConfig(prefix_cache=0))
    sampled = PlannerModel(model_dir, threads=threads, engine_config=EngineConfig(
        candidates=4, temperature=1.5, top_k=0, prefix_cache=0))
    failures = []
    checked = 0
    for case in range(cases):
        example = sample_example(random.Random(50_000 + case), case % 2)
        models = [greedy] if case % 10 else [greedy, sampled]
        for model in models:
            prompt = build_prompt(example["scene"], example["say"], model.tokenizer)
            grammar = grammar_for_query(model.tokenizer, prompt, example["scene"], example["say"])
            ids = [model.tokenizer.id(t) for t in prompt.tokens]
            for tokens in model.engine.decode(ids, grammar).all_tokens:
                checked += 1
                text = tokens_to_plan([model.tokenizer.tokens[t] for t in tokens], prompt)
                try:
                    parse_plan(text)
                except PlanSyntaxError as error:
                    failures.append(f"{example['say']!r}: {text!r} ({error})")
    return {"cases": cases, "outputs": checked, "parsed": checked - len(failures), "failures": failures[:5]}


# ---- report ----------------------------------------------------------------------------------------------------


def markdown(headers: list, rows: list) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row[h]) for h in headers) + " |")
    return "\n".join(lines)


def _cell(value) -> str:
    return f"{value:.3g}" if isinstance(value, float) and abs(value) < 10 else (
        f"{value:.1f}" if isinstance(value, float) else str(value))


def run(args) -> dict:
    model_dir = Path(args.model_dir) if args.model_dir else SHIPPED_MODEL_DIR
    rounds = fixed_map_queries(args.rounds, args.queries)
    report = {"host": platform.processor() or platform.machine(), "cpus": os.cpu_count(), "model_dir": str(model_dir)}
    print(f"# Engine benchmarks: {model_dir / MODEL_FILE}, {args.rounds} rounds x {args.queries} distinct queries, "
          f"{os.cpu_count()} CPUs\n")

    tokenizer = PlannerModel(model_dir, engine="reference").tokenizer
    report["threads"], sweep = thread_sweep(model_dir, rounds[:max(3, args.rounds // 3)], tokenizer)
    print("## (e) intra-op threads (batch 1, greedy; this engine constrained)\n")
    print(markdown(["engine", "tokens_per_s", "ratio_median", "ratio_min", "ratio_max"], report["threads"]), "\n")
    threads = args.threads or best_threads(sweep, "this engine")
    genai_threads = best_threads(sweep, "genai") or threads
    report["chosen_threads"] = {"this_engine": threads, "genai": genai_threads}
    print(f"threads used below: this engine {threads}, genai {genai_threads} (2 only if faster in every round)\n")

    report["per_query"] = per_query_report(model_dir, (threads, genai_threads), args)

    reference = PlannerModel(model_dir, threads=threads)
    report["vs_genai"] = compare_with_genai(model_dir, (threads, genai_threads), reference, rounds)

    report["latency"] = latency_table(model_dir, threads, rounds)
    print("## (b) planning latency through generate() (fixed map pinned; no exact-prompt reuse)\n")
    print(markdown(["candidates", "p50_ms", "p90_ms", "p99_ms", "max_ms", "samples"], report["latency"]), "\n")

    base, loaded = peak_memory_kib(model_dir, threads, False), peak_memory_kib(model_dir, threads, True)
    report["memory"] = {"imports_only_mib": base / 1024, "engine_n8_mib": loaded / 1024,
                        "engine_mib": (loaded - base) / 1024}
    print("## (c) peak resident memory (VmHWM)\n")
    print(markdown(["imports_only_mib", "engine_n8_mib", "engine_mib"], [report["memory"]]), "\n")

    report["bound"] = decode_bound(model_dir, threads, rounds[0])
    print("## (d) decode rate vs the host's memory-bandwidth bound (batch 1, single-token steps, plain decode)\n")
    print(markdown(["memory", "export", "decode_steps_per_s", "bandwidth_gb_s", "bytes_per_step",
                    "bound_steps_per_s", "fraction_of_bound"], report["bound"]), "\n")

    if args.validity:
        report["validity"] = validity(model_dir, threads, args.validity)
        v = report["validity"]
        print(f"## (f) validity\n\n{v['parsed']}/{v['outputs']} constrained outputs parse over {v['cases']} random "
              f"scene/utterance cases (greedy, plus best-of-4 sampled on every tenth case)")
        for failure in v["failures"]:
            print("  FAILED:", failure)
    return report


def per_query_report(model_dir: Path, both_threads: tuple, args) -> dict:
    threads, genai_threads = both_threads
    try:
        import onnxruntime_genai  # noqa: F401
    except ImportError:
        print("## (q) per query vs onnxruntime-genai: SKIPPED, onnxruntime_genai is not installed\n")
        return {"skipped": "onnxruntime_genai not installed"}
    folder, _ = genai_folder(model_dir, genai_threads)
    table = per_query_table(model_dir, folder, threads, args.per_query_rounds, args.per_query_queries)
    print(f"## (q) per query, (scene, utterance) -> plan text, vs onnxruntime-genai (threads: this engine "
          f"{threads}, genai {genai_threads}); {table['queries_per_round']} held-out queries per round on the "
          f"package's map, a fresh model per round\n")
    headers = ["export", "this engine p50 ms", "this engine p99 ms", "genai p50 ms", "genai p99 ms", "ratio p50",
               "ratio p99", "this engine exact", "genai exact"]
    print(markdown(headers, table["rounds"]))
    print(f"\nratio of p50s: median {table['ratio_p50_median']:.2f}, lowest {table['ratio_p50_min']:.2f}\n")
    return table


def compare_with_genai(model_dir: Path, both_threads: tuple, reference: PlannerModel, rounds: list):
    threads, genai_threads = both_threads
    try:
        genai = GenaiRunner(model_dir, genai_threads, reference.max_new_tokens, reference.tokenizer)
    except ImportError:
        print("## (a) vs onnxruntime-genai: SKIPPED, onnxruntime_genai is not installed "
              "(pip install -r requirements-bench.txt)\n")
        return {"skipped": "onnxruntime_genai not installed"}
    def ours(pin=False, **config):
        model = PlannerModel(model_dir, threads=threads, engine_config=EngineConfig(prefix_cache=0, **config))
        return OursRunner(model, pin_map_of=rounds[0][0][0] if pin else None)

    runners = {
        "genai": genai,
        "constrained": ours(),
        "constrained, no drafts": ours(draft_tokens=0),
        "constrained, map pinned": ours(pin=True),
        "plain": ours(constrained=False, forced_runs=False, draft_tokens=0),
    }
    rows = ratio_rows(interleaved(runners, rounds), "genai")
    print(f"## (a) vs onnxruntime-genai {genai.og.__version__}, same planner.onnx, batch 1, greedy "
          f"(threads: this engine {threads}, genai {genai_threads})\n")
    for note in genai.notes:
        print(f"note: genai view of the config: {note}")
    print()
    print(markdown(["engine", "tokens_per_s", "ratio_median", "ratio_min", "ratio_max", "plan_tokens", "same_plans"],
                   rows), "\n")
    return {"rows": rows, "genai_config_notes": genai.notes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", help="folder with planner.onnx (default: the shipped model)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--queries", type=int, default=40, help="distinct queries per round")
    parser.add_argument("--threads", type=int, default=0,
                        help="this engine's intra-op threads for (a)-(d), (f); 0: the faster one in (e)")
    parser.add_argument("--validity", type=int, default=10_000, help="random cases for (f); 0 skips it")
    parser.add_argument("--per-query-rounds", type=int, default=3, help="rounds of (q), each with fresh models")
    parser.add_argument("--per-query-queries", type=int, default=140, help="queries per round of (q)")
    parser.add_argument("--json", default=str(DEFAULT_JSON), help="write the numbers here")
    args = parser.parse_args(argv)
    report = run(args)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
