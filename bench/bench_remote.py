"""Prediction vs reality: the embedded planner, a real inference server and the emulator's prediction for the
served model, on the same 200 held-out queries (`make bench-remote`, after `make serve-setup`).

    .venv/bin/python bench/bench_remote.py [--queries 200] [--base-url URL] [--json runs/bench_remote.json]

- embedded: ``PlannerModel.generate`` (the shipped ONNX planner, in process), host wall time;
- remote: ``RemotePlanner.generate`` against llama-cpp-python's server with SmolLM2-135M-Instruct (started here
  on 127.0.0.1 unless --base-url names a running one), grammar-constrained to the scene (GBNF), measured
  ``remote_ms`` (HTTP on loopback + the server);
- emulated: what the emulator predicts for SmolLM2-135M on the ``host`` profile under the
  ``llamacpp-host-2026-12`` stack, from the token counts the server reported: (a) as the node charges it (the
  whole prompt prefilled) and (b) with the prompt prefix the server reuses from the previous request (llama.cpp
  keeps the KV state of the longest common prefix; the fixed system prompt and examples come first).

The queries: the project's held-out set (training/speech_corpus.py), the first 34, 34, 33, 33, 33, 33 of its six
categories. The two planners are interleaved query by query (which goes first alternates); the emulator's error
is (predicted - measured) / measured per query. Exact match: the canonical plan equals the gold plan. Not a
test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wafer_reasoner.engine.planner_model import PlannerModel  # noqa: E402
from wafer_reasoner.planner.language import PlanSyntaxError, format_plan, parse_plan  # noqa: E402
from wafer_reasoner.remote.client import BackendError, OpenAIClient  # noqa: E402
from wafer_reasoner.remote.local_server import LocalServer  # noqa: E402
from wafer_reasoner.remote.planner import RemotePlanner, RemoteSettings  # noqa: E402
from wafer_reasoner.remote.prompt import describe_scene  # noqa: E402
from wafer_reasoner.runtime.emulation import emulator_for  # noqa: E402
from wafer_reasoner.training import speech_corpus  # noqa: E402

TARGET, HARDWARE, STACK = "SmolLM2-135M", "host", "llamacpp-host-2026-12"
TURN_MARKERS = 5  # chat-template tokens around the last user turn and the assistant's start (ChatML)
WARMUP = 3


def query_set(count: int) -> list:
    """The first ``count`` held-out queries, spread over the categories as evenly as the count allows."""
    names = list(speech_corpus.HELDOUT_CATEGORIES)
    per = [count // len(names) + (k < count % len(names)) for k in range(len(names))]
    return [example for name, n in zip(names, per) for example in speech_corpus.heldout_set(name, n)]


def canonical(text: str) -> str:
    try:
        return format_plan(parse_plan(text))
    except PlanSyntaxError:
        return ""


def last_turn_tokens(client: OpenAIClient, scene, utterance: str) -> int | None:
    """Tokens of the last user turn (llama-cpp-python's /extras/tokenize/count), or None where the server has none."""
    content = f"{describe_scene(scene)}\nRequest: {utterance}"
    try:
        reply = client.post("extras/tokenize/count", {"input": content})
    except BackendError:
        return None
    count = reply.get("count")
    return count + TURN_MARKERS if isinstance(count, int) else None


def run(queries: list, embedded: PlannerModel, remote: RemotePlanner, client: OpenAIClient, emulator) -> list:
    rows = []
    for index, example in enumerate(queries):
        scene, say, gold = example["scene"], example["say"], example["plan"]
        order = ("embedded", "remote") if index % 2 == 0 else ("remote", "embedded")
        row = {"category": example["category"], "say": say, "gold": gold}
        for which in order:
            if which == "embedded":
                generation = embedded.generate(scene, say)
                row |= {"embedded_ms": generation.total_ms, "embedded_plan": generation.text}
            else:
                try:
                    generation = remote.generate(scene, say)
                except BackendError as error:
                    row |= {"remote_ms": error.remote_ms, "remote_plan": "", "remote_error": str(error)}
                    continue
                row |= {"remote_ms": generation.total_ms, "remote_plan": generation.text,
                        "prompt_tokens": generation.prompt_tokens, "completion_tokens": generation.tokens}
        if "prompt_tokens" in row:
            whole = emulator.plan_time(row["prompt_tokens"], row["completion_tokens"])
            row["emulated_ms"] = whole.emulated_ms
            new = last_turn_tokens(client, scene, say)
            if new is not None:
                row["new_prompt_tokens"] = new = min(new, row["prompt_tokens"])
                reused = row["prompt_tokens"] - new
                prefill_s = emulator.forward(new, reused).seconds
                decode_s = max(row["completion_tokens"] - 1, 0) * emulator.decode_step(row["prompt_tokens"])[0]
                row["emulated_reuse_ms"] = (emulator.stack.serving_overhead_s + prefill_s + decode_s) * 1000.0
        rows.append(row)
        if (index + 1) % 20 == 0:
            print(f"  {index + 1}/{len(queries)} queries", flush=True)
    return rows


def percentiles(values) -> dict:
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=np.float64)
    if not len(values):
        return {}
    return {"n": int(len(values)), "p50": float(np.percentile(values, 50)), "p90": float(np.percentile(values, 90)),
            "p99": float(np.percentile(values, 99)), "max": float(values.max()), "mean": float(values.mean())}


