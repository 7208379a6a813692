"""The validation ledger (sysmodel/data/ledger.csv, written by `membound report`): every prediction of a paper's
number within 10% and pointing the paper's way, or a strict xfail whose reason is the cause the report prints —
so the xfail list is the open-gap list, and fixing a cause turns its rows into failures until the cause is
removed. Fits and inputs are never counted as reproduced."""

import math
import re
from pathlib import Path

import pytest

from sysmodel import ledger
from sysmodel.report import ledger_lines

ROWS = ledger.load()
PREDICTIONS = [r for r in ROWS if r["kind"] == "prediction"]


def _case(r: dict):
    marks = [pytest.mark.xfail(strict=True, reason=r["cause"])] if r["cause"] else []
    return pytest.param(r, marks=marks, id=f"{r['paper']}: {r['quantity']}")


@pytest.mark.parametrize("row", [_case(r) for r in PREDICTIONS])
def test_prediction_within_10_percent_and_the_papers_way(row: dict) -> None:
    ratio = float(row["ratio"])
    if not math.isnan(float(row["paper_value"])):
        assert abs(ratio - 1) <= ledger.TOLERANCE, f"model / paper = {ratio:.3f}"
    assert row["direction_agrees"] in ("", "yes"), "the model points the other way"


def test_the_ledger_covers_every_paper_with_its_kinds() -> None:
    assert {r["paper"] for r in ROWS} == {"deca", "hermes", "l3", "duplex", "flash"}
    assert {r["kind"] for r in ROWS} == set(ledger.KINDS)
    assert len(PREDICTIONS) >= 150


def test_every_miss_names_its_cause_and_no_fit_or_input_counts() -> None:
    for r in ROWS:
        if r["kind"] != "prediction":
            assert r["within"] == "" and r["cause"] == "", r  # never "within 10%", never a gap to explain
        elif r["within"] == "no" or r["direction_agrees"] == "no":
            assert r["cause"] and r["cause"] != "unexplained", r
        else:
            assert r["cause"] == "", r


def test_evaluate_semantics() -> None:
    c = ledger.Claim(2.0, "p", "§1", "A over B", ratio=True)
    assert isinstance(c, float) and c * 2 == 4.0
    row = ledger.evaluate(c, 0.5, "named")
    assert (row.ratio, row.within, row.direction, row.direction_agrees, row.cause) == (
        0.25,
        "no",
        "above 1",
        "no",
        "named",
    )
    assert ledger.evaluate(c, 2.1).cause == ""  # within 10%, right way: no cause kept
    assert ledger.evaluate(c, 9.0, "x", kind="fit").within == ""  # a fit is never counted
    zero = ledger.evaluate(ledger.Claim(0.0, "p", "§1", "zero"), 0.0)
    assert zero.ratio == 1.0 and zero.within == "yes"
    nan = ledger.evaluate(ledger.Claim(math.nan, "p", "§1", "direction only", ratio=True, above=True), 1.5)
    assert nan.within == "" and nan.direction_agrees == "yes" and nan.cause == ""
    with pytest.raises(TypeError, match="bare number"):
        ledger.evaluate(3.0, 3.0)
    import pickle

    assert pickle.loads(pickle.dumps(c)).quantity == "A over B"


def test_readme_quotes_the_current_summary() -> None:
    """README's "How well does it reproduce the papers?" table is the committed ledger's summary."""
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    floats = ("paper_value", "model_value", "ratio", "band_low", "band_high")
    rs = [ledger.Row(**{**r, **{k: float(r[k]) for k in floats}}) for r in ROWS]
    want = [line for line in ledger_lines(rs, ["deca", "hermes", "l3", "duplex", "flash"]) if line.startswith("|")]
    section = readme.split("## How well does it reproduce the papers?")[1].split("\n## ")[0]
    got = [line for line in section.splitlines() if line.startswith("|")]
    assert got == want, "README's ledger summary is stale: copy it from the report's top table"
    assert re.search(r"`ledger\.csv`", section)


def test_a_direction_stated_without_a_number_prints_its_direction_not_a_ratio() -> None:
    from sysmodel.report import results

    make = ledger.claims("p", "§2", ratio=True)
    falls = make(float("nan"), "A over B", above=False)
    assert falls.above is False
    rises = make(float("nan"), "A over B")
    assert rises.above is False  # NaN > 1 is false: a rising direction must say above=True
    up = make(float("nan"), "A over B", above=True)
    row = ledger.evaluate(up, 1.2)
    assert results.claim_row({}, "A over B", row) == "| A over B | above 1 | 1.20 | - | direction right |"
    wrong = ledger.evaluate(up, 0.8, "named")
    assert results.claim_row({"A over B": "named"}, "A over B", wrong).endswith("| - | wrong direction: named |")
    assert wrong.cause == "named" and wrong.within == ""


def test_every_papers_section_computes_its_claims_once() -> None:
    """Issue 53: each paper's report section names its ``claims(ctx)``, which the report calls once and hands
    to the renderer; the ledger keeps no running list a renderer could add to."""
    from sysmodel.report import PAPER_ORDER, SECTIONS

    named = {s.key: s.claims for s in SECTIONS}
    assert all(named[p] == f"sysmodel.designs.{p}.claims:claims" for p in PAPER_ORDER), named
    assert not hasattr(ledger, "record") and not hasattr(ledger, "rows")


def _sig4(x: float) -> float:
    return float(f"{x:.4g}")


