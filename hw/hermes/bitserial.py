"""Hermes bit-serial FP16 multiplier (Hermes §IV-A1, Table II: "each multiplier is responsible for 128-bit
multiplication in a typical bit-serial manner"; shared/notes/hermes.md §3.1): ``lanes`` FP16 x FP16
products per operation (8 by default: 128-bit operands), FP32 results, exactly ``golden.hermes.mul``.

Each lane keeps the weight's significand and shifts the activation's significand out ``serial_bits`` at a
time, most significant first: acc = (acc << bits) + sig_a * (top bits of sig_b). With one bit per cycle
that is an AND row and a 22-bit adder per lane instead of an 11 x 11 array multiplier; each lane still
has its own round-and-pack, which Yosys counts as most of its cells. Exponents add, and a last round-and-pack
(exact: the 22-bit product fits FP32) forms the result.

Cycle model (:func:`cycle_model`): one operation at a time; the ``steps`` = ceil(11 / serial_bits)
shift-add cycles follow the accepting cycle and the product is offered the cycle after, when the next
operation can be accepted: latency = II = steps + 1 (12 cycles per product at one bit per cycle).
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FP16, FP32
from golden.hermes_spec import ACC_BITS, ELEM_BITS, MUL_LANES, SERIAL_BITS, SIG_BITS, Gemv, serial_steps
from hw.arith.fpcore import EXP_BITS, round_pack, special, unpack
from hw.cycles import CycleModel


def cycle_model(serial_bits: int = SERIAL_BITS, **_params) -> CycleModel:
    return CycleModel(latency=serial_steps(serial_bits) + 1, ii=serial_steps(serial_bits) + 1)


def operand_layout(lanes: int) -> data.StructLayout:
    return data.StructLayout({"a": data.ArrayLayout(ELEM_BITS, lanes), "b": data.ArrayLayout(ELEM_BITS, lanes)})


class SerialLane(wiring.Component):
    """One lane's registers and shift-add step. Members: ``load`` In — latch ``a``, ``b`` In(FP16);
    ``step`` In — one shift-add; ``p`` Out(FP32) — the product of the latched operands once ``steps``
    steps have run (combinational from the registers)."""

    def __init__(self, serial_bits: int):
        self.bits = serial_bits
        super().__init__({"load": In(1), "a": In(ELEM_BITS), "b": In(ELEM_BITS), "step": In(1),
                          "p": Out(ACC_BITS)})

    def elaborate(self, platform) -> Module:
        m = Module()
        bits, width = self.bits, serial_steps(self.bits) * self.bits
        ua, ub = unpack(m, self.a, FP16, "a"), unpack(m, self.b, FP16, "b")
        sig_a, shift_b = Signal(SIG_BITS), Signal(width)  # shift_b: sig_b zero-extended at the top
        acc = Signal(2 * SIG_BITS)
        exp = Signal(signed(EXP_BITS))
        sign, nan, inf = Signal(), Signal(), Signal()
        with m.If(self.load):
            m.d.sync += [sig_a.eq(ua.sig), shift_b.eq(ub.sig), acc.eq(0), exp.eq(ua.exp + ub.exp),
                         sign.eq(ua.sign ^ ub.sign), inf.eq(ua.is_inf | ub.is_inf),
                         nan.eq(ua.is_nan | ub.is_nan | (ua.is_inf & ub.is_zero) | (ua.is_zero & ub.is_inf))]
        with m.Elif(self.step):
            m.d.sync += [acc.eq((acc << bits) + sig_a * shift_b[width - bits:]), shift_b.eq(shift_b << bits)]
        m.d.comb += self.p.eq(special(FP32, nan, inf, sign, round_pack(m, sign, acc, exp, 0, FP32, "pack")))
        return m


class BitSerialMul(wiring.Component):
    """Members: ``i`` In(stream of {a, b: lanes FP16}) — weights and activations; ``o`` Out(stream of
    lanes FP32) — their products, lane by lane."""

    def __init__(self, lanes: int = MUL_LANES, serial_bits: int = SERIAL_BITS):
        Gemv(lanes=lanes, serial_bits=serial_bits)  # checks both
        self.lanes, self.serial_bits = lanes, serial_bits
        super().__init__({"i": In(stream.Signature(operand_layout(lanes))),
                          "o": Out(stream.Signature(data.ArrayLayout(ACC_BITS, lanes)))})

    def elaborate(self, platform) -> Module:
        m = Module()
        left = Signal(range(serial_steps(self.serial_bits) + 1))  # shift-add steps still to run
        load = self.i.valid & self.i.ready
        m.d.comb += self.i.ready.eq((left == 0) & (~self.o.valid | self.o.ready))
        with m.If(load):
            m.d.sync += left.eq(serial_steps(self.serial_bits))
        with m.Elif(left != 0):
            m.d.sync += left.eq(left - 1)
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(left == 1):
            m.d.sync += self.o.valid.eq(1)
        for t in range(self.lanes):
            m.submodules[f"lane{t}"] = lane = SerialLane(self.serial_bits)
            m.d.comb += [lane.load.eq(load), lane.a.eq(self.i.payload.a[t]), lane.b.eq(self.i.payload.b[t]),
                         lane.step.eq(left != 0), self.o.payload[t].eq(lane.p)]
        return m
