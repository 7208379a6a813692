"""A pipelined pairwise reduction tree over N = 2**k inputs, shared by the adder and max trees.

Reduction order is fixed: level j combines elements 2i and 2i+1 of level j-1, so for 4 inputs
((x0 op x1) op (x2 op x3)). Each level is a datapath of ``level_latency`` pipeline stages.
"""

from __future__ import annotations

from collections.abc import Callable

from amaranth.hdl import Module, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FloatFormat, get_format
from hw.arith.fpcore import check_ieee
from hw.pipeline import PipelineCtl

LevelOp = Callable[[Module, Value, Value, Value, FloatFormat, str], Signal]


def check_n(n: int) -> int:
    if n < 2 or n & (n - 1) or n > 512:
        raise ValueError(f"n: {n} not allowed; a power of two from 2 to 512")
    return n.bit_length() - 1


class ReductionTree(wiring.Component):
    """payload: array of ``n`` values in ``fmt`` -> ``op`` folded pairwise over them."""

    def __init__(self, op: LevelOp, level_latency: int, name: str, fmt: str, n: int):
        self.fmt, self.n, self.op, self.op_name = get_format(fmt), n, op, name
        check_ieee(self.fmt, "fmt")
        self.levels = check_n(n)
        self.latency = level_latency * self.levels
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"x": data.ArrayLayout(self.fmt.width, n)}))),
                "o": Out(stream.Signature(self.fmt.width)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, self.latency)
        level = [self.i.payload.x[i] for i in range(self.n)]
        for j in range(self.levels):
            level = [
                self.op(m, ctl.en, level[i], level[i + 1], self.fmt, f"{self.op_name}_l{j}_{i // 2}")
                for i in range(0, len(level), 2)
            ]
        m.d.comb += self.o.payload.eq(level[0])
        return m
