"""Target models: the decoder whose speed is emulated (the shipped planner, or a preset such as Llama-3.1-70B).

Parameter counts come from the layer shapes, so they can be checked against the published totals
(tests: Llama-3.1-8B = 8,030,261,248 parameters; Mixtral-8x7B = 46.7B total / 12.9B active).

A model's weights fall into precision groups (``GROUPS``): attention (with norms and the router), the dense MLP
(and always-on shared experts), the routed experts, the embeddings (token table and LM head), and the KV cache.
Each group has its own bytes per parameter (e.g. gpt-oss ships 4-bit experts beside 16-bit attention).
A mixture of experts may keep some layers dense (``dense_layers``, e.g. Llama 4 Maverick alternates them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from wafer_reasoner.emulator.datafiles import EmulatorDataError, build, check_value, read_yaml

ARCHITECTURES = {
    "llama": "RMSNorm, gated SiLU MLP (3 matrices), rotary positions, no biases",
    "gpt2": "LayerNorm, GELU MLP (2 matrices), learned positions, biases",
}
PLANNER = "planner"  # the target name that means "the shipped model in wafer_reasoner/models/"
# precision groups: attention (+ norms, router), mlp (dense MLP + shared experts), experts (routed),
# embeddings (token table + LM head), kv_cache (keys and values)
GROUPS = ("attention", "mlp", "experts", "embeddings", "kv_cache")


@dataclass(frozen=True)
class TargetModel:
    name: str
    architecture: str  # a key of ARCHITECTURES
    layers: int  # transformer blocks
    hidden_size: int  # model width
    heads: int  # query heads
    kv_heads: int  # key/value heads (grouped-query attention when < heads)
    head_size: int  # width of one head
    ffn_size: int  # dense MLP inner width
    vocab_size: int
    context_tokens: int  # KV cache the placement reserves for one request
    bytes_per_param: float  # every group without its own entry in ``precision``: 2 = bf16, 1 = fp8, 4 = fp32
    tied_embeddings: bool  # the LM head reuses the token embedding
    experts: int = 1  # mixture-of-experts: routed experts per MoE layer (1 = dense)
    experts_per_token: int = 1  # routed experts each token goes to
    expert_ffn_size: int = 0  # inner width of one expert (0: ffn_size)
    shared_experts: int = 0  # experts every token goes to, per MoE layer (width expert_ffn_size)
    dense_layers: int = 0  # MoE model: layers with a dense MLP of ffn_size instead of experts
    draft_vocab_size: int = 0  # a draft head predicting over a reduced vocabulary (EAGLE-3): LM-head width
    precision: tuple = ()  # ((group, bytes per parameter), ...) overriding bytes_per_param per group
    published_params: float = 0.0  # total parameters as the source states them (0: not stated)
    published_active_params: float = 0.0  # active parameters per token as stated (mixture-of-experts)
    source: str = ""

    # -- layer structure -------------------------------------------------------------------------------------
    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a set of routed experts."""
        return self.layers - self.dense_layers if self.experts > 1 else 0

    @property
    def dense_mlp_layers(self) -> int:
        return self.layers - self.moe_layers

    @property
    def attention_params(self) -> int:
        """Q, K, V and output projections of one layer (+ their biases for gpt2)."""
        q_width, kv_width = self.heads * self.head_size, self.kv_heads * self.head_size
        weights = 2 * self.hidden_size * q_width + 2 * self.hidden_size * kv_width
        biases = q_width + 2 * kv_width + self.hidden_size if self.architecture == "gpt2" else 0
        return weights + biases

    def _mlp(self, inner: int) -> int:
        if self.architecture == "gpt2":
            return 2 * self.hidden_size * inner + inner + self.hidden_size
        return 3 * self.hidden_size * inner

    @property
    def mlp_params(self) -> int:
        """The dense MLP of one dense layer."""
        return self._mlp(self.ffn_size)

    @property
    def expert_params(self) -> int:
        """One expert (of a dense model: its MLP)."""
        return self._mlp(self.expert_ffn_size or self.ffn_size) if self.experts > 1 else self.mlp_params

    @property
    def norm_params(self) -> int:
        """The two norms of one layer (LayerNorm has a bias, RMSNorm has not)."""
        return (4 if self.architecture == "gpt2" else 2) * self.hidden_size

    @property
    def router_params(self) -> int:
        return self.hidden_size * self.experts if self.experts > 1 else 0

    def layer_group_params(self, moe: bool, experts_read: float | None = None) -> dict:
        """{group: parameters} of one layer; ``experts_read``: routed experts counted (default: all)."""
        if not moe:
            return {"attention": self.attention_params + self.norm_params, "mlp": self.mlp_params, "experts": 0}
        routed = self.experts if experts_read is None else experts_read
        return {"attention": self.attention_params + self.norm_params + self.router_params,
                "mlp": self.shared_experts * self.expert_params, "experts": routed * self.expert_params}

    @property
    def layer_params(self) -> int:
        """One layer's parameters (the MoE layer's when the model has experts)."""
        return int(sum(self.layer_group_params(self.moe_layers > 0).values()))

    @property
    def active_layer_params(self) -> int:
        """Parameters one token touches in one layer (an MoE layer's when the model has experts)."""
        return int(sum(self.layer_group_params(self.moe_layers > 0, self.experts_per_token).values()))

    @property
    def embedding_params(self) -> int:
        """Token embedding (+ learned positions for gpt2)."""
        positions = self.context_tokens * self.hidden_size if self.architecture == "gpt2" else 0
        return self.vocab_size * self.hidden_size + positions

    @property
    def head_width(self) -> int:
        """Outputs of the LM head: the vocabulary, or a draft head's reduced vocabulary."""
        return self.draft_vocab_size or self.vocab_size

    @property
    def final_norm_params(self) -> int:
        return (2 if self.architecture == "gpt2" else 1) * self.hidden_size

    @property
    def head_params(self) -> int:
        """LM head (0 when tied) and the final norm."""
        return (0 if self.tied_embeddings else self.head_width * self.hidden_size) + self.final_norm_params

    def group_params(self, experts_read: float | None = None) -> dict:
        """{group: parameters} of the whole model (``experts_read`` routed experts per MoE layer; default all)."""
        return dict(_group_params(self, experts_read))

    def _group_params(self, experts_read: float | None) -> dict:
        dense, moe = self.layer_group_params(False), self.layer_group_params(True, experts_read)
        totals = {group: self.dense_mlp_layers * dense[group] + self.moe_layers * moe[group]
                  for group in ("attention", "mlp", "experts")}
        totals["attention"] += self.final_norm_params
        totals["embeddings"] = self.embedding_params + self.head_params - self.final_norm_params
        return totals

    @property
    def total_params(self) -> int:
        return int(sum(self.group_params().values()))

    @property
    def active_params(self) -> int:
        """What the published 'active parameters' of a mixture-of-experts model count."""
        return int(sum(self.group_params(self.experts_per_token).values()))

    # -- bytes -------------------------------------------------------------------------------------------------
    def group_bytes(self, group: str) -> float:
        """Bytes per parameter of a precision group."""
        return dict(self.precision).get(group, self.bytes_per_param)

    def _bytes(self, params: dict) -> float:
        return sum(count * self.group_bytes(group) for group, count in params.items())

    @property
    def weight_bytes(self) -> float:
        return self._bytes(self.group_params())

    def layer_bytes(self, moe: bool) -> float:
        """Weights of one dense or MoE layer."""
        return self._bytes(self.layer_group_params(moe))

    @property
    def kv_bytes_per_token(self) -> float:
        """Keys and values of one token in every layer."""
        return 2 * self.layers * self.kv_heads * self.head_size * self.group_bytes("kv_cache")

    @property
    def activation_bytes(self) -> float:
        """Bytes per activation value: 16-bit, or 32-bit for a float32 model."""
        return max(2.0, self.bytes_per_param)

    # -- work of one forward pass -------------------------------------------------------------------------------
    def experts_touched(self, tokens: int) -> float:
        """Distinct routed experts ``tokens`` tokens reach in one MoE layer: E (1 - (1 - k/E)^tokens)."""
        if self.experts <= 1:
            return 0.0
        return self.experts * (1.0 - (1.0 - self.experts_per_token / self.experts) ** max(tokens, 1))

    def read_group_params(self, tokens: int) -> dict:
        """{group: parameters} streamed by one forward pass of ``tokens`` tokens.

        The embedding table is only indexed (one row per token), the LM-head matrix is read whole (tied or not);
        only the routed experts the tokens reach are read."""
        params = self.group_params(self.experts_touched(tokens))
        params["embeddings"] = self.head_width * self.hidden_size
        return params

    def read_params(self, tokens: int) -> float:
        return sum(self.read_group_params(tokens).values())

    def read_bytes(self, tokens: int) -> float:
        return self._bytes(self.read_group_params(tokens))

    def matmul_flops(self, tokens: int) -> float:
        """2 FLOPs per active weight per token (the embedding lookup is free, the LM head is not)."""
        active = self.group_params(self.experts_per_token)
        layers = active["attention"] - self.final_norm_params + active["mlp"] + active["experts"]
        per_token = layers + self.head_width * self.hidden_size
        return 2.0 * per_token * tokens

    def attention_flops(self, tokens: int, past_tokens: float) -> float:
        """Scores (q.k) and weighted values (p.v) of ``tokens`` causal queries over the past + themselves."""
        keys_seen = tokens * past_tokens + tokens * (tokens + 1) / 2.0
        return 4.0 * self.layers * self.heads * self.head_size * keys_seen


