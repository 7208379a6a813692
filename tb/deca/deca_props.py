"""DECA formal properties: the PE's stream contract at a formal size, and the expansion stage (POPCNT prefix
sum + triangular crossbar, hw/deca/expand.py) proved equal to its definition at a reduced width for every
mask and every value.

The PE's contract runs at :data:`FORMAL_PE`: W = 8, L = 4 (the testbench's {8,4} design point), a tile of
16 elements (two vOps instead of the AMX tile's 64 at W = 8: the same dequantization, expansion, scaling
and TOut code, only the vOp count shortened; ``hw.deca.pe.check_params`` checks the reduced tile) and
queues of 2 entries, its FP multipliers free (tb/formal/abstract.py). At the testbench's size a tile is
128-199 cycles and the check reached 13-15 in 40 s with or without the arithmetic free; at W = 64 (8 vOps
a tile) it reached 2 in 60 s (64 lanes of everything). A tile at the formal size: 10 cycles (``pe_response``) at the
slowest format (8-bit codes, 2 cycles a vOp); depth 13 spans the reset, a descriptor and its lines, and a whole
tile (its last chunk, without error flags, is covered: reached at step 9). Note: the PE's LUT write port
is always ready, so with every input valid the bounded-response assertion holds trivially; the depth is
stated for the other properties and the covered tile.

Measured 2026-11-27 on the shared 2-core VM: expansion proved (7 + 5 s); the PE's contract bounded at depth 13
of 13 (21 s check + 17 s cover at load ~2; 48 + 39 s at load ~8; the whole tile at step 9)."""

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
