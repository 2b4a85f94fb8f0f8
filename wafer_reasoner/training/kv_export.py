"""The engine's own export: the planner as onnxruntime contrib ops with a KV cache updated in place.

``planner.onnx`` (training/export.py) keeps onnxruntime-genai's layout, whose graph concatenates the whole cache
with the new K/V on every step and returns it as a new tensor. This graph is written node by node from the same
weights instead (no torch tracing), so a step is about 50 kernels, not 200:

    input_ids, position_ids [B, S] -> EmbedLayerNormalization (token + position, LN of block 0; the sum kept)
    per block:  MatMul(qkv) + bias -> GroupQueryAttention (causal; the cache [B, H, T, Dh] is past AND present)
                -> MatMul(proj) + bias + residual -> LayerNormalization (LN 2)
                -> MatMul(fc) -> FastGelu(+ fc bias) -> MatMul(out) + bias + residual -> LayerNormalization (the next
                   block's LN 1, or the final LN)
    -> Slice(positions logits_from..S-1) -> MatMul(head) -> logits [B, S - logits_from, V]

``logits_from`` [1] skips the output head for the positions nobody reads: a prompt's logits are needed only after
its last token (and at the drafted tokens fed with it), so a 40-token prefill computes 1 + draft rows of the head,
not 40 (the head is 8% of the prefill's multiply-adds).

GroupQueryAttention with the same buffer bound as ``past_key_values.N.*`` and ``present.N.*`` writes only the new
rows (``seqlens_k`` [B]: each row's length after this step - 1; ``query_seqlens`` [B]: each row's real chunk
length, so rows of one batch may feed chunks of different lengths, padded at the end; pads are never written).
Positions come in as ``position_ids``; the caller keeps each row's length, so a rejected draft is forgotten by
moving the length back (the next chunk overwrites it). FastGelu is the tanh GELU the model trains with.

Two files: ``planner_kv.onnx`` (float32, the same weights as planner.onnx) and ``planner_kv_int8.onnx`` (its
MatMul weights int8 in blocks of 64, by onnxruntime's MatMulNBits quantizer; see ``quantize_int8`` for why not
``quantize_dynamic``). Each carries metadata the engine and the benchmark read: its layout, precision and the bytes
of weights one single-token step reads.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

KV_MODEL_FILE = "planner_kv.onnx"
KV_INT8_MODEL_FILE = "planner_kv_int8.onnx"
KV_LAYOUT = "wafer_reasoner-inplace-kv-v1"  # the metadata value engine/static_decoder.py checks
OPSET = 17
LN_EPSILON = 1e-5  # torch.nn.LayerNorm's default, what training used
# tables a step reads one row of (Gather inside EmbedLayerNormalization), not all of
GATHERED = ("token_embedding", "position_embedding")
INT8_BLOCK = 64  # weights per int8 scale along the input (onnxruntime takes 16, 32, 64, 128 or 256)


def _names(layers: int) -> tuple:
    past = [f"past_key_values.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]
    present = [f"present.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]
    return past, present


class _Graph:
    """Nodes and initializers being written; weights go in as float32, row-major."""

    def __init__(self):
        self.nodes, self.initializers = [], []

    def weight(self, name: str, array) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def constant(self, name: str, values: list) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def node(self, op: str, inputs: list, outputs: list, contrib: bool = False, **attributes) -> None:
        from onnx import helper

        domain = "com.microsoft" if contrib else ""
        self.nodes.append(helper.make_node(op, inputs, outputs, name=f"{op}_{len(self.nodes)}", domain=domain,
                                           **attributes))


def _block(graph: _Graph, weights: dict, index: int, hidden: tuple, config: dict) -> tuple:
    """One transformer block from (LN1 output, residual) to (next LN output, residual); weights are torch's
    [out, in] Linear matrices, transposed here to MatMul's [in, out]."""
    w = lambda name: weights[f"blocks.{index}.{name}"]  # noqa: E731
    normed, residual = hidden
    heads = config["num_heads"]
    past_key, past_value = f"past_key_values.{index}.key", f"past_key_values.{index}.value"
    name = f"block{index}"
    graph.node("MatMul", [normed, graph.weight(f"{name}.qkv.weight", w("qkv.weight").T)], [f"{name}.qkv_mm"])
    graph.node("Add", [f"{name}.qkv_mm", graph.weight(f"{name}.qkv.bias", w("qkv.bias"))], [f"{name}.qkv"])
    graph.node("GroupQueryAttention",
               [f"{name}.qkv", "", "", past_key, past_value, "seqlens_k", "total_sequence_length",
                "", "", "", "", "", "", "", "", "", "query_seqlens"],
               [f"{name}.attended", f"present.{index}.key", f"present.{index}.value"],
               contrib=True, num_heads=heads, kv_num_heads=heads)
    graph.node("MatMul", [f"{name}.attended", graph.weight(f"{name}.proj.weight", w("proj.weight").T)],
               [f"{name}.proj"])
    mid = _residual(graph, f"{name}.proj", w("proj.bias"), residual, (w("ln2.weight"), w("ln2.bias")), f"{name}.mid")
    graph.node("MatMul", [f"{name}.mid.ln", graph.weight(f"{name}.fc.weight", w("fc.weight").T)], [f"{name}.fc"])
    graph.node("FastGelu", [f"{name}.fc", graph.weight(f"{name}.fc.bias", w("fc.bias"))], [f"{name}.gelu"],
               contrib=True)
    graph.node("MatMul", [f"{name}.gelu", graph.weight(f"{name}.out.weight", w("out.weight").T)], [f"{name}.out"])
    last = index + 1 == config["num_layers"]
    norm = ("ln_f.weight", "ln_f.bias") if last else (f"blocks.{index + 1}.ln1.weight", f"blocks.{index + 1}.ln1.bias")
    following = _residual(graph, f"{name}.out", w("out.bias"), mid, tuple(weights[n] for n in norm), f"{name}.next")
    return f"{name}.next.ln", following


