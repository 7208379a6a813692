"""Duplex's statement catalogue (sysmodel/designs/duplex/claims.py) and the claims issue 53 added to its ledger: each
paper
value read as the paper states it (its averaging set, its configuration, its location), and the readings corrected."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest

from golden.duplex_spec import SOFTMAX_LANES
from sysmodel import cache, ledger
from sysmodel.designs.duplex import claims, figures, paper
from sysmodel.designs.duplex.claims import STATEMENTS
from sysmodel.designs.duplex.model import DuplexSystem
from sysmodel.engines import memory
from sysmodel.report import Context, report

_ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10}
_SECTION = re.compile(r"(Abstract|§(I|II|III|IV|V|VI|VII|VIII|IX|X)(?:-([A-E]))?)(,|$)")


def _rank(where: str) -> tuple[int, str]:
    m = _SECTION.match(where)
    assert m, f"{where!r}: not the paper's numbering (Abstract or §<roman>[-<letter>])"
    return (0, "") if m[1] == "Abstract" else (_ROMAN[m[2]], m[3] or "")


def _paper_claims() -> list[ledger.Claim]:
    out = []
    for v in vars(paper).values():
        vals = v.values() if isinstance(v, dict) else [v]
        out += [c for c in vals if isinstance(c, ledger.Claim)]
    return out


def test_the_catalogue_is_in_the_papers_order_and_numbering() -> None:
    ranks = [_rank(s.where) for s in STATEMENTS]
    assert ranks == sorted(ranks), "statements out of the paper's order"
    counts = ledger.coverage("duplex")
    assert counts["statements"] == counts["claimed"] + counts["not_computed"] == len(STATEMENTS)
    assert counts["claimed"] and counts["not_computed"]


def test_every_claim_of_paper_py_is_answered_by_a_statement() -> None:
    """Each paper value the report records is one a statement of the catalogue makes (none orphaned)."""
    for c in _paper_claims():
        assert any(s.matches(c.quantity) for s in STATEMENTS), c.quantity
    for s in STATEMENTS:
        for pattern in s.claims:
            assert any(re.fullmatch(pattern, c.quantity) for c in _paper_claims()), pattern


def test_kinds_never_flatter() -> None:
    """The peaks are inputs (the paper states them as its setup), the bank-bundle bandwidth an identity; every
    direction without a number is a ratio with its stated side."""
    assert paper.PEAK_TFLOPS.kind == paper.PEAK_TBS.kind == "input"
    assert paper.PC_BANDWIDTH.kind == "identity"
    for c in _paper_claims():
        if math.isnan(c):
            assert c.ratio and c.kind == "prediction", c.quantity


def test_locations_are_the_papers() -> None:
    """The 21.3 TFLOPS (so 2.66 TB/s at 8 Op/B) is §VI's; the mm2 breakdown is §VII-E's (§IV-C gives the
    microarchitecture only); the 2.57x E2E is §I's alone (the abstract states 2.67x and 42.0% only)."""
    assert paper.PEAK_TFLOPS.where == "§VI" and paper.PEAK_TBS.where.startswith("§VI")
    assert paper.GEMM_OVER_SOFTMAX.where == "§VII-E"
    assert paper.E2E_MAX_OVER_GPU.where.startswith("§I ")
    abstract = [s for s in STATEMENTS if s.where == "Abstract"]
    assert not any(s.matches(paper.E2E_MAX_OVER_GPU.quantity) for s in abstract)
    assert any(s.matches(paper.ET_MAX_OVER_GPU.quantity) for s in abstract)


def test_the_2_57x_reading_is_consistent_with_fig12s_mean() -> None:
    """Read as Fig. 12's largest E2E ratio: its mean reduction, 60.20%, is a 2.51x ratio, so a maximum of 2.57x
    over the same cells is consistent (a mean reduction cannot exceed the largest)."""
    assert 1 / (1 - float(paper.E2E_VS_GPU)) <= float(paper.E2E_MAX_OVER_GPU)


