"""The L3 rank's stream contract by assume-guarantee (as the Hermes core's, tb/hermes/hermes_props.py).

The rank at its smallest legal geometry (RANK_SIZE: 4 banks, d_head 32, 4 tokens, the geometry's and the
buffers' lower bounds) still has a shortest head that runs of 119 cycles (K, V and Q writes of one burst
each, 24 beats through the re-layout unit, then 92 cycles of RDs at tCCD_L, bank PUs, adder unit, softmax
unit and read-out), fixed by the paper's burst and timing, and the longest of 173. Checked whole (FP
arithmetic free every cycle, ABC's bmc3) it reached 90-96 of 275 in 90 s at e3e0eb7 (106 in 200 s; smtbmc
22 in 150 s; ABC's pdr undecided after 5 CPU-min): short of a transaction. Most of a head's run is spent in
two sub-units whose latency the rank only waits for, so the check is split:

* ``su-in-rank`` (:func:`su_guarantee`): the softmax unit at the rank's instance (chunk 4, 4 tokens), FP
  arithmetic free every cycle, by bmc3: its stream contract (response: its cycle model's) and
  :func:`su_replies` asserted, one probability per score, all of a head's within SU_ANSWER cycles of its
  last score, under the assumption the rank's check asserts: a head has at most 4 scores, the 4th ``last``.
  Depth: reset, a head of 4 scores, its SU_ANSWER cycles, the next score.
* ``bank-array-replies`` (:func:`bank_guarantee`): the bank array (its 8 x 4 memories and bank PUs),
  FP arithmetic free every cycle: one ``res_valid`` per RD with ``last``, within BANK_REPLY cycles
  (:func:`bank_replies`), under the assumption the rank's check asserts: RDs at least RD_INTERVAL
  (tCCD_L) apart. Depth: reset, two RDs with ``last`` RD_INTERVAL apart, both answered.
* ``contract-...-composed`` (:func:`rank_contract`): the rank with both replaced by
  :class:`~tb.formal.contract.Guaranteed` stand-ins (their outputs free inputs, their latency anything
  from 1 cycle to the bound) under exactly what the two checks above assert (assumed here), and the
  softmax unit's stream contract (its own check: ``su-in-rank``); asserted here, what those checks assume:
  the softmax unit's input held until taken, at most 4 scores a head, RDs RD_INTERVAL apart. The rest is
  real: re-layout unit, K/V writer, adder unit (proved alone), the score queue, the S buffers and the
  rank's phases, sequencer and read-out. A stand-in's traces include the real unit's (its latency is one
  choice of the free one), so the rank's contract holds of the rank with its real sub-units at the depths
  checked; a counterexample may be spurious (a latency the real unit never takes).

The composed check's depth: RANK_DEPTH, reset, the longest head of one token under the stand-ins' bounds
(every write beat, the run with each sub-unit at its longest) and the next item; a whole head that ran is
covered. Measured: see docs/guide.md's formal table (l3_rank, l3_softmax_unit, l3_bank_pu rows).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from unittest import mock

from amaranth.hdl import Assert, Assume, Fragment, Module, Mux, ResetSignal, Signal, Value

from golden.l3_spec import RD_INTERVAL, Geometry, Mode
from hw.l3.cycles import BANK_PU_LATENCY, UNIT_BANK_PU, UNIT_RANK, UNIT_SOFTMAX, head_cycles, run_cycles, su_head_cycles
from hw.l3.softmax_unit import cycle_model as su_cycle_model
from tb.formal.abstract import elaborate, free_arithmetic
from tb.formal.contract import (
    Guaranteed,
    behaves,
    contract_spec,
    held,
    owes,
    ports,
    recording_domain,
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
_SU_MODEL = su_cycle_model(**SU_PARAMS)
SU_RESPONSE = _SU_MODEL.latency + int(_SU_MODEL.ii)  # its contract's bound (contract_spec's default)
SU_ANSWER = _SU_MODEL.latency  # last score -> last probability: a head of one chunk, the longest one here
# RD -> res_valid: the PUs' step a cycle after the RD (the bank data), their longest latency, the result buffer
BANK_REPLY = 1 + max(BANK_PU_LATENCY.values()) + 1
# the longest head of one token under the stand-ins' bounds: the real one's (119 cycles) with its softmax unit at
# SU_ANSWER (real: su_head_cycles(1) from its one score) and its context RD answered at BANK_REPLY (real: the
# context PU latency + 2); the reset before it, the next item after it
LONGEST_HEAD = (
    head_cycles(1, GEOMETRY, MAX_TOKENS)
    + SU_ANSWER
    - su_head_cycles(1, GEOMETRY.chunk, MAX_TOKENS)
    + BANK_REPLY
    - (2 + BANK_PU_LATENCY[Mode.CONTEXT])
)
RANK_DEPTH = 1 + LONGEST_HEAD + 1
# the longest stretch without a handshake: a RUN accepted to its first output, for the slowest head (the
# real run's, run_cycles, less its d_head - 1 read-out beats), with the stand-ins' slack over the real units
RANK_RESPONSE = max(run_cycles(n, GEOMETRY, MAX_TOKENS) for n in range(1, MAX_TOKENS + 1)) - (GEOMETRY.d_head - 1)
RANK_RESPONSE += LONGEST_HEAD - head_cycles(1, GEOMETRY, MAX_TOKENS)


def su_heads(m: Module, i, check, prefix: str = "su_") -> None:
    """At most MAX_TOKENS scores a head, the last of them ``last`` (what the rank sends: n <= its tokens)."""
    count = Signal(range(MAX_TOKENS), name=f"{prefix}head_scores")  # reset with the unit
    took = i.valid & i.ready
    with m.If(took):
        m.d.sync += count.eq(Mux(i.payload.last, 0, count + 1))
    m.d.comb += check(~(took & (count == MAX_TOKENS - 1) & ~i.payload.last), f"{prefix}head_of_max_tokens")


def su_replies(m: Module, su, check, prefix: str = "su_") -> None:
    """One probability per score, a head's all within SU_ANSWER cycles of a ready sink after its last score."""
    took, gave = su.i.valid & su.i.ready, su.o.valid & su.o.ready
    owes(m, took, gave, took & su.i.payload.last, SU_ANSWER, check, prefix, su.o.ready)


