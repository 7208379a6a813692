"""L3 formal properties: the stream contract of every L3 unit at its testbench sizes, the re-layout
unit's address mapping proved equal to ``golden.l3.relayout`` (every data, every gap and backpressure
pattern), with its partial-burst error flag, and the softmax unit's chunk collector checked to cut chunks
at their boundary with the scores in order (``collector-data-chunk4``, bounded).

Depth reached and seconds (check + cover) in a `make formal` run at 15d7c60 (2 workers, shared 2-core VM;
docs/guide.md has the latest run): collector 12 of 12, two chunks (37 + 4 s); re-layout mapping and flags 7
and 13 of 7 and 13 (~6 s each); adder unit proved (14 + 11 s); bank PU (abstract) 16 of 19 in either mode (41
+ 7 s); softmax unit chunk 4 (abstract) 37 of 67 (91 + 28 s; since then with values free every cycle: all 67
in ~40 s alone). At a formal size (SIZE: why below), by ABC's bmc3, run alone at 9ea7fbd (load ~7 from other
jobs): the chunk-16 softmax unit (abstract) 66 of 66 (26 + 18 s), a whole transaction: reset, its longest head
(one chunk of 16, 63 cycles) and the next head's first score (at the testbench's size smtbmc reached 44-62 of
115 and bmc3 did not finish 115 in 200 s); the rank (abstract, values free every cycle: FREE_EVERY_CYCLE) at
e3e0eb7 90-96 of 275 in its 90 s budget (~100 s in all, three runs; 106 in 200 s; as functions 49 in 60 s), short
of a transaction: its smallest legal size (4 banks, d_head 32, 4 tokens: the geometry's and the buffers'
lower bounds) still has a shortest head that runs of 119 cycles (K, V and Q writes of one burst each, 24
beats through the re-layout unit, then 92 cycles of one score RD, the FP pipelines of the bank PUs, adder
unit and softmax unit, one context RD and the 32 outputs: tCCD_L adds none, tb/l3/rank_props.py), and the
longest of 173; smtbmc reached 22 in 150 s (8-10 at 64 tokens, as functions); ABC's pdr left the contract
undecided after 5 min of CPU. The rank is checked through its malformed commands (LEN_ZERO, LEN_OVER at the
RUN, PARTIAL_BURST writes) and the writes and most of the run of every head; its sub-units' contracts are
checked alone above, and tb/l3/rank_props.py splits it by assume-guarantee (the softmax unit's guarantees
checked at the rank's instance, the rank with a stand-in for it) at an instance with FP pipelines of one
stage (head 95 cycles): that check spans a whole transaction (100 of 100 cycles; its docstring has the runs),
so this one, at the units' own FP latencies, is the full-latency rank's formal cover, to the depth above."""

from __future__ import annotations

import importlib

from amaranth.hdl import Array, Assert, Assume, Cat, Cover, Module, Mux, ResetSignal, Signal, Value

import golden.l3
from golden.l3_spec import BEAT_BITS, BEATS_PER_BURST, ELEM_BITS, WINDOW_BEATS
from golden.softmax import NEG_INF
from hw.l3.cycles import UNIT_ADDER, UNIT_BANK_PU, UNIT_RANK, UNIT_RELAYOUT, UNIT_SOFTMAX, su_head_cycles
from tb.formal.contract import contract_spec, ports, recording_domain
from tb.formal.sby import FormalSpec
from tb.l3.cases import SPECS
from tb.l3.rank_props import PROPS as RANK_PROPS
from tb.runner import TbSpec

PROVED = {UNIT_ADDER}  # k-induction closes at the contract's depth (the re-layout unit's does not)
# contracts with the FP arithmetic free (tb/formal/abstract.py): deeper in the budget (the chunk-4 softmax
# unit 51 of 67 cycles against 29 with its datapath, the bank PU 16 of 19 against 6); the rank and the
# chunk-16 softmax unit get through Yosys only so
ABSTRACT = {UNIT_BANK_PU, UNIT_SOFTMAX, UNIT_RANK}
# ... with the values free every cycle (a smaller model; the bank PU alone rests on held operands and needs them
# as functions): the chunk-4 softmax unit then spans its whole transaction, 67 cycles in ~40 s alone (the
# chunk-16 one at the testbench's size 62 of 115 in 40 s, 31 as functions: hence SIZE). The rank too: its bank
# PUs' results are taken the cycle they are valid (ready tied high), so none is held and nothing rests on a
# held operand; bit-blasted, 638 flip-flops and 10,069 AND gates instead of 34,198 and 284,303 as functions
FREE_EVERY_CYCLE = {UNIT_SOFTMAX, UNIT_RANK}
# Formal sizes (tb/formal/contract.py ``params``): the smallest legal buffers, the same control code with its
# loop bounds shrunk. The chunk-16 softmax unit: a buffer of one chunk, so its longest head is one whole chunk
# (every collector lane, the full ChunkStats pipeline, the fold, the reciprocal and pass 2) and a longer one is
# the LEN_OVER error path (heads of several chunks, the fold across chunks and its stall when chunks come
# faster than its 11-cycle update: the same code, which the chunk-4 unit's contract spans over 64 tokens); the
# rank: 4 tokens (a multiple of its 4 banks and 4 V groups: one K and one V column per bank)
SIZE = {
    "l3_softmax_unit-chunk16-max_tokens256": {"max_tokens": 16},
    "l3_rank-banks4-d_head32-max_tokens64": {"max_tokens": 4},
}
# budgets past the default 40 s: the chunk-4 softmax unit's transaction (67 cycles), the chunk-16 one's, the
# rank's front end (Yosys alone takes ~30 s of it)
TIMEOUT = {
    "l3_softmax_unit-chunk4-max_tokens64": 90,
    "l3_softmax_unit-chunk16-max_tokens256": 60,
    "l3_rank-banks4-d_head32-max_tokens64": 90,
}
COLLECT_CHUNK, COUNT_BITS = 4, 8  # the chunk-4 softmax unit's collector; its count is wider in the unit
COLLECT_DEPTH = 12  # reset + 2 x (4 scores + the chunk out) + 1: two chunks, one held under backpressure
MAPPING_DEPTH = 7  # reset + 2 beats + latency 3 + 1: one window in and both its beats out
RELAYOUT_DEPTH = 13  # reset + 8 beats in + latency 3 + 1: a whole burst written and its last beat out


