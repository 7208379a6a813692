"""The shared cocotb testbench for units with one input stream ``i`` and one output stream ``o``.

The unit's case (a :class:`tb.case.StreamCase` from ``tb.<family>.cases.case(spec)``, family = the package
under ``hw`` that holds the component) says what a *transaction* is — a list of input items and the
output items golden says they produce — plus directed transactions, a seeded random one, and the unit's
cycle model.

A spec with ``harness=True`` streams test_vectors and test_cycles transaction-level through hw/harness.py
(tb/txn.py: batches of at most the harness depth, gaps and backpressure drawn inside the harness); others,
and test_reset_midstream always, use the per-cycle drivers of tb/streams.py. Every random stream holds at most
the case's ``max_items`` input items.

* test_vectors: the directed transactions, then MEMBOUND_VECTORS (default 10,000, `make sim`'s; `make test`
  sets the Makefile's TEST_VECTORS, 2,000; at most the case's ``max_items``) input items' worth of
  random ones, streamed with random valid gaps and ready backpressure; every output bit-exact against
  golden, in order, none lost or duplicated, nothing after the last.
* test_reset_midstream: reset just after the first result (the rest in flight), then a fresh stream must
  come out exact.
* test_pause_patterns: per cycle, every named pause pattern of ``tb.streams.PAUSES`` (or those
  MEMBOUND_PAUSES names, comma-separated) on ``i``'s valid and ``o``'s ready: bursts, lock-step
  alternation, a starved source, a trickling sink — every output exact, in order, nothing extra.
* test_cycles: a lone transaction's cycles (first input accepted to last output accepted) equal the
  case's ``txn_cycles``; back-to-back transactions span ``cycle_model.cycles(items)`` with II as
  modelled; the case's probe transaction (if any) and its performance counters, and its ``timed`` ones; writes the
  characterization record (``vectors``: the input items test_vectors streamed).
"""

from __future__ import annotations

import itertools
import os
import random
import time
from dataclasses import dataclass

import cocotb
from cocotb.triggers import ClockCycles

from tb import mutants
from tb.case import load_case
from tb.charz import write_record
from tb.runner import TbSpec
from tb.streams import (
    PAUSES,
    PortStreams,
    StreamSink,
    StreamSource,
    active_share,
    check_scoreboard,
    cycle_now,
    pack,
    reset,
    start_clock,
)
from tb.txn import Batch, HarnessLayout, run_batch

if os.environ.get("MEMBOUND_GOLDEN_MUTANT"):
    mutants.apply(os.environ["MEMBOUND_GOLDEN_MUTANT"])
SPEC = TbSpec.from_env()
CASE = load_case(SPEC)
SEED = int(os.environ.get("MEMBOUND_SEED", "1"))
N_ITEMS = int(os.environ.get("MEMBOUND_VECTORS", "10000"))
STATS = {"vectors": 0, "wall": 0.0, "cycles": 0}
_TOP = SPEC.build_component(os.environ.get("MEMBOUND_SIM"))
LAYOUT = _TOP.i.payload.shape()
HARNESS = HarnessLayout.of(_TOP) if SPEC.harness else None  # transaction-level streaming (tb/txn.py)


@dataclass
class Streamed:
    """Input acceptance cycles, output acceptance cycles (both counted from each harness batch's start),
    outputs, golden's outputs, cycles simulated; ``span``: first input accepted to last output accepted,
    summed over the harness batches (the gaps between batches excluded); ``batches``: how many."""

    accepted: list[int]
    out_cycles: list[int]
    got: list[int]
    expected: list[int]
    cycles: int
    span: int = 0
    batches: int = 1


def _flatten(txns: list) -> tuple[list[int], list[int]]:
    items = [pack(LAYOUT, it) for t in txns for it in CASE.items(t)]
    return items, [o for t in txns for o in CASE.golden(t)]


