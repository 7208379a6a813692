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

from golden.deca_spec import LINE_BITS, MASK_DEPTH, RAW_BITS, SQQ_DEPTH, TILE

LINE_LOG2 = LINE_BITS.bit_length() - 1


def tile_entry(width: int) -> data.StructLayout:
    """A loader stream entry: ``data``, and ``last`` on the final entry of a tile."""
    return data.StructLayout({"data": width, "last": 1})


class TileReadSignature(wiring.Signature):
    """The consumer side of a :class:`TileQueue`, from the queue's point of view.

    Members:
      ``data``: Out(width) — the head entry, or zeros after the tile's last entry;
      ``avail``: Out(1) — ``data`` may be taken this cycle;
      ``pop``: In(1) — take it;
      ``end_tile``: In(1) — the consumer finished the tile this cycle;
      ``short``: Out(1) — at ``end_tile``: the tile read past its stream's end;
      ``long``: Out(1) — at ``end_tile``: the tile left entries of its stream unread.
    """

    def __init__(self, width: int):
        super().__init__(
            {"data": Out(width), "avail": Out(1), "pop": In(1), "end_tile": In(1), "short": Out(1), "long": Out(1)}
        )


class SqqReadSignature(wiring.Signature):
    """The dequantization stage's side of the :class:`SqqAligner`, from the aligner's point of view.

    Members:
      ``bits``: Out(1024) — the window; bit 0 is the next unread value bit;
      ``avail``: Out — valid bits in the window;
      ``ended``: Out(1) — the tile's last line is in the window (no more bits will come);
      ``started``: Out(1) — a line of the tile is in the window, so the tile may end: every line its
      consumption needed is in, and if its last line is not, the tile is long whatever the window holds;
      ``take``: In — bits consumed this cycle;
      ``end_tile``: In(1) — the tile is done: drop what is left of it;
      ``long``: Out(1) — at ``end_tile``: the tile had more lines than it consumed;
      ``draining``: Out(1) — dropping a long tile's leftover lines; the next tile waits.
    """

    def __init__(self):
        super().__init__(
            {
                "bits": Out(2 * LINE_BITS),
                "avail": Out(range(2 * LINE_BITS + 1)),
                "ended": Out(1),
                "started": Out(1),
                "take": In(range(LINE_BITS + 1)),
                "end_tile": In(1),
                "long": Out(1),
                "draining": Out(1),
            }
        )


class TileQueue(wiring.Component):
    """A FIFO of ``depth`` entries whose head the PE reads per tile (``r``, :class:`TileReadSignature`).

    Members: ``i`` In(stream of :func:`tile_entry`) — the loader's side; ``r`` Out(TileReadSignature).
    A long stream is drained up to its last entry before the next tile is served.
    """

    def __init__(self, width: int, depth: int = MASK_DEPTH):
        self.width, self.depth = width, depth
        super().__init__({"i": In(stream.Signature(tile_entry(width))), "r": Out(TileReadSignature(width))})

    def elaborate(self, platform) -> Module:
        m = Module()
        r = self.r
        m.submodules.fifo = fifo = SyncFIFO(width=self.width + 1, depth=self.depth)
        m.d.comb += [fifo.w_data.eq(self.i.payload.as_value()), fifo.w_en.eq(self.i.valid), self.i.ready.eq(fifo.w_rdy)]
        head = data.View(tile_entry(self.width), fifo.r_data)
        ended, short, draining = Signal(), Signal(), Signal()
        m.d.comb += [r.avail.eq(ended | (fifo.r_rdy & ~draining)), r.data.eq(Mux(ended, 0, head.data))]
        popped_last = Signal()
        m.d.comb += popped_last.eq(r.pop & ~ended & fifo.r_rdy & head.last)
        m.d.comb += [r.short.eq(short | (r.pop & ended)), r.long.eq(~(ended | popped_last))]
        with m.If(draining):
            m.d.comb += fifo.r_en.eq(1)
            with m.If(fifo.r_rdy & head.last):
                m.d.sync += draining.eq(0)
        with m.Elif(r.pop & ~ended):
            m.d.comb += fifo.r_en.eq(1)
        with m.If(r.end_tile):
            m.d.sync += [ended.eq(0), short.eq(0), draining.eq(r.long)]
        with m.Else():
            with m.If(popped_last):
                m.d.sync += ended.eq(1)
            with m.If(r.pop & ended):
                m.d.sync += short.eq(1)
        return m


