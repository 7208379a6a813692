"""L3 formal properties: the stream contract of every L3 unit at its testbench sizes, and the re-layout
unit's address mapping proved equal to ``golden.l3.relayout`` (every data, every gap and backpressure
pattern), with its partial-burst error flag."""

from __future__ import annotations

import importlib

from amaranth.hdl import Assert, Assume, Cat, Module, Mux, ResetSignal, Signal, Value

import golden.l3
from golden.l3_spec import BEAT_BITS, BEATS_PER_BURST, WINDOW_BEATS
from hw.l3.cycles import UNIT_ADDER, UNIT_RANK, UNIT_RELAYOUT
from tb.formal.contract import contract_spec, ports, recording_domain
from tb.formal.sby import FormalSpec
from tb.l3.cases import SPECS

PROVED = {UNIT_ADDER}  # k-induction closes at the contract's depth (the re-layout unit's does not)
MAPPING_DEPTH = 7  # reset + 2 beats + latency 3 + 1: one window in and both its beats out
RELAYOUT_DEPTH = 13  # reset + 8 beats in + latency 3 + 1: a whole burst written and its last beat out


def byte_sources(inverse: bool) -> dict[tuple[int, int], tuple[int, int]]:
    """(output beat, byte) -> (input beat, byte) of one window, read off the golden model byte by byte."""
    src = {}
    for b in range(WINDOW_BEATS):
        for k in range(8):
            beats = [0] * WINDOW_BEATS
            beats[b] = 0xFF << (8 * k)
            out = golden.l3.relayout(beats, inverse)
            ((j, i),) = [(j, i) for j in range(WINDOW_BEATS) for i in range(8) if (out[j] >> (8 * i)) & 0xFF]
            src[(j, i)] = (b, k)
    return src


def relayout_equiv(inverse: bool, flags: bool) -> tuple[Module, list[Value]]:
    """The first write after reset: its first window leaves as the golden permutation of its beats (every
    window goes through the same permutation), ``last`` on the beat that ends the write, and ``error``
    exactly then when the write is not a whole burst (golden.l3.relayout_write), for writes of 1 to 8 beats
    (the malformed ones of 1 to 7 reach their flag). Two modules, as one is past the solver's reach in the
    budget: ``flags`` checks last/error over a whole burst with the data held at zero (the flags do not read
    it), the other the data of the first window."""
    dut = importlib.import_module("hw.l3.relayout").Relayout(inverse)
    m = Module()
    m.submodules.dut = dut
    started = recording_domain(m)
    m.d.comb += Assume(ResetSignal() == ~started)  # reset once, at the start (the contract covers resets)
    beats = [Signal(BEAT_BITS, name=f"in{k}") for k in range(WINDOW_BEATS)]
    n_in, n_out, n_write = (Signal(range(16), name=n) for n in ("n_in", "n_out", "n_write"))  # n_write: its beats
    with m.If(dut.i.valid & dut.i.ready & (n_write == 0)):
        m.d.sync += n_in.eq(n_in + 1)
        for k in range(WINDOW_BEATS):
            with m.If(n_in == k):
                m.d.sync += beats[k].eq(dut.i.payload.data)
        with m.If(dut.i.payload.last):
            m.d.sync += n_write.eq(n_in + 1)
    with m.If(dut.o.valid & dut.o.ready):
        m.d.sync += n_out.eq(n_out + 1)
    src = byte_sources(inverse)
    window = [beats[0], Mux(n_write == 1, 0, beats[1])]  # a one-beat write: its window completed with zero
    if flags:
        m.d.comb += Assume(dut.i.payload.data == 0)
    for j in range(0 if flags else WINDOW_BEATS):
        want = Cat(*(window[src[(j, i)][0]].word_select(src[(j, i)][1], 8) for i in range(8)))
        with m.If(dut.o.valid & (n_out == j)):
            m.d.comb += Assert(dut.o.payload.data == want, f"beat{j}_data")
    windows = (n_write + 1) // 2  # of the first write, the last one padded
    ends = dut.o.valid & (n_write != 0) & (n_out == 2 * windows - 1)
    with m.If(dut.o.valid & (n_write != 0) & (n_out < 2 * windows) & flags):
        m.d.comb += Assert(dut.o.payload.last == ends, "last_ends_write")
        m.d.comb += Assert(dut.o.payload.error == (ends & (n_write != BEATS_PER_BURST)), "error_iff_partial")
    return m, ports(dut)


PROPS = [
    *(
        FormalSpec(
            f"relayout-{'flags' if flags else 'mapping'}-{'inverse' if inv else 'forward'}",
            UNIT_RELAYOUT,
            lambda inv=inv, flags=flags: relayout_equiv(inv, flags),
            RELAYOUT_DEPTH if flags else MAPPING_DEPTH,
            "reset, the 8 beats of a whole burst and the latency of 3: a burst written and its last beat out"
            if flags
            else "reset, a window's 2 beats and the latency of 3 and 1: the window's two beats out",
            slow=inv,
        )
        for inv in (False, True)
        for flags in (False, True)
    ),
    # not the chunk-16 softmax unit (the chunk-4 one scaled) nor the rank (bank PUs, adder and softmax units,
    # each with its contract here): their models do not get through Yosys to a first step in the budget
    *(
        contract_spec(s, mode="prove" if s.unit in PROVED else "bmc")
        for s in SPECS
        if s.params.get("chunk") != 16 and s.unit != UNIT_RANK
    ),
]
