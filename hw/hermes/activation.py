"""Hermes NDP activation unit (Hermes §IV-A1: "256 FP16 exponent, adder and multiplier units, a comparator
tree, an adder tree and a divider"; shared/notes/hermes.md §3.2): softmax, ReLU, merge and scale as
commands over ``lanes``-wide FP16 beats (semantics: ``golden.hermes.act_run``; ops and flags:
``golden.hermes_spec.ActOp`` / ``ActErr``).

Softmax is the shared softmax unit (:class:`hw.common.softmax.SoftmaxUnit`, as Duplex's: the comparator tree
and running max, the exp lanes, the adder tree and even/odd partials, one reciprocal, the multiply by it),
which this unit feeds with the last beat's lanes past n set to -Inf. ReLU, merge and scale run in
:class:`Elementwise` (one FP16 adder and multiplier per lane); :class:`Front` checks the transaction and
:class:`Collect` picks the output.

Every beat carries ``op`` and ``n``; the first beat's decide the transaction. It must be exactly
ceil(n / lanes) beats of one op: the beat where that count ends (or an early ``last``, or an op change)
closes it. A transaction with n = 0, a softmax longer than the buffer, or a malformed beat is consumed to
its ``last`` beat and answered with one error item, after the elementwise beats already out — never a
hang; the next transaction is unaffected.

Cycle model (:func:`txn_cycles`): softmax, the softmax unit's row (:func:`hw.common.softmax.row_cycles`)
plus the input register; elementwise, a beat per cycle through :data:`ELEM_LATENCY` stages. The unit takes
one transaction at a time, the next one's first beat the cycle after the previous one's last output.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FP16
from golden.hermes_spec import ACT_BUFFER_BYTES, ACT_ERR_FIELDS, ACT_LANES, ACT_N_BITS, ELEM_BITS, ActOp
from golden.softmax import NEG_INF
from hw.arith import fpadd, fpmul
from hw.common import softmax as softmax_unit
from hw.cycles import CycleModel
from hw.hermes.cycles import ACT_ELEM_LATENCY as ELEM_LATENCY
from hw.hermes.cycles import act_check_params as check_params
from hw.hermes.cycles import act_max_scores as max_scores
from hw.hermes.cycles import act_txn_cycles as txn_cycles
from hw.pipeline import PipelineCtl, delay

ERR = data.StructLayout(ACT_ERR_FIELDS)
TIMING = (ActOp.SOFTMAX, 3)  # beats of the transaction the cycle test streams back to back


def cycle_model(lanes: int = ACT_LANES, buffer_bytes: int = ACT_BUFFER_BYTES, **_params) -> CycleModel:
    """For a :data:`TIMING` softmax: latency from its last beat, II per transaction (its cycles plus the
    one after its last output)."""
    op, beats = TIMING
    cycles = txn_cycles(op, beats * lanes, lanes, buffer_bytes)
    return CycleModel(latency=cycles - (beats - 1), ii=cycles + 1)


def in_layout(lanes: int) -> data.StructLayout:
    vec = data.ArrayLayout(ELEM_BITS, lanes)
    return data.StructLayout({"op": 2, "n": ACT_N_BITS, "a": vec, "b": vec, "last": 1})


def out_layout(lanes: int) -> data.StructLayout:
    return data.StructLayout({"y": data.ArrayLayout(ELEM_BITS, lanes), "last": 1, "error": ERR})


class Elementwise(wiring.Component):
    """ReLU, merge and scale lanes. Members: ``i`` In(stream of {op, a, b, last, drop}); ``o`` Out(stream of
    {y, last, drop}) — ``drop`` marks the beat that closed a malformed transaction (not to be output)."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"op": 2, "a": vec, "b": vec, "last": 1, "drop": 1}))),
                "o": Out(stream.Signature(data.StructLayout({"y": vec, "last": 1, "drop": 1}))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, ELEM_LATENCY)
        en, p = ctl.en, self.i.payload
        op = delay(m, en, p.op, ELEM_LATENCY, "op")
        m.d.comb += [
            self.o.payload.last.eq(delay(m, en, p.last, ELEM_LATENCY, "last")),
            self.o.payload.drop.eq(delay(m, en, p.drop, ELEM_LATENCY, "drop")),
        ]
        for j in range(self.lanes):
            x = p.a[j]
            keep = ~x[ELEM_BITS - 1] | (x[: ELEM_BITS - 1] > FP16.inf_bits)  # sign clear, or NaN
            relu = delay(m, en, Mux(keep, x, 0), ELEM_LATENCY, f"relu{j}_")
            add = delay(
                m, en, fpadd.fp_add(m, en, x, p.b[j], FP16, f"add{j}"), ELEM_LATENCY - fpadd.LATENCY, f"addd{j}_"
            )
            mul = delay(
                m, en, fpmul.fp_mul(m, en, x, p.b[0], FP16, FP16, f"mul{j}"), ELEM_LATENCY - fpmul.LATENCY, f"muld{j}_"
            )
            m.d.comb += self.o.payload.y[j].eq(Mux(op == ActOp.RELU, relu, Mux(op == ActOp.MERGE, add, mul)))
        return m


