"""Hermes bit-serial FP16 multiplier (Hermes §IV-A1, Table II: "each multiplier is responsible for 128-bit
multiplication in a typical bit-serial manner"; shared/notes/hermes.md §3.1): ``lanes`` FP16 x FP16
products per operation (8 by default: 128-bit operands), FP32 results, exactly ``golden.hermes.mul``.

Each lane keeps the weight's significand and shifts the activation's significand out ``serial_bits`` at a
time, most significant first: acc = (acc << bits) + sig_a * (top bits of sig_b). With one bit per cycle
that is an AND row and a 22-bit adder per lane instead of an 11 x 11 array multiplier. The exact 22-bit
products (with exponent and class flags) move to a hold bank when the steps end, and one packer per
multiplier normalizes them to FP32 lane by lane while the next operation's steps run, so the lanes share
one round-and-pack instead of having one each (exact: the 22-bit product fits FP32's significand).

Cycle model (:func:`cycle_model`): an operation is accepted, its ``steps`` = ceil(11 / serial_bits)
shift-add cycles follow, the products move to the hold bank the cycle after (when the next operation can
be accepted), and lane t is offered the cycle after that plus t: latency (accept -> last lane) = steps
+ 1 + lanes, II = max(steps + 1, lanes) per operation (12 cycles at one bit per cycle and 8 lanes).
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import FP16, FP32
from golden.hermes_spec import ACC_BITS, ELEM_BITS, MUL_LANES, SERIAL_BITS, SIG_BITS, Gemv, serial_steps
from hw.arith.fpcore import EXP_BITS, round_pack, special, unpack
from hw.cycles import CycleModel


def ii(serial_bits: int = SERIAL_BITS, lanes: int = MUL_LANES) -> int:
    """Cycles between operations: the steps plus the hold move, or the packer's lanes if more."""
    return max(serial_steps(serial_bits) + 1, lanes)


def cycle_model(serial_bits: int = SERIAL_BITS, lanes: int = MUL_LANES, **_params) -> CycleModel:
    return CycleModel(latency=serial_steps(serial_bits) + 1 + lanes, ii=ii(serial_bits, lanes))


def operand_layout(lanes: int) -> data.StructLayout:
    return data.StructLayout({"a": data.ArrayLayout(ELEM_BITS, lanes), "b": data.ArrayLayout(ELEM_BITS, lanes)})


def raw_layout() -> data.StructLayout:
    """An exact product before packing: value = (-1)**sign * sig * 2**exp, with class flags."""
    return data.StructLayout({"sig": 2 * SIG_BITS, "exp": signed(EXP_BITS), "sign": 1, "nan": 1, "inf": 1})


def out_layout(lanes: int) -> data.StructLayout:
    return data.StructLayout({"p": ACC_BITS, "lane": range(lanes)})


