"""Hermes' statement catalogue (sysmodel/designs/hermes/claims.py) and the claims issue 53 added to its ledger: each
paper
value read as the paper states it (its averaging set, its configuration, its location), and the readings
corrected; and ``claims(ctx)``, the section's ledger rows computed once before it renders (issue 53). The claims
(``sysmodel.designs.hermes.figures``, ``sysmodel.designs.hermes.claims``) are computed on the committed cache's grid
values (no
simulation)."""

from __future__ import annotations

import json
import math
import re

import pytest

from sysmodel import cache, ledger
from sysmodel.designs.hermes import claims, figures, paper
from sysmodel.designs.hermes import grids as gr
from sysmodel.designs.hermes.claims import STATEMENTS
from sysmodel.report import Context, report

_ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7}
_SECTION = re.compile(r"(Abstract|Table II|§([IVX]+)(?:-([A-F])(\d)?)?)")


def _rank(where: str) -> tuple[int, str, int]:
    m = _SECTION.match(where)
    assert m, f"{where!r}: not the paper's numbering (Abstract, Table II or §Roman[-Letter[digit]])"
    if m[1] == "Abstract":
        return (0, "", 0)
    if m[1] == "Table II":  # printed within §IV-D, after Algorithm 1
        return (4, "D", 9)
    return (_ROMAN[m[2]], m[3] or "", int(m[4] or 0))


def _grid(name: str):
    return json.loads((cache.COMMITTED / f"{name}.json").read_text())["value"]


def _rows(table: figures.Table, named: dict[str, str] = claims.GAPS) -> dict[str, ledger.Row]:
    """A table's claims as ledger rows (``claims.rows_of``), keyed by quantity."""
    return {r.quantity: r for r in claims.rows_of(table, named)}


def test_the_catalogue_is_in_the_papers_order_and_numbering() -> None:
    ranks = [_rank(s.where) for s in STATEMENTS]
    assert ranks == sorted(ranks), "statements out of the paper's order"
    counts = ledger.coverage("hermes")
    assert counts["statements"] == counts["claimed"] + counts["not_computed"] == len(STATEMENTS)
    for s in STATEMENTS:
        for pattern in s.claims:
            re.compile(pattern)


def test_the_headline_tokens_are_the_abstracts() -> None:
    """13.75 tokens/s for LLaMA2-70B is stated in the abstract only (the figures are lost; no sentence puts it in
    Fig. 10), so that is where the claim stands."""
    assert paper.TOKENS_S["llama2-70b"].where == "Abstract"
    abstract = [s for s in STATEMENTS if s.where == "Abstract" and "13.75" in s.text]
    assert [s.matches(paper.TOKENS_S["llama2-70b"].quantity) for s in abstract] == [True]


def test_the_abstracts_average_is_over_every_batch() -> None:
    """The abstract's and §I's 75.24x is §V-B2's average "for various batch sizes" over Deja Vu (OPT models,
    batches 1-16), not a batch-1 number."""
    assert "batches 1-16" in paper.OVER_DEJAVU.workload and "OPT" in paper.OVER_DEJAVU.workload
    for where in ("Abstract", "§I"):
        s = next(s for s in STATEMENTS if s.where == where and "75.24" in s.text)
        assert s.matches(paper.OVER_DEJAVU.quantity) and not s.matches(paper.OVER_FLEXGEN_B1.quantity)


def test_fig12b_shares_are_two_claims_of_an_unnamed_model() -> None:
    """§V-D's 66.40% and 33.01% (Fig. 12b) do not add to 1, so each is its own claim; the paper does not name the
    model (LLaMA2-70B is the sentence before's), which the workload marks [S]."""
    shares = (paper.DECODE_SHARE, paper.PROMPT_SHARE)
    assert {c.where for c in shares} == {"§V-D, Fig. 12b"}
    assert all("[S" in c.workload for c in shares)
    assert float(paper.DECODE_SHARE) + float(paper.PROMPT_SHARE) == pytest.approx(0.9941)


def test_up_to_is_the_batch16_curves_maximum() -> None:
    """§V-E3's "up to 3.86x" at batch 16 is the curve's maximum over 32 multipliers' value, wherever it falls;
    "continuously improves" is the lowest step of the same curve; "especially with larger batch sizes" sets the
    32 -> 512 speedup at batch 16 against batch 1's."""
    rows = _rows(figures.dse([[1.0, 2.0, 2.0, 2.0, 2.0], [1.0, 3.0, 2.0, 2.0, 2.5]]))
    assert rows[paper.DSE_SPEEDUP.quantity].model_value == 3.0
    rise = rows[paper.DSE_B16_RISES.quantity]
    assert rise.model_value == pytest.approx(2 / 3) and rise.direction_agrees == "no" and rise.cause
    assert rows[paper.DSE_LARGER_BATCH.quantity].model_value == pytest.approx(2.5 / 2)  # 32 -> 512: b16 over b1


