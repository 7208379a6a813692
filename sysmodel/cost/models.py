"""The model zoo and the Hugging Face ``config.json`` loader (sysmodel/data/models/*.json are stock configs).

:func:`load_model` takes a zoo name or the path of a ``config.json`` and derives, per family
(:data:`FAMILIES`), what the kit needs: hidden and FFN sizes, attention and KV heads, gated FFN, biases,
tied embeddings, routed experts, top-k, shared experts, which layers are MoE, which use a sliding window,
and multi-head latent attention's (MLA: DeepSeek-V2 §2.1) compressed KV rank and rope key width. Parameter
counts are computed (tests/test_models.py checks them against published counts). :func:`operators` lists
one layer's operators for prefill or for decode with a KV cache: shapes, weight and KV bytes, FLOPs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from sysmodel.cost.num import Num

MODELS_DIR = Path(__file__).parent.parent / "data" / "models"
KV_BYTES = 2.0  # FP16 KV cache, every paper's precision (L3 Table 3, Duplex §VI, Hermes §V-A)


@dataclass(frozen=True)
class ModelConfig:
    name: str
    hidden: int
    intermediate: int  # FFN width; a MoE model's routed-expert width
    layers: int
    heads: int
    kv_heads: int  # MLA: 1 (absorbed decode attends every head to one shared latent)
    vocab: int
    activation: str
    tied_embeddings: bool
    ffn_matrices: int = 2  # 3 for gated FFNs (gate, up, down)
    experts: int = 1  # routed experts
    top_k: int = 1
    dense_layers: tuple[int, ...] = ()  # a MoE model's dense layers (GLaM: every other; DeepSeek-V3: the first 3)
    dense_intermediate: int = 0  # their FFN width when it is not the experts' (DeepSeek-V3: 18432)
    shared_intermediate: int = 0  # always-active shared experts' total FFN width (DeepSeek-V3: 1 x 2048)
    learned_positions: int = 0
    biases: bool = False
    qkv_bias: bool = False  # biases on q, k and v only (Qwen2)
    head_size: int = 0  # attention head width when not hidden / heads (Gemma 2, Qwen3; MLA: nope + rope)
    window: int = 0  # sliding-window tokens of the layers in sliding_layers
    sliding_layers: tuple[int, ...] = ()
    kv_lora: int = 0  # MLA: compressed KV rank, 0 without MLA (DeepSeek-V2 §2.1.2)
    q_lora: int = 0  # MLA: compressed query rank, 0 for a full query projection
    rope_dim: int = 0  # MLA: the decoupled rope key's width, cached beside the latent (DeepSeek-V2 §2.1.3)
    v_head: int = 0  # MLA: value head width
    mtp_layers: int = 0  # DeepSeek-V3's multi-token-prediction modules (§2.2): counted, never served
    family: str = ""  # the config's model_type
    context: int = 0  # longest sequence it was trained for (max_position_embeddings; 0: the config omits it)

    @property
    def head_dim(self) -> int:
        return self.head_size or self.hidden // self.heads

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def v_dim(self) -> int:
        return self.v_head or self.head_dim

    @property
    def mla(self) -> bool:
        return self.kv_lora > 0

    @property
    def kv_width(self) -> int:
        """KV-cache elements one token adds to one layer: K and V, or MLA's latent plus its rope key."""
        return self.kv_lora + self.rope_dim if self.mla else 2 * self.kv_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Half of :attr:`kv_width`: the K (or V) width of one token in one layer, what ``2 * kv_dim`` formulas
        across the kit take; for MLA half of what a token stores."""
        return self.kv_width // 2

    def ffn_params(self, width: int | None = None) -> int:
        """One FFN (or expert) of ``width`` (default :attr:`intermediate`)."""
        width = self.intermediate if width is None else width
        return self.ffn_matrices * self.hidden * width + (width + self.hidden if self.biases else 0)

    def attn_params(self) -> int:
        h, kv = self.hidden, self.kv_dim
        out = self.heads * self.v_dim * h
        if self.mla:  # q_a (+ norm) and q_b, or q; kv_a with its norm; kv_b
            q = self.q_lora * (h + 1 + self.q_dim) if self.q_lora else h * self.q_dim
            return (
                q
                + h * self.kv_width
                + self.kv_lora * (1 + self.heads * (self.head_dim - self.rope_dim + self.v_dim))
                + out
            )
        # with biases: q, k, v, o and one more hidden-wide vector, the zoo's count since it began
        bias = 3 * h + 2 * kv if self.biases else (self.q_dim + 2 * kv if self.qkv_bias else 0)
        return h * (self.q_dim + 2 * kv) + out + bias

    def moe_ffn_params(self, experts: int) -> int:
        """A MoE layer's FFN weights with ``experts`` routed experts: those, the shared ones and the router."""
        shared = self.ffn_params(self.shared_intermediate) if self.shared_intermediate else 0
        return experts * self.ffn_params() + shared + self.hidden * self.experts

    def layer_params(self, moe: bool, experts: int | None = None) -> int:
        """One layer's weights; of a MoE layer's routed experts, ``experts`` (default all of them). Two norms a
        layer (with biases, their biases too); Gemma 2's other two, Qwen3's per-head q/k norms and Qwen2-MoE's
        one-output shared-expert gate are left out (each under 0.01% of the model)."""
        ffn = (
            self.moe_ffn_params(self.experts if experts is None else experts)
            if moe and self.experts > 1
            else self.ffn_params(self.dense_intermediate or None)
        )
        return self.attn_params() + ffn + (4 if self.biases else 2) * self.hidden

    def is_moe(self, layer: int) -> bool:
        return self.experts > 1 and layer not in self.dense_layers

    def is_sliding(self, layer: int) -> bool:
        return self.window > 0 and layer in self.sliding_layers

    def kv_bytes_per_token(self, kv_bytes: float = KV_BYTES) -> float:
        """KV-cache bytes one token adds to every layer: what an allocator without per-layer windows reserves
        (vLLM's paged cache before its hybrid allocator), so sliding layers count in full here."""
        return self.layers * self.kv_width * kv_bytes

    def kv_bytes(self, tokens: int, kv_bytes: float = KV_BYTES) -> float:
        """KV-cache bytes of one request holding ``tokens``: a sliding layer keeps its last ``window`` only."""
        kept = sum(min(tokens, self.window) if self.is_sliding(i) else tokens for i in range(self.layers))
        return kept * self.kv_width * kv_bytes

    def weight_bytes(self, wbytes: float = 2.0) -> float:
        return self.params() * wbytes

    def embedding_params(self) -> int:
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2) + self.learned_positions * self.hidden

    def params(self, mtp: bool = False) -> int:
        """Every weight; with ``mtp`` DeepSeek-V3's prediction modules too (a MoE layer, the projection of
        [hidden; embedding] and two norms each: §2.2; they share the embedding and output head)."""
        mtp_params = self.layer_params(True) + 2 * self.hidden * self.hidden + 2 * self.hidden
        return (
            sum(self.layer_params(self.is_moe(i)) for i in range(self.layers))
            + self.embedding_params()
            + (2 if self.biases else 1) * self.hidden
            + (self.mtp_layers * mtp_params if mtp else 0)
        )

    def active_params(self) -> int:
        """Every weight but the routed experts a token leaves unused: the convention of the published active
        counts (Mixtral-8x7B's 12.9B, DeepSeek-V3's 37B, Qwen3-235B-A22B's 22B: embeddings included)."""
        moe = sum(self.is_moe(i) for i in range(self.layers))
        return self.params() - moe * (self.experts - self.top_k) * self.ffn_params()