class ActivationUnit(wiring.Component):
    """Members: ``i`` In(stream of {op, n, a, b: lanes FP16, last}) — a transaction's beats; ``o``
    Out(stream of {y: lanes FP16, last, error}) — its result beats, or one error item."""

    def __init__(self, lanes: int = ACT_LANES, buffer_bytes: int = ACT_BUFFER_BYTES):
        check_params(lanes, buffer_bytes)
        self.lanes, self.buffer_bytes = lanes, buffer_bytes
        super().__init__({"i": In(stream.Signature(in_layout(lanes))), "o": Out(stream.Signature(out_layout(lanes)))})

    def elaborate(self, platform) -> Module:
        m = Module()
        lanes = self.lanes
        m.submodules.softmax = sm = softmax_unit.SoftmaxUnit(lanes, self.buffer_bytes)
        m.submodules.elem = el = Elementwise(lanes)
        m.submodules.front = front = Front(lanes, max_scores(lanes, self.buffer_bytes))
        wiring.connect(m, wiring.flipped(self.i), front.i)
        # the front's beats to the transaction's path, through the input register for softmax
        beat, is_sm = front.o.payload, front.op == ActOp.SOFTMAX
        sm_free = self._softmax_in(m, front, sm)
        m.d.comb += [
            el.i.valid.eq(front.o.valid & ~is_sm),
            el.i.payload.op.eq(front.op),
            el.i.payload.a.eq(beat.s),
            el.i.payload.b.eq(beat.b),
            el.i.payload.last.eq(beat.last),
            el.i.payload.drop.eq(beat.drop),
            front.o.ready.eq(Mux(is_sm, sm_free, el.i.ready)),
        ]
        m.submodules.collect = out = Collect(lanes)
        wiring.connect(m, sm.o, out.sm)
        wiring.connect(m, el.o, out.el)
        wiring.connect(m, out.o, wiring.flipped(self.o))
        drop_row = Signal()  # the softmax row in flight closed a malformed transaction
        with m.If(front.o.valid & front.o.ready & is_sm & beat.last):
            m.d.sync += drop_row.eq(beat.drop)
        m.d.comb += [
            out.softmax.eq(is_sm),
            out.sm_drop.eq(drop_row),
            front.path_done.eq(out.path_done),
            out.error.eq(front.error),
            out.error_pending.eq(front.error_pending),
            out.error_out.eq(front.error_out),
            front.error_taken.eq(out.error_taken),
        ]
        return m

    def _softmax_in(self, m: Module, front: Front, sm: softmax_unit.SoftmaxUnit) -> Value:
        """The input register (:data:`IN_REG`) between the front and the softmax unit; returns whether it
        takes the front's beat this cycle."""
        sm_v, sm_s, sm_last = Signal(), Signal(data.ArrayLayout(ELEM_BITS, self.lanes)), Signal()
        free = sm.i.ready | ~sm_v
        with m.If(free):
            m.d.sync += [
                sm_v.eq(front.o.valid & (front.op == ActOp.SOFTMAX)),
                sm_s.eq(front.o.payload.s),
                sm_last.eq(front.o.payload.last),
            ]
        m.d.comb += [sm.i.valid.eq(sm_v), sm.i.payload.s.eq(sm_s), sm.i.payload.last.eq(sm_last)]
        return free


