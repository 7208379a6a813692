# amaranth: UnusedElaboratable=no
# (units built only to check their parameters are never elaborated, by design)
"""Runs the DECA PE cocotb testbench for each {W, L} design point (SIM, default icarus)."""

import pytest

from tb.deca.cases import SPECS
from tb.runner import run


@pytest.mark.sim
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.tag)
def test_deca_pe(spec) -> None:
    run(spec)


@pytest.mark.filterwarnings("ignore:.*created but never used")  # the refused units are never elaborated
def test_pe_tile_is_checked() -> None:
    """A reduced tile (the formal check's, tb/deca/deca_props.py) is a power of two from 2 x W to the AMX tile."""
    from hw.deca.pe import DecaPE

    assert DecaPE(w=8, lanes=4, tile=16).tile == 16
    for tile in (8, 24, 1024):
        with pytest.raises(ValueError, match=f"tile: {tile} not allowed; a power of two from 2 \\* w = 16 to 512"):
            DecaPE(w=8, lanes=4, tile=tile)
