"""The stream contract, one helper for every unit with ``amaranth.lib.stream`` ports.

Assumed of the environment on every input stream, asserted of the unit on every output stream:

* valid, once high, stays high with its payload unchanged until ready (the stream rule of
  ``amaranth.lib.stream``);
* the cycle after a reset, with no input valid, no output is valid (reset mid-transaction returns to idle);
* no output beat before an input beat was accepted since the last reset;
* bounded response: with every input valid and every output ready, some handshake happens at least every
  ``response`` cycles (the cycle model's bound: no state stalls forever).

:func:`behaves` states these of a unit with Assert, or with Assume of a unit a proof replaces by its
contract (assume-guarantee: the Hermes core's GEMV unit and the L3 rank's softmax unit, each replaced by
:class:`Guaranteed`); :func:`answers` adds what a router in front of a unit needs (every
transaction answered, an idle unit taking input), :func:`owes` what a unit that counts a sub-unit's replies
needs (one reply per request, all of them within a bound).

Reset is a free input: the checker may reset the unit at any cycle (it must at the first). The recording
registers live in a reset-less ``fv`` domain on the same clock so a reset does not erase what they saw.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
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
    Mux,
    ResetSignal,
    Signal,
    Value,
)
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In

from tb.formal.abstract import elaborate, fp_latency, free_arithmetic
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


def held(m: Module, started: Value, past_rst: Value, name: str, port, check) -> None:
    """valid stays high and payload stable until ready: ``check`` is Assume of inputs, Assert of outputs."""
    payload = Value.cast(port.payload)
    pv, pr = Signal(name=f"{name}_past_valid"), Signal(name=f"{name}_past_ready")
    pp = Signal(len(payload), name=f"{name}_past_payload")
    m.d.fv += [pv.eq(port.valid), pr.eq(port.ready), pp.eq(payload)]
    with m.If(started & ~past_rst & pv & ~pr):
        m.d.comb += check(port.valid & (payload == pp), f"{name}_held")


def behaves(
    m: Module, started: Value, past_rst: Value, ins: list, outs: list, response: int, check, prefix: str = ""
) -> None:
    """What the contract asks of a unit with input streams ``ins`` and output streams ``outs``: held outputs,
    idle after a reset, no output before an input, bounded response. ``check``: Assert of the unit under
    proof, Assume of a unit a proof replaces by its contract (assume-guarantee)."""
    for k, s in enumerate(outs):
        held(m, started, past_rst, f"{prefix}out{k}", s, check)
    in_valid, out_valid = _any([s.valid for s in ins]), _any([s.valid for s in outs])
    accepted = _any([s.valid & s.ready for s in ins])
    with m.If(past_rst & ~in_valid):
        m.d.comb += check(~out_valid, f"{prefix}idle_after_reset")
    seen = Signal(name=f"{prefix}seen")  # an input beat accepted since the last reset (reset with the unit)
    m.d.sync += seen.eq(seen | accepted)
    with m.If(~seen & ~in_valid):
        m.d.comb += check(~out_valid, f"{prefix}no_output_without_input")
    stall = Signal(range(response + 2), name=f"{prefix}stall")
    handshake = _any([s.valid & s.ready for s in ins + outs])
    with m.If(_all([s.valid for s in ins]) & _all([s.ready for s in outs]) & ~handshake):
        m.d.sync += stall.eq(stall + 1)
    with m.Else():
        m.d.sync += stall.eq(0)
    m.d.comb += check(stall <= response, f"{prefix}bounded_response")


def answers(m: Module, i, o, answer: int, accept: int, check, prefix: str = "") -> None:
    """Every transaction answered, an idle unit ready (what a router in front of the unit needs: the Hermes
    core): after an input beat with ``last``, an output beat with ``last`` within ``answer`` cycles of a
    ready sink; with no transaction open (no input since the last ``last`` output), a valid input taken
    within ``accept`` cycles, ready sink or not; no ``last`` output before its transaction's ``last`` input."""
    pending, open_ = Signal(name=f"{prefix}pending"), Signal(name=f"{prefix}open")  # reset with the unit
    owed, waited = Signal(range(answer + 2), name=f"{prefix}owed"), Signal(range(accept + 2), name=f"{prefix}waited")
    took_in, took_last = i.valid & i.ready, o.valid & o.ready & o.payload.last
    with m.If(took_last):
        m.d.sync += [pending.eq(0), open_.eq(0)]
    with m.If(took_in):
        m.d.sync += open_.eq(1)
        with m.If(i.payload.last):
            m.d.sync += pending.eq(1)
    m.d.sync += owed.eq(Mux(pending & ~took_last, owed + o.ready, 0))
    m.d.sync += waited.eq(Mux(~open_ & i.valid & ~i.ready, waited + 1, 0))
    m.d.comb += [
        check(owed <= answer, f"{prefix}answered"),
        check(waited <= accept, f"{prefix}idle_takes_input"),
        check(~took_last | pending | (took_in & i.payload.last), f"{prefix}last_after_last"),
    ]


