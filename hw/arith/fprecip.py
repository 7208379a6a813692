"""Pipelined reciprocal unit 1/x, correctly rounded (RNE), for BF16/FP16/FP32: softmax normalisation.

Algorithm (bit-exact twin: :func:`golden.arith.fp_recip`): normalise the significand (subnormal inputs
by a leading-zero count), restoring array division Q = floor(2**(2M+2) / sig) with the remainder as the
sticky bit, then one round-and-pack: Q has at least M+2 significant bits, so a guard bit always exists.

Cycle model: stage 1 unpacks and normalises, stage 2 divides, stage 3 rounds and packs:
latency 3, II 1.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import get_format
from hw.arith.fpcore import EXP_BITS, check_ieee, leading_zeros, round_pack, special, unpack
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, stage

LATENCY = 3


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


class FpRecip(wiring.Component):
    """payload x in ``fmt`` -> 1/x in ``fmt``, one per cycle."""

    def __init__(self, fmt: str = "bf16"):
        self.fmt = get_format(fmt)
        check_ieee(self.fmt, "fmt")
        super().__init__({"i": In(stream.Signature(self.fmt.width)),
                          "o": Out(stream.Signature(self.fmt.width))})

    def elaborate(self, platform) -> Module:
        m = Module()
        fmt = self.fmt
        mb = fmt.man_bits
        ctl = PipelineCtl(m, self.i, self.o, LATENCY)
        en = ctl.en
        u = unpack(m, self.i.payload, fmt, "x")
        lz = leading_zeros(m, u.sig, "norm")

        # stage 1: normalise
        sig = stage(m, en, (u.sig << lz)[:mb + 1], "sig1")
        exp = stage(m, en, (u.exp - lz)[:EXP_BITS].as_signed(), "exp1")
        sign = stage(m, en, u.sign, "sign1")
        nan, inf_in, zero_in = (stage(m, en, s, f"{nm}1") for s, nm in
                                ((u.is_nan, "nan"), (u.is_inf, "inf"), (u.is_zero, "zero")))

        # stage 2: restoring division of 2**(2M+2) by sig, quotient bits MSB first
        w = 2 * mb + 4
        rem = Const(1 << (2 * mb + 2), w)
        q = []
        for i in reversed(range(mb + 3)):
            trial = Signal(signed(w + 1), name=f"div_trial{i}")
            bit = Signal(name=f"div_q{i}")
            nxt = Signal(w, name=f"div_rem{i}")
            m.d.comb += [trial.eq(rem - (sig << i)), bit.eq(trial >= 0), nxt.eq(Mux(bit, trial[:w], rem))]
            q.append(bit)
            rem = nxt
        quot = stage(m, en, Cat(*reversed(q)), "quot")
        sticky = stage(m, en, rem != 0, "sticky")
        exp2 = stage(m, en, (-(2 * mb + 2) - exp)[:EXP_BITS].as_signed(), "exp2")
        sign2 = stage(m, en, sign, "sign2")
        nan2, inf2, zero2 = (stage(m, en, s, f"{nm}2") for s, nm in
                             ((nan, "nan"), (zero_in, "inf"), (inf_in, "zero")))

        # stage 3: round and pack; 1/±0 = ±Inf, 1/±Inf = ±0
        normal = round_pack(m, sign2, quot, exp2, sticky, fmt, "recip")
        out = Mux(zero2, Cat(Const(0, fmt.width - 1), sign2), special(fmt, nan2, inf2, sign2, normal))
        m.d.comb += self.o.payload.eq(stage(m, en, out, "y_out"))
        return m
