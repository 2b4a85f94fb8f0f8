"""Measure this host for the timing emulator and write a hardware profile (kind: cpu) and its stack as YAML.

    python bench/bench_host_profile.py [--out host_profile.yaml] [--name host] [--copy-mb 64] [--matmul-n 512]

Measures, best of --repeats runs each:
- memory bandwidth: a numpy copy of --copy-mb MB, counted as bytes read + bytes written;
- matmul FLOP/s: a float32 n x n @ n x n product with numpy's BLAS (2 n^3 FLOPs);
- per-operator overhead: a numpy add of one-element arrays (what a tiny kernel/operator costs to issue).
The file has config/hardware.yaml's shape (``profiles: {NAME: {...}}`` with a source for every figure) plus the
stack the host runs (``stacks: {NAME: {...}}``, the measured per-operator overhead, as config/stacks.yaml's) and
``defaults: {NAME: NAME}``; list it under ``hardware_files`` in config/emulator.yaml, or load it with
``load_hardware(extra_paths=[FILE])`` and ``load_stacks(..., extra_paths=[FILE])``.
Without --out the YAML goes to stdout.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np
import yaml


def _best_seconds(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def measure_copy_bytes_per_s(megabytes: float = 64.0, repeats: int = 5) -> float:
    source = np.ones(int(megabytes * 1e6) // 4, dtype=np.float32)
    target = np.empty_like(source)
    np.copyto(target, source)  # touch the pages once
    seconds = _best_seconds(lambda: np.copyto(target, source), repeats)
    return 2.0 * source.nbytes / seconds  # read + write


def measure_matmul_flops_per_s(n: int = 512, repeats: int = 5) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    out = np.empty((n, n), dtype=np.float32)
    np.matmul(a, b, out=out)  # warm up the BLAS
    return 2.0 * n**3 / _best_seconds(lambda: np.matmul(a, b, out=out), repeats)


def measure_op_overhead_s(calls: int = 2000, repeats: int = 3) -> float:
    x, y, out = np.ones(1), np.ones(1), np.empty(1)

    def run():
        for _ in range(calls):
            np.add(x, y, out=out)

    return _best_seconds(run, repeats) / calls


def physical_memory_bytes() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not POSIX: assume 8 GB
        return 8e9


def host_profile(measured: dict, *, name: str = "host", machine: str = "", date: str = "") -> dict:
    """The YAML mapping for ``measured`` = {memory_bytes, memory_bytes_per_s, peak_flops_per_s,
    kernel_overhead_s, copy_mb, matmul_n}. Pure, so it is testable without timing anything."""
    where = f"bench/bench_host_profile.py on {machine or platform.node()}, {date or datetime.date.today()}"
    profile = {
        "kind": "cpu",
        "memory_bytes": float(measured["memory_bytes"]),
        "memory_bytes_per_s": float(measured["memory_bytes_per_s"]),
        "peak_flops_per_s": float(measured["peak_flops_per_s"]),
        "devices_per_node": 1,
        "device_link_bytes_per_s": 0.0,
        "node_link_bytes_per_s": 1.25e9,
        "node_link_latency_s": 50.0e-6,
        "memory_usable_fraction": 0.5,
        "source": f"measured by {where}",
        "sources": {
            "memory_bytes": f"physical RAM (sysconf), {where}",
            "memory_bytes_per_s": f"numpy copy of {measured['copy_mb']:g} MB, read + write, best run; {where}",
            "peak_flops_per_s": f"numpy float32 {measured['matmul_n']}^3 matmul, best run; {where}",
            "devices_per_node": "one host",
            "device_link_bytes_per_s": "none: one device",
            "node_link_bytes_per_s": "assumption: 10 GbE between hosts",
            "node_link_latency_s": "assumption: TCP round trip on a LAN, ~50 us",
            "memory_usable_fraction": "assumption: half the RAM is free for a model",
        },
    }
    stack = {
        "kind": "cpu", "hardware": [name], "date": str(date or datetime.date.today())[:7],
        "source": f"the host itself: numpy-speed operators, measured by {where}",
        "memory_efficiency": 1.0, "kernel_overhead_s": float(measured["kernel_overhead_s"]),
        "allreduce_step_latency_s": 0.0, "compute_efficiency": 1.0, "serving_overhead_s": 0.0,
        "acceptance_rate": 0.0,
        "sources": {
            "memory_efficiency": "1: memory_bytes_per_s is already the measured rate",
            "kernel_overhead_s": f"numpy add of one-element arrays, per call; {where}",
            "allreduce_step_latency_s": "none: one device",
            "compute_efficiency": "1: peak_flops_per_s is already the measured rate",
            "serving_overhead_s": "none: the host plans in process",
            "acceptance_rate": "no speculative decoding",
        },
    }
    return {"profiles": {name: profile}, "stacks": {name: stack}, "defaults": {name: name}}


def measure(copy_mb: float, matmul_n: int, repeats: int) -> dict:
    return {
        "memory_bytes": physical_memory_bytes(),
        "memory_bytes_per_s": measure_copy_bytes_per_s(copy_mb, repeats),
        "peak_flops_per_s": measure_matmul_flops_per_s(matmul_n, repeats),
        "kernel_overhead_s": measure_op_overhead_s(),
        "copy_mb": copy_mb,
        "matmul_n": matmul_n,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="write the YAML here (default: stdout)")
    parser.add_argument("--name", default="host", help="profile name (default: host)")
    parser.add_argument("--copy-mb", type=float, default=64.0, help="copy size in MB (default 64)")
    parser.add_argument("--matmul-n", type=int, default=512, help="matmul size n (default 512)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per measurement, the best counts")
    args = parser.parse_args(argv)
    if args.copy_mb <= 0 or args.matmul_n < 1 or args.repeats < 1:
        parser.error("--copy-mb, --matmul-n and --repeats must be positive")
    text = yaml.safe_dump(host_profile(measure(args.copy_mb, args.matmul_n, args.repeats), name=args.name),
                          sort_keys=False, width=120)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
