"""Pipelined floating-point adder (BF16/FP16/FP32/E5M2).

Used by every reduction in membound (adder trees, accumulators, softmax sums). Semantics:
:func:`golden.arith.fp_add` — the exact sum rounded once (RNE).

Algorithm: order the operands by magnitude, align the smaller one with three extra bits (guard, round,
sticky; the sticky bit ORs everything shifted further out), add or subtract, then normalise, round and
pack (:func:`hw.arith.fpcore.round_pack`). Three extra bits make the one rounding exact.

Cycle model: stage 1 unpacks, orders and aligns; stage 2 adds, normalises, rounds and packs:
latency 2, II 1.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FloatFormat, get_format
from hw.arith import cycles
from hw.arith.fpcore import check_ieee, round_pack, special, unpack
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, stage
from hw.share import shared_op

LATENCY = cycles.FPADD
GRS = 3  # guard, round and sticky bits kept below the significand during alignment


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


@shared_op
def fp_add(m: Module, en: Value, a: Value, b: Value, fmt: FloatFormat, name: str = "add") -> Signal:
    """a + b as a LATENCY-stage datapath; returns the registered result."""
    ua, ub = unpack(m, a, fmt, f"{name}_a"), unpack(m, b, fmt, f"{name}_b")
    mag = fmt.width - 1
    swap = b[:mag] > a[:mag]  # for non-NaN values the magnitude order is the bit-pattern order
    x_sig, y_sig = Mux(swap, ub.sig, ua.sig), Mux(swap, ua.sig, ub.sig)
    x_exp, y_exp = Mux(swap, ub.exp, ua.exp), Mux(swap, ua.exp, ub.exp)
    x_sign, y_sign = Mux(swap, ub.sign, ua.sign), Mux(swap, ua.sign, ub.sign)
    wsig = fmt.man_bits + 1 + GRS
    dist = Signal(range(wsig + 1), name=f"{name}_dist")
    diff = (x_exp - y_exp).as_unsigned()
    m.d.comb += dist.eq(Mux(diff > wsig, wsig, diff[: len(dist)]))
    y_ext = Cat(Const(0, GRS), y_sig)
    y_shift = Signal(wsig, name=f"{name}_yshift")
    lost = Signal(name=f"{name}_lost")  # any one bit shifted out: folded into the sticky LSB
    m.d.comb += [y_shift.eq(y_ext >> dist), lost.eq((y_ext & ((Const(1, wsig + 1) << dist) - 1)) != 0)]

    xs = stage(m, en, Cat(Const(0, GRS), x_sig), f"{name}_xs")
    ys = stage(m, en, y_shift | lost, f"{name}_ys")
    exp = stage(m, en, x_exp, f"{name}_exp")
    sign = stage(m, en, x_sign, f"{name}_sign")
    sub = stage(m, en, x_sign ^ y_sign, f"{name}_sub")
    both_neg = stage(m, en, ua.sign & ub.sign, f"{name}_bneg")
    nan = stage(m, en, ua.is_nan | ub.is_nan | (ua.is_inf & ub.is_inf & (ua.sign != ub.sign)), f"{name}_nan")
    inf = stage(m, en, ua.is_inf | ub.is_inf, f"{name}_inf")
    inf_sign = stage(m, en, Mux(ua.is_inf, ua.sign, ub.sign), f"{name}_isign")

    total = Signal(wsig + 1, name=f"{name}_total")
    m.d.comb += total.eq(Mux(sub, xs - ys, xs + ys))
    rsign = Mux(total == 0, both_neg, sign)  # exact zero: +0 unless both addends are -0
    normal = round_pack(m, rsign, total, exp - GRS, 0, fmt, name)
    return stage(m, en, special(fmt, nan, inf, inf_sign, normal), f"{name}_y")


class FpAdd(wiring.Component):
    """One sum per cycle: payload {a, b} -> a + b, all in ``fmt``."""

    def __init__(self, fmt: str = "bf16"):
        self.fmt = get_format(fmt)
        check_ieee(self.fmt, "fmt")
        w = self.fmt.width
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"a": w, "b": w}))),
                "o": Out(stream.Signature(w)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, LATENCY)
        m.d.comb += self.o.payload.eq(fp_add(m, ctl.en, self.i.payload.a, self.i.payload.b, self.fmt))
        return m
