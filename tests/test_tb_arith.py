"""Runs the hw/arith cocotb testbenches on the HDL simulator (SIM, default icarus)."""

import pytest

from tb.arith.cases import SPECS
from tb.runner import run


@pytest.mark.sim
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
def test_arith_unit(spec) -> None:
    run(spec)