def _residual(graph: _Graph, branch: str, bias, residual: str, norm: tuple, name: str) -> str:
    """residual + branch + bias -> ``name``, and its LayerNormalization -> ``name.ln``. (Add, Add and
    LayerNormalization, not the contrib SkipLayerNormalization: onnxruntime's CPU kernel of the latter measured
    3x slower on a 28-token prefill, 38 us against 12.5 us per norm, and the same on one token.)"""
    graph.node("Add", [branch, graph.weight(f"{name}.bias", bias)], [f"{name}.branch"])
    graph.node("Add", [f"{name}.branch", residual], [name])
    graph.node("LayerNormalization", [name, graph.weight(f"{name}.ln.weight", norm[0]),
                                      graph.weight(f"{name}.ln.bias", norm[1])], [f"{name}.ln"],
               axis=-1, epsilon=LN_EPSILON)
    return name


def kv_model(weights: dict, config: dict):
    """The in-place-KV graph for a planner's weights (``state_dict`` names, numpy arrays) and config
    (``PlannerConfig.to_dict()``) -> onnx.ModelProto."""
    from onnx import TensorProto, helper

    layers, heads, width = config["num_layers"], config["num_heads"], config["hidden_size"]
    head_size, context, vocab = width // heads, config["context_length"], config["vocab_size"]
    graph = _Graph()
    graph.node("EmbedLayerNormalization",
               ["input_ids", "", graph.weight("token_embedding", weights["tok.weight"]),
                graph.weight("position_embedding", weights["pos.weight"]), "",
                graph.weight("blocks.0.ln1.weight", weights["blocks.0.ln1.weight"]),
                graph.weight("blocks.0.ln1.bias", weights["blocks.0.ln1.bias"]), "", "position_ids"],
               ["embedded_ln", "", "embedded"], contrib=True, epsilon=LN_EPSILON)
    hidden = ("embedded_ln", "embedded")
    for index in range(layers):
        hidden = _block(graph, weights, index, hidden, config)
    graph.node("Slice", [hidden[0], "logits_from", graph.constant("slice_end", [np.iinfo(np.int64).max]),
                         graph.constant("slice_axis", [1])], ["head_in"])  # [B, S - logits_from, C]
    graph.node("MatMul", ["head_in", graph.weight("head.weight", weights["tok.weight"].T)], ["logits"])  # tied
    past, present = _names(layers)
    cache = ["batch", heads, context, head_size]  # [B, H, T max, Dh]: the whole context, always
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT32, ["batch", "sequence"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT32, ["batch", "sequence"]),
              helper.make_tensor_value_info("seqlens_k", TensorProto.INT32, ["batch"]),
              helper.make_tensor_value_info("total_sequence_length", TensorProto.INT32, []),
              helper.make_tensor_value_info("query_seqlens", TensorProto.INT32, ["batch"]),
              helper.make_tensor_value_info("logits_from", TensorProto.INT64, [1]),
              *[helper.make_tensor_value_info(name, TensorProto.FLOAT, cache) for name in past]]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "logit_positions", vocab]),
               *[helper.make_tensor_value_info(name, TensorProto.FLOAT, cache) for name in present]]
    model = helper.make_model(helper.make_graph(graph.nodes, "planner_kv", inputs, outputs, graph.initializers),
                              opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="wafer_reasoner.training.kv_export")
    _describe(model, "float32")
    return model


def step_weight_bytes(model) -> int:
    """Bytes of initializers one single-token step reads: every weight whole, but one row of each embedding."""
    from onnx import numpy_helper

    total = 0
    for tensor in model.graph.initializer:
        array = numpy_helper.to_array(tensor)
        total += array.nbytes // array.shape[0] if tensor.name in GATHERED else array.nbytes
    return total


def _describe(model, precision: str) -> None:
    from onnx import helper

    del model.metadata_props[:]
    helper.set_model_props(model, {"layout": KV_LAYOUT, "precision": precision,
                                   "step_weight_bytes": str(step_weight_bytes(model))})


def quantize_int8(source: Path, target: Path) -> Path:
    """``source`` with its MatMul weights int8 by onnxruntime's weight-only quantizer (MatMulNBits, 8 bits,
    symmetric, blocks of INT8_BLOCK along the input), run with ``accuracy_level`` 4: each activation row is
    quantized to int8 per block on its own, so a row's result never depends on the other rows of its chunk or
    batch: drafts and forced runs never change a plan, and best-of-N row k is the same whatever N, as at float32
    (``quantize_dynamic``'s DynamicQuantizeMatMul quantizes a whole chunk with one scale, which breaks both). The
    embeddings, norms and attention stay float32."""
    import logging

    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)  # a line a node

    config = DefaultWeightOnlyQuantConfig(block_size=INT8_BLOCK, is_symmetric=True, accuracy_level=4, bits=8)
    quantizer = MatMulNBitsQuantizer(onnx.load(str(source)), algo_config=config)
    quantizer.process()
    model = quantizer.model.model
    _describe(model, "int8")
    onnx.save(model, str(target))
    return target


def export_kv(weights: dict, config: dict, out_dir) -> tuple:
    """Write planner_kv.onnx and planner_kv_int8.onnx into out_dir; returns their paths."""
    import onnx

    out = Path(out_dir)
    fp32 = out / KV_MODEL_FILE
    onnx.save(kv_model(weights, config), str(fp32))
    return fp32, quantize_int8(fp32, out / KV_INT8_MODEL_FILE)
