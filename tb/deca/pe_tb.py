"""cocotb testbench for the DECA PE (hw/deca/pe.py); W and L come from MEMBOUND_TB_SPEC.

* test_formats (transaction-level, tb/txn.py): every format at every density — random tiles (every code
  value, random scales) through all five input ports with random valid gaps and output backpressure; every output chunk
  bit-exact against golden.deca.pe_decompress, flags included. Then the same tiles back to back with
  ready ports: each tile's cycles must equal the data-dependent cycle model exactly
  (hw.deca.cycles.tile_cycles), and the mean bubbles per vOp over MEMBOUND_DECA_TILES tiles must lie
  within 4 standard errors of the paper's binomial bpv(W, Lq, d) (masks are i.i.d. Bernoulli(d)).
  Writes a characterization record per (format, density).
* test_mx_special_values (transaction-level): Inf/NaN weights to NaN group scales, end to end.
* test_every_code (transaction-level): every code of every 8-bit format (E4M3 and E5M2 included) through the
  PE, at unit and random scales: exhaustive over the codes.
The next two keep the per-cycle drivers (tb/streams.py), which can cut a stream at any cycle:
* test_malformed: short/long value, mask and scale streams and bad descriptors, each followed by a good
  tile: flags and data as golden, never a hang, later tiles unaffected.
* test_reset_midstream: reset with tiles in flight, then a fresh batch must come out exact.
* test_pause_patterns: every named pause pattern of ``tb.streams.PAUSES`` on the input ports' valid and
  the output's ready (per cycle), a few sparse Q8 tiles each: exact against golden.
The hypothesis fuzzer's tiles run through tb/deca/pe_fuzz_tb.py with the same transaction-level batches.
"""

from __future__ import annotations

import math
import os
import random
import time

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from golden import deca
from golden.deca_spec import TILE, TileCmd, err_names
from hw.deca import cycles
from hw.deca.cycles import UNIT_PE, pe_record
from hw.deca.pe import FILL_TO_OUT, cycle_model
from hw.deca.tout import chunk_out
from tb.charz import write_record
from tb.deca.streams import expected_chunks, lut_items, tile_items
from tb.runner import TbSpec
from tb.streams import (
    PAUSES,
    PortStreams,
    StreamSource,
    active_share,
    check_scoreboard,
    field,
    reset,
    start_clock,
)
from tb.txn import Batch, Capture, HarnessLayout, run_batch

SPEC = TbSpec.from_env()
W, L = SPEC.params["w"], SPEC.params["lanes"]
NV = TILE // W
CHUNK = chunk_out(W)
SEED = int(os.environ.get("MEMBOUND_SEED", "1"))
N_TILES = int(os.environ.get("MEMBOUND_DECA_TILES", "24"))
DENSITIES = [1.0, 0.5, 0.3, 0.2, 0.1, 0.05, 0.0]
PORTS = ("cmd", "sqq", "mask", "scale")  # the input ports a tile's traffic uses
BF16_ONE = 0x3F80


def formats() -> list[deca.DecaFormat]:
    return [f for f in deca.FORMATS.values() if f.group is None or f.group >= W]


class PerCycle(PortStreams):
    """One batch of tiles with the per-cycle drivers (tests that cut a stream): a source per input port, a
    sink on the output."""

    def __init__(self, dut, rng: random.Random, p_valid: float, p_ready: float, pauses: dict | None = None):
        super().__init__(dut, ("lut", *PORTS), ("o",), rng, p_valid, p_ready, pauses)
        self.sink = self.sinks["o"]

    async def program(self, fmt: deca.DecaFormat) -> None:
        if fmt.table is not None:
            await self.send("lut", lut_items(deca.lut_image(fmt)))

    async def tiles(self, streams: list[deca.TileStreams]) -> tuple[list[int], StreamSource]:
        """Send the tiles on all ports at once; return the output chunks and the cmd source (whose
        acceptance cycles are the tiles' descriptor retirements). A hang fails on the time budget."""
        items = {p: [] for p in PORTS}
        for ts in streams:
            for p, v in tile_items(ts, W).items():
                items[p] += v
        p_valid = min([self.p_valid] + [active_share(self.pauses[p]) for p in PORTS if p in self.pauses])
        budget = sum(4 * NV + 4 * len(ts.lines) + 16 for ts in streams) / max(self.sink.p_ready, 0.05) / p_valid + 300
        got = await self.run(items, {"o": NV * len(streams)}, int(budget), FILL_TO_OUT + NV + 4)
        return got["o"], self.sources["cmd"]


