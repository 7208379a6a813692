"""cocotb module for `make bench`'s harness part (tb/bench.py): runs the batches in MEMBOUND_BENCH_BATCHES
(JSON list of :class:`tb.txn.Batch` fields) either transaction-level (tb/txn.py) or with the per-cycle
drivers of tb/streams.py (MEMBOUND_BENCH_MODE = txn | per_cycle), and writes the outputs, the batches'
cycles and the wall time of the simulation (stimulus generation excluded) to MEMBOUND_BENCH_OUT."""

from __future__ import annotations

import json
import os
import random
import time

import cocotb
from cocotb.triggers import ClockCycles

from tb.runner import TbSpec
from tb.streams import StreamSink, StreamSource, cycle_now, reset, start_clock
from tb.txn import Batch, HarnessLayout, run_batch

SPEC = TbSpec.from_env()
LAYOUT = HarnessLayout.of(SPEC.build_component(os.environ.get("MEMBOUND_SIM")))


async def _per_cycle(dut, b: Batch, rng: random.Random) -> tuple[dict, int]:
    sinks = {p: StreamSink(dut, p, rng, b.p_ready) for p in LAYOUT.outs}
    for p in LAYOUT.ins:
        getattr(dut, f"{p}__valid").value = 0
    c0 = cycle_now()
    feeds = [cocotb.start_soon(StreamSource(dut, p, rng, b.p_valid).send(items)) for p, items in b.inputs.items()]
    for f in feeds:
        await f
    for p, n in b.expect.items():
        await sinks[p].wait_for(n, b.timeout)
    await ClockCycles(dut.clk, b.linger)
    for s in sinks.values():
        s.stop()
    return {p: list(s.items) for p, s in sinks.items()}, cycle_now() - c0


@cocotb.test()
async def test_bench(dut):
    await start_clock(dut)
    await reset(dut)
    with open(os.environ["MEMBOUND_BENCH_BATCHES"]) as f:
        batches = [Batch(**b) for b in json.load(f)]
    mode, rng = os.environ["MEMBOUND_BENCH_MODE"], random.Random(1)
    out = {"items": [], "stamps": [], "cycles": 0}
    t0 = time.perf_counter()
    for b in batches:
        if mode == "txn":
            cap = await run_batch(dut, LAYOUT, b)
            out["items"].append(cap.items)
            out["stamps"].append(cap.cycles)
            out["cycles"] += cap.cycles_run
        else:
            items, cycles = await _per_cycle(dut, b, rng)
            out["items"].append(items)
            out["cycles"] += cycles
    out["wall_s"] = time.perf_counter() - t0
    with open(os.environ["MEMBOUND_BENCH_OUT"], "w") as f:
        json.dump(out, f)
