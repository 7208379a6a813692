"""L3 bank PU (L3 §4.2, §4.4, §6.4): next to each physical bank, four FP16 multipliers and four FP16
adders with configurable interconnect, one RD (64 bits = 4 FP16 of its bank) per step against 64 bits
from the chip's shared buffer.

* Score mode: products p0..p3 of the bank word and the broadcast Q word; adders 0 and 1 form p0+p1 and
  p2+p3, adder 2 their sum (the tree), adder 3 accumulates the tree values over the token's RDs.
* Context mode: the broadcast word carries one S value per bank group; this PU multiplies its 4 V elements
  by S[``group``] and adders 0..3 are four self-accumulators. A step with ``en`` low (a token beyond the
  head's end) leaves them alone.

The first accumulating step of a transaction loads the accumulators (no add); the step with ``last``
emits them (score: the partial in element 0). Semantics: ``golden.l3.bank_score``/``bank_context``.

Cycle model: one step at a time through the pipelined units — multiply (2), then score: tree (2 + 2) and
accumulate (2); context: accumulate (2). A step is accepted every 8 (score) / 4 (context) cycles: II 8 / 4
per RD, and a transaction's result leaves with its last step's accumulation, latency 8 / 4. At a PU clock
equal to tCK the score rate matches the all-bank RD rate (tCCD_L = 8).
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FP16
from golden.l3_spec import ELEM_BITS, ELEMS_PER_RD, V_GROUPS, Mode
from hw.arith import fpadd, fpmul
from hw.cycles import CycleModel
from hw.l3.cycles import bank_pu_latency

WORD = data.ArrayLayout(ELEM_BITS, ELEMS_PER_RD)
STEP = data.StructLayout({"mode": 1, "a": WORD, "b": WORD, "en": 1, "last": 1})


def cycle_model(mode: str = "score", **_params) -> CycleModel:
    lat = bank_pu_latency(Mode[mode.upper()])
    return CycleModel(latency=lat, ii=lat)


class BankPU(wiring.Component):
    """Members: ``i`` In(stream of {mode, a, b, en, last}) — one RD step: ``a`` the bank's word, ``b`` the
    shared buffer's broadcast; ``o`` Out(stream of a word) — the accumulators, after a ``last`` step."""

    def __init__(self, group: int = 0):
        if not 0 <= group < V_GROUPS:
            raise ValueError(f"group: {group} not allowed; 0..{V_GROUPS - 1}")
        self.group = group
        super().__init__({"i": In(stream.Signature(STEP)), "o": Out(stream.Signature(WORD))})

    def elaborate(self, platform) -> Module:
        m = Module()
        step = self.i.payload
        a_r, b_r = Signal(WORD), Signal(WORD)
        mode, en, last = Signal(1), Signal(), Signal()
        score, ctx_lat = bank_pu_latency(Mode.SCORE), bank_pu_latency(Mode.CONTEXT)
        busy, left = Signal(), Signal(range(max(score, ctx_lat) + 1))
        acc = Signal(WORD)
        loaded = Signal()  # the accumulators hold a value of this transaction

        # named signals, so each control term is computed once rather than inlined at every use
        done, emit, latch, hold, ctx = Signal(), Signal(), Signal(), Signal(), Signal()
        a, b = Signal(WORD), Signal(WORD)
        m.d.comb += [
            done.eq(busy & (left == 0)),
            emit.eq(done & last),
            latch.eq(done & (~last | self.o.ready)),
            # operands: straight from the step in its accept cycle, then held, so the units see them
            hold.eq(busy & ~latch),
            a.eq(Mux(hold, a_r, step.a)),
            b.eq(Mux(hold, b_r, step.b)),
            ctx.eq(Mux(hold, mode, step.mode) == Mode.CONTEXT),
        ]
        new = self._units(m, a, b, ctx, acc, loaded, mode)

        kept = Mux(loaded, acc.as_value(), 0)  # a disabled last step emits what earlier steps accumulated
        m.d.comb += [
            self.o.valid.eq(emit),
            self.o.payload.eq(Mux(en, new.as_value(), kept)),
            self.i.ready.eq(~busy | latch),
        ]
        with m.If(busy & (left != 0)):
            m.d.sync += left.eq(left - 1)
        with m.If(latch):
            m.d.sync += busy.eq(0)
            with m.If(en):
                m.d.sync += [acc.eq(new), loaded.eq(~last)]
            with m.Elif(last):
                m.d.sync += loaded.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [
                a_r.eq(step.a),
                b_r.eq(step.b),
                mode.eq(step.mode),
                en.eq(step.en),
                last.eq(step.last),
                busy.eq(1),
                left.eq(Mux(step.mode == Mode.CONTEXT, ctx_lat, score) - 1),
            ]
        return m

    def _units(self, m: Module, a: Signal, b: Signal, ctx: Signal, acc: Signal, loaded: Signal, mode: Signal) -> Signal:
        """The four multipliers and four adders of one step: a score's dot-product tree, or (context) four
        accumulations of a * b[group]; returns the accumulators after the step."""
        one = Signal()
        m.d.comb += one.eq(1)
        prods = [
            fpmul.fp_mul(m, one, a[k], Mux(ctx, b[self.group], b[k]), FP16, FP16, f"mul{k}")
            for k in range(ELEMS_PER_RD)
        ]
        # the interconnect depends only on the mode, so every unit's inputs stay put during a step
        s01 = fpadd.fp_add(m, one, Mux(ctx, acc[0], prods[0]), Mux(ctx, prods[0], prods[1]), FP16, "add0")
        s23 = fpadd.fp_add(m, one, Mux(ctx, acc[1], prods[2]), Mux(ctx, prods[1], prods[3]), FP16, "add1")
        tree = fpadd.fp_add(m, one, Mux(ctx, acc[2], s01), Mux(ctx, prods[2], s23), FP16, "add2")
        add3 = fpadd.fp_add(m, one, Mux(ctx, acc[3], acc[0]), Mux(ctx, prods[3], tree), FP16, "add3")
        new = Signal(WORD)  # the accumulators after this step
        with m.If(mode == Mode.CONTEXT):
            for k, s in enumerate((s01, s23, tree, add3)):
                m.d.comb += new[k].eq(Mux(loaded, s, prods[k]))
        with m.Else():
            m.d.comb += new[0].eq(Mux(loaded, add3, tree))
        return new
