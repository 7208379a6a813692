"""The calibrated GPU (sysmodel/cost/gpu.py): per-iteration accuracy against Vidur's public A100/H100 kernel
measurements, with CodeLlama-34B and tensor-parallel width 4 held out of every fit; the profile is only
ever chosen by name; its constants are named with their sources."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest

from sysmodel import systems
from sysmodel.cost import gpu, gpu_validation
from sysmodel.cost import stage as cost
from sysmodel.cost.devices import get_device
from sysmodel.cost.models import StageShape, layer_ops, load_model
from sysmodel.cost.stage import ATTACC, CALIBRATED, Engine
from sysmodel.designs.baselines import GpuOnly

TOLERANCE = 0.10  # the bar: every iteration within 10% of the measured one


@pytest.fixture(scope="module")
def iterations() -> list[dict]:
    return gpu_validation.iterations()


def _err(r: dict) -> float:
    return abs(r["modelled_s"] / r["measured_s"] - 1)


def _whole(iterations, phase: str, validation_only: bool) -> list[dict]:
    """Layer iterations measured end to end (attention included: A100, width 2) of one phase, of the
    validation-only models or of the others."""
    return [
        r
        for r in iterations
        if r["attention"] and r["phase"] == phase and (r["model"] in gpu.VALIDATION_ONLY) == validation_only
    ]


def test_whole_iterations_within_10_percent_including_the_held_out_models(iterations) -> None:
    """Every layer iteration measured end to end is within 10% on decode, prefill and mixed stages, the
    held-out CodeLlama-34B and the validation-only Meta-Llama-3-70B among them in each phase. Its mixed
    iterations (a 768-token chunk plus 8-80 decode requests) were 11 of 90 over, 10.0-10.6% under, while
    the GEMM law had one tile width and no stream-K (776-848 rows, just past a multiple of 128)."""
    for phase in ("decode", "prefill", "mixed"):
        rows = _whole(iterations, phase, validation_only=False) + _whole(iterations, phase, validation_only=True)
        assert {gpu.HELD_OUT_MODEL, "llama3-70b"} <= {r["model"] for r in rows}, phase
        worst = max(rows, key=_err)
        assert _err(worst) < TOLERANCE, worst


def _rest_err(r: dict, collectives: bool) -> float:
    """|modelled / measured - 1| of a rest-of-layer row, its two all-reduces in or out of both sides."""
    if collectives:
        return _err(r)
    return abs((r["modelled_s"] - r["modelled_allreduce_s"]) / (r["measured_s"] - r["measured_allreduce_s"]) - 1)


def _rest_groups(iterations, collectives: bool) -> dict[tuple, list[float]]:
    """Errors of the held-out rest-of-layer rows (attention not measured: other models, widths, H100) by
    GPU and phase, every GPU among them."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in iterations:
        if not r["attention"] and r["held_out"]:
            groups[r["gpu"], r["phase"]].append(_rest_err(r, collectives))
    assert {g for g, _ in groups} == {"a100", "h100"}
    return groups


def test_rest_of_layer_decode_held_out_rows_within_10_percent_up_to_width_4(iterations) -> None:
    """GEMMs, norms, activation, rotary and adds of a decode layer, all-reduces apart (below), within 10% on
    every held-out row of both GPUs up to tensor-parallel width 4 (width 8: the strict xfail below). The
    decode rows were up to 45 of 112 over 10% while the gate and up projections were two GEMMs (vLLM runs
    one, gate_up_proj) and norms, adds, activation and rotary one bytes law (each is its own kernel: a row
    per thread block, or a flat add)."""
    rows = [r for r in iterations if r["phase"] == "decode" and r["tp"] <= 4]
    for key, errs in _rest_groups(rows, collectives=False).items():
        assert max(errs) < TOLERANCE, key


