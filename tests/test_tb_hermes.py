# amaranth: UnusedElaboratable=no
# (units built with rejected parameters are never elaborated, by design)
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


@pytest.mark.filterwarnings("ignore:.*created but never used")  # the refused units are never elaborated
def test_unit_parameters_are_checked() -> None:
    from hw.hermes.activation import ActivationUnit
    from hw.hermes.gemv import GemvUnit

    with pytest.raises(ValueError, match="multipliers: 3 not allowed"):
        GemvUnit(multipliers=3)
    with pytest.raises(ValueError, match="n: 1 not allowed"):
        GemvUnit(multipliers=1)  # the lane tree needs two
    with pytest.raises(ValueError, match="serial_bits: 11 not allowed with lanes 2"):
        GemvUnit(multipliers=2, lanes=2, serial_bits=11)  # 2 cycles per operation: the accumulator needs 3
    with pytest.raises(ValueError, match="buffer_bytes: 100 not allowed"):
        GemvUnit(multipliers=2, lanes=4, buffer_bytes=100)
    with pytest.raises(ValueError, match="lanes: 3 not allowed"):
        ActivationUnit(lanes=3)