def test_a_prediction_that_lands_on_the_paper_says_why() -> None:
    """A prediction equal to the paper's value to 4 significant digits usually means the value went in (an
    identity, an input or a fit): it must carry the claim's note saying why it is a genuine prediction."""
    for r in PREDICTIONS:
        paper, model = float(r["paper_value"]), float(r["model_value"])
        if math.isfinite(paper) and _sig4(paper) == _sig4(model):
            assert r["note"], f"{r['paper']}: {r['quantity']} equals the paper's {paper}: identity, or say why"


def test_identities_are_recorded_but_never_counted() -> None:
    row = ledger.evaluate(ledger.Claim(0.0, "p", "§1", "zero by construction", kind="identity"), 0.0)
    assert (row.kind, row.within, row.cause) == ("identity", "", "")
    s = ledger.summary([row])
    assert (s["predictions"], s["within"], s["identities"]) == (0, 0, 1)
    with pytest.raises(ValueError, match="allowed: prediction, fit, input, identity"):
        ledger.Claim(1.0, "p", "§1", "x", kind="guess")


def test_the_papers_statements_are_read_as_the_paper_states_them() -> None:
    """Pins of earlier misreadings: the averaging set, the configuration and the location of each."""
    from sysmodel.designs.duplex import paper as duplex
    from sysmodel.designs.flash import paper as flash
    from sysmodel.designs.l3 import paper as l3

    # Duplex Fig. 11's caption: "Mixtral, GLaM, and Grok1"; its mean and maxima cover those three only
    assert duplex.FIG11_MODELS == ("mixtral-8x7b", "glam-143b", "grok-1")
    assert "OPT" not in duplex.AVG_OVER_GPU.workload
    # the 2.07x and 28.19% averages are the conclusion's, §X; Fig. 12 is §VII-B; Fig. 8 is §IV-E
    assert duplex.AVG_OVER_GPU.where.startswith("§X") and duplex.ENERGY_AVG.where.startswith("§X")
    assert duplex.TBT_P50_VS_GPU.where.startswith("§VII-B") and duplex.EDAP_CROSSOVER.where.startswith("§IV-E")
    # Fig. 15's per-model numbers are "up to" values: maxima over the figure's grid
    assert all(c.quantity.endswith("up to") for c in duplex.ENERGY.values())
    # LLM in a flash states "up to 4x, 7x, and 20x" (abstract, §1), not Table 3's ratios; 32 KiB is derived
    assert [float(flash.speedup(b)) for b in ("cpu", "metal-m2", "gpu")] == [4.0, 7.0, 20.0]
    assert not isinstance(flash.flash_point(32 * 1024), ledger.Claim)
    # peak bandwidths are arithmetic of the stated organisation
    assert l3.PIM_BANDWIDTH.kind == duplex.PC_BANDWIDTH.kind == "identity"


def test_fig15_up_to_is_the_grid_maximum() -> None:
    from sysmodel.designs.duplex import paper as duplex
    from sysmodel.designs.duplex.figures import energy_reductions

    grid = energy_reductions("glam-143b")
    assert len(grid) == len(duplex.LENGTHS) * len(duplex.BATCHES) and max(grid) > min(grid)


def test_a_band_spans_the_point_and_its_alternatives() -> None:
    c = ledger.Claim(6.1, "p", "§1", "A over B", ratio=True)
    row = ledger.evaluate(c, 3.2, "named", band=(7.0,))
    assert (row.band_low, row.band_high, row.in_band, row.within) == (3.2, 7.0, "yes", "no")
    assert ledger.evaluate(c, 3.2, "named", band=(4.0,)).in_band == "no"
    plain = ledger.evaluate(c, 6.0)
    assert math.isnan(plain.band_low) and plain.in_band == ""
    s = ledger.summary([row, plain])
    assert (s["banded"], s["in_band"]) == (1, 1) and s["median_band"] == pytest.approx(math.log(7.0 / 3.2))


def test_a_stated_direction_is_inside_its_band_where_an_alternative_points_its_way() -> None:
    """A direction the paper states without a number ("L3 beats every baseline"): the band spans the point and
    its alternatives, and the paper lies inside where some value of it is on the stated side of 1."""
    above = ledger.Claim(math.nan, "p", "§1", "A over B", ratio=True, above=True)
    row = ledger.evaluate(above, 0.93, "named", band=(1.2,))
    assert (row.band_low, row.band_high, row.in_band, row.direction_agrees) == (0.93, 1.2, "yes", "no")
    assert ledger.evaluate(above, 0.93, "named", band=(0.95,)).in_band == "no"
    below = ledger.Claim(math.nan, "p", "§1", "B over A", ratio=True, above=False)
    assert ledger.evaluate(below, 1.3, "named", band=(0.8,)).in_band == "yes"
    assert ledger.evaluate(ledger.Claim(math.nan, "p", "§1", "x"), 2.0, band=(3.0,)).in_band == ""
    # the summary's "paper inside band" counts papers' numbers only: a default on the stated side would count itself
    numeric = ledger.evaluate(ledger.Claim(6.1, "p", "§1", "A over B", ratio=True), 3.2, "named", band=(4.0,))
    s = ledger.summary([row, numeric])
    assert (s["banded"], s["in_band"]) == (1, 0) and s["median_band"] == pytest.approx(math.log(4.0 / 3.2))


def test_only_a_setting_that_moves_the_claim_by_more_than_5_percent_bands_it() -> None:
    assert ledger.moved(2.0, (2.05, 1.98)) is None
    assert ledger.moved(2.0, (2.05, 2.2)) == (2.05, 2.2)  # one alternative moves it 10%: the band spans both
    assert ledger.moved(0.0, (1.0,)) is None and ledger.moved(2.0, ()) is None
