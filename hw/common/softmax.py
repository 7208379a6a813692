"""The softmax unit (Duplex §IV-D, §VI; Hermes §IV-A1): a three-pass softmax over one score row, ``lanes``
FP16 scores per beat, in a ``buffer_bytes`` row buffer (semantics: ``golden.softmax.softmax``). Duplex
instantiates it as its softmax unit (hw/duplex/softmax_unit.py: 64 lanes, 128 KB), Hermes inside its
activation unit (hw/hermes/activation.py: 256 lanes).

Neither paper gives the datapath; this one follows the golden order (shared/notes/l3_duplex_flash.md
§2.4f) [S]:

* pass 1 (``LOAD``), as beats arrive: each beat is written to the row buffer and goes through a max tree;
  :class:`RowMax` folds the beat maxima into the row's M.
* pass 2 (``EXPSUM``): the unit reads the row back a beat per cycle; :class:`ExpLanes` computes
  e_i = exp(s_i - M), an adder tree sums the beat, and :class:`SumFold` adds the beat sums into two
  partials (beats even / odd) and gives r = 1 / (S_0 + S_1). With deferred normalization
  (``normalize`` off) the e beats also go out here, {p: e, r: 0, last: 0}, and the row ends with one item
  {p: 0, r, last}: the context GEMM scales its outputs by r (notes §2.4f), so there is no pass 3.
* pass 3 (``NORM``, normalizing): the row is read again, e recomputed and scaled by r (:class:`Scale`);
  each beat goes out as {p, r, last on the final beat}.

A row longer than the buffer (``buffer_bytes`` / 2 scores) is consumed to its ``last`` beat and answered
with one item {p: 0, r: 0, last, error: LEN_OVER} (``golden.softmax.SoftmaxErr``) — never a hang.

Cycle model (:func:`row_cycles`): a row of B beats takes B (pass 1) + log2(lanes) (max tree) + B (pass 2)
+ :func:`sum_wait` (pass 2 drains to r), then, normalizing, B - 1 (pass 3 issue) + :func:`out_depth` (the
pass-3 pipeline); the unit takes one row at a time, the next row's first beat the cycle after the
previous row's last output.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.fp import FP16
from golden.softmax import ERR_FIELDS, NEG_INF
from hw.arith import fpadd, fpexp, fpmul, fprecip
from hw.arith.addtree import AddTree
from hw.arith.maxtree import MaxTree, fp_max
from hw.common.cycles import (
    EXP_DEPTH,
    check_params,
    levels,
    max_beats,
    row_cycles,
    sum_tail,
    sum_wait,
)
from hw.cycles import CycleModel
from hw.pipeline import PipelineCtl, delay

ELEM_BITS = FP16.width
ERR = data.StructLayout(ERR_FIELDS)
TIMING_BEATS = 3  # the row the cycle test streams back to back


def cycle_model(lanes: int, buffer_bytes: int, normalize: bool = True, **_params) -> CycleModel:
    """For a row of TIMING_BEATS beats: latency from its last beat to its last output; II per row (back to
    back)."""
    h = row_cycles(TIMING_BEATS, lanes, buffer_bytes, normalize)
    return CycleModel(latency=h - (TIMING_BEATS - 1), ii=h + 1)


class RowMax(wiring.Component):
    """Pass 1's maximum: a max tree per beat and the running fold M = max(M, tree) (from -Inf, which
    leaves the first beat's maximum unchanged: the golden order). Members: ``i`` In(stream of lanes
    FP16) — a beat; ``clear`` In — a new row; ``m`` Out(FP16) — the row's M so far."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        super().__init__(
            {"i": In(stream.Signature(data.ArrayLayout(ELEM_BITS, lanes))), "clear": In(1), "m": Out(ELEM_BITS)}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.tree = tree = MaxTree("fp16", self.lanes)
        m.d.comb += [
            tree.i.valid.eq(self.i.valid),
            tree.i.payload.x.eq(self.i.payload),
            self.i.ready.eq(1),
            tree.o.ready.eq(1),
        ]
        fresh = Signal(init=1)  # no beat folded yet this row
        cur = Signal(ELEM_BITS)
        y = fp_max(m, tree.o.valid, cur, tree.o.payload, FP16, "fold")
        m.d.comb += [cur.eq(Mux(fresh, NEG_INF, y)), self.m.eq(y)]
        with m.If(tree.o.valid):
            m.d.sync += fresh.eq(0)
        with m.If(self.clear):
            m.d.sync += fresh.eq(1)
        return m


