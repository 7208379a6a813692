"""Duplex formal properties: the stream contract of every Duplex unit at its testbench (reduced) sizes, and
the GEMM module's controller checked to route each K tile's operands (``gemm-routing``, bounded).

Depth reached and seconds (check + cover) in a `make formal` run at 15d7c60 (2 workers, shared 2-core VM;
docs/guide.md has the latest run): gemm-routing 14 of 14, a whole transaction (34 + 6 s); GEMM module
(abstract) 29 of 49 (121 + 10 s; with its values free every cycle, as now, all 49 in 28 s alone); activation
unit proved (49 + 38 s). At a formal size (STACK_SIZE, SOFTMAX_SIZE: why below), by ABC's bmc3, run alone at
9ea7fbd (one pytest process, load ~7 from other jobs): stack (abstract) 43 of 44 in its then 40 s budget (47
+ 5 s; hence 90 s), at 12cd2f7 44 of 44 (17 + 3 s), a whole transaction: reset, the cycle model's 8 x 8 x 1 GEMM's
32 cycles and its next DESC; softmax unit (abstract) 32 of 32 (5 + 3 s) and 23 of 23 without
normalization (4 + 3 s), a whole transaction: reset, the longest (2-beat) row's 29 and 20 cycles and the
next row's first beat. Before (testbench sizes, smtbmc): stack 8-30 of 49, softmax unit 33-37 of 72 and
27-32 of 52."""

from __future__ import annotations

import importlib

from amaranth.hdl import Assert, Cover, Module, Mux, Signal, Value

from golden.duplex_spec import ACC_PHASES, DIM_BITS, PHASE_BITS, REDUCED, Geometry, Op
from hw.common.cycles import max_beats, row_cycles
from hw.duplex.cycles import UNIT_ACTIVATION, UNIT_GEMM_MODULE, UNIT_STACK
from tb.duplex.cases import SPECS
from tb.formal.contract import contract_spec, ports
from tb.formal.sby import FormalSpec
from tb.runner import TbSpec

# reset, DESC, 2 X beats and 4 W beats of a 4 x 4 x 2 GEMM (m, k, n), its 2 drain beats and 3 more: one
# whole transaction at the reduced size (the MAC array not busy) and the next DESC
ROUTING_DEPTH = 14


# Formal sizes (tb/formal/contract.py ``params``), the smallest legal ones whose longest transaction the check
# spans: the same control code as at the testbench's size, only its loop bounds (beats, lanes, modules) shrink.
# The stack: 2 modules in lockstep (the multi-module W and output paths), 1 token lane, 2 buffer words per lane
# (the cycle model's 8 x 8 x 1 GEMM fits; rows stay 4: a beat must carry the 48-bit DESC).
STACK_SIZE = {"modules": 2, "lanes": 1, "buffer_bytes": 16}
# The softmax unit: rows of at most 2 beats of 2 lanes (both sum partials, first and last beat distinct,
# and an over-long row's error path from 3 beats on)
SOFTMAX_SIZE = {"lanes": 2, "buffer_bytes": 8}


def softmax_response(normalize: bool) -> int:
    """The contract's response bound at SOFTMAX_SIZE: the longest row's cycles, first beat to last output
    (hw.common.cycles.row_cycles): no handshake-free stretch of any row is longer, and the next row's first
    beat is taken the cycle after. (The cycle model's TIMING_BEATS row is past this buffer: an error row.)"""
    lanes, buffer_bytes = SOFTMAX_SIZE["lanes"], SOFTMAX_SIZE["buffer_bytes"]
    return row_cycles(max_beats(lanes, buffer_bytes), lanes, buffer_bytes, normalize)