class Collect(wiring.Component):
    """The unit's output: the transaction path's beats, with the beat or softmax row that closed a
    malformed transaction swallowed, or the front's error item. Members: ``sm`` In(stream of
    :func:`hw.common.softmax.out_layout`) — the softmax unit's beats; ``el`` In(stream of
    {y, last, drop}) — :class:`Elementwise`'s; ``softmax`` In — the transaction runs on the softmax unit;
    ``sm_drop`` In — its row closed a malformed transaction; ``path_done`` Out — the path's last beat
    taken; ``error``, ``error_pending``, ``error_out`` In, ``error_taken`` Out — :class:`Front`'s flag;
    ``o`` Out(stream of :func:`out_layout`)."""

    def __init__(self, lanes: int):
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {
                "sm": In(stream.Signature(softmax_unit.out_layout(lanes))),
                "el": In(stream.Signature(data.StructLayout({"y": vec, "last": 1, "drop": 1}))),
                "softmax": In(1),
                "sm_drop": In(1),
                "path_done": Out(1),
                "error": In(ERR),
                "error_pending": In(1),
                "error_out": In(1),
                "error_taken": Out(1),
                "o": Out(stream.Signature(out_layout(lanes))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        sm, el, is_sm = self.sm, self.el, self.softmax
        src_v = Mux(is_sm, sm.valid, el.valid)
        src_last = Mux(is_sm, sm.payload.last, el.payload.last)
        src_drop = Mux(is_sm, self.sm_drop, el.payload.drop)
        m.d.comb += [
            sm.ready.eq(is_sm & (self.sm_drop | self.o.ready)),
            el.ready.eq(~is_sm & (el.payload.drop | self.o.ready)),
            self.path_done.eq(src_v & (src_drop | self.o.ready) & src_last),
        ]
        with m.If(self.error_out):
            m.d.comb += [
                self.o.valid.eq(1),
                self.o.payload.last.eq(1),
                self.o.payload.error.eq(self.error),
                self.error_taken.eq(self.o.ready),
            ]
        with m.Else():
            m.d.comb += [
                self.o.valid.eq(src_v & ~src_drop),
                self.o.payload.last.eq(src_last & ~self.error_pending),
                self.o.payload.y.eq(Mux(is_sm, sm.payload.p, el.payload.y)),
            ]
        return m


class Front(wiring.Component):
    """The transaction checker. Members: ``i`` In(stream of :func:`in_layout`) — beats as they come; ``o``
    Out(stream of {s: the beat's a, -Inf past n on a softmax's final beat; b; last: it closes the
    transaction; drop: it closes a malformed one}); ``op`` Out — the transaction's; ``path_done`` In —
    the path's last output taken; ``error``, ``error_pending``, ``error_out`` Out — the flag, set for this
    transaction, and its item due; ``error_taken`` In."""

    def __init__(self, lanes: int, max_scores: int):
        self.lanes, self.max_scores = lanes, max_scores
        vec = data.ArrayLayout(ELEM_BITS, lanes)
        super().__init__(
            {
                "i": In(stream.Signature(in_layout(lanes))),
                "o": Out(stream.Signature(data.StructLayout({"s": vec, "b": vec, "last": 1, "drop": 1}))),
                "op": Out(2),
                "path_done": In(1),
                "error": Out(ERR),
                "error_pending": Out(1),
                "error_out": Out(1),
                "error_taken": In(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        lanes, p = self.lanes, self.i.payload
        n, beats, k = Signal(ACT_N_BITS), Signal(ACT_N_BITS), Signal(ACT_N_BITS)  # k: beats forwarded
        first_n = p.n
        first_beats = (first_n + lanes - 1) // lanes
        cur_n = Mux(k == 0, first_n, n)
        final = k == Mux(k == 0, first_beats, beats) - 1
        bad = (k != 0) & (p.op != self.op) | (p.last != final)
        self._pad(m, final, cur_n - k * lanes)
        m.d.comb += [
            self.o.payload.last.eq(p.last | final),
            self.o.payload.drop.eq(bad),
            self.error_pending.eq(self.error.as_value() != 0),
        ]
        accept = self.i.valid & self.i.ready
        op = Signal(2)
        m.d.comb += self.op.eq(Mux(k == 0, p.op, op))
        with m.FSM():
            with m.State("BEATS"):
                self._beats(m, k, final, bad, [(op, p.op), (n, first_n), (beats, first_beats)])
            with m.State("SKIP_NODATA"):  # nothing forwarded: consumed to last, then the error item
                m.d.comb += self.i.ready.eq(1)
                with m.If(accept & p.last):
                    m.next = "ERROR"
            with m.State("SKIP"):  # consumed to last while the closing beat runs through its path
                m.d.comb += self.i.ready.eq(1)
                with m.If(self.path_done):
                    m.next = "SKIP_NODATA"
                with m.If(accept & p.last):
                    m.next = "WAIT"
                    with m.If(self.path_done):
                        m.next = "ERROR"
            with m.State("WAIT"), m.If(self.path_done):  # the path's last output
                m.next = "BEATS"
                with m.If(self.error_pending):
                    m.next = "ERROR"
                with m.Else():
                    m.d.sync += k.eq(0)
            with m.State("ERROR"):
                m.d.comb += self.error_out.eq(1)
                with m.If(self.error_taken):
                    m.d.sync += [k.eq(0), self.error.eq(0)]
                    m.next = "BEATS"
        return m

    def _beats(self, m: Module, k: Signal, final: Value, bad: Value, latch: list[tuple[Signal, Value]]) -> None:
        """The BEATS state: the first beat's descriptor checked (``latch``: the registers it sets) and each
        beat forwarded, until the one that closes the transaction."""
        p, accept = self.i.payload, self.i.valid & self.i.ready
        zero = p.n == 0
        over = (p.op == ActOp.SOFTMAX) & (p.n > self.max_scores)
        check = (k == 0) & (zero | over)
        m.d.comb += [self.o.valid.eq(self.i.valid & ~check), self.i.ready.eq(check | self.o.ready)]
        with m.If(accept):
            m.d.sync += k.eq(k + 1)
            with m.If(k == 0):
                m.d.sync += [reg.eq(v) for reg, v in latch]
            with m.If(check):
                m.d.sync += [self.error.zero_len.eq(zero), self.error.len_over.eq(~zero & over)]
                m.next = "SKIP_NODATA"
                with m.If(p.last):
                    m.next = "ERROR"
            with m.Elif(p.last | final):
                with m.If(bad):
                    m.d.sync += self.error.malformed.eq(1)
                m.next = "WAIT"
                with m.If(bad & ~p.last):
                    m.next = "SKIP"

    def _pad(self, m: Module, final: Value, rem: Value) -> None:
        """The beat forwarded: a softmax's final beat with its lanes from ``rem`` (the scores left) on -Inf."""
        p = self.i.payload
        for j in range(self.lanes):
            masked = (self.op == ActOp.SOFTMAX) & final & (j >= rem)
            m.d.comb += [
                self.o.payload.s[j].eq(Mux(masked, Const(NEG_INF, ELEM_BITS), p.a[j])),
                self.o.payload.b[j].eq(p.b[j]),
            ]