# Held-out rows the 20% guard leaves to the strict xfails below, each with its measured cause
BEYOND_20 = {
    ("a100", "prefill", "llama3-8b", 256, 4): "24% under: its gate-up GEMM measures 117 us at 256 tokens "
    "against 188 us at 512; the law's 72 us takes the longer of its compute (67 us) and memory (50 us) terms, "
    "near the ridge, where measured GEMMs run a median 10% slower than that (test_gemm_law_is_under_only_near_the_"
    "ridge)",
}


def test_rest_of_layer_on_held_out_rows(iterations) -> None:
    """Every phase, all-reduces apart: median under 5% (mixed: 10%) and every row within 20% per GPU and phase
    but those :data:`BEYOND_20` names (the 10% bar per row: the strict xfail below)."""
    rows = [r for r in iterations if (r["gpu"], r["phase"], r["model"], r["tokens"], r["tp"]) not in BEYOND_20]
    for key, errs in _rest_groups(iterations, collectives=False).items():
        assert np.median(errs) < 0.05 + 0.05 * (key[1] == "mixed"), key
    for key, errs in _rest_groups(rows, collectives=False).items():
        assert max(errs) < 0.20, key


@pytest.mark.xfail(strict=True, reason=next(iter(BEYOND_20.values())))
def test_rest_of_layer_rows_beyond_20_percent(iterations) -> None:
    named = [r for r in iterations if (r["gpu"], r["phase"], r["model"], r["tokens"], r["tp"]) in BEYOND_20]
    assert len(named) == len(BEYOND_20)
    assert all(_rest_err(r, collectives=False) < 0.20 for r in named)


