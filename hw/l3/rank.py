"""L3 rank: 8 x8 chips x ``banks`` bank PUs and the rank PU (re-layout unit, adder unit, softmax unit and
its buffer) computing one head of decode attention from K/V written through the re-layout unit
(L3 §4, Fig. 5; semantics: ``golden.l3.head_attention``).

Host interface (``golden.l3_spec.Op``): K, V and Q writes are runs of 64-bit beats ending with ``last``;
each passes the :class:`~hw.l3.relayout.Relayout` unit and every 8 beats (a burst) land as one 64-bit word
per chip at the K or V mapping's (bank, column) — K and V append whole tokens, Q fills the chips' shared
buffers. A RUN item (``data`` = n tokens) then runs the head and answers with its d_head FP16 outputs in
host order, or one item carrying ``error`` (``golden.l3_spec.Err``): PARTIAL_BURST (a write that was not
whole bursts or was still open at the RUN, or a Q that is not one vector), LEN_ZERO (n = 0), LEN_OVER (n
beyond the tokens written, or K/V beyond ``max_tokens``). Either way the rank is then cleared for the next head.

Run phases, one all-bank RD every RD_INTERVAL (tCCD_L) cycles:

1. score — per step of ``banks`` tokens, d_head/32 RDs of K (column step*R + r) against the shared Q
   words; the bank PUs' partials land in the result buffer, the adder unit sums each bank's 8 chips (one
   bank per cycle) into the score queue (the rank PU buffer), which feeds the softmax unit;
2. softmax — the softmax unit's chunk pass runs as scores arrive, then normalizes; probabilities go to
   the S buffer (4 per word: the broadcast of one V column);
3. context — from the first probability on, overlapping the normalization (§4.3): per V column j one RD
   of every bank (bank g*R + r holds burst r of token 4j + g) against S word j, issued once the word is
   written; the bank PUs accumulate, tokens past n are masked;
4. readout — the adder unit sums the 4 groups of each output dimension, in host order, to ``o``.

Performance counters (cleared by a RUN): ``score_cycles`` — cycles from the first K RD to the last score
queued; ``su_stall`` — cycles in which a queued score waited while the softmax unit refused it (the
measure of the paper's "bubble-free" chunk softmax, §4.3).

Cycle model: :func:`head_cycles` (writes, then the run) and :func:`run_cycles`, composed from the units' own models;
an error item's, a RUN cut into an open write's too: ``hw.l3.cycles.error_cycles``.
"""

from __future__ import annotations

import math

from amaranth.hdl import Array, Cat, Module, Mux, ResetInserter, Signal, Value
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.l3_spec import (
    BEAT_BITS,
    BEATS_PER_BURST,
    CHIPS,
    ELEM_BITS,
    ELEMS_PER_RD,
    ERR_FIELDS,
    RD_INTERVAL,
    V_GROUPS,
    Geometry,
    Mode,
    Op,
)
from hw.cycles import CycleModel
from hw.l3 import relayout
from hw.l3.adder_unit import AdderUnit
from hw.l3.bank_pu import WORD, BankPU
from hw.l3.cycles import head_cycles, run_cycles
from hw.l3.relayout import Relayout
from hw.l3.softmax_unit import SoftmaxUnit

ERR = data.StructLayout(ERR_FIELDS)
ITEM = data.StructLayout({"op": 2, "data": BEAT_BITS, "last": 1})
OUT = data.StructLayout({"d": ELEM_BITS, "last": 1, "error": ERR})
N_BITS = 32  # the RUN item's token count field (low bits of ``data``)
CHIP_WORDS = data.ArrayLayout(BEAT_BITS, CHIPS)


def check_params(g: Geometry, max_tokens: int) -> None:
    step = math.lcm(g.banks, V_GROUPS)
    if max_tokens < step or max_tokens % step:
        raise ValueError(f"max_tokens: {max_tokens} not allowed; a positive multiple of {step} (banks and groups)")


def columns(g: Geometry, max_tokens: int) -> tuple[int, int]:
    """(K columns, V columns) per bank for ``max_tokens`` tokens."""
    return max_tokens // g.banks * g.bursts, max_tokens // V_GROUPS


class _Phase(enum.Enum, shape=3):
    IDLE = 0
    CHECK = 1
    SCORE = 2
    CONTEXT = 3
    READOUT = 4
    ERROR = 5


