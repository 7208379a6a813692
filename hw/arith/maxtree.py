"""Pipelined floating-point max (comparator) tree over N = 2**k inputs: the running-max step of softmax.

Each comparator orders -0 < +0 and returns the canonical NaN when either input is NaN; the pairing
order is that of the adder tree (:func:`golden.arith.max_tree`). A comparator compares order keys
(sign-magnitude turned into an unsigned total order), then registers the winner.

Cycle model: one stage per level: latency log2(N), II 1.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

from golden.fp import FloatFormat
from hw.arith.fpcore import unpack
from hw.arith.tree import ReductionTree, check_n
from hw.cycles import CycleModel
from hw.pipeline import stage
from hw.share import shared_op


def cycle_model(n: int = 8, **_params) -> CycleModel:
    return CycleModel(latency=check_n(n))


def order_key(bits: Value, fmt: FloatFormat) -> Value:
    sign = bits[fmt.width - 1]
    return Mux(sign, ~bits, Cat(bits[: fmt.width - 1], Const(1, 1)))


@shared_op
def fp_max(m: Module, en: Value, a: Value, b: Value, fmt: FloatFormat, name: str = "max") -> Signal:
    nan = unpack(m, a, fmt, f"{name}_a").is_nan | unpack(m, b, fmt, f"{name}_b").is_nan
    larger = Mux(order_key(a, fmt) >= order_key(b, fmt), a, b)
    return stage(m, en, Mux(nan, fmt.nan_bits, larger), f"{name}_y")


class MaxTree(ReductionTree):
    """payload: array of ``n`` values in ``fmt`` -> their maximum."""

    def __init__(self, fmt: str = "bf16", n: int = 8):
        super().__init__(fp_max, 1, "max", fmt, n)
