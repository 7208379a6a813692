"""The L3 rank's stream contract by assume-guarantee (as the Hermes core's, tb/hermes/hermes_props.py), at a
formal instance with shorter FP pipelines.

The rank at its smallest legal geometry (RANK_SIZE: 4 banks, d_head 32, 4 tokens, the geometry's and the
buffers' lower bounds) still has a shortest head that runs of 119 cycles: 24 write beats (K, V and Q of
one BL8 burst each) and 4 to land, the 2-cycle check, 18 from the score RD to the softmax unit, its 27, 1
to the context RD, 13 from it to the first output and 31 more outputs (d_head 32, one burst). 45 of them are
the FP pipelines' latencies (hw.arith.cycles), none is tCCD_L (below). So both checks here build the rank
with FP pipelines of FP_LATENCY = 1 stage (tb.formal.abstract.fp_latency, through ``free_arithmetic``):
the FP latency is a parameter of the instance, as ``tile`` is of the DECA PE's. Only delay lines shorten
(the stand-ins' stages, the units' valid pipelines, the bank PU's and the fold's step counters, the wait
for the reciprocal); every handshake, stall, buffer, queue and error check is the unit's, and the cycle
model (hw.l3.cycles, which reads the latencies when called) replays the same instance: the head is 95 cycles
(74 at latency 0, which does not build: the adder unit's stall-all pipeline needs a stage), and
tests/test_formal.py simulates the instance's rank and finds head_cycles' counts (95 and 149 for 1 and 4
tokens; 119 and 173 at full latency). The split:

* ``su-in-rank`` (:func:`su_guarantee`): the softmax unit at the rank's instance (chunk 4, 4 tokens, FP
  latency 1), FP arithmetic free every cycle, by bmc3, bounded at SU_DEPTH (the reset, a head of 4 scores,
  all SU_ANSWER cycles after it, the next score: a whole transaction): its stream contract (response
  SU_RESPONSE, its cycle model's) and :func:`su_replies` asserted (one probability per score, all of a
  head's within SU_ANSWER cycles of a ready sink after its last score, in one run; a head's scores taken as
  offered), under :func:`su_heads` assumed (at most 4 scores a head, the 4th ``last``).
* ``contract-...-composed`` (:func:`rank_contract`): the rank with its softmax unit replaced by a
  :class:`~tb.formal.contract.Guaranteed` stand-in (its outputs free inputs, its latency anything up to
  the bound) under exactly what ``su-in-rank`` asserts (assumed here) and asserting what it assumes (the
  scores held until taken, :func:`su_heads`). The rest is real, its FP arithmetic free every cycle:
  re-layout unit, K/V writer, bank array (its PUs' contract checked alone), adder unit (proved alone), the
  score queue, the S buffers and the rank's phases, sequencer and read-out. The real unit's traces are
  among the stand-in's (its latency is one choice of the free one), so the rank's contract holds of the
  rank with its real softmax unit to the depth checked; a counterexample may be spurious (a latency the
  real unit never takes). Bounded at RANK_DEPTH (the reset, the longest one-token head with the stand-in at
  its bound, the next item), response RANK_RESPONSE (a RUN to its first output, the slowest head).

What it proves: the rank's stream contract (valid held and payload stable until ready, no beat from
nothing, a handshake within RANK_RESPONSE with inputs valid and the sink ready, reset mid-transaction)
over every input sequence of RANK_DEPTH cycles, for the rank at RANK_SIZE with FP pipelines of latency
FP_LATENCY: its control and handshakes are the unit's. The full-latency rank is covered by the whole
rank's check (tb/l3/l3_props.py: FP latency the units' own, 90-101 of 275 cycles in 90 s, short of a
head; 95 and 101 at load ~1 on 2026-11-28, 97 with dc2, so it does not opt in) and by
the RTL testbenches (tb/l3/cases.py: every head bit-exact, its cycles asserted, under backpressure).
Measured 2026-11-28 on the shared 2-core VM at nice 10 (load 1.4-2.9 from other jobs): su-in-rank 25 of 25
in ~2 s; the composed check by plain bmc3 81 of 100 in 90 s, 96 in 300 s, 99 in 420 s; with the model
rewritten by ABC's dc2 first (FormalSpec.rewrite: the same functions of latches and inputs, fewer gates)
90 in 90 s and all 100 in 203 s, then in its pytest test 100 of 100 in 185 s (188 s in all, cover
included); in `make formal` beside the other checks (two workers, 2026-11-28) 96 of 100 in 300 s. Hence
COMPOSED_BUDGET: 600 s, a cap and not a cost (the check ends at RANK_DEPTH), as bmc3's limit is wall time.

Earlier runs, at full FP latency (target 124; the shared 2-core VM): 73 of 124 in 90 s (load ~3, nice 19,
47 s of CPU), 82-84 at load 1.4-2.2 and 107 in 420 s alone; the whole rank 90-96 of 275 in 90 s, 106 in
200 s. Other stand-ins, the bank array's and replies free cycle by cycle, went less deep (61-63 of 128).
A hang it found (fixed 2026-11-27): with the response bound at 30 (measured once) it failed
``bounded_response`` at step 33 on a K write beat without ``last`` at step 1 and a RUN offered from step 2:
the RUN waited for every write to land (hw/l3/rank.py ``_host``), and the open write's op stayed queued until
a ``last`` beat that never came. Now such a RUN is taken once the open write's whole windows have landed and
answered with PARTIAL_BURST two cycles later (golden.l3.rank_run; tb/l3/cases.py's mid-write heads).
A shorter tCCD_L (golden.l3_spec.RD_INTERVAL) would not shorten the head: at this size a head of up to 4
tokens is one score RD (d_head 32: one burst; 4 banks: one step) and one context RD (one V column), and the
RD timer restarts at each phase, so it never delays an RD (head_cycles is the same at 1 as at 8; it counts
from 5 tokens, or d_head 64); measured 2026-11-28 with RD_INTERVAL patched to 1: 81 of 124 against 84. The
burst length (the 8x8 re-layout transpose, the bank mapping) and d_head (the read-out) are the data layout,
not waits.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from types import SimpleNamespace
from unittest import mock

from amaranth.hdl import Assert, Assume, Fragment, Module, Mux, Signal, Value

from golden.l3_spec import Geometry
from hw.l3.cycles import UNIT_RANK, UNIT_SOFTMAX, head_cycles, run_cycles, su_head_cycles
from hw.l3.softmax_unit import cycle_model as su_cycle_model
from tb.formal.abstract import elaborate, fp_latency, free_arithmetic
from tb.formal.contract import (
    Guaranteed,
    behaves,
    contract_spec,
    held,
    owes,
    ports,
    stream_contract,
)
from tb.formal.sby import FormalSpec
from tb.l3.cases import SPECS
from tb.runner import TbSpec

RANK_SIZE = {"max_tokens": 4}  # a multiple of its 4 banks and 4 V groups: one K and one V column per bank
RANK_TB = next(s for s in SPECS if s.unit == UNIT_RANK)
GEOMETRY = Geometry(RANK_TB.params["banks"], RANK_TB.params["d_head"])
MAX_TOKENS = RANK_SIZE["max_tokens"]
SU_PARAMS = {"chunk": GEOMETRY.chunk, "max_tokens": MAX_TOKENS}  # the softmax unit the rank builds
FP_LATENCY = 1  # the instance's FP pipelines (tb.formal.abstract.fp_latency): the shortest every unit builds with


def _bounds() -> tuple[int, int, int, int]:
    """(SU_ANSWER, SU_RESPONSE, LONGEST_HEAD, RANK_RESPONSE) from the cycle models of the FP_LATENCY instance."""
    su_model = su_cycle_model(**SU_PARAMS)
    answer = su_model.latency  # last score -> last probability: a head of one chunk, the longest one here
    # the longest head of one token under the stand-in's bound: the real one's with its softmax unit at
    # ``answer`` (real: su_head_cycles(1) from its one score)
    head = head_cycles(1, GEOMETRY, MAX_TOKENS)
    longest = head + answer - su_head_cycles(1, GEOMETRY.chunk, MAX_TOKENS)
    # the longest stretch without a handshake: a RUN accepted to its first output, for the slowest head (the
    # real run's, run_cycles, less its d_head - 1 read-out beats), with the stand-in's slack over the real unit
    slowest = max(run_cycles(n, GEOMETRY, MAX_TOKENS) for n in range(1, MAX_TOKENS + 1)) - (GEOMETRY.d_head - 1)
    return answer, answer + int(su_model.ii), longest, slowest + longest - head


with fp_latency(FP_LATENCY):
    SU_ANSWER, SU_RESPONSE, LONGEST_HEAD, RANK_RESPONSE = _bounds()
SU_DEPTH = 2 + MAX_TOKENS + SU_ANSWER + 1
RANK_DEPTH = 1 + LONGEST_HEAD + 1  # the reset before the longest head, the next item after it
COMPOSED_BUDGET = 600  # s: all RANK_DEPTH frames in 185-203 s alone, 96 in 300 s in make formal (above): a cap


def su_heads(m: Module, i, check, prefix: str = "su_") -> None:
    """At most MAX_TOKENS scores a head, the last of them ``last`` (what the rank sends: n <= its tokens)."""
    count = Signal(range(MAX_TOKENS), name=f"{prefix}head_scores")  # reset with the unit
    took = i.valid & i.ready
    with m.If(took):
        m.d.sync += count.eq(Mux(i.payload.last, 0, count + 1))
    m.d.comb += check(~(took & (count == MAX_TOKENS - 1) & ~i.payload.last), f"{prefix}head_of_max_tokens")


def su_replies(m: Module, su, check, prefix: str = "su_") -> None:
    """One probability per score, a head's all within SU_ANSWER cycles of a ready sink after its last score,
    in one run (once the first is out, one a cycle while the sink is ready); a head's scores taken as offered."""
    took, gave = su.i.valid & su.i.ready, su.o.valid & su.o.ready
    owed, closed = owes(m, took, gave, took & su.i.payload.last, SU_ANSWER, check, prefix, su.o.ready)
    gave_last = Signal(name=f"{prefix}gave_last")  # reset with the unit
    m.d.sync += gave_last.eq(gave)
    m.d.comb += [
        check(~(gave_last & (owed != 0) & su.o.ready) | su.o.valid, f"{prefix}one_run"),
        check(~(su.i.valid & ~closed) | su.i.ready, f"{prefix}takes_scores"),
    ]


