"""The model zoo and the config.json loader: parameter counts against the published ones, the migrated
entries against what the kit derived before, MLA, shared experts and sliding windows on one layer by hand."""

import json
from pathlib import Path

import pytest

from sysmodel.cost.models import (
    LayerKind,
    StageShape,
    available,
    describe,
    layer_groups,
    layer_ops,
    load_model,
    operators,
)

# Published parameter counts: (count, source, the checkpoint also stores the tied LM head). Falcon's hub counts
# (safetensors metadata) include lm_head.weight, which the model ties to the embedding.
PUBLISHED = {
    "deepseek-v3": (671e9, "DeepSeek-V3 technical report, abstract: 671B total, 37B activated", False),
    "falcon-40b": (41.8e9, "tiiuae/falcon-40b on the Hugging Face hub: 41.8B params", True),
    "falcon-7b": (7.22e9, "tiiuae/falcon-7b on the Hugging Face hub: 7.22B params", True),
    "gemma2-27b": (27e9, "Gemma 2 technical report (2024): 27B", False),
    "glam-143b": (143e9, "GLaM paper Table 1: GLaM (8B/64E), 143B", False),
    "gpt-89b": (89e9, "L3 Table 3: GPT-89B", False),
    "gpt3-175b": (175e9, "GPT-3 paper Table 2.1: 175.0B", False),
    "grok-1": (314e9, "xai-org/grok-1 release: 314B", False),
    "llama2-13b": (13_015_864_320, "meta-llama/Llama-2-13b-hf, hub: 13,015,864,320", False),
    "llama2-70b": (68_976_648_192, "meta-llama/Llama-2-70b-hf, hub: 68,976,648,192", False),
    "llama2-7b": (6_738_415_616, "meta-llama/Llama-2-7b-hf, hub: 6,738,415,616", False),
    "llama3-70b": (70.6e9, "meta-llama/Meta-Llama-3-70B, hub: 70.6B", False),
    "llama3.1-405b": (405e9, "The Llama 3 Herd of Models, Table 3: 405B", False),
    "llama3.1-70b": (70.6e9, "meta-llama/Llama-3.1-70B, hub: 70.6B", False),
    "llama3.1-8b": (8.03e9, "meta-llama/Llama-3.1-8B, hub: 8.03B", False),
    "mixtral-8x22b": (141e9, "Mistral AI, Mixtral 8x22B announcement: 141B total, 39B active", False),
    "mixtral-8x7b": (46_702_792_704, "mistralai/Mixtral-8x7B-v0.1, hub: 46,702,792,704", False),
    "opt-13b": (13e9, "OPT paper Table 1: 13B", False),
    "opt-30b": (30e9, "OPT paper Table 1: 30B", False),
    "opt-6.7b": (6.7e9, "OPT paper Table 1: 6.7B", False),
    "opt-66b": (66e9, "OPT paper Table 1: 66B", False),
    "persimmon-8b": (9.3e9, "Adept, Releasing Persimmon-8B: 9.3B", False),
    "phi-2": (2_779_683_840, "microsoft/phi-2, hub: 2,779,683,840", False),
    "qwen2.5-72b": (72.7e9, "Qwen/Qwen2.5-72B model card: 72.7B", False),
    "qwen3-235b-a22b": (235e9, "Qwen/Qwen3-235B-A22B model card: 235B total, 22B activated", False),
}
# Within 2% only: published as rounded names, and the kit's derivation of these entries may not move (the
# paper reports use them). OPT-13B has 12.85B weights; L3's GPT-89B at 48 x 12 h^2 has 87.6B; Persimmon's
# 9.40B is Adept's rounded 9.3B.
ROUNDED_NAMES = {"opt-13b", "gpt-89b", "persimmon-8b"}
LEGACY = Path(__file__).parent / "data" / "models_legacy.json"


def test_every_zoo_model_has_a_published_count() -> None:
    assert sorted(PUBLISHED) == available()


