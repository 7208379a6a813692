"""sysmodel/designs/l3: the rank's cycles from the RTL cycle model, the DRAM derating from the memory engine, the
L3 system on the serving simulator, its scheduler and its bad-input errors."""

import math

import numpy as np
import pytest

from golden.l3_spec import FULL, MAX_TOKENS, REDUCED
from hw.l3 import rank
from hw.l3.cycles import START, UNIT_BANK_PU, error_cycles
from sysmodel.cost.models import StageShape
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.l3 import claims, figures, grids, model, paper, report
from sysmodel.designs.l3.model import HostConfig, L3System
from sysmodel.engines.serving import make_trace, simulate


def test_head_cycles_follow_the_rank_cycle_model() -> None:
    slope, fixed = model.head_cycles()
    # K and V, 512 B per token at 128 B per PU cycle; the normalization pass overlaps the context RDs
    assert slope == 4
    assert rank.run_cycles(2048, FULL, MAX_TOKENS) == slope * 2048 + fixed


def test_error_cycles_cover_the_cut_run() -> None:
    """The error path's latency: a finished head's as head_cycles has it; a RUN cut into an open write waits
    for the last whole window (the tb asserts each case on the RTL: tb/l3/cases.py's timed heads)."""
    beats = 3 * REDUCED.bursts * 8  # one token's K, V and Q
    assert error_cycles(beats) == rank.head_cycles(1, REDUCED, 64, error=True)
    assert error_cycles(beats, open_beats=2) == error_cycles(beats)  # its last beat closed a window
    assert error_cycles(beats, open_beats=3) == error_cycles(beats) - 1  # the beat before it did
    assert error_cycles(1, open_beats=1) == 1 + START  # no window: the RUN is taken as offered
    with pytest.raises(ValueError, match="beats, open_beats: 2, 3 not allowed"):
        error_cycles(2, open_beats=3)


def test_dram_efficiency_is_measured_below_peak() -> None:
    assert 0.85 < model.dram_efficiency() < 1
    assert pytest.approx(204.8e9) == model.RANK_BW
    # tFAW on the all-bank ACT costs more row-switch time, so attention slows by the efficiency ratio
    assert model.dram_efficiency(tfaw=True) < model.dram_efficiency()
    free, faw = (L3System("gpt3-175b", 8, tfaw=t).attention_seconds(32, 32 * 4096) for t in (False, True))
    assert faw / free == pytest.approx(model.dram_efficiency() / model.dram_efficiency(tfaw=True))


def test_r_pim_reads_at_the_rank_level_efficiency() -> None:
    """R-PIM's rank PUs read their rank as ordinary bank-interleaved bursts (the engine's rank-level mode): row
    switches hide behind other banks' reads, so they lose less than the all-bank stream, and R-PIM's attention
    is its KV over 25.6 GB/s per rank at that efficiency."""
    assert model.dram_efficiency() < model.rank_level_efficiency() < 1
    sys = L3System("gpt3-175b", 8, attention="r-pim")
    kv = 32 * 4096 * 2 * sys.cfg.kv_dim * 2  # FP16 K and V
    assert sys.attention_seconds(32, 32 * 4096) == pytest.approx(kv / (64 * 25.6e9 * model.rank_level_efficiency()))


def test_bad_configs_name_the_field() -> None:
    with pytest.raises(ValueError, match="attention: 'gpu' not allowed"):
        L3System("gpt3-175b", 8, attention="gpu")
    with pytest.raises(ValueError, match="ranksets: 0 not allowed"):
        HostConfig(ranksets=0)
    with pytest.raises(ValueError, match="gpu_bound: 'half' not allowed; allowed: whole, chunk"):
        L3System("gpt3-175b", 8, gpu_bound="half")
    with pytest.raises(Infeasible, match="head dimension 80"):
        L3System("phi-2", 1)
    with pytest.raises(Infeasible, match="weights do not fit"):
        L3System("gpt3-175b", 2)


def test_scheduler_overlaps_gpu_and_pim() -> None:
    shape = StageShape.decode(64, 8192)
    sched = L3System("gpt3-175b", 8).stage_times(shape)
    naive = L3System("gpt3-175b", 8, scheduler=False).stage_times(shape)
    gpu, host = L3System("gpt3-175b", 8).layer_parts(shape, False)
    assert sched == pytest.approx(96 * max(gpu, host)) and naive == pytest.approx(96 * (gpu + host))


