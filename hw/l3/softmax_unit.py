"""L3 softmax unit (SU) of the rank PU (L3 §4.3, §6.4): pipelined chunk softmax over one head's scores,
FP16 (semantics: ``golden.l3.chunk_softmax``).

Pass 1, while scores arrive (one per cycle at most): the collector gathers ``chunk`` scores (the last
chunk padded with -Inf); :class:`ChunkStats` — a comparator tree, ``chunk`` subtract and exp lanes and
an adder tree — turns each into its exponentials e_i, maximum m_c and sum l_c; the running-statistics stage
(:class:`RunningStats`) writes e and m_c to the on-chip buffer and folds (m_c, l_c) into the running M and S.
After the last chunk: r = 1/S. Pass 2 (:class:`Normalize`): token by token, p_i = e_i * (exp(m_c - M) *
r), streamed out in token order with ``last`` on the final one.

A head longer than ``max_tokens`` (the 256 KB buffer: 128K FP16) is consumed to its end and answered with
one item {p: 0, last, error: LEN_OVER} (``golden.l3_spec.Err``) — never a hang.

Cycle model: :func:`head_cycles` replays the control (collector, the stall-all ChunkStats pipeline, the
11-cycle running update, the reciprocal, the normalization pipeline) cycle by cycle; :func:`cycle_model`
gives its fixed parts. With chunks of 16 arriving no faster than one score per cycle the update (11
cycles) never stalls the input: the SU keeps up with score production ("bubble-free", §4.3).
"""

from __future__ import annotations

from amaranth.hdl import Array, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.fp import FP16
from golden.l3_spec import ELEM_BITS, ERR_FIELDS, MAX_TOKENS
from golden.softmax import NEG_INF
from hw.arith import fpadd, fpexp, fpmul, fprecip
from hw.arith.maxtree import fp_max
from hw.cycles import CycleModel
from hw.l3.cycles import MAX_LAT, chunk_depth, norm_depth, update_cycles
from hw.l3.cycles import su_check_params as check_params
from hw.l3.cycles import su_head_cycles as head_cycles
from hw.pipeline import PipelineCtl, delay

ERR = data.StructLayout(ERR_FIELDS)
SCORE = data.StructLayout({"s": ELEM_BITS, "last": 1})
PROB = data.StructLayout({"p": ELEM_BITS, "last": 1, "error": ERR})


def cycle_model(chunk: int = 16, max_tokens: int = MAX_TOKENS, **_params) -> CycleModel:
    """For a head of one chunk: latency from its last score to its last probability; ii: cycles from one
    such head's first score to the next's (the unit takes one head at a time; longer heads:
    :func:`head_cycles`)."""
    check_params(chunk, max_tokens)
    h = head_cycles(chunk, chunk, max_tokens)
    return CycleModel(latency=h - (chunk - 1), ii=h + 1)