def test_bank_pim_over_gpu_divides_the_same_duplex_out() -> None:
    """Fig. 14's Duplex (plain, Logic-PIM, default softmax) is Fig. 11's "Duplex" column: so Bank-PIM over GPU is
    Fig. 11's Duplex/GPU at the cell over Fig. 14's Duplex/Bank-PIM there, and the cell is on both grids."""
    defaults = inspect.signature(DuplexSystem).parameters
    assert defaults["pim"].default == "logic" and defaults["softmax_lanes"].default == SOFTMAX_LANES
    model, lengths, batch = paper.BANK_PIM_CELL
    assert model in paper.SYSTEMS and lengths in paper.LENGTHS
    assert batch in paper.BATCHES and batch in paper.BANK_PIM_BATCHES
    rows11 = [{"model": model, "lengths": list(lengths), "batch": batch, "Duplex": 300.0, "GPU": 100.0}]
    rows14 = [{"lengths": list(lengths), "batch": batch, "ratio": 1.5}]
    assert figures.bank_pim_over_gpu(rows14, rows11) == pytest.approx(2.0)


def _fig11_row(model: str, gpu: float, two: float, duplex: float, et: float, lengths=(256, 256)) -> dict:
    return {
        "model": model,
        "lengths": list(lengths),
        "GPU": gpu,
        "2xGPU": two,
        "Duplex": duplex,
        "Duplex+PE": duplex,
        "Duplex+PE+ET": et,
    }


def test_fig11_statements_are_over_the_figures_three_models() -> None:
    """OPT and Llama3 enter no Fig. 11 number: a cell of theirs that would set every extreme changes nothing."""
    rows = [
        _fig11_row("mixtral-8x7b", 100, 180, 150, 200, (4096, 4096)),
        _fig11_row("glam-143b", 100, 180, 190, 250),
        _fig11_row("grok-1", 100, 190, 120, 150),
    ]
    base = {c.quantity: v for c, v in figures.fig11_statements(rows)}
    more = figures.fig11_statements([*rows, _fig11_row("opt-66b", 100, 50, 900, 10)])
    assert {c.quantity: v for c, v in more} == base
    d = paper.FIG11_DIRECTIONS
    assert base[paper.ET_OVER_DUPLEX_MAX.quantity] == pytest.approx(200 / 150)
    assert base[d["lowest"].quantity] == pytest.approx(1.5)
    assert base[d["median 2x"].quantity] == pytest.approx(200 / 180)
    assert base[d["max 2x"].quantity] == pytest.approx(190 / 180)
    assert base[d["grok"].quantity] == pytest.approx(1.5 / 2.25)
    # "best at Mixtral (4096, 4096)": that cell's Duplex over GPU against the best of the others (GLaM's 1.9)
    assert base[d["mixtral best"].quantity] == pytest.approx(1.5 / 1.9)


def test_fig11_statements_are_banded_by_the_kv_and_refresh_policies() -> None:
    """The paper leaves the KV policy and Logic-PIM's refresh scheme unstated: the 1.36x is given at the
    defaults (paged KV, on-time refresh) with the reserve policy's and per-bank refresh's values spanning its
    band (a direction without a number lies inside where some value of its band points its way)."""

    def cells(duplex: float, et: float) -> list[dict]:
        return [_fig11_row(m, 100, 180, duplex, et, ls) for m in paper.FIG11_MODELS for ls in paper.LENGTHS]

    point, reserve, refresh = (figures.fig11_statements(cells(*v)) for v in ((150, 200), (150, 300), (160, 176)))
    got = {r.quantity: r for r in claims.banded(point, reserve, refresh)}
    gain = got[paper.ET_OVER_DUPLEX_MAX.quantity]
    assert (gain.model_value, gain.band_low, gain.band_high) == pytest.approx((200 / 150, 1.1, 2.0))
    lowest = got[paper.FIG11_DIRECTIONS["lowest"].quantity]
    assert lowest.band_low <= lowest.model_value <= lowest.band_high and lowest.in_band == "yes"
    assert figures.REFRESH_BAND in memory.REFRESH and figures.REFRESH_BAND != memory.DEFAULT_REFRESH


