"""L3's statement catalogue (sysmodel/designs/l3/claims.py) and the ledger claims it added: where each statement
stands in
the paper, the kinds that cannot flatter, and the values the report computes for the new comparisons."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from sysmodel import ledger
from sysmodel.designs.l3 import claims, figures, paper
from sysmodel.designs.l3.grids import BASELINES
from sysmodel.report import Context, report

PAPER_TEXT_SECTIONS = re.compile(r"(Abstract|§\d(\.\d)?)(, (Fig\. \d+(\([ab]\))?|Table \d))?")


def _order(where: str) -> tuple[int, int]:
    m = re.match(r"§(\d)(?:\.(\d))?", where)
    return (0, 0) if m is None else (int(m[1]), int(m[2] or 0))


def test_the_catalogue_is_in_the_papers_order_with_exact_locations() -> None:
    where = [s.where for s in claims.STATEMENTS]
    assert all(PAPER_TEXT_SECTIONS.fullmatch(w) for w in where), [
        w for w in where if not PAPER_TEXT_SECTIONS.fullmatch(w)
    ]
    assert [_order(w) for w in where] == sorted(_order(w) for w in where)
    counts = ledger.coverage("l3")
    assert counts["statements"] == counts["claimed"] + counts["not_computed"] > 70


def test_the_papers_statements_are_read_where_the_paper_makes_them() -> None:
    """Pins of misreadings: the 14.3x batch ratio is stated in the introduction only (Fig. 8 plots throughput);
    Table 5 is §6.4's (its text: "Table 5 presents the results")."""
    assert paper.BATCH_RATIO.where == "§1"
    assert {c.where for c in (*paper.POWER.values(), *paper.AREA_RATIO.values())} == {"§6.4, Table 5"}
    assert paper.SU_STALL.where == "§4.3" and paper.REQUESTS_PER_A100.where == "§1"


def test_the_new_claims_cannot_flatter() -> None:
    # arithmetic of stated inputs is an identity; the comparisons are directions, one per baseline of Fig. 8
    assert paper.GPU_KV_GB.kind == paper.REQUESTS_PER_A100.kind == "identity"
    assert set(paper.LOWEST) == set(BASELINES)
    assert all(c.ratio and c.above and math.isnan(c) for c in (*paper.LOWEST.values(), *paper.BATCH_LOWEST.values()))
    assert not paper.HBM_PIM_DOLPHIN.above and not paper.TBT_FEWEST.above and not paper.TBT_SCALING.above
    assert paper.SU_STALL.note, "a prediction landing on the paper's 0 must say why it is one"


def _cell(model: str, trace: str, l3: float, gpu: float | None, hbm: float, batch: float) -> dict:
    row = {"model": model, "trace": trace, "L3": l3, "L3 batch": batch, "GPU-only": gpu, "HBM-PIM": hbm}
    row |= {"R-PIM": l3 / 3, "CPU offload": l3 / 20, "GPU-only batch": gpu and 2.0, "HBM-PIM batch": 4.0}
    return row


def test_fig8_comparisons_are_minima_over_the_cells_and_the_oom_count() -> None:
    cells = [
        _cell("opt-66b", "openr1", 100.0, None, 50.0, 10.0),
        _cell("opt-66b", "dolphin", 100.0, 80.0, 90.0, 6.0),
        _cell("gpt-89b", "dolphin", 100.0, 25.0, 40.0, 40.0),
    ]
    got = {r.quantity: r for r in claims.fig8_rows(cells, [cells])}
    assert got["smallest speedup over GPU-only"].model_value == pytest.approx(100 / 80)
    assert got["smallest speedup over HBM-PIM"].model_value == pytest.approx(100 / 90)
    assert got["smallest batch size over GPU-only"].model_value == pytest.approx(3.0)
    assert got["smallest batch size over HBM-PIM"].model_value == pytest.approx(1.5)
    # OPT-66B on Dolphin: HBM-PIM 90 over GPU-only 80, above 1 where the paper says below: the wrong way
    dolphin = got["HBM-PIM over GPU-only, OPT-66B on Dolphin"]
    assert dolphin.model_value == pytest.approx(90 / 80) and dolphin.direction_agrees == "no" and dolphin.cause
    assert got["GPU-only OOM traces, OPT-66B"].model_value == 1
    assert got[paper.GPU_KV_GB.quantity].kind == "identity"
    assert 0.9 < got[paper.REQUESTS_PER_A100.quantity].ratio < 1.1