class LayerKind(int):
    """A kind of layer as :func:`layer_groups` yields it: an int (1: MoE, 0: dense), so every cost's
    ``for moe, count in layer_groups(cfg)`` reads it as before, carrying the layer's sliding window
    (0: full attention) to :func:`layer_ops`."""

    window: int

    def __new__(cls, moe: bool, window: int = 0) -> LayerKind:
        kind = super().__new__(cls, int(moe))
        kind.window = window
        return kind

    def __repr__(self) -> str:
        return f"LayerKind(moe={bool(self)}, window={self.window})"


@functools.cache
def layer_groups(cfg: ModelConfig) -> tuple[tuple[LayerKind, int], ...]:
    """(kind, number of layers): the distinct layer kinds (MoE or dense, sliding window or full), dense and
    full first, so costs need not loop over every layer."""
    kinds: dict[tuple[bool, int], int] = {}
    for i in range(cfg.layers):
        key = (cfg.is_moe(i), cfg.window if cfg.is_sliding(i) else 0)
        kinds[key] = kinds.get(key, 0) + 1
    return tuple((LayerKind(*key), kinds[key]) for key in sorted(kinds))


def describe(cfg: ModelConfig) -> dict:
    """What the kit derives from a config (``membound model`` prints it)."""
    moe = sum(cfg.is_moe(i) for i in range(cfg.layers))
    sliding = sum(cfg.is_sliding(i) for i in range(cfg.layers))
    return {
        "name": cfg.name,
        "family": cfg.family,
        "params": cfg.params(),
        "params_mtp": cfg.params(mtp=True) if cfg.mtp_layers else None,
        "active_params": cfg.active_params(),
        "kv_bytes_per_token": cfg.kv_bytes_per_token(),
        "kv_bytes_at_context": cfg.kv_bytes(cfg.context),
        "attention": "MLA" if cfg.mla else ("MHA" if cfg.kv_heads == cfg.heads else f"GQA ({cfg.kv_heads} KV heads)"),
        "kv_lora": cfg.kv_lora,
        "rope_dim": cfg.rope_dim,
        "layers": cfg.layers,
        "dense_layers": cfg.layers - moe,
        "moe_layers": moe,
        "sliding_layers": sliding,
        "window": cfg.window if sliding else 0,
        "experts": cfg.experts,
        "top_k": cfg.top_k,
        "shared_intermediate": cfg.shared_intermediate,
        "gated": cfg.ffn_matrices == 3,
        "activation": cfg.activation,
        "tied_embeddings": cfg.tied_embeddings,
        "context": cfg.context,
    }