def test_fig13_directions_are_at_the_stated_loads() -> None:
    """ "At low QPS" is the lowest QPS of the figure, "as QPS increases" its highest; "always" is every QPS."""
    rows = []
    for i, qps in enumerate(paper.QPS_VALUES):
        rows += [
            {"system": "GPU", "qps": qps, "tbt50": 3.0, "tbt90": 9.0, "t2ft50": 1.0},
            {"system": "2xGPU", "qps": qps, "tbt50": 2.0, "tbt90": 4.0, "t2ft50": 1.0},
            {"system": "Duplex+PE+ET", "qps": qps, "tbt50": 1.0 + i * 0.05, "tbt90": 2.0 + i, "t2ft50": 1.0},
        ]
    got = {r.quantity: r for r in claims.evaluated(figures.fig13_directions(rows))}
    d, last = paper.FIG13_DIRECTIONS, len(paper.QPS_VALUES) - 1
    assert got[d["p90 low"].quantity].model_value == pytest.approx(2.0)
    assert got[d["p90 high"].quantity].model_value == pytest.approx(4.0 / (2.0 + last))
    assert got[d["p50 2x"].quantity].model_value == pytest.approx(2.0 / (1.0 + last * 0.05))
    assert all(r.direction_agrees == "yes" for r in got.values())


def test_energy_trends_read_the_grid_in_its_order() -> None:
    """energy_reductions' cells run lengths outer, batch inner: the long lengths are the last cells, batch 128
    every second one."""
    grid = {
        "mixtral-8x7b": [0.2, 0.1, 0.4, 0.3],
        "glam-143b": [0.3, 0.3, 0.5, 0.5],
        "grok-1": [0.2, 0.1, 0.4, 0.2],
    }
    got = dict((c.quantity, v) for c, v in figures.energy_trends(grid))
    assert got[paper.ENERGY_LONG_OVER_SHORT.quantity] == pytest.approx(np.mean([0.4, 0.3, 0.5, 0.5, 0.4, 0.2]) / 0.2)
    assert got[paper.ENERGY_BATCH_VS_GLAM["mixtral-8x7b"].quantity] == pytest.approx(0.2 / 0.3)
    assert got[paper.ENERGY_BATCH_VS_GLAM["grok-1"].quantity] == pytest.approx(0.15 / 0.3)
    assert len(figures.energy_reductions("glam-143b")) == len(paper.LENGTHS) * len(paper.BATCHES)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory) -> Context:
    """One report context for the module: the committed grids are read once (``figures.grids`` caches by it);
    a stale one fails here at once rather than rerun for minutes (into the committed cache)."""
    stale = [name for name in cache.stale() if name.startswith("duplex")]
    assert not stale, f"stale report cache {stale}: run `make report-full` and commit sysmodel/data/report_cache"
    return Context(out=tmp_path_factory.mktemp("duplex"), commit=False)


def test_the_section_renders_from_its_claims(ctx: Context) -> None:
    """Issue 53: the section's claims are computed once, by ``claims(ctx)``; the report's ledger
    holds exactly those rows."""
    report(["duplex"], ctx, echo=False)
    written = ledger.load(ctx.out / "ledger.csv")
    assert [r["quantity"] for r in written] == [r.quantity for r in claims.claims(ctx)]
    # every claim of paper.py but the bank-bundle bandwidth, the memory section's
    assert {r["quantity"] for r in written} == {c.quantity for c in _paper_claims()} - {paper.PC_BANDWIDTH.quantity}


@pytest.fixture(scope="module")
def rows(ctx: Context) -> list[ledger.Row]:
    return claims.claims(ctx)


def test_claims_are_the_committed_ledgers_rows(rows: list[ledger.Row]) -> None:
    """``claims(ctx)`` gives the committed ledger's Duplex rows, in its order and to its 6 significant digits,
    but the bank-bundle bandwidth, which the memory section records (sysmodel/report/memory.py)."""
    committed = [
        (r["quantity"], r["paper_value"], r["model_value"], r["kind"])
        for r in ledger.load()
        if r["paper"] == "duplex" and r["quantity"] != paper.PC_BANDWIDTH.quantity
    ]
    assert [(r.quantity, f"{r.paper_value:.6g}", f"{r.model_value:.6g}", r.kind) for r in rows] == committed


def test_every_statement_claim_has_a_row(rows: list[ledger.Row]) -> None:
    """Each claim pattern of the catalogue matches a row ``claims(ctx)`` returns (the bank-bundle bandwidth's
    is the memory section's row)."""
    quantities = [r.quantity for r in rows] + [paper.PC_BANDWIDTH.quantity]
    for s in STATEMENTS:
        for pattern in s.claims:
            assert any(re.fullmatch(pattern, q) for q in quantities), (s.where, pattern)