def test_fig11_trends_compare_the_fewest_ranksets_with_the_most() -> None:
    ratios = {(rs, b): (1.2 if rs == 2 else 0.5) * b / 32 for rs in figures.TBT_RANKSETS for b in figures.TBT_BATCHES}
    got = {r.quantity: r for r in claims.tbt_rows(ratios)}
    fewest = got[paper.TBT_FEWEST.quantity]
    assert fewest.model_value == pytest.approx(1.2 * 64 / 32) and fewest.direction_agrees == "no"
    scaling = got[paper.TBT_SCALING.quantity]
    assert scaling.model_value == pytest.approx(0.5 / 1.2) and scaling.direction_agrees == "yes"


class _Grids:
    """A report context that records the grids asked of it (name and arguments) instead of running them: one cell
    per grid, as the grid's rows are."""

    requests = 7

    def grid(self, name: str, fn, *args):
        return [{"name": name, "fn": fn.__name__, "args": args}]


def test_fig8_is_computed_under_each_unstated_settings_alternative() -> None:
    """Issue 53 item 4: besides the reserve KV policy, Fig. 8's cells are rerun with every GPU at each
    alternative efficiency profile (the default is AttAcc's, on which the paper's simulator builds), and with L3
    (alone: the baselines' cells are the default's) at each other prefill in GPU-bound stages."""
    from sysmodel.cost.stage import PROFILES
    from sysmodel.designs.l3.model import GPU_BOUND

    figures.fig8_cells.cache_clear()
    cells, alternatives = figures.fig8_cells(_Grids())
    assert cells == [{"name": "l3-fig8", "fn": "fig8", "args": (7,)}]
    assert alternatives["reserve"][0]["args"] == (7, "reserve")
    assert set(figures.GPU_PROFILES) <= set(PROFILES) and "attacc" not in figures.GPU_PROFILES
    for p in figures.GPU_PROFILES:
        assert alternatives[p] == [{"name": f"l3-fig8-{p}", "fn": "fig8", "args": (7, "vllm", p)}]
    assert GPU_BOUND[1:] == ("chunk",)
    assert alternatives["chunk"] == [
        {"name": "l3-fig8-chunk", "fn": "fig8", "args": (7, "vllm", "attacc", "chunk", ("L3",))}
    ]
    figures.study_ratios.cache_clear()
    studies, study_alternatives = figures.study_ratios(_Grids())
    assert studies == [{"name": "l3-studies", "fn": "studies", "args": (7, cells)}]
    for p in figures.STUDY_PROFILES:  # each profile's studies on its own Fig. 8 cells
        assert study_alternatives[p] == [{"name": f"l3-studies-{p}", "fn": "studies", "args": (7, alternatives[p], p)}]
    figures.fig8_cells.cache_clear()
    figures.study_ratios.cache_clear()


def test_an_l3_alternative_keeps_the_baselines_cells_and_bands_the_floors() -> None:
    """An alternative of L3's own setting reruns L3 only: its cells are the default's with L3's values replaced,
    and L3's smallest speedups, directions without a paper number, are banded over it: LongBench's chunked
    prompts (L3 below HBM-PIM) are the band's low end, the paper's direction inside it."""
    cells = [
        _cell("opt-66b", "dolphin", 100.0, 25.0, 50.0, 40.0),
        _cell("gpt3-175b", "longbench", 47.5, 34.7, 39.6, 12.5),
    ]
    chunked = [cells[0], cells[1] | {"L3": 36.7, "L3 batch": 2.4}]
    got = {r.quantity: r for r in claims.fig8_rows(cells, [chunked])}
    hbm = got["smallest speedup over HBM-PIM"]
    assert (hbm.band_low, hbm.model_value) == pytest.approx((36.7 / 39.6, 47.5 / 39.6))
    assert hbm.direction_agrees == "yes" and hbm.in_band == "yes"
    assert got["smallest batch size over HBM-PIM"].band_low == pytest.approx(2.4 / 4.0)
    assert "0.93 of HBM-PIM" in claims.GAPS[hbm.quantity]


