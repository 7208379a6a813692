"""What the shared stream testbench (tb/stream_tb.py) needs to know about a unit: a :class:`StreamCase`.

Each unit family's ``tb/<family>/cases.py`` defines ``case(spec) -> StreamCase`` for its specs; the family
is the package under ``hw`` that holds the spec's component (``hw.l3.bank_pu`` -> ``l3``).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from hw.cycles import CycleModel
from tb.runner import TbSpec
from tb.streams import pack

Txn = Any  # a family's transaction description


@dataclass
class StreamCase:
    """``items(txn)``: the input payloads (dicts for struct layouts, ints otherwise); ``golden(txn)``: the
    output payload bits golden says they produce; ``random(rng)``: a seeded random transaction;
    ``directed``: edge cases; ``cycle_model``: latency (last input of a transaction accepted -> its last
    output accepted) and II per input item for back-to-back transactions; ``txn_cycles(txn)``: cycles a
    lone transaction takes from its first input accepted to its last output accepted (default: latency
    plus (items - 1) x II); ``timing(rng)``: the transactions the cycle test streams back to back (default:
    ``random``; a unit whose odd transactions add output items gives regular ones here);
    ``ii_per``: "item" (II between input items; back-to-back transactions span
    ``cycle_model.cycles(items)``) or "txn" (for units that take one transaction at a time: II between
    transactions' first items, each starting the cycle after the previous one's last output);
    ``extra``: figures for the characterization record;
    ``probe(rng)`` and ``measure(dut, txn)``: a further lone transaction whose cycles are asserted, after
    which ``measure`` reads (and checks) the unit's performance counters for the record; ``max_items``: a
    cap on each random stream's input items (test_vectors', the reset test's, the pause patterns', test_cycles'
    stressed record) for wide units whose item holds many values; ``timed``: further transactions (error
    paths) whose lone cycles test_cycles asserts against ``txn_cycles``."""

    golden: Callable[[Txn], list[int]]
    random: Callable[[random.Random], Txn]
    directed: list
    cycle_model: CycleModel
    items: Callable[[Txn], list] = lambda t: [t]
    lone_cycles: Callable[[Txn], int] | None = None
    timing: Callable[[random.Random], Txn] | None = None
    ii_per: str = "item"
    extra: dict = field(default_factory=dict)
    burst_txns: int = 64  # transactions back to back in the II measurement
    probe: Callable[[random.Random], Txn] | None = None
    measure: Callable[[Any, Txn], dict] | None = None
    max_items: int | None = None
    timed: list[Txn] = field(default_factory=list)

    def burst_cycles(self, txns: list) -> int:
        """The span of back-to-back transactions, first input accepted to last output accepted."""
        if self.ii_per == "txn":
            return sum(self.txn_cycles(t) for t in txns) + len(txns) - 1
        return int(self.cycle_model.cycles(sum(len(self.items(t)) for t in txns)))

    def timing_txn(self, rng: random.Random) -> Txn:
        return (self.timing or self.random)(rng)

    def txn_cycles(self, txn: Txn) -> int:
        if self.lone_cycles is not None:
            return self.lone_cycles(txn)
        return int(self.cycle_model.cycles(len(self.items(txn))))


# --- command-stream units (Hermes GEMV, Duplex GEMM module): one DESC item, operand items (X), weight items
# (W), the final item carrying ``last``; a flagged transaction is consumed to its last item and answered by
# one error item. A transaction is {"items": [(op, data, last), ...], "shape": descriptor fields or None}.


def malformed_items(rng: random.Random, items: list, op: type[IntEnum], drop: bool) -> dict:
    """A MALFORMED transaction from a valid one: an item lost (``drop``; never the final one), or the first
    item's op wrong."""
    items = list(items)
    if drop:
        del items[rng.randrange(1, len(items) - 1) if len(items) > 2 else 0]
    else:
        items[0] = (op.X, *items[0][1:])
    return {"items": items, "shape": None}


def desc_items(rng: random.Random, desc: int, op: type[IntEnum]) -> dict:
    """A transaction whose descriptor ``desc`` the unit flags: DESC, then 0-3 random X items."""
    items = [(op.DESC, desc, 0), *((op.X, rng.getrandbits(16), 0) for _ in range(rng.randint(0, 3)))]
    items[-1] = (*items[-1][:2], 1)
    return {"items": items, "shape": None}


def command_case(
    valid: Callable[[random.Random], dict],
    flagged: Callable[[random.Random], dict],
    run: Callable[[list], list],
    layout,
    txn_cycles: Callable[..., int],
    error_cycles: Callable[[int], int],
    directed: list,
    cycle_model: CycleModel,
    **kw: Any,
) -> StreamCase:
    """A command-stream unit's case: random transactions (12% flagged), ``run(items)`` the golden's
    (y, last, error) outputs packed in ``layout``; a lone transaction's cycles ``txn_cycles(*shape)``, a
    flagged one's ``error_cycles(items)``; ``kw``: the rest of :class:`StreamCase`."""

    def rand(rng: random.Random) -> dict:
        return flagged(rng) if rng.random() < 0.12 else valid(rng)

    def items(t: dict) -> list[dict]:
        return [{"op": int(op), "data": d, "last": last} for op, d, last in t["items"]]

    def golden(t: dict) -> list[int]:
        return [pack(layout, {"y": y, "last": last, "error": err}) for y, last, err in run(t["items"])]

    def lone(t: dict) -> int:
        return error_cycles(len(t["items"])) if t["shape"] is None else txn_cycles(*t["shape"])

    return StreamCase(golden, rand, directed, cycle_model, items, lone_cycles=lone, ii_per="txn", burst_txns=8, **kw)


def load_case(spec: TbSpec) -> StreamCase:
    return importlib.import_module(f"tb.{spec.case_family}.cases").case(spec)
