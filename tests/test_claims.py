"""Each paper's statement catalogue (``sysmodel/designs/<paper>/claims.py``) against the committed ledger: every
quantitative statement the paper makes is a claim the ledger computes or a not-computed row with its reason,
and every ledger row answers a statement of the catalogue."""

from __future__ import annotations

import re

import pytest

from sysmodel import ledger
from sysmodel.report import PAPER_ORDER

ROWS = ledger.load()


def _paper(p: str):
    if ledger.catalogue(p):
        return p
    return pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=f"{p}: no statement catalogue written yet"))


@pytest.mark.parametrize("paper", [_paper(p) for p in PAPER_ORDER])
def test_the_catalogue_and_the_ledger_cover_each_other(paper: str) -> None:
    statements = ledger.catalogue(paper)
    assert statements, "no catalogue"
    quantities = [r["quantity"] for r in ROWS if r["paper"] == paper]
    for s in statements:
        for pattern in s.claims:
            assert any(re.fullmatch(pattern, q) for q in quantities), f"{s.where}: {pattern!r} matches no row"
        assert s.reason or s.claims
    unanswered = [q for q in quantities if not any(s.matches(q) for s in statements)]
    assert not unanswered, f"ledger rows no statement of the catalogue answers: {unanswered}"


def test_a_statement_is_a_claim_or_says_why_not() -> None:
    assert ledger.claim("§1", "2x faster", "A over B").claims == ("A over B",)
    assert ledger.not_computed("§1", "5% area", "no area model").reason == "no area model"
    with pytest.raises(ValueError, match="exactly one"):
        ledger.Statement("§1", "x")
    with pytest.raises(ValueError, match="exactly one"):
        ledger.Statement("§1", "x", ("q",), "why")