def test_gemm_law_is_under_only_near_the_ridge() -> None:
    """The GEMM law's error follows its compute / memory balance, not the row count: on both GPUs the measured
    GEMMs whose two terms are within 0.8-1.6 of each other (256-512 rows: the A100's and H100's ridges) run a
    median 10-11% slower than the longer term, those far from it (under 0.8, over 2.5) within 2%. The law takes
    the longer term, as if loads and tensor-core work overlapped fully; near the ridge they do not.

    Tried and not adopted: LLMCompass's pipeline (software_model/matmul.py@2e015fd ``Matmul.simulate``: L2 tiles
    double-buffered, the first tile's loads and the last tile's compute not overlapped), with the fewest tiles
    whose working set fits half the L2 (40 MB A100, 50 MB H100), adds min(compute, memory) / tiles. Refitted, it
    took the near-ridge medians to -3.6% (A100) and -2.7% (H100), the far bins within 1% (the A100's 1.6-2.5 bin
    from -6.7% to +6.8%), but the refit raised the wide-GEMM bandwidth fraction (A100 0.634 to 0.715): the
    held-out Meta-Llama-3-70B decode layer at width 2, 128 tokens went 11.8% under (its gate-up GEMM from -11% to
    -19%; the 10% bar of test_rest_of_layer_decode_held_out_rows_within_10_percent_up_to_width_4) and the
    held-out mixed rows over 10% from 4 of 64 to 16 (A100), 0 of 32 to 3 (H100).

    Tried too and not adopted: the same pipeline with the memory side (``gemm_memory``, ``gemm_memory_wide``,
    ``gemm_launch_s``) refitted only on the rows outside the 0.8-2.5 balance (1555 of 1632 fitted A100 rows), the
    compute side then refitted on every row. Near-ridge medians -3.3% (A100), -3.1% (H100); the A100's wide
    fraction still rose 0.634 to 0.708 (H100 0.794 to 0.860; the launch 5.6 to 2.4 us, 5.0 to 3.3 us; with or
    without the launch in the memory side, or the compute refit, within 0.002): it is set by the 192 wide
    memory-bound rows themselves, not pulled by the ridge. A GEMM whose working set fits half the L2 is one tile,
    so the term adds its whole compute term (no overlap at all), and the bandwidth fraction rises to pay for it.
    The Meta-Llama-3-70B decode row (width 2, 128 tokens; its gate-up GEMM at balance 0.78, just outside the
    ridge bin: -11% to -18%) went 11.2% under, A100 mixed rows over 10% 4 to 15 of 64, H100 0 to 3 of 32.

    Tried last and not adopted: the pipeline at two levels, a GEMM of one L2 tile exposing only one L1 tile's
    load and compute per SM (STREAM_K_TILE, 32 deep: 0.5 + 1.4 us A100, 0.2 + 0.8 us H100), more tiles still
    min(compute, memory) / tiles, refitted as usual. The A100's wide fraction still rose 0.634 to 0.706 (H100
    0.794 to 0.850; launch 5.6 to 3.8 us, 5.0 to 4.0 us), so the multi-tile rows, not the one-tile ones, raise
    it. Near-ridge medians -3.9% (A100) but -8.1% (H100); held-out A100 decode InternLM-20B (width 4, 8 tokens)
    10.6% and Meta-Llama-3-70B (width 2, 128 tokens) 10.2% off; A100 mixed rows over 10% 4 to 11 of 64; the
    strict xfail of the rows beyond 20% passed. At L1 granularity for every GEMM (min(that, the two-level
    term)) the ~2 us went into the launch (A100 5.6 to 4.1 us, wide 0.638): near-ridge -9.4%, -10.6%. Nor is
    it LLMCompass's own law: Matmul.simulate charges the first L2 tile's DRAM reads before any compute
    (matmul.py@2e015fd line 898); its L1 batches (simulate_l2_tile_compute_cycle_count) hide L2-to-L1 reads.

    Nor is it the library's kernel choice (issue 54): one schedule picked by a rule instead of the fastest, refitted
    as usual. Held-out rest-of-layer rows over 10%, A100 decode/mixed/prefill and H100 prefill (today 4/4/10 and 6):
    no stream-K on the A100 4/10/15, 6; no split-K 4/4/10, 2 (on the A100 stream-K always beats it); neither
    25/20/20, 2; the largest tile that fills a wave 135/52/154 (with stream-K beside it 4/5/10, 4, and 3 of 32 H100
    mixed rows); one tile shape alone in waves puts more A100 rows over in some phase for every shape but 64 x 64
    (2/7/7, 3, at an operand bandwidth of 9.6 TB/s, past the A100's L2, and 14 of 32 H100 mixed rows); stream-K only
    from 1 or 1.5 waves of tiles 4/8/9, 5 and 4/8/6, 6; stream-K as CUTLASS dispatches it
    (threadblock_swizzle_streamk.h get_blocks: data-parallel waves and one stream-K wave with its fixup cost, or
    data-parallel alone when cheaper) 3/8/8, 4. A costlier stream-K puts A100 mixed rows over while its 256-row
    GEMMs stay up to 38% under, and the steps are per shape: from 848 to 1024 rows Meta-Llama-3-8B's gate-up GEMM at
    width 4 takes 1.54x, every other A100 gate-up 1.09-1.28x (H100: 0.94-1.04x)."""
    for r in gpu_validation.gemm_balance_errors():
        if (r["low"], r["high"]) == (0.8, 1.6):
            assert r["rows"] > 100 and r["median"] < -0.08, r
        elif r["low"] in (0.0, 2.5):
            assert r["rows"] > 1000 and abs(r["median"]) < 0.02, r