class SerialLane(wiring.Component):
    """One lane's registers and shift-add step. Members: ``load`` In — latch ``a``, ``b`` In(FP16);
    ``step`` In — one shift-add; ``raw`` Out(:func:`raw_layout`) — the exact product of the latched
    operands once ``steps`` steps have run (the registers themselves)."""

    def __init__(self, serial_bits: int):
        self.bits = serial_bits
        super().__init__(
            {"load": In(1), "a": In(ELEM_BITS), "b": In(ELEM_BITS), "step": In(1), "raw": Out(raw_layout())}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        bits, width = self.bits, serial_steps(self.bits) * self.bits
        ua, ub = unpack(m, self.a, FP16, "a"), unpack(m, self.b, FP16, "b")
        sig_a, shift_b = Signal(SIG_BITS), Signal(width)  # shift_b: sig_b zero-extended at the top
        acc = Signal(2 * SIG_BITS)
        exp = Signal(signed(EXP_BITS))
        sign, nan, inf = Signal(), Signal(), Signal()
        with m.If(self.load):
            m.d.sync += [
                sig_a.eq(ua.sig),
                shift_b.eq(ub.sig),
                acc.eq(0),
                exp.eq(ua.exp + ub.exp),
                sign.eq(ua.sign ^ ub.sign),
                inf.eq(ua.is_inf | ub.is_inf),
                nan.eq(ua.is_nan | ub.is_nan | (ua.is_inf & ub.is_zero) | (ua.is_zero & ub.is_inf)),
            ]
        with m.Elif(self.step):
            m.d.sync += [acc.eq((acc << bits) + sig_a * shift_b[width - bits :]), shift_b.eq(shift_b << bits)]
        m.d.comb += [
            self.raw.sig.eq(acc),
            self.raw.exp.eq(exp),
            self.raw.sign.eq(sign),
            self.raw.nan.eq(nan),
            self.raw.inf.eq(inf),
        ]
        return m


class Packer(wiring.Component):
    """The hold bank and its shared packer. Members: ``move`` In — latch every lane's ``raw`` In (array of
    :func:`raw_layout`); ``lane`` In — the lane to pack; ``p`` Out(FP32) — its packed product
    (combinational from the hold bank)."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        super().__init__(
            {
                "move": In(1),
                "raw": In(data.ArrayLayout(raw_layout(), lanes)),
                "lane": In(range(lanes)),
                "p": Out(ACC_BITS),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        hold = Signal(data.ArrayLayout(raw_layout(), self.lanes))
        with m.If(self.move):
            m.d.sync += hold.eq(self.raw)
        r = hold[self.lane]
        m.d.comb += self.p.eq(special(FP32, r.nan, r.inf, r.sign, round_pack(m, r.sign, r.sig, r.exp, 0, FP32, "pack")))
        return m


class BitSerialMul(wiring.Component):
    """Members: ``i`` In(stream of {a, b: lanes FP16}) — weights and activations; ``o`` Out(stream of {p:
    FP32, lane}) — their products, one lane per item, lane 0 first."""

    def __init__(self, lanes: int = MUL_LANES, serial_bits: int = SERIAL_BITS):
        Gemv(lanes=lanes, serial_bits=serial_bits)  # checks both
        self.lanes, self.serial_bits = lanes, serial_bits
        super().__init__(
            {"i": In(stream.Signature(operand_layout(lanes))), "o": Out(stream.Signature(out_layout(lanes)))}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        steps = serial_steps(self.serial_bits)
        left = Signal(range(steps + 1))  # shift-add steps still to run
        fin = Signal()  # the accumulators hold finished products not yet moved to the hold bank
        lane = Signal(range(self.lanes))  # the hold bank lane being offered (while o.valid)
        taken = self.o.valid & self.o.ready
        drained = ~self.o.valid | (taken & (lane == self.lanes - 1))
        move = fin & drained
        load = self.i.valid & self.i.ready
        m.d.comb += self.i.ready.eq((left == 0) & (~fin | move))
        with m.If(load):
            m.d.sync += left.eq(steps)
        with m.Elif(left != 0):
            m.d.sync += left.eq(left - 1)
        with m.If(left == 1):
            m.d.sync += fin.eq(1)
        with m.Elif(move):
            m.d.sync += fin.eq(0)
        with m.If(taken):
            m.d.sync += lane.eq(lane + 1)
            with m.If(lane == self.lanes - 1):
                m.d.sync += [self.o.valid.eq(0), lane.eq(0)]
        with m.If(move):
            m.d.sync += [self.o.valid.eq(1), lane.eq(0)]
        m.submodules.packer = packer = Packer(self.lanes)
        m.d.comb += [
            packer.move.eq(move),
            packer.lane.eq(lane),
            self.o.payload.p.eq(packer.p),
            self.o.payload.lane.eq(lane),
        ]
        for t in range(self.lanes):
            m.submodules[f"lane{t}"] = sl = SerialLane(self.serial_bits)
            m.d.comb += [
                sl.load.eq(load),
                sl.a.eq(self.i.payload.a[t]),
                sl.b.eq(self.i.payload.b[t]),
                sl.step.eq(left != 0),
                packer.raw[t].eq(sl.raw),
            ]
        return m
