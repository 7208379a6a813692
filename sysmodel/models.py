"""The model zoo: real LLM shapes from Hugging Face style config files (sysmodel/data/models/*.json).

A config gives hidden size, FFN size, layers, attention and KV heads, vocabulary, activation (SwiGLU
models — llama, mixtral — have three FFN matrices, OPT two), experts and top-k, and the published
parameter count it is checked against (tests/test_models.py, within 2%).
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
    experts: int = 1
    top_k: int = 1
    learned_positions: int = 0
    biases: bool = False
    published_params: float = 0.0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def gated(self) -> bool:
        return self.activation == "silu"

    def layer_params(self) -> int:
        h, kv = self.hidden, self.kv_heads * self.head_dim
        attn = 2 * h * h + 2 * h * kv + (3 * h + 2 * kv if self.biases else 0)
        ffn = (3 if self.gated else 2) * h * self.intermediate + (self.intermediate + h if self.biases else 0)
        router = h * self.experts if self.experts > 1 else 0
        norms = (4 if self.biases else 2) * h
        return attn + self.experts * ffn + router + norms

    def params(self) -> int:
        emb = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return self.layers * self.layer_params() + emb + self.learned_positions * self.hidden \
            + (2 if self.biases else 1) * self.hidden


def available() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def load_model(name: str) -> ModelConfig:
    path = MODELS_DIR / f"{name}.json"
    if not path.exists():
        raise ValueError(f"model: unknown {name!r}; known: {available()}")
    c = json.loads(path.read_text())
    opt = c["model_type"] == "opt"
    return ModelConfig(
        name=name, hidden=c["hidden_size"], intermediate=c["intermediate_size"], layers=c["num_hidden_layers"],
        heads=c["num_attention_heads"], kv_heads=c.get("num_key_value_heads", c["num_attention_heads"]),
        vocab=c["vocab_size"], activation=c["hidden_act"], tied_embeddings=c.get("tie_word_embeddings", False),
        experts=c.get("num_local_experts", 1), top_k=c.get("num_experts_per_tok", 1),
        learned_positions=(c.get("max_position_embeddings", 0) + 2) if opt else 0, biases=opt,
        published_params=c["published_params"])
