"""DECA PE input queues (DECA §6.1 items 1 and 5, Table 3): the bitmask and scale-factor queues
(:class:`TileQueue`) and the sparse quantized queue with its unaligned read port (:class:`SqqAligner`).

Each queue is filled by a loader as a stream whose entries carry ``last`` on the final entry of a tile,
so a malformed tile can never desynchronise later tiles or hang the PE: reading past a tile's last
entry returns zeros and flags *short*; entries left when the tile ends are dropped and flag *long*
(semantics: :func:`golden.deca.pe_decompress`).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

LINE_BITS = 512


def tile_entry(width: int) -> data.StructLayout:
    return data.StructLayout({"data": width, "last": 1})


class TileQueue(wiring.Component):
    """A FIFO of ``depth`` entries whose head the PE reads per tile.

    ``avail``: the head can be taken this cycle (an entry, or zeros after the tile's last entry);
    ``pop``: take it; ``end_tile``: the PE finished the tile this cycle — ``short``/``long`` then say
    whether the tile's stream was too short or too long. A long stream is drained up to its last entry
    before the next tile is served.
    """

    def __init__(self, width: int, depth: int):
        self.width, self.depth = width, depth
        super().__init__({
            "i": In(stream.Signature(tile_entry(width))),
            "data": Out(width), "avail": Out(1), "pop": In(1),
            "end_tile": In(1), "short": Out(1), "long": Out(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.fifo = fifo = SyncFIFO(width=self.width + 1, depth=self.depth)
        m.d.comb += [fifo.w_data.eq(self.i.payload.as_value()), fifo.w_en.eq(self.i.valid),
                     self.i.ready.eq(fifo.w_rdy)]
        head = data.View(tile_entry(self.width), fifo.r_data)
        ended, short, draining = Signal(), Signal(), Signal()
        m.d.comb += [self.avail.eq(ended | (fifo.r_rdy & ~draining)),
                     self.data.eq(Mux(ended, 0, head.data))]
        popped_last = Signal()
        m.d.comb += popped_last.eq(self.pop & ~ended & fifo.r_rdy & head.last)
        m.d.comb += [self.short.eq(short | (self.pop & ended)),
                     self.long.eq(~(ended | popped_last))]
        with m.If(draining):
            m.d.comb += fifo.r_en.eq(1)
            with m.If(fifo.r_rdy & head.last):
                m.d.sync += draining.eq(0)
        with m.Elif(self.pop & ~ended):
            m.d.comb += fifo.r_en.eq(1)
        with m.If(self.end_tile):
            m.d.sync += [ended.eq(0), short.eq(0), draining.eq(self.long)]
        with m.Else():
            with m.If(popped_last):
                m.d.sync += ended.eq(1)
            with m.If(self.pop & ended):
                m.d.sync += short.eq(1)
        return m


class SqqAligner(wiring.Component):
    """The sparse quantized queue: ``depth`` 64-byte lines and a 1024-bit window whose bit 0 is the
    next unread value bit. The dequantization stage reads ``bits``/``avail``/``ended`` and consumes
    ``take`` bits per cycle; a line is appended whenever at most one line's worth remains. At
    ``end_tile`` the window is cleared (padding dropped) and the next tile's first line may load in the
    same cycle, so back-to-back tiles see no gap. ``long``: the tile had more lines than
    max(1, ceil(consumed bits / 512)). ``draining``: dropping a long tile's leftover lines, during
    which the next tile waits.
    """

    def __init__(self, depth: int = 32):
        self.depth = depth
        super().__init__({
            "i": In(stream.Signature(tile_entry(LINE_BITS))),
            "bits": Out(2 * LINE_BITS), "avail": Out(range(2 * LINE_BITS + 1)), "ended": Out(1),
            "take": In(range(LINE_BITS + 1)), "end_tile": In(1), "long": Out(1),
            "draining": Out(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.fifo = fifo = SyncFIFO(width=LINE_BITS + 1, depth=self.depth)
        m.d.comb += [fifo.w_data.eq(self.i.payload.as_value()), fifo.w_en.eq(self.i.valid),
                     self.i.ready.eq(fifo.w_rdy)]
        head = data.View(tile_entry(LINE_BITS), fifo.r_data)
        buf = Signal(2 * LINE_BITS)
        avail = Signal(range(2 * LINE_BITS + 1))
        ended, draining = Signal(), Signal()
        lines = Signal(range(64))  # lines loaded this tile
        consumed = Signal(range(16 * LINE_BITS + 1))  # bits consumed this tile
        m.d.comb += [self.bits.eq(buf), self.avail.eq(avail), self.ended.eq(ended)]

        rem = Signal.like(avail)
        m.d.comb += rem.eq(avail - self.take)
        shifted = Signal(2 * LINE_BITS)
        m.d.comb += shifted.eq(buf >> self.take)
        used = Signal.like(consumed)
        m.d.comb += used.eq(consumed + self.take)
        needed_lines = Mux(used == 0, 1, (used + LINE_BITS - 1) >> 9)
        m.d.comb += [self.long.eq(~ended | (lines > needed_lines)), self.draining.eq(draining)]

        with m.If(draining):
            m.d.comb += fifo.r_en.eq(1)
            with m.If(fifo.r_rdy & head.last):
                m.d.sync += draining.eq(0)
        with m.Elif(self.end_tile):
            # the next tile starts with an empty window; its first line may load right away
            load = Signal()
            m.d.comb += [load.eq(fifo.r_rdy & ended), fifo.r_en.eq(load)]
            m.d.sync += [buf.eq(Mux(load, head.data, 0)), avail.eq(Mux(load, LINE_BITS, 0)),
                         ended.eq(load & head.last), lines.eq(load), consumed.eq(0),
                         draining.eq(~ended)]
        with m.Else():
            load = Signal()
            m.d.comb += [load.eq(fifo.r_rdy & ~ended & (rem <= LINE_BITS)), fifo.r_en.eq(load)]
            appended = Mux(load, Cat(head.data, Const(0, LINE_BITS)) << rem[:10], 0)
            m.d.sync += [buf.eq(shifted | appended), avail.eq(rem + Mux(load, LINE_BITS, 0)),
                         ended.eq(ended | (load & head.last)), lines.eq(lines + load), consumed.eq(used)]
        return m
