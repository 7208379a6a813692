"""Data abstraction for control proofs: the FP datapath functions of ``hw.arith`` replaced by free values
that pass through the same number of pipeline stages under the same enable.

Every ``fp_add`` / ``fp_mul`` / ``fp_exp`` / ``fp_recip`` / ``fp_max`` becomes a free input delayed
``LATENCY`` stages under the unit's enable (unchanged while its operands are: it stands for a function):
every valid, ready and stall stays as in the unit, and the model checker chooses the data. The real
datapath is one choice of the free values (its result entering the same stages), so every trace of the
unit is a trace of the abstraction: a property that holds here holds for the unit (sound); a
counterexample may be spurious (a value the arithmetic cannot produce) and is then to be read against the
unit. Yosys and the solver then see the control only, which is what lets the stream contract of the
largest units reach a transaction. The arithmetic has its own proofs (tb/arith). A value free every cycle
(not ``functional``) needs no ``LATENCY`` stages: one stage, loaded under the enable and held otherwise,
shows every sequence the stages can (any value after an enabled cycle, the last one held after a stall,
zero after reset), in fewer flip-flops.

``latency`` (:func:`fp_latency`): a formal instance with shorter FP pipelines, as the DECA PE's has a smaller
``tile``: every FP latency of ``hw.arith.cycles`` (add, multiply, exp, reciprocal; the comparator's one
register stays) set to it, for the stand-ins' stages and for every reader of those latencies (the fp
modules' ``LATENCY``, names imported from ``hw.arith.cycles``, the L3 depths that ``hw.l3.cycles`` computes
from them when called): only delay lines shorten; every handshake, stall, buffer and check is the unit's,
and its cycle model replays the same instance. Depths a module computes at import from these latencies
(``hw.hermes.cycles``, ``hw.duplex.cycles``, ``hw.common.cycles``, ``hw.deca.scale``) do not follow it:
those units' checks keep the full latencies.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from amaranth.hdl import Cat, Fragment, Module, Mux, Signal, Value

from golden.fp import FloatFormat
from hw.arith import cycles, fpadd, fpexp, fpmac, fpmul, fprecip, maxtree
from hw.pipeline import delay

MAX_LATENCY = maxtree.cycle_model(2).latency  # one comparator
MIN_LATENCY = 1  # the L3 adder unit's stall-all pipeline (hw.pipeline.PipelineCtl) needs a stage
# each FP pipeline's latency in hw.arith.cycles and the fp module that re-exports it as LATENCY
_PIPELINES = {"FPMUL": fpmul, "FPADD": fpadd, "FPEXP": fpexp, "FPRECIP": fprecip}


@contextmanager
def fp_latency(latency: int | None) -> Iterator[None]:
    """While active, every FP pipeline of hw.arith.cycles has ``latency`` stages (a multiply-add two of
    them) for whatever reads it: hw.arith.cycles, the fp modules' ``LATENCY`` and any ``hw`` module that
    imported a latency by name. None: the units' own (nothing changes)."""
    if latency is None:
        yield
        return
    if not isinstance(latency, int) or latency < MIN_LATENCY:
        raise ValueError(f"latency: {latency!r} not allowed; an int >= {MIN_LATENCY}")
    values = {**dict.fromkeys(_PIPELINES, latency), "FPMAC": 2 * latency}
    homes = {**_PIPELINES, "FPMAC": fpmac}
    patches = [mock.patch.object(homes[name], "LATENCY", v) for name, v in values.items()]
    patches += [
        mock.patch.object(module, name, v)
        for mod_name, module in list(sys.modules.items())
        if mod_name.startswith("hw.")
        for name, v in values.items()
        if getattr(module, name, None) == getattr(cycles, name)
    ]
    for p in patches:
        p.start()
    try:
        yield
    finally:
        for p in reversed(patches):
            p.stop()


def _free(
    free: list[Signal], functional: bool, m: Module, en: Value, fmt: FloatFormat, latency: int, name: str, *args: Value
) -> Value:
    """A free value for ``args``' result, then ``latency`` stages under ``en``. ``functional``: the previous
    cycle's value again while ``args`` are unchanged (as any function: a unit that holds its operands holds
    its result)."""
    value, last = Signal(fmt.width, name=f"{name}_free"), Signal(fmt.width, name=f"{name}_last")
    free.append(value)
    if not functional:  # one stage holding the free value under a stall has every trace that `latency` have
        return delay(m, en, value, min(latency, 1), f"{name}_abs")
    args_v = Cat(*args)
    last_args, have = Signal(len(args_v), name=f"{name}_last_args"), Signal(name=f"{name}_have")
    result = Mux(have & (args_v == last_args), last, value)
    m.d.sync += [last.eq(result), last_args.eq(args_v), have.eq(1)]
    return delay(m, en, result, latency, f"{name}_abs")


@contextmanager
def free_arithmetic(functional: bool = True, latency: int | None = None) -> Iterator[list[Signal]]:
    """While active, units elaborated get free values for their FP arithmetic; yields the list the free
    inputs are appended to (the ports to give the model checker). A function imported by name into an
    ``hw`` module (``from hw.arith.maxtree import fp_max``) is replaced there too. ``functional=False``: the
    values free every cycle (more traces, so a pass says more, and a smaller model; a unit whose output
    rests on held operands then fails spuriously). ``latency``: FP pipelines of that many stages
    (:func:`fp_latency`); None: the units' own."""
    with fp_latency(latency), _stand_ins(functional) as free:
        yield free


@contextmanager
def _stand_ins(functional: bool) -> Iterator[list[Signal]]:
    """The FP operators of ``hw`` replaced by free values through their (current) latencies."""
    free: list[Signal] = []

    def add(m: Module, en: Value, a: Value, b: Value, fmt: FloatFormat, name: str = "add") -> Value:
        return _free(free, functional, m, en, fmt, fpadd.LATENCY, name, a, b)

    def mul(
        m: Module, en: Value, a: Value, b: Value, fmt_in: FloatFormat, fmt_out: FloatFormat, name: str = "mul"
    ) -> Value:
        return _free(free, functional, m, en, fmt_out, fpmul.LATENCY, name, a, b)

    def exp(m: Module, en: Value, x: Value, fmt: FloatFormat, name: str = "exp") -> Value:
        return _free(free, functional, m, en, fmt, fpexp.LATENCY, name, x)

    def recip(m: Module, en: Value, x: Value, fmt: FloatFormat, name: str = "recip") -> Value:
        return _free(free, functional, m, en, fmt, fprecip.LATENCY, name, x)

    def fmax(m: Module, en: Value, a: Value, b: Value, fmt: FloatFormat, name: str = "max") -> Value:
        return _free(free, functional, m, en, fmt, MAX_LATENCY, name, a, b)

    stand_ins = {
        (fpadd, "fp_add"): add,
        (fpmul, "fp_mul"): mul,
        (fpexp, "fp_exp"): exp,
        (fprecip, "fp_recip"): recip,
        (maxtree, "fp_max"): fmax,
    }
    patches = [
        mock.patch.object(module, fname, stand_in)
        for (home, fname), stand_in in stand_ins.items()
        for name, module in list(sys.modules.items())
        if name.startswith("hw.") and getattr(module, fname, None) is getattr(home, fname)
    ]
    for p in patches:
        p.start()
    try:
        yield free
    finally:
        for p in reversed(patches):
            p.stop()


def elaborate(top) -> Fragment:
    """``top`` elaborated now (Amaranth elaborates lazily, at conversion): inside :func:`free_arithmetic`."""
    return Fragment.get(top, None)