def su_guarantee() -> FormalSpec:
    """The softmax unit at the rank's instance: its contract and :func:`su_replies`, asserted."""
    tb = next(s for s in SPECS if s.unit == UNIT_SOFTMAX and s.params["chunk"] == GEOMETRY.chunk)

    def extra(dut) -> Callable[[Module, Value, Value], None]:
        def add(m: Module, _started: Value, _past_rst: Value) -> None:
            su_heads(m, dut.i, Assume)
            su_replies(m, dut, Assert)

        return add

    why = (
        f"{SU_DEPTH} cycles at {SU_PARAMS}: the reset, a head of {MAX_TOKENS} scores, its last probability within "
        f"{SU_ANSWER} cycles, the next score"
    )
    spec = contract_spec(
        tb,
        SU_DEPTH,
        abstract=True,
        functional=False,
        params={**tb.params, **SU_PARAMS},
        why=why,
        extra=extra,
        engine="abc",
        timeout=60,
        latency=FP_LATENCY,
    )
    return dataclasses.replace(spec, name="su-in-rank")


def stand_in(su: Guaranteed) -> Callable[[Module, Value, Value], None]:
    """What ``su-in-rank`` asserts, assumed of the stand-in; what it assumes, asserted of the rank."""

    def add(m: Module, started: Value, past_rst: Value) -> None:
        behaves(m, started, past_rst, [su.i], [su.o], SU_RESPONSE, Assume, "su_")
        su_replies(m, su, Assume)
        # valid held until taken (the scores' bits: the queue's, an amaranth.lib.fifo.SyncFIFO, held until read)
        held(
            m,
            started,
            past_rst,
            "su_in",
            SimpleNamespace(valid=su.i.valid, ready=su.i.ready, payload=su.i.payload.last),
            Assert,
        )
        su_heads(m, su.i, Assert)

    return add


