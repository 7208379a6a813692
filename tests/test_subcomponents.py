"""Sub-components of the paper units, tested in process with Amaranth's own simulator (as Glasgow and LUNA
test gateware): each contract in a few dozen cycles, under random valid gaps and ready backpressure, beside
the cocotb testbench of the whole unit (tests/test_tb_*.py)."""

from __future__ import annotations

import random
from collections.abc import Callable

from amaranth.sim import Simulator

from golden import duplex, hermes_spec
from golden.duplex_spec import REDUCED, Err, Op
from golden.softmax import NEG_INF
from hw.common.softmax import RowStore
from hw.duplex.gemm_module import Controller
from hw.hermes.gemv import Descriptor
from hw.l3.softmax_unit import Collector, TokenBuffer


def simulate(dut, bench: Callable) -> None:
    sim = Simulator(dut)
    sim.add_clock(1e-8, if_exists=True)  # a combinational component has no clock domain
    sim.add_testbench(bench)
    sim.run()


def test_row_store_reads_a_row_back_in_order_under_backpressure() -> None:
    """hw/common/softmax.py RowStore: every beat written is read back once per pass, in order, ``last`` on
    the final one, whatever the sink's ready; a row past the buffer sets ``over``; ``clear`` forgets it."""
    lanes, max_beats, rng = 2, 4, random.Random(1)
    dut = RowStore(lanes, max_beats)
    beats = [[rng.getrandbits(16) for _ in range(lanes)] for _ in range(3)]
    passes: list[list] = []

    async def bench(ctx):
        for b in beats:
            ctx.set(dut.w.valid, 1)
            ctx.set(dut.w.payload, b)
            await ctx.tick()
        ctx.set(dut.w.valid, 0)
        assert ctx.get(dut.over) == 0
        for _ in range(2):  # two passes, as the softmax's passes 2 and 3
            ctx.set(dut.restart, 1)
            await ctx.tick()
            ctx.set(dut.restart, 0)
            ctx.set(dut.issuing, 1)
            got = []
            while not got or not got[-1][1]:
                ready = rng.random() < 0.5
                ctx.set(dut.o.ready, ready)
                if ctx.get(dut.o.valid) and ready:
                    got.append(([ctx.get(dut.o.payload.s)[j] for j in range(lanes)], ctx.get(dut.o.payload.last)))
                await ctx.tick()
            ctx.set(dut.issuing, 0)
            passes.append(got)
        for _ in range(max_beats + 1 - len(beats) + 1):  # overflow: max_beats + 1 beats in all
            ctx.set(dut.w.valid, 1)
            await ctx.tick()
        ctx.set(dut.w.valid, 0)
        assert ctx.get(dut.over) == 1
        ctx.set(dut.clear, 1)
        await ctx.tick()
        assert ctx.get(dut.over) == 0

    simulate(dut, bench)
    want = [(b, int(i == len(beats) - 1)) for i, b in enumerate(beats)]
    assert passes == [want, want]


def test_l3_collector_pads_the_last_chunk_and_waits_for_clear() -> None:
    """hw/l3/softmax_unit.py Collector: scores in chunks of ``chunk`` in order, the head's last chunk padded
    with -Inf and marked ``last``; after it, no score is taken until ``clear``."""
    chunk, rng = 4, random.Random(2)
    dut = Collector(chunk, 8)
    scores = [rng.getrandbits(15) for _ in range(6)]
    chunks: list = []

    async def bench(ctx):
        ctx.set(dut.pass1, 1)
        sent, cycles = 0, 0
        while len(chunks) < 2:
            offer = sent < len(scores) and rng.random() < 0.7
            ready = rng.random() < 0.6
            ctx.set(dut.i.valid, offer)
            if offer:
                ctx.set(dut.i.payload, {"s": scores[sent], "last": int(sent == len(scores) - 1)})
            ctx.set(dut.o.ready, ready)
            if offer and ctx.get(dut.i.ready):
                sent += 1
            if ctx.get(dut.o.valid) and ready:
                chunks.append(([ctx.get(dut.o.payload.s)[j] for j in range(chunk)], ctx.get(dut.o.payload.last)))
            await ctx.tick()
            cycles += 1
            assert cycles < 200
        assert ctx.get(dut.count) == len(scores)
        ctx.set(dut.i.valid, 1)
        assert ctx.get(dut.i.ready) == 0  # closed until the head's output is done
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        assert ctx.get(dut.i.ready) == 1 and ctx.get(dut.count) == 0

    simulate(dut, bench)
    assert chunks == [(scores[:4], 0), (scores[4:] + [NEG_INF] * 2, 1)]


