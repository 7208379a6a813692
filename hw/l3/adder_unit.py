"""L3 adder unit (AU) of the rank PU (L3 §4.2, §6.4): eight FP16 adders with configurable interconnect.

* Score mode: the 8 chips' partial dot products of one logic bank through an 8-input pairwise tree
  ((x0+x1)+(x2+x3))+((x4+x5)+(x6+x7)) — 7 adders — giving that bank's token's score.
* Context mode: the 4 bank groups' accumulators of one output dimension through the left half of the
  tree, (x0+x1)+(x2+x3); the last level passes it through.

Semantics: ``golden.l3.adder_unit``. Cycle model: three adder levels of fpadd.LATENCY: latency 6, II 1,
the same in both modes (context's result waits one level in a register).
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FP16
from golden.l3_spec import CHIPS, ELEM_BITS, Mode
from hw.arith import fpadd
from hw.cycles import CycleModel
from hw.l3.cycles import ADDER_LEVELS, adder_latency
from hw.pipeline import PipelineCtl, delay

LEVELS = ADDER_LEVELS
IN = data.StructLayout({"mode": 1, "x": data.ArrayLayout(ELEM_BITS, CHIPS)})


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=adder_latency())


class AdderUnit(wiring.Component):
    """Members: ``i`` In(stream of {mode, x[8]}); ``o`` Out(stream of the FP16 sum)."""

    def __init__(self):
        super().__init__({"i": In(stream.Signature(IN)), "o": Out(stream.Signature(ELEM_BITS))})

    def elaborate(self, platform) -> Module:
        m = Module()
        latency = adder_latency()
        en = PipelineCtl(m, self.i, self.o, latency).en
        level = list(self.i.payload.x)
        for j in range(LEVELS):
            level = [
                fpadd.fp_add(m, en, level[i], level[i + 1], FP16, f"au{j}_{i // 2}") for i in range(0, len(level), 2)
            ]
            if j == LEVELS - 2:
                half = delay(m, en, level[0], fpadd.LATENCY, "ctx")  # context: (x0+x1)+(x2+x3), one level later
        ctx = delay(m, en, self.i.payload.mode == Mode.CONTEXT, latency, "mode")
        m.d.comb += self.o.payload.eq(Mux(ctx, half, level[0]))
        return m