def owes(
    m: Module, took: Value, gave: Value, closing: Value, bound: int, check, prefix: str = "", ready: Value = 1
) -> tuple[Signal, Signal]:
    """One reply per request: a reply (``gave``) only while requests (``took``) are unanswered, and every one
    answered within ``bound`` cycles of a ``ready`` sink after the latest ``closing`` request (after which no
    reply is owed later). Returns the count of unanswered requests and whether a closing one is among them."""
    owed = Signal(8, name=f"{prefix}owed_replies")  # reset with the unit; 8 bits: far past any formal depth
    closed = Signal(name=f"{prefix}closed")
    waited = Signal(range(bound + 2), name=f"{prefix}waited_replies")
    m.d.sync += owed.eq(owed + took - gave)
    with m.If(closing):
        m.d.sync += closed.eq(1)
    with m.Elif(owed == 0):
        m.d.sync += closed.eq(0)
    m.d.sync += waited.eq(Mux(closed & (owed != 0) & ~closing, waited + ready, 0))
    m.d.comb += [check(~gave | (owed != 0), f"{prefix}reply_owed"), check(waited <= bound, f"{prefix}replied")]
    return owed, closed


class Guaranteed(wiring.Component):
    """A unit replaced by its contract (assume-guarantee): the same ports, every one it drives a free input
    of the model checker, appended to ``free``; the proof's assumptions constrain them."""

    def __init__(self, signature: wiring.Signature, free: list[Value]):
        self.free = free
        super().__init__(signature)

    def elaborate(self, platform) -> Module:
        m = Module()
        for _path, member, value in self.signature.flatten(self):
            if member.flow == wiring.Out:
                value = Value.cast(value)
                free = Signal(len(value), name="guaranteed_free")
                self.free.append(free)
                m.d.comb += value.eq(free)
        return m


def stream_contract(
    dut: wiring.Component,
    response: int,
    done: Callable[[wiring.Component], Value] | None = None,
    extra: Callable[[Module, Value, Value], None] | None = None,
) -> Module:
    """A module holding ``dut`` (as ``dut``) and the contract's properties; ``response``: the most cycles
    with every input valid, every output ready and no handshake (the unit's cycle model bound); ``done``:
    the unit's last output beat of a transaction that ran (covered: the depth spans a whole one); ``extra``:
    more properties, given the module, ``started`` and the reset's past value."""
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
        if p.inbound:
            held(m, started, past_rst, p.name, p.port, Assume)
    behaves(m, started, past_rst, ins, outs, response, Assert)
    if extra is not None:
        extra(m, started, past_rst)
    m.d.comb += Cover(started & ~rst & _any([s.valid & s.ready for s in outs]), "output_beat")
    if done is not None:
        m.d.comb += Cover(started & ~rst & done(dut), "transaction_done")
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
    why: str | None = None,
    done: Callable[[wiring.Component], Value] | None = None,
    extra: Callable[[wiring.Component], Callable[[Module, Value, Value], None]] | None = None,
    engine: str = "smtbmc",
    latency: int | None = None,
) -> FormalSpec:
    """The stream contract of a testbench's unit at the testbench's (reduced) parameters. ``response``
    defaults to the unit's cycle model: latency + II (an accepted item's result leaves within its latency,
    and the next input is taken within an II). ``depth`` defaults to reset + that bound + one beat, so the
    check spans an item accepted, its result leaving and the next item accepted. ``abstract``: the unit's FP
    arithmetic replaced by free values through its pipeline stages (tb/formal/abstract.py: for units whose
    full datapath is past Yosys and the solver in the budget; the contract is about control), as functions
    of their operands unless not ``functional``. ``params``: the unit built at a smaller formal size than its
    testbench's (the same code, shorter loops; reported under the testbench's row); ``why`` then says why
    ``depth`` spans a transaction there, and ``done`` (covered) marks its end.
    ``extra(dut)``: more properties of the unit built (stream_contract's ``extra``). ``engine``: the check's
    (tb/formal/sby.py). ``latency`` (``abstract`` only): FP pipelines of that many stages, for the stand-ins
    and the cycle model alike (tb.formal.abstract.fp_latency); recorded in the size."""
    if latency is not None and not abstract:
        raise ValueError("latency: only with abstract=True (the real FP units' stages are fixed)")
    mod_name, cls = tb.component.split(":")
    mod = importlib.import_module(mod_name)
    params = params if params is not None else tb.params
    with fp_latency(latency):
        model = mod.cycle_model(**params)
    given = response is not None
    response = response if response is not None else model.latency + math.ceil(model.ii)
    depth = depth if depth is not None else response + 3

    def build() -> tuple[Module | Fragment, list[Value]]:  # the module looked up now: a mutant test swaps it
        unit = getattr(importlib.import_module(mod_name), cls)
        if not abstract:
            dut = unit(**params)
            return stream_contract(dut, response, done, extra and extra(dut)), ports(dut)
        with free_arithmetic(functional, latency) as free:
            dut = unit(**params)
            top = elaborate(stream_contract(dut, response, done, extra and extra(dut)))
        return top, [*ports(dut), *free]

    sized = {k: v for k, v in params.items() if tb.params.get(k) != v}
    size = ",".join(f"{k}={v}" for k, v in {**sized, **({"fp_latency": latency} if latency else {})}.items())
    bound = "" if given else f" (cycle model latency {model.latency} + II {model.ii:g})"
    why = why or (
        f"{depth} cycles{' at ' + size if size else ''}: the reset, then at least one item accepted and its "
        f"result out within the response bound {response}{bound}"
    )
    name = f"contract-{tb.tag}{'-abstract' if abstract else ''}"
    return FormalSpec(name, tb.unit, build, depth, why, mode, slow, timeout, size, engine)
