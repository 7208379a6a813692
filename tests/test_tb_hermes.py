"""Runs the Hermes cocotb testbenches: reduced units in `make test`; the paper's sizes (marker ``full``) in
`make sim` only."""

import pytest

from tb.hermes.cases import FULL_SPECS, SPECS
from tb.runner import run


@pytest.mark.sim
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
def test_hermes_unit(spec) -> None:
    run(spec)


@pytest.mark.sim
@pytest.mark.full
@pytest.mark.parametrize("spec", FULL_SPECS, ids=lambda s: s.tag)
def test_hermes_full(spec) -> None:
    run(spec)
