"""DECA's statement catalogue (sysmodel/designs/deca/claims.py) and the claims issue 53 added to its ledger: each
paper value
read as the paper states it (its averaging set, its configuration, its location), and the readings corrected."""

from __future__ import annotations

import math
import re

import pytest

from golden.deca_spec import TILE
from sysmodel import ledger
from sysmodel.designs.deca import claims, figures, paper
from sysmodel.designs.deca import roof_surface as model
from sysmodel.designs.deca.claims import STATEMENTS
from sysmodel.report import Context, report

_SECTION = re.compile(r"(Abstract|§(\d+)(?:\.(\d+))?)")


def _rank(where: str) -> tuple[int, int]:
    m = _SECTION.match(where)
    assert m, f"{where!r}: not the paper's numbering (Abstract or §n[.m])"
    return (0, 0) if m[1] == "Abstract" else (int(m[2]), int(m[3] or 0))


def test_the_catalogue_is_in_the_papers_order_and_numbering() -> None:
    ranks = [_rank(s.where) for s in STATEMENTS]
    assert ranks == sorted(ranks), "statements out of the paper's order"
    assert all(s.reason or s.claims for s in STATEMENTS)
    counts = ledger.coverage("deca")
    assert counts["statements"] == counts["claimed"] + counts["not_computed"] == len(STATEMENTS)


def test_every_claim_regex_is_a_valid_full_pattern() -> None:
    for s in STATEMENTS:
        for pattern in s.claims:
            re.compile(pattern)


def test_over_uncompressed_ranges_are_over_the_sets_the_paper_names() -> None:
    """§8.4: "2.5x-3.3x" is over N=1 and 16 only; "1.6x-3.3x" includes N=64 — Table 6's own cells give exactly
    these ends (Q16 software-only over each DECA cell of the same model and N), so the sets are the paper's."""
    over = {
        (mdl, n, scheme): paper.TABLE6[mdl, n, "Q16"][0] / dc
        for (mdl, n, scheme), (_, dc) in paper.TABLE6.items()
        if dc is not None
    }
    low = [v for (_, n, _), v in over.items() if n != 64]
    every = list(over.values())
    assert round(min(low), 1) == float(paper.OVER_Q16["lowest", "1,16"]) == 2.5
    assert round(max(low), 1) == float(paper.OVER_Q16["highest", "1,16"]) == 3.3
    assert round(min(every), 1) == float(paper.OVER_Q16["lowest", "1,16,64"]) == 1.6


def test_table7_spr_peak_is_the_tmul_peak_in_fmas() -> None:
    """Table 7's 72 TFLOPS for SPR is the model's own TMUL peak counted in FMAs, as the paper counts FLOPs (§2.3):
    56 x 2.5 GHz x 512 FMAs per cycle = 71.7 T — an identity, not "half the model's peak" as the report read it."""
    peak = TILE * model.N_TABLE2 * model.SPR_HBM.mos / 1e12
    claim = paper.table7_spr("max compute (TFLOPS)")
    assert claim.kind == "identity"
    assert peak == pytest.approx(float(claim), rel=0.01)
    assert max(r["rl_model"] for r in model.table2()) == pytest.approx(peak)  # Table 2's R-L reaches the same peak


def test_ratio_claims_take_the_papers_table_cells() -> None:
    """The "very close" RTX comparison and the "almost ineffective" MXFP4 at N=64 are Table 7's and Table 6's own
    cells; the H100's 2.4x and 14x are arithmetic of Table 7's columns, identities."""
    assert float(paper.RTX_RATIO) == pytest.approx(68 / 58)
    assert float(paper.MXFP4_N64["llama2-70b"]) == pytest.approx(452.5 / 441.6)
    assert float(paper.MXFP4_N64["opt-66b"]) == pytest.approx(470.0 / 436.4)
    assert {c.kind for c in paper.H100_OVER_SPR.values()} == {"identity"}
    assert paper.table7_spr("BW (GB/s)").kind == "input"


def test_fig3_gap_at_n16_is_the_models_n1_ratio() -> None:
    """Fig. 3b's 5.25x is at N=16; the report takes it from the N=1 GeMM rows, which holds because the Roof-Surface's
    min-clause does not depend on N up to 16 (§12.2)."""
    at = {n: next(r for r in model.gemm_speedups(model.SPR_HBM, n) if r["kernel"] == "BF8_5%") for n in (1, 16)}
    gap = {n: r["Optimal"] / r["Software-only"] for n, r in at.items()}
    assert gap[1] == pytest.approx(gap[16])


