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

SUB_LUTS, SUB_DEPTH = 4, 64


class LutArray(wiring.Component):
    """``lanes`` (L) big LUTs answering ``lookups`` codes per cycle for a code width ``bits``."""

    def __init__(self, lanes: int = 8, lookups: int = 32):
        if lookups > SUB_LUTS * lanes:
            raise ValueError(f"lookups: {lookups} not allowed; at most 4*L = {SUB_LUTS * lanes}")
        self.lanes, self.lookups = lanes, lookups
        super().__init__({
            "w": In(stream.Signature(data.StructLayout({"addr": 8, "data": 16}))),
            "bits": In(5),
            "codes": In(data.ArrayLayout(8, lookups)),
            "values": Out(data.ArrayLayout(16, lookups)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        m.d.comb += self.w.ready.eq(1)
        L, n = self.lanes, self.lookups
        q7, q8 = self.bits == 7, self.bits == 8
        reads = {}
        for lane in range(L):
            for s in range(SUB_LUTS):
                mem = Memory(shape=16, depth=SUB_DEPTH, init=[])
                m.submodules[f"lut{lane}_{s}"] = mem
                wp = mem.write_port()
                m.d.comb += [wp.addr.eq(self.w.payload.addr[:6]), wp.data.eq(self.w.payload.data),
                             wp.en.eq(self.w.valid & (self.w.payload.addr[6:] == s))]
                rp = mem.read_port(domain="comb")
                # which lookup drives this sub-LUT's address in each mode (absent lookups read 0)
                def code(j):
                    return self.codes[j] if j < n else Const(0, 8)
                m.d.comb += rp.addr.eq(Mux(q8, code(lane)[:6],
                                       Mux(q7, code(lane + (s // 2) * L)[:6], code(lane + s * L)[:6])))
                reads[lane, s] = rp.data
        for j in range(n):
            lane, p = j % L, j // L
            subs = Array(reads[lane, s] for s in range(SUB_LUTS))
            c = self.codes[j]
            sel = Mux(q8, c[6:8], Mux(q7, 2 * p + c[6], p))
            m.d.comb += self.values[j].eq(subs[sel])
        return m