def test_r_pim_hides_its_transfers_behind_the_layer_without_ranksets(monkeypatch) -> None:
    """§6.1: R-PIM's "CPU-GPU communication (e.g., KV transfer) is hidden by concurrent computation", and it has
    no rankset extension (§5.1's is L3's): a layer of its single batch costs max(T_GPU + A, X)."""
    tp, dp = paper.MODELS["gpt3-175b"]
    hidden = L3System("gpt3-175b", tp, dp, attention="r-pim", scheduler=False)
    serial = L3System("gpt3-175b", tp, dp, attention="r-pim", scheduler=False, overlap=False)
    prefill, mixed = StageShape.prefill(1, 4096), StageShape.decode(8, 2000) + StageShape.prefill(1, 4096)
    for shape in (prefill, mixed):
        gpu, host = hidden.layer_parts(shape, False)
        attn = hidden.attention_seconds(shape.decode_reqs, shape.decode_ctx)
        xfer = serial.layer_parts(shape, False)[1] - attn  # the overlap-free host part is A + X
        assert xfer > 0 and gpu + host == pytest.approx(max(gpu + attn, xfer))
    # a prefill's KV offload is shorter than its FC layers: the stage costs the GPU's time alone
    gpu, host = hidden.layer_parts(prefill, False)
    assert host == 0 and hidden.stage_times(prefill) == pytest.approx(96 * gpu)
    # a transfer longer than the computation is charged where it outlasts it: 1/1000 of the PCIe bandwidth
    x = serial.layer_parts(prefill, False)[1]
    monkeypatch.setattr(paper, "PCIE_EFFECTIVE", paper.PCIE_EFFECTIVE / 1000)
    gpu, host = hidden.layer_parts(prefill, False)
    assert host > 0 and gpu + host == pytest.approx(1000 * x)


def test_more_ranksets_are_faster_and_pim_scales_with_context() -> None:
    t = [L3System("gpt-89b", 4, 2, HostConfig(rs)).attention_seconds(32, 32 * 6144) for rs in (2, 4, 16)]
    assert t[0] > t[1] > t[2]
    sys = L3System("gpt-89b", 4, 2)
    assert sys.attention_seconds(1, 2000) < sys.attention_seconds(1, 4000) < 2.1 * sys.attention_seconds(1, 2000)


def test_prefill_budget_is_a_multiple_of_16_that_fits_under_the_pim() -> None:
    sys = L3System("gpt3-175b", 8)
    b = sys.prefill_budget(32, 32 * 8000)
    assert b % paper.CHUNK_MULTIPLE == 0 and b >= 16
    assert math.isinf(sys.prefill_budget(0, 0)) and math.isinf(
        L3System("gpt3-175b", 8, scheduler=False).prefill_budget(4, 400)
    )


def test_a_gpu_bound_stage_runs_whole_prompts_unless_chunked_to_the_letter() -> None:
    """§5.3's step 3 stops adding prompts once T_GPU > T_PIM; where two short decodes' GPU time already exceeds
    their PIM time, the default (``whole``) runs prompts whole, as with no decode waiting, and ``chunk`` (steps
    3-4 to the letter) chunks to one multiple of 16. A PIM-bound batch gets the same chunk under both."""
    whole, chunk = (L3System("gpt3-175b", 8, gpu_bound=g) for g in model.GPU_BOUND)
    assert whole.gpu_bound == "whole"
    gpu, host = whole.layer_parts(StageShape.decode(2, 2 * 100), False)
    assert gpu > host, "two 100-token decodes are not GPU-bound: the toy point misses the case"
    assert math.isinf(whole.prefill_budget(2, 2 * 100)) and chunk.prefill_budget(2, 2 * 100) == paper.CHUNK_MULTIPLE
    assert whole.prefill_budget(32, 32 * 8000) == chunk.prefill_budget(32, 32 * 8000) > paper.CHUNK_MULTIPLE


def test_the_budgets_gpu_memo_is_exact() -> None:
    """prefill_budget keeps each probe's GPU seconds by (decodes, tokens): the GPU's work has no decode context in
    it, so a memo hit from another stage's context returns what a fresh search computes."""
    sys = L3System("gpt3-175b", 8)
    chunk = StageShape.prefill(1, 512)
    short, long = (StageShape(tokens=40, decode_reqs=40, decode_ctx=40 * n) + chunk for n in (100, 9000))
    assert sys.gpu_seconds(short, False) == sys.gpu_seconds(long, False)
    warm = [sys.prefill_budget(40, 40 * n) for n in (9000, 6000, 12000)]
    assert warm == [L3System("gpt3-175b", 8).prefill_budget(40, 40 * n) for n in (9000, 6000, 12000)]
    assert sys._budget_gpu, "the searches did not use the memo"


def test_l3_serves_a_trace_and_holds_more_than_the_gpu() -> None:
    trace = make_trace("openthoughts", 24, seed=3)
    l3 = simulate(trace, L3System("gpt3-175b", 8), stages=True)
    gpu = simulate(trace, grids.systems("gpt3-175b")["GPU-only"](), stages=True)
    assert l3.throughput > 0 and l3.kv_capacity > 5 * gpu.kv_capacity
    assert np.average(l3.iter_decode, weights=l3.iter_time) > np.average(gpu.iter_decode, weights=gpu.iter_time)