class ChunkStats(wiring.Component):
    """Members: ``i`` In(stream of {s: chunk scores, last}); ``o`` Out(stream of {e: chunk exponentials,
    m: the chunk's max, l: their sum, last}). A stall-all pipeline, one chunk per cycle."""

    def __init__(self, chunk: int = 16):
        self.chunk = chunk
        vec = data.ArrayLayout(ELEM_BITS, chunk)
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"s": vec, "last": 1}))),
                "o": Out(stream.Signature(data.StructLayout({"e": vec, "m": ELEM_BITS, "l": ELEM_BITS, "last": 1}))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        c, levels = self.chunk, self.chunk.bit_length() - 1
        en = PipelineCtl(m, self.i, self.o, chunk_depth(c)).en
        s = list(self.i.payload.s)
        level = s
        for j in range(levels):
            level = [fp_max(m, en, level[i], level[i + 1], FP16, f"mx{j}_{i // 2}") for i in range(0, len(level), 2)]
        m_c = level[0]
        s_late = [delay(m, en, x, levels * MAX_LAT, f"s{i}") for i, x in enumerate(s)]
        neg_m = m_c ^ FP16.sign_bit
        d = [fpadd.fp_add(m, en, x, neg_m, FP16, f"sub{i}") for i, x in enumerate(s_late)]
        e = [fpexp.fp_exp(m, en, x, FP16, f"exp{i}") for i, x in enumerate(d)]
        level = e
        for j in range(levels):
            level = [
                fpadd.fp_add(m, en, level[i], level[i + 1], FP16, f"sum{j}_{i // 2}") for i in range(0, len(level), 2)
            ]
        tail = levels * fpadd.LATENCY
        m.d.comb += [
            self.o.payload.l.eq(level[0]),
            self.o.payload.m.eq(delay(m, en, m_c, fpadd.LATENCY + fpexp.LATENCY + tail, "m_c")),
            self.o.payload.last.eq(delay(m, en, self.i.payload.last, chunk_depth(c), "last")),
        ]
        for i, x in enumerate(e):
            m.d.comb += self.o.payload.e[i].eq(delay(m, en, x, tail, f"e{i}"))
        return m


class RunningStats(wiring.Component):
    """The running fold of chunk statistics (L3 §4.3 / golden.l3.chunk_softmax): the first chunk sets
    M = m_c, S = l_c; each later one M' = max(M, m_c), S = S*exp(M - M') + l_c*exp(m_c - M'), taking
    :func:`~hw.l3.cycles.update_cycles` cycles with every unit's inputs held. Members: ``i`` In(stream of
    {m, l, first}) — one chunk's statistics; ``m``/``s``: Out — the running M and S; ``busy``: Out(1)."""

    def __init__(self):
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"m": ELEM_BITS, "l": ELEM_BITS, "first": 1}))),
                "m": Out(ELEM_BITS),
                "s": Out(ELEM_BITS),
                "busy": Out(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        one = Signal()
        m.d.comb += one.eq(1)
        m_c, l_c = Signal(ELEM_BITS), Signal(ELEM_BITS)
        run_m, run_s = Signal(ELEM_BITS), Signal(ELEM_BITS)
        update = update_cycles()
        left = Signal(range(update + 1))
        m_new = fp_max(m, one, run_m, m_c, FP16, "fold_max")
        da = fpadd.fp_add(m, one, run_m, m_new ^ FP16.sign_bit, FP16, "fold_da")
        db = fpadd.fp_add(m, one, m_c, m_new ^ FP16.sign_bit, FP16, "fold_db")
        sa = fpmul.fp_mul(m, one, run_s, fpexp.fp_exp(m, one, da, FP16, "fold_ea"), FP16, FP16, "fold_sa")
        sb = fpmul.fp_mul(m, one, l_c, fpexp.fp_exp(m, one, db, FP16, "fold_eb"), FP16, FP16, "fold_sb")
        total = fpadd.fp_add(m, one, sa, sb, FP16, "fold_sum")
        m.d.comb += [self.i.ready.eq(left == 0), self.m.eq(run_m), self.s.eq(run_s), self.busy.eq(left != 0)]
        with m.If(left != 0):
            m.d.sync += left.eq(left - 1)
            with m.If(left == 1):
                m.d.sync += [run_m.eq(m_new), run_s.eq(total)]
        with m.If(self.i.valid & self.i.ready):
            with m.If(self.i.payload.first):
                m.d.sync += [run_m.eq(self.i.payload.m), run_s.eq(self.i.payload.l)]
            with m.Else():
                m.d.sync += [m_c.eq(self.i.payload.m), l_c.eq(self.i.payload.l), left.eq(update)]
        return m


class Normalize(wiring.Component):
    """Pass 2, one token per cycle: p = e * (exp(m_c - M) * r) from the buffer word and chunk max read
    this cycle. Members: ``i`` In(stream of {e, m, last}) — a token's exponential, its chunk's max and
    ``last``; ``big_m``, ``r``: In — the head's M and 1/S; ``o`` Out(stream of PROB)."""

    def __init__(self):
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"e": ELEM_BITS, "m": ELEM_BITS, "last": 1}))),
                "big_m": In(ELEM_BITS),
                "r": In(ELEM_BITS),
                "o": Out(stream.Signature(PROB)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        depth = norm_depth() - 1  # the buffer read is the caller's first stage
        en = PipelineCtl(m, self.i, self.o, depth).en
        d = fpadd.fp_add(m, en, self.i.payload.m, self.big_m ^ FP16.sign_bit, FP16, "n_sub")
        f = fpmul.fp_mul(m, en, fpexp.fp_exp(m, en, d, FP16, "n_exp"), self.r, FP16, FP16, "n_f")
        e = delay(m, en, self.i.payload.e, fpadd.LATENCY + fpexp.LATENCY + fpmul.LATENCY, "n_e")
        m.d.comb += [
            self.o.payload.p.eq(fpmul.fp_mul(m, en, e, f, FP16, FP16, "n_p")),
            self.o.payload.last.eq(delay(m, en, self.i.payload.last, depth, "n_last")),
        ]
        return m


class Collector(wiring.Component):
    """Pass 1's input: gathers ``chunk`` scores into a chunk (the head's last one padded with -Inf).
    Members: ``i`` In(stream of :data:`SCORE`) — the head's scores; ``o`` Out(stream of {s: chunk FP16,
    last}) — its chunks; ``pass1`` In — the unit is in pass 1 (else it takes no score); ``count`` Out —
    scores accepted this head; ``clear`` In — a new head. After the head's last score it takes no more
    until ``clear``: the next head waits for this one's output."""

    def __init__(self, chunk: int, n_bits: int):
        self.chunk = chunk
        super().__init__(
            {
                "i": In(stream.Signature(SCORE)),
                "pass1": In(1),
                "count": Out(n_bits),
                "clear": In(1),
                "o": Out(stream.Signature(data.StructLayout({"s": data.ArrayLayout(ELEM_BITS, chunk), "last": 1}))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        c = self.chunk
        asm = Array(Signal(ELEM_BITS, name=f"asm{k}") for k in range(c))
        lane = Signal(range(c))
        closed = Signal()  # the head's last score is in
        moving = self.o.valid & self.o.ready
        completing = self.i.valid & (self.i.payload.last | (lane == c - 1))
        m.d.comb += self.i.ready.eq(self.pass1 & ~closed & (~completing | ~self.o.valid | moving))
        with m.If(moving):
            m.d.sync += self.o.valid.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [
                asm[lane].eq(self.i.payload.s),
                lane.eq(Mux(completing, 0, lane + 1)),
                self.count.eq(self.count + 1),
            ]
            with m.If(completing):
                for k in range(c):
                    m.d.sync += self.o.payload.s[k].eq(Mux(k < lane, asm[k], Mux(k == lane, self.i.payload.s, NEG_INF)))
                m.d.sync += [
                    self.o.valid.eq(1),
                    self.o.payload.last.eq(self.i.payload.last),
                    closed.eq(self.i.payload.last),
                ]
        with m.If(self.clear):
            m.d.sync += [closed.eq(0), self.count.eq(0)]
        return m


class TokenBuffer(wiring.Component):
    """The on-chip buffer (256 KB: a chunk's exponentials and its max per word) and pass 2's read-back.
    Members: ``w_en``, ``w_addr``, ``w_e``, ``w_m`` In — a chunk's exponentials and max into word
    ``w_addr``; ``issuing`` In — read the head back, a token per cycle ``o`` accepts, up to ``count`` In
    tokens; ``restart`` In — the next read-back starts at token 0; ``o`` Out(stream of {e, m, last}) — a
    token's exponential, its chunk's max and ``last`` on the head's final token."""

    def __init__(self, chunk: int, depth: int, n_bits: int):
        self.chunk, self.depth = chunk, depth
        super().__init__(
            {
                "w_en": In(1),
                "w_addr": In(range(depth)),
                "w_e": In(data.ArrayLayout(ELEM_BITS, chunk)),
                "w_m": In(ELEM_BITS),
                "issuing": In(1),
                "restart": In(1),
                "count": In(n_bits),
                "o": Out(stream.Signature(data.StructLayout({"e": ELEM_BITS, "m": ELEM_BITS, "last": 1}))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        c, log2c = self.chunk, self.chunk.bit_length() - 1
        m.submodules.e_mem = e_mem = Memory(shape=data.ArrayLayout(ELEM_BITS, c), depth=self.depth, init=[])
        m.submodules.m_mem = m_mem = Memory(shape=ELEM_BITS, depth=self.depth, init=[])
        e_w, m_w = e_mem.write_port(), m_mem.write_port()
        e_r, m_r = e_mem.read_port(domain="sync"), m_mem.read_port(domain="sync")
        k = Signal.like(self.count)  # the next token to read
        last, lane_r = Signal(), Signal(range(c))
        advance = self.o.ready | ~self.o.valid
        issue = self.issuing & (k < self.count) & advance
        m.d.comb += [
            e_w.addr.eq(self.w_addr),
            e_w.data.eq(self.w_e),
            e_w.en.eq(self.w_en),
            m_w.addr.eq(self.w_addr),
            m_w.data.eq(self.w_m),
            m_w.en.eq(self.w_en),
            e_r.addr.eq(k >> log2c),
            m_r.addr.eq(k >> log2c),
            e_r.en.eq(advance),
            m_r.en.eq(advance),
            self.o.payload.e.eq(Array(e_r.data[j] for j in range(c))[lane_r]),
            self.o.payload.m.eq(m_r.data),
            self.o.payload.last.eq(last),
        ]
        with m.If(advance):
            m.d.sync += [self.o.valid.eq(issue), last.eq(k == self.count - 1), lane_r.eq(k[: max(1, log2c)])]
        with m.If(issue):
            m.d.sync += k.eq(k + 1)
        with m.If(self.restart):
            m.d.sync += k.eq(0)
        return m


class SoftmaxUnit(wiring.Component):
    """Members: ``i`` In(stream of {s, last}) — one head's scores in token order; ``o`` Out(stream of {p,
    last, error}) — its probabilities in token order (or one error item)."""

    def __init__(self, chunk: int = 16, max_tokens: int = MAX_TOKENS):
        check_params(chunk, max_tokens)
        self.chunk, self.max_tokens = chunk, max_tokens
        super().__init__({"i": In(stream.Signature(SCORE)), "o": Out(stream.Signature(PROB))})

    def elaborate(self, platform) -> Module:
        m = Module()
        c, depth = self.chunk, self.max_tokens // self.chunk
        n_bits = max(self.max_tokens, 1 << 20).bit_length() + 1
        m.submodules.collect = col = Collector(c, n_bits)
        m.submodules.stats = cs = ChunkStats(c)
        m.submodules.fold = fold = RunningStats()
        m.submodules.buffer = buf = TokenBuffer(c, depth, n_bits)
        m.submodules.norm = norm = Normalize()
        wiring.connect(m, wiring.flipped(self.i), col.i)
        wiring.connect(m, col.o, cs.i)
        wiring.connect(m, buf.o, norm.i)
        chunks = Signal(n_bits)  # chunks folded this head
        over, finished = Signal(), Signal()
        phase = Signal(2)  # 0: pass 1, 1: reciprocal, 2: pass 2

        # running statistics: buffer writes and the fold
        take = cs.o.valid & fold.i.ready
        m.d.comb += [
            col.pass1.eq(phase == 0),
            col.clear.eq(finished),
            cs.o.ready.eq(fold.i.ready),
            fold.i.valid.eq(cs.o.valid),
            fold.i.payload.m.eq(cs.o.payload.m),
            fold.i.payload.l.eq(cs.o.payload.l),
            fold.i.payload.first.eq(chunks == 0),
            buf.w_addr.eq(chunks),
            buf.w_e.eq(cs.o.payload.e),
            buf.w_m.eq(cs.o.payload.m),
            buf.w_en.eq(take & (chunks < depth)),
            buf.count.eq(col.count),
        ]
        head_done = Signal()  # the last chunk has been taken
        with m.If(take):
            m.d.sync += chunks.eq(chunks + 1)
            with m.If(cs.o.payload.last):
                m.d.sync += [head_done.eq(1), over.eq(col.count > self.max_tokens)]

        # reciprocal, then pass 2
        one = Signal()
        m.d.comb += one.eq(1)
        r = fprecip.fp_recip(m, one, fold.s, FP16, "recip")
        wait = Signal(range(fprecip.LATENCY + 1))
        with m.If((phase == 0) & head_done & ~fold.busy):
            m.d.sync += [phase.eq(1), wait.eq(fprecip.LATENCY - 1)]
        with m.If(phase == 1):
            m.d.sync += wait.eq(wait - 1)
            with m.If(wait == 0):
                m.d.sync += phase.eq(2)
                m.d.comb += buf.restart.eq(1)
        m.d.comb += [buf.issuing.eq((phase == 2) & ~over), norm.big_m.eq(fold.m), norm.r.eq(r)]

        self._output(m, norm, (phase == 2) & over)
        m.d.comb += finished.eq(self.o.valid & self.o.ready & self.o.payload.last)
        with m.If(finished):
            m.d.sync += [phase.eq(0), head_done.eq(0), chunks.eq(0), over.eq(0)]
        return m

    def _output(self, m: Module, norm: Normalize, error: Value) -> None:
        """The unit's output: the normalized tokens, or (``error``) the one item of an over-long head."""
        with m.If(error):
            m.d.comb += [
                self.o.valid.eq(1),
                self.o.payload.p.eq(0),
                self.o.payload.last.eq(1),
                self.o.payload.error.len_over.eq(1),
                norm.o.ready.eq(0),
            ]
        with m.Else():
            m.d.comb += [
                self.o.valid.eq(norm.o.valid),
                self.o.payload.eq(norm.o.payload),
                norm.o.ready.eq(self.o.ready),
            ]