class SqqAligner(wiring.Component):
    """The sparse quantized queue: ``depth`` 64-byte lines and a 1024-bit window (``r``,
    :class:`SqqReadSignature`) from which the dequantization stage consumes ``take`` bits per cycle; a
    line is appended whenever at most one line's worth remains. At ``end_tile`` the window is cleared
    (padding dropped) and the next tile's first line may load in the same cycle, so back-to-back tiles
    see no gap. ``long``: the tile had more lines than max(1, ceil(consumed bits / 512)).

    Members: ``i`` In(stream of :func:`tile_entry` (512)) — the loader's side; ``r`` Out(SqqReadSignature).
    """

    def __init__(self, depth: int = SQQ_DEPTH):
        self.depth = depth
        super().__init__({"i": In(stream.Signature(tile_entry(LINE_BITS))), "r": Out(SqqReadSignature())})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.fifo = fifo = SyncFIFO(width=LINE_BITS + 1, depth=self.depth)
        m.d.comb += [fifo.w_data.eq(self.i.payload.as_value()), fifo.w_en.eq(self.i.valid), self.i.ready.eq(fifo.w_rdy)]
        head = data.View(tile_entry(LINE_BITS), fifo.r_data)
        buf = Signal(2 * LINE_BITS)
        avail = Signal(range(2 * LINE_BITS + 1))
        ended, draining = Signal(), Signal()
        lines = Signal(range(64))  # lines loaded this tile
        consumed = Signal(range(TILE * RAW_BITS + 1))  # bits consumed this tile
        r = self.r
        m.d.comb += [r.bits.eq(buf), r.avail.eq(avail), r.ended.eq(ended), r.started.eq(lines != 0)]

        rem = Signal.like(avail)
        m.d.comb += rem.eq(avail - r.take)
        shifted = Signal(2 * LINE_BITS)
        m.d.comb += shifted.eq(buf >> r.take)
        used = Signal.like(consumed)
        m.d.comb += used.eq(consumed + r.take)
        needed_lines = Mux(used == 0, 1, (used + LINE_BITS - 1) >> LINE_LOG2)
        m.d.comb += [r.long.eq(~ended | (lines > needed_lines)), r.draining.eq(draining)]

        with m.If(draining):
            m.d.comb += fifo.r_en.eq(1)
            with m.If(fifo.r_rdy & head.last):
                m.d.sync += draining.eq(0)
        with m.Elif(r.end_tile):
            # the next tile starts with an empty window; its first line may load right away
            load = Signal()
            m.d.comb += [load.eq(fifo.r_rdy & ended), fifo.r_en.eq(load)]
            m.d.sync += [
                buf.eq(Mux(load, head.data, 0)),
                avail.eq(Mux(load, LINE_BITS, 0)),
                ended.eq(load & head.last),
                lines.eq(load),
                consumed.eq(0),
                draining.eq(~ended),
            ]
        with m.Else():
            load = Signal()
            m.d.comb += [load.eq(fifo.r_rdy & ~ended & (rem <= LINE_BITS)), fifo.r_en.eq(load)]
            appended = Mux(load, Cat(head.data, Const(0, LINE_BITS)) << rem[: LINE_LOG2 + 1], 0)
            m.d.sync += [
                buf.eq(shifted | appended),
                avail.eq(rem + Mux(load, LINE_BITS, 0)),
                ended.eq(ended | (load & head.last)),
                lines.eq(lines + load),
                consumed.eq(used),
            ]
        return m