@dataclass(frozen=True)
class Family:
    """How a Hugging Face ``model_type`` builds its layers, where its config.json does not say: a gated FFN
    (SwiGLU/GeGLU: gate, up, down), biases on every projection and norm, tied embeddings when
    ``tie_word_embeddings`` is absent (transformers' default per family), a learned position table (the
    config key of its size, and OPT's offset of 2 rows: ``OPTLearnedPositionalEmbedding``)."""

    gated: bool
    biases: bool = False
    tied: bool = False
    positions: str = ""
    position_offset: int = 0


GATED = Family(gated=True)
FAMILIES = {
    **dict.fromkeys(("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3"), GATED),
    **dict.fromkeys(("deepseek_v2", "deepseek_v3"), GATED),
    "gemma2": Family(gated=True, tied=True),
    "opt": Family(gated=False, biases=True, tied=True, positions="max_position_embeddings", position_offset=2),
    "falcon": Family(gated=False, tied=True),  # biases: the config's "bias"
    "gpt_neox": Family(gated=False, biases=True),
    "gpt2": Family(gated=False, biases=True, tied=True, positions="n_positions"),
    # beyond the transformer families above, for zoo entries of the papers: Phi-2, Persimmon-8B (its
    # projections' biases, 0.02% of its weights, are not counted), Grok-1 (hpcai-tech's config), and GLaM,
    # which has no released config (its entry spells the GLaM paper's Table 1 in these fields; MoE layers
    # as Jamba's expert_layer_period)
    "phi": Family(gated=False, biases=True),
    "grok-1": GATED,
    "persimmon": Family(gated=False),
    "glam": Family(gated=False, tied=True),
}
QWEN_MOE, DEEPSEEK = ("qwen2_moe", "qwen3_moe"), ("deepseek_v2", "deepseek_v3")
SIZE_KEYS = {
    "hidden": ("hidden_size", "n_embd"),
    "layers": ("num_hidden_layers", "n_layer"),
    "heads": ("num_attention_heads", "n_head"),
    "vocab": ("vocab_size",),
}


