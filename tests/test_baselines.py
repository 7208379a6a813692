"""Baselines behave as their bottlenecks say."""

import pytest

from sysmodel import sweep
from sysmodel.cost.devices import get_device, get_link
from sysmodel.cost.models import load_model
from sysmodel.cost.stage import ATTACC, ATTACC_ETA, Infeasible
from sysmodel.designs import baselines as b


def test_gpu_only_decode_is_weight_bandwidth_bound() -> None:
    """With bare efficiency factors a batch-1 step reads the layer weights at eta_m x bandwidth; AttAcc's
    GPU profile adds exactly its per-kernel times (2 norms + 1 activation per layer) and idle SMs."""
    cfg, dev = load_model("llama2-7b"), get_device("a100-80g-sxm")
    bare = b.gpu_only("llama2-7b", batch=1, kv_len=128, eff=ATTACC_ETA)
    layer_bytes = cfg.params() * 2 - cfg.vocab * cfg.hidden * 2 * 2
    assert bare.seconds == pytest.approx(layer_bytes / (dev.mem_bw * ATTACC.memory), rel=0.02)
    full = b.gpu_only("llama2-7b", batch=1, kv_len=128)
    overheads = cfg.layers * (2 * ATTACC.norm_s + ATTACC.act_s)
    attn = full.seconds - bare.seconds - overheads  # attention of 32 heads on 108 SMs runs at 32/108
    kv_read = cfg.layers * 128 * cfg.kv_bytes_per_token() / cfg.layers / (dev.mem_bw * ATTACC.memory)
    assert attn == pytest.approx(kv_read * (108 / 32 - 1), rel=0.01)


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
    msg = r"llama2-70b at batch 1 x 1024 tokens: weights \+ KV cache need 138.3 GB; 1 x a100-80g-sxm holds 80 GB"
    with pytest.raises(Infeasible, match=msg):
        b.gpu_only("llama2-70b")
    with pytest.raises(Infeasible, match=r"llama2-7b at batch 128 x 65536 tokens: weights \+ KV cache need 4411"):
        b.hbm_pim_attention("llama2-7b", batch=128, kv_len=65536)


def test_sweep_and_baseline_price_a_point_alike() -> None:
    """One cost function: the sweep's decode point and the GPU-only baseline give the same step time,
    and an infeasible point is reported by the sweep with the reason the API raises."""
    point = {"model": "llama2-7b", "device": "a100-80g-sxm", "batch": 1, "kv_len": 1024}
    row = sweep.run_point("decode", point)
    assert row["latency_ms"] == pytest.approx(b.gpu_only("llama2-7b", batch=1, kv_len=1024).seconds * 1e3, rel=1e-12)
    big = {"model": "llama3.1-8b", "device": "rtx4090", "batch": 128, "kv_len": 65536}  # within its 128K context
    row = sweep.run_point("decode", big)
    assert row["feasible"] is False and row["tokens_per_s"] is None
    with pytest.raises(Infeasible) as e:
        b.gpu_only("llama3.1-8b", device="rtx4090", batch=128, kv_len=65536)
    assert row["reason"] == str(e.value)


def test_report() -> None:
    from sysmodel.report.sections import baselines_lines

    text = "\n".join(baselines_lines())
    assert "| DGX+AttAcc_bank | 1 | 58.55 |" in text and "Modelling differences that remain" in text


@pytest.mark.parametrize("row", b.attacc_anchor(), ids=lambda r: f"{r['system']}-b{r['batch']}")
def test_attacc_anchor_within_10_percent(row: dict) -> None:
    """The public AttAcc simulator's GPT-175B runs (8x A100-HBM3, 2048/128): membound within 10%."""
    assert 0.9 <= row["ratio"] <= 1.1


def test_attacc_pim_gain_matches() -> None:
    r = {(x["system"], x["batch"]): x["model"] for x in b.attacc_anchor()}
    assert r["DGX+AttAcc_bank", 1] / r["DGX", 1] == pytest.approx(58.55 / 32.22, rel=0.05)  # 1.82x


