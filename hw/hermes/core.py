"""Hermes NDP core command front end (Hermes §IV-A1, Fig. 6: the NDP core's GEMV and activation units
behind the DIMM's buffer chip; shared/notes/hermes.md §3.3): one command stream from the host, each
transaction tagged with the unit that runs it, so a layer's cold-neuron work arrives as the host issues
it — the up-projection's rows (GEMV, dot), their ReLU, the down-projection's columns (GEMV, AXPY), the merge
with the GPU's partial (golden: ``golden.hermes.gemv_run`` and ``act_run`` on each unit's transactions).

The front end takes one transaction at a time: its first item's ``unit`` routes it and every item to that
item's ``last``; the unit's outputs pass through tagged with it; the next transaction is taken the cycle
after the unit's last output (for a flagged transaction, its error item). The units' errors and cycle
models are theirs (:func:`hw.hermes.gemv.txn_cycles`, :func:`hw.hermes.activation.txn_cycles`): the
routing adds no cycle.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.hermes_spec import ACT_BUFFER_BYTES, ACT_LANES, FULL
from hw.cycles import CycleModel
from hw.hermes import activation, gemv

GEMV, ACT = 0, 1  # an item's ``unit``


def cycle_model(
    multipliers: int = FULL.multipliers,
    lanes: int = FULL.lanes,
    buffer_bytes: int = FULL.buffer_bytes,
    act_lanes: int = ACT_LANES,
    act_buffer_bytes: int = ACT_BUFFER_BYTES,
    serial_bits: int = FULL.serial_bits,
    **_params,
) -> CycleModel:
    """The GEMV unit's, for its timing transaction."""
    return gemv.cycle_model(multipliers=multipliers, lanes=lanes, serial_bits=serial_bits, buffer_bytes=buffer_bytes)


def in_layout(g, act_lanes: int) -> data.StructLayout:
    return data.StructLayout({"unit": 1, "gemv": gemv.item_layout(g), "act": activation.in_layout(act_lanes)})


def out_layout(g, act_lanes: int) -> data.StructLayout:
    return data.StructLayout({"unit": 1, "gemv": gemv.out_layout(g), "act": activation.out_layout(act_lanes)})


class NdpCore(wiring.Component):
    """Members: ``i`` In(stream of {unit, gemv: a GEMV item, act: an activation beat}) — the command stream,
    only the field ``unit`` names is read; ``o`` Out(stream of {unit, gemv, act}) — that unit's outputs
    (the other field 0)."""

    def __init__(
        self,
        multipliers: int = FULL.multipliers,
        lanes: int = FULL.lanes,
        buffer_bytes: int = FULL.buffer_bytes,
        act_lanes: int = ACT_LANES,
        act_buffer_bytes: int = ACT_BUFFER_BYTES,
        serial_bits: int = FULL.serial_bits,
    ):
        self.gemv = gemv.GemvUnit(multipliers, lanes, serial_bits, buffer_bytes)
        self.act = activation.ActivationUnit(act_lanes, act_buffer_bytes)
        g = self.gemv.g
        super().__init__(
            {"i": In(stream.Signature(in_layout(g, act_lanes))), "o": Out(stream.Signature(out_layout(g, act_lanes)))}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.gemv, m.submodules.act = self.gemv, self.act
        unit = Signal()  # the transaction's
        busy = Signal()  # its first item taken, its unit's last output not yet
        fed = Signal()  # its last item taken
        sel = Signal()
        m.d.comb += [sel.eq(Mux(busy, unit, self.i.payload.unit)), self.o.payload.unit.eq(unit)]
        for u, dut in ((GEMV, self.gemv), (ACT, self.act)):
            field = self.i.payload.gemv if u == GEMV else self.i.payload.act
            out = self.o.payload.gemv if u == GEMV else self.o.payload.act
            feeding, draining = (sel == u) & ~fed, busy & (unit == u)
            m.d.comb += [
                dut.i.payload.eq(field),
                dut.i.valid.eq(self.i.valid & feeding),
                out.eq(Mux(draining, dut.o.payload.as_value(), 0)),
                dut.o.ready.eq(self.o.ready & draining),
            ]
            with m.If(feeding):
                m.d.comb += self.i.ready.eq(dut.i.ready)
            with m.If(draining):
                m.d.comb += self.o.valid.eq(dut.o.valid)
                with m.If(dut.o.valid & self.o.ready & dut.o.payload.last):
                    m.d.sync += [busy.eq(0), fed.eq(0)]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [busy.eq(1), unit.eq(sel), fed.eq(self.i.payload.gemv.last)]
            with m.If(sel == ACT):
                m.d.sync += fed.eq(self.i.payload.act.last)
        return m