@pytest.mark.xfail(
    strict=True,
    reason="GEMMs near the ridge: 4 of 64 A100 mixed rows, 10 of 256 A100 and 6 of 128 H100 prefill rows and 4 of "
    "224 A100 decode rows (Meta-Llama-3-8B at width 8) are 10-24% off, the 256-token ones measuring 11-13% slower "
    "than any tile schedule. Where the law's compute and memory terms are within 0.8-1.6 of each other the "
    "measured GEMMs are a median 10-11% slower than the longer term on both GPUs, 2% elsewhere "
    "(test_gemm_law_is_under_only_near_the_ridge): loads and tensor-core work do not fully overlap there. A "
    "smooth roofline ((c^p + m^p)^(1/p), p fitted: 2.6 A100, 1.6 H100) took the A100's 256-row median from -13% "
    "to -6% but put the H100's 512-row GEMMs 7% over and its held-out prefill median past 5%: no one overlap law "
    "fits both; LLMCompass's L2-tile pipeline (first loads and last compute exposed) took both near-ridge "
    "medians within 4% but, refitted, put 16 of 64 A100 and 3 of 32 H100 mixed rows and a Meta-Llama-3-70B "
    "decode row over 10% (test_gemm_law_is_under_only_near_the_ridge). Also InternLM-20B's mixed rows at width 4 "
    "12% over, and a tiny GEMM (3584 x 4096 per device) "
    "steps +80% from 64 to 112 rows: the library's choice there is none of the law's",
)
def test_rest_of_layer_every_held_out_row_within_10_percent(iterations) -> None:
    for key, errs in _rest_groups(iterations, collectives=False).items():
        assert max(errs) < TOLERANCE, key


def test_rest_of_layer_with_all_reduces_on_held_out_rows(iterations) -> None:
    """The whole rest of the layer, all-reduces in: median under 10% per GPU and phase, nine rows in ten
    within 17% (the all-reduce's own per-row gap: the strict xfail below)."""
    for key, errs in _rest_groups(iterations, collectives=True).items():
        assert np.median(errs) < TOLERANCE, key
        assert np.percentile(errs, 90) < 0.17, key


@pytest.mark.xfail(
    strict=True,
    reason="the measured small all-reduce is one of two modes, not a function of size or width: Vidur swept the "
    "sizes in order (vidur/profiling/utils get_collectives_inputs), 3 timed steps each "
    "(collectives/collectives_wrapper.py ACTIVE_STEPS), and on the A100 the 63 rows from 16 kB to 1 MB switch "
    "between a fast (15-35 us) and a slow (~60 us) mode in runs of 16-27 consecutive sizes at each width. Over "
    "all 63 the medians are 47, 42 and 46 us at 2, 4 and 8 workers (the law fitted on 2 and 8: 41-46 us at 4), "
    "but the committed table's sizes nearest a 2^(k/2) grid caught mostly the fast runs at 4 workers (median 22 "
    "us of 11 rows), so a row compared with its size's sample is 30-150% over there. NCCL's own model "
    "(src/graph/tuning.cc: 4.5-10 us at 2-8 ranks) is below both modes. With the all-reduces in, 70 of 224 A100 "
    "and 23 of 112 H100 decode rows are over 10%; without, 4 and 0. Pooling was tried (all 994 sizes per GPU and "
    "width, each grid size measured as the median of its half octave, as Vidur's own predictor pools sizes: "
    "execution_time_predictor/sklearn_execution_time_predictor.py, a random forest): up to 1 MB a half octave "
    "holds 1-22 sizes against a mode's run of 16-27, so the medians keep their run's mode (4 A100s: 16-28 or "
    "60-63 us against the law's 44-53; 74 of 224 rows over 10%, the 90th percentile 16% to 18%). "
    "A window of a run's length would pool the A100 near 42 us, but the H100's pooled medians (16 kB-1 MB: 38, "
    "41, 34 us at 2, 4, 8 workers) put width 4 above both fitted widths, which no per-call latency linear in the "
    "width gives: not adopted",
)
def test_rest_of_layer_with_all_reduces_every_row_within_10_percent(iterations) -> None:
    for key, errs in _rest_groups(iterations, collectives=True).items():
        assert max(errs) < TOLERANCE, key


@pytest.fixture(scope="module")
def elementwise() -> dict[tuple[str, str], dict]:
    """Per GPU and element-wise kernel: its row of :func:`sysmodel.cost.gpu_validation.class_errors`."""
    return {(r["gpu"], r["class"]): r for r in gpu_validation.class_errors("elementwise")}


