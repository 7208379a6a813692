"""DECA LUT array (DECA §6.1 item 6, Table 3): L big LUTs of 256 BF16 entries, each four 64-entry
sub-LUTs with one read port, so one big LUT serves 1 lookup of an 8-bit code, 2 of a 7-bit code, or
4 of a <= 6-bit code per cycle (Lq = L, 2L, 4L).

Lookup j uses big LUT j mod L through its port p = j div L: sub-LUT p for <= 6-bit codes, sub-LUT
2p + code[6] for 7-bit codes, sub-LUT code[7:6] for 8-bit codes, each at address code[5:0]. This
equals table[code] when the LUTs hold :func:`golden.deca.lut_image` (the table repeated with period
2**bits). A write (256 addresses) goes to every big LUT; reads are combinational.
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.deca_spec import LANES, LUT_ENTRIES, SUB_LUT_DEPTH, SUB_LUTS, VALUE_BITS, W

ADDR_BITS = LUT_ENTRIES.bit_length() - 1  # 8: a big LUT's address, the widest code it decodes
SUB_BITS = SUB_LUT_DEPTH.bit_length() - 1  # 6: a sub-LUT's address
LUT_WRITE = data.StructLayout({"addr": ADDR_BITS, "data": VALUE_BITS})


class LookupSignature(wiring.Signature):
    """The requester's side of the LUT array.

    Members:
      ``bits``: Out(5) — the code width of this cycle's lookups;
      ``codes``: Out(array of ``lookups`` x 8) — the codes, lookup j in element j;
      ``values``: In(array of ``lookups`` x 16) — table[code] for each lookup, the same cycle.
    """

    def __init__(self, lookups: int):
        super().__init__(
            {
                "bits": Out(5),
                "codes": Out(data.ArrayLayout(ADDR_BITS, lookups)),
                "values": In(data.ArrayLayout(VALUE_BITS, lookups)),
            }
        )


class LutArray(wiring.Component):
    """``lanes`` (L) big LUTs answering ``lookups`` codes per cycle.

    Members: ``w`` In(stream of {addr, data}) — programs entry ``addr`` of every big LUT;
    ``lookup`` In(:class:`LookupSignature`).
    """

    def __init__(self, lanes: int = LANES, lookups: int = W):
        if lookups > SUB_LUTS * lanes:
            raise ValueError(f"lookups: {lookups} not allowed; at most 4*L = {SUB_LUTS * lanes}")
        self.lanes, self.lookups = lanes, lookups
        super().__init__({"w": In(stream.Signature(LUT_WRITE)), "lookup": In(LookupSignature(lookups))})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.d.comb += self.w.ready.eq(1)
        L, n, lk = self.lanes, self.lookups, self.lookup
        q7, q8 = lk.bits == 7, lk.bits == 8
        reads = {}

        def code(j):  # which lookup drives a sub-LUT's address in each mode (absent lookups read 0)
            return lk.codes[j] if j < n else Const(0, ADDR_BITS)

        for lane in range(L):
            for s in range(SUB_LUTS):
                mem = Memory(shape=VALUE_BITS, depth=SUB_LUT_DEPTH, init=[])
                m.submodules[f"lut{lane}_{s}"] = mem
                wp = mem.write_port()
                m.d.comb += [
                    wp.addr.eq(self.w.payload.addr[:SUB_BITS]),
                    wp.data.eq(self.w.payload.data),
                    wp.en.eq(self.w.valid & (self.w.payload.addr[SUB_BITS:] == s)),
                ]
                rp = mem.read_port(domain="comb")
                m.d.comb += rp.addr.eq(
                    Mux(
                        q8,
                        code(lane)[:SUB_BITS],
                        Mux(q7, code(lane + (s // 2) * L)[:SUB_BITS], code(lane + s * L)[:SUB_BITS]),
                    )
                )
                reads[lane, s] = rp.data
        for j in range(n):
            lane, p = j % L, j // L
            subs = Array(reads[lane, s] for s in range(SUB_LUTS))
            c = lk.codes[j]
            sel = Mux(q8, c[SUB_BITS:ADDR_BITS], Mux(q7, 2 * p + c[SUB_BITS], p))
            m.d.comb += lk.values[j].eq(subs[sel])
        return m