class ConfigError(ValueError):
    """A config the loader cannot read: one line naming the file and the field."""


def _field(c: dict, keys: tuple[str, ...], where: str, default: object = None) -> object:
    """The first of ``keys`` the config sets (a null counts as unset), else ``default``; none at all is an error."""
    for k in keys:
        if c.get(k) is not None:
            return c[k]
    if default is None:
        raise ConfigError(f"model: {where}: field {keys[0]!r} missing (model_type {c.get('model_type')!r})")
    return default


def _whole(c: dict, keys: tuple[str, ...], where: str, default: int | None = None, minimum: int = 1) -> int:
    v = _field(c, keys, where, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ConfigError(f"model: {where}: field {keys[0]!r} = {v!r} not allowed; a whole number >= {minimum}")
    return v


def _layer_list(c: dict, key: str, layers: int, where: str) -> list[int]:
    """A config's list of layer indices (absent or null: none), each a whole number below ``layers``."""
    v = c.get(key) or []
    if not (isinstance(v, list) and all(type(i) is int and 0 <= i < layers for i in v)):
        raise ConfigError(f"model: {where}: field {key!r} = {v!r} not allowed; a list of layers 0 to {layers - 1}")
    return v


def _moe(c: dict, family: str, layers: int, where: str) -> dict:
    """Routed and shared experts, and which layers stay dense, by each family's rule in transformers."""
    experts = _whole(c, ("num_local_experts", "num_experts", "n_routed_experts"), where, 1)
    if experts == 1:
        return {}
    if family in QWEN_MOE:  # Qwen2MoeDecoderLayer: MoE unless in mlp_only_layers or (i + 1) % step != 0
        step, only = (
            _whole(c, ("decoder_sparse_step",), where, 1),
            set(_layer_list(c, "mlp_only_layers", layers, where)),
        )
        dense = [i for i in range(layers) if i in only or (i + 1) % step]
    elif family in DEEPSEEK:  # DeepseekV3DecoderLayer: MoE from first_k_dense_replace on, every moe_layer_freq
        first, freq = _whole(c, ("first_k_dense_replace",), where, 0, 0), _whole(c, ("moe_layer_freq",), where, 1)
        dense = [i for i in range(layers) if i < first or i % freq]
    elif family == "glam":
        period, offset = _whole(c, ("expert_layer_period",), where), _whole(c, ("expert_layer_offset",), where, 0, 0)
        dense = [i for i in range(layers) if i % period != offset]
    else:
        dense = []
    width = _whole(c, ("moe_intermediate_size",), where, 0, 0)
    shared = _whole(c, ("n_shared_experts",), where, 0, 0) * width or _whole(
        c, ("shared_expert_intermediate_size",), where, 0, 0
    )
    top_k = _whole(c, ("num_experts_per_tok",), where)
    if top_k > experts:
        raise ConfigError(
            f"model: {where}: field 'num_experts_per_tok' = {top_k} not allowed; at most the {experts} experts"
        )
    return {
        "experts": experts,
        "top_k": top_k,
        "dense_layers": tuple(dense),
        "shared_intermediate": shared,
        **({"intermediate": width, "dense_intermediate": c.get("intermediate_size") or 0} if width else {}),
    }


def _sliding(c: dict, family: str, layers: int, where: str) -> dict:
    """Sliding-window layers: ``layer_types`` where the config lists them, else each family's rule."""
    window = _whole(c, ("sliding_window",), where, 0, 0)
    if c.get("layer_types"):
        types = c["layer_types"]
        if not (isinstance(types, list) and len(types) == layers and all(isinstance(t, str) for t in types)):
            raise ConfigError(f"model: {where}: field 'layer_types' not allowed; a list of {layers} names, one a layer")
        chosen = [i for i, t in enumerate(types) if t == "sliding_attention"]
    elif family == "gemma2":  # Gemma2DecoderLayer: even layers slide
        chosen = list(range(0, layers, 2))
    elif family.startswith("qwen"):  # Qwen2: with use_sliding_window, the layers from max_window_layers on
        first = _whole(c, ("max_window_layers",), where, 0, 0)
        chosen = list(range(first, layers)) if c.get("use_sliding_window") else []
    elif family in ("mistral", "mixtral", "phi3"):
        chosen = list(range(layers))
    else:
        chosen = []
    return {"window": window, "sliding_layers": tuple(chosen)} if window and chosen else {}


def _mla(c: dict, where: str) -> dict:
    """DeepSeek's multi-head latent attention: the cache holds the latent and the rope key (§2.1.2-3)."""
    rope = _whole(c, ("qk_rope_head_dim",), where)
    return {
        "kv_lora": _whole(c, ("kv_lora_rank",), where),
        "q_lora": _whole(c, ("q_lora_rank",), where, 0, 0),
        "rope_dim": rope,
        "head_size": _whole(c, ("qk_nope_head_dim",), where) + rope,
        "v_head": _whole(c, ("v_head_dim",), where),
        "kv_heads": 1,
        "mtp_layers": _whole(c, ("num_nextn_predict_layers",), where, 0, 0),
    }


def _kv_heads(c: dict, family: str, heads: int, where: str) -> int:
    if family == "falcon":  # FalconConfig: num_kv_heads with the new decoder, one with multi-query
        if c.get("new_decoder_architecture"):
            return _whole(c, ("num_kv_heads",), where)
        return 1 if c.get("multi_query", True) else heads
    return _whole(c, ("num_key_value_heads",), where, heads)


def _heads(c: dict, family: str, heads: int, hidden: int, where: str) -> dict:
    """KV heads and an explicit head width, refused where transformers' attention could not be built: query
    heads that do not split the hidden size (without a ``head_dim``), KV heads that do not group them."""
    kv, head_size = _kv_heads(c, family, heads, where), _whole(c, ("head_dim",), where, 0, 0)
    if not head_size and family not in DEEPSEEK and hidden % heads:  # MLA sets its own head width
        raise ConfigError(
            f"model: {where}: field {SIZE_KEYS['heads'][0]!r} = {heads} not allowed; it must divide the hidden "
            f"size {hidden} when no head_dim is given"
        )
    if heads % kv:
        raise ConfigError(f"model: {where}: {kv} KV heads not allowed; they must divide the {heads} attention heads")
    return {"kv_heads": kv, "head_size": head_size}


def from_config(c: dict, name: str, where: str) -> ModelConfig:
    """A :class:`ModelConfig` from the fields of a Hugging Face config.json (module docstring)."""
    family = c.get("model_type")
    if not isinstance(family, str) or family not in FAMILIES:  # a list or table: unhashable
        raise ConfigError(f"model: {where}: model_type {family!r} not supported; supported: {', '.join(FAMILIES)}")
    fam = FAMILIES[family]
    size = {k: _whole(c, keys, where) for k, keys in SIZE_KEYS.items()}
    hidden, layers = size["hidden"], size["layers"]
    default_ffn = 4 * hidden if family in ("gpt2", "falcon") else None  # GPT2Config n_inner, Falcon's 4x MLP
    tied = c.get("tie_word_embeddings")
    extra = {
        **_moe(c, family, layers, where),
        **_sliding(c, family, layers, where),
        **(_mla(c, where) if family in DEEPSEEK else {}),
    }
    positions = _whole(c, (fam.positions,), where, 0, 0) + fam.position_offset if fam.positions else 0
    return ModelConfig(
        **{
            "name": name,
            "family": family,
            **size,
            "intermediate": _whole(
                c, ("intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size"), where, default_ffn
            ),
            **_heads(c, family, size["heads"], hidden, where),
            "activation": str(
                _field(
                    c,
                    ("hidden_act", "hidden_activation", "activation_function"),
                    where,
                    "gelu" if family == "falcon" else None,
                )
            ),
            "tied_embeddings": fam.tied if tied is None else bool(tied),
            "ffn_matrices": 3 if fam.gated else 2,
            "learned_positions": positions,
            "biases": bool(c.get("bias", False)) if family == "falcon" else fam.biases,
            "qkv_bias": family in ("qwen2", "qwen2_moe") or bool(c.get("attention_bias", False)),
            "context": _whole(c, ("max_position_embeddings", "n_positions"), where, 0, 0),
            **extra,
        }
    )


def available() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def load_model(name: str | Path) -> ModelConfig:
    """A zoo model by name, or a Hugging Face config.json (or the folder holding it) by path, named by that
    path, so the systems that load a model again by its name find the same file."""
    path = Path(name)
    if path.is_dir():  # a downloaded model's folder
        path = path / "config.json"
    if path.suffix != ".json":
        path = MODELS_DIR / f"{name}.json"
        if not path.exists():
            raise ValueError(f"model: unknown {str(name)!r}; known: {available()}, or the path of a config.json")
    elif not path.is_file():
        raise ValueError(f"model: {path} does not exist")
    try:
        c = json.loads(path.read_text("utf-8-sig"))  # a byte-order mark some editors write, dropped
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"model: {path}: not JSON ({e})") from None
    if not isinstance(c, dict):
        raise ConfigError(f"model: {path}: not a JSON object")
    return from_config(c, str(name), str(path))


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
        return self.weight_bytes + self.kv_bytes + self.act_bytes  # fields are numbers or arrays: np.add's sums


