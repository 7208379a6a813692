"""Runs the L3 cocotb testbenches: every unit and the reduced rank in `make test`; the paper's full
8 x 16 rank (marker ``full``) in `make sim` only."""

import pytest

from tb.l3.cases import FULL_SPECS, SPECS
from tb.runner import run


@pytest.mark.sim
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
def test_l3_unit(spec) -> None:
    run(spec)


@pytest.mark.sim
@pytest.mark.full
@pytest.mark.parametrize("spec", FULL_SPECS, ids=lambda s: s.tag)
def test_l3_full_rank(spec) -> None:
    run(spec)