class KVWriter(wiring.Component):
    """Bursts from the re-layout unit to the banks (the K and V mappings, ``golden.l3.k_address`` and
    ``v_address``) and to the Q shared buffers. Members: ``i`` In(stream of relayout.BEAT_OUT); ``op``
    In(2) — the op of the write whose beats are arriving; ``clear`` In(1) — forget the head; ``w_bank``
    Out(banks) — one-hot bank write enable (all chips), ``w_addr``, ``w_data`` Out — the column and each
    chip's word; ``q`` Out(R x 8 words) — the shared buffers; ``k_tokens``, ``v_tokens``, ``q_bursts``
    Out — what has been written; ``partial``, ``over`` Out(1) — sticky PARTIAL_BURST and LEN_OVER."""

    def __init__(self, g: Geometry, max_tokens: int):
        self.g, self.max_tokens = g, max_tokens
        self.k_cols, v_cols = columns(g, max_tokens)
        depth = self.k_cols + v_cols
        super().__init__(
            {
                "i": In(stream.Signature(relayout.BEAT_OUT)),
                "op": In(2),
                "clear": In(1),
                "w_bank": Out(g.banks),
                "w_addr": Out(range(depth)),
                "w_data": Out(CHIP_WORDS),
                "q": Out(data.ArrayLayout(CHIP_WORDS, g.bursts)),
                "k_tokens": Out(N_BITS),
                "v_tokens": Out(N_BITS),
                "q_bursts": Out(range(g.bursts + 2)),
                "partial": Out(1),
                "over": Out(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g, beat = self.g, self.i.payload
        m.d.comb += self.i.ready.eq(1)
        beats = [Signal(BEAT_BITS, name=f"beat{b}") for b in range(BEATS_PER_BURST - 1)]
        idx = Signal(range(BEATS_PER_BURST))
        # K: token's burst r, bank t mod B, column base (t div B) * R; V: burst r, group t mod 4, column t div 4
        k_r, k_bank, k_col = Signal(range(g.bursts)), Signal(range(g.banks)), Signal(range(self.k_cols + 1))
        v_r, v_grp, v_col = Signal(range(g.bursts)), Signal(range(V_GROUPS)), Signal(range(self.max_tokens))
        burst = [Cat(*(b[8 * c : 8 * c + 8] for b in (*beats, beat.data))) for c in range(CHIPS)]
        # a partial write's last burst (its odd beat count padded by the re-layout unit) is dropped
        done = self.i.valid & (idx == BEATS_PER_BURST - 1) & ~beat.error
        full = Mux(self.op == Op.K, self.k_tokens, self.v_tokens) >= self.max_tokens
        with m.If(self.i.valid):
            m.d.sync += idx.eq(Mux(beat.last, 0, idx + 1))
            for b in range(BEATS_PER_BURST - 1):
                with m.If(idx == b):
                    m.d.sync += beats[b].eq(beat.data)
            with m.If(beat.error):
                m.d.sync += self.partial.eq(1)
        for c in range(CHIPS):
            m.d.comb += self.w_data[c].eq(burst[c])
        with m.If(done & (self.op == Op.K)):
            self._place_k(m, full, k_r, k_bank, k_col)
        with m.If(done & (self.op == Op.V)):
            self._place_v(m, full, v_r, v_grp, v_col)
        with m.If(done & (self.op == Op.Q)):
            with m.If(self.q_bursts < g.bursts):
                m.d.sync += Array(self.q)[self.q_bursts].eq(Cat(*burst))
            m.d.sync += self.q_bursts.eq(Mux(self.q_bursts > g.bursts, self.q_bursts, self.q_bursts + 1))
        with m.If(self.clear):
            m.d.sync += [
                idx.eq(0),
                k_r.eq(0),
                k_bank.eq(0),
                k_col.eq(0),
                v_r.eq(0),
                v_grp.eq(0),
                v_col.eq(0),
                self.k_tokens.eq(0),
                self.v_tokens.eq(0),
                self.q_bursts.eq(0),
                self.partial.eq(0),
                self.over.eq(0),
            ]
        return m

    def _place_k(self, m: Module, full: Value, k_r: Signal, k_bank: Signal, k_col: Signal) -> None:
        """A K burst's write: token t's burst r to bank t mod B at column (t div B) * R + r; or ``over``."""
        g = self.g
        with m.If(full):
            m.d.sync += self.over.eq(1)
        with m.Else():
            m.d.comb += [self.w_bank.eq(1 << k_bank), self.w_addr.eq(k_col + k_r)]
            m.d.sync += k_r.eq(Mux(k_r == g.bursts - 1, 0, k_r + 1))
            with m.If(k_r == g.bursts - 1):
                m.d.sync += [
                    self.k_tokens.eq(self.k_tokens + 1),
                    k_bank.eq(Mux(k_bank == g.banks - 1, 0, k_bank + 1)),
                ]
                with m.If(k_bank == g.banks - 1):
                    m.d.sync += k_col.eq(k_col + g.bursts)

    def _place_v(self, m: Module, full: Value, v_r: Signal, v_grp: Signal, v_col: Signal) -> None:
        """A V burst's write: token t's burst r to bank (t mod 4) * R + r of its group at column t div 4,
        past the K columns; or ``over``."""
        g = self.g
        with m.If(full):
            m.d.sync += self.over.eq(1)
        with m.Else():
            m.d.comb += [self.w_bank.eq(1 << (v_grp * g.bursts + v_r)), self.w_addr.eq(self.k_cols + v_col)]
            m.d.sync += v_r.eq(Mux(v_r == g.bursts - 1, 0, v_r + 1))
            with m.If(v_r == g.bursts - 1):
                m.d.sync += [self.v_tokens.eq(self.v_tokens + 1), v_grp.eq(v_grp + 1)]
                with m.If(v_grp == V_GROUPS - 1):
                    m.d.sync += v_col.eq(v_col + 1)


class BankArray(wiring.Component):
    """The chips' banks and bank PUs in all-bank lockstep. Members: ``w_bank``, ``w_addr``, ``w_data`` In —
    a burst write (from :class:`KVWriter`); ``rd`` In(stream of {addr, mode, en: per bank group, last}) —
    one all-bank RD, accepted every cycle it is offered (the controller paces it); ``b`` In — each chip's
    shared-buffer broadcast, sampled the cycle after the RD, with the bank data; ``res`` Out(8 chips x
    banks words) — the bank PUs' results, latched when ``res_valid`` pulses (their result buffer)."""

    def __init__(self, g: Geometry, max_tokens: int):
        self.g, self.depth = g, sum(columns(g, max_tokens))
        rd = data.StructLayout({"addr": range(self.depth), "mode": 1, "en": V_GROUPS, "last": 1})
        super().__init__(
            {
                "w_bank": In(g.banks),
                "w_addr": In(range(self.depth)),
                "w_data": In(CHIP_WORDS),
                "rd": In(stream.Signature(rd)),
                "b": In(data.ArrayLayout(WORD, CHIPS)),
                "res": Out(data.ArrayLayout(data.ArrayLayout(WORD, g.banks), CHIPS)),
                "res_valid": Out(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        step = Signal.like(self.rd.payload)
        valid = Signal()
        m.d.comb += self.rd.ready.eq(1)
        m.d.sync += [valid.eq(self.rd.valid), step.eq(self.rd.payload)]  # the RD's data arrives a cycle later
        pus = []
        for c in range(CHIPS):
            for b in range(g.banks):
                mem = Memory(shape=BEAT_BITS, depth=self.depth, init=[])
                m.submodules[f"mem_c{c}_b{b}"] = mem
                w, r = mem.write_port(), mem.read_port(domain="sync")
                m.d.comb += [
                    w.addr.eq(self.w_addr),
                    w.data.eq(self.w_data[c]),
                    w.en.eq(self.w_bank[b]),
                    r.addr.eq(self.rd.payload.addr),
                ]
                grp = b // g.bursts
                m.submodules[f"pu_c{c}_b{b}"] = pu = BankPU(group=grp)
                m.d.comb += [
                    pu.i.valid.eq(valid),
                    pu.i.payload.mode.eq(step.mode),
                    pu.i.payload.a.eq(r.data),
                    pu.i.payload.b.eq(self.b[c]),
                    pu.i.payload.en.eq(step.en[grp]),
                    pu.i.payload.last.eq(step.last),
                    pu.o.ready.eq(1),
                ]
                with m.If(pu.o.valid):
                    m.d.sync += self.res[c][b].eq(pu.o.payload)
                pus.append(pu)
        m.d.sync += self.res_valid.eq(pus[0].o.valid)  # lockstep: every PU emits in the same cycle
        return m


class Rank(wiring.Component):
    """Members: ``i`` In(stream of {op, data, last}) — K/V/Q beats and RUN commands; ``o`` Out(stream of
    {d, last, error}) — a head's outputs in host order, or one error item; ``score_cycles``, ``su_stall``
    Out(32) — the performance counters of the last run."""

    def __init__(self, banks: int = 16, d_head: int = 128, max_tokens: int = 256):
        self.g = Geometry(banks, d_head)
        check_params(self.g, max_tokens)
        self.max_tokens = max_tokens
        super().__init__(
            {
                "i": In(stream.Signature(ITEM)),
                "o": Out(stream.Signature(OUT)),
                "score_cycles": Out(32),
                "su_stall": Out(32),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        m.submodules.writer = wr = KVWriter(g, self.max_tokens)
        m.submodules.banks = banks = BankArray(g, self.max_tokens)
        m.submodules.au = au = AdderUnit()
        m.submodules.queue = queue = SyncFIFO(width=ELEM_BITS + 1, depth=self.max_tokens)
        m.submodules.su = su = SoftmaxUnit(g.chunk, self.max_tokens)
        s_bufs = [Memory(shape=ELEM_BITS, depth=self.max_tokens // V_GROUPS, init=[]) for _ in range(V_GROUPS)]
        for k, mem in enumerate(s_bufs):
            m.submodules[f"s_buf{k}"] = mem
        m.d.comb += [banks.w_bank.eq(wr.w_bank), banks.w_addr.eq(wr.w_addr), banks.w_data.eq(wr.w_data)]
        phase, n, clear = Signal(_Phase), Signal(N_BITS), Signal()
        cut = Signal()  # the head's RUN came while a write was open
        p_tok = Signal(N_BITS)  # probabilities written to the S buffer this head
        self._host(m, wr, phase, n, clear, cut)
        rd = self._rd_issue(m, banks, wr, s_bufs, phase, n, p_tok)
        self._rank_pu(m, banks, au, queue, su, s_bufs, phase, n, rd, p_tok)
        self._output(m, au, wr, banks, phase, n, clear, cut)
        return m

    def _host(self, m: Module, wr: KVWriter, phase, n, clear, cut) -> None:
        """Writes go through the re-layout unit with their first beat's op queued beside them; a RUN waits until every
        write has landed and the rank is idle. A RUN while a write is open (golden.l3.rank_run) waits until
        its whole windows have landed, then drops the rest (the re-layout unit flushed, its op popped) and
        sets ``cut`` (PARTIAL_BURST); the writer's burst position is reset by ``clear`` at the error item."""
        m.submodules.ops = ops = SyncFIFO(width=2, depth=4)
        first = Signal(init=1)  # the next write beat starts a write
        flush = Signal()
        m.submodules.relayout = ru = ResetInserter(flush)(Relayout())
        item = self.i.payload
        is_write = item.op != Op.RUN
        m.d.comb += [
            ru.i.payload.data.eq(item.data),
            ru.i.payload.last.eq(item.last),
            ops.w_data.eq(item.op),
            wr.op.eq(ops.r_data),
            wr.i.payload.eq(ru.o.payload),
            wr.i.valid.eq(ru.o.valid),
            ru.o.ready.eq(1),
            wr.clear.eq(clear),
            ops.r_en.eq((ru.o.valid & ru.o.payload.last) | flush),
        ]
        idle = phase == _Phase.IDLE
        with m.If(is_write):  # a head's writes wait while the previous head runs
            m.d.comb += [
                ru.i.valid.eq(self.i.valid & idle & (ops.w_rdy | ~first)),
                self.i.ready.eq(ru.i.ready & idle & (ops.w_rdy | ~first)),
                ops.w_en.eq(self.i.valid & self.i.ready & first),
            ]
        with m.Else():  # every write has landed, or all but the open one's odd beat
            m.d.comb += [
                self.i.ready.eq(idle & Mux(first, ~ops.r_rdy, ~ru.busy)),
                flush.eq(self.i.valid & self.i.ready & ~first),
            ]
        with m.If(self.i.valid & self.i.ready & is_write):
            m.d.sync += first.eq(item.last)
        with m.If(self.i.valid & self.i.ready & ~is_write):
            m.d.sync += [phase.eq(_Phase.CHECK), n.eq(item.data[:N_BITS]), first.eq(1), cut.eq(~first)]
        with m.If(clear):
            m.d.sync += cut.eq(0)

    def _rd_issue(self, m: Module, banks: BankArray, wr: KVWriter, s_bufs, phase, n, p_tok):
        """The all-bank RD sequencer: score RDs (steps x R) then context RDs (V columns), one per
        RD_INTERVAL, a context RD once its S word is written (``p_tok``). Returns the context start."""
        g = self.g
        timer = Signal(range(RD_INTERVAL))
        step, r = Signal(N_BITS), Signal(range(g.bursts))
        steps = Signal(N_BITS)
        issue, word_in = Signal(), Signal()
        need = step * V_GROUPS + V_GROUPS  # probabilities S word ``step`` holds (fewer in the head's last)
        m.d.comb += [
            word_in.eq((phase != _Phase.CONTEXT) | (p_tok >= Mux(need < n, need, n))),
            issue.eq((timer == 0) & (step < steps) & word_in),
        ]
        with m.If(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        with m.If(issue):
            m.d.sync += timer.eq(RD_INTERVAL - 1)
        rd = banks.rd.payload
        m.d.comb += banks.rd.valid.eq(issue & ((phase == _Phase.SCORE) | (phase == _Phase.CONTEXT)))
        last_r = r == g.bursts - 1
        with m.If(phase == _Phase.SCORE):
            m.d.comb += [rd.addr.eq(step * g.bursts + r), rd.mode.eq(Mode.SCORE), rd.en.eq(-1), rd.last.eq(last_r)]
            with m.If(issue):
                m.d.sync += r.eq(Mux(last_r, 0, r + 1))
                with m.If(last_r):
                    m.d.sync += step.eq(step + 1)
        with m.Else():  # context: S word j from the S buffer, read in step with the banks
            j_tok = step * V_GROUPS
            m.d.comb += [
                rd.addr.eq(wr.k_cols + step),
                rd.mode.eq(Mode.CONTEXT),
                rd.last.eq(step == steps - 1),
                rd.en.eq(Cat(*(j_tok + k < n for k in range(V_GROUPS)))),
            ]
            with m.If(issue):
                m.d.sync += step.eq(step + 1)
        s_rd = [mem.read_port(domain="sync") for mem in s_bufs]
        s_word = Signal(data.ArrayLayout(ELEM_BITS, V_GROUPS))
        for k, p in enumerate(s_rd):
            m.d.comb += [p.addr.eq(step), s_word[k].eq(p.data)]
        r_d = Signal.like(r)  # the broadcast reaches the PUs with the bank data, a cycle after the RD
        m.d.sync += r_d.eq(r)
        with m.If(phase == _Phase.CONTEXT):
            m.d.comb += banks.b.eq(Cat(*([s_word.as_value()] * CHIPS)))
        with m.Else():
            for c in range(CHIPS):
                m.d.comb += banks.b[c].eq(Array(q[c] for q in wr.q)[r_d])
        ctx_start = Signal()
        with m.If((phase == _Phase.CHECK) | ctx_start):
            m.d.sync += [timer.eq(0), step.eq(0), r.eq(0)]
        with m.If(phase == _Phase.CHECK):
            m.d.sync += steps.eq((n + g.banks - 1) // g.banks)
        with m.If(ctx_start):
            m.d.sync += steps.eq((n + V_GROUPS - 1) // V_GROUPS)
        return ctx_start

    def _rank_pu(self, m: Module, banks: BankArray, au: AdderUnit, queue, su, s_bufs, phase, n, ctx_start, p_tok):
        """Score readout (AU per bank into the queue), the softmax unit into the S buffer, and the phase
        changes score -> context -> readout."""
        g = self.g
        feed, base, queued = Signal(range(g.banks + 1)), Signal(N_BITS), Signal(N_BITS)
        feeding = Signal()
        with m.If(banks.res_valid & (phase == _Phase.SCORE)):
            m.d.sync += [feeding.eq(1), feed.eq(0)]
        tok = base + feed
        with m.If(phase == _Phase.SCORE):
            m.d.comb += [
                au.i.valid.eq(feeding & (tok < n)),
                au.i.payload.mode.eq(Mode.SCORE),
                au.o.ready.eq(queue.w_rdy),
            ]
            for c in range(CHIPS):
                m.d.comb += au.i.payload.x[c].eq(Array(banks.res[c][b][0] for b in range(g.banks))[feed])
            with m.If(feeding):
                m.d.sync += feed.eq(feed + 1)
                with m.If(feed == g.banks - 1):
                    m.d.sync += [feeding.eq(0), base.eq(base + g.banks)]
        m.d.comb += [
            queue.w_en.eq(au.o.valid & (phase == _Phase.SCORE)),
            queue.w_data.eq(Cat(au.o.payload, queued == n - 1)),
        ]
        with m.If(queue.w_en & queue.w_rdy):
            m.d.sync += queued.eq(queued + 1)
        m.d.comb += [
            su.i.valid.eq(queue.r_rdy),
            su.i.payload.s.eq(queue.r_data[:ELEM_BITS]),
            su.i.payload.last.eq(queue.r_data[ELEM_BITS]),
            queue.r_en.eq(su.i.ready),
            su.o.ready.eq(1),
        ]
        # performance counters
        with m.If((phase == _Phase.SCORE) & (queued < n)):
            m.d.sync += self.score_cycles.eq(self.score_cycles + 1)
        with m.If(queue.r_rdy & ~su.i.ready):
            m.d.sync += self.su_stall.eq(self.su_stall + 1)
        with m.If(phase == _Phase.CHECK):
            m.d.sync += [
                self.score_cycles.eq(0),
                self.su_stall.eq(0),
                base.eq(0),
                queued.eq(0),
                feeding.eq(0),
                p_tok.eq(0),
            ]
        # probabilities into the S buffer, 4 tokens per word; the first one starts the context RDs
        for k, mem in enumerate(s_bufs):
            w = mem.write_port()
            m.d.comb += [w.addr.eq(p_tok >> 2), w.data.eq(su.o.payload.p), w.en.eq(su.o.valid & (p_tok[:2] == k))]
        with m.If(su.o.valid):
            m.d.sync += p_tok.eq(p_tok + 1)
        m.d.comb += ctx_start.eq(su.o.valid & (phase == _Phase.SCORE))
        with m.If(ctx_start):
            m.d.sync += phase.eq(_Phase.CONTEXT)
        with m.If((phase == _Phase.CONTEXT) & banks.res_valid):
            m.d.sync += phase.eq(_Phase.READOUT)

    def _output(self, m: Module, au: AdderUnit, wr: KVWriter, banks: BankArray, phase, n, clear, cut) -> None:
        """The error check of a RUN, and the context readout: the AU sums the 4 groups of dimension
        d = 32r + c + 8m (golden.l3.dim) in host order."""
        g = self.g
        err, found = Signal(ERR), Signal(ERR)
        m.d.comb += [
            found.partial_burst.eq(wr.partial | cut | (wr.q_bursts != g.bursts)),
            found.len_zero.eq(n == 0),
            found.len_over.eq(wr.over | (n > wr.k_tokens) | (n > wr.v_tokens)),
        ]
        with m.If(phase == _Phase.CHECK):
            m.d.sync += [err.eq(found), phase.eq(Mux(found.as_value().any(), _Phase.ERROR, _Phase.SCORE))]
        d_in, d_out = Signal(range(g.d_head + 1)), Signal(range(g.d_head + 1))
        res = banks.res
        with m.If(phase == _Phase.READOUT):
            c, mm, r = d_in[:3], d_in[3:5], d_in[5:]
            m.d.comb += [
                au.i.valid.eq(d_in < g.d_head),
                au.i.payload.mode.eq(Mode.CONTEXT),
                au.o.ready.eq(self.o.ready),
                self.o.valid.eq(au.o.valid),
                self.o.payload.d.eq(au.o.payload),
                self.o.payload.last.eq(d_out == g.d_head - 1),
            ]
            for grp in range(V_GROUPS):
                word = Array(Array(res[ch][grp * g.bursts + rr] for rr in range(g.bursts)) for ch in range(CHIPS))
                m.d.comb += au.i.payload.x[grp].eq(Array(word[c][r][k] for k in range(ELEMS_PER_RD))[mm])
            with m.If(au.i.valid & au.i.ready):
                m.d.sync += d_in.eq(d_in + 1)
            with m.If(self.o.valid & self.o.ready):
                m.d.sync += d_out.eq(d_out + 1)
        with m.If(phase == _Phase.ERROR):
            m.d.comb += [self.o.valid.eq(1), self.o.payload.last.eq(1), self.o.payload.error.eq(err)]
        m.d.comb += clear.eq(self.o.valid & self.o.ready & self.o.payload.last)
        with m.If(clear):
            m.d.sync += [phase.eq(_Phase.IDLE), d_in.eq(0), d_out.eq(0), err.eq(0)]


def cycle_model(banks: int = 16, d_head: int = 128, max_tokens: int = 256, **_params) -> CycleModel:
    """For a head of one chunk (``banks`` tokens): latency from its RUN accepted to its last output; ii:
    cycles from one such head's first beat to the next's (one head at a time; others: :func:`head_cycles`)."""
    g = Geometry(banks, d_head)
    check_params(g, max_tokens)
    return CycleModel(latency=run_cycles(g.chunk, g, max_tokens), ii=head_cycles(g.chunk, g, max_tokens) + 1)
