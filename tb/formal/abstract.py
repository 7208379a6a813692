"""Data abstraction for control proofs: the FP datapath functions of ``hw.arith`` replaced by free values
that pass through the same number of pipeline stages under the same enable.

Every ``fp_add`` / ``fp_mul`` / ``fp_exp`` / ``fp_recip`` / ``fp_max`` becomes a free input delayed
``LATENCY`` stages under the unit's enable: every valid, ready and stall stays as in the unit, and the model
checker chooses the data. The real datapath is one choice of the free values (its result entering the same
stages), so every trace of the unit is a trace of the abstraction: a property that holds here holds for
the unit (sound); a counterexample may be spurious (a value the arithmetic cannot produce) and is then to
be read against the unit. Yosys and the solver then see the control only, which is what lets the stream
contract of the largest units reach a transaction. The arithmetic has its own proofs (tb/arith).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from amaranth.hdl import Fragment, Module, Signal, Value

from golden.fp import FloatFormat
from hw.arith import fpadd, fpexp, fpmul, fprecip, maxtree
from hw.pipeline import delay

MAX_LATENCY = maxtree.cycle_model(2).latency  # one comparator


def _free(free: list[Signal], m: Module, en: Value, fmt: FloatFormat, latency: int, name: str) -> Value:
    value = Signal(fmt.width, name=f"{name}_free")
    free.append(value)
    return delay(m, en, value, latency, f"{name}_abs")


@contextmanager
def free_arithmetic() -> Iterator[list[Signal]]:
    """While active, units elaborated get free values for their FP arithmetic; yields the list the free
    inputs are appended to (the ports to give the model checker). A function imported by name into an
    ``hw`` module (``from hw.arith.maxtree import fp_max``) is replaced there too."""
    free: list[Signal] = []

    def add(m, en, a, b, fmt, name="add"):
        return _free(free, m, en, fmt, fpadd.LATENCY, name)

    def mul(m, en, a, b, fmt_in, fmt_out, name="mul"):
        return _free(free, m, en, fmt_out, fpmul.LATENCY, name)

    def exp(m, en, x, fmt, name="exp"):
        return _free(free, m, en, fmt, fpexp.LATENCY, name)

    def recip(m, en, x, fmt, name="recip"):
        return _free(free, m, en, fmt, fprecip.LATENCY, name)

    def fmax(m, en, a, b, fmt, name="max"):
        return _free(free, m, en, fmt, MAX_LATENCY, name)

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
