"""Pipelined floating-point multiplier (BF16/FP16/FP32/E5M2, optionally widening).

Used by the DECA group-scaling stage, the Hermes NDP GEMV multipliers, the L3 PUs and the Duplex
Logic-PIM MAC arrays. Semantics: :func:`golden.arith.fp_mul`.

Cycle model: stage 1 unpacks and multiplies the significands, stage 2 normalises, rounds and packs:
latency 2, II 1.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FloatFormat, get_format
from hw.arith import cycles
from hw.arith.fpcore import EXP_BITS, check_ieee, round_pack, special, unpack
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, stage
from hw.share import shared_op

LATENCY = cycles.FPMUL


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


@shared_op
def fp_mul(
    m: Module, en: Value, a: Value, b: Value, fmt_in: FloatFormat, fmt_out: FloatFormat, name: str = "mul"
) -> Signal:
    """a * b as a LATENCY-stage datapath; returns the registered result."""
    ua, ub = unpack(m, a, fmt_in, f"{name}_a"), unpack(m, b, fmt_in, f"{name}_b")
    sig = stage(m, en, ua.sig * ub.sig, f"{name}_sig")
    exp = stage(m, en, (ua.exp + ub.exp)[:EXP_BITS].as_signed(), f"{name}_exp")
    sign = stage(m, en, ua.sign ^ ub.sign, f"{name}_sign")
    nan = stage(m, en, ua.is_nan | ub.is_nan | (ua.is_inf & ub.is_zero) | (ua.is_zero & ub.is_inf), f"{name}_nan")
    inf = stage(m, en, ua.is_inf | ub.is_inf, f"{name}_inf")
    normal = round_pack(m, sign, sig, exp, 0, fmt_out, name)
    return stage(m, en, special(fmt_out, nan, inf, sign, normal), f"{name}_y")


class FpMul(wiring.Component):
    """One product per cycle: payload {a, b} in ``fmt_in`` -> product bits in ``fmt_out``."""

    def __init__(self, fmt_in: str = "bf16", fmt_out: str | None = None):
        self.fmt_in = get_format(fmt_in)
        self.fmt_out = get_format(fmt_out or fmt_in)
        check_ieee(self.fmt_in, "fmt_in")
        check_ieee(self.fmt_out, "fmt_out")
        w = self.fmt_in.width
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"a": w, "b": w}))),
                "o": Out(stream.Signature(self.fmt_out.width)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, LATENCY)
        m.d.comb += self.o.payload.eq(fp_mul(m, ctl.en, self.i.payload.a, self.i.payload.b, self.fmt_in, self.fmt_out))
        return m
