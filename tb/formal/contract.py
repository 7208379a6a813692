"""The stream contract, one helper for every unit with ``amaranth.lib.stream`` ports.

Assumed of the environment on every input stream, asserted of the unit on every output stream:

* valid, once high, stays high with its payload unchanged until ready (the stream rule of
  ``amaranth.lib.stream``);
* the cycle after a reset, with no input valid, no output is valid (reset mid-transaction returns to idle);
* no output beat before an input beat was accepted since the last reset;
* bounded response: with every input valid and every output ready, some handshake happens at least every
  ``response`` cycles (the cycle model's bound: no state stalls forever).

Reset is a free input: the checker may reset the unit at any cycle (it must at the first). The recording
registers live in a reset-less ``fv`` domain on the same clock so a reset does not erase what they saw.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass

from amaranth.hdl import (
    Assert,
    Assume,
    Cat,
    ClockDomain,
    ClockSignal,
    Cover,
    Fragment,
    Module,
    ResetSignal,
    Signal,
    Value,
)
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In

from tb.formal.abstract import elaborate, free_arithmetic
from tb.formal.sby import FormalSpec
from tb.runner import TbSpec


@dataclass(frozen=True)
class StreamPort:
    name: str
    port: object  # the stream interface: valid, ready, payload
    inbound: bool


def stream_ports(dut: wiring.Component) -> list[StreamPort]:
    """The unit's top-level stream members."""
    return [
        StreamPort(name, getattr(dut, name), member.flow == In)
        for name, member in dut.signature.members.items()
        if member.is_signature and isinstance(member.signature, stream.Signature)
    ]


def ports(dut: wiring.Component) -> list[Value]:
    """Every port signal of ``dut``: the undriven inputs are the model checker's free inputs."""
    return [Value.cast(value) for _path, _flow, value in dut.signature.flatten(dut)]


def _any(values: list[Value]) -> Value:
    return Cat(*values).any() if values else Value.cast(0)


def _all(values: list[Value]) -> Value:
    return Cat(*values).all() if values else Value.cast(1)


def recording_domain(m: Module) -> Signal:
    """A reset-less ``fv`` domain on the unit's clock for what a reset must not erase; returns ``started``,
    low only in the first cycle."""
    m.domains.fv = ClockDomain(reset_less=True)
    m.d.comb += ClockSignal("fv").eq(ClockSignal())
    started = Signal()
    m.d.fv += started.eq(1)
    return started


def _held(m: Module, started: Value, past_rst: Value, p: StreamPort) -> None:
    """valid stays high and payload stable until ready: assumed of inputs, asserted of outputs."""
    payload = Value.cast(p.port.payload)
    pv, pr = Signal(name=f"{p.name}_past_valid"), Signal(name=f"{p.name}_past_ready")
    pp = Signal(len(payload), name=f"{p.name}_past_payload")
    m.d.fv += [pv.eq(p.port.valid), pr.eq(p.port.ready), pp.eq(payload)]
    check = Assume if p.inbound else Assert
    with m.If(started & ~past_rst & pv & ~pr):
        m.d.comb += check(p.port.valid & (payload == pp), f"{p.name}_held")


def stream_contract(dut: wiring.Component, response: int) -> Module:
    """A module holding ``dut`` (as ``dut``) and the contract's properties; ``response``: the most cycles
    with every input valid, every output ready and no handshake (the unit's cycle model bound)."""
    m = Module()
    m.submodules.dut = dut
    started = recording_domain(m)
    sp = stream_ports(dut)
    ins, outs = [p.port for p in sp if p.inbound], [p.port for p in sp if not p.inbound]
    if not ins or not outs:
        raise ValueError(f"dut: {type(dut).__name__} needs input and output streams for the contract")
    rst, past_rst = ResetSignal(), Signal()
    m.d.fv += past_rst.eq(rst)
    with m.If(~started):
        m.d.comb += Assume(rst, "reset_first")
    for p in sp:
        _held(m, started, past_rst, p)
    in_valid, out_valid = _any([s.valid for s in ins]), _any([s.valid for s in outs])
    accepted = _any([s.valid & s.ready for s in ins])
    with m.If(past_rst & ~in_valid):
        m.d.comb += Assert(~out_valid, "idle_after_reset")
    seen = Signal()  # an input beat accepted since the last reset (reset with the unit)
    m.d.sync += seen.eq(seen | accepted)
    with m.If(~seen & ~in_valid):
        m.d.comb += Assert(~out_valid, "no_output_without_input")
    stall = Signal(range(response + 2))
    handshake = _any([s.valid & s.ready for s in ins + outs])
    with m.If(_all([s.valid for s in ins]) & _all([s.ready for s in outs]) & ~handshake):
        m.d.sync += stall.eq(stall + 1)
    with m.Else():
        m.d.sync += stall.eq(0)
    m.d.comb += Assert(stall <= response, "bounded_response")
    m.d.comb += Cover(started & ~rst & _any([s.valid & s.ready for s in outs]), "output_beat")
    return m


def contract_spec(
    tb: TbSpec,
    depth: int | None = None,
    response: int | None = None,
    mode: str = "bmc",
    slow: bool = True,
    timeout: int = 40,
    abstract: bool = False,
    functional: bool = True,
    params: dict | None = None,
    engine: str = "smtbmc",
) -> FormalSpec:
    """The stream contract of a testbench's unit at the testbench's (reduced) parameters. ``response``
    defaults to the unit's cycle model: latency + II (an accepted item's result leaves within its latency,
    and the next input is taken within an II). ``depth`` defaults to reset + that bound + one beat, so the
    check spans an item accepted, its result leaving and the next item accepted. ``abstract``: the unit's FP
    arithmetic replaced by free values through its pipeline stages (tb/formal/abstract.py: for units whose
    full datapath is past Yosys and the solver in the budget; the contract is about control), as functions
    of their operands unless not ``functional``. ``params``: a formal size, overriding testbench parameters
    (the same control code with shorter loops, so the check spans a transaction: the property module says
    why the contract there is the unit's). ``engine``: the check's (tb/formal/sby.py)."""
    mod_name, cls = tb.component.split(":")
    mod = importlib.import_module(mod_name)
    params = {**tb.params, **(params or {})}
    model = mod.cycle_model(**params)
    given = response is not None
    response = response if response is not None else model.latency + math.ceil(model.ii)
    depth = depth if depth is not None else response + 3

    def build() -> tuple[Module | Fragment, list[Value]]:  # the module looked up now: a mutant test swaps it
        unit = getattr(importlib.import_module(mod_name), cls)
        if not abstract:
            dut = unit(**params)
            return stream_contract(dut, response), ports(dut)
        with free_arithmetic(functional) as free:
            dut = unit(**params)
            top = elaborate(stream_contract(dut, response))
        return top, [*ports(dut), *free]

    changed = {k: v for k, v in params.items() if tb.params.get(k) != v}
    size = ",".join(f"{k}={v}" for k, v in changed.items())
    bound = "" if given else f" (cycle model latency {model.latency} + II {model.ii:g})"
    at = f" at {size}" if size else ""
    why = (
        f"{depth} cycles{at}: the reset, then at least one item accepted and its result out within the response "
        f"bound {response}{bound}"
    )
    name = f"contract-{tb.tag}{'-abstract' if abstract else ''}"
    return FormalSpec(name, tb.unit, build, depth, why, mode, slow, timeout, size, engine)
