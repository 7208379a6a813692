"""The model zoo: real LLM shapes from Hugging Face style config files (sysmodel/data/models/*.json).

A config gives hidden size, FFN size, layers, attention and KV heads, vocabulary, activation, FFN
matrices (3 for gated FFNs), experts, top-k and how often a layer is MoE, and the published parameter
count it is checked against (tests/test_models.py, within 2%). :func:`operators` lists one layer's
operators for prefill or for decode with a KV cache: shapes, weight and KV bytes, FLOPs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from sysmodel.num import Num

MODELS_DIR = Path(__file__).parent / "data" / "models"
KV_BYTES = 2.0  # FP16 KV cache, every paper's precision (L3 Table 3, Duplex §VI, Hermes §V-A)


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
    context: int = 0  # tokens of context it was trained for (its config's max_position_embeddings; 0: not stated)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def ffn_params(self) -> int:
        return self.ffn_matrices * self.hidden * self.intermediate + (
            self.intermediate + self.hidden if self.biases else 0
        )

    def layer_params(self, moe: bool) -> int:
        h, kv = self.hidden, self.kv_dim
        attn = 2 * h * h + 2 * h * kv + (3 * h + 2 * kv if self.biases else 0)
        experts = self.experts if moe else 1
        router = h * self.experts if moe and self.experts > 1 else 0
        return attn + experts * self.ffn_params() + router + (4 if self.biases else 2) * h

    def kv_bytes_per_token(self, kv_bytes: float = KV_BYTES) -> float:
        """KV-cache bytes one token adds: K and V of every layer."""
        return self.layers * 2 * self.kv_dim * kv_bytes

    def weight_bytes(self, wbytes: float = 2.0) -> float:
        return self.params() * wbytes

    def is_moe(self, layer: int) -> bool:
        return self.experts > 1 and layer % self.moe_every == self.moe_every - 1

    def params(self) -> int:
        emb = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return (
            sum(self.layer_params(self.is_moe(i)) for i in range(self.layers))
            + emb
            + self.learned_positions * self.hidden
            + (2 if self.biases else 1) * self.hidden
        )


def available() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def load_model(name: str) -> ModelConfig:
    path = MODELS_DIR / f"{name}.json"
    if not path.exists():
        raise ValueError(f"model: unknown {name!r}; known: {available()}")
    c = json.loads(path.read_text())
    learned = c.get("max_position_embeddings", 0) + (2 if c["model_type"] == "opt" else 0)
    return ModelConfig(
        name=name,
        hidden=c["hidden_size"],
        intermediate=c["intermediate_size"],
        layers=c["num_hidden_layers"],
        heads=c["num_attention_heads"],
        kv_heads=c.get("num_key_value_heads", c["num_attention_heads"]),
        vocab=c["vocab_size"],
        activation=c["hidden_act"],
        tied_embeddings=c.get("tie_word_embeddings", False),
        ffn_matrices=c["ffn_matrices"],
        experts=c.get("num_local_experts", 1),
        top_k=c.get("num_experts_per_tok", 1),
        moe_every=c.get("moe_every", 1),
        learned_positions=learned if c["model_type"] in ("opt", "gpt") else 0,
        biases=c["bias"],
        published_params=c["published_params"],
        context=c.get("max_position_embeddings", 0),
    )


@dataclass(frozen=True)
class StageShape:
    """What one iteration (an ORCA stage) computes, summed over its requests. Fields may be NumPy arrays:
    then every derived quantity is a vector, one entry per stage, and a cost evaluates them all at once.

    ``tokens``: new tokens through the FC layers (decode requests + prefill chunk tokens);
    ``decode_reqs``: decode requests; ``decode_ctx``: cached tokens they attend to, summed;
    ``prefill_pairs``: (query, key) pairs of the prefill chunks, a chunk of c tokens after p done giving
    c*p + c(c+1)/2 (causal); ``prefill_kv``: keys the prefill chunks read, p + c each.
    """

    tokens: ArrayLike
    decode_reqs: ArrayLike = 0
    decode_ctx: ArrayLike = 0
    prefill_pairs: ArrayLike = 0
    prefill_kv: ArrayLike = 0

    @classmethod
    def decode(cls, batch: ArrayLike, kv_len: ArrayLike) -> StageShape:
        """``batch`` requests each generating one token after ``kv_len`` cached tokens."""
        return cls(tokens=batch, decode_reqs=batch, decode_ctx=np.multiply(batch, kv_len))

    @classmethod
    def prefill(cls, batch: ArrayLike, chunk: ArrayLike, done: ArrayLike = 0) -> StageShape:
        """``batch`` prompts each computing ``chunk`` tokens after ``done`` already computed."""
        pairs = np.multiply(chunk, done) + np.multiply(chunk, np.add(chunk, 1)) / 2
        return cls(
            tokens=np.multiply(batch, chunk),
            prefill_pairs=np.multiply(batch, pairs),
            prefill_kv=np.multiply(batch, np.add(done, chunk)),
        )

    def __add__(self, other: StageShape) -> StageShape:
        """A mixed stage: both stages' work in one iteration."""
        return StageShape(*(np.add(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)))