class Tiles:
    """Transaction-level batches of tiles through the harness (tb/txn.py): the LUT image in one batch,
    then the tiles' traffic on all ports at once, random gaps/backpressure drawn inside the harness."""

    def __init__(self, dut, rng: random.Random):
        self.dut, self.rng = dut, rng

    async def program(self, fmt: deca.DecaFormat, p_valid: float = 1.0) -> None:
        if fmt.table is not None:
            items = lut_items(deca.lut_image(fmt))
            await run_batch(
                self.dut,
                LAYOUT,
                Batch(
                    {"lut": items},
                    {"o": 0},
                    p_valid,
                    1.0,
                    self.rng.getrandbits(32),
                    linger=2,
                    timeout=4 * len(items) + 100,
                ),
            )

    async def run(self, streams: list[deca.TileStreams], p_valid: float, p_ready: float) -> Capture:
        """The tiles' output chunks and stamps (``accepted["cmd"]``: the descriptors' retirements)."""
        items = {p: [] for p in PORTS}
        for ts in streams:
            for p, v in tile_items(ts, W).items():
                items[p] += v
        # generous (a hang still ends in well under a second): a vOp can take W / Lq cycles of bubbles
        budget = sum(64 * NV + 4 * len(ts.lines) + 16 for ts in streams) / max(p_ready, 0.05) / p_valid + 300
        b = Batch(
            items,
            {"o": NV * len(streams)},
            p_valid,
            p_ready,
            self.rng.getrandbits(32),
            linger=FILL_TO_OUT + NV + 4,
            timeout=int(budget),
            stamps=["cmd"],
        )
        return await run_batch(self.dut, LAYOUT, b)


def golden_tile(ts: deca.TileStreams, fmt: deca.DecaFormat) -> list[int]:
    out, flags = deca.pe_decompress(ts, deca.lut_image(fmt) if fmt.table else [], W)
    return expected_chunks(out, flags, W)


def windows(tile: deca.CompressedTile) -> list[int]:
    if tile.mask is None:
        return [W] * NV
    return [int(np.count_nonzero(tile.mask[v * W : (v + 1) * W])) for v in range(NV)]


def tile_ends(cap: Capture) -> list[int]:
    """The cycles at which each tile's last chunk was accepted."""
    return [c for c, item in zip(cap.cycles["o"], cap.items["o"], strict=True) if field(CHUNK, "last", item)]


def check_cycles(cap: Capture, tiles: list, fmt: deca.DecaFormat) -> list[int]:
    """Exact per-tile cycles and latency against the cycle model; returns the measured intervals."""
    ends = tile_ends(cap)
    lq_ = cycles.lq(fmt.bits, L, W)
    model = [cycles.tile_cycles(windows(t), lq_) for t in tiles]
    measured = [b - a for a, b in zip(ends, ends[1:], strict=False)]
    assert measured == model[1:], f"{fmt.name}: cycles per tile {measured} vs model {model[1:]}"
    lat = {e - a for e, a in zip(ends, cap.accepted["cmd"], strict=True)}
    assert lat == {MODEL.latency}, f"{fmt.name}: tile latency {lat} vs model {MODEL.latency}"
    return measured


MODEL = cycle_model(W, L)
LAYOUT = HarnessLayout.of(SPEC.build_component(os.environ.get("MEMBOUND_SIM")))


