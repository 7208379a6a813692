"""Pipelined multiply-add y = a*b + c with a wider accumulator format (e.g. BF16 x BF16 + FP32).

The multiply-accumulate cell of the NDP GEMV unit (Hermes), the L3 bank PUs and the Duplex Logic-PIM
MAC arrays. Separate, not fused: the product is rounded to the accumulator format, then added
(:func:`golden.arith.fp_mac`). ``c`` is delayed alongside the multiplier.

Cycle model: multiplier (2) then adder (2): latency 4, II 1.
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import get_format
from hw.arith import cycles, fpadd, fpmul
from hw.arith.fpcore import check_ieee
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, delay

LATENCY = cycles.FPMAC


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


class FpMac(wiring.Component):
    """payload {a, b} in ``fmt_in`` and {c} in ``fmt_acc`` -> a*b + c in ``fmt_acc``, one per cycle."""

    def __init__(self, fmt_in: str = "bf16", fmt_acc: str = "fp32"):
        self.fmt_in, self.fmt_acc = get_format(fmt_in), get_format(fmt_acc)
        check_ieee(self.fmt_in, "fmt_in")
        check_ieee(self.fmt_acc, "fmt_acc")
        w, wa = self.fmt_in.width, self.fmt_acc.width
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"a": w, "b": w, "c": wa}))),
                "o": Out(stream.Signature(wa)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, LATENCY)
        p = self.i.payload
        prod = fpmul.fp_mul(m, ctl.en, p.a, p.b, self.fmt_in, self.fmt_acc)
        c = delay(m, ctl.en, p.c, fpmul.LATENCY, "c_dly")
        m.d.comb += self.o.payload.eq(fpadd.fp_add(m, ctl.en, prod, c, self.fmt_acc))
        return m
