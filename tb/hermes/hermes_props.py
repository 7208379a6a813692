"""Hermes formal properties: the stream contract of every Hermes unit at its testbench (reduced) sizes, and
one bit-serial lane (hw/hermes/bitserial.py ``SerialLane``) proved to hold the exact product of its FP16
operands' significands, with the product's sign, once its shift-add steps have run, at one and at four
bits per step: every serial operand ``b``, and weights ``a`` at a reduced mantissa (A_MANTISSA free top
bits, the rest zero: the full 11 x 11 product is past the solver in the budget)."""

from __future__ import annotations

import importlib

from amaranth.hdl import Assert, Assume, Module, ResetSignal, Signal, Value

from golden.hermes_spec import serial_steps
from hw.hermes.cycles import UNIT_BITSERIAL
from tb.formal.contract import contract_spec, ports, recording_domain
from tb.formal.sby import FormalSpec
from tb.hermes.cases import SPECS

A_MANTISSA = 3  # free mantissa bits of the weight operand (of 10); the serial operand keeps all 10


def _significand(bits: Value) -> Value:
    """FP16's significand by its definition: the hidden 1 unless the exponent field is 0 (zero/subnormal)."""
    return bits[:10] | ((bits[10:15] != 0) << 10)


def serial_lane_equiv(serial_bits: int) -> tuple[Module, list[Value]]:
    """Reset at cycle 0, load at cycle 1, steps from cycle 2: after serial_steps steps the product is exact
    (``a`` and ``b`` free and unconstrained after the load: the lane latched them)."""
    dut = importlib.import_module("hw.hermes.bitserial").SerialLane(serial_bits)
    m = Module()
    m.submodules.dut = dut
    recording_domain(m)
    cycle = Signal(range(32))
    m.d.fv += cycle.eq(cycle + (cycle < 31))
    a, b = Signal(16), Signal(16)
    with m.If(cycle == 1):
        m.d.fv += [a.eq(dut.a), b.eq(dut.b)]
    m.d.comb += [
        Assume(ResetSignal() == (cycle == 0)),
        Assume(dut.load == (cycle == 1)),
        Assume(dut.step == (cycle > 1)),
        Assume(dut.a[: 10 - A_MANTISSA] == 0),
    ]
    with m.If(cycle == 2 + serial_steps(serial_bits)):
        m.d.comb += Assert(dut.raw.sig == _significand(a) * _significand(b), "exact_significand")
        m.d.comb += Assert(dut.raw.sign == (a[15] ^ b[15]), "sign")
    return m, ports(dut)


PROPS = [
    *(
        FormalSpec(
            f"bitserial-lane-equiv-{bits}bit",
            UNIT_BITSERIAL,
            lambda bits=bits: serial_lane_equiv(bits),
            3 + serial_steps(bits),
            f"reset, load and the {serial_steps(bits)} steps of one product, then the check",
            "prove",
            slow=True,
            timeout=120,
        )
        for bits in (1, 4)
    ),
    # the 4-bit multiplier's contract closes by k-induction (~25 s); the others are bounded
    *(
        contract_spec(s, mode="prove", timeout=120) if s.params.get("serial_bits") == 4 else contract_spec(s)
        for s in SPECS
    ),
]