@pytest.mark.parametrize("m", [model.SPR_DDR, model.SPR_HBM], ids=lambda m: m.name)
def test_the_largest_speedup_is_at_bf8_5(m: model.Machine) -> None:
    """§8.1 states the largest DECA over Software-only at Q8_5% (1.7 on DDR, 4.0 on HBM): the model's largest is
    at the same scheme, so the "(the largest)" rows compare like with like."""
    rows = model.gemm_speedups(m)
    assert max(rows, key=lambda r: r["DECA"] / r["Software-only"])["kernel"] == "BF8_5%"


def test_dse_best_ties_vec_and_mtx_at_bf8_5() -> None:
    """{32,8} at BF8_5%: 16 vOp cycles per tile at one per cycle equal the TMUL's 16 cycles per tile operation, so
    VEC and MTX tie (margin exactly 1): "just enough", not VEC-bound as the DSE table's tie-break lists it."""
    k = model.Kernel("q8", 0.05)
    m = model.SPR_HBM
    assert figures.vec_margin(m, k, m.vos_deca, model.deca_cycles_per_tile(k, 32, 8)) == pytest.approx(1.0, abs=1e-12)


def test_the_new_claims_carry_their_directions() -> None:
    """The claim functions make each new ledger row from values the figures compute; the directions the model
    gets right stay right, and a direction it gets wrong carries a named cause."""
    made = [
        *claims.bord_rows(),
        *claims.table6_ratio_rows(),
        *claims.table4_trend_rows(),
        *claims.speedup_rows(model.SPR_DDR, "11"),
        *claims.speedup_rows(model.SPR_HBM, "12"),
    ]
    rows = {(r.where, r.quantity): r for r in made}
    assert len(rows) == len(made) == 26
    assert {q for (_, q), r in rows.items() if r.kind != "prediction"} == {paper.FIG3_BF16["SPR-HBM"].quantity}
    for r in rows.values():
        assert r.paper == "deca"
        assert r.direction_agrees in ("yes", "no") or not math.isnan(r.paper_value)
        if r.direction_agrees == "no" or r.within == "no":
            assert r.cause and r.cause != "unexplained", r.quantity
    fig5a = rows["§4.2, Fig. 5a", paper.BORD_CLAIMS["5a"].quantity]
    assert fig5a.direction_agrees == "yes"


def test_the_speedup_range_is_the_texts_not_the_tables() -> None:
    """The abstract and §8.4 state 1.6x-1.9x over software-only; Table 6's own cells span 1.48x (OPT-66B, N=16,
    Q8 30%) to 1.92x: the ledger keeps the stated ends (the claim is the text's), and the catalogue says where."""
    cells = [sw / dc for sw, dc in paper.TABLE6.values() if dc is not None]
    assert round(min(cells), 2) == 1.48 and round(max(cells), 2) == 1.92
    assert tuple(map(float, paper.SPEEDUP)) == paper.SPEEDUP_RANGE == (1.6, 1.9)
    assert {s.where for s in STATEMENTS if any("lowest|highest" in p for p in s.claims)} == {
        "Abstract",
        "§1",
        "§8.4",
        "§11",
    }


def test_table1_cells_the_model_is_fitted_to_are_fits() -> None:
    """The model's non-FC time is fitted to Table 1's HBM cells at N=1 and 16 (128 tokens): those rows are fits;
    N=4, between them, is the one prediction of the column."""
    assert [paper.table1(n).kind for n in (1, 4, 16)] == ["fit", "prediction", "fit"]
    assert paper.FC_SHARE == {1: 0.895, 16: 0.859}
    assert [paper.table1(n).where for n in (1, 4, 16)] == ["§3.1, Table 1"] * 3


@pytest.mark.parametrize("k", model.TABLE2_KERNELS, ids=lambda k: k.label)
def test_table2_roofline_is_arithmetic_of_the_stated_machine(k: model.Kernel) -> None:
    """Table 2's R-L is 512 x N x min(MBW x AI_XM, MOS) (§3.2, §4.1) from the stated 850 GB/s, the format's bytes per
    tile and 56 x 2.5 GHz / 16: the model's value is that arithmetic, so the row is an identity, never counted."""
    m = model.SPR_HBM
    rl = TILE * model.N_TABLE2 * min(m.mbw / k.tile_bytes(), 56 * 2.5e9 / 16) / 1e12
    assert next(r["rl_model"] for r in model.table2(m) if r["kernel"] == k.label) == pytest.approx(rl)
    assert paper.table2(k.label, 0).kind == "identity"
    assert paper.table2(k.label, 1).kind == "prediction"


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[ledger.Row]:
    """``claims(ctx)``: DECA's claims as the report computes them, once (no grid: seconds)."""
    return claims.claims(Context(out=tmp_path_factory.mktemp("deca"), commit=False))