def check_bubbles(measured: list[int], fmt: deca.DecaFormat, d: float, lq_: int) -> dict:
    """The mean bubbles per vOp must lie within 4 standard errors of the paper's binomial bpv(W, Lq, d);
    returns the record's figures."""
    bubbles = (sum(measured) - NV * len(measured)) / (NV * len(measured))
    expect = cycles.bpv(W, lq_, d)
    se = cycles.bpv_std(W, lq_, d) / math.sqrt(NV * len(measured))
    assert abs(bubbles - expect) <= 4 * se + 1e-9, (
        f"{fmt.name} d={d}: {bubbles:.3f} bubbles/vOp, bpv formula {expect:.3f} (4 SE {4 * se:.3f})"
    )
    return {
        "lq": lq_,
        "bubbles_per_vop": round(bubbles, 4),
        "bpv_formula": round(expect, 4),
        "bpv_4se": round(4 * se, 4),
    }


async def check_format(h: Tiles, fmt: deca.DecaFormat, d: float, nrng: np.random.Generator) -> tuple[float, float, int]:
    """N_TILES random tiles of ``fmt`` at density ``d``: bit-exact under random gaps and backpressure, then
    with ready ports exact cycles per tile and the bubble statistics; writes the (format, density) record.
    Returns (cycles per tile, wall seconds, simulated cycles)."""
    sparse = d < 1.0
    tiles = [deca.random_tile(nrng, fmt, d, sparse) for _ in range(N_TILES)]
    streams = [deca.TileStreams.of(t, W) for t in tiles]
    expected = [c for ts in streams for c in golden_tile(ts, fmt)]
    t0 = time.perf_counter()
    # 1) random gaps and backpressure: bit-exact, in order, nothing lost or duplicated
    await h.program(fmt, 0.8)
    cap = await h.run(streams, 0.8, 0.7)
    check_scoreboard(expected, cap.items["o"], lambda i, f=fmt, dd=d: f"{f.name} d={dd} tile {i // NV} chunk {i % NV}")
    stressed = tile_ends(cap)
    stressed_cpt = (stressed[-1] - stressed[0]) / (len(stressed) - 1)
    # 2) ready ports: exact cycles per tile and latency, bubble statistics
    ready = await h.run(streams, 1.0, 1.0)
    check_scoreboard(expected, ready.items["o"])
    measured = check_cycles(ready, tiles, fmt)
    simc, wall = cap.cycles_run + ready.cycles_run, time.perf_counter() - t0
    stats = check_bubbles(measured, fmt, d, cycles.lq(fmt.bits, L, W))
    cpt = sum(measured) / len(measured)
    write_record(
        UNIT_PE,
        pe_record(W, L, fmt.name, d),
        f"{SPEC.tag}-{fmt.name}-d{d}",
        cycle_model(W, L, fmt.bits, d),
        latency=MODEL.latency,
        ii=cpt,
        cycles_per_transaction=cpt,
        vectors=2 * len(tiles) * TILE,
        sim_cycles=simc,
        wall_s=wall,
        extra={
            "parent": SPEC.tag,
            **stats,
            "tiles": len(tiles),
            "cycles_per_tile_p_valid0.8_p_ready0.7": round(stressed_cpt, 2),
        },
    )
    return cpt, wall, simc


@cocotb.test()
async def test_formats(dut):
    await start_clock(dut)
    await reset(dut)
    rng = random.Random(SEED)
    nrng = np.random.default_rng(SEED)
    h = Tiles(dut, rng)
    checked = 0
    for fmt in formats():
        for d in DENSITIES:
            cpt, wall, simc = await check_format(h, fmt, d, nrng)
            checked += 2 * N_TILES * TILE
            if fmt.name == "q8" and d == 1.0:
                dense_q8 = (cpt, wall, simc)
    cpt, wall, simc = dense_q8
    write_record(
        UNIT_PE,
        SPEC.params,
        SPEC.tag,
        MODEL,
        latency=MODEL.latency,
        ii=cpt,
        cycles_per_transaction=cpt,
        vectors=checked,
        sim_cycles=simc,
        wall_s=wall,
        extra={"what": "dense q8 tiles; per-format records carry parent=" + SPEC.tag},
    )


