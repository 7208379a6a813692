"""sysmodel.designs.duplex: derived Logic-PIM peaks, the module-cycle GEMM and attention costs, expert
co-processing, placement by mode, feasibility and energy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from golden.duplex_spec import FULL
from hw.duplex.cycles import gemm_txn_cycles
from sysmodel.cost.models import StageShape
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.duplex import model as dm
from sysmodel.designs.duplex import paper


def test_peaks_are_derived() -> None:
    p = dm.logic_pim_peaks()
    assert p["flops"] == pytest.approx(21.3e12, rel=0.01) and p["bandwidth"] == pytest.approx(2.66e12, rel=0.01)
    assert p["op_per_byte"] == pytest.approx(8, rel=0.01)
    t = dm.memory.HBM3.timing  # a stream in one SID stalls for its REFs (on-time refresh), plus row switches
    assert 0.9 * (1 - t.trfc / t.trefi) < dm.dram_efficiency() < 1 - t.trfc / t.trefi


def test_refresh_policy_of_logic_pims_banks() -> None:
    """The paper names no refresh scheme: per-bank refresh (HBM3's REFpb) streams the bank bundles faster than
    the default on-time refresh, a Duplex system's PIM times scale by the two efficiencies' ratio, and a policy
    the engine does not know is a clear error."""
    on, per_bank = dm.dram_efficiency(), dm.dram_efficiency(refresh="per-bank")
    assert on < per_bank < 1
    counts = np.array([4, 0, 2, 8])
    default = dm.DuplexSystem("mixtral-8x7b", "duplex")
    assert default.refresh == dm.memory.DEFAULT_REFRESH == "on-time"
    faster = dm.DuplexSystem("mixtral-8x7b", "duplex", refresh="per-bank")
    assert faster.expert_pim(counts, 1.0) == pytest.approx(default.expert_pim(counts, 1.0) * on / per_bank)
    with pytest.raises(ValueError, match="refresh: 'sometimes' not allowed; allowed: on-time, postpone"):
        dm.DuplexSystem("mixtral-8x7b", refresh="sometimes")


def test_pim_gemm_cycles_follow_the_module() -> None:
    m, k, n = FULL.rows * 4, FULL.rows * 8, FULL.lanes  # fits one module's buffer: one transaction
    assert dm.pim_gemm_cycles(m, k, n, modules=1) == gemm_txn_cycles(m, k, n, FULL)
    one = dm.pim_gemm_cycles(4096, 4096, 8)
    assert dm.pim_gemm_cycles(4096, 4096, 16) > one  # two token groups: compute-bound
    assert dm.pim_gemm_cycles(4096, 4096, 1) <= one  # idle lanes: memory-bound, no faster than 8 tokens
    ideal = 4096 * 4096 / FULL.rows / dm.MODULES
    assert ideal <= one < 1.4 * ideal  # 512 units over 160 modules: 4 each, not 3.2
    with pytest.raises(ValueError, match="m, k, n"):
        dm.pim_gemm_cycles(0, 64, 1)
    slope, fixed = dm.attention_cycles(4, 128)
    assert slope == pytest.approx(4, rel=0.1) and fixed > 0  # 2 + 2 weight beats per token (K then V)


def test_coprocess_experts_is_the_best_split() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        tx, tp = np.sort(rng.random(6)), np.sort(rng.random(6))
        best = min(max(tx[k:].sum(), tp[:k].sum()) for k in range(7))
        t, k = dm.coprocess_experts(tx, tp)
        assert t == pytest.approx(best) and max(tx[k:].sum(), tp[:k].sum()) == pytest.approx(t)


def test_placement_by_mode() -> None:
    decode, mixed = StageShape.decode(64, 2048), StageShape.decode(64, 2048) + StageShape.prefill(1, 512)
    t = {m: float(dm.DuplexSystem("mixtral-8x7b", m).stage_times(decode)[0]) for m in dm.MODES}
    assert t["duplex"] < t["gpu"] and t["duplex+pe"] <= t["duplex"] * 1.001 and t["duplex+pe+et"] < t["duplex+pe"]
    tm = {m: float(dm.DuplexSystem("mixtral-8x7b", m).stage_times(mixed)[0]) for m in ("gpu", "duplex", "duplex+pe")}
    assert tm["duplex+pe"] < tm["duplex"]  # co-processing in mixed stages
    dense = {m: float(dm.DuplexSystem("llama3-70b", m).stage_times(decode)[0]) for m in ("duplex", "duplex+pe+et")}
    assert dense["duplex"] == dense["duplex+pe+et"]  # no experts: only attention moves


def test_bad_configurations_name_the_field() -> None:
    with pytest.raises(ValueError, match="mode"):
        dm.DuplexSystem("mixtral-8x7b", "fast")
    with pytest.raises(ValueError, match="pim"):
        dm.DuplexSystem("mixtral-8x7b", pim="dram")
    with pytest.raises(ValueError, match="devices"):
        dm.DuplexSystem("mixtral-8x7b", devices=9)
    with pytest.raises(Infeasible, match="grok-1"):
        dm.DuplexSystem("grok-1", nodes=1, devices=4)


def test_energy_favours_pim_reads() -> None:
    e = dm.HBM3
    assert e.pj_per_bit("bank") < e.pj_per_bit("logic") < e.pj_per_bit("host")
    for model, mode in itertools.product(("mixtral-8x7b", "opt-66b"), ("duplex", "duplex+pe+et")):
        gpu = dm.DuplexSystem(model, "gpu").decode_energy_per_token(64, 2048)
        assert dm.DuplexSystem(model, mode).decode_energy_per_token(64, 2048) < gpu


def test_uniform_routing_picks_distinct_experts() -> None:
    r = dm.UniformRouting(8, 2, seed=3)
    counts = r.counts(40_000)
    assert counts.sum() == 80_000 and counts.max() / counts.min() < 1.05
    one = dm.UniformRouting(2, 2, seed=1).counts(100)  # 2 of 2 distinct: every token on both experts
    assert one.tolist() == [100, 100]


def test_routing_table_is_checked_and_used(tmp_path) -> None:
    table = np.array([[0, 1], [2, 3], [0, 7]])
    sys_ = dm.DuplexSystem("mixtral-8x7b", routing=table)
    assert sys_.routing.counts(4).tolist() == [3, 2, 1, 1, 0, 0, 0, 1]  # rows 0, 1, 2, then 0 again
    with pytest.raises(ValueError, match="token 1 names expert 8; mixtral-8x7b has experts 0..7"):
        dm.DuplexSystem("mixtral-8x7b", routing=np.array([[0, 1], [8, 2]]))
    with pytest.raises(ValueError, match="twice"):
        dm.DuplexSystem("mixtral-8x7b", routing=np.array([[4, 4]]))
    with pytest.raises(ValueError, match="top_k = 2"):
        dm.DuplexSystem("mixtral-8x7b", routing=np.array([[1, 2, 3]]))
    with pytest.raises(ValueError, match="opt-66b has no experts"):
        dm.DuplexSystem("opt-66b", routing=table)
    np.savez(tmp_path / "r.npz", other=table)
    with pytest.raises(ValueError, match="no array named 'experts'"):
        dm.DuplexSystem("mixtral-8x7b", routing=tmp_path / "r.npz")
    np.savez(tmp_path / "r.npz", experts=table)
    assert dm.DuplexSystem("mixtral-8x7b", routing=tmp_path / "r.npz").routing.counts(3).sum() == 6


def test_softmax_cycles_follow_the_unit() -> None:
    from hw.duplex.cycles import softmax_row_cycles

    beats = 64  # one request of 64 x 64 scores per head, 8 heads: 8 rows over the 5 stacks' units
    want = 8 * softmax_row_cycles(beats, normalize=False) / dm.STACKS
    assert dm.softmax_cycles(1, beats * 64 - 32, 8) == pytest.approx(want)


def test_every_pim_pays_the_same_softmax_unit() -> None:
    """Bank-PIM sends its scores to the logic-die softmax unit as Logic-PIM does (Duplex §VI): where the
    softmax binds (a narrow unit), both attention times are the softmax unit's, which reads no DRAM; where
    it does not, each is its own GEMM time. Fig. 14 runs the paper's batches."""
    reqs, ctx = np.array([32.0]), np.array([32.0 * 8192])
    for lanes in (4, 4096):
        logic, bank = (dm.DuplexSystem("mixtral-8x7b", "duplex", pim, softmax_lanes=lanes) for pim in ("logic", "bank"))
        heads = logic.cfg.heads
        soft = dm.softmax_cycles(reqs, ctx, heads, lanes) / logic.devices / dm.CLOCK_HZ
        for s in (logic, bank):
            assert s.attention_pim(reqs, ctx) >= soft
        if lanes == 4:
            assert logic.attention_pim(reqs, ctx) == bank.attention_pim(reqs, ctx) == pytest.approx(soft)
        else:
            assert bank.attention_pim(reqs, ctx) > soft  # the bank-level GEMM binds
    assert paper.BANK_PIM_BATCHES == (32, 64)
    with pytest.raises(ValueError, match="softmax_lanes: 0 not allowed"):
        dm.DuplexSystem("mixtral-8x7b", softmax_lanes=0)


def test_edap_by_pim() -> None:
    """Fig. 8's shape: equal timing for Logic- and BankGroup-PIM (same modules), BankGroup-PIM's DRAM-die area
    and path make it worse at every Op/B, and Bank-PIM's 16x bandwidth wins at 1 Op/B but not at 64."""
    from sysmodel.designs.duplex.model import gemm_edap, pim_area_mm2

    assert pim_area_mm2("logic") == pytest.approx(sum(paper.AREA_MM2.values()))
    with pytest.raises(ValueError, match="pim"):
        pim_area_mm2("dram")
    for n in (1, 8, 64):
        e = {p: gemm_edap(p, n) for p in ("logic", "bank", "bankgroup")}
        assert e["logic"]["delay"] == e["bankgroup"]["delay"] and e["bankgroup"]["edap"] > e["logic"]["edap"]
        assert e["logic"]["edap"] == pytest.approx(e["logic"]["delay"] * e["logic"]["energy"] * e["logic"]["area"])
    assert gemm_edap("bank", 1)["edap"] < gemm_edap("logic", 1)["edap"]
    assert gemm_edap("bank", 64)["edap"] > gemm_edap("logic", 64)["edap"]
    # Bank-PIM's roofline: compute-bound above 1 Op/B, so delay doubles with the tokens
    assert gemm_edap("bank", 16)["delay"] == pytest.approx(2 * gemm_edap("bank", 8)["delay"])


def test_area_lines_extrapolate_the_synthesized_pairs(monkeypatch) -> None:
    from sysmodel.designs.duplex import claims, figures, report

    fake = {"gemm_4x2": (8, 1000), "gemm_8x2": (16, 1800), "softmax_4": (4, 500), "softmax_8": (8, 700)}
    area = {
        d: {"params": {"rows": s, "lanes": 1} if d.startswith("gemm") else {"lanes": s}, "cells": {"total": c}}
        for d, (s, c) in fake.items()
    }
    monkeypatch.setattr(figures.characterization, "load_area", lambda paper: area)
    text = "\n".join(report.area_lines(claims.evaluated(figures.area_claims(figures.area_split()))))
    gemm = 32 * (1000 + 100 * (512 - 8))  # 100 cells per MAC, 32 modules of 64 x 8
    soft = 500 + 50 * (64 - 4)  # 50 cells per lane
    assert f"| GEMM modules : softmax unit | 1.84 | {gemm / soft:.2f} |" in text


def test_coprocessing_splits_by_memory_space() -> None:
    """Experts e, e+4, ... share a bank-bundle space; spaces come out in ascending token order."""
    counts = np.array([5, 1, 7, 2, 3, 0, 1, 2])  # spaces {0,4}: 8, {1,5}: 1, {2,6}: 8, {3,7}: 4
    tx, tp = counts * 1.0, counts * 10.0
    sx, sp = dm.space_times(counts, tx, tp)
    assert list(sx) == [1, 4, 8, 8] and list(sp) == [10, 40, 80, 80]
    three = np.array([2, 0, 1])  # fewer experts than spaces: one space each
    assert list(dm.space_times(three, three * 1.0, three * 2.0)[0]) == [0, 1, 2]


def test_the_bank_pim_area_basis_is_duplexs_estimate() -> None:
    """The shared Bank-PIM area basis (devices, no design owns it) is Duplex's §VII-E / §VI derivation."""
    from sysmodel.cost.devices import BANK_PIM_MM2_PER_TBPS

    assert dm.pim_area_mm2("bank") / dm.bank_pim_stack_bw() * 1e12 == BANK_PIM_MM2_PER_TBPS


def test_the_area_sources_cite_the_papers_area_section() -> None:
    """The logic-die breakdown is Duplex's §VII-E (Area Overhead); §IV-C is the microarchitecture, no area."""
    from sysmodel.designs.baselines import HbmPim

    for area in (dm.DuplexSystem("mixtral-8x7b", "duplex").area(), HbmPim("llama2-70b").area()):
        assert "§VII-E" in area.source and "§IV-C" not in area.source, area.source


def test_the_inter_node_link_is_the_papers_400_gb_per_s_per_node() -> None:
    """§VI's "400GB/s Infiniband" in bytes, per node: Grok1's MoE dispatch across its 2 nodes (each node's tokens,
    scatter and gather, the other node's share) costs its bytes over 400e9 B/s, not over 400 Gb/s (50e9 B/s)."""
    c, tokens = dm.DuplexSystem("grok-1", "gpu"), 128
    free = dm.DuplexSystem("grok-1", "gpu")
    free.ib = float("inf")
    nodes = c.nodes
    assert nodes == 2
    crossing = tokens / nodes * c.cfg.hidden * dm.ACT_BYTES * 2 * (nodes - 1) / nodes  # there and back
    got = c.moe_time(tokens, mixed=False) - free.moe_time(tokens, mixed=False)
    assert got == pytest.approx(crossing / 400e9, rel=1e-9)
