"""L3 re-layout unit (L3 §4.1, §6.4): the rank PU's double buffer that exchanges bytes between the FP16
elements of two 64-bit beats so that every element lands whole in one x8 chip (``golden.l3.relayout``).
The host write path uses the forward permutation; ``inverse`` builds the read-back unit.

A write is a run of beats ending with ``last``. Beats pass in 2-beat windows: a window is collected in
one buffer while the previous one, permuted, leaves from the other, so the unit streams one beat per
cycle. A write with an odd number of beats has its last window completed with a zero beat; a write that is
not a whole number of bursts (8 beats) sets ``error`` (``golden.l3_spec.Err.PARTIAL_BURST``) on its last
beat — the rank drops such a write.

Cycle model: a beat leaves 3 cycles after the second beat of its window is accepted (the window is
complete, it moves to the output buffer, its first beat leaves, then its second): latency 3 for the last
beat of a window, II 1.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.l3_spec import BEAT_BITS, BEATS_PER_BURST, WINDOW_BEATS
from hw.cycles import CycleModel
from hw.l3.cycles import RELAYOUT_LATENCY

LATENCY = RELAYOUT_LATENCY
BEAT = data.StructLayout({"data": BEAT_BITS, "last": 1})
BEAT_OUT = data.StructLayout({"data": BEAT_BITS, "last": 1, "error": 1})


def cycle_model(**_params) -> CycleModel:
    return CycleModel(latency=LATENCY)


def permute(window: list, inverse: bool) -> list:
    """Byte (beat, index) sources of the two output beats (golden.l3.relayout), as Amaranth values."""
    src = [[window[b][8 * i : 8 * i + 8] for i in range(8)] for b in range(WINDOW_BEATS)]
    if not inverse:
        return [Cat(*(src[i // 4][2 * (i % 4) + j] for i in range(8))) for j in range(WINDOW_BEATS)]
    out = [[None] * 8 for _ in range(WINDOW_BEATS)]
    for j in range(WINDOW_BEATS):
        for i in range(8):
            out[i // 4][2 * (i % 4) + j] = src[j][i]
    return [Cat(*row) for row in out]


class Relayout(wiring.Component):
    """Members: ``i`` In(stream of {data, last}) — host beats; ``o`` Out(stream of {data, last, error});
    ``busy`` Out(1) — a whole window is held (to leave): low, every beat accepted has left but an odd one."""

    def __init__(self, inverse: bool = False):
        self.inverse = inverse
        super().__init__({"i": In(stream.Signature(BEAT)), "o": Out(stream.Signature(BEAT_OUT)), "busy": Out(1)})

    def elaborate(self, platform) -> Module:
        m = Module()
        # collecting buffer: beats of the current window, how many, and whether the write ends in it
        a = [Signal(BEAT_BITS, name=f"a{b}") for b in range(WINDOW_BEATS)]
        a_n, a_last, a_err = Signal(range(WINDOW_BEATS + 1)), Signal(), Signal()
        # output buffer: the permuted window, the next beat to send, its flags
        o_data = [Signal(BEAT_BITS, name=f"o{b}") for b in range(WINDOW_BEATS)]
        o_full, o_idx, o_last, o_err = Signal(), Signal(), Signal(), Signal()
        count = Signal(range(BEATS_PER_BURST))  # beats of the write so far, mod 8

        sent = self.o.valid & self.o.ready & (o_idx == WINDOW_BEATS - 1)
        moving = (a_n == WINDOW_BEATS) & (~o_full | sent)
        m.d.comb += [self.i.ready.eq((a_n < WINDOW_BEATS) | moving), self.busy.eq(o_full | (a_n == WINDOW_BEATS))]
        m.d.comb += [
            self.o.valid.eq(o_full),
            self.o.payload.data.eq(Mux(o_idx, o_data[1], o_data[0])),
            self.o.payload.last.eq(o_last & o_idx),
            self.o.payload.error.eq(o_err & o_idx),
        ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += o_idx.eq(~o_idx)
        with m.If(sent):
            m.d.sync += o_full.eq(0)
        with m.If(moving):
            for b, word in enumerate(permute(a, self.inverse)):
                m.d.sync += o_data[b].eq(word)
            m.d.sync += [o_full.eq(1), o_idx.eq(0), o_last.eq(a_last), o_err.eq(a_err), a_n.eq(0)]

        beat = self.i.payload
        with m.If(self.i.valid & self.i.ready):
            slot = Mux(moving, 0, a_n)  # the window moving out this cycle frees the buffer
            for b in range(WINDOW_BEATS):
                with m.If(slot == b):
                    m.d.sync += a[b].eq(beat.data)
            ends = beat.last | (slot == WINDOW_BEATS - 1)
            with m.If(beat.last & (slot == 0)):  # odd write: the window's second beat is zero
                m.d.sync += a[1].eq(0)
            m.d.sync += [
                a_n.eq(Mux(ends, WINDOW_BEATS, slot + 1)),
                a_last.eq(beat.last),
                a_err.eq(beat.last & (count != BEATS_PER_BURST - 1)),
                count.eq(Mux(beat.last, 0, count + 1)),
            ]
        return m
