"""Export the trained planner to ONNX in onnxruntime-genai's decoder layout, plus its side files.

Writes into the output folder:
- ``planner.onnx``: inputs ``input_ids`` [B, S] int64, ``attention_mask`` [B, T] int64,
  ``past_key_values.N.key/value`` [B, H, P, Dh] float32; outputs ``logits`` [B, S, V],
  ``present.N.key/value`` [B, H, T, Dh] (T = P + S). Weights are stored inside the file.
- ``genai_config.json``: the same layout described for onnxruntime-genai (model type ``decoder``: separate
  key/value inputs and no ``position_ids``; genai's ``gpt2`` type expects combined ``past_%d`` tensors, and
  genai refuses unknown keys, so nothing of our own goes into this file).
- ``tokenizer.json``: the vocabulary and its ``kind``, the prompt layout it was trained with (engine/prompt.py).
- ``planner_kv.onnx`` and ``planner_kv_int8.onnx``: the same weights as the engine's own graph, with the KV cache
  updated in place (training/kv_export.py); onnxruntime-genai cannot read them, the fast engine prefers them.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from wafer_reasoner.training.kv_export import export_kv
from wafer_reasoner.training.model import ExportWrapper, Planner

MODEL_FILE = "planner.onnx"
OPSET = 17


def io_names(layers: int):
    past = [f"past_key_values.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]
    present = [f"present.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]
    return ["input_ids", "attention_mask", *past], ["logits", *present]


def genai_config(model: Planner, tokenizer) -> dict:
    config = model.config
    return {
        "model": {
            "bos_token_id": tokenizer.bos_id,
            "eos_token_id": tokenizer.eos_id,
            "pad_token_id": tokenizer.pad_id,
            "context_length": config.context_length,
            "type": "decoder",
            "vocab_size": config.vocab_size,
            "decoder": {
                "session_options": {"log_id": "wafer_reasoner", "provider_options": []},
                "filename": MODEL_FILE,
                "head_size": config.head_size,
                "hidden_size": config.hidden_size,
                "num_attention_heads": config.num_heads,
                "num_key_value_heads": config.num_heads,
                "num_hidden_layers": config.num_layers,
                "inputs": {
                    "input_ids": "input_ids",
                    "attention_mask": "attention_mask",
                    "past_key_names": "past_key_values.%d.key",
                    "past_value_names": "past_key_values.%d.value",
                },
                "outputs": {
                    "logits": "logits",
                    "present_key_names": "present.%d.key",
                    "present_value_names": "present.%d.value",
                },
            },
        },
        "search": {"do_sample": False, "max_length": config.context_length, "num_beams": 1, "top_k": 1,
                   "temperature": 1.0, "past_present_share_buffer": False},
    }


def export_model(model: Planner, tokenizer, out_dir) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = model.eval()
    config = model.config
    inputs, outputs = io_names(config.num_layers)
    batch, past_len, seq = 2, 3, 5
    example = [
        torch.ones((batch, seq), dtype=torch.long),
        torch.ones((batch, past_len + seq), dtype=torch.long),
        *[torch.zeros((batch, config.num_heads, past_len, config.head_size)) for _ in range(2 * config.num_layers)],
    ]
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"}}
    dynamic.update({name: {0: "batch", 2: "past_sequence"} for name in inputs[2:]})
    dynamic.update({"logits": {0: "batch", 1: "sequence"}})
    dynamic.update({name: {0: "batch", 2: "total_sequence"} for name in outputs[1:]})
    path = out / MODEL_FILE
    torch.onnx.export(
        ExportWrapper(model), tuple(example), str(path), input_names=inputs, output_names=outputs,
        dynamic_axes=dynamic, opset_version=OPSET, dynamo=False, do_constant_folding=True,
    )
    tokenizer.save(out / "tokenizer.json")
    (out / "genai_config.json").write_text(json.dumps(genai_config(model, tokenizer), indent=2))
    weights = {name: tensor.detach().cpu().numpy() for name, tensor in model.state_dict().items()}
    export_kv(weights, config.to_dict(), out)
    return path


def main(argv=None) -> int:
    """Re-export from a saved checkpoint: python -m wafer_reasoner.training.export runs/planner/planner.pt OUT_DIR
    (all files: planner.onnx in genai's layout, planner_kv.onnx, planner_kv_int8.onnx and the side files);
    with --kv-only just the engine's two exports, beside a folder's existing planner.onnx and tokenizer.json."""
    import argparse

    from wafer_reasoner.training.model import PlannerConfig
    from wafer_reasoner.training.vocab import build_tokenizer

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("checkpoint")
    parser.add_argument("out")
    parser.add_argument("--kv-only", action="store_true", help="write planner_kv.onnx and planner_kv_int8.onnx only")
    args = parser.parse_args(argv)
    saved = torch.load(args.checkpoint, map_location="cpu")
    if args.kv_only:
        weights = {name: tensor.detach().cpu().numpy() for name, tensor in saved["state"].items()}
        for path in export_kv(weights, saved["config"], args.out):
            print(path)
        return 0
    model = Planner(PlannerConfig(**saved["config"]))
    model.load_state_dict(saved["state"])
    print(export_model(model, build_tokenizer(), args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