def summary(rows: list) -> dict:
    result = {}
    for name in ("embedded", "remote"):
        plans = [canonical(row.get(f"{name}_plan", "")) for row in rows]
        result[name] = {"latency_ms": percentiles(row.get(f"{name}_ms") for row in rows),
                        "exact_match": float(np.mean([plan == row["gold"] for plan, row in zip(plans, rows)])),
                        "unparseable": float(np.mean([plan == "" for plan in plans]))}
        per_category = {}
        for plan, row in zip(plans, rows):
            per_category.setdefault(row["category"], []).append(plan == row["gold"])
        result[name]["per_category"] = {k: float(np.mean(v)) for k, v in per_category.items()}
    result["remote"]["errors"] = sum("remote_error" in row for row in rows)
    for name in ("emulated_ms", "emulated_reuse_ms"):
        paired = [(row[name], row["remote_ms"]) for row in rows if name in row]
        if not paired:
            continue
        predicted, measured = np.asarray(paired).T
        error = (predicted - measured) / measured
        result[name] = {"latency_ms": percentiles(predicted), "error_median": float(np.median(error)),
                        "error_p10": float(np.percentile(error, 10)), "error_p90": float(np.percentile(error, 90)),
                        "abs_error_median": float(np.median(np.abs(error))),
                        "total_ratio": float(predicted.sum() / measured.sum())}
    result["tokens"] = {"prompt_p50": percentiles(r.get("prompt_tokens") for r in rows).get("p50"),
                        "new_prompt_p50": percentiles(r.get("new_prompt_tokens") for r in rows).get("p50"),
                        "completion_p50": percentiles(r.get("completion_tokens") for r in rows).get("p50")}
    ratio = [row["remote_ms"] / row["embedded_ms"] for row in rows if row.get("remote_ms") and row.get("embedded_ms")]
    result["remote_over_embedded"] = percentiles(ratio)
    return result


def print_table(result: dict) -> None:
    print("| planner | n | p50 ms | p90 ms | p99 ms | max ms | exact match |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    labels = {"embedded": "embedded (shipped ONNX planner, host, measured)",
              "remote": "remote: SmolLM2-135M on llama.cpp server (`remote_ms`, measured)",
              "emulated_ms": "emulated: SmolLM2-135M / host / llamacpp-host (whole prompt, as the node charges)",
              "emulated_reuse_ms": "emulated, with the server's reused prompt prefix"}
    for name, label in labels.items():
        if name not in result:
            continue
        lat = result[name]["latency_ms"]
        exact = f"{result[name]['exact_match']:.1%}" if "exact_match" in result[name] else "-"
        print(f"| {label} | {lat['n']} | {lat['p50']:.1f} | {lat['p90']:.1f} | {lat['p99']:.1f} | {lat['max']:.1f} "
              f"| {exact} |")
    for name in ("emulated_ms", "emulated_reuse_ms"):
        if name in result:
            e = result[name]
            print(f"{name}: error median {e['error_median']:+.1%} (p10 {e['error_p10']:+.1%}, "
                  f"p90 {e['error_p90']:+.1%}), |error| median {e['abs_error_median']:.1%}, "
                  f"total predicted / measured {e['total_ratio']:.2f}")
    ratio = result["remote_over_embedded"]
    print(f"remote / embedded latency per query: p50 {ratio['p50']:.0f}x, p90 {ratio['p90']:.0f}x; "
          f"remote unparseable {result['remote']['unparseable']:.1%}, errors {result['remote']['errors']}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--base-url", default="", help="a running server (default: start one on --port)")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--json", default=str(REPO / "runs" / "bench_remote.json"))
    args = parser.parse_args(argv)
    queries = query_set(args.queries)
    embedded = PlannerModel(None)
    emulator = emulator_for(TARGET, HARDWARE, STACK)
    server = None if args.base_url else LocalServer(port=args.port).start()
    base_url = args.base_url or server.base_url
    try:
        remote = RemotePlanner(RemoteSettings(base_url=base_url, timeout_s=120.0, constraint="gbnf"))
        client = OpenAIClient(base_url.rsplit("/v1", 1)[0], timeout_s=60.0, retries=0)  # its /extras
        run(queries[:WARMUP], embedded, remote, client, emulator)  # the server's prefix, the engine's caches
        started = time.time()
        rows = run(queries, embedded, remote, client, emulator)
    finally:
        if server is not None:
            server.stop()
    result = summary(rows) | {"queries": len(rows), "wall_s": round(time.time() - started, 1),
                              "machine": f"{platform.machine()}, {platform.python_version()}",
                              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "base_url": base_url}
    print_table(result)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result | {"rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