@pytest.mark.parametrize("fam", ["a100", "h100"])
@pytest.mark.parametrize("kernel", gpu.ELEMENTWISE)
def test_elementwise_kernels_median_on_held_out_rows(elementwise, fam: str, kernel: str) -> None:
    """Each element-wise kernel on its own law: median held-out error under 10%, the H100's 1-2 us adds
    under 13% (whole-microsecond measurements; before: adds 77-109% over, norms 16-29% under, activation
    and rotary off by the width per device)."""
    assert elementwise[fam, kernel]["held_median"] < (0.13 if (fam, kernel) == ("h100", "add") else 0.1)


@pytest.mark.xfail(
    strict=True,
    reason="measured: Vidur's kernel times are whole microseconds (a 2 us add is 2.0 or 3.0: 50% apart), so "
    "kernels under 10 us cannot be resolved to 10%; and at 512-1024 tokens the error follows the tensor-parallel "
    "width though a norm's or add's work does not (CodeLlama-34B's norm at 768 tokens: 33 us at width 1, 25 us "
    "at width 8; modelled 6-13% over at width 1, 20-50% at width 8): its input stays in L2 (40 MB A100, "
    "50 MB H100) when the preceding kernels' footprint per device is small, which a law on the kernel's own "
    "bytes cannot see",
)
def test_elementwise_every_held_out_row_within_10_percent(elementwise) -> None:
    for key, row in elementwise.items():
        assert row["held_max"] < TOLERANCE, key


def test_held_out_rows_are_outside_every_fit() -> None:
    """The rows each fit sees contain neither the held-out model nor the held-out width."""
    for fam in gpu.FAMILY_DEVICE:
        for cls in gpu.CLASS_FIELDS:
            for m in gpu.samples(fam, cls).meta:
                model = m.get("model")
                out = model == gpu.HELD_OUT_MODEL or model in gpu.VALIDATION_ONLY
                out = out or gpu.HELD_OUT_TP in (m.get("tp"), m.get("workers"))
                assert m["held_out"] or not out, m


def test_calibrated_is_never_a_default_and_leaves_other_profiles_alone() -> None:
    """The default GPU profile stays AttAcc's and its operator times stay the roofline's."""
    a100 = get_device("a100-80g-sxm")
    assert cost.efficiency(None, a100) is ATTACC and not ATTACC.calibrated
    assert cost.efficiency("calibrated", a100) is CALIBRATED
    cfg, shape = load_model("llama2-7b"), StageShape.decode(8, 1024)
    qkv = next(op for op in layer_ops(cfg, shape) if op.name == "qkv")
    attacc = Engine(a100, ATTACC, 2)
    assert attacc.op_time(qkv, shape) == attacc.time(qkv.flops, qkv.bytes)
    assert Engine(a100, CALIBRATED, 2).op_time(qkv, shape) != attacc.op_time(qkv, shape)


@pytest.mark.parametrize(
    ("system", "model", "engine"),
    [
        ("l3", "llama2-70b", lambda s: s.gpu),
        ("duplex", "mixtral-8x7b", lambda s: s.xpu),
        ("hermes", "llama2-7b", lambda s: s.hw.engine),
    ],
    ids=["l3", "duplex", "hermes"],
)
def test_paper_systems_with_a_gpu_take_the_profile_by_name(system: str, model: str, engine) -> None:
    """L3's A100s, Duplex's H100 xPUs and Hermes' GPU run on the calibrated GPU when asked; by default
    on AttAcc's profile (the paper sections' method)."""
    assert engine(systems.build(system, model)).eff is ATTACC
    assert engine(systems.build(system, model, ["efficiency=calibrated"])).eff is CALIBRATED


def test_calibrated_is_refused_for_a_cpu() -> None:
    with pytest.raises(ValueError, match="efficiency: calibrated is fitted to GPU kernels; spr-ddr5 is a cpu"):
        systems.build("cpu", "llama2-7b", ["efficiency=calibrated"])


