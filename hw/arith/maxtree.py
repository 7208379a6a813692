"""Pipelined floating-point max (comparator) tree over N = 2**k inputs: the running-max step of softmax.

Each comparator orders -0 < +0 and returns the canonical NaN when either input is NaN; the pairing
order is that of the adder tree (:func:`golden.arith.max_tree`). A comparator compares order keys
(sign-magnitude turned into an unsigned total order), then registers the winner.

Cycle model: one stage per level: latency log2(N), II 1.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FloatFormat, get_format
from hw.arith.addtree import check_n
from hw.arith.fpcore import check_ieee, unpack
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, stage


def cycle_model(n: int = 8, **_params) -> CycleModel:
    return CycleModel(latency=check_n(n))


def order_key(bits: Value, fmt: FloatFormat) -> Value:
    sign = bits[fmt.width - 1]
    return Mux(sign, ~bits, Cat(bits[:fmt.width - 1], Const(1, 1)))


def fp_max(m: Module, en: Value, a: Value, b: Value, fmt: FloatFormat, name: str = "max") -> Signal:
    nan = unpack(m, a, fmt, f"{name}_a").is_nan | unpack(m, b, fmt, f"{name}_b").is_nan
    larger = Mux(order_key(a, fmt) >= order_key(b, fmt), a, b)
    return stage(m, en, Mux(nan, fmt.nan_bits, larger), f"{name}_y")


class MaxTree(wiring.Component):
    """payload: array of ``n`` values in ``fmt`` -> their maximum."""

    def __init__(self, fmt: str = "bf16", n: int = 8):
        self.fmt, self.n = get_format(fmt), n
        check_ieee(self.fmt, "fmt")
        self.levels = check_n(n)
        super().__init__({
            "i": In(stream.Signature(data.StructLayout({"x": data.ArrayLayout(self.fmt.width, n)}))),
            "o": Out(stream.Signature(self.fmt.width)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, self.levels)
        level = [self.i.payload.x[i] for i in range(self.n)]
        for j in range(self.levels):
            level = [fp_max(m, ctl.en, level[i], level[i + 1], self.fmt, f"max_l{j}_{i // 2}")
                     for i in range(0, len(level), 2)]
        m.d.comb += self.o.payload.eq(level[0])
        return m
