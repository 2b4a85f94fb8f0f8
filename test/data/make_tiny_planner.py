"""Write the tiny random planner used by the engine tests (CI has no torch, so the result is committed).

    PYTHONPATH=. /path/to/python-with-torch test/data/make_tiny_planner.py      # -> test/data/tiny_planner/
    PYTHONPATH=. /path/to/python-with-torch test/data/make_tiny_planner.py v1   # -> test/data/tiny_planner_v1/
    PYTHONPATH=. /path/to/python-with-torch test/data/make_tiny_planner.py v2   # -> test/data/tiny_planner_v2/

Same ONNX layout, tokenizer and genai_config.json as the shipped model (training/export.py), but 2 layers of
width 32 with fixed seeded weights. The embeddings are drawn wider than training's init (std 0.5, not 0.02) so the
logits are far apart and greedy token sequences do not hinge on rounding.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from wafer_reasoner.engine.prompt import KIND_V0, KIND_V1, KIND_V2
from wafer_reasoner.training.export import export_model
from wafer_reasoner.training.model import Planner, PlannerConfig
from wafer_reasoner.training.vocab import build_tokenizer

OUT_DIRS = {"v0": Path(__file__).resolve().parent / "tiny_planner",  # word prompts (the v0 format)
            "v1": Path(__file__).resolve().parent / "tiny_planner_v1",  # spelled, speech-normalised prompts
            "v2": Path(__file__).resolve().parent / "tiny_planner_v2"}  # v1 with mentions grounded in the prompt
SEED = 20261130
FORMAT_KINDS = {"v0": KIND_V0, "v1": KIND_V1, "v2": KIND_V2}


def tiny_planner(vocab_size: int) -> Planner:
    torch.manual_seed(SEED)
    config = PlannerConfig(vocab_size=vocab_size, hidden_size=32, num_layers=2, num_heads=2, ffn_size=64)
    model = Planner(config)
    with torch.no_grad():
        model.tok.weight.normal_(std=0.5)  # [V, C]: tied output head, so this sets the logit spread
        model.pos.weight.normal_(std=0.5)  # [context, C]
        for block in model.blocks:
            for linear in (block.qkv, block.proj, block.fc, block.out):
                linear.weight.normal_(std=0.2)
    return model


def main(argv=None) -> int:
    fmt = (argv if argv is not None else sys.argv[1:] or ["v0"])[0]
    tokenizer = build_tokenizer(FORMAT_KINDS[fmt])
    path = export_model(tiny_planner(len(tokenizer)), tokenizer, OUT_DIRS[fmt])
    print(f"{path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