def _attention_flops(cfg: ModelConfig, decode: bool) -> float:
    """FLOPs per (query, key) pair over all heads: scores and weighted values. MLA decodes in the absorbed
    form (DeepSeek-V2 §2.1.2: W_UK folded into the query, W_UV into the output), each head scoring the
    latent plus the rope key and summing latents; its prefill decompresses K and V and attends per head."""
    if cfg.mla and decode:
        return 2.0 * cfg.heads * (2 * cfg.kv_lora + cfg.rope_dim)
    return 2.0 * cfg.heads * (cfg.head_dim + cfg.v_dim)


def _windowed(shape: StageShape, window: int) -> tuple[ArrayLike, ArrayLike]:
    """(decode keys, prefill pairs) a sliding-window layer attends to: each request at most ``window`` keys,
    each prefill token too. The stage holds sums over requests only, so the caps apply to the sums: exact when
    every request is past the window or none is, an upper bound otherwise."""
    if not window:
        return shape.decode_ctx, shape.prefill_pairs
    prefill_tokens = np.subtract(shape.tokens, shape.decode_reqs)
    return (
        np.minimum(shape.decode_ctx, np.multiply(shape.decode_reqs, window)),
        np.minimum(shape.prefill_pairs, np.multiply(prefill_tokens, window)),
    )


