"""Exhaustive equivalence of the arithmetic units at the 8-bit float formats against their golden rounding.

Every input (256 for a unary unit, 65,536 pairs for a binary one) streams through the unit on Amaranth's
simulator, one per cycle with a ready sink, and every result is compared with ``golden.arith``. Exhaustive
simulation, not a solver: the golden model is Python, and 65,536 cycles simulate in seconds, where a
proof would first have to restate the golden rounding as a circuit. Only E5M2: the arithmetic units take
IEEE-style formats (``hw.arith.fpcore.check_ieee``), and E4M3 (OCP FN: no Inf) is not one of them (its
codes reach the hardware only through the DECA PE's LUT: tb/deca/pe_tb.py ``test_every_code`` runs all 256); the
exponential unit takes BF16/FP16 only, and the MAC's three operands (2**24 triples) are past exhaustive.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from amaranth.hdl import Value
from amaranth.sim import Simulator

import golden.arith
from golden.fp import get_format
from hw.arith.cycles import UNIT_FPADD, UNIT_FPMUL, UNIT_FPRECIP


@dataclass(frozen=True)
class EquivSpec:
    """``component`` ("module:Class") built with ``params``; ``golden``: the twin of one input tuple."""

    name: str
    unit: str
    component: str
    params: dict
    arity: int
    golden: Callable[..., int]


def _fmt(spec: EquivSpec):
    return get_format(spec.params.get("fmt") or spec.params["fmt_in"])


def expected(spec: EquivSpec) -> list[int]:
    """The golden result of every input, in the order :func:`mismatches` feeds them."""
    width = _fmt(spec).width
    if spec.arity == 1:
        return [spec.golden(x) for x in range(1 << width)]
    return [spec.golden(x & ((1 << width) - 1), x >> width) for x in range(1 << (2 * width))]


def mismatches(spec: EquivSpec, limit: int = 8) -> list[tuple[int, int, int]]:
    """(input, unit's result, golden result) for up to ``limit`` inputs where they differ. Binary inputs are
    packed ``a | b << width``: the units' {a, b} payload layout."""
    mod, cls = spec.component.split(":")
    dut = getattr(importlib.import_module(mod), cls)(**spec.params)
    want = expected(spec)
    got: list[int] = []
    payload = Value.cast(dut.i.payload)

    async def bench(ctx) -> None:
        ctx.set(dut.o.ready, 1)
        ctx.set(dut.i.valid, 1)
        for x in range(len(want)):
            ctx.set(payload, x)
            await ctx.tick()
            if ctx.get(dut.o.valid):
                got.append(ctx.get(dut.o.payload))
        ctx.set(dut.i.valid, 0)
        while len(got) < len(want):
            await ctx.tick()
            if ctx.get(dut.o.valid):
                got.append(ctx.get(dut.o.payload))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    bad = [(x, g, w) for x, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    return bad[:limit]


def _e5m2(op: str) -> Callable[..., int]:
    """The golden twin at E5M2, looked up on ``golden.arith`` at call time (so a golden mutant applies)."""
    fmt = get_format("e5m2")
    return lambda *xs: getattr(golden.arith, op)(*xs, fmt)


EQUIVS = (
    EquivSpec("equiv-fpmul-e5m2", UNIT_FPMUL, "hw.arith.fpmul:FpMul", {"fmt_in": "e5m2"}, 2, _e5m2("fp_mul")),
    EquivSpec("equiv-fpadd-e5m2", UNIT_FPADD, "hw.arith.fpadd:FpAdd", {"fmt": "e5m2"}, 2, _e5m2("fp_add")),
    EquivSpec("equiv-fprecip-e5m2", UNIT_FPRECIP, "hw.arith.fprecip:FpRecip", {"fmt": "e5m2"}, 1, _e5m2("fp_recip")),
)
