"""Cycle models of Hermes' NDP-core units (Hermes §IV-A1), in plain Python: the activation unit
(:mod:`hw.hermes.activation`).

The RTL sizes its pipelines from these depths, the testbench asserts the functions cycle for cycle, and
the system model (``sysmodel/designs/hermes/model.py``) prices a softmax with :func:`act_txn_cycles` without
loading Amaranth.
"""

from __future__ import annotations

from golden.hermes_spec import ACT_BUFFER_BYTES, ACT_LANES, ActOp
from hw.arith.cycles import FPADD, FPMUL
from hw.common import cycles as softmax

__all__ = [
    "ACT_ELEM_LATENCY",
    "ACT_IN_REG",
    "PAPER_RECORDS",
    "UNITS",
    "UNIT_ACTIVATION",
    "UNIT_BITSERIAL",
    "UNIT_CORE",
    "UNIT_GEMV",
    "act_check_params",
    "act_error_cycles",
    "act_max_scores",
    "act_txn_cycles",
]

ACT_ELEM_LATENCY = max(FPADD, FPMUL)  # ReLU, add and scale lanes padded to one depth
ACT_IN_REG = 1  # the input register in front of the softmax unit

# Characterization record keys (``unit`` in sysmodel/data/characterization.json): tb writes, sysmodel reads.
UNIT_BITSERIAL = "hermes_bitserial"
UNIT_GEMV = "hermes_gemv"
UNIT_ACTIVATION = "hermes_activation"
UNIT_CORE = "hermes_core"
UNITS = (UNIT_BITSERIAL, UNIT_GEMV, UNIT_ACTIVATION, UNIT_CORE)
# The paper-size records the System reads (unit -> params): tb's FULL_SPECS measure them, the System's
# ``records=`` requires them and its provenance cites them.
PAPER_RECORDS = {UNIT_GEMV: {}, UNIT_ACTIVATION: {}}  # the units' defaults are the paper's sizes


def act_check_params(lanes: int, buffer_bytes: int) -> None:
    softmax.check_params(lanes, buffer_bytes)


def act_max_scores(lanes: int = ACT_LANES, buffer_bytes: int = ACT_BUFFER_BYTES) -> int:
    return softmax.max_beats(lanes, buffer_bytes) * lanes


def act_txn_cycles(op: int, n: int, lanes: int = ACT_LANES, buffer_bytes: int = ACT_BUFFER_BYTES) -> int:
    """First beat accepted -> last output accepted, for a transaction that runs, into a ready sink."""
    beats = -(-n // lanes)
    if op == ActOp.SOFTMAX:
        return ACT_IN_REG + softmax.row_cycles(beats, lanes, buffer_bytes)
    return beats - 1 + ACT_ELEM_LATENCY


def act_error_cycles(beats: int) -> int:
    """A flagged transaction of ``beats`` beats read back to back (nothing forwarded): its error item
    the cycle after the last."""
    return beats