@pytest.mark.parametrize("name", available())
def test_params_match_published(name: str) -> None:
    cfg = load_model(name)
    count, _, head_copy = PUBLISHED[name]
    stored = cfg.params() + (cfg.vocab * cfg.hidden if head_copy else 0)
    rel = 0.02 if name in ROUNDED_NAMES else 0.01
    assert stored == pytest.approx(count, rel=rel)
    assert (abs(stored / count - 1) > 0.01) == (name in ROUNDED_NAMES)  # the exemptions are exactly these


def test_exact_counts_where_published() -> None:
    for name in ("llama2-70b", "llama2-7b", "mixtral-8x7b", "llama2-13b"):
        assert load_model(name).params() == PUBLISHED[name][0]


@pytest.mark.parametrize(
    ("name", "total", "active", "with_mtp"),
    [
        ("deepseek-v3", 671e9, 37e9, 685e9),  # DeepSeek-V3 report; 685B with MTP: its Hugging Face README
        ("qwen3-235b-a22b", 235e9, 22e9, None),
        ("mixtral-8x7b", 46.7e9, 12.9e9, None),  # Mixtral of Experts (Jiang et al. 2024) §2.1: 13B active
        ("mixtral-8x22b", 141e9, 39e9, None),
    ],
)
def test_total_and_active_within_2_percent(name: str, total: float, active: float, with_mtp: float | None) -> None:
    d = describe(load_model(name))
    assert d["params"] == pytest.approx(total, rel=0.02)
    assert d["active_params"] == pytest.approx(active, rel=0.02)
    assert d["params_mtp"] == (None if with_mtp is None else pytest.approx(with_mtp, rel=0.02))


def test_migrated_entries_derive_what_the_old_entries_did() -> None:
    """tests/data/models_legacy.json: every field, count and operator the kit derived from the zoo's own
    format (written by the loader of cc4062f) before its entries became stock Hugging Face configs."""
    old = json.loads(LEGACY.read_text())
    shapes = {"decode": StageShape.decode(3, 1000), "prefill": StageShape.prefill(2, 256, 100)}
    for name, want in old.items():
        cfg = load_model(name)
        for key in ("hidden", "intermediate", "layers", "heads", "kv_heads", "vocab", "activation", "tied_embeddings"):
            assert getattr(cfg, key) == want[key], (name, key)
        for key in ("ffn_matrices", "experts", "top_k", "learned_positions", "biases", "head_dim", "kv_dim"):
            assert getattr(cfg, key) == want[key], (name, key)
        assert [cfg.is_moe(i) for i in range(cfg.layers)] == [
            want["experts"] > 1 and i % want["moe_every"] == want["moe_every"] - 1 for i in range(cfg.layers)
        ]
        assert (cfg.params(), cfg.kv_bytes_per_token()) == (want["params"], want["kv_bytes_per_token"])
        assert [[bool(k), n] for k, n in layer_groups(cfg)] == want["layer_groups"]
        for phase, shape in shapes.items():
            for kind, _ in layer_groups(cfg):
                for op in layer_ops(cfg, shape, kind):
                    got = [float(op.weight_bytes), float(op.kv_bytes), float(op.flops), float(op.act_bytes)]
                    assert got + [float(op.blocks), op.k, op.n] == want["ops"][f"{phase}/{int(kind)}/{op.name}"]


