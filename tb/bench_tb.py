"""cocotb module for `make bench`'s harness part (tb/bench.py): runs the batches in MEMBOUND_BENCH_BATCHES
(JSON list of :class:`tb.txn.Batch` fields) either transaction-level (tb/txn.py) or with the per-cycle
drivers of tb/streams.py (MEMBOUND_BENCH_MODE = txn | per_cycle), MEMBOUND_BENCH_REPEATS times, and writes
the outputs, the batches' cycles and the fastest repeat's wall time of the simulation (stimulus generation
excluded) to MEMBOUND_BENCH_OUT."""

from __future__ import annotations

import json
import os
import random
import time

import cocotb

from tb.runner import TbSpec
from tb.streams import PortStreams, cycle_now, reset, start_clock
from tb.txn import Batch, HarnessLayout, run_batch

SPEC = TbSpec.from_env()
LAYOUT = HarnessLayout.of(SPEC.build_component(os.environ.get("MEMBOUND_SIM")))


async def _per_cycle(dut, b: Batch, rng: random.Random) -> tuple[dict, int]:
    ports = PortStreams(dut, LAYOUT.ins, LAYOUT.outs, rng, b.p_valid, b.p_ready)
    c0 = cycle_now()
    items = await ports.run(b.inputs, b.expect, b.timeout, b.linger)
    return items, cycle_now() - c0


@cocotb.test()
async def test_bench(dut):
    await start_clock(dut)
    await reset(dut)
    with open(os.environ["MEMBOUND_BENCH_BATCHES"]) as f:
        batches = [Batch(**b) for b in json.load(f)]
    mode, rng = os.environ["MEMBOUND_BENCH_MODE"], random.Random(1)
    runs = []
    for _ in range(int(os.environ.get("MEMBOUND_BENCH_REPEATS", "1"))):
        out: dict = {"items": [], "stamps": [], "cycles": 0}
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
        runs.append(out)
    # the batches again give the same outputs (per-cycle stamps move with the pause draws): time the fastest
    if any(r["items"] != runs[0]["items"] or (mode == "txn" and r["stamps"] != runs[0]["stamps"]) for r in runs):
        raise AssertionError(f"{mode}: a repeat of the same batches gave other outputs")
    with open(os.environ["MEMBOUND_BENCH_OUT"], "w") as f:
        json.dump({**runs[0], "wall_s": min(r["wall_s"] for r in runs)}, f)
