"""The model zoo's parameter counts match the published sizes within 2%."""

import pytest

from sysmodel.models import available, load_model


@pytest.mark.parametrize("name", available())
def test_params_match_published(name: str) -> None:
    cfg = load_model(name)
    assert cfg.params() == pytest.approx(cfg.published_params, rel=0.02)


def test_exact_counts_where_published() -> None:
    assert load_model("llama2-70b").params() == 68_976_648_192
    assert load_model("llama2-7b").params() == 6_738_415_616
    assert load_model("mixtral-8x7b").params() == 46_702_792_704


def test_unknown_model() -> None:
    with pytest.raises(ValueError, match="model: unknown 'gpt-5'"):
        load_model("gpt-5")


@pytest.mark.parametrize("name", ["llama2-70b", "opt-66b", "gpt3-175b", "falcon-7b"])
def test_decode_reads_every_dense_weight_once(name: str) -> None:
    from sysmodel.models import operators

    cfg = load_model(name)
    per_layer = sum(op.weight_bytes for op in operators(cfg, "decode", wbytes=2.0))
    non_emb = (
        cfg.params() - cfg.vocab * cfg.hidden * (1 if cfg.tied_embeddings else 2) - cfg.learned_positions * cfg.hidden
    )
    # norms and biases are not GEMM weights: within 0.1%
    assert cfg.layers * per_layer == pytest.approx(2.0 * non_emb, rel=1e-3)


def test_moe_reads_routed_experts_and_prefill_flops() -> None:
    from sysmodel.models import operators

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
