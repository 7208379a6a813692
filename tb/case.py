"""What the shared stream testbench (tb/stream_tb.py) needs to know about a unit: a :class:`StreamCase`.

Each unit family's ``tb/<family>/cases.py`` defines ``case(spec) -> StreamCase`` for its specs; the family
is the package under ``hw`` that holds the spec's component (``hw.l3.bank_pu`` -> ``l3``).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hw.cycles import CycleModel
from tb.runner import TbSpec

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
    cap on test_vectors' random input items for wide units whose item holds many values."""

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


def load_case(spec: TbSpec) -> StreamCase:
    family = spec.component.split(":")[0].split(".")[1]
    return importlib.import_module(f"tb.{family}.cases").case(spec)
