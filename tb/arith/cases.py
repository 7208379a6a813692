"""The arithmetic testbench cases: for each hw/arith unit, its golden twin, stimulus and cycle model, as
the shared stream testbench (tb/stream_tb.py) takes them: one vector in, one result out.

``SPECS`` lists the configurations that ``make sim`` and the test suite run.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import random
from collections.abc import Callable

from golden import arith
from golden.fp import get_format
from hw.arith.cycles import UNIT_ADDTREE, UNIT_FPADD, UNIT_FPEXP, UNIT_FPMAC, UNIT_FPMUL, UNIT_FPRECIP, UNIT_MAXTREE
from tb.case import StreamCase
from tb.runner import TbSpec
from tb.stimulus import edge_values, near, random_value

Vector = dict


def _pairs(vals: list[int]) -> list[Vector]:
    return [{"a": a, "b": b} for a, b in itertools.product(vals, vals)]


def _case_fpmul(fmt_in: str = "bf16", fmt_out: str | None = None) -> tuple:
    fi, fo = get_format(fmt_in), get_format(fmt_out or fmt_in)

    def rand(rng: random.Random) -> Vector:
        a = random_value(rng, fi)
        # half the time keep the product near the output's range edges (overflow/underflow)
        b = random_value(rng, fi) if rng.random() < 0.5 else random_value(rng, fi, exp_span=fi.bias)
        return {"a": a, "b": b}

    return (lambda v: arith.fp_mul(v["a"], v["b"], fi, fo)), rand, _pairs(edge_values(fi))


def _case_fpadd(fmt: str = "bf16") -> tuple:
    f = get_format(fmt)

    def rand(rng: random.Random) -> Vector:
        a = random_value(rng, f)
        b = near(rng, a, f, f.man_bits + 4) if rng.random() < 0.6 else random_value(rng, f)
        return {"a": a, "b": b}

    return (lambda v: arith.fp_add(v["a"], v["b"], f)), rand, _pairs(edge_values(f))


def _case_fpmac(fmt_in: str = "bf16", fmt_acc: str = "fp32") -> tuple:
    fi, fa = get_format(fmt_in), get_format(fmt_acc)

    def rand(rng: random.Random) -> Vector:
        a, b = random_value(rng, fi), random_value(rng, fi)
        prod = arith.fp_mul(a, b, fi, fa)
        c = near(rng, prod, fa, fa.man_bits + 4) if rng.random() < 0.6 else random_value(rng, fa)
        return {"a": a, "b": b, "c": c}

    edges_in, edges_acc = edge_values(fi), edge_values(fa)
    directed = [{"a": a, "b": b, "c": c} for a, b in itertools.product(edges_in, edges_in) for c in edges_acc[::5]]
    return (lambda v: arith.fp_mac(v["a"], v["b"], v["c"], fi, fa)), rand, directed


def _tree_case(op: Callable[[list[int]], int], fmt: str, n: int) -> tuple:
    f = get_format(fmt)

    def rand(rng: random.Random) -> Vector:
        base = random_value(rng, f)
        return {
            "x": [near(rng, base, f, f.man_bits + 4) if rng.random() < 0.7 else random_value(rng, f) for _ in range(n)]
        }

    edges = edge_values(f)
    directed = [{"x": [edges[(i + k) % len(edges)] for i in range(n)]} for k in range(len(edges))]
    directed += [{"x": [e] * n} for e in edges]
    return (lambda v: op(v["x"])), rand, directed


def _case_addtree(fmt: str = "fp32", n: int = 8) -> tuple:
    return _tree_case(lambda xs: arith.add_tree(xs, get_format(fmt)), fmt, n)


def _case_maxtree(fmt: str = "bf16", n: int = 8) -> tuple:
    return _tree_case(lambda xs: arith.max_tree(xs, get_format(fmt)), fmt, n)


def _unary_case(op: Callable[[int], int], fmt: str) -> tuple:
    f = get_format(fmt)
    return (lambda v: op(v)), (lambda rng: random_value(rng, f)), edge_values(f)


def _case_fpexp(fmt: str = "bf16") -> tuple:
    return _unary_case(lambda x: arith.fp_exp(x, get_format(fmt)), fmt)


def _case_fprecip(fmt: str = "bf16") -> tuple:
    return _unary_case(lambda x: arith.fp_recip(x, get_format(fmt)), fmt)


CASES = {
    UNIT_FPMUL: _case_fpmul,
    UNIT_FPADD: _case_fpadd,
    UNIT_FPMAC: _case_fpmac,
    UNIT_ADDTREE: _case_addtree,
    UNIT_MAXTREE: _case_maxtree,
    UNIT_FPEXP: _case_fpexp,
    UNIT_FPRECIP: _case_fprecip,
}


def case(spec: TbSpec) -> StreamCase:
    golden, rand, directed = CASES[spec.unit](**spec.params)
    module = importlib.import_module(spec.component.split(":")[0])
    return StreamCase(lambda v: [golden(v)], rand, directed, module.cycle_model(**spec.params))


SPECS = [
    TbSpec(UNIT_FPMUL, "hw.arith.fpmul:FpMul", {"fmt_in": "bf16"}),
    TbSpec(UNIT_FPMUL, "hw.arith.fpmul:FpMul", {"fmt_in": "fp16"}),
    TbSpec(UNIT_FPMUL, "hw.arith.fpmul:FpMul", {"fmt_in": "bf16", "fmt_out": "fp32"}),
    TbSpec(UNIT_FPMUL, "hw.arith.fpmul:FpMul", {"fmt_in": "fp32"}),
    TbSpec(UNIT_FPADD, "hw.arith.fpadd:FpAdd", {"fmt": "bf16"}),
    TbSpec(UNIT_FPADD, "hw.arith.fpadd:FpAdd", {"fmt": "fp16"}),
    TbSpec(UNIT_FPADD, "hw.arith.fpadd:FpAdd", {"fmt": "fp32"}),
    TbSpec(UNIT_FPMAC, "hw.arith.fpmac:FpMac", {"fmt_in": "bf16", "fmt_acc": "fp32"}),
    TbSpec(UNIT_FPMAC, "hw.arith.fpmac:FpMac", {"fmt_in": "fp16", "fmt_acc": "fp32"}),
    TbSpec(UNIT_ADDTREE, "hw.arith.addtree:AddTree", {"fmt": "fp32", "n": 8}),
    TbSpec(UNIT_MAXTREE, "hw.arith.maxtree:MaxTree", {"fmt": "bf16", "n": 8}),
    TbSpec(UNIT_FPEXP, "hw.arith.fpexp:FpExp", {"fmt": "bf16"}),
    TbSpec(UNIT_FPEXP, "hw.arith.fpexp:FpExp", {"fmt": "fp16"}),
    TbSpec(UNIT_FPRECIP, "hw.arith.fprecip:FpRecip", {"fmt": "bf16"}),
    TbSpec(UNIT_FPRECIP, "hw.arith.fprecip:FpRecip", {"fmt": "fp16"}),
    TbSpec(UNIT_FPRECIP, "hw.arith.fprecip:FpRecip", {"fmt": "fp32"}),
]
SPECS = [dataclasses.replace(s, harness=True) for s in SPECS]  # transaction-level streaming (tb/txn.py)