def test_the_cell_directions_take_the_sets_the_paper_names() -> None:
    """§V-B1's and §V-D's directions over the cached grid: "inferior even at large batches" is every OPT cell
    at batches 1-16; "specifically for large models" sets Falcon-40B and LLaMA2-70B against the 13B models; a
    direction the model gets wrong carries its named cause."""
    grid = _grid("hermes-runs")
    rows = _rows(figures.cells(grid), claims.causes(grid))
    assert len(rows) == 7 and {r.paper for r in rows.values()} == {"hermes"}
    dejavu = [r["Hermes"] / r["Deja Vu"] for r in grid if "Deja Vu" in r]
    assert len(dejavu) == len(paper.OPT_MODELS) * len(paper.BATCHES)
    assert rows[paper.DEJAVU_BEATEN.quantity].model_value == pytest.approx(min(dejavu))
    off2 = [r["Hermes"] / r["Hermes-base"] for r in grid if r["batch"] != 2]
    assert rows[paper.BASE_BEATEN.quantity].model_value == pytest.approx(min(off2))
    for r in rows.values():
        assert r.kind == "prediction"
        assert r.direction_agrees in ("yes", "no") or not math.isnan(r.paper_value)
        if r.direction_agrees == "no" or r.within == "no":
            assert r.cause and r.cause != "unexplained", r.quantity


def test_falcon_needs_four_dimms_of_the_sweeps_counts() -> None:
    """§V-E1: Falcon-40B needs at least four NDP-DIMMs. Its weights exceed two 32 GB DIMMs; Fig. 14's counts are
    read as powers of two (§V-E1 names 8 and 16), with every count three would hold them, as the claim's note
    says (the answer is capacity, a prediction from the model's config, not a paper input)."""
    assert figures.min_dimms("falcon-40b") == 4 == float(paper.MIN_DIMMS)
    assert figures.min_dimms("falcon-40b", tuple(range(1, 17))) == 3
    assert paper.MIN_DIMMS.kind == "prediction" and "3" in paper.MIN_DIMMS.note


def test_the_gpus_parameter_shares_are_the_inputs_of_its_budget() -> None:
    """§V-B1's 80% of OPT-13B and 15% of OPT-66B in GPU memory are what the 20 GB weight budget is derived from:
    inputs, shown as a check (never counted), and the budget honours both within 5%."""
    rows = _rows(figures.capacity())
    for c in paper.GPU_PARAM_SHARE.values():
        r = rows[c.quantity]
        assert r.kind == "input" and r.within == ""
        assert r.ratio == pytest.approx(1, abs=0.05)


def test_the_gpu_sensitivity_batch_is_marked_unstated() -> None:
    """Fig. 15 states no batch; the model's batch 1 is a choice [S]."""
    assert all("[S" in c.workload for c in paper.GPU_SENSITIVITY.values())


def test_the_gpu_sensitivity_averages_the_per_model_ratios() -> None:
    """§V-E2's "average throughput improvement" is a mean of per-model ratios, as the section's other averages
    (``mean_over``): here 2x on one model and 1x on the other give 1.5, where a ratio of the mean tokens/s
    (110 / 60) would give 1.83."""
    base = {"a": 100.0, "b": 10.0}
    tokens = {"rtx4090-hermes": base, "t4-hermes": {"a": 50.0, "b": 10.0}, "rtx3090-hermes": base}
    got = {q: v for q, (_, v) in figures.gpus(tokens).items()}
    assert got == {"RTX 4090 over Tesla T4": 1.5, "RTX 4090 over RTX 3090": 1.0}


def test_the_generators_inputs_are_inputs_and_its_longer_lags_predictions() -> None:
    """§III-B's statistics the generator is solved from (sparsity, the top 20%'s work, adjacent similarity, the
    52% of hot neurons that move) are inputs; similarity at distance 10 and 25 and "almost no longer decreases
    beyond 25" (distance 50 over 25: the paper states no value past 25, so flat reads as a ratio of 1) follow from
    the solved process: predictions."""
    rows = _rows(figures.workload())
    w = paper.WORKLOAD
    assert {rows[w[k].quantity].kind for k in ("sparsity", "hot_work", "adjacent", "dynamic_hot")} == {"input"}
    assert {rows[w[k].quantity].kind for k in ("distance10", "distance25", "flat")} == {"prediction"}
    assert float(w["flat"]) == 1.0 and "over distance 25" in w["flat"].quantity


