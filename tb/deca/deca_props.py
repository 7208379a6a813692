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

from golden.deca_spec import CODE_BITS
from hw.deca.cycles import UNIT_PE, lq, tile_cycles
from hw.deca.pe import FILL_TO_OUT
from tb.deca.cases import SPECS
from tb.formal.contract import contract_spec
from tb.formal.sby import FormalSpec

EXPAND_W = 8  # the reduced window (the paper's W = 32): 8 lanes, every mask of 8 bits
# The PE's formal size: the smallest W (8, hw.deca.pe.check_params) and the testbench's 4 big LUTs, a tile of two vOps
# (2 x W elements: the same control as the 512-element AMX tile's with its vOp counts shortened) and
# queues of 2 entries (the same FIFOs, less state).
FORMAL_PE = {"w": 8, "lanes": 4, "tile": 16, "sqq_depth": 2, "mask_depth": 2, "scale_depth": 2}


def pe_response(p: dict) -> int:
    """The cycle model at the formal size for its slowest format (the fewest values per cycle, hw.deca.cycles):
    a dense tile's dequantization cycles, then the pipeline fill and the drain of its chunks."""
    vops, lq_ = p["tile"] // p["w"], min(lq(bits, p["lanes"], p["w"]) for bits in CODE_BITS)
    return tile_cycles([p["w"]] * vops, lq_) + FILL_TO_OUT + vops - 1


def tile_done(dut) -> Value:
    """A tile's last chunk taken without an error flag: the whole of one tile that ran."""
    return dut.o.valid & dut.o.ready & dut.o.payload.last & ~Value.cast(dut.o.payload.error).any()


def pe_contract(tb) -> FormalSpec:
    response = pe_response(FORMAL_PE)
    why = (
        f"{response + 3} cycles: the reset, a tile's descriptor and lines, its {response} cycles to its last chunk "
        f"at the slowest format (covered for a tile without error flags), and the next descriptor"
    )
    return contract_spec(
        tb,
        response + 3,
        response,
        abstract=True,
        functional=False,
        timeout=150,
        params=FORMAL_PE,
        why=why,
        done=tile_done,
    )


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
    *(pe_contract(s) for s in SPECS if s.params["w"] == 8),
]
