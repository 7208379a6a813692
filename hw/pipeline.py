"""Stall-all pipeline control shared by every pipelined membound unit.

A unit's datapath is a chain of register stages that all advance together when ``en`` is high.
``en = ~out.valid | out.ready``: the pipeline moves whenever its last stage is empty or being drained,
so with a ready sink it accepts one input per cycle (II = 1) and an output appears ``depth`` cycles after
its input was accepted (latency = depth). Bubbles travel with the data (valid bits per stage).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Shape, Signal, Value


def stage(m: Module, en: Value, value: Value, name: str | None = None) -> Signal:
    """A pipeline register that loads ``value`` when ``en``."""
    reg = Signal(Shape.cast(value.shape()), name=name)
    with m.If(en):
        m.d.sync += reg.eq(value)
    return reg


def delay(m: Module, en: Value, value: Value, n: int, name: str = "dly") -> Value:
    """``value`` delayed by ``n`` pipeline stages."""
    for i in range(n):
        value = stage(m, en, value, name=f"{name}{i}")
    return value


class PipelineCtl:
    """Valid/ready control for a ``depth``-stage stall-all pipeline between two stream ports."""

    def __init__(self, m: Module, i_stream, o_stream, depth: int):
        if depth < 1:
            raise ValueError(f"depth: {depth} not allowed; must be >= 1")
        self.en = Signal()
        self.busy = Signal()  # an item in some stage
        m.d.comb += [self.en.eq(~o_stream.valid | o_stream.ready), i_stream.ready.eq(self.en)]
        valid, valids = i_stream.valid, []
        for i in range(depth):
            valid = stage(m, self.en, valid, name=f"valid{i}")
            valids.append(valid)
        m.d.comb += [o_stream.valid.eq(valid), self.busy.eq(Cat(*valids).any())]