def test_l3_token_buffer_reads_tokens_from_chunk_words() -> None:
    """hw/l3/softmax_unit.py TokenBuffer: chunk words written (exponentials and the chunk's max) read back
    one token per accepted cycle — token t is lane t mod chunk of word t // chunk — ``last`` on token
    ``count`` - 1."""
    chunk, rng = 4, random.Random(3)
    dut = TokenBuffer(chunk, 4, 8)
    words = [([rng.getrandbits(15) for _ in range(chunk)], rng.getrandbits(15)) for _ in range(2)]
    n, got = 7, []

    async def bench(ctx):
        for a, (e, mx) in enumerate(words):
            ctx.set(dut.w_en, 1)
            ctx.set(dut.w_addr, a)
            ctx.set(dut.w_e, e)
            ctx.set(dut.w_m, mx)
            await ctx.tick()
        ctx.set(dut.w_en, 0)
        ctx.set(dut.count, n)
        ctx.set(dut.restart, 1)
        await ctx.tick()
        ctx.set(dut.restart, 0)
        ctx.set(dut.issuing, 1)
        while not got or not got[-1][2]:
            ready = rng.random() < 0.5
            ctx.set(dut.o.ready, ready)
            if ctx.get(dut.o.valid) and ready:
                p = ctx.get(dut.o.payload)
                got.append((p.e, p.m, p.last))
            await ctx.tick()

    simulate(dut, bench)
    assert got == [(words[t // chunk][0][t % chunk], words[t // chunk][1], int(t == n - 1)) for t in range(n)]


def _controller_run(items: list[tuple[int, int, int]], seed: int) -> tuple[list, list]:
    """Drive a reduced Duplex Controller with command items (random gaps); its X writes (lane, address)
    and the drain steps (last, error) it asks for."""
    dut, rng = Controller(REDUCED), random.Random(seed)
    writes: list = []
    drains: list = []

    async def bench(ctx):
        i, cycles = 0, 0
        while not drains or not drains[-1][0]:
            offer = i < len(items) and rng.random() < 0.7
            ctx.set(dut.i.valid, offer)
            if offer:
                op, data, last = items[i]
                ctx.set(dut.i.payload, {"op": op, "data": data, "last": last})
            ctx.set(dut.drain.ready, 1)
            if offer and ctx.get(dut.i.ready):
                if ctx.get(dut.x_we):
                    writes.append((ctx.get(dut.x_lane), ctx.get(dut.x_addr)))
                i += 1
            if ctx.get(dut.drain.valid):
                drains.append((ctx.get(dut.drain.payload.last), ctx.get(dut.drain.payload.error.as_value())))
            await ctx.tick()
            cycles += 1
            assert cycles < 2000

    simulate(dut, bench)
    return writes, drains


def test_duplex_controller_places_inputs_and_flags_descriptors() -> None:
    """hw/duplex/gemm_module.py Controller: token j's X beats go to lane j mod lanes, words (j div lanes) *
    kb + beat; a descriptor the module cannot run is answered with one drain step carrying its flags."""
    g = REDUCED
    m_, k, n = 2 * g.rows, 2 * g.rows, 3
    kb = k // g.rows
    items = (
        [(Op.DESC, duplex.pack_desc(m_, k, n), 0)]
        + [(Op.X, 0, 0)] * (n * kb)
        + [(Op.W, 0, int(b == m_ // g.rows * k - 1)) for b in range(m_ // g.rows * k)]
    )
    writes, drains = _controller_run(items, 4)
    assert writes == [(j % g.lanes, (j // g.lanes) * kb + b) for j in range(n) for b in range(kb)]
    assert len(drains) == m_ // g.rows * n and drains[-1] == (1, 0)  # a drain step per token per row block
    _, bad = _controller_run([(Op.DESC, duplex.pack_desc(g.rows + 1, k, n), 1)], 5)
    assert bad == [(1, int(Err.M_ALIGN))]


def test_hermes_descriptor_fields_come_from_the_spec_layout() -> None:
    """hw/hermes/gemv.py Descriptor: the fields golden.hermes_spec.pack_desc packs come out by name."""
    g, desc = hermes_spec.REDUCED, (1, 5, 3, 4)
    dut = Descriptor(g)

    async def bench(ctx):
        ctx.set(dut.data, hermes_spec.pack_desc(*desc))
        assert (ctx.get(dut.mode), ctx.get(dut.n), ctx.get(dut.kb), ctx.get(dut.batch)) == desc
        ctx.set(dut.data, hermes_spec.pack_desc(0, 0, 3, 4))
        assert ctx.get(dut.error.zero_dim) == 1

    simulate(dut, bench)
