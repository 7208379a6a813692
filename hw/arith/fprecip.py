"""Pipelined reciprocal unit 1/x, correctly rounded (RNE), for BF16/FP16/FP32: softmax normalisation.

Algorithm (bit-exact twin: :func:`golden.arith.fp_recip`): normalise the significand (subnormal inputs
by a leading-zero count), restoring array division Q = floor(2**(2M+2) / sig) with the remainder as the
sticky bit, then one round-and-pack: Q has at least M+2 significant bits, so a guard bit always exists.

Cycle model: stage 1 unpacks and normalises, stage 2 divides, stage 3 rounds and packs:
latency 3, II 1.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FloatFormat, get_format
from hw.arith import cycles
from hw.arith.fpcore import EXP_BITS, check_ieee, leading_zeros, round_pack, special, unpack
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, stage
from hw.share import shared_op

LATENCY = cycles.FPRECIP


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


@shared_op
def fp_recip(m: Module, en: Value, x: Value, fmt: FloatFormat, name: str = "recip") -> Signal:
    """1/x as a LATENCY-stage datapath; returns the registered result."""
    mb = fmt.man_bits
    u = unpack(m, x, fmt, f"{name}_x")
    lz = leading_zeros(m, u.sig, f"{name}_norm")

    # stage 1: normalise
    sig = stage(m, en, (u.sig << lz)[: mb + 1], f"{name}_sig1")
    exp = stage(m, en, (u.exp - lz)[:EXP_BITS].as_signed(), f"{name}_exp1")
    sign = stage(m, en, u.sign, f"{name}_sign1")
    nan, inf_in, zero_in = (
        stage(m, en, s, f"{name}_{nm}1") for s, nm in ((u.is_nan, "nan"), (u.is_inf, "inf"), (u.is_zero, "zero"))
    )

    # stage 2: restoring division of 2**(2M+2) by sig, quotient bits MSB first
    w = 2 * mb + 4
    rem = Const(1 << (2 * mb + 2), w)
    q = []
    for i in reversed(range(mb + 3)):
        trial = Signal(signed(w + 1), name=f"{name}_div_trial{i}")
        bit = Signal(name=f"{name}_div_q{i}")
        nxt = Signal(w, name=f"{name}_div_rem{i}")
        m.d.comb += [trial.eq(rem - (sig << i)), bit.eq(trial >= 0), nxt.eq(Mux(bit, trial[:w], rem))]
        q.append(bit)
        rem = nxt
    quot = stage(m, en, Cat(*reversed(q)), f"{name}_quot")
    sticky = stage(m, en, rem != 0, f"{name}_sticky")
    exp2 = stage(m, en, (-(2 * mb + 2) - exp)[:EXP_BITS].as_signed(), f"{name}_exp2")
    sign2 = stage(m, en, sign, f"{name}_sign2")
    nan2, inf2, zero2 = (
        stage(m, en, s, f"{name}_{nm}2") for s, nm in ((nan, "nan"), (zero_in, "inf"), (inf_in, "zero"))
    )

    # stage 3: round and pack; 1/±0 = ±Inf, 1/±Inf = ±0
    normal = round_pack(m, sign2, quot, exp2, sticky, fmt, name)
    out = Mux(zero2, Cat(Const(0, fmt.width - 1), sign2), special(fmt, nan2, inf2, sign2, normal))
    return stage(m, en, out, f"{name}_y_out")


class FpRecip(wiring.Component):
    """payload x in ``fmt`` -> 1/x in ``fmt``, one per cycle."""

    def __init__(self, fmt: str = "bf16"):
        self.fmt = get_format(fmt)
        check_ieee(self.fmt, "fmt")
        super().__init__({"i": In(stream.Signature(self.fmt.width)), "o": Out(stream.Signature(self.fmt.width))})

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, LATENCY)
        m.d.comb += self.o.payload.eq(fp_recip(m, ctl.en, self.i.payload, self.fmt))
        return m
