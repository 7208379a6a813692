"""Pipelined floating-point adder tree: the sum of N = 2**k inputs per cycle.

The reduction stage of GEMV/GEMM units and softmax denominators. Reduction order is fixed and
pairwise (:mod:`hw.arith.tree`), each adder rounding (:func:`golden.arith.add_tree`).

Cycle model: log2(N) adder levels of fpadd.LATENCY stages each: latency 2*log2(N), II 1.
"""

from __future__ import annotations

from hw.arith import fpadd
from hw.arith.tree import ReductionTree, check_n
from hw.cycles import CycleModel


def cycle_model(n: int = 8, **_params) -> CycleModel:
    return CycleModel(latency=fpadd.LATENCY * check_n(n))


class AddTree(ReductionTree):
    """payload: array of ``n`` values in ``fmt`` -> their pairwise-ordered sum."""

    def __init__(self, fmt: str = "fp32", n: int = 8):
        super().__init__(fpadd.fp_add, fpadd.LATENCY, "add", fmt, n)