def _contract(s: TbSpec) -> FormalSpec:
    """The activation unit's contract closes by k-induction (~30 s); the others are bounded, with the FP
    arithmetic free (tb/formal/abstract.py): the GEMM module's and the stack's with the values free every cycle
    (their contracts hold so; the GEMM module spans a whole transaction at the testbench's size, 49 cycles in
    ~30 s; the stack at STACK_SIZE), the softmax unit's as functions of their operands (it rests on held
    operands) at SOFTMAX_SIZE."""
    if s.unit == UNIT_ACTIVATION:
        return contract_spec(s, mode="prove", timeout=120)
    if s.unit == UNIT_GEMM_MODULE:
        return contract_spec(s, abstract=True, functional=False, timeout=120)
    if s.unit == UNIT_STACK:
        return contract_spec(
            s, abstract=True, functional=False, timeout=90, params={**s.params, **STACK_SIZE}, engine="abc"
        )
    response = softmax_response(s.params.get("normalize", True))
    return contract_spec(s, response=response, abstract=True, params={**s.params, **SOFTMAX_SIZE}, engine="abc")


def gemm_routing(g: Geometry) -> tuple[Module, list[Value]]:
    """The GEMM module's controller (``hw.duplex.gemm_module.Controller``; golden.duplex.module_run's loop
    order): a row block takes exactly k weight beats, the DESC's k (beat kk = W[:, kk]); while beat kk
    issues, the MAC array gets that beat's weights, the input-buffer word group * k/rows + kk/rows and
    element kk mod rows (X[token, kk] of the issuing token group), partial kk mod 2, and ``first`` for the
    partial's first k. Every item sequence (malformed ones included), gap, sink and MAC-busy pattern."""
    gemm = importlib.import_module("hw.duplex.gemm_module")  # looked up now: a mutant test swaps it
    dut = gemm.Controller(g)
    m = Module()
    m.submodules.dut = dut
    lr = g.rows.bit_length() - 1
    k, beats, held = Signal(DIM_BITS), Signal(DIM_BITS + 1), Signal(DIM_BITS + 1)
    fresh, w = Signal(), Signal(len(dut.w.as_value()))  # fresh: the next beat starts a row block
    p = dut.i.payload
    taken, drained = dut.i.valid & dut.i.ready, dut.drain.valid & dut.drain.ready
    with m.If(taken & (p.op == Op.W)):
        m.d.sync += w.eq(p.data[: len(w)])
    with m.If(drained):
        m.d.sync += fresh.eq(1)
    with m.If(taken & (p.op == Op.DESC)):
        m.d.sync += [k.eq(gemm.DESC(p.data[: gemm.DESC.size]).k), fresh.eq(1)]
    starts = dut.issue & (dut.group == 0)  # a weight beat's first token group
    kk = Mux(starts, Mux(fresh, 0, beats), held)  # the issuing beat's k
    with m.If(starts):
        m.d.sync += [beats.eq(kk + 1), held.eq(kk), fresh.eq(0)]
    with m.If(dut.issue):
        word = dut.group * (k >> lr) + (kk >> lr)
        m.d.comb += [
            Assert(kk < k, "beats_within_k"),
            Assert(dut.w.as_value() == w, "weights"),
            Assert(dut.r_addr == word[: len(dut.r_addr)], "x_word"),
            Assert(dut.r_elem == kk[:lr], "x_element"),
            Assert(dut.phase == kk[:PHASE_BITS], "partial"),
            Assert(dut.first == (kk < ACC_PHASES), "first"),
        ]
    with m.If(dut.drain.valid & ~dut.drain.payload.error.as_value().any()):
        m.d.comb += Assert(beats == k, "block_of_k_beats")
    m.d.comb += Cover(drained & ~dut.drain.payload.last & (k > 1), "a_row_block_out")
    return m, ports(dut)


PROPS = [
    FormalSpec(
        "gemm-routing",
        UNIT_GEMM_MODULE,
        lambda: gemm_routing(REDUCED),
        ROUTING_DEPTH,
        "reset and a whole 4 x 4 x 2 GEMM at the reduced geometry (DESC, X, K tile, drain)",
        slow=True,
        timeout=120,
    ),
    *(_contract(s) for s in SPECS),
]
