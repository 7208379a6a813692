"""Runs the DECA PE cocotb testbench for each {W, L} design point (SIM, default icarus)."""

import pytest

from tb.deca.cases import SPECS
from tb.runner import run


@pytest.mark.sim
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
def test_deca_pe(spec) -> None:
    run(spec)