def test_predictors_report_relative_error() -> None:
    re = model.train_predictors(samples=200)
    assert set(re) == {"PIM (linear)", "GPU (random forest)"} and all(0 <= v < 0.2 for v in re.values())


def test_fig8_runs_l3_interleaved_and_the_baselines_on_the_kv_policys_iterations(monkeypatch) -> None:
    """§5.2-5.3 give L3 its interleaving, §6.1 HBM-PIM and R-PIM prefill-prioritized scheduling: in Fig. 8, L3
    runs ``interleave`` on the paged cache (``reserve`` already chunks by its budget), each baseline the policy
    of the KV band's point; the ablation's naive design (no scheduler) runs vLLM's iterations."""
    seen: set[tuple[str, str]] = set()

    def record(make, model, trace, requests, scheduler="vllm"):
        seen.add((make, scheduler))

    monkeypatch.setattr(grids, "systems", lambda model, **kw: {n: n for n in ("L3", *grids.BASELINES)})
    monkeypatch.setattr(grids, "serve", record)
    monkeypatch.setattr(paper, "MODELS", {"gpt3-175b": (8, 1)})
    monkeypatch.setattr(paper, "TRACES", ("openr1",))
    for policy, l3 in (("vllm", "interleave"), ("reserve", "reserve")):
        seen.clear()
        grids.fig8(10, policy)
        assert seen == {("L3", l3), *((b, policy) for b in grids.BASELINES)}
    seen.clear()
    grids.fig8(10, "vllm", "attacc", "chunk", ("L3",))  # an alternative of L3's alone reruns L3 only
    assert seen == {("L3", "interleave")}
    policies = []
    monkeypatch.setattr(grids, "serve", lambda make, *a, scheduler: policies.append(scheduler))
    for on in (True, False):
        grids._l3_throughput(10, HostConfig(), "attacc", scheduler=on)
    assert policies == ["interleave", "vllm"]


def test_fig8_lines_print_paper_model_and_ratio() -> None:
    rows = [
        {
            "model": "m",
            "trace": "t",
            "L3": 10.0,
            "L3 batch": 8.0,
            **{b: 5.0 for b in report.BASELINES},
            **{f"{b} batch": 2.0 for b in report.BASELINES},
            **{f"{b} rejected": 0.25 for b in report.BASELINES},
        }
    ]
    rows.append({**rows[0], "model": "opt-66b", "trace": "dolphin"})  # the cell §6.2's comparisons name
    reserve = [{**r, "L3": 20.0, "L3 batch": 16.0} for r in rows]  # the same cells under the reserve KV policy
    text = "\n".join(report.fig8_lines(rows, claims.fig8_rows(rows, [reserve])))
    assert "| m | t | 10 | 2.00 | 2.00 | 2.00 | 2.00 | 4.00 | 25.0% |" in text
    gap = claims.GAPS["speedup over GPU-only"]
    assert f"| speedup over GPU-only | 5.00 | 2.00 | 0.40 | {gap}; band [2.00, 4.00]: paper outside |" in text
    assert "| batch size over GPU-only | 14.30 | 4.00 | 0.28 |" in text
    assert f"the default profile is {figures.GPU_DEFAULT}" in text  # the GPU profile band's paragraph


def test_area_ratios_come_from_the_yosys_snapshot() -> None:
    from sysmodel.cost import characterization

    area = characterization.load_area("l3")
    assert set(area) == set(paper.AREA_UM2)
    text = "\n".join(report.area_lines(claims.area_rows()))
    pu = area[UNIT_BANK_PU]["cells"]["total"]
    for unit, um2 in paper.AREA_UM2.items():
        got, want = area[unit]["cells"]["total"] / pu, um2 / paper.AREA_UM2[UNIT_BANK_PU]
        assert f"| {unit} | {um2} | {want:.2f} | {area[unit]['cells']['total']} |" in text
        assert f"| {got:.2f} | {got / want:.2f} |" in text


def test_plots_are_written(tmp_path) -> None:
    names = ("L3", *report.BASELINES)
    rows = [
        {"model": "m", "trace": t, **dict.fromkeys(names, 2.0), "GPU-only": gpu} for t, gpu in (("a", 1.0), ("b", None))
    ]
    got = {"scalability": dict.fromkeys(paper.SCALABILITY, 1.0), "ablation": dict.fromkeys(paper.ABLATION, 1.0)}
    tbt = {(rs, b): 0.5 for rs in figures.TBT_RANKSETS for b in figures.TBT_BATCHES}
    for path in (report.plot_fig8(rows, tmp_path / "f8.png"), report.plot_studies(got, tbt, tmp_path / "s.png")):
        assert path.stat().st_size > 1000