def _projections(cfg: ModelConfig, gemm: Callable[[str, int, int], Op]) -> list[Op]:
    """The attention's input projections: q, k, v as one GEMM; MLA's projections of the hidden state as one
    (``qkv``: q_a and kv_a with the rope key, vLLM's fused_qkv_a_proj in vllm/model_executor/models/
    deepseek_v2.py; without a query compression, q and kv_a), then the query's and the latent's
    up-projections (``qkv_q_b``, ``qkv_kv_b``)."""
    h = cfg.hidden
    if not cfg.mla:
        return [gemm("qkv", h, cfg.q_dim + 2 * cfg.kv_dim)]
    ops = [gemm("qkv", h, (cfg.q_lora or cfg.q_dim) + cfg.kv_width)]
    if cfg.q_lora:
        ops.append(gemm("qkv_q_b", cfg.q_lora, cfg.q_dim))
    return [*ops, gemm("qkv_kv_b", cfg.kv_lora, cfg.heads * (cfg.head_dim - cfg.rope_dim + cfg.v_dim))]


def layer_ops(
    cfg: ModelConfig, shape: StageShape, moe: int = False, wbytes: float = 2.0, kv_bytes: float = KV_BYTES
) -> list[Op]:
    """One layer's operators for a stage, in execution order; ``moe`` a :class:`LayerKind` (or a bool: full
    attention). MoE layers read the weights of min(E, tokens*top_k) routed experts (every routed expert once)
    and do tokens*top_k experts' FLOPs; shared experts run on every token. Softmax is counted inside attention
    (its bytes stay on chip); a norm reads its input and weight and writes its output (3 vectors), an
    activation reads 1 (2 gated) and writes 1 — AttAcc src/model.py's accounting."""
    h, t = cfg.hidden, shape.tokens
    used = cfg.top_k if moe else 1

    def gemm(name: str, k: int, n: int, copies: ArrayLike = 1, experts: int = 1) -> Op:
        w = k * n
        return Op(name, "gemm", t, k, n, np.multiply(copies, w * wbytes), 0.0, np.multiply(t, 2.0 * w * experts))

    def attention(name: str, pairs: ArrayLike, keys: ArrayLike, decode: bool, blocks: ArrayLike = 0) -> Op:
        kv, flops = np.multiply(keys, cfg.kv_width * kv_bytes), np.multiply(pairs, _attention_flops(cfg, decode))
        return Op(name, "attention", t, cfg.head_dim, 0, 0.0, kv, flops, blocks=blocks)

    def elementwise(name: str, kind: str, width: int, vectors: int, flops_per: float) -> Op:
        act = np.multiply(t, 2.0 * vectors * width)
        return Op(name, kind, t, width, width, 0.0, 0.0, np.multiply(t, flops_per * width), act_bytes=act)

    gated = cfg.ffn_matrices == 3
    out = cfg.heads * cfg.v_dim
    keys, pairs = _windowed(shape, getattr(moe, "window", 0))
    ops = [
        *_projections(cfg, gemm),
        attention("attn_decode", keys, keys, True, np.multiply(shape.decode_reqs, cfg.heads)),
        attention("attn_prefill", pairs, shape.prefill_kv, False),
        gemm("o_proj", out, h),
        elementwise("norm_attn", "norm", h, 3, 5.0),
    ]
    width = cfg.intermediate if moe else cfg.dense_intermediate or cfg.intermediate
    read = np.minimum(cfg.experts, np.multiply(t, cfg.top_k)) if moe else 1
    if moe:
        ops.append(gemm("router", h, cfg.experts))
    for nm in ("gate", "up") if gated else ("up",):
        ops.append(gemm(f"ffn_{nm}", h, width, copies=read, experts=used))
    shared = cfg.shared_intermediate if moe else 0
    ops.append(elementwise("act", "act", width * used + shared, 3 if gated else 2, 9.0 if gated else 8.0))
    ops.append(gemm("ffn_down", width, h, copies=read, experts=used))
    if shared:
        ops += [gemm(f"ffn_shared_{nm}", h, shared) for nm in ("gate", "up") if gated or nm == "up"]
        ops.append(gemm("ffn_shared_down", shared, h))
    ops.append(elementwise("norm_ffn", "norm", h, 3, 5.0))
    return ops


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
    kind = LayerKind(cfg.is_moe(layer), cfg.window if cfg.is_sliding(layer) else 0)
    return layer_ops(cfg, shape, kind, wbytes, kv_bytes)
