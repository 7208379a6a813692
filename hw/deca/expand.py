"""DECA expansion stage (DECA §6.1 item 3): POPCNT + parallel prefix sum produce the expansion index of
every output lane; a triangular crossbar places the window's dense-packed values at the lanes whose
mask bit is 1 and inserts +0 elsewhere. Combinational; the PE registers the result in DD.
"""

from __future__ import annotations

from amaranth.hdl import Array, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.deca_spec import W


def prefix_sum(m: Module, bits: Value, name: str = "psum") -> list[Signal]:
    """Exclusive prefix popcount of ``bits`` (Hillis-Steele scan, log2(W) adder levels):
    entry i = number of ones in bits[0:i]."""
    w = len(bits)
    level = [bits[i] for i in range(w)]
    dist = 1
    while dist < w:
        nxt = []
        for i in range(w):
            s = Signal(range(w + 1), name=f"{name}_d{dist}_{i}")
            m.d.comb += s.eq(level[i] + level[i - dist] if i >= dist else level[i])
            nxt.append(s)
        level, dist = nxt, dist * 2
    return [Value.cast(0)] + level[:-1]


def popcount(m: Module, bits: Value, name: str = "popcnt") -> Signal:
    total = Signal(range(len(bits) + 1), name=name)
    m.d.comb += total.eq(sum(bits[i] for i in range(len(bits))))
    return total


class Expand(wiring.Component):
    """sd (window values, dense-packed) + mask -> dd (W lanes with zeros inserted)."""

    def __init__(self, w: int = W):
        self.w = w
        super().__init__({"sd": In(data.ArrayLayout(16, w)), "mask": In(w), "dd": Out(data.ArrayLayout(16, w))})

    def elaborate(self, platform) -> Module:
        m = Module()
        idx = prefix_sum(m, self.mask)
        for i in range(self.w):
            # lane i can only take window value 0..i: the crossbar is triangular
            src = Array(self.sd[k] for k in range(i + 1))[idx[i]] if i else self.sd[0]
            m.d.comb += self.dd[i].eq(Mux(self.mask[i], src, 0))
        return m