@pytest.fixture(scope="module")
def computed(tmp_path_factory: pytest.TempPathFactory) -> list[ledger.Row]:
    """``claims(ctx)`` over the committed report cache (no simulation)."""
    return claims.claims(Context(out=tmp_path_factory.mktemp("hermes"), commit=False))


def test_the_section_renders_from_its_claims(tmp_path) -> None:
    """Issue 53: the section's claims are computed once (``claims.claims``), before it renders; the report's
    ledger holds exactly those rows."""
    report(["hermes"], Context(out=tmp_path, commit=False), echo=False)
    written = ledger.load(tmp_path / "ledger.csv")
    assert [r["quantity"] for r in written] == [r.quantity for r in claims.claims(Context(out=tmp_path, commit=False))]


def test_the_claims_are_the_committed_ledgers_hermes_rows(computed) -> None:
    """``claims(ctx)`` gives the committed ledger's Hermes rows, value for value (to the CSV's 6 digits)."""
    committed = [r for r in ledger.load() if r["paper"] == "hermes"]
    assert len(computed) == len(committed) == len({r.quantity for r in computed})
    for got, want in zip(computed, committed, strict=True):
        assert (got.quantity, got.kind) == (want["quantity"], want["kind"])
        for field in ("paper_value", "model_value"):
            value, stored = getattr(got, field), float(want[field])
            assert (math.isnan(value) and math.isnan(stored)) or float(f"{value:.6g}") == stored, (got.quantity, field)


def test_every_statement_claim_matches_a_computed_row(computed) -> None:
    quantities = [r.quantity for r in computed]
    for s in STATEMENTS:
        for pattern in s.claims:
            assert any(re.fullmatch(pattern, q) for q in quantities), f"{s.where}: {pattern!r} matches no row"


class _Grids:
    """A report context that names the grids asked of it (name and arguments) instead of running them."""

    def grid(self, name: str, fn, *args):
        return {"name": name, "args": args}


def test_the_runs_grid_is_rerun_under_each_gpu_profile() -> None:
    """Issue 53 item 4: the paper does not state its GPUs' efficiency; the runs grid and the multiplier sweep are
    computed at the default (attacc) and again with every GPU (Hermes' and the baselines') at each alternative."""
    figures.grids.cache_clear()
    g = figures.grids(_Grids())
    figures.grids.cache_clear()
    assert g.runs["args"] == (paper.MODELS, paper.BATCHES) and "attacc" not in figures.GPU_PROFILES
    assert g.runs_alt == {
        p: {"name": f"hermes-runs-{p}", "args": (paper.MODELS, paper.BATCHES, p)} for p in figures.GPU_PROFILES
    }
    dse = {p: {"name": f"hermes-dse-{p}", "args": (paper.DSE_MULTIPLIERS, p)} for p in figures.GPU_PROFILES}
    assert g.dse_alt == dse
    slow, fast = (gr.runs(("opt-13b",), (1,), p)[0]["TensorRT-LLM"] for p in ("calibrated", "peak"))
    assert slow < gr.runs(("opt-13b",), (1,))[0]["TensorRT-LLM"] < fast


def test_a_runs_claim_is_banded_only_where_a_profile_moves_it_by_more_than_5_percent() -> None:
    """A slower TensorRT-LLM (its A100s at another profile) moves only the TensorRT-LLM shares: they carry the band
    and their cause says which profile is the default; the headline speedups stay unbanded."""
    grid = _grid("hermes-runs")
    alt = figures.runs_tables([{**r, "TensorRT-LLM": r["TensorRT-LLM"] * 0.7} for r in grid])
    point, named = figures.runs_tables(grid), claims.causes(grid)
    trt = claims.rows_of(point["trt"], named, [alt["trt"]])
    assert all(r.band_high == pytest.approx(r.model_value / 0.7) and r.band_low == r.model_value for r in trt)
    assert all(figures.GPU_DEFAULT in r.cause for r in trt)
    assert not any(r.in_band for r in claims.rows_of(point["headline"], named, [alt["headline"]]))
