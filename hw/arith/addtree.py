"""Pipelined floating-point adder tree: the sum of N = 2**k inputs per cycle.

The reduction stage of GEMV/GEMM units and softmax denominators. Reduction order is fixed and
pairwise: level j adds elements 2i and 2i+1 of level j-1, each adder rounding
(:func:`golden.arith.add_tree`).

Cycle model: log2(N) adder levels of fpadd.LATENCY stages each: latency 2*log2(N), II 1.
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import get_format
from hw.arith import fpadd
from hw.arith.fpcore import check_ieee
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl


def check_n(n: int) -> int:
    if n < 2 or n & (n - 1) or n > 256:
        raise ValueError(f"n: {n} not allowed; a power of two from 2 to 256")
    return n.bit_length() - 1


def cycle_model(n: int = 8, **_params) -> CycleModel:
    return CycleModel(latency=fpadd.LATENCY * check_n(n))


class AddTree(wiring.Component):
    """payload: array of ``n`` values in ``fmt`` -> their pairwise-ordered sum."""

    def __init__(self, fmt: str = "fp32", n: int = 8):
        self.fmt, self.n = get_format(fmt), n
        check_ieee(self.fmt, "fmt")
        self.levels = check_n(n)
        super().__init__({
            "i": In(stream.Signature(data.StructLayout({"x": data.ArrayLayout(self.fmt.width, n)}))),
            "o": Out(stream.Signature(self.fmt.width)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, fpadd.LATENCY * self.levels)
        level = [self.i.payload.x[i] for i in range(self.n)]
        for j in range(self.levels):
            level = [fpadd.fp_add(m, ctl.en, level[i], level[i + 1], self.fmt, f"add_l{j}_{i // 2}")
                     for i in range(0, len(level), 2)]
        m.d.comb += self.o.payload.eq(level[0])
        return m
