"""Baselines behave as their bottlenecks say."""

import pytest

from sysmodel import baselines as b
from sysmodel.devices import get_device, get_link
from sysmodel.models import load_model


def test_gpu_only_decode_is_weight_bandwidth_bound() -> None:
    r = b.gpu_only("llama2-7b", batch=1, kv_len=128)
    cfg, dev = load_model("llama2-7b"), get_device("a100-80g-sxm")
    layer_bytes = cfg.params() * 2 - cfg.vocab * cfg.hidden * 2 * 2
    assert r.seconds == pytest.approx(layer_bytes / (dev.mem_bw * b.ETA_MEMORY), rel=0.02)


def test_offload_is_link_bound_when_the_model_does_not_fit() -> None:
    r = b.offload_pcie("opt-30b", device="rtx4090")
    moved = load_model("opt-30b").params() * 2 - 0.9 * 24e9
    assert r.seconds == pytest.approx(moved / get_link("pcie4x16").bw, rel=0.1)
    assert r.seconds > 10 * b.gpu_only("llama2-7b", device="rtx4090").seconds


def test_hbm_pim_wins_on_long_contexts_and_cpu_is_slowest() -> None:
    gpu = b.gpu_only("llama2-7b", batch=16, kv_len=4096)
    pim = b.hbm_pim_attention("llama2-7b", batch=16, kv_len=4096)
    assert pim.seconds < 0.6 * gpu.seconds  # KV reads dominate at batch 16 x 4K tokens
    short = b.hbm_pim_attention("llama2-7b", batch=1, kv_len=64).seconds / b.gpu_only("llama2-7b", kv_len=64).seconds
    assert short == pytest.approx(1.0, abs=0.02)  # nothing to gain without a KV cache to read
    assert b.cpu_only("llama2-70b").seconds > b.gpu_only("llama2-70b", gpus=2).seconds


def test_footprint_checked() -> None:
    with pytest.raises(ValueError, match=r"model: llama2-70b with batch 1 x 1024 tokens needs 138.3 GB"):
        b.gpu_only("llama2-70b")


def test_report() -> None:
    assert len(b.report_lines()) == 9