@dataclass(frozen=True)
class Op:
    """One operator of a layer: y[tokens, n] = x[tokens, k] @ W[k, n] (``gemm``), attention over the
    KV cache (``attention``: ``attn_decode`` for decode requests, ``attn_prefill`` for prefill chunks), or
    an element-wise kernel (``norm``, ``act``). Bytes: weights at ``wbytes``, the KV cache at ``kv_bytes``
    per element, activations (``act_bytes``) at 2. ``blocks``: independent work items a GPU spreads over
    its SMs (decode attention: one per request and head), 0 when plentiful."""

    name: str
    kind: str  # "gemm" | "attention" | "norm" | "act"
    tokens: ArrayLike
    k: int
    n: int
    weight_bytes: ArrayLike
    kv_bytes: ArrayLike
    flops: ArrayLike
    act_bytes: ArrayLike = 0.0
    blocks: ArrayLike = 0

    @property
    def bytes(self) -> Num:
        return np.add(np.add(self.weight_bytes, self.kv_bytes), self.act_bytes)


def layer_ops(
    cfg: ModelConfig, shape: StageShape, moe: bool = False, wbytes: float = 2.0, kv_bytes: float = KV_BYTES
) -> list[Op]:
    """One layer's operators for a stage, in execution order. MoE layers read the weights of
    min(E, tokens*top_k) experts (every routed expert once) and do tokens*top_k experts' FLOPs. Softmax is
    counted inside attention (its bytes stay on chip); a norm reads its input and weight and writes its
    output (3 vectors), an activation reads 1 (2 gated) and writes 1 — AttAcc src/model.py's accounting."""
    h, kv, t = cfg.hidden, cfg.kv_dim, shape.tokens
    used = cfg.top_k if moe else 1

    def gemm(name: str, k: int, n: int, copies: ArrayLike = 1, experts: int = 1) -> Op:
        return Op(
            name, "gemm", t, k, n, np.multiply(copies, k * n * wbytes), 0.0, np.multiply(t, 2.0 * k * n * experts)
        )

    def attention(name: str, pairs: ArrayLike, keys: ArrayLike, blocks: ArrayLike = 0) -> Op:
        return Op(
            name,
            "attention",
            t,
            cfg.head_dim,
            0,
            0.0,
            np.multiply(keys, 2 * kv * kv_bytes),
            np.multiply(pairs, 4.0 * cfg.heads * cfg.head_dim),
            blocks=blocks,
        )

    def elementwise(name: str, kind: str, width: int, vectors: int, flops_per: float) -> Op:
        return Op(
            name,
            kind,
            t,
            width,
            width,
            0.0,
            0.0,
            np.multiply(t, flops_per * width),
            act_bytes=np.multiply(t, 2.0 * vectors * width),
        )

    gated = cfg.ffn_matrices == 3
    ops = [
        gemm("qkv", h, h + 2 * kv),
        attention("attn_decode", shape.decode_ctx, shape.decode_ctx, np.multiply(shape.decode_reqs, cfg.heads)),
        attention("attn_prefill", shape.prefill_pairs, shape.prefill_kv),
        gemm("o_proj", h, h),
        elementwise("norm_attn", "norm", h, 3, 5.0),
    ]
    read = np.minimum(cfg.experts, np.multiply(t, cfg.top_k)) if moe else 1
    if moe:
        ops.append(gemm("router", h, cfg.experts))
    for nm in ("gate", "up") if gated else ("up",):
        ops.append(gemm(f"ffn_{nm}", h, cfg.intermediate, copies=read, experts=used))
    ops.append(elementwise("act", "act", cfg.intermediate * used, 3 if gated else 2, 9.0 if gated else 8.0))
    ops += [
        gemm("ffn_down", cfg.intermediate, h, copies=read, experts=used),
        elementwise("norm_ffn", "norm", h, 3, 5.0),
    ]
    return ops


def layer_groups(cfg: ModelConfig) -> list[tuple[bool, int]]:
    """(is MoE, number of layers): the distinct layer kinds, so costs need not loop over every layer."""
    moe = cfg.layers // cfg.moe_every if cfg.experts > 1 else 0  # the layers is_moe names, counted in closed form
    return [(m, c) for m, c in ((False, cfg.layers - moe), (True, moe)) if c]


def operators(
    cfg: ModelConfig,
    phase: str,
    batch: int = 1,
    seq: int = 128,
    kv_len: int = 128,
    wbytes: float = 2.0,
    layer: int = 0,
    kv_bytes: float = KV_BYTES,
) -> list[Op]:
    """Layer ``layer``'s operators. prefill: ``batch`` prompts of ``seq`` tokens (causal attention);
    decode: one token per request attending to ``kv_len`` cached tokens."""
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase: {phase!r} not allowed; allowed: prefill, decode")
    if batch < 1 or seq < 1 or kv_len < 0:
        raise ValueError("batch, seq: must be >= 1; kv_len: >= 0")
    shape = StageShape.prefill(batch, seq) if phase == "prefill" else StageShape.decode(batch, kv_len)
    return layer_ops(cfg, shape, cfg.is_moe(layer), wbytes, kv_bytes)