def malformed_cases(nrng: np.random.Generator) -> list[tuple[str, deca.DecaFormat, deca.TileStreams]]:
    """Each case is followed by a good tile of the same format when run."""

    def ts(fmt, d):
        return deca.TileStreams.of(deca.random_tile(nrng, fmt, d), W)

    q8, q4 = deca.Q8_E5M2, deca.Q4_MXFP4
    cases = []
    t = ts(q8, 0.5)
    cases.append(("values short", q8, deca.TileStreams(t.cmd, t.lines[:-1] or [0], t.mask, t.scales)))
    t = ts(q8, 0.5)
    cases.append(("values long", q8, deca.TileStreams(t.cmd, t.lines + [7, 9], t.mask, t.scales)))
    t = ts(q8, 0.3)
    cases.append(("mask short", q8, deca.TileStreams(t.cmd, t.lines, t.mask[:5], t.scales)))
    t = ts(q8, 0.3)
    cases.append(("mask long", q8, deca.TileStreams(t.cmd, t.lines, t.mask + [3, 5], t.scales)))
    t = ts(q8, 0.3)  # more ones in the mask than values delivered: nonzero count != popcount
    cases.append(("popcount > values", q8, deca.TileStreams(t.cmd, t.lines, [(1 << W) - 1] * NV, t.scales)))
    if q4.group >= W:
        t = ts(q4, 1.0)
        cases.append(("scales short", q4, deca.TileStreams(t.cmd, t.lines, t.mask, t.scales[:3])))
        t = ts(q4, 1.0)
        cases.append(("scales long", q4, deca.TileStreams(t.cmd, t.lines, t.mask, t.scales + [BF16_ONE])))
    t = ts(q8, 0.5)
    for bits in (0, 12):
        cases.append((f"bad bits {bits}", q8, deca.TileStreams(TileCmd(bits, True, False), t.lines, t.mask, [])))
    t = ts(q4, 1.0)
    cases.append(("bad group", q4, deca.TileStreams(TileCmd(4, False, True, 2), t.lines, [], t.scales)))
    return [(name, f, bad) for name, f, bad in cases] + [("good after", q8, ts(q8, 0.2))]


@cocotb.test()
async def test_malformed(dut):
    await start_clock(dut)
    await reset(dut)
    rng, nrng = random.Random(SEED + 3), np.random.default_rng(SEED + 3)
    for name, fmt, bad in malformed_cases(nrng):
        good = deca.TileStreams.of(deca.random_tile(nrng, fmt, 0.3), W)
        h = PerCycle(dut, rng, 0.8, 0.7)
        await h.program(fmt)
        got, _ = await h.tiles([bad, good])
        expected = golden_tile(bad, fmt) + golden_tile(good, fmt)
        check_scoreboard(expected, got, lambda i, n=name: f"{n}: tile {i // NV} chunk {i % NV}")
        flags = field(CHUNK, "error", expected[0])
        assert (flags != 0) == (name != "good after"), f"{name}: flags {flags:#x}"
        dut._log.info("%s: flags %s", name, err_names(flags))


@cocotb.test()
async def test_mx_special_values(dut):
    """OCP MX special values end to end: weights with Inf and NaN compress to NaN group scales
    (golden.fp.mx_quantize); the RTL's whole groups come out NaN, bit-exact with golden."""
    await start_clock(dut)
    await reset(dut)
    rng, nrng = random.Random(SEED + 6), np.random.default_rng(SEED + 6)
    x = nrng.standard_normal(TILE) * 0.05
    x[[3, 200, 450]] = [np.inf, np.nan, -np.inf]
    tiles = [deca.compress(x, deca.Q4_MXFP4), deca.compress(x, deca.Q4_MXFP4, 0.5)]
    streams = [deca.TileStreams.of(t, W) for t in tiles]
    h = Tiles(dut, rng)
    await h.program(deca.Q4_MXFP4, 0.8)
    cap = await h.run(streams, 0.8, 0.7)
    check_scoreboard([c for ts in streams for c in golden_tile(ts, deca.Q4_MXFP4)], cap.items["o"])