@lru_cache(maxsize=8192)
def _group_params(target: TargetModel, experts_read: float | None) -> tuple:
    return tuple(target._group_params(experts_read).items())


TARGET_KINDS = {
    "name": "text", "architecture": "text", "layers": "count", "hidden_size": "count", "heads": "count",
    "kv_heads": "count", "head_size": "count", "ffn_size": "count", "vocab_size": "count",
    "context_tokens": "count", "bytes_per_param": "positive", "tied_embeddings": "flag", "experts": "count",
    "experts_per_token": "count", "expert_ffn_size": "nonnegative", "shared_experts": "nonnegative",
    "dense_layers": "nonnegative", "draft_vocab_size": "nonnegative", "published_params": "nonnegative",
    "published_active_params": "nonnegative", "source": "text",
}
TARGET_DEFAULTS = {"experts": 1, "experts_per_token": 1, "expert_ffn_size": 0, "shared_experts": 0,
                   "dense_layers": 0, "draft_vocab_size": 0, "published_params": 0.0, "published_active_params": 0.0}
WHOLE = ("expert_ffn_size", "shared_experts", "dense_layers", "draft_vocab_size")


def precision_pairs(where: str, precision) -> tuple:
    """((group, bytes), ...) sorted, from a {group: bytes} mapping; every group known, every value > 0."""
    if precision in (None, {}):
        return ()
    if not isinstance(precision, dict):
        raise EmulatorDataError(f"{where}: 'precision' must map groups ({', '.join(GROUPS)}) to bytes per param")
    unknown = sorted(set(precision) - set(GROUPS))
    if unknown:
        raise EmulatorDataError(f"{where}: unknown precision group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    return tuple(sorted((group, check_value(where, f"precision.{group}", value, "positive"))
                        for group, value in precision.items()))


