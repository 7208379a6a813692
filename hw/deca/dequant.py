"""DECA PE dequantization stage (DECA §6.1 items 1, 6, 7): reads each vOp's window of stored values from
the SQQ window, Lq per cycle through the LUT array (raw for 16-bit values), and hands the vOp — values
dense-packed in window order, its mask word, its group scale and the tile's flags so far — to the
expansion stage.

A vOp's window is W values for a dense tile and popcount(mask word) for a sparse one; the stage holds
a vOp for max(1, ceil(Wnd/Lq)) cycles (``hw.deca.cycles``). A tile's descriptor is accepted on its last
vOp's final cycle. Streams that end early read as zeros and flag ``*_short``; leftovers flag ``*_long``
(``golden.deca.pe_decompress``).
"""

from __future__ import annotations

from amaranth.hdl import Array, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.deca_spec import LANES, LINE_BITS, RAW_BITS, TILE, VALUE_BITS, W
from hw.deca.descriptor import CMD, DescriptorDecode
from hw.deca.expand import popcount
from hw.deca.lut_array import ADDR_BITS, LookupSignature
from hw.deca.queues import SqqReadSignature, TileReadSignature
from hw.deca.tout import ERR


def vop_layout(w: int, tile: int = TILE) -> data.StructLayout:
    """One vOp for the expansion stage: ``vals`` (the window's values, dense-packed from lane 0),
    ``mask`` (its mask word; all ones dense, zero for a bad descriptor), ``scale`` (its group's BF16
    scale), ``scaled`` (multiply), ``vop`` (index within the tile), ``err`` (the tile's flags so far; final
    on the last vOp)."""
    return data.StructLayout(
        {
            "vals": data.ArrayLayout(VALUE_BITS, w),
            "mask": w,
            "scale": VALUE_BITS,
            "scaled": 1,
            "vop": range(tile // w),
            "err": ERR,
        }
    )


class Dequantize(wiring.Component):
    """Members:
    ``cmd``: In(stream of CMD) — one descriptor per tile, accepted when the tile's last vOp is handed on;
    ``sqq``: In(:class:`~hw.deca.queues.SqqReadSignature`) — the value window;
    ``maskq``: In(TileReadSignature(W)) — mask words (sparse tiles);
    ``scaleq``: In(TileReadSignature(16)) — BF16 group scales (scaled tiles);
    ``lut``: Out(:class:`~hw.deca.lut_array.LookupSignature`) — the LUT array's lookups;
    ``o``: Out(stream of :func:`vop_layout`) — one entry per vOp.
    """

    def __init__(self, w: int = W, lanes: int = LANES, tile: int = TILE):
        self.w, self.lanes, self.nv = w, lanes, tile // w
        self.lookups = min(w, 4 * lanes)
        super().__init__(
            {
                "cmd": In(stream.Signature(CMD)),
                "sqq": In(SqqReadSignature()),
                "maskq": In(TileReadSignature(w)),
                "scaleq": In(TileReadSignature(VALUE_BITS)),
                "lut": Out(LookupSignature(self.lookups)),
                "o": Out(stream.Signature(vop_layout(w, tile))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        w, nv, sqq, maskq, scaleq, o = self.w, self.nv, self.sqq, self.maskq, self.scaleq, self.o
        m.submodules.desc = d = DescriptorDecode(w, self.lanes)
        m.d.comb += d.cmd.eq(self.cmd.payload)
        vop, done = Signal(range(nv)), Signal(range(w + 1))  # vOp of the tile, its values read so far
        acc = Signal(data.ArrayLayout(VALUE_BITS, w))  # values of a multi-cycle window read so far
        err, cur_scale = Signal(ERR), Signal(VALUE_BITS)

        word = Signal(w)
        m.d.comb += word.eq(Mux(d.bad, 0, Mux(d.sparse, maskq.data, (1 << w) - 1)))
        wnd = popcount(m, word, "wnd")
        remaining, n = Signal(range(w + 1)), Signal(range(w + 1))  # values left in the window; read now
        m.d.comb += [remaining.eq(wnd - done), n.eq(Mux(remaining < d.lq, remaining, d.lq))]
        need, take = Signal(range(LINE_BITS + 1)), Signal(range(LINE_BITS + 1))
        m.d.comb += [need.eq(n * d.bits), take.eq(Mux(sqq.avail < need, sqq.avail, need))]
        finishing, last_vop = (done + n) == wnd, vop == nv - 1
        need_scale = d.scale_on & ((vop & d.group_vops) == 0)
        go = Signal()
        m.d.comb += go.eq(
            self.cmd.valid
            & ~sqq.draining
            & ((sqq.avail >= need) | sqq.ended)
            & (~d.sparse | maskq.avail)
            & (~need_scale | scaleq.avail)
            & (~(finishing & last_vop) | sqq.started)
            & (~finishing | o.ready)
        )
        m.d.comb += sqq.take.eq(Mux(go, take, 0))
        merged = self._lookup(m, d, acc, done, n)

        flags, end_flags = self._flags(m, d, err, need)
        m.d.comb += [
            o.valid.eq(go & finishing),
            o.payload.vals.eq(merged),
            o.payload.mask.eq(word),
            o.payload.scaled.eq(d.scale_on),
            o.payload.vop.eq(vop),
            o.payload.scale.eq(Mux(need_scale, scaleq.data, cur_scale)),
            o.payload.err.eq(Mux(last_vop, end_flags, flags)),
        ]
        with m.If(go):
            with m.If(finishing):
                m.d.comb += [maskq.pop.eq(d.sparse), scaleq.pop.eq(need_scale)]
                m.d.sync += [done.eq(0), vop.eq(vop + 1), err.eq(flags)]
                with m.If(need_scale):
                    m.d.sync += cur_scale.eq(scaleq.data)
                with m.If(last_vop):
                    m.d.comb += [
                        self.cmd.ready.eq(1),
                        sqq.end_tile.eq(1),
                        maskq.end_tile.eq(d.sparse),
                        scaleq.end_tile.eq(d.scaled),
                    ]
                    m.d.sync += [vop.eq(0), err.eq(0)]
            with m.Else():
                m.d.sync += [done.eq(done + n), acc.eq(merged), err.eq(flags)]
        return m

    def _flags(self, m: Module, d: DescriptorDecode, err: Signal, need: Value) -> tuple[Signal, Signal]:
        """The tile's error flags so far with this vOp's (a short value stream, a bad descriptor), and at
        its last vOp with the queues' end-of-tile checks (``golden.deca_spec.Err``)."""
        sqq, maskq, scaleq = self.sqq, self.maskq, self.scaleq
        flags, end_flags = Signal(ERR), Signal(ERR)
        m.d.comb += [
            flags.eq(err),
            flags.sqq_short.eq(err.sqq_short | (sqq.ended & (sqq.avail < need))),
            flags.bad_cfg.eq(err.bad_cfg | d.bad),
        ]
        m.d.comb += [
            end_flags.eq(flags),
            end_flags.sqq_long.eq(sqq.long),
            end_flags.mask_short.eq(d.sparse & maskq.short),
            end_flags.mask_long.eq(d.sparse & maskq.long),
            end_flags.scale_short.eq(d.scaled & scaleq.short),
            end_flags.scale_long.eq(d.scaled & scaleq.long),
        ]
        return flags, end_flags

    def _lookup(self, m: Module, d: DescriptorDecode, acc, done, n) -> Signal:
        """This cycle's codes from the window through the LUT array, placed at lanes done..done+n-1."""
        sqq, lut = self.sqq, self.lut
        m.d.comb += lut.bits.eq(d.bits)
        vals = []
        for j in range(self.lookups):
            code = Signal(RAW_BITS, name=f"code{j}")
            with m.Switch(d.bits):
                for q in (*range(1, 9), RAW_BITS):
                    with m.Case(q):
                        m.d.comb += code.eq(sqq.bits[j * q : (j + 1) * q])
            m.d.comb += lut.codes[j].eq(code[:ADDR_BITS])
            ok = (j + 1) * d.bits <= sqq.avail  # a value only partly present after the stream ended reads 0
            v = Signal(VALUE_BITS, name=f"val{j}")
            m.d.comb += v.eq(Mux(ok, Mux(d.bits == RAW_BITS, code, lut.values[j]), 0))
            vals.append(v)
        merged = Signal(data.ArrayLayout(VALUE_BITS, self.w))
        vals_arr = Array(vals)
        iw = max(1, (self.lookups - 1).bit_length())
        for k in range(self.w):
            inside = (k >= done) & (k < done + n)
            m.d.comb += merged[k].eq(Mux(inside, vals_arr[(k - done)[:iw]], acc[k]))
        return merged
