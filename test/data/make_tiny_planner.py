"""Write the tiny random planner used by the engine tests (CI has no torch, so the result is committed).

    PYTHONPATH=. /path/to/python-with-torch test/data/make_tiny_planner.py      # -> test/data/tiny_planner/

Same ONNX layout, tokenizer and genai_config.json as the shipped model (training/export.py), but 2 layers of
width 32 with fixed seeded weights. The embeddings are drawn wider than training's init (std 0.5, not 0.02) so the
logits are far apart and greedy token sequences do not hinge on rounding.
"""

from __future__ import annotations

from pathlib import Path

import torch

from wafer_reasoner.training.export import export_model
from wafer_reasoner.training.model import Planner, PlannerConfig
from wafer_reasoner.training.vocab import build_tokenizer

OUT_DIR = Path(__file__).resolve().parent / "tiny_planner"
SEED = 20261130


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


def main() -> int:
    tokenizer = build_tokenizer()
    path = export_model(tiny_planner(len(tokenizer)), tokenizer, OUT_DIR)
    print(f"{path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