def test_tp_allreduce_follows_attaccs_nvlink_model() -> None:
    link = get_link("nvlink-a100")
    # batch 1 GPT-175B: 24 KB vectors over 8 GPUs: 7 steps of ~6.09 us
    assert float(link.allreduce_time(12288 * 2, 8)) == pytest.approx(7 * (6.06e-6 + 0.009e-9 * 3072), rel=1e-9)
    # large vectors: the measured per-byte term (0.009 ns/B, ~111 GB/s) binds before the 300 GB/s link
    assert float(link.allreduce_time(1e9, 8)) == pytest.approx(7 * (6.06e-6 + 0.009e-9 * 1.25e8), rel=1e-9)
    assert float(get_link("pcie4x16").allreduce_time(1e9, 8)) == pytest.approx(7 * 1.25e8 / 32e9)
    assert float(link.allreduce_time(1e9, 1)) == 0


def test_decode_tokens_is_the_per_token_loop_in_one_evaluation() -> None:
    """1,000 decode steps of a 70B model as one array evaluation: the same numbers as a step-by-step loop."""
    import time

    from sysmodel.cost.devices import get_device
    from sysmodel.cost.models import load_model
    from sysmodel.cost.stage import ATTACC, Engine, decode_step, decode_tokens

    cfg, eng = load_model("llama2-70b"), Engine(get_device("a100-80g-sxm"), ATTACC, 4)
    start = time.perf_counter()
    fast = decode_tokens(cfg, eng, 8, 128, 1000)
    elapsed = time.perf_counter() - start
    loop = [float(decode_step(cfg, eng, 8, 128 + i)) for i in range(1000)]
    assert fast.shape == (1000,) and fast.tolist() == loop
    assert elapsed < 0.5  # ~1 ms here; `make bench` records it against the 10 ms target


def test_efficiency_profiles_are_named_sourced_and_chosen_per_device_class() -> None:
    """Issue 33 item 6: the achieved fractions of peak come from a named profile, the default per device
    class (GPU AttAcc's, CPU AttAcc's scaling factors), another by ``--set efficiency=NAME``."""
    from sysmodel import systems
    from sysmodel.cost import stage as cost
    from sysmodel.cost.models import StageShape

    assert all(p.source for p in cost.PROFILES.values())
    assert cost.efficiency("", get_device("a100-80g-sxm")) is ATTACC
    assert cost.efficiency(None, get_device("spr-ddr5")) is ATTACC_ETA
    assert systems.build("gpu", "llama2-7b").engine.eff is ATTACC  # the defaults are the class profiles
    assert systems.build("cpu", "llama2-7b").engine.eff is ATTACC_ETA
    shape = StageShape.decode(1, 128)  # weight-bandwidth bound: time goes as 1 / the memory fraction
    base = systems.build("gpu", "llama2-7b").stage_times(shape)
    measured = systems.build("gpu", "llama2-7b", ["efficiency=a100-measured"])
    assert measured.engine.eff is cost.A100_MEASURED
    assert measured.stage_times(shape) < base
    with pytest.raises(ValueError, match="efficiency: 'fast' not allowed; allowed: class, attacc"):
        systems.build("gpu", "llama2-7b", ["efficiency=fast"])
    with pytest.raises(ValueError, match="efficiency: unknown 'fast'; allowed: attacc, attacc-eta"):
        cost.efficiency("fast", get_device("a100-80g-sxm"))


def test_hbm_pim_refuses_latent_attention_as_l3_and_duplex_do() -> None:
    """DeepSeek's latent is read once for every head (many FLOPs per byte): the PIM engine, which computes at the
    GPU's peak, would time it as if bank PIM had a GPU's compute. It ran; now Infeasible naming why."""
    with pytest.raises(Infeasible, match="deepseek-v3: multi-head latent attention .* about 1 FLOP per byte"):
        b.HbmPim("deepseek-v3", "a100-80g-sxm", 32)
    assert b.HbmPim("llama2-70b", "a100-80g-sxm", 4).decode(1, 1024).seconds > 0