def bank_replies(m: Module, banks, check, prefix: str = "banks_") -> None:
    """One ``res_valid`` per RD with ``last``, within BANK_REPLY cycles."""
    rd_last = banks.rd.valid & banks.rd.payload.last
    owes(m, rd_last, banks.res_valid, rd_last, BANK_REPLY, check, prefix)


def paced(m: Module, valid: Value, check, prefix: str = "banks_") -> None:
    """RDs at least RD_INTERVAL cycles apart (tCCD_L: the rank's sequencer paces them)."""
    since = Signal(range(RD_INTERVAL + 1), init=RD_INTERVAL, name=f"{prefix}since_rd")  # reset with the unit
    m.d.sync += since.eq(Mux(valid, 1, Mux(since == RD_INTERVAL, since, since + 1)))
    m.d.comb += check(~valid | (since == RD_INTERVAL), f"{prefix}rd_paced")


def su_guarantee() -> FormalSpec:
    """The softmax unit at the rank's instance: its contract and :func:`su_replies`, asserted."""
    tb = next(s for s in SPECS if s.unit == UNIT_SOFTMAX and s.params["chunk"] == GEOMETRY.chunk)

    def extra(dut) -> Callable[[Module, Value, Value], None]:
        def add(m: Module, _started: Value, _past_rst: Value) -> None:
            su_heads(m, dut.i, Assume)
            su_replies(m, dut, Assert)

        return add

    depth = 2 + MAX_TOKENS + SU_ANSWER + 1
    why = (
        f"{depth} cycles at {SU_PARAMS}: the reset, a head of {MAX_TOKENS} scores, its last probability within "
        f"{SU_ANSWER} cycles, the next score"
    )
    spec = contract_spec(
        tb,
        depth,
        abstract=True,
        functional=False,
        params={**tb.params, **SU_PARAMS},
        why=why,
        extra=extra,
        engine="abc",
        timeout=60,
    )
    return dataclasses.replace(spec, name="su-in-rank")


