"""Runs the Duplex cocotb testbenches: reduced units in `make test`; the paper's 64-lane activation
(marker ``full``) in `make sim` only."""

import pytest

from tb.duplex.cases import FULL_SPECS, SPECS
from tb.runner import run


@pytest.mark.sim
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
def test_duplex_unit(spec) -> None:
    run(spec)


@pytest.mark.sim
@pytest.mark.full
@pytest.mark.parametrize("spec", FULL_SPECS, ids=lambda s: s.tag)
def test_duplex_full(spec) -> None:
    run(spec)
