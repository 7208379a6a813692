"""Hermes formal properties: the stream contract of every Hermes unit at its testbench (reduced) sizes, and
one bit-serial lane (hw/hermes/bitserial.py ``SerialLane``) proved to hold the exact product of its FP16
operands' significands, with the product's sign, once its shift-add steps have run, at one and at four
bits per step: every serial operand ``b``, and weights ``a`` at a reduced mantissa (A_MANTISSA free top
bits, the rest zero: the full 11 x 11 product is past the solver in the budget); and the GEMV unit's dot
path (``dot-path-data``, bounded) checked to reduce each operation's lanes into one result, its products' sum.

Depth reached and seconds (check + cover) in a `make formal` run at 15d7c60 (2 workers, shared 2-core VM;
docs/guide.md has the latest run): dot path 20 of 20, two operations and both results (40 + 10 s); lane
equivalences proved (7 + 6 and 5 + 5 s); multiplier contract 19 of 29 at 1 bit per step (41 + 5 s), proved at
4 bits (63 + 23 s); GEMV unit 13 of 168 (41 + 11 s), core 9 of 168 (41 + 24 s): past the solver (the bit-
serial multipliers are the bulk; abstracting the FP arithmetic does not take them deeper). The activation
unit (abstract) at its formal size (ACT_SIZE: why below), by ABC's bmc3, run alone at 9ea7fbd (load ~7 from
other jobs): 33 of 33 (11 + 4 s), a whole transaction: reset, its longest one (a 2-beat softmax, 30 cycles)
and the next one's first beat; at the testbench's size it reached 20-27 of 74 with smtbmc, and bmc3 did not
finish 74 in 200 s."""

from __future__ import annotations

import importlib

import numpy as np
from amaranth.hdl import Array, Assert, Assume, Const, Cover, Module, Mux, ResetSignal, Signal, Value

from golden.hermes_spec import REDUCED, ActOp, Gemv, serial_steps
from hw.arith import fpadd
from hw.arith.tree import check_n
from hw.hermes.cycles import UNIT_ACTIVATION, UNIT_BITSERIAL, UNIT_GEMV, act_max_scores, act_txn_cycles
from hw.pipeline import delay
from tb.formal.contract import contract_spec, ports, recording_domain
from tb.formal.sby import FormalSpec
from tb.hermes.cases import SPECS

A_MANTISSA = 3  # free mantissa bits of the weight operand (of 10); the serial operand keeps all 10
FP32_ONE = 0x3F800000
# The activation unit's formal size (tb/formal/contract.py ``params``): 2 lanes and a 2-beat softmax buffer, the
# smallest legal sizes with distinct first and last beats in every pass; the same control code (Front's
# transaction checks, Elementwise, Collect, the shared softmax unit) with its loop bounds shrunk. Response: its
# longest transaction, a whole-buffer softmax, first beat to last output (act_txn_cycles): no handshake-free
# stretch is longer (elementwise beats move every cycle; an error item comes after the last beat)
ACT_SIZE = {"lanes": 2, "buffer_bytes": 8}
ACT_RESPONSE = act_txn_cycles(ActOp.SOFTMAX, act_max_scores(**ACT_SIZE), **ACT_SIZE)
DOT_DEPTH = 20  # reset, two operations of 4 lanes back to back and both results out (8 cycles after each)


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


def dot_path_data(g: Gemv) -> tuple[Module, list[Value]]:
    """The GEMV unit's dot path (``hw.hermes.gemv.DotPath``: the multiplier tree per lane, the lane tree and
    the row accumulator) for one-beat rows of batch 1: each operation's lanes, offered 0 .. lanes-1 on
    consecutive cycles as the multiplier array offers them, give exactly one result, the products' tree
    and accumulator latency after its last lane, equal to FP16 of the sum of its lanes x multipliers
    products. Products are +0 or 1.0 (their sums are small integers: exact in FP32 and FP16 in any order,
    so the golden formula is a count); every operation pattern, gaps between operations and reset."""
    gemv = importlib.import_module("hw.hermes.gemv")  # looked up now: a mutant test swaps it
    dut = gemv.DotPath(g)
    m = Module()
    m.submodules.dut = dut
    at = Signal(range(g.lanes))  # the lane the next valid cycle must offer
    ones = [dut.p[j] == FP32_ONE for j in range(g.multipliers)]
    m.d.comb += [Assume(Value.cast(dut.p[j]).any() == ones[j]) for j in range(g.multipliers)]  # +0 or 1.0
    m.d.comb += [Assume(dut.tag.first & dut.tag.lastk & (dut.tag.b == 0)), Assume(dut.lane == at)]
    with m.If(at != 0):
        m.d.comb += Assume(dut.valid)
    count = Signal(range(g.lanes * g.multipliers + 1))  # this operation's 1.0 products so far
    total = count + sum(ones)
    with m.If(dut.valid):
        m.d.sync += [at.eq(Mux(at == g.lanes - 1, 0, at + 1)), count.eq(Mux(at == g.lanes - 1, 0, total))]
    ends = dut.valid & (at == g.lanes - 1)
    lat = fpadd.LATENCY * (check_n(g.multipliers) + check_n(g.lanes) + 1)  # the two trees and the add
    fp16 = Array(Const(int(np.float16(n).view(np.uint16)), 16) for n in range(g.lanes * g.multipliers + 1))
    due, want = delay(m, Const(1), ends, lat, "due"), delay(m, Const(1), total, lat, "want")
    m.d.comb += Assert(dut.out_valid == due, "one_result_per_operation")
    with m.If(due):
        m.d.comb += Assert(dut.y == fp16[want], "sum_of_products")
    m.d.comb += Cover(dut.out_valid & (dut.y != 0), "a_result")
    return m, ports(dut)


PROPS = [
    FormalSpec(
        "dot-path-data",
        UNIT_GEMV,
        lambda: dot_path_data(REDUCED),
        DOT_DEPTH,
        "reset, two operations' lanes and both results out at the reduced geometry (2 multipliers x 4 lanes)",
        slow=True,
        timeout=120,
    ),
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
    # the 4-bit multiplier's contract closes by k-induction (~25 s); the others are bounded, the activation
    # unit's with its FP arithmetic free every cycle (tb/formal/abstract.py: depth 27 in 40 s alone, against
    # 17-20 as functions of the operands and 14 with its datapath; the
    # GEMV unit and the core reach no deeper so, their bit-serial multipliers being the bulk)
    *(
        contract_spec(s, mode="prove", timeout=120)
        if s.params.get("serial_bits") == 4
        else contract_spec(s, response=ACT_RESPONSE, abstract=True, functional=False, params=ACT_SIZE, engine="abc")
        if s.unit == UNIT_ACTIVATION
        else contract_spec(s)
        for s in SPECS
    ),
]
