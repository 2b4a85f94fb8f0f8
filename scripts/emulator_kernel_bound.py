"""How far a per-kernel cost of quantised weights could take leave-one-stack-out validation: an optimistic bound.

    .venv/bin/python scripts/emulator_kernel_bound.py [--config-dir config]

The ninth session found that a quantised row's speed is set by the kernel that streams its weights, not by its bit
width, and suggested a per-kernel constant. This estimates the best such a constant could do on the rows in view,
without building it into the emulator:

1. every validation row is predicted with its stack left out (``calibration.validate``, as ``--validate`` does);
2. each row whose weights are stored in fewer than 16 bits is given a kernel by ``KERNEL_RULES`` on its ``setup``
   text (written after seeing the rows, which is what makes the bound optimistic);
3. a held-out row's prediction is multiplied by the median of published / predicted over the rows of the same
   kernel in the *other* stacks (a kernel seen in no other stack gets 1), as if its whole time scaled with it.

It prints the median absolute error before and after, for the quantised rows and for all rows, and how many rows
land within the 15% bound. Not a test and not part of the emulator: the figure behind the tenth session's note.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wafer_reasoner.emulator import calibration  # noqa: E402
from wafer_reasoner.runtime.emulation import (  # noqa: E402
    FIGURES_FILE,
    HARDWARE_FILE,
    STACKS_FILE,
    TARGETS_FILE,
    hardware_profiles,
    published_figures,
    serving_stacks,
    target_models,
)

BOUND = 0.15
SIXTEEN_BIT = 2.0  # bytes per parameter
# (pattern in the row's setup, kernel), first match wins; the row's stack disambiguates one case below
KERNEL_RULES = (
    (r"cuda-old", "gptq-cuda-old"), (r"exllamav2", "exllamav2"), (r"exllama|ExLlama", "exllama"),
    (r"QQQ", "marlin-qqq"), (r"Marlin", "marlin"), (r"uint4|uintx|no fused", "unfused-int4"),
    (r"int8 dynamic|int8dq", "int8-dynamic"), (r"LLM\.int8|bitsandbytes 8-bit", "bnb-int8"),
    (r"NF4|nf4|bitsandbytes 4-bit|bnb", "bnb-4bit"),
    (r"AWQ int4 \+ HQQ|int4hqq|int4 weight-only|int4 weights \(group", "tinygemm-int4"),
    (r"AWQ", "awq-gemm"), (r"llama\.cpp", "llama.cpp"), (r"CTranslate2", "ctranslate2-int8"), (r"fp6", "fp6"),
    (r"fp8", "torch-fp8"), (r"FP8", "tensorrt-fp8"), (r"GPTQ", "gptq-other"), (r"int4|4-bit", "int4-other"),
    (r"int8|INT8|8-bit", "int8-other"),
)
BNB_INT4_STACKS = ("transformers-2023-08", "transformers-2024-02")  # their "int4 weights (group 64)" is bitsandbytes


def kernel_of(row) -> str:
    if row.stack in BNB_INT4_STACKS and "int4 weights (group 64)" in row.setup:
        return "bnb-4bit"
    return next((kernel for pattern, kernel in KERNEL_RULES if re.search(pattern, row.setup)), "unknown")


def quantised(row, stacks: dict) -> bool:
    """Whether the row's weights (any group but the KV cache) are stored in fewer than 16 bits."""
    widths = [width for group, width in row.precision if group != "kv_cache"]
    if not widths and stacks[row.stack].bytes_per_param:
        widths = [stacks[row.stack].bytes_per_param]
    return any(width < SIXTEEN_BIT for width in widths)


def median_abs(errors) -> float:
    return statistics.median(abs(error) for error in errors)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config-dir", default=str(REPO / "config"))
    folder = Path(parser.parse_args(argv).config_dir)
    stacks = serving_stacks(stacks_path=folder / STACKS_FILE)[0]
    report = calibration.validate(published_figures(folder / FIGURES_FILE),
                                  hardware_profiles(hardware_path=folder / HARDWARE_FILE), stacks,
                                  target_models(targets_path=folder / TARGETS_FILE))
    held = {prediction.row.key: prediction for prediction in report.held_out}
    rows = [p.row for p in report.held_out if quantised(p.row, stacks)]
    by_kernel = defaultdict(list)  # kernel -> [(stack, published / predicted)]
    for row in rows:
        by_kernel[kernel_of(row)].append((row.stack, row.published / held[row.key].predicted))
    after = {key: prediction.error for key, prediction in held.items()}
    for row in rows:
        others = [ratio for stack, ratio in by_kernel[kernel_of(row)] if stack != row.stack]
        after[row.key] = (held[row.key].error + 1.0) * (statistics.median(others) if others else 1.0) - 1.0
    print("| kernel | stacks | rows | held-out errors |\n|---|---|---|---|")
    for kernel, pairs in sorted(by_kernel.items()):
        errors = sorted(round((1.0 / ratio - 1.0) * 100) for _, ratio in pairs)
        print(f"| {kernel} | {len({stack for stack, _ in pairs})} | {len(pairs)} | {errors} |")
    keys = [row.key for row in rows]
    print(f"\nquantised rows ({len(rows)}): median |error| {median_abs(held[k].error for k in keys):.1%} held out, "
          f"{median_abs(after[k] for k in keys):.1%} with a per-kernel factor from the other stacks")
    sixteen = [p.error for key, p in held.items() if key not in set(keys)]
    print(f"16-bit rows ({len(sixteen)}): {median_abs(sixteen):.1%} held out (unchanged)")
    for label, errors in (("held out", [p.error for p in held.values()]), ("with the factor", list(after.values()))):
        within = sum(abs(error) <= BOUND for error in errors)
        print(f"all {len(errors)} rows, {label}: median |error| {median_abs(errors):.1%}, {within} within "
              f"{BOUND:.0%} ({len(errors) // 2 + 1} needed for a median at the bound)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