def test_a_study_is_banded_only_where_a_gpu_profile_moves_it_by_more_than_5_percent() -> None:
    point = {"scalability": dict.fromkeys(paper.SCALABILITY, 2.0), "ablation": dict.fromkeys(paper.ABLATION, 1.2)}
    alt = {"scalability": {**point["scalability"], "Bw-only (16 ranksets)": 1.8}, "ablation": point["ablation"]}
    got = {r.quantity: r for r in claims.study_rows(point, [alt])}
    bw = got[paper.SCALABILITY["Bw-only (16 ranksets)"].quantity]
    assert (bw.band_low, bw.band_high) == pytest.approx((1.8, 2.0)) and bw.in_band == "no"  # the paper's 1.1
    assert [q for q, r in got.items() if r.in_band] == [bw.quantity]


def test_the_headline_band_spans_every_alternative() -> None:
    """The headline rows' band runs from the lowest to the highest of the point and every alternative's value
    (reserve, calibrated, peak), and each cause says which GPU profile is the default."""
    cells = [_cell("opt-66b", "dolphin", 100.0, 25.0, 50.0, 10.0)]  # 4x GPU-only, 2x HBM-PIM at the default
    slower_gpu = [_cell("opt-66b", "dolphin", 100.0, 10.0, 40.0, 10.0)]  # the calibrated GPU: 10x, 2.5x
    faster_gpu = [_cell("opt-66b", "dolphin", 100.0, 50.0, 80.0, 10.0)]  # peak: 2x, 1.25x
    got = {r.quantity: r for r in claims.fig8_rows(cells, [cells, slower_gpu, faster_gpu])}
    gpu, hbm = got["speedup over GPU-only"], got["speedup over HBM-PIM"]
    assert (gpu.band_low, gpu.model_value, gpu.band_high) == pytest.approx((2.0, 4.0, 10.0))
    assert (hbm.band_low, hbm.model_value, hbm.band_high) == pytest.approx((1.25, 2.0, 2.5))
    assert gpu.in_band == "yes" and hbm.in_band == "no"  # the paper's 5.0 and 6.1
    assert all(figures.GPU_DEFAULT in claims.GAPS[c.quantity] for c in (*paper.HEADLINE.values(), paper.BATCH_RATIO))


def test_fig11_range_is_banded_by_the_gpu_profiles() -> None:
    """The TBT ratios at 16 ranksets move by more than 5% between the GPU profiles (so they carry the band);
    the point lies inside its band; the trends, directions without a paper number, are banded too where a profile
    moves them, the paper inside where some profile's ratio points its way."""
    point, alternatives = figures.tbt_ratios(), [figures.tbt_ratios(p) for p in figures.GPU_PROFILES]
    got = {r.quantity: r for r in claims.tbt_rows(point, alternatives)}
    for c in paper.TBT_16_RANKSETS:
        r = got[c.quantity]
        assert r.band_low <= r.model_value <= r.band_high and r.in_band in ("yes", "no")
        assert r.band_high / r.band_low > 1.05, "a band of a setting that moves the claim by 5% or less"
    for c in (paper.TBT_FEWEST, paper.TBT_SCALING):
        r = got[c.quantity]
        assert r.in_band == ("yes" if (r.band_high > 1 if c.above else r.band_low < 1) else "no")
        assert r.band_low <= r.model_value <= r.band_high
    assert figures.GPU_DEFAULT in claims.GAPS[paper.TBT_16_RANKSETS[0].quantity]


