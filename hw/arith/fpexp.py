"""Pipelined exponential unit exp(x) for BF16/FP16: the softmax exponent of L3, Duplex and Hermes.

Hardware approximation (bit-exact twin: :func:`golden.arith.fp_exp`, parameters
:data:`golden.arith.EXP_PARAMS`): fixed-point |x| times a log2(e) constant, split y = n + f, 2**f from a
65-entry table with linear interpolation, then one RNE round-and-pack. Worst-case error against true
exp over every finite input: 0.504 ULP (bf16), 0.559 ULP (fp16).

Cycle model: stage 1 unpacks, converts |x| to fixed point and multiplies by log2(e); stage 2 splits
y, looks up and interpolates 2**f; stage 3 rounds and packs: latency 3, II 1.
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal, Value, signed
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.arith import EXP_PARAMS
from golden.fp import FloatFormat, get_format
from hw.arith import cycles
from hw.arith.fpcore import EXP_BITS, round_pack, special, unpack
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, stage
from hw.share import shared_op

LATENCY = cycles.FPEXP


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


@shared_op
def fp_exp(m: Module, en: Value, x: Value, fmt: FloatFormat, name: str = "exp") -> Signal:
    """exp(x) as a LATENCY-stage datapath; returns the registered result."""
    p = EXP_PARAMS[fmt.name]
    u = unpack(m, x, fmt, f"{name}_x")

    # stage 1: X = floor(|x| * 2**x_frac), Y = X * log2e (truncated)
    fix_w = p.int_bits + p.x_frac
    shift = Signal(signed(EXP_BITS), name=f"{name}_fix_shift")
    m.d.comb += shift.eq(u.exp + p.x_frac)
    big_x = Signal(fix_w, name=f"{name}_fix_x")
    with m.If(shift >= 0):
        m.d.comb += big_x.eq(u.sig << shift.as_unsigned()[:5])
    with m.Elif(shift > -(fmt.man_bits + 1)):
        m.d.comb += big_x.eq(u.sig >> (-shift).as_unsigned()[:5])
    e_top = u.exp + fmt.man_bits  # exponent of the leading one of a normal value
    huge = u.sig[fmt.man_bits] & (e_top >= p.int_bits)
    y_w = fix_w + 2
    y_mag = stage(m, en, ((big_x * p.log2e) >> (p.x_frac + p.c_frac - p.y_frac))[:y_w], f"{name}_y_mag")
    sign = stage(m, en, u.sign, f"{name}_sign1")
    nan = stage(m, en, u.is_nan, f"{name}_nan1")
    to_inf = stage(m, en, ~u.is_nan & ~u.sign & (u.is_inf | huge), f"{name}_inf1")
    to_zero = stage(m, en, ~u.is_nan & u.sign & (u.is_inf | huge), f"{name}_zero1")

    # stage 2: y = n + f; 2**f by table + linear interpolation
    y = Signal(signed(y_w + 1), name=f"{name}_y")
    m.d.comb += y.eq(Mux(sign, -y_mag, y_mag))
    r_bits = p.y_frac - p.lut_bits
    k, r = y[r_bits : p.y_frac], y[:r_bits]
    table = p.table()
    lo = Array(Const(v, p.p_frac + 2) for v in table[:-1])[k]
    hi = Array(Const(v, p.p_frac + 2) for v in table[1:])[k]
    mant = stage(m, en, lo + (((hi - lo)[: p.p_frac] * r) >> r_bits), f"{name}_mant")
    n = stage(m, en, (y >> p.y_frac)[:EXP_BITS].as_signed(), f"{name}_n")
    nan2, inf2, zero2 = (
        stage(m, en, s, f"{name}_{nm}2") for s, nm in ((nan, "nan"), (to_inf, "inf"), (to_zero, "zero"))
    )

    # stage 3: round and pack
    normal = round_pack(m, 0, mant[: p.p_frac + 1], n - p.p_frac, 0, fmt, name)
    return stage(m, en, Mux(zero2, 0, special(fmt, nan2, inf2, 0, normal)), f"{name}_y_out")


class FpExp(wiring.Component):
    """payload x in ``fmt`` -> exp(x) in ``fmt``, one per cycle."""

    def __init__(self, fmt: str = "bf16"):
        self.fmt = get_format(fmt)
        if self.fmt.name not in EXP_PARAMS:
            raise ValueError(f"fmt: {fmt} not allowed; allowed: {sorted(EXP_PARAMS)}")
        super().__init__({"i": In(stream.Signature(self.fmt.width)), "o": Out(stream.Signature(self.fmt.width))})

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, LATENCY)
        m.d.comb += self.o.payload.eq(fp_exp(m, ctl.en, self.i.payload, self.fmt))
        return m