def test_mla_one_layer_by_hand() -> None:
    """DeepSeek-V3 (kv_lora_rank 512, rope 64, q_lora_rank 1536, 128 heads of 128 + 64 query/key and 128
    value dims, hidden 7168): the cache holds 512 + 64 values a token a layer; decode attends absorbed."""
    cfg = load_model("deepseek-v3")
    assert cfg.kv_bytes_per_token() == 61 * (512 + 64) * 2  # 70,272 B: 61 layers of FP16 latent + rope key
    attn = (
        7168 * 1536 + 1536 + 1536 * 128 * 192  # q_a, its norm, q_b
        + 7168 * 576 + 512 + 512 * 128 * (128 + 128)  # kv_a, its norm, kv_b (K nope and V)
        + 128 * 128 * 7168  # o
    )  # fmt: skip
    assert cfg.attn_params() == attn
    ops = {op.name: op for op in operators(cfg, "decode", batch=2, kv_len=1000)}
    assert ops["attn_decode"].kv_bytes == 2 * 1000 * 576 * 2
    # absorbed: per pair and head, scores over 512 + 64 and the latent-weighted sum over 512, 2 FLOPs a MAC
    assert ops["attn_decode"].flops == 2 * 1000 * 128 * 2 * (512 + 64 + 512)
    assert (ops["qkv"].k, ops["qkv"].n) == (7168, 1536 + 576)  # q_a and kv_a fused, as vLLM's fused_qkv_a_proj
    projections = sum(op.weight_bytes for name, op in ops.items() if name.startswith("qkv"))
    assert projections == 2 * (attn - 128 * 128 * 7168 - 1536 - 512)  # every weight but o and the two norms
    pre = {op.name: op for op in operators(cfg, "prefill", batch=1, seq=4)}
    assert pre["attn_prefill"].flops == 10 * 128 * 2 * (192 + 128)  # 4 x 5 / 2 causal pairs, decompressed heads


def test_shared_experts_one_layer_by_hand() -> None:
    """DeepSeek-V3's layer 3 (the first MoE layer): 8 of 256 routed experts and the one shared expert of
    width 2048 per token; layers 0-2 are dense with the 18432-wide FFN."""
    cfg = load_model("deepseek-v3")
    assert [cfg.is_moe(i) for i in range(5)] == [False, False, False, True, True]
    moe = {op.name: op for op in operators(cfg, "decode", batch=1, layer=3)}
    expert = 7168 * 2048 * 2  # one matrix at 2 bytes
    assert moe["ffn_up"].weight_bytes == 8 * expert  # the routed experts a token picks
    assert moe["ffn_shared_up"].weight_bytes == expert and moe["ffn_shared_down"].weight_bytes == expert
    assert moe["ffn_shared_gate"].flops == 2 * 7168 * 2048
    wide = {op.name: op for op in operators(cfg, "decode", batch=64, layer=3)}
    assert wide["ffn_shared_up"].weight_bytes == expert  # read once for the batch, not per request
    assert wide["ffn_shared_up"].flops == 64 * 2 * 7168 * 2048
    dense = {op.name: op for op in operators(cfg, "decode", batch=1, layer=0)}
    assert dense["ffn_up"].weight_bytes == 7168 * 18432 * 2 and "ffn_shared_up" not in dense
    assert cfg.active_params() == cfg.params() - 58 * 248 * 3 * 7168 * 2048  # unused routed experts only


def test_sliding_window_one_layer_by_hand() -> None:
    """Gemma-2-27B: even layers attend to the last 4096 tokens, odd ones to all; 16 KV heads of 128."""
    cfg = load_model("gemma2-27b")
    assert [(int(k), k.window, n) for k, n in layer_groups(cfg)] == [(0, 0, 23), (0, 4096, 23)]
    per_layer_token = 2 * 16 * 128 * 2  # K and V, FP16
    sliding = {op.name: op for op in operators(cfg, "decode", batch=2, kv_len=10000, layer=0)}
    full = {op.name: op for op in operators(cfg, "decode", batch=2, kv_len=10000, layer=1)}
    assert sliding["attn_decode"].kv_bytes == 2 * 4096 * per_layer_token
    assert full["attn_decode"].kv_bytes == 2 * 10000 * per_layer_token
    short = {op.name: op for op in operators(cfg, "decode", batch=2, kv_len=100, layer=0)}
    assert short["attn_decode"].kv_bytes == 2 * 100 * per_layer_token  # under the window: all of it
    pre = {op.name: op for op in operators(cfg, "prefill", batch=1, seq=8192, layer=0)}
    assert pre["attn_prefill"].flops == 8192 * 4096 * 32 * 2 * (128 + 128)  # capped: 4096 keys a query
    assert cfg.kv_bytes(10000) == (23 * 4096 + 23 * 10000) * per_layer_token
    assert cfg.kv_bytes_per_token() == 46 * per_layer_token  # the allocator's bound: every layer in full


