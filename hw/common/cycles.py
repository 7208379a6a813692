"""Cycle model of the shared softmax unit (:mod:`hw.common.softmax`), in plain Python.

Three passes over a row of FP16 score beats held in the row buffer: pass 1 the running maximum (a max
tree per beat), pass 2 the exponentials and their sum (adder tree, then a two-way fold and the
reciprocal r), pass 3 the products by r (skipped with deferred normalization, which sends r instead).
The RTL sizes its pipelines from these depths; the testbench asserts :func:`row_cycles` cycle for cycle.
"""

from __future__ import annotations

from hw.arith.cycles import FPADD, FPEXP, FPMUL, FPRECIP

__all__ = [
    "EXP_DEPTH",
    "FOLD_TAIL",
    "READ",
    "check_params",
    "levels",
    "max_beats",
    "out_depth",
    "row_cycles",
    "sum_tail",
    "sum_wait",
]

READ = 1  # the row buffer's synchronous read
EXP_DEPTH = FPADD + FPEXP  # s - M, exp
FOLD_TAIL = 1 + FPADD + FPRECIP  # partial registered, S_0 + S_1, reciprocal


def check_params(lanes: int, buffer_bytes: int) -> None:
    if lanes < 2 or lanes & (lanes - 1) or lanes > 256:
        raise ValueError(f"lanes: {lanes} not allowed; a power of two from 2 to 256")
    if buffer_bytes < 2 * lanes or buffer_bytes % (2 * lanes):
        raise ValueError(f"buffer_bytes: {buffer_bytes} not allowed; a positive multiple of 2 * lanes = {2 * lanes}")


def max_beats(lanes: int, buffer_bytes: int) -> int:
    """Beats of ``lanes`` FP16 scores the row buffer holds: the longest row."""
    return buffer_bytes // (2 * lanes)


def levels(lanes: int) -> int:
    return lanes.bit_length() - 1


def sum_tail(lanes: int) -> int:
    """Cycles after pass 2's last exponentials leave the exp lanes until r is final: adder tree, fold, r."""
    return FPADD * levels(lanes) + FPADD + FOLD_TAIL - 1


def sum_wait(lanes: int) -> int:
    """Cycles from pass 2's last read to r (pass 3's first read): the read, exp lanes and :func:`sum_tail`."""
    return READ + EXP_DEPTH + sum_tail(lanes)


def out_depth() -> int:
    """Pass 3: the read, exp lanes and the multiply by r."""
    return READ + EXP_DEPTH + FPMUL


def row_cycles(beats: int, lanes: int, buffer_bytes: int, normalize: bool = True) -> int:
    """First beat accepted -> last output accepted, for a row of ``beats`` beats offered back to back into
    a ready sink (an over-long row: its error item once its last beat's maximum is in)."""
    check_params(lanes, buffer_bytes)
    if beats > max_beats(lanes, buffer_bytes):
        return beats + levels(lanes)
    two_passes = 2 * beats + levels(lanes) + sum_wait(lanes)  # deferred: r goes out as soon as it is final
    return two_passes + beats + out_depth() - 1 if normalize else two_passes
