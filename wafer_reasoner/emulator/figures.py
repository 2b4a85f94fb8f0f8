"""Published single-request inference figures (docs: /work/shared/docs/published-figures.md, docs/emulator.md).

Each row names the target preset, the hardware profile and the serving configuration the source states; where
the source leaves something open, ``note`` says what is assumed. ``calibrates`` names the free constants a row
fits; every other row only validates.
"""

from __future__ import annotations

from dataclasses import dataclass

DECODE = "decode_tokens_per_s"  # single-stream decode rate, tokens/s
FIRST_TOKEN = "first_token_s"  # time to first token, s

WAFER_CONSTANTS = ("fabric_hop_latency_s", "routing_stage_latency_s")
GPU_CONSTANTS = ("memory_efficiency", "allreduce_step_latency_s")
ACCEPTANCE = ("acceptance_rate",)

FP8 = 1.0  # bytes per parameter
ROW_CONTEXT_TOKENS = 1024  # context a decode rate is charged at when the source does not say
DRAFT = "Llama-3.2-1B"  # the draft assumed for speculative rows that name none
DRAFT_TOKENS = 4  # tokens drafted per step, assumed (no source gives it)


@dataclass(frozen=True)
class PublishedFigure:
    key: str  # short row id
    target: str  # preset in config/target_models.yaml
    hardware: str  # profile in config/hardware.yaml
    metric: str  # DECODE or FIRST_TOKEN
    published: float
    source: str
    setup: str  # the configuration in words (the table's "setup" column)
    note: str = ""  # what is assumed where the source is silent
    bytes_per_param: float | None = None  # serving precision when not the preset's 16 bits
    grid: tuple | None = None  # wafer grid (rows, cols) of the published run
    systems: int | None = None  # wafer systems of the published run
    tensor_parallel: int | None = None
    speculative: bool = False  # draft DRAFT, DRAFT_TOKENS, the calibrated acceptance rate
    baseline: str | None = None  # speculative rows: the row without speculation (its ratio calibrates)
    prompt_tokens: int = 0  # FIRST_TOKEN rows
    calibrates: tuple = ()

    @property
    def role(self) -> str:
        return "calibration" if self.calibrates else "validation"


WAFERLLM = "WaferLLM, OSDI 2025 (arXiv 2502.04563)"
CEREBRAS_AUG = "Cerebras launch blog, Aug 2024"
NVIDIA_DEC = "NVIDIA technical blog, Dec 2024"

FIGURES = (
    PublishedFigure("waferllm-8b-420", "Llama-3.1-8B", "WSE-2", DECODE, 2700, WAFERLLM, "WaferLLM, 420x420 cores",
                    grid=(420, 420), systems=1, calibrates=WAFER_CONSTANTS),
    PublishedFigure("waferllm-8b-540", "Llama-3.1-8B", "WSE-2", DECODE, 2502, WAFERLLM, "WaferLLM, 540x540 cores",
                    grid=(540, 540), systems=1),
    PublishedFigure("waferllm-8b-660", "Llama-3.1-8B", "WSE-2", DECODE, 2243, WAFERLLM, "WaferLLM, 660x660 cores",
                    grid=(660, 660), systems=1, calibrates=WAFER_CONSTANTS),
    PublishedFigure("waferllm-13b", "Llama-2-13B", "WSE-2", DECODE, 2039, WAFERLLM, "WaferLLM, grid not stated",
                    note="the whole usable fabric (the emulator's default grid), one wafer as published",
                    systems=1),
    PublishedFigure("a100x1-8b", "Llama-3.1-8B", "A100", DECODE, 78.9, WAFERLLM, "SGLang, 1x A100",
                    tensor_parallel=1, calibrates=GPU_CONSTANTS),
    PublishedFigure("a100x8-8b", "Llama-3.1-8B", "A100", DECODE, 260, WAFERLLM, "SGLang, 8x A100 TP8",
                    tensor_parallel=8, calibrates=GPU_CONSTANTS),
    PublishedFigure("a100x8-13b", "Llama-2-13B", "A100", DECODE, 176, WAFERLLM, "SGLang, 8x A100 TP8",
                    tensor_parallel=8),
    PublishedFigure("cs3-8b-aug24", "Llama-3.1-8B", "WSE-3", DECODE, 1800, CEREBRAS_AUG, "CS-3, 16-bit"),
    PublishedFigure("cs3-70b-aug24", "Llama-3.1-70B", "WSE-3", DECODE, 450, CEREBRAS_AUG, "CS-3, 16-bit",
                    note="systems from the placement (4)"),
    PublishedFigure("cs3-70b-oct24-spec", "Llama-3.1-70B", "WSE-3", DECODE, 2100, "Cerebras blog, Oct 2024",
                    "CS-3, speculative", speculative=True,
                    note=f"draft not stated: {DRAFT}, {DRAFT_TOKENS} drafted tokens, acceptance rate from the "
                         f"H200 row"),
    PublishedFigure("cs3-405b", "Llama-3.1-405B", "WSE-3", DECODE, 969, "Cerebras, Nov 2024", "CS-3, 16-bit",
                    note="systems from the placement"),
    PublishedFigure("cs3-405b-ttft", "Llama-3.1-405B", "WSE-3", FIRST_TOKEN, 0.24, "Cerebras, Nov 2024",
                    "CS-3, first token", prompt_tokens=1000,
                    note="prompt length not stated: 1,000 tokens assumed; an API's first token includes network "
                         "and queueing"),
    PublishedFigure("h100-8b-best", "Llama-3.1-8B", "H100", DECODE, 242, "as cited by " + CEREBRAS_AUG,
                    "best H100 endpoint", bytes_per_param=FP8, tensor_parallel=1,
                    note="configuration not stated: FP8 on one H100 (the fastest endpoints served FP8)"),
    PublishedFigure("h100-70b-best", "Llama-3.1-70B", "H100", DECODE, 128, "as cited by " + CEREBRAS_AUG,
                    "best H100 endpoint", bytes_per_param=FP8, tensor_parallel=8,
                    note="configuration not stated: FP8 on one 8-GPU node, TP8"),
    PublishedFigure("h200-70b", "Llama-3.1-70B", "H200", DECODE, 51, NVIDIA_DEC, "TensorRT-LLM, Llama 3.3 70B",
                    bytes_per_param=FP8, tensor_parallel=1,
                    note="FP8 (the blog's quantization) on one H200 (the blog names one GPU)"),
    PublishedFigure("h200-70b-spec", "Llama-3.1-70B", "H200", DECODE, 182, NVIDIA_DEC,
                    "TensorRT-LLM, Llama 3.3 70B, draft model", bytes_per_param=FP8, tensor_parallel=1,
                    speculative=True, baseline="h200-70b", calibrates=ACCEPTANCE,
                    note=f"{DRAFT} draft, {DRAFT_TOKENS} drafted tokens; the acceptance rate is fitted to the "
                         f"published speedup 182/51"),
)


def figure(key: str) -> PublishedFigure:
    for row in FIGURES:
        if row.key == key:
            return row
    raise KeyError(key)
