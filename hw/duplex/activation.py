"""Duplex activation module (Duplex §IV-D: "gated activation (SiLU) for MoE"): ``lanes`` FP16 lanes of
SiLU(gate) * up, the step between an expert's gate/up projections and its down projection (semantics:
``golden.duplex.silu_gate``; the paper gives no design, so each lane is the library's exp, adder,
reciprocal and two multipliers in the golden order [S]).

Cycle model: exp(-g) 3, 1 + e 2, reciprocal 3, g * r 2, * u 2: latency 12, II 1 (one beat of ``lanes``
pairs per cycle).
"""

from __future__ import annotations

from amaranth.hdl import Const, Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.duplex import ONE
from golden.duplex_spec import ACT_LANES, ELEM_BITS
from golden.fp import FP16
from hw.arith import fpadd, fpexp, fpmul, fprecip
from hw.cycles import CycleModel
from hw.duplex.cycles import ACTIVATION_LATENCY
from hw.pipeline import PipelineCtl, delay

LATENCY = ACTIVATION_LATENCY


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


class Activation(wiring.Component):
    """Members: ``i`` In(stream of {g, u: lanes FP16}) — gate and up projections; ``o`` Out(stream of
    lanes FP16) — SiLU(g) * u."""

    def __init__(self, lanes: int = ACT_LANES):
        if lanes < 1 or lanes > 256:
            raise ValueError(f"lanes: {lanes} not allowed; 1 to 256")
        self.lanes = lanes
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {"i": In(stream.Signature(data.StructLayout({"g": vec, "u": vec}))), "o": Out(stream.Signature(vec))}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, LATENCY)
        en, p = ctl.en, self.i.payload
        to_mul_g = fpexp.LATENCY + fpadd.LATENCY + fprecip.LATENCY
        for j in range(self.lanes):
            g = p.g[j]
            e = fpexp.fp_exp(m, en, g ^ FP16.sign_bit, FP16, f"exp{j}")
            r = fprecip.fp_recip(
                m, en, fpadd.fp_add(m, en, Const(ONE, ELEM_BITS), e, FP16, f"add{j}"), FP16, f"recip{j}"
            )
            s = fpmul.fp_mul(m, en, delay(m, en, g, to_mul_g, f"g_dly{j}_"), r, FP16, FP16, f"mulg{j}")
            u = delay(m, en, p.u[j], to_mul_g + fpmul.LATENCY, f"u_dly{j}_")
            m.d.comb += self.o.payload[j].eq(fpmul.fp_mul(m, en, s, u, FP16, FP16, f"mulu{j}"))
        return m