def test_roofline_fractions_of_the_profile_are_the_a100_gemm_fit() -> None:
    """Paths that only take a roofline (e.g. Hermes' GEMVs) use the A100 GEMM fit's fractions."""
    fit = gpu.kernel_fit("a100")
    assert CALIBRATED.compute == pytest.approx(fit.gemm_compute, abs=0.01)
    assert CALIBRATED.memory == pytest.approx(fit.gemm_memory, abs=0.01)


def test_causal_share_is_exact_for_one_chunk_and_equal_chunks() -> None:
    one = StageShape.prefill(1, 768, 2432)
    assert gpu.causal_share(one) == pytest.approx(768 * 769 / 2 / (768 * 2432 + 768 * 769 / 2))
    three = StageShape.prefill(3, 512, 0) + StageShape.decode(5, 100)
    assert gpu.causal_share(three) == pytest.approx(1.0)


@pytest.mark.parametrize("system", ["gpu", "hbm-pim", "offload"])
def test_every_gpu_system_with_a_profile_runs_calibrated(system: str) -> None:
    """``--set efficiency=calibrated`` builds and times a stage; its provenance names the profile and
    every kernel constant with its source, the fitted ones listed as fits."""
    sys_ = systems.build(system, "llama2-13b", ["efficiency=calibrated"])
    t = sys_.stage_times(StageShape.decode(4, 512) + StageShape.prefill(1, 256))
    assert np.all(np.asarray(t) > 0)
    prov = sys_.provenance().to_dict()
    eff = next(c for c in prov["constants"] if c["name"] == "efficiency")
    assert eff["value"]["profile"] == "calibrated"
    names = {c["name"]: c["source"] for c in prov["constants"]}
    for cls_fields in gpu.CLASS_FIELDS.values():
        for name in cls_fields:
            assert "github.com/microsoft/vidur" in names[f"gpu.{name}"]
            assert any(f.startswith(f"gpu.{name} =") for f in prov["fits"])
    assert "CUTLASS" in names["gpu.TILE_SHAPES"] and "stream" in names["gpu.STREAM_K_TILE"]


def test_energy_takes_the_calibrated_time() -> None:
    """Same bytes and FLOPs on both profiles: the energies differ by static power x the time difference."""
    shape = StageShape.decode(16, 1024)
    cal = GpuOnly("llama2-13b", "a100-80g-sxm", 2, eff=CALIBRATED)
    att = GpuOnly("llama2-13b", "a100-80g-sxm", 2, eff=ATTACC)
    dt = cal.stage_times(shape) - att.stage_times(shape)
    static_w = cal.usage(shape).static_w
    assert float(cal.energy(shape) - att.energy(shape)) == pytest.approx(float(static_w * dt))


def test_h100_uses_its_own_fit_and_the_a100_attention() -> None:
    a100, h100 = gpu.kernel_fit("a100"), gpu.kernel_fit("h100")
    assert h100.gemm_memory != a100.gemm_memory and h100.ar_busbw != a100.ar_busbw
    assert h100.prefill_causal == a100.prefill_causal and h100.decode_memory == a100.decode_memory
    assert gpu.family(get_device("h100-pcie")) == "h100" and gpu.family(get_device("rtx4090")) == "a100"


def test_gate_and_up_cost_one_fused_gemm() -> None:
    """vLLM runs the gate and up projections as one GEMM of twice the width (gate_up_proj; Vidur's mlp_up_proj
    is that GEMM): on the calibrated GPU the two operators add up to it, not to two launches."""
    a100, shape = get_device("a100-80g-sxm"), StageShape.decode(8, 1024)
    ops = {op.name: op for op in layer_ops(load_model("llama2-7b"), shape)}
    engine, fit = Engine(a100, CALIBRATED, 2), gpu.kernel_fit("a100")
    up = ops["ffn_up"]
    fused = gpu.gemm_time(a100, fit, 8, 2 * up.n / 2, up.k, 2 * up.weight_bytes / 2)
    assert engine.op_time(ops["ffn_gate"], shape) + engine.op_time(up, shape) == pytest.approx(float(fused))