def every_code_tiles(fmt: deca.DecaFormat, nrng: np.random.Generator) -> list[deca.CompressedTile]:
    """Dense tiles holding each of ``fmt``'s codes equally often in a shuffled order: one at unit scales
    (BF16 1.0: the decoded value itself), two at random scales (every code through the scale multiply)."""
    codes = np.resize(np.arange(1 << fmt.bits, dtype=np.uint16), TILE)
    tiles = []
    for k in range(3):
        scales = None
        if fmt.group is not None:
            drawn = np.full(fmt.n_scales, BF16_ONE) if k == 0 else nrng.integers(0, 1 << 16, fmt.n_scales)
            scales = drawn.astype(np.uint16)
        tile = deca.CompressedTile(fmt, nrng.permutation(codes), None, scales)
        tile.check()
        tiles.append(tile)
    return tiles


@cocotb.test()
async def test_every_code(dut):
    """Every code of every 8-bit format (Q8 E5M2, Q8 E4M3, INT8, ...) through the PE, bit-exact with golden:
    exhaustive over the codes by simulation. No arithmetic unit takes E4M3 (hw.arith's units are
    IEEE-style only): an E4M3 code enters the hardware through the LUT (decoded to BF16) and the BF16
    scale multiply, which this test runs for each of the 256 codes."""
    await start_clock(dut)
    await reset(dut)
    rng, nrng = random.Random(SEED + 7), np.random.default_rng(SEED + 7)
    h = Tiles(dut, rng)
    eight = [f for f in formats() if f.bits == 8]
    assert {deca.Q8_E5M2.name, deca.Q8_E4M3.name} <= {f.name for f in eight}
    for fmt in eight:
        streams = [deca.TileStreams.of(t, W) for t in every_code_tiles(fmt, nrng)]
        await h.program(fmt, 0.8)
        cap = await h.run(streams, 0.8, 0.7)
        check_scoreboard(
            [c for ts in streams for c in golden_tile(ts, fmt)], cap.items["o"], lambda i, f=fmt: f"{f.name} chunk {i}"
        )


@cocotb.test()
async def test_reset_midstream(dut):
    await start_clock(dut)
    await reset(dut)
    rng, nrng = random.Random(SEED + 4), np.random.default_rng(SEED + 4)
    fmt = deca.Q8_E5M2
    h = PerCycle(dut, rng, 0.9, 0.5)
    await h.program(fmt)
    streams = [deca.TileStreams.of(deca.random_tile(nrng, fmt, 0.3), W) for _ in range(6)]
    task = cocotb.start_soon(h.tiles(streams))
    await ClockCycles(dut.clk, 120)
    task.cancel()
    h.stop()
    await reset(dut, cycles=3)
    partial = list(h.sink.items)
    expected = [c for ts in streams for c in golden_tile(ts, fmt)]
    assert 0 < len(partial) < len(expected), "reset must land mid-batch"
    check_scoreboard(expected[: len(partial)], partial)
    fresh = [deca.TileStreams.of(deca.random_tile(nrng, fmt, d), W) for d in (1.0, 0.2, 0.05)]
    cap = await Tiles(dut, rng).run(fresh, 0.8, 0.7)  # the harness after a reset of the whole design
    check_scoreboard([c for ts in fresh for c in golden_tile(ts, fmt)], cap.items["o"])


@cocotb.test()
async def test_pause_patterns(dut):
    await start_clock(dut)
    fmt = deca.Q8_E5M2
    for name, (src, snk) in PAUSES.items():
        await reset(dut)
        rng, nrng = random.Random(SEED + 5), np.random.default_rng(SEED + 5)
        h = PerCycle(dut, rng, 1.0, 1.0, {**dict.fromkeys(PORTS, src), "o": snk})
        await h.program(fmt)
        streams = [deca.TileStreams.of(deca.random_tile(nrng, fmt, d), W) for d in (0.5, 0.2)]
        got, _ = await h.tiles(streams)
        expected = [c for ts in streams for c in golden_tile(ts, fmt)]
        check_scoreboard(expected, got, lambda i, name=name: f"pauses {name}: chunk #{i}")
