"""DECA formal properties: the PE's stream contract at its testbench sizes, and the expansion stage
(POPCNT prefix sum + triangular crossbar, hw/deca/expand.py) proved equal to its definition at a reduced
width for every mask and every value.

Depth reached and seconds (check + cover) in a `make formal` run at 15d7c60 (2 workers, shared 2-core VM;
docs/guide.md has the latest run): expansion proved (7 + 5 s); the PE's contract (W = 8, 4 lanes) bounded at
13 of the 199 cycles of a tile (41 + 41 s: the DECA PE is past the solver; with its arithmetic free it reaches
no deeper)."""

from __future__ import annotations

import importlib

from amaranth.hdl import Assert, Module, Mux, Value

from hw.deca.cycles import UNIT_PE
from tb.deca.cases import SPECS
from tb.formal.contract import contract_spec
from tb.formal.sby import FormalSpec

EXPAND_W = 8  # the reduced window (the paper's W = 32): 8 lanes, every mask of 8 bits


def expand_equiv() -> tuple[Module, list[Value]]:
    """dd[i] = sd[number of ones in mask[0:i]] where mask[i], else +0 (DECA §6.1 item 3), written as a
    ripple count, not the unit's Hillis-Steele scan."""
    expand = importlib.import_module("hw.deca.expand")  # looked up now: a mutant test swaps the module
    dut = expand.Expand(EXPAND_W)
    m = Module()
    m.submodules.dut = dut
    ones = Value.cast(0)
    for i in range(EXPAND_W):
        want = Mux(dut.mask[i], Value.cast(dut.sd).word_select(ones, 16), 0)
        m.d.comb += Assert(dut.dd[i] == want, f"lane{i}")
        ones = ones + dut.mask[i]
    return m, [Value.cast(dut.sd), dut.mask, Value.cast(dut.dd)]


PROPS = [
    FormalSpec(
        "expand-equiv-w8",
        UNIT_PE,
        expand_equiv,
        1,
        "combinational: one step holds every input (k-induction closes at once)",
        "prove",
        slow=False,
        timeout=120,
    ),
    *(contract_spec(s) for s in SPECS if s.params["w"] == 8),
]