def rank_contract(tb: TbSpec) -> FormalSpec:
    """The rank's stream contract with its softmax unit replaced by the guarantees ``su-in-rank`` checks."""
    params = {**tb.params, **RANK_SIZE}

    def build() -> tuple[Fragment, list[Value]]:
        rank = importlib.import_module("hw.l3.rank")  # looked up now: a mutant test swaps it
        with free_arithmetic(False, FP_LATENCY) as free:
            real = rank.SoftmaxUnit(**SU_PARAMS)
            real._MustUse__silence = True  # built for its signature only
            su = Guaranteed(real.signature, free)
            with mock.patch.object(rank, "SoftmaxUnit", lambda *_a, **_k: su):
                dut = rank.Rank(**params)
                top = elaborate(stream_contract(dut, RANK_RESPONSE, extra=stand_in(su)))
        return top, [*ports(dut), *free]

    why = (
        f"{RANK_DEPTH} cycles at {RANK_SIZE}: the reset, a head of one token (24 write beats, the RUN, the run "
        "with the softmax unit's stand-in at its bound) and the next item"
    )
    size = ",".join(f"{k}={v}" for k, v in {**RANK_SIZE, "fp_latency": FP_LATENCY}.items())
    name = f"contract-{tb.tag}-composed"
    return FormalSpec(
        name, tb.unit, build, RANK_DEPTH, why, timeout=COMPOSED_BUDGET, size=size, engine="abc", rewrite=True
    )


PROPS = [su_guarantee(), rank_contract(RANK_TB)]