def bank_array() -> tuple[Module, list[Value]]:
    """The bank array at the rank's geometry, FP arithmetic free every cycle: :func:`bank_replies` asserted
    under :func:`paced` RDs."""
    with free_arithmetic(False) as free:
        dut = importlib.import_module("hw.l3.rank").BankArray(GEOMETRY, MAX_TOKENS)
        m = Module()
        m.submodules.dut = dut
        started = recording_domain(m)
        with m.If(~started):
            m.d.comb += Assume(ResetSignal(), "reset_first")
        paced(m, dut.rd.valid, Assume)
        bank_replies(m, dut, Assert)
        top = elaborate(m)
    return top, [*ports(dut), *free]


def ran(dut) -> Value:
    """A head's last output taken, not an error item: the whole of one that ran."""
    return dut.o.valid & dut.o.ready & dut.o.payload.last & ~dut.o.payload.error.as_value().any()


def stand_ins(su: Guaranteed, banks: Guaranteed) -> Callable[[Module, Value, Value], None]:
    """What the sub-unit checks assert, assumed of the stand-ins; what they assume, asserted of the rank."""

    def add(m: Module, started: Value, past_rst: Value) -> None:
        behaves(m, started, past_rst, [su.i], [su.o], SU_RESPONSE, Assume, "su_")
        su_replies(m, su, Assume)
        bank_replies(m, banks, Assume)
        held(m, started, past_rst, "su_in", su.i, Assert)
        su_heads(m, su.i, Assert)
        paced(m, banks.rd.valid, Assert)

    return add


def rank_contract(tb: TbSpec) -> FormalSpec:
    """The rank's stream contract with its softmax unit and bank array replaced by their guarantees."""
    params = {**tb.params, **RANK_SIZE}

    def build() -> tuple[Fragment, list[Value]]:
        rank = importlib.import_module("hw.l3.rank")  # looked up now: a mutant test swaps it
        with free_arithmetic(False) as free:
            real_su = rank.SoftmaxUnit(**SU_PARAMS)
            real_banks = rank.BankArray(GEOMETRY, MAX_TOKENS)
            for unit in (real_su, real_banks):
                unit._MustUse__silence = True  # built for their signatures only
            su, banks = Guaranteed(real_su.signature, free), Guaranteed(real_banks.signature, free)
            with (
                mock.patch.object(rank, "SoftmaxUnit", lambda *_a, **_k: su),
                mock.patch.object(rank, "BankArray", lambda *_a, **_k: banks),
            ):
                dut = rank.Rank(**params)
                top = elaborate(stream_contract(dut, RANK_RESPONSE, ran, stand_ins(su, banks)))
        return top, [*ports(dut), *free]

    why = (
        f"{RANK_DEPTH} cycles at {RANK_SIZE}: the reset, a head of one token (24 write beats, the RUN, the run "
        "with the stand-ins at their longest) and the next item; a whole head that ran is covered"
    )
    size = ",".join(f"{k}={v}" for k, v in RANK_SIZE.items())
    return FormalSpec(
        f"contract-{tb.tag}-composed", tb.unit, build, RANK_DEPTH, why, timeout=150, size=size, engine="abc"
    )


PROPS = [
    su_guarantee(),
    FormalSpec(
        "bank-array-replies",
        UNIT_BANK_PU,
        bank_array,
        2 + RD_INTERVAL + BANK_REPLY,
        "reset, two RDs with last RD_INTERVAL apart and both answered",
        timeout=60,
        engine="abc",
    ),
    rank_contract(RANK_TB),
]