def target_from_dict(name: str, data: dict, *, where: str = "target") -> TargetModel:
    where = f"{where} '{name}'"
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{where}: expected a mapping")
    data = {**data, "name": name}
    precision = precision_pairs(where, data.pop("precision", None))
    target = build(TargetModel, where, data, TARGET_KINDS, defaults=TARGET_DEFAULTS)
    whole = {field: int(getattr(target, field)) for field in WHOLE}
    if any(whole[field] != getattr(target, field) for field in WHOLE):
        raise EmulatorDataError(f"{where}: {', '.join(WHOLE)} must be whole numbers")
    target = replace(target, precision=precision, **whole)
    if target.architecture not in ARCHITECTURES:
        raise EmulatorDataError(f"{where}: architecture must be one of {', '.join(ARCHITECTURES)}")
    if target.heads % target.kv_heads:
        raise EmulatorDataError(f"{where}: heads ({target.heads}) must be a multiple of kv_heads")
    if target.experts_per_token > target.experts:
        raise EmulatorDataError(f"{where}: experts_per_token exceeds experts")
    if target.dense_layers >= target.layers and target.experts > 1:
        raise EmulatorDataError(f"{where}: a mixture of experts needs dense_layers < layers")
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
    """The same model served at one precision for every group (e.g. FP8 = 1 byte)."""
    if bytes_per_param is None:
        return target
    if bytes_per_param <= 0:
        raise EmulatorDataError(f"bytes_per_param must be > 0, got {bytes_per_param!r}")
    if bytes_per_param == target.bytes_per_param and not target.precision:
        return target
    return replace(target, bytes_per_param=float(bytes_per_param), precision=())


def with_group_precision(target: TargetModel, precision: dict | None) -> TargetModel:
    """The same model with some groups at another precision ({group: bytes}; 'default' sets bytes_per_param)."""
    if not precision:
        return target
    precision = dict(precision)
    if "default" in precision:
        target = with_precision(target, check_value(target.name, "precision.default", precision.pop("default"),
                                                    "positive"))
    pairs = dict(target.precision) | dict(precision_pairs(target.name, precision))
    return replace(target, precision=tuple(sorted(pairs.items())))