async def _stream(dut, txns: list, rng: random.Random, p_valid: float, p_ready: float) -> Streamed:
    """Stream ``txns`` with random gaps/backpressure: through the harness when the build has one (batches
    of at most its depth), else with the per-cycle drivers."""
    if HARNESS is None:
        return await _stream_per_cycle(dut, txns, rng, p_valid, p_ready)
    done = Streamed([], [], [], [], 0, batches=0)
    for batch in _batches(txns):
        items, expected = _flatten(batch)
        b = Batch(
            {"i": items},
            {"o": len(expected)},
            p_valid,
            p_ready,
            rng.getrandbits(32),
            linger=CASE.cycle_model.latency + 4,
            timeout=_worst(batch, p_valid, p_ready),
        )
        cap = await run_batch(dut, HARNESS, b)
        done.accepted += cap.accepted["i"]
        done.out_cycles += cap.cycles["o"]
        done.got += cap.items["o"]
        done.expected += expected
        done.cycles += cap.cycles_run
        done.span += cap.cycles["o"][-1] - cap.accepted["i"][0]
        done.batches += 1
    return done


def _batches(txns: list) -> list[list]:
    """Consecutive runs of transactions whose input and output items fit the harness's memories."""
    out, cur, n_in, n_out = [], [], 0, 0
    for t in txns:
        a, b = len(CASE.items(t)), len(CASE.golden(t))
        if cur and (n_in + a > HARNESS.depth or n_out + b >= HARNESS.depth):
            out.append(cur)
            cur, n_in, n_out = [], 0, 0
        cur.append(t)
        n_in, n_out = n_in + a, n_out + b
    return out + [cur] if cur else out


def _worst(txns: list, p_valid: float, p_ready: float) -> int:
    return int(4 * (sum(CASE.txn_cycles(t) for t in txns) + 10) / max(p_ready, 0.05) / max(p_valid, 0.05))


async def _stream_per_cycle(dut, txns: list, rng: random.Random, p_valid: float, p_ready: float) -> Streamed:
    items, expected = _flatten(txns)
    ports = PortStreams(dut, ["i"], ["o"], rng, p_valid, p_ready)
    c0 = cycle_now()
    got = await ports.run(
        {"i": items}, {"o": len(expected)}, _worst(txns, p_valid, p_ready), CASE.cycle_model.latency + 4
    )  # nothing extra may follow
    acc, out = ports.sources["i"].accepted, ports.sinks["o"].cycles
    return Streamed(acc, out, got["o"], expected, cycle_now() - c0, out[-1] - acc[0])


def _random_txns(rng: random.Random, n_items: int) -> list:
    """Random transactions of ``n_items`` input items at least, capped at the case's ``max_items`` (a
    paper-size array's per-cycle simulation is slow: its every stream stays that short)."""
    txns, count = [], 0
    while count < min(n_items, CASE.max_items or n_items):
        txns.append(CASE.random(rng))
        count += len(CASE.items(txns[-1]))
    return txns


@cocotb.test()
async def test_vectors(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED)
    txns = CASE.directed + _random_txns(rng, N_ITEMS)
    t0 = time.perf_counter()
    s = await _stream(dut, txns, rng, p_valid=0.8, p_ready=0.7)
    STATS.update(vectors=len(s.accepted), wall=time.perf_counter() - t0, cycles=s.cycles)
    check_scoreboard(s.expected, s.got, lambda i: f"output #{i}")


@cocotb.test()
async def test_reset_midstream(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED + 1)
    first = _random_txns(rng, 200) + _random_txns(rng, 1)  # two transactions at least: one is cut
    items, expected = _flatten(first)
    src = StreamSource(dut, "i", rng, 0.9)
    sink = StreamSink(dut, "o", rng, 0.5)
    feeder = cocotb.start_soon(src.send(items))
    await sink.wait_for(1, timeout_cycles=4 * CASE.txn_cycles(first[0]) + 100)
    await ClockCycles(dut.clk, 3)  # results still in flight
    feeder.cancel()
    sink.stop()
    src.valid.value = 0
    await reset(dut, cycles=3)
    partial = list(sink.items)
    assert 0 < len(partial) < len(expected), "reset must land mid-stream"
    check_scoreboard(expected[: len(partial)], partial)
    s = await _stream(dut, _random_txns(rng, 100), rng, 0.8, 0.7)
    check_scoreboard(s.expected, s.got)  # nothing from before the reset leaks


