"""DECA PE expansion and scaling stages (DECA §6.1 items 3 and 4): a stall-all pipeline from the vOp
register (SD) through the expansion crossbar into DD, then W BF16 multipliers by the group scale
(``hw.arith.fpmul``, 2 stages; bypassed for unscaled tiles), to the TOut write.

The registers stay whatever the format needs, so the latency is format-independent: SD, DD and two
multiplier stages, ``PIPE_DEPTH`` = 4 cycles at II 1.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.deca_spec import TILE, VALUE_BITS, W
from golden.fp import BF16
from hw.arith import fpmul
from hw.deca.dequant import vop_layout
from hw.deca.expand import Expand
from hw.deca.tout import ERR, chunk_in
from hw.pipeline import PipelineCtl, delay, stage

PIPE_DEPTH = 2 + fpmul.LATENCY  # SD, DD, the multiplier's stages


class ScaleStage(wiring.Component):
    """Members: ``i`` In(stream of :func:`~hw.deca.dequant.vop_layout`) — one vOp per entry;
    ``o`` Out(stream of :func:`~hw.deca.tout.chunk_in`) — its W output lanes for TOut."""

    def __init__(self, w: int = W, tile: int = TILE):
        self.w, self.tile = w, tile
        super().__init__(
            {"i": In(stream.Signature(vop_layout(w, tile))), "o": Out(stream.Signature(chunk_in(w, tile)))}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        w = self.w
        lanes = data.ArrayLayout(VALUE_BITS, w)
        meta = data.StructLayout({"scale": VALUE_BITS, "scaled": 1, "vop": range(self.tile // w), "err": ERR})
        m.submodules.expand = expand = Expand(w)
        en = PipelineCtl(m, self.i, self.o, PIPE_DEPTH).en
        sd = data.View(vop_layout(w, self.tile), stage(m, en, self.i.payload.as_value(), "sd"))
        m.d.comb += [expand.mask.eq(sd.mask), expand.sd.eq(sd.vals)]
        dd = data.View(lanes, stage(m, en, expand.dd.as_value(), "dd"))
        sd_meta = Signal(meta)  # what travels with the lanes
        m.d.comb += [getattr(sd_meta, f).eq(getattr(sd, f)) for f in ("scale", "scaled", "vop", "err")]
        dd_meta = data.View(meta, stage(m, en, sd_meta.as_value(), "dd_meta"))
        prods = [fpmul.fp_mul(m, en, dd[k], dd_meta.scale, BF16, BF16, f"scale{k}") for k in range(w)]
        dd_late = data.View(lanes, delay(m, en, dd.as_value(), fpmul.LATENCY, "dd_late"))
        late = data.View(meta, delay(m, en, dd_meta.as_value(), fpmul.LATENCY, "meta_late"))
        for k in range(w):
            m.d.comb += self.o.payload.data[k].eq(Mux(late.scaled, prods[k], dd_late[k]))
        m.d.comb += [self.o.payload.vop.eq(late.vop), self.o.payload.err.eq(late.err)]
        return m
