"""The model zoo: real LLM shapes from Hugging Face style config files (sysmodel/data/models/*.json).

A config gives hidden size, FFN size, layers, attention and KV heads, vocabulary, activation, FFN
matrices (3 for gated FFNs), experts, top-k and how often a layer is MoE, and the published parameter
count it is checked against (tests/test_models.py, within 2%). :func:`operators` lists one layer's
operators for prefill or for decode with a KV cache: shapes, weight and KV bytes, FLOPs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

MODELS_DIR = Path(__file__).parent / "data" / "models"


@dataclass(frozen=True)
class ModelConfig:
    name: str
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    activation: str
    tied_embeddings: bool
    ffn_matrices: int = 2
    experts: int = 1
    top_k: int = 1
    moe_every: int = 1  # every k-th layer is MoE (GLaM: 2); the others are dense
    learned_positions: int = 0
    biases: bool = False
    published_params: float = 0.0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def ffn_params(self) -> int:
        return self.ffn_matrices * self.hidden * self.intermediate + \
            (self.intermediate + self.hidden if self.biases else 0)

    def layer_params(self, moe: bool) -> int:
        h, kv = self.hidden, self.kv_dim
        attn = 2 * h * h + 2 * h * kv + (3 * h + 2 * kv if self.biases else 0)
        experts = self.experts if moe else 1
        router = h * self.experts if moe and self.experts > 1 else 0
        return attn + experts * self.ffn_params() + router + (4 if self.biases else 2) * h

    def is_moe(self, layer: int) -> bool:
        return self.experts > 1 and layer % self.moe_every == self.moe_every - 1

    def params(self) -> int:
        emb = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return sum(self.layer_params(self.is_moe(i)) for i in range(self.layers)) + emb + \
            self.learned_positions * self.hidden + (2 if self.biases else 1) * self.hidden


def available() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def load_model(name: str) -> ModelConfig:
    path = MODELS_DIR / f"{name}.json"
    if not path.exists():
        raise ValueError(f"model: unknown {name!r}; known: {available()}")
    c = json.loads(path.read_text())
    learned = c.get("max_position_embeddings", 0) + (2 if c["model_type"] == "opt" else 0)
    return ModelConfig(
        name=name, hidden=c["hidden_size"], intermediate=c["intermediate_size"], layers=c["num_hidden_layers"],
        heads=c["num_attention_heads"], kv_heads=c.get("num_key_value_heads", c["num_attention_heads"]),
        vocab=c["vocab_size"], activation=c["hidden_act"], tied_embeddings=c.get("tie_word_embeddings", False),
        ffn_matrices=c["ffn_matrices"], experts=c.get("num_local_experts", 1), top_k=c.get("num_experts_per_tok", 1),
        moe_every=c.get("moe_every", 1), learned_positions=learned if c["model_type"] in ("opt", "gpt") else 0,
        biases=c["bias"], published_params=c["published_params"])


@dataclass(frozen=True)
class Op:
    """One operator of a layer for ``tokens`` new tokens: y[tokens, n] = x[tokens, k] @ W[k, n] (GEMV when
    tokens == 1), or attention over ``kv_len`` cached tokens. Bytes for weights and KV at ``wbytes``."""

    name: str
    kind: str  # "gemm" | "attention"
    tokens: int
    k: int
    n: int
    weight_bytes: float
    kv_bytes: float
    flops: float

    @property
    def is_gemv(self) -> bool:
        return self.kind == "gemm" and self.tokens == 1


def operators(cfg: ModelConfig, phase: str, batch: int = 1, seq: int = 128, kv_len: int = 128,
              wbytes: float = 2.0, layer: int = 0) -> list[Op]:
    """Layer ``layer``'s operators. prefill: ``batch`` prompts of ``seq`` tokens (causal attention);
    decode: one token per request attending to ``kv_len`` cached tokens. MoE layers read the weights of
    min(E, tokens*top_k) experts (every routed expert once) and do tokens*top_k experts' FLOPs."""
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase: {phase!r} not allowed; allowed: prefill, decode")
    if batch < 1 or seq < 1 or kv_len < 0:
        raise ValueError("batch, seq: must be >= 1; kv_len: >= 0")
    h, kv, t = cfg.hidden, cfg.kv_dim, batch * (seq if phase == "prefill" else 1)
    ctx = (seq + 1) / 2 if phase == "prefill" else kv_len  # mean attended tokens (causal prefill)
    keys = seq if phase == "prefill" else kv_len

    def gemm(name: str, k: int, n: int, copies: int = 1, used: int = 1) -> Op:
        return Op(name, "gemm", t, k, n, copies * k * n * wbytes, 0.0, 2.0 * t * k * n * used)

    ops = [gemm("qkv", h, h + 2 * kv)]
    ops.append(Op("attention", "attention", t, cfg.head_dim, keys, 0.0, 2 * batch * keys * kv * wbytes,
                  4.0 * t * ctx * cfg.heads * cfg.head_dim))
    ops.append(gemm("o_proj", h, h))
    moe = cfg.is_moe(layer)
    read = min(cfg.experts, t * cfg.top_k) if moe else 1
    used = cfg.top_k if moe else 1
    if moe:
        ops.append(gemm("router", h, cfg.experts))
    names = ("gate", "up", "down") if cfg.ffn_matrices == 3 else ("up", "down")
    for nm in names:
        k, n = (cfg.intermediate, h) if nm == "down" else (h, cfg.intermediate)
        ops.append(gemm(f"ffn_{nm}", k, n, copies=read, used=used))
    return ops
