"""cocotb testbench for every hw/arith unit (the unit and its parameters come from MEMBOUND_TB_SPEC).

* test_vectors: the directed edge cases, then MEMBOUND_VECTORS (default 10,000) seeded random vectors,
  with random valid gaps and ready backpressure; every result bit-exact against the golden twin, in
  order, none lost or duplicated.
* test_reset_midstream: reset while results are in flight, then a fresh stream must come out exact.
* test_cycles: latency of a lone item and II of a back-to-back burst, asserted equal to the unit's
  documented cycle model; writes the characterization record.
"""

from __future__ import annotations

import os
import random
import time

import cocotb
from cocotb.triggers import ClockCycles

from tb import mutants
from tb.arith.cases import arith_case
from tb.charz import write_record
from tb.runner import TbSpec
from tb.streams import StreamSink, StreamSource, check_scoreboard, cycle_now, pack, reset, start_clock

if os.environ.get("MEMBOUND_GOLDEN_MUTANT"):
    mutants.apply(os.environ["MEMBOUND_GOLDEN_MUTANT"])
SPEC = TbSpec.from_env()
CASE = arith_case(SPEC)
SEED = int(os.environ.get("MEMBOUND_SEED", "1"))
N_RANDOM = int(os.environ.get("MEMBOUND_VECTORS", "10000"))
BURST = 64
STATS = {"vectors": 0, "wall": 0.0, "cycles": 0}


def _layout():
    return SPEC.build_component().i.payload.shape()


LAYOUT = _layout()


async def _stream(dut, vectors: list[dict], rng: random.Random, p_valid: float, p_ready: float):
    src = StreamSource(dut, "i", rng, p_valid)
    sink = StreamSink(dut, "o", rng, p_ready)
    await src.send(pack(LAYOUT, v) for v in vectors)
    worst = 4 * (CASE.cycle_model.cycles(len(vectors)) + 10) / max(p_ready, 0.05)
    got = await sink.wait_for(len(vectors), timeout_cycles=int(worst))
    await ClockCycles(dut.clk, CASE.cycle_model.latency + 4)  # nothing extra may follow
    sink.stop()
    return src, sink, list(got)


@cocotb.test()
async def test_vectors(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED)
    vectors = CASE.directed + [CASE.random(rng) for _ in range(N_RANDOM)]
    expected = [CASE.golden(v) for v in vectors]
    t0, c0 = time.perf_counter(), cycle_now()
    _, _, got = await _stream(dut, vectors, rng, p_valid=0.8, p_ready=0.7)
    STATS.update(vectors=len(vectors), wall=time.perf_counter() - t0, cycles=cycle_now() - c0)
    check_scoreboard(expected, got, lambda i: f"inputs {vectors[i]}")


@cocotb.test()
async def test_reset_midstream(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED + 1)
    first = [CASE.random(rng) for _ in range(200)]
    src = StreamSource(dut, "i", rng, 0.9)
    sink = StreamSink(dut, "o", rng, 0.5)
    feeder = cocotb.start_soon(src.send(pack(LAYOUT, v) for v in first))
    await ClockCycles(dut.clk, 60)
    feeder.cancel()
    sink.stop()
    src.valid.value = 0
    await reset(dut, cycles=3)
    partial = list(sink.items)
    assert 0 < len(partial) < len(first), "reset must land mid-stream"
    check_scoreboard([CASE.golden(v) for v in first[:len(partial)]], partial)
    second = [CASE.random(rng) for _ in range(100)]
    _, _, got = await _stream(dut, second, rng, 0.8, 0.7)
    check_scoreboard([CASE.golden(v) for v in second], got)  # nothing from before the reset leaks


@cocotb.test()
async def test_cycles(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED + 2)
    model = CASE.cycle_model
    src, sink, _ = await _stream(dut, [CASE.random(rng)], rng, 1.0, 1.0)
    latency = sink.cycles[0] - src.accepted[0]
    assert latency == model.latency, f"latency: measured {latency}, cycle model {model.latency}"
    burst = [CASE.random(rng) for _ in range(BURST)]
    src, sink, got = await _stream(dut, burst, rng, 1.0, 1.0)
    check_scoreboard([CASE.golden(v) for v in burst], got)
    span = sink.cycles[-1] - src.accepted[0]
    ii = (sink.cycles[-1] - sink.cycles[0]) / (BURST - 1)
    assert span == model.cycles(BURST), f"burst: measured {span} cycles, cycle model {model.cycles(BURST)}"
    assert ii == model.ii, f"II: measured {ii}, cycle model {model.ii}"
    # cycles per item under the random gaps/backpressure of test_vectors, for the record
    stressed = [CASE.random(rng) for _ in range(256)]
    src, sink, _ = await _stream(dut, stressed, rng, 0.8, 0.7)
    cpt = (sink.cycles[-1] - src.accepted[0]) / len(stressed)
    write_record(SPEC.unit, SPEC.params, SPEC.tag, model, latency=latency, ii=ii,
                 cycles_per_transaction=ii, vectors=STATS["vectors"], sim_cycles=STATS["cycles"],
                 wall_s=STATS["wall"], extra={"cycles_per_item_p_valid0.8_p_ready0.7": round(cpt, 3)})
