"""Target models: the decoder whose speed is emulated (the shipped planner, or a preset such as Llama-3.1-70B).

Parameter counts come from the layer shapes, so they can be checked against the published totals
(tests: Llama-3.1-8B = 8,030,261,248 parameters; Mixtral-8x7B = 46.7B total / 12.9B active).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from wafer_reasoner.emulator.datafiles import EmulatorDataError, build, read_yaml

ARCHITECTURES = {
    "llama": "RMSNorm, gated SiLU MLP (3 matrices), rotary positions, no biases",
    "gpt2": "LayerNorm, GELU MLP (2 matrices), learned positions, biases",
}
PLANNER = "planner"  # the target name that means "the shipped model in wafer_reasoner/models/"


@dataclass(frozen=True)
class TargetModel:
    name: str
    architecture: str  # a key of ARCHITECTURES
    layers: int  # transformer blocks
    hidden_size: int  # model width
    heads: int  # query heads
    kv_heads: int  # key/value heads (grouped-query attention when < heads)
    head_size: int  # width of one head
    ffn_size: int  # MLP inner width (of one expert)
    vocab_size: int
    context_tokens: int  # KV cache the placement reserves for one request
    bytes_per_param: float  # weights and KV cache: 2 = bf16/fp16, 1 = fp8, 4 = fp32
    tied_embeddings: bool  # the LM head reuses the token embedding
    experts: int = 1  # mixture-of-experts: experts per layer (1 = dense)
    experts_per_token: int = 1  # experts each token is routed to
    published_params: float = 0.0  # total parameters as the source states them (0: not stated)
    published_active_params: float = 0.0  # active parameters per token as stated (mixture-of-experts)
    source: str = ""

    # -- shapes -------------------------------------------------------------------------------------------------
    @property
    def attention_params(self) -> int:
        """Q, K, V and output projections of one layer (+ their biases for gpt2)."""
        q_width, kv_width = self.heads * self.head_size, self.kv_heads * self.head_size
        weights = 2 * self.hidden_size * q_width + 2 * self.hidden_size * kv_width
        biases = q_width + 2 * kv_width + self.hidden_size if self.architecture == "gpt2" else 0
        return weights + biases

    @property
    def expert_params(self) -> int:
        """One MLP (one expert)."""
        if self.architecture == "gpt2":
            return 2 * self.hidden_size * self.ffn_size + self.ffn_size + self.hidden_size
        return 3 * self.hidden_size * self.ffn_size

    @property
    def norm_params(self) -> int:
        """The two norms of one layer (LayerNorm has a bias, RMSNorm has not)."""
        return (4 if self.architecture == "gpt2" else 2) * self.hidden_size

    @property
    def router_params(self) -> int:
        return self.hidden_size * self.experts if self.experts > 1 else 0

    @property
    def layer_params(self) -> int:
        return self.attention_params + self.experts * self.expert_params + self.norm_params + self.router_params

    @property
    def active_layer_params(self) -> int:
        """Parameters one token touches in one layer."""
        return (self.attention_params + self.experts_per_token * self.expert_params + self.norm_params
                + self.router_params)

    @property
    def embedding_params(self) -> int:
        """Token embedding (+ learned positions for gpt2)."""
        positions = self.context_tokens * self.hidden_size if self.architecture == "gpt2" else 0
        return self.vocab_size * self.hidden_size + positions

    @property
    def final_norm_params(self) -> int:
        return (2 if self.architecture == "gpt2" else 1) * self.hidden_size

    @property
    def head_params(self) -> int:
        """LM head (0 when tied) and the final norm."""
        return (0 if self.tied_embeddings else self.vocab_size * self.hidden_size) + self.final_norm_params

    @property
    def total_params(self) -> int:
        return self.layers * self.layer_params + self.embedding_params + self.head_params

    @property
    def active_params(self) -> int:
        """What the published 'active parameters' of a mixture-of-experts model count."""
        return self.layers * self.active_layer_params + self.embedding_params + self.head_params

    @property
    def weight_bytes(self) -> float:
        return self.total_params * self.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> float:
        """Keys and values of one token in every layer."""
        return 2 * self.layers * self.kv_heads * self.head_size * self.bytes_per_param

    @property
    def activation_bytes(self) -> float:
        """Bytes per activation value: 16-bit, or 32-bit for a float32 model."""
        return max(2.0, self.bytes_per_param)

    # -- work of one forward pass -------------------------------------------------------------------------------
    def read_params(self, tokens: int) -> float:
        """Weights streamed by one forward pass of ``tokens`` tokens.

        The embedding table is only indexed (one row per token), the LM-head matrix is read whole (tied or not).
        With experts, ``tokens`` tokens touch E * (1 - (1 - k/E)^tokens) distinct experts per layer on average.
        """
        if self.experts > 1:
            touched = self.experts * (1.0 - (1.0 - self.experts_per_token / self.experts) ** max(tokens, 1))
        else:
            touched = 1.0
        per_layer = self.attention_params + touched * self.expert_params + self.norm_params + self.router_params
        return self.layers * per_layer + self.vocab_size * self.hidden_size + self.final_norm_params

    def matmul_flops(self, tokens: int) -> float:
        """2 FLOPs per active weight per token (the embedding lookup is free, the LM head is not)."""
        per_token = self.layers * self.active_layer_params + self.vocab_size * self.hidden_size
        return 2.0 * per_token * tokens

    def attention_flops(self, tokens: int, past_tokens: float) -> float:
        """Scores (q.k) and weighted values (p.v) of ``tokens`` causal queries over the past + themselves."""
        keys_seen = tokens * past_tokens + tokens * (tokens + 1) / 2.0
        return 4.0 * self.layers * self.heads * self.head_size * keys_seen


TARGET_KINDS = {
    "name": "text", "architecture": "text", "layers": "count", "hidden_size": "count", "heads": "count",
    "kv_heads": "count", "head_size": "count", "ffn_size": "count", "vocab_size": "count",
    "context_tokens": "count", "bytes_per_param": "positive", "tied_embeddings": "flag", "experts": "count",
    "experts_per_token": "count", "published_params": "nonnegative", "published_active_params": "nonnegative",
    "source": "text",
}


def target_from_dict(name: str, data: dict, *, where: str = "target") -> TargetModel:
    where = f"{where} '{name}'"
    if isinstance(data, dict):
        data = {**data, "name": name}
    defaults = {"experts": 1, "experts_per_token": 1, "published_params": 0.0, "published_active_params": 0.0}
    target = build(TargetModel, where, data, TARGET_KINDS, defaults=defaults)
    if target.architecture not in ARCHITECTURES:
        raise EmulatorDataError(f"{where}: architecture must be one of {', '.join(ARCHITECTURES)}")
    if target.heads % target.kv_heads:
        raise EmulatorDataError(f"{where}: heads ({target.heads}) must be a multiple of kv_heads")
    if target.experts_per_token > target.experts:
        raise EmulatorDataError(f"{where}: experts_per_token exceeds experts")
    return target


def load_targets(path) -> dict:
    """Presets from a targets file (config/target_models.yaml): {name: TargetModel}."""
    path = Path(path)
    data = read_yaml(path)
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise EmulatorDataError(f"{path}: expected a non-empty 'models' mapping")
    return {name: target_from_dict(str(name), entry, where=str(path)) for name, entry in models.items()}


def planner_target(model_dir) -> TargetModel:
    """The planner model in ``model_dir``, read from its ``genai_config.json`` (float32 ONNX weights)."""
    path = Path(model_dir) / "genai_config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        model, decoder = config["model"], config["model"]["decoder"]
        hidden = int(decoder["hidden_size"])
        ffn = config.get("wafer_reasoner", {}).get("planner_config", {}).get("ffn_size", 4 * hidden)
        fields = {
            "architecture": "gpt2", "layers": decoder["num_hidden_layers"], "hidden_size": hidden,
            "heads": decoder["num_attention_heads"], "kv_heads": decoder["num_key_value_heads"],
            "head_size": decoder["head_size"], "ffn_size": ffn, "vocab_size": model["vocab_size"],
            "context_tokens": model["context_length"], "bytes_per_param": 4, "tied_embeddings": True,
            "source": str(path),
        }
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        raise EmulatorDataError(
            f"cannot read the planner's layout from {path}: {error!r}. The file is written by "
            f"`python -m wafer_reasoner.training.export` (make train)."
        ) from None
    return target_from_dict(PLANNER, fields, where=str(path))


def with_precision(target: TargetModel, bytes_per_param: float | None) -> TargetModel:
    """The same model served at another weight precision (e.g. FP8 = 1 byte)."""
    if bytes_per_param is None or bytes_per_param == target.bytes_per_param:
        return target
    if bytes_per_param <= 0:
        raise EmulatorDataError(f"bytes_per_param must be > 0, got {bytes_per_param!r}")
    return replace(target, bytes_per_param=float(bytes_per_param))
