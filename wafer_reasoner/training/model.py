"""The planner: a small decoder-only transformer (pre-LN GPT) with a KV-cache forward for export.

The exported graph has onnxruntime-genai's decoder layout: inputs ``input_ids`` [B, S], ``attention_mask``
[B, P+S], ``past_key_values.N.key/value`` [B, H, P, Dh]; outputs ``logits`` [B, S, V],
``present.N.key/value`` [B, H, P+S, Dh]. Positions come from the attention mask (cumsum - 1), so left-padded
batches decode correctly.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class PlannerConfig:
    vocab_size: int  # closed word vocabulary (engine/prompt.py + training/vocab.py)
    context_length: int = 256  # maximum prompt + plan tokens
    hidden_size: int = 128  # model width
    num_layers: int = 4  # transformer blocks
    num_heads: int = 4  # attention heads (head_size = hidden_size / num_heads)
    ffn_size: int = 512  # MLP inner width
    dropout: float = 0.0  # the corpus is generated on the fly, so nothing to overfit

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    def to_dict(self) -> dict:
        return asdict(self)


class Block(nn.Module):
    def __init__(self, config: PlannerConfig):
        super().__init__()
        self.config = config
        self.ln1 = nn.LayerNorm(config.hidden_size)
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size)
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)
        self.ln2 = nn.LayerNorm(config.hidden_size)
        self.fc = nn.Linear(config.hidden_size, config.ffn_size)
        self.out = nn.Linear(config.ffn_size, config.hidden_size)

    def forward(self, x, bias, past_key=None, past_value=None):
        # x: [B, S, C]; bias: [B, 1, S, T] additive mask; past_*: [B, H, P, Dh]
        batch, seq, width = x.shape
        heads, head_size = self.config.num_heads, self.config.head_size
        q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
        q = q.view(batch, seq, heads, head_size).transpose(1, 2)  # [B, H, S, Dh]
        k = k.view(batch, seq, heads, head_size).transpose(1, 2)
        v = v.view(batch, seq, heads, head_size).transpose(1, 2)
        if past_key is not None:
            k = torch.cat([past_key, k], dim=2)  # [B, H, P+S, Dh]
            v = torch.cat([past_value, v], dim=2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(head_size) + bias  # [B, H, S, T]
        attended = F.softmax(scores, dim=-1) @ v  # [B, H, S, Dh]
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, seq, width))
        x = x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x, k, v


class Planner(nn.Module):
    def __init__(self, config: PlannerConfig):
        super().__init__()
        self.config = config
        self.tok = nn.Embedding(config.vocab_size, config.hidden_size)
        self.pos = nn.Embedding(config.context_length, config.hidden_size)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.num_layers))
        self.ln_f = nn.LayerNorm(config.hidden_size)
        self.apply(self._init)

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, input_ids, attention_mask, past=None):
        """input_ids [B, S], attention_mask [B, T] with T = P + S; past: list of (key, value) [B, H, P, Dh].

        Returns logits [B, S, V] and the new list of (key, value) [B, H, T, Dh]."""
        seq = input_ids.shape[1]
        total = attention_mask.shape[1]
        positions = (torch.cumsum(attention_mask, dim=1) - 1).clamp(min=0)[:, total - seq:]  # [B, S]
        query_index = torch.arange(seq, device=input_ids.device).unsqueeze(1) + (total - seq)  # [S, 1]
        key_index = torch.arange(total, device=input_ids.device).unsqueeze(0)  # [1, T]
        allowed = (key_index <= query_index).unsqueeze(0) & attention_mask.bool().unsqueeze(1)  # [B, S, T]
        bias = torch.where(allowed, 0.0, -1e4).unsqueeze(1).to(torch.float32)  # [B, 1, S, T]
        x = self.tok(input_ids) + self.pos(positions)  # [B, S, C]
        presents = []
        for index, block in enumerate(self.blocks):
            past_key, past_value = past[index] if past is not None else (None, None)
            x, key, value = block(x, bias, past_key, past_value)
            presents.append((key, value))
        logits = self.ln_f(x) @ self.tok.weight.t()  # [B, S, V] (tied embeddings)
        return logits, presents

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


class ExportWrapper(nn.Module):
    """Flat inputs/outputs in the genai decoder layout for torch.onnx.export."""

    def __init__(self, planner: Planner):
        super().__init__()
        self.planner = planner

    def forward(self, input_ids, attention_mask, *flat_past):
        layers = self.planner.config.num_layers
        past = [(flat_past[2 * i], flat_past[2 * i + 1]) for i in range(layers)]
        logits, presents = self.planner(input_ids, attention_mask, past)
        return (logits, *[tensor for pair in presents for tensor in pair])