def test_the_r_pim_headline_cause_quotes_the_attention_ratio_and_its_ceiling() -> None:
    """The R-PIM gap's named cause: R-PIM's attention time over L3's is 7.71 (1/R_PIM_FACTOR at the rank-level
    reads' efficiency against the RTL's cycles at the all-bank stream's), and a decode stage of R-PIM's single
    batch (G + 7.71 A) over L3's max(G, A) peaks at G = A, at 8.71, below the paper's 9.2 at any balance."""
    from sysmodel.designs.l3.model import L3System

    tp, dp = paper.MODELS["gpt3-175b"]
    l3, r_pim = (L3System("gpt3-175b", tp, dp, attention=a) for a in ("l3", "r-pim"))
    ratio = r_pim.attention_seconds(32, 32 * 12000) / l3.attention_seconds(32, 32 * 12000)
    assert f"{ratio:.2f}x L3's time" in claims.GAPS["speedup over R-PIM"]
    assert ratio < 1 / paper.R_PIM_FACTOR < paper.HEADLINE["R-PIM"]
    balance = np.linspace(0.01, 100, 20001)  # G / A
    ceiling = float(np.max((balance + ratio) / np.maximum(balance, 1)))
    assert ceiling == pytest.approx(1 + ratio, rel=1e-3) and ceiling < paper.HEADLINE["R-PIM"]
    assert f"at most {1 + ratio:.2f} (at G = A)" in claims.GAPS["speedup over R-PIM"]


def test_r_pim_as_hermes_units_is_bandwidth_bound() -> None:
    """R-PIM "represents Hermes" (§6.1): on L3's DIMMs, Hermes' measured GEMV unit keeps up with the K/V reads and
    its activation unit's softmax adds under 1% even on a short head, so only the bandwidth bounds the headline;
    the cause quotes both shares."""
    units = figures.r_pim_units()
    assert 0 < units["gemv"] < 1 and 0 < units["softmax"] < 0.01
    assert figures.r_pim_units(8192)["softmax"] < units["softmax"]  # fixed cycles weigh less on longer heads
    cause = claims.GAPS["speedup over R-PIM"]
    assert (
        f"takes {units['gemv']:.0%} of its K/V read" in cause and f"serial in Hermes, {units['softmax']:.1%}" in cause
    )


# --- claims(ctx): the paper's claims computed once, from the committed report cache (issue 53) ---


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[ledger.Row]:
    return claims.claims(Context(out=tmp_path_factory.mktemp("l3"), commit=False))


def test_the_section_renders_from_its_claims(tmp_path) -> None:
    """The section renders from its claims' rows: the report's ledger holds them."""
    report(["l3"], Context(out=tmp_path, commit=False), echo=False)
    written = ledger.load(tmp_path / "ledger.csv")
    assert {r["paper"] for r in written} == {"l3"} and len(written) > 20


FIELDS = ("quantity", "workload", "kind", "paper_value", "model_value", "cause", "in_band")


def _key(r: ledger.Row) -> tuple[str, ...]:
    """A row as the ledger's CSV writes it (values to 6 significant digits)."""
    return tuple(f"{v:.6g}" if isinstance(v, float) else v for v in (getattr(r, f) for f in FIELDS))


def test_claims_are_the_committed_ledgers_l3_rows(rows) -> None:
    """Same quantity, workload, kind, paper and model values (to the CSV's 6 significant digits), cause and band
    verdict as the committed ledger's l3 rows, in its order, but for the one l3 row the memory section records
    (paper.PIM_BANDWIDTH; sysmodel/report/memory.py)."""
    committed = [r for r in ledger.load() if r["paper"] == "l3" and r["quantity"] != paper.PIM_BANDWIDTH.quantity]
    assert len({r.quantity for r in rows}) == len(rows), "a quantity twice: ledger.find could not tell them apart"
    assert [_key(r) for r in rows] == [tuple(r[f] for f in FIELDS) for r in committed]


def test_every_catalogued_claim_matches_a_row(rows) -> None:
    """Each STATEMENTS regex names a row of claims(ctx), but the all-bank bandwidth the memory section records."""
    quantities = [r.quantity for r in rows] + [paper.PIM_BANDWIDTH.quantity]
    unmatched = [p for s in claims.STATEMENTS for p in s.claims if not any(re.fullmatch(p, q) for q in quantities)]
    assert unmatched == []
