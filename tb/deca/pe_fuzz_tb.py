"""cocotb module for tests/test_deca_fuzz.py: runs the tile batches it wrote to MEMBOUND_DECA_VECTORS
through the DECA PE's harness (transaction-level, tb/txn.py; random gaps/backpressure per batch) and checks
them against golden.deca."""

from __future__ import annotations

import json
import os
import random

import cocotb

from golden import deca
from golden.deca_spec import TileCmd
from tb.deca.pe_tb import NV, SEED, Tiles, golden_tile
from tb.streams import check_scoreboard, reset, start_clock


@cocotb.test()
async def test_from_file(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED + 5)
    with open(os.environ["MEMBOUND_DECA_VECTORS"]) as f:
        batches = json.load(f)
    assert batches, "MEMBOUND_DECA_VECTORS holds no batch"
    for b in batches:
        fmt = deca.DecaFormat("fuzz", b["bits"], tuple(b["table"]) if b["table"] else None, group=b["group"])
        streams = [deca.TileStreams(TileCmd(**t["cmd"]), t["lines"], t["mask"], t["scales"]) for t in b["tiles"]]
        h = Tiles(dut, rng)
        await h.program(fmt, b["p_valid"])
        cap = await h.run(streams, b["p_valid"], b["p_ready"])
        check_scoreboard(
            [c for ts in streams for c in golden_tile(ts, fmt)],
            cap.items["o"],
            lambda i, name=b["name"]: f"batch {name} tile {i // NV} chunk {i % NV}",
        )
