"""Cycle models of Duplex's Logic-PIM units (Duplex §IV-D, §VI), in plain Python: the GEMM module
(:mod:`hw.duplex.gemm_module`, and the stack of them), the softmax unit at Duplex's size and the gated
activation.

The RTL sizes its pipelines from these depths, the testbenches assert the functions cycle for cycle, and
the system model (``sysmodel/designs/duplex/model.py``) prices GEMMs and softmax rows with them without loading
Amaranth.
"""

from __future__ import annotations

from golden.duplex_spec import FULL, SOFTMAX_BUFFER_BYTES, SOFTMAX_LANES, Geometry
from hw.arith.cycles import FPADD, FPEXP, FPMUL, FPRECIP
from hw.common import cycles as softmax

__all__ = [
    "ACTIVATION_LATENCY",
    "FLUSH",
    "MAC_DEPTH",
    "PAPER_RECORDS",
    "UNITS",
    "UNIT_ACTIVATION",
    "UNIT_GEMM_MODULE",
    "UNIT_SOFTMAX",
    "UNIT_STACK",
    "gemm_error_cycles",
    "gemm_txn_cycles",
    "softmax_row_cycles",
]

MAC_DEPTH = FPMUL + FPADD  # issue -> accumulator write
FLUSH = MAC_DEPTH + 1  # last issue -> first combine read (the write lands the cycle after)
ACTIVATION_LATENCY = FPEXP + FPADD + FPRECIP + 2 * FPMUL  # exp(-g), 1 + e, 1/(1 + e), g * r, * u

# Characterization record keys (``unit`` in sysmodel/data/characterization.json): tb writes, sysmodel reads.
UNIT_GEMM_MODULE = "duplex_gemm_module"
UNIT_STACK = "duplex_stack"
UNIT_ACTIVATION = "duplex_activation"
UNIT_SOFTMAX = "duplex_softmax_unit"
UNITS = (UNIT_GEMM_MODULE, UNIT_STACK, UNIT_ACTIVATION, UNIT_SOFTMAX)
# The paper-size records the System reads (unit -> params): tb's FULL_SPECS measure them, the System's
# ``records=`` requires them and its provenance cites them.
PAPER_RECORDS = {
    UNIT_GEMM_MODULE: {"rows": FULL.rows, "lanes": FULL.lanes, "buffer_bytes": FULL.buffer_bytes},
    UNIT_SOFTMAX: {"lanes": SOFTMAX_LANES, "buffer_bytes": SOFTMAX_BUFFER_BYTES},
}


def gemm_txn_cycles(m: int, k: int, n: int, g: Geometry = FULL) -> int:
    """First item (DESC) accepted -> last output accepted, for a valid GEMM into a ready sink."""
    groups, blocks = g.groups(n), m // g.rows
    compute, weight_beats = k * groups, k  # per row block; 128 B per cycle = one beat
    return 1 + n * k // g.rows + blocks * (max(compute, weight_beats) + n + FLUSH) + FPADD - 1


def gemm_error_cycles(items: int) -> int:
    """A flagged transaction of ``items`` items read back to back: its error item 2 cycles after the last."""
    return items + FPADD


def softmax_row_cycles(
    beats: int, lanes: int = SOFTMAX_LANES, buffer_bytes: int = SOFTMAX_BUFFER_BYTES, normalize: bool = True
) -> int:
    """The shared softmax unit's row (:func:`hw.common.cycles.row_cycles`) at Duplex's width and buffer."""
    return softmax.row_cycles(beats, lanes, buffer_bytes, normalize)