def test_row_kernel_steps_and_waves_by_hand() -> None:
    """vLLM's launch shapes: an 8192-wide norm is a 1024-thread block walking 8 steps; CodeLlama-34B's rotary
    (64 query heads, 8 KV heads of 128) a 512-thread block, 8 query steps and 1 key step; two 1024-thread
    blocks fit an SM, so 216 tokens are one wave on the A100's 108 SMs and 217 two (the step time doubles
    while bytes stay under the bandwidth term)."""
    assert gpu.row_steps("norm", 8192) == (8, 1024)
    assert gpu.row_steps("rope", 64 * 64, 8 * 64) == (9, 512)
    a100, fit = get_device("a100-80g-sxm"), gpu.kernel_fit("a100")
    one, two = (gpu.row_op_time(a100, fit, "act", t, 22016, 1.0) for t in (216, 217))
    assert float(two - fit.elem_launch_s) == pytest.approx(2 * float(one - fit.elem_launch_s))


def test_stream_k_has_no_partial_wave_and_small_tiles_reuse_less() -> None:
    """109 output tiles of 128 x 128 on the A100's 108 SMs: data-parallel takes two waves, stream-K deals the
    tiles' K iterations to every SM (109 / 108 of a wave). A 64 x 64 tile reads its operands for half the
    FLOPs of a 128 x 128 one, so it is slower per output element; the fitted operand bandwidth stays below
    the A100's L2 bandwidth (whitepaper: 5120 bytes per clock at 1.41 GHz)."""
    a100, fit = get_device("a100-80g-sxm"), gpu.kernel_fit("a100")
    m, n, k = np.array(128.0), 128.0 * 109, 4096.0
    two_waves = gpu.tile_compute(a100, fit, m, n, k, (128, 128))
    assert float(gpu.stream_k_time(a100, fit, m, n, k)) == pytest.approx(float(two_waves) * 109 / 216)
    per_element = {t: gpu.tile_s_per_k(a100, fit, t) / (t[0] * t[1]) for t in ((64, 64), (128, 128))}
    assert per_element[64, 64] > per_element[128, 128]
    assert fit.gemm_operand_bw < 5120 * 1.41e9


def test_few_row_gemms_run_as_matrix_vector_kernels() -> None:
    """Llama-2-70B's gate-up GEMM at one token with 4-bit weights (DECA Table 7's A100): a matrix-vector kernel
    streams the 250 MB of weights in 170 us at the fitted bandwidth, where the tile law would pad the one row to
    a 64-row tile and take 340 us. The measured rows are FP16, where no GEMM of at most GEMV_MAX_ROWS rows was ever
    compute-bound: every one is modelled the same with or without the matrix-vector schedule."""
    a100, fit = get_device("a100-80g-pcie"), gpu.kernel_fit("a100")
    n, k, w = 2 * 28672, 8192, 2 * 28672 * 8192 * 0.53125
    streamed = fit.gemm_launch_s + (w + 2 * (n + k)) / (a100.mem_bw * fit.gemm_memory)
    assert float(gpu.gemm_time(a100, fit, 1, n, k, w)) == pytest.approx(streamed)
    tiles = replace(a100, vector_flops=0.0)
    assert float(gpu.gemm_time(tiles, fit, 1, n, k, w)) > 1.9 * streamed
    for fam in gpu.FAMILY_DEVICE:
        s, dev = gpu.samples(fam, "gemm"), get_device(gpu.FAMILY_DEVICE[fam])
        few = s.args[0] <= gpu.GEMV_MAX_ROWS
        with_gemv = gpu.gemm_time(dev, gpu.kernel_fit(fam), *(a[few] for a in s.args))
        without = gpu.gemm_time(replace(dev, vector_flops=0.0), gpu.kernel_fit(fam), *(a[few] for a in s.args))
        assert few.sum() > 100 and np.array_equal(with_gemv, without)
