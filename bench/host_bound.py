"""The host's bound for bench_engine.py (d): decode steps/s against memory bandwidth / bytes one step reads.

The planner's weights (7.7 MB at float32, 2.0 MB at int8) fit in this host's L3, so the L3 bound is the one that
applies; the DRAM bound is printed beside it. Bandwidth is measured with the engine's thread count.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from wafer_reasoner.engine.fast_engine import EngineConfig
from wafer_reasoner.engine.planner_model import MODEL_FILE, ModelLoadError, PlannerModel


def memory_bandwidth_bytes_per_s(megabytes: float, repeats: int, threads: int = 1) -> float:
    """Best of a copy (read + write) and a sum (read) of ``megabytes``, split over ``threads`` threads (numpy
    releases the GIL), bytes moved per second.

    256 MB measures DRAM; 8 MB stays in this host's L3 (32-48 MB), where the planner's weights live between steps."""
    from concurrent.futures import ThreadPoolExecutor

    src = np.ones(int(megabytes * 2**20) // 4, dtype=np.float32)  # [n]
    dst = np.empty_like(src)
    parts = [(src[k::threads], dst[k::threads]) if threads > 1 else (src, dst) for k in range(threads)]
    parts = [(np.ascontiguousarray(a), np.ascontiguousarray(b)) for a, b in parts]
    best = 0.0
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeats):
            start = time.perf_counter()
            list(pool.map(lambda pair: np.copyto(pair[1], pair[0]), parts))
            best = max(best, 2 * src.nbytes / (time.perf_counter() - start))
            start = time.perf_counter()
            list(pool.map(lambda pair: pair[0].sum(), parts))
            best = max(best, src.nbytes / (time.perf_counter() - start))
    return best


def step_weight_bytes(model: PlannerModel) -> int:
    """Bytes of weights one single-token step reads: the in-place-KV exports say so in their metadata; for
    planner.onnx, its file size (it also stores the embedding tables whole, so this overstates the bytes)."""
    meta = model.session.get_modelmeta().custom_metadata_map
    if "step_weight_bytes" in meta:
        return int(meta["step_weight_bytes"])
    return (model.model_dir / MODEL_FILE).stat().st_size


def decode_bound(model_dir: Path, threads: int, queries: list, exports=("kv-int8", "kv", "genai")) -> list:
    """Single-token decode steps/s against bandwidth / (weights + KV bytes), for DRAM and for L3, for each of
    ``exports`` present in the folder (the same planner, the engine's exports and genai's layout); the bandwidth
    is measured once, before them."""
    bandwidths = [(memory, memory_bandwidth_bytes_per_s(megabytes, repeats, threads))
                  for memory, megabytes, repeats in (("DRAM (256 MB)", 256, 5), ("L3-resident (8 MB)", 8, 200))]
    rows = []
    for export in exports:
        try:
            plain = PlannerModel(model_dir, threads=threads, engine_config=EngineConfig(
                constrained=False, prefix_cache=0, draft_tokens=0, export=export))
        except ModelLoadError:
            continue  # the folder has no such export
        rate, bytes_per_step = _plain_decode(plain, queries)
        precision = plain.session.get_modelmeta().custom_metadata_map.get("precision", "float32 (planner.onnx)")
        for memory, bandwidth in bandwidths:
            bound = bandwidth / bytes_per_step
            rows.append({"memory": memory, "export": f"{export} ({precision})", "decode_steps_per_s": rate,
                         "bandwidth_gb_s": bandwidth / 1e9, "bytes_per_step": bytes_per_step,
                         "bound_steps_per_s": bound, "fraction_of_bound": rate / bound})
    return rows


def _plain_decode(plain: PlannerModel, queries: list) -> tuple:
    """(single-token decode steps/s, bytes one step reads: weights + the KV cache at the mean context)."""
    steps = seconds = contexts = 0
    for scene, say in queries:
        result = plain.generate(scene, say)
        steps += result.decode_steps
        seconds += result.decode_ms / 1e3
        contexts += result.prompt_tokens + result.tokens / 2
    layout = plain.engine.layout
    kv = 2 * layout.num_layers * layout.num_heads * layout.head_size * 4 * contexts / len(queries)
    return steps / seconds, step_weight_bytes(plain) + kv