class ExpLanes(wiring.Component):
    """e_i = exp(s_i - M) per lane, a stall-all pipeline of EXP_DEPTH stages. Members: ``i`` In(stream of
    {s: lanes FP16, pass3, last}); ``m`` In(FP16) — the row's M; ``o`` Out(stream of {e, pass3, last})."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"s": vec, "pass3": 1, "last": 1}))),
                "m": In(ELEM_BITS),
                "o": Out(stream.Signature(data.StructLayout({"e": vec, "pass3": 1, "last": 1}))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        en = PipelineCtl(m, self.i, self.o, EXP_DEPTH).en
        neg_m = self.m ^ FP16.sign_bit
        for j in range(self.lanes):
            d = fpadd.fp_add(m, en, self.i.payload.s[j], neg_m, FP16, f"sub{j}")
            m.d.comb += self.o.payload.e[j].eq(fpexp.fp_exp(m, en, d, FP16, f"exp{j}"))
        for f in ("pass3", "last"):
            m.d.comb += self.o.payload[f].eq(delay(m, en, self.i.payload[f], EXP_DEPTH, f"{f}_dly"))
        return m


class SumFold(wiring.Component):
    """Pass 2's sum: beat sums l_b add into two FP16 partials (beats even / odd, from -0) through
    one 2-cycle adder, a sum whose partner is still in the adder forwarded from its output; then
    r = 1 / (S_0 + S_1). Members: ``i`` In(stream of FP16) — the beat sums in beat order; ``clear`` In
    — a new row; ``r`` Out(FP16) — valid FOLD_TAIL cycles after the last sum leaves the adder."""

    def __init__(self):
        super().__init__({"i": In(stream.Signature(ELEM_BITS)), "clear": In(1), "r": Out(ELEM_BITS)})

    def elaborate(self, platform) -> Module:
        m = Module()
        one = Const(1)
        part = [Signal(ELEM_BITS, init=FP16.sign_bit, name=f"part{p}") for p in range(2)]
        par = Signal()  # the parity of the next beat
        take = self.i.valid
        res_valid = delay(m, one, take, fpadd.LATENCY, "res_valid")
        res_par = delay(m, one, par, fpadd.LATENCY, "res_par")
        acc = Signal(ELEM_BITS)
        res = fpadd.fp_add(m, one, acc, self.i.payload, FP16, "fold")
        m.d.comb += [self.i.ready.eq(1), acc.eq(Mux(res_valid & (res_par == par), res, Mux(par, part[1], part[0])))]
        with m.If(take):
            m.d.sync += par.eq(~par)
        for p in range(2):
            with m.If(res_valid & (res_par == p)):
                m.d.sync += part[p].eq(res)
        with m.If(self.clear):
            m.d.sync += [part[0].eq(FP16.sign_bit), part[1].eq(FP16.sign_bit), par.eq(0)]
        total = fpadd.fp_add(m, one, part[0], part[1], FP16, "total")
        m.d.comb += self.r.eq(fprecip.fp_recip(m, one, total, FP16, "recip"))
        return m


class Scale(wiring.Component):
    """Pass 3's normalization p_i = e_i * r. Members: ``i`` In(stream of {e: lanes FP16, last}); ``r``
    In(FP16); ``o`` Out(stream of {p, last})."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"e": vec, "last": 1}))),
                "r": In(ELEM_BITS),
                "o": Out(stream.Signature(data.StructLayout({"p": vec, "last": 1}))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        en = PipelineCtl(m, self.i, self.o, fpmul.LATENCY).en
        for j in range(self.lanes):
            m.d.comb += self.o.payload.p[j].eq(fpmul.fp_mul(m, en, self.i.payload.e[j], self.r, FP16, FP16, f"mul{j}"))
        m.d.comb += self.o.payload.last.eq(delay(m, en, self.i.payload.last, fpmul.LATENCY, "last_dly"))
        return m


def out_layout(lanes: int) -> data.StructLayout:
    return data.StructLayout({"p": data.ArrayLayout(ELEM_BITS, lanes), "r": ELEM_BITS, "last": 1, "error": ERR})


class RowStore(wiring.Component):
    """Pass 1's row buffer and passes 2 and 3's read-back issue stage. Members: ``w`` In(stream of lanes
    FP16) — a beat as the unit accepts it (always ready; beats past the buffer are counted, not kept);
    ``over`` Out — this row overflowed the buffer; ``issuing`` In — read the row back, a beat per cycle
    ``o`` accepts; ``restart`` In — the next read-back starts at beat 0; ``clear`` In — a new row; ``o``
    Out(stream of {s, last}) — the beats read back in order, ``last`` on the row's final beat."""

    def __init__(self, lanes: int, max_beats: int):
        self.max_beats = max_beats
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {
                "w": In(stream.Signature(vec)),
                "over": Out(1),
                "issuing": In(1),
                "restart": In(1),
                "clear": In(1),
                "o": Out(stream.Signature(data.StructLayout({"s": vec, "last": 1}))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        mb = self.max_beats
        m.submodules.buf = buf = Memory(shape=self.w.payload.shape(), depth=mb, init=[])
        w, r = buf.write_port(), buf.read_port(domain="sync")
        count = Signal(range(mb + 1))  # beats of this row, saturating
        k = Signal(range(mb + 1))  # the next beat to read back
        m.d.comb += [
            self.w.ready.eq(1),
            w.addr.eq(count),
            w.data.eq(self.w.payload),
            w.en.eq(self.w.valid & (count < mb)),
        ]
        with m.If(self.w.valid):
            m.d.sync += count.eq(Mux(count == mb, count, count + 1))
            with m.If(count == mb):
                m.d.sync += self.over.eq(1)
        advance = self.o.ready | ~self.o.valid
        issue = self.issuing & (k < count) & advance
        last = Signal()  # the beat being read is the row's final one
        m.d.comb += [r.addr.eq(k), r.en.eq(advance), self.o.payload.s.eq(r.data), self.o.payload.last.eq(last)]
        with m.If(advance):
            m.d.sync += [self.o.valid.eq(issue), last.eq(k == count - 1)]
        with m.If(issue):
            m.d.sync += k.eq(k + 1)
        with m.If(self.restart):
            m.d.sync += k.eq(0)
        with m.If(self.clear):
            m.d.sync += [count.eq(0), self.over.eq(0)]
        return m


class SoftmaxUnit(wiring.Component):
    """Members: ``i`` In(stream of {s: lanes FP16, last}) — one row's scores, padded to whole beats with
    -Inf; ``o`` Out(stream of {p: lanes FP16, r, last, error}) — per beat its probabilities (or, with
    ``normalize`` off, its exponentials) and the row's r = 1/S; or one error item."""

    def __init__(self, lanes: int, buffer_bytes: int, normalize: bool = True):
        check_params(lanes, buffer_bytes)
        self.lanes, self.normalize = lanes, normalize
        self.max_beats = max_beats(lanes, buffer_bytes)
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"s": vec, "last": 1}))),
                "o": Out(stream.Signature(out_layout(lanes))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        lanes = self.lanes
        m.submodules.rowmax = rowmax = RowMax(lanes)
        m.submodules.store = store = RowStore(lanes, self.max_beats)
        m.submodules.exp = exp = ExpLanes(lanes)
        m.submodules.fold = fold = SumFold()
        clear, pass3 = Signal(), Signal()
        accept = self.i.valid & self.i.ready
        m.d.comb += [
            store.w.valid.eq(accept),
            store.w.payload.eq(self.i.payload.s),
            rowmax.i.valid.eq(accept),
            rowmax.i.payload.eq(self.i.payload.s),
            exp.m.eq(rowmax.m),
            exp.i.valid.eq(store.o.valid),
            exp.i.payload.s.eq(store.o.payload.s),
            exp.i.payload.last.eq(store.o.payload.last),
            exp.i.payload.pass3.eq(pass3),
            store.o.ready.eq(exp.i.ready),
            store.clear.eq(clear),
            rowmax.clear.eq(clear),
            fold.clear.eq(clear),
        ]
        with m.If(clear):
            m.d.sync += pass3.eq(0)
        e2_out, e2_ready = self._pass2(m, exp, fold)
        norm_o = self._pass3(m, exp, fold.r, e2_ready)
        self._sequence(m, store, exp, fold, norm_o, e2_out, clear, pass3)
        return m

    def _sequence(
        self,
        m: Module,
        store: RowStore,
        exp: ExpLanes,
        fold: SumFold,
        norm_o,
        e2_out: Value,
        clear: Signal,
        pass3: Signal,
    ) -> None:
        """The row's passes: LOAD (pass 1), MAXWAIT, EXPSUM (pass 2), SUMWAIT, then NORM (pass 3) or, with
        deferred normalization, the r item; an over-long row's error item after MAXWAIT."""
        lanes = self.lanes
        wait = Signal(range(sum_wait(lanes) + 1))
        with m.FSM():
            with m.State("LOAD"):
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.i.valid & self.i.payload.last):
                    m.d.sync += wait.eq(levels(lanes) - 1)
                    m.next = "MAXWAIT"
            with m.State("MAXWAIT"):  # the last beat's maximum reaches M (an over-long row's too: M is clean)
                m.d.sync += wait.eq(wait - 1)
                with m.If(wait == 0):
                    m.d.comb += store.restart.eq(1)
                    m.next = "EXPSUM"
                    with m.If(store.over):
                        m.next = "ERROR"
            with m.State("EXPSUM"):
                m.d.comb += store.issuing.eq(1)
                if not self.normalize:
                    m.d.comb += [self.o.valid.eq(exp.o.valid), self.o.payload.p.eq(exp.o.payload.e)]
                with m.If(e2_out & exp.o.payload.last):
                    m.d.sync += wait.eq(sum_tail(lanes) - 1)
                    m.next = "SUMWAIT"
            with m.State("SUMWAIT"):  # the last beat sum reaches r
                m.d.sync += wait.eq(wait - 1)
                with m.If(wait == 0):
                    m.d.comb += store.restart.eq(1)
                    m.d.sync += pass3.eq(1)
                    m.next = "NORM" if self.normalize else "R_ITEM"
            self._output_states(m, store, fold, norm_o, clear)

    def _output_states(self, m: Module, store: RowStore, fold: SumFold, norm_o, clear: Signal) -> None:
        """The row's closing states, inside _sequence's FSM: NORM (pass 3) or the deferred r item, and an
        over-long row's error item."""
        if self.normalize:
            with m.State("NORM"):
                m.d.comb += [
                    store.issuing.eq(1),
                    self.o.valid.eq(norm_o.valid),
                    self.o.payload.p.eq(norm_o.payload.p),
                    self.o.payload.r.eq(fold.r),
                    self.o.payload.last.eq(norm_o.payload.last),
                    norm_o.ready.eq(self.o.ready),
                ]
                with m.If(self.o.valid & self.o.ready & self.o.payload.last):
                    m.d.comb += clear.eq(1)
                    m.next = "LOAD"
        else:
            with m.State("R_ITEM"):  # deferred normalization: the row ends with r
                m.d.comb += [self.o.valid.eq(1), self.o.payload.r.eq(fold.r), self.o.payload.last.eq(1)]
                with m.If(self.o.ready):
                    m.d.comb += clear.eq(1)
                    m.next = "LOAD"
        with m.State("ERROR"):
            m.d.comb += [self.o.valid.eq(1), self.o.payload.last.eq(1), self.o.payload.error.len_over.eq(1)]
            with m.If(self.o.ready):
                m.d.comb += clear.eq(1)
                m.next = "LOAD"

    def _pass2(self, m: Module, exp: ExpLanes, fold: SumFold) -> tuple[Value, Value]:
        """Pass 2's exponentials into the adder tree (always ready) and the fold; deferring normalization,
        also to the output. Returns (a pass-2 beat leaves the exp lanes, pass 2 may leave)."""
        m.submodules.tree = tree = AddTree("fp16", self.lanes)
        e2_ready = Signal()
        e2_out = exp.o.valid & ~exp.o.payload.pass3 & e2_ready
        m.d.comb += [
            tree.i.valid.eq(e2_out),
            tree.i.payload.x.eq(exp.o.payload.e),
            tree.o.ready.eq(1),
            fold.i.valid.eq(tree.o.valid),
            fold.i.payload.eq(tree.o.payload),
            e2_ready.eq(1 if self.normalize else self.o.ready),
        ]
        return e2_out, e2_ready

    def _pass3(self, m: Module, exp: ExpLanes, r: Signal, e2_ready: Value):
        """Pass 3 (normalizing only): the exp lanes' pass-3 beats through the multiply by r; the stream {p,
        last} it returns, or None."""
        src = exp.o
        if not self.normalize:  # no pass-3 beats in this mode
            m.d.comb += src.ready.eq(e2_ready)
            return None
        m.submodules.scale = scale = Scale(self.lanes)
        m.d.comb += [
            scale.i.valid.eq(src.valid & src.payload.pass3),
            scale.i.payload.e.eq(src.payload.e),
            scale.i.payload.last.eq(src.payload.last),
            scale.r.eq(r),
            src.ready.eq(Mux(src.payload.pass3, scale.i.ready, e2_ready)),
        ]
        return scale.o