def _abstract(s: TbSpec) -> bool:
    return s.unit in ABSTRACT


def _response(s: TbSpec) -> int | None:
    """The chunk-16 softmax unit's response bound at its SIZE: the longest head's cycles, first score to last
    probability (hw.l3.cycles.su_head_cycles; an over-long head's error item comes sooner); others: the
    cycle model's default."""
    size = SIZE.get(s.tag)
    if s.unit != UNIT_SOFTMAX or size is None:
        return None
    return su_head_cycles(size["max_tokens"], s.params["chunk"], size["max_tokens"])


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


def collector_data(chunk: int) -> tuple[Module, list[Value]]:
    """The softmax unit's chunk collector (``hw.l3.softmax_unit.Collector``; golden.l3.chunk_softmax's
    chunking): a chunk leaves exactly after ``chunk`` scores or a head's last one (``o.valid`` iff a chunk
    is owed), holding the chunk's scores in arrival order padded with -Inf and the head's ``last``; ``count``
    is the scores taken since the last ``clear``. Every score, gap, backpressure and reset sequence; ``clear``
    only outside pass 1 (the unit clears after pass 2)."""
    dut = importlib.import_module("hw.l3.softmax_unit").Collector(chunk, COUNT_BITS)
    m = Module()
    m.submodules.dut = dut
    m.d.comb += Assume(~(dut.clear & dut.pass1))
    scores = Array(Signal(ELEM_BITS, name=f"score{k}", init=NEG_INF) for k in range(chunk))  # -Inf padded
    n, count = Signal(range(chunk)), Signal(COUNT_BITS)
    want, want_last, owed = [Signal(ELEM_BITS, name=f"want{k}") for k in range(chunk)], Signal(), Signal()
    taken, moving = dut.i.valid & dut.i.ready, dut.o.valid & dut.o.ready
    ends = dut.i.payload.last | (n == chunk - 1)
    with m.If(moving):
        m.d.sync += owed.eq(0)
    with m.If(taken):
        m.d.sync += [scores[n].eq(dut.i.payload.s), n.eq(Mux(ends, 0, n + 1)), count.eq(count + 1)]
        with m.If(ends):  # the chunk out; the next one starts as all padding
            m.d.sync += [owed.eq(1), want_last.eq(dut.i.payload.last)]
            m.d.sync += [want[k].eq(Mux(n == k, dut.i.payload.s, scores[k])) for k in range(chunk)]
            m.d.sync += [scores[k].eq(NEG_INF) for k in range(chunk)]
    with m.If(dut.clear):
        m.d.sync += count.eq(0)
    m.d.comb += [Assert(dut.o.valid == owed, "chunk_boundary"), Assert(dut.count == count, "count")]
    with m.If(dut.o.valid):
        m.d.comb += Assert(dut.o.payload.last == want_last, "chunk_last")
        m.d.comb += [Assert(dut.o.payload.s[k] == want[k], f"score{k}") for k in range(chunk)]
    m.d.comb += Cover(moving & ~dut.o.payload.last & (count > chunk), "second_chunk_under_way")
    return m, ports(dut)


PROPS = [
    FormalSpec(
        f"collector-data-chunk{COLLECT_CHUNK}",
        UNIT_SOFTMAX,
        lambda: collector_data(COLLECT_CHUNK),
        COLLECT_DEPTH,
        f"reset and two chunks of {COLLECT_CHUNK} scores out (bounded: the collector's lane is internal, so "
        "k-induction has no invariant tying it to the property's count)",
        slow=True,
        timeout=120,
    ),
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
    *(
        contract_spec(
            s,
            response=_response(s),
            mode="prove" if s.unit in PROVED else "bmc",
            abstract=_abstract(s),
            functional=s.unit not in FREE_EVERY_CYCLE,
            timeout=TIMEOUT.get(s.tag, 40),
            params={**s.params, **SIZE[s.tag]} if s.tag in SIZE else None,
            engine="abc" if s.tag in SIZE else "smtbmc",
        )
        for s in SPECS
    ),
    *RANK_PROPS,
]