def test_the_section_renders_from_its_claims(tmp_path) -> None:
    """Issue 53: the section's claims are computed once, by ``claims(ctx)``; rendering the section (tables and plots)
    renders from those rows: the report writes its plots and tables and counts every row."""
    path = report(["deca"], Context(out=tmp_path, commit=False), echo=False)
    assert (tmp_path / "deca_roof_surface.png").stat().st_size > 10000
    assert (tmp_path / "deca_bords.png").stat().st_size > 10000
    text = path.read_text()
    assert "| BF8_30% | 31.2 |" in text
    assert re.search(rf"\| deca \| {len(STATEMENTS)} \| \d+ / \d+ \| 134 \|", text)  # the summary: every row


def test_claims_are_the_committed_ledgers_rows(rows: list[ledger.Row]) -> None:
    """``claims(ctx)`` gives the committed ledger's DECA rows: same quantities and workloads, the same paper and
    model values (to the ledger's 6 significant digits) and kinds, in the same order."""
    committed = [r for r in ledger.load() if r["paper"] == "deca"]
    got = [
        {
            "quantity": r.quantity,
            "workload": r.workload,
            "paper_value": f"{r.paper_value:.6g}",
            "model_value": f"{r.model_value:.6g}",
            "kind": r.kind,
        }
        for r in rows
    ]
    want = [{k: r[k] for k in ("quantity", "workload", "paper_value", "model_value", "kind")} for r in committed]
    assert len(got) == len(want) == 134
    assert got == want


def test_table7_is_banded_by_the_gpu_profiles(rows: list[ledger.Row]) -> None:
    """Issue 53 item 4: Table 7's GPU latencies are measurements, so the default GPU profile is the one fitted to
    measured kernels (calibrated); each latency and §8.4's two DECA-over-GPU ratios carry the band over the other
    profiles (attacc, peak), which move each by more than 5%, the point inside its band."""
    assert figures.GPU_PROFILE == "calibrated" and set(figures.GPU_ALTERNATIVES) == {"attacc", "peak"}
    quantities = [paper.table7(d, 2).quantity for d in paper.TABLE7_GPUS]
    for r in (ledger.find(rows, q) for q in (*quantities, paper.H100_RATIO.quantity, paper.RTX_RATIO.quantity)):
        assert r.band_low <= r.model_value <= r.band_high and r.in_band in ("yes", "no")
        assert r.band_high / r.band_low > 1.05, r.quantity
        assert r.within == "yes" or figures.GPU_DEFAULT in r.cause
    t = figures.table7()
    assert t.gpu_ms == figures.table7_gpu_ms("calibrated", t.bytes_per_weight)


def test_table7_gpu_gap_is_llama_cpp_time_per_layer() -> None:
    """Issue 54 item 1: Table 7's GPU latencies are [11]'s llama.cpp 70B q4_0 rows (within 3% of each). [11]'s own
    A100 7B rows split a token into a time per layer plus the weights at a bandwidth that predicts its 70B row
    within 5%; the calibrated GPU's GEMMs stream the weights within 10% of that rate, while its time per layer
    beyond them is under half of [11]'s: the gap is llama.cpp's per-layer time. The kinds add up to the latency."""
    t = figures.table7()
    for d, (_, _, ms) in paper.TABLE7_GPUS.items():
        assert t.ref11[d].measured_s * 1e3 == pytest.approx(ms, rel=0.03)
        assert sum(t.kinds_ms[d].values()) == pytest.approx(t.gpu_ms[d])
    a100, layers = t.ref11["a100-80g-pcie"], paper.REF11_MODELS[2][2]
    kinds = t.kinds_ms["a100-80g-pcie"]
    assert a100.predicted_s == pytest.approx(a100.measured_s, rel=0.05)
    assert t.weight_bytes / (kinds["gemm"] / 1e3) == pytest.approx(a100.stream_bw, rel=0.1)
    assert (t.gpu_ms["a100-80g-pcie"] - kinds["gemm"]) / 1e3 / layers < 0.5 * a100.layer_s


def test_every_statement_answers_to_a_claim(rows: list[ledger.Row]) -> None:
    """Each claim regex of the catalogue matches at least one row ``claims(ctx)`` returns, and every row answers a
    statement."""
    quantities = [r.quantity for r in rows]
    for s in STATEMENTS:
        for pattern in s.claims:
            assert any(re.fullmatch(pattern, q) for q in quantities), f"{s.where}: {pattern!r} matches no row"
    assert all(any(s.matches(q) for s in STATEMENTS) for q in quantities)
