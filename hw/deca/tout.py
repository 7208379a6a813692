"""DECA TOut tile registers (DECA §5, §6.1 item 4, Table 3): two tile buffers so that the pipeline fills
one while the core drains the other. The scaling stage writes chunk ``vop`` of the current fill buffer;
the chunk with the last vop completes the tile (its error flags become the tile's) and switches buffers.
A full buffer drains one chunk per cycle on ``o``, ``last`` on its final chunk.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.deca_spec import ERR_FIELDS, TILE, VALUE_BITS, W

ERR = data.StructLayout(ERR_FIELDS)  # golden.deca_spec.Err, one bit per flag


def chunk_in(w: int, tile: int = TILE) -> data.StructLayout:
    """What the scaling stage writes: W BF16 lanes, their vOp index and the tile's flags so far."""
    return data.StructLayout({"data": data.ArrayLayout(VALUE_BITS, w), "vop": range(tile // w), "err": ERR})


def chunk_out(w: int) -> data.StructLayout:
    """An output chunk: W BF16 lanes, ``last`` on the tile's final chunk, the tile's ``error`` flags."""
    return data.StructLayout({"data": data.ArrayLayout(VALUE_BITS, w), "last": 1, "error": ERR})


class TOut(wiring.Component):
    """Members: ``i`` In(stream of :func:`chunk_in`); ``o`` Out(stream of :func:`chunk_out`)."""

    def __init__(self, w: int = W, tile: int = TILE):
        self.w, self.nv = w, tile // w
        super().__init__({"i": In(stream.Signature(chunk_in(w, tile))), "o": Out(stream.Signature(chunk_out(w)))})

    def elaborate(self, platform) -> Module:
        m = Module()
        nv = self.nv
        m.submodules.mem = mem = Memory(shape=VALUE_BITS * self.w, depth=2 * nv, init=[])
        wp, rp = mem.write_port(), mem.read_port(domain="comb")
        full = Signal(2)
        err = Array(Signal(ERR.size, name=f"err{b}") for b in range(2))
        wb, rb = Signal(), Signal()  # fill and drain buffer
        ri = Signal(range(nv))
        m.d.comb += self.i.ready.eq(~full.bit_select(wb, 1))
        write = self.i.valid & self.i.ready
        m.d.comb += [
            wp.en.eq(write),
            wp.addr.eq(Cat(self.i.payload.vop, wb)),
            wp.data.eq(self.i.payload.data.as_value()),
        ]
        fill = write & (self.i.payload.vop == nv - 1)
        with m.If(fill):
            m.d.sync += [err[wb].eq(self.i.payload.err), wb.eq(~wb)]
        m.d.comb += [
            self.o.valid.eq(full.bit_select(rb, 1)),
            rp.addr.eq(Cat(ri, rb)),
            self.o.payload.data.eq(rp.data),
            self.o.payload.last.eq(ri == nv - 1),
            self.o.payload.error.eq(err[rb]),
        ]
        drained = Signal()
        m.d.comb += drained.eq(self.o.valid & self.o.ready & (ri == nv - 1))
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += ri.eq(ri + 1)
            with m.If(ri == nv - 1):
                m.d.sync += [ri.eq(0), rb.eq(~rb)]
        # fill and drain never touch the same buffer in one cycle
        m.d.sync += full.eq((full | (fill << wb)) & ~(drained << rb))
        return m