def test_layer_kind_reads_as_the_moe_flag() -> None:
    assert LayerKind(True, 4096) == 1 and not LayerKind(False) and LayerKind(False, 64).window == 64


_LLAMA_7B = json.loads(Path("sysmodel/data/models/llama2-7b.json").read_text())
_OPT_6_7B = json.loads(Path("sysmodel/data/models/opt-6.7b.json").read_text())  # learned positions


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model_type": "bert", "hidden_size": 8}, "model_type 'bert' not supported; supported: llama"),
        ({"model_type": "llama", "hidden_size": 64}, "field 'num_hidden_layers' missing"),
        ({"model_type": "llama", "hidden_size": 0}, "field 'hidden_size' = 0 not allowed; a whole number >= 1"),
        ({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "vocab_size": 10, "intermediate_size": 8, "hidden_act": "silu", "num_local_experts": 4},
         "field 'num_experts_per_tok' missing"),
        # shapes transformers could not build: these used to load, with a 1365-wide head or 32 KV heads for 3
        ({**_LLAMA_7B, "num_attention_heads": 3}, "field 'num_attention_heads' = 3 not allowed; it must divide"),
        ({**_LLAMA_7B, "num_key_value_heads": 5}, "5 KV heads not allowed; they must divide the 32 attention heads"),
        ({**_LLAMA_7B, "head_dim": -1}, "field 'head_dim' = -1 not allowed; a whole number >= 0"),
        # a top-9 of 8 experts and a window of -5 tokens loaded (the window then capped every layer's KV below 0)
        ({**_LLAMA_7B, "model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 9},
         "field 'num_experts_per_tok' = 9 not allowed; at most the 8 experts"),
        ({**_LLAMA_7B, "model_type": "mistral", "sliding_window": -5}, "field 'sliding_window' = -5 not allowed"),
        # fields of the wrong type were tracebacks (TypeError) or read letter by letter
        ({**_LLAMA_7B, "model_type": ["llama"]}, r"model_type \['llama'\] not supported"),
        ({**_OPT_6_7B, "max_position_embeddings": "2048"}, "field 'max_position_embeddings' = '2048' not allowed"),
        ({**_LLAMA_7B, "model_type": "gemma2", "layer_types": "sliding_attention"}, "field 'layer_types' not allowed"),
        ({**_LLAMA_7B, "model_type": "qwen2", "use_sliding_window": True, "sliding_window": 64,
          "max_window_layers": "x"}, "field 'max_window_layers' = 'x' not allowed"),
        ({**_LLAMA_7B, "model_type": "qwen2_moe", "num_experts": 4, "num_experts_per_tok": 2,
          "moe_intermediate_size": 64, "mlp_only_layers": 3}, "field 'mlp_only_layers' = 3 not allowed; a list"),
    ],
)  # fmt: skip
def test_loader_errors_name_the_field(tmp_path: Path, config: dict, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ValueError, match=message) as err:
        load_model(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_loads_a_config_by_path(tmp_path: Path) -> None:
    folder = tmp_path / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_text((Path("sysmodel/data/models/llama2-7b.json")).read_text())
    cfg = load_model(folder / "config.json")
    assert cfg.name == str(folder / "config.json") and cfg.params() == load_model("llama2-7b").params()
    assert load_model(cfg.name) == cfg  # what systems that reload a model by its name rely on
    assert load_model(folder).params() == cfg.params()  # the folder a download leaves
    with pytest.raises(ValueError, match="does not exist"):
        load_model(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        load_model(tmp_path / "bad.json")


def test_unknown_model() -> None:
    with pytest.raises(ValueError, match="model: unknown 'gpt-5'"):
        load_model("gpt-5")


@pytest.mark.parametrize("name", ["llama2-70b", "opt-66b", "gpt3-175b", "falcon-7b", "qwen2.5-72b", "gemma2-27b"])
def test_decode_reads_every_dense_weight_once(name: str) -> None:
    cfg = load_model(name)
    per_layer = sum(op.weight_bytes for op in operators(cfg, "decode", wbytes=2.0))
    non_emb = cfg.params() - cfg.embedding_params()
    # norms and biases are not GEMM weights: within 0.1%
    assert cfg.layers * per_layer == pytest.approx(2.0 * non_emb, rel=1e-3)


def test_moe_reads_routed_experts_and_prefill_flops() -> None:
    mix = load_model("mixtral-8x7b")
    one = {op.name: op for op in operators(mix, "decode", batch=1)}
    many = {op.name: op for op in operators(mix, "decode", batch=64)}
    assert one["ffn_up"].weight_bytes == 2 * 2 * mix.hidden * mix.intermediate  # top-2 experts, 2 bytes
    assert many["ffn_up"].weight_bytes == 8 * 2 * mix.hidden * mix.intermediate  # all 8 experts routed
    llama = load_model("llama2-7b")
    ops = operators(llama, "prefill", batch=1, seq=512)
    gemm_flops = sum(op.flops for op in ops if op.kind == "gemm")
    assert gemm_flops == pytest.approx(2 * 512 * llama.layer_params(False), rel=0.01)
    attn = next(op for op in operators(llama, "decode", batch=4, kv_len=1000) if op.kind == "attention")
    assert attn.kv_bytes == 4 * 1000 * 2 * llama.kv_dim * 2  # batch x tokens x (K, V) x dim x bytes
    glam = load_model("glam-143b")
    assert not glam.is_moe(0) and glam.is_moe(1)
    with pytest.raises(ValueError, match="phase: 'train' not allowed"):
        operators(llama, "train")


def test_model_command(capsys: pytest.CaptureFixture[str]) -> None:
    from sysmodel.cli import main

    assert main(["model", "sysmodel/data/models/deepseek-v3.json"]) == 0
    out = capsys.readouterr().out
    assert "671.0B total (682.6B with the multi-token-prediction layers), 37.6B active" in out
    assert "MLA: latent rank 512 + rope key 64" in out and "3 dense, 58 MoE" in out
    assert main(["model", "qwen3-235b-a22b"]) == 0
    assert "235.1B total, 22.2B active" in capsys.readouterr().out
    assert main(["model", "gemma2-27b"]) == 0  # (23 x 8192 + 23 x 4096) token-layers x 8192 B; 46 x 8192 in full
    assert (
        "8192-token context: 2.16 GiB with the sliding layers keeping 4096 tokens (2.88 GiB" in capsys.readouterr().out
    )
    assert main(["model"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(available())
    assert main(["model", "gpt-5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("membound model: model: unknown 'gpt-5'") and err.count("\n") == 1


# deepseek-ai/DeepSeek-V2-Lite config.json (sizes): MLA without a query compression, 2 shared experts
V2_LITE = {
    "model_type": "deepseek_v2",
    "hidden_size": 2048,
    "intermediate_size": 10944,
    "moe_intermediate_size": 1408,
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "num_experts_per_tok": 6,
    "first_k_dense_replace": 1,
    "moe_layer_freq": 1,
    "kv_lora_rank": 512,
    "q_lora_rank": None,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "vocab_size": 102400,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "max_position_embeddings": 163840,
}


def test_systems_outside_a_family_refuse_by_name(tmp_path: Path) -> None:
    """DeepSeek-V2 §2.1 / Table: V2-Lite has 15.7B parameters. L3's rank and Duplex's Logic-PIM map per-head
    K and V, so MLA is refused by name; Hermes and LLM in a flash run dense models only; sliding windows are
    refused where a system prices attention over every cached token."""
    from sysmodel import systems
    from sysmodel.cost.stage import Infeasible

    path = tmp_path / "deepseek-v2-lite" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(V2_LITE))
    assert load_model(path).params() == pytest.approx(15.7e9, rel=0.01)
    for name, reason in (
        ("l3", "multi-head latent attention"),
        ("duplex", "multi-head latent attention"),
        ("hermes", "MoE experts are outside its model"),
        ("flash", "MoE experts are outside its model"),
    ):
        with pytest.raises(Infeasible, match=reason):
            systems.build(name, str(path), [])
    for name in ("l3", "duplex", "hermes", "flash"):
        with pytest.raises(Infeasible, match="sliding-window layers"):
            systems.build(name, "gemma2-27b", [])


@pytest.mark.parametrize("name", ["deepseek-v3", "qwen3-235b-a22b"])
def test_compare_runs_every_system_on_a_config_path(name: str, tmp_path: Path) -> None:
    """The issue's done-when: `membound compare --model path/to/config.json --systems all` runs; each
    system serves or says why not."""
    import csv

    from sysmodel.cli import main

    path = Path("sysmodel/data/models") / f"{name}.json"
    assert main(["compare", "--model", str(path), "--requests", "4", "--out", str(tmp_path)]) == 0
    rows = {r["system"]: r for r in csv.DictReader((tmp_path / "compare.csv").open())}
    assert rows["gpu"]["feasible"] == "True" and len(rows) == 9
    assert all(r["feasible"] == "True" or r["reason"] for r in rows.values())
    if name == "deepseek-v3":
        assert "multi-head latent attention" in rows["duplex"]["reason"]


BASE = {"hidden_size": 64, "num_hidden_layers": 6, "num_attention_heads": 4, "vocab_size": 100, "hidden_act": "silu"}


@pytest.mark.parametrize(
    ("extra", "check"),
    [  # each family's rule in transformers, on a 6-layer config
        ({"model_type": "mistral", "intermediate_size": 128, "sliding_window": 32},
         lambda c: c.sliding_layers == (0, 1, 2, 3, 4, 5) and c.window == 32 and c.ffn_matrices == 3),
        ({"model_type": "qwen2", "intermediate_size": 128, "sliding_window": 32, "use_sliding_window": True,
          "max_window_layers": 4}, lambda c: c.sliding_layers == (4, 5) and c.qkv_bias),
        ({"model_type": "qwen2", "intermediate_size": 128, "sliding_window": 32, "use_sliding_window": False},
         lambda c: c.sliding_layers == () and c.window == 0),
        ({"model_type": "llama", "intermediate_size": 128, "sliding_window": 32,
          "layer_types": ["full_attention", "sliding_attention"] * 3}, lambda c: c.sliding_layers == (1, 3, 5)),
        ({"model_type": "qwen2_moe", "intermediate_size": 128, "moe_intermediate_size": 16, "num_experts": 8,
          "num_experts_per_tok": 2, "decoder_sparse_step": 2, "mlp_only_layers": [5],
          "shared_expert_intermediate_size": 32},
         lambda c: [c.is_moe(i) for i in range(6)] == [False, True, False, True, False, False]
         and (c.intermediate, c.dense_intermediate, c.shared_intermediate) == (16, 128, 32)),
        ({"model_type": "deepseek_v3", "intermediate_size": 128, "moe_intermediate_size": 16, "n_routed_experts": 8,
          "num_experts_per_tok": 2, "first_k_dense_replace": 1, "moe_layer_freq": 2, "n_shared_experts": 2,
          "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 16},
         lambda c: [c.is_moe(i) for i in range(6)] == [False, False, True, False, True, False]
         and c.shared_intermediate == 32 and c.kv_width == 24 and c.q_lora == 0 and c.kv_heads == 1),
        ({"model_type": "falcon", "multi_query": False}, lambda c: c.kv_heads == 4 and c.intermediate == 256),
        ({"model_type": "gpt2", "n_inner": None, "n_positions": 512},
         lambda c: c.intermediate == 256 and c.learned_positions == 512 and c.tied_embeddings and c.biases),
        ({"model_type": "opt", "ffn_dim": 128, "max_position_embeddings": 512},
         lambda c: c.learned_positions == 514 and c.context == 512 and c.ffn_matrices == 2),
        ({"model_type": "gemma2", "intermediate_size": 128, "head_dim": 32, "sliding_window": 16},
         lambda c: c.tied_embeddings and c.q_dim == 128 and c.sliding_layers == (0, 2, 4)),
    ],
)  # fmt: skip
def test_family_rules(extra: dict, check) -> None:
    from sysmodel.cost.models import from_config

    assert check(from_config({**BASE, **extra}, "t", "t.json"))