@cocotb.test()
async def test_pause_patterns(dut):
    await start_clock(dut)
    names = os.environ.get("MEMBOUND_PAUSES", ",".join(PAUSES)).split(",")
    for name in names:
        if name not in PAUSES:
            raise ValueError(f"MEMBOUND_PAUSES: {name!r} not allowed; allowed: {', '.join(PAUSES)}")
        await reset(dut)
        rng = random.Random(SEED + 3)
        txns = _random_txns(rng, 48)
        items, expected = _flatten(txns)
        src, snk = PAUSES[name]
        ports = PortStreams(dut, ["i"], ["o"], rng, pauses={"i": src, "o": snk})
        timeout = _worst(txns, active_share(src), active_share(snk))
        got = await ports.run({"i": items}, {"o": len(expected)}, timeout, CASE.cycle_model.latency + 4)
        check_scoreboard(expected, got["o"], lambda i, name=name: f"pauses {name}: output #{i}")


async def _lone(dut, txn, rng: random.Random, what: str) -> int:
    """Stream one transaction into a ready sink, assert its span against the case; return its latency."""
    s = await _stream(dut, [txn], rng, 1.0, 1.0)
    check_scoreboard(s.expected, s.got)
    assert s.span == CASE.txn_cycles(txn), f"{what}: measured {s.span} cycles, model {CASE.txn_cycles(txn)}"
    return s.out_cycles[-1] - s.accepted[-1]


@cocotb.test()
async def test_cycles(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED + 2)
    model = CASE.cycle_model
    latency = await _lone(dut, CASE.timing_txn(rng), rng, "lone transaction")
    burst = [CASE.timing_txn(rng) for _ in range(CASE.burst_txns)]
    s = await _stream(dut, burst, rng, 1.0, 1.0)
    check_scoreboard(s.expected, s.got)
    assert s.batches == 1, f"burst: {CASE.burst_txns} transactions do not fit one harness batch"
    assert s.span == CASE.burst_cycles(burst), (
        f"burst: measured {s.span} cycles, cycle model {CASE.burst_cycles(burst)}"
    )
    starts = (
        s.accepted
        if CASE.ii_per == "item"
        else [s.accepted[i] for i in itertools.accumulate([0] + [len(CASE.items(t)) for t in burst[:-1]])]
    )
    ii = (starts[-1] - starts[0]) / (len(starts) - 1)
    assert ii == model.ii, f"II: measured {ii} cycles per {CASE.ii_per}, cycle model {model.ii}"
    extra = dict(CASE.extra)
    if CASE.probe is not None:
        probe = CASE.probe(rng)
        await _lone(dut, probe, rng, "probe")
        extra.update(CASE.measure(dut, probe))
    # cycles per input item under the random gaps/backpressure of test_vectors, for the record
    stressed = _random_txns(rng, 256)
    s = await _stream(dut, stressed, rng, 0.8, 0.7)
    cpt = s.span / len(s.accepted)
    for txn in CASE.timed:
        await _lone(dut, txn, rng, "timed transaction")
    write_record(
        SPEC.unit,
        SPEC.all_params,
        SPEC.tag,
        model,
        latency=latency,
        ii=ii,
        cycles_per_transaction=ii,
        vectors=STATS["vectors"],
        sim_cycles=STATS["cycles"],
        wall_s=STATS["wall"],
        extra={"cycles_per_item_p_valid0.8_p_ready0.7": round(cpt, 3), **extra},
    )
