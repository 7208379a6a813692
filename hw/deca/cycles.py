"""DECA PE cycle model (DECA §6.1 item 7, §6.2): what the PE's testbench asserts and the system model uses.

A vOp produces W output elements. Its window (Wnd) is the number of stored values it reads: W for a
dense tile, the popcount of its W mask bits for a sparse one. The dequantization stage handles at most
Lq values per cycle, so a vOp holds it for max(1, ceil(Wnd/Lq)) cycles: ceil(Wnd/Lq) - 1 bubbles (an
empty window still takes its one cycle). Lq = L for 8-bit codes, 2L for 7-bit, 4L for 6 bits and fewer
(four 64-entry sub-LUTs per big LUT), capped at W; 16-bit raw BF16 values bypass the LUTs and are read
64 bytes (one SQQ entry, Table 3) at a time: Lq = min(W, 32) — our choice, the paper gives no Q16 rate.
With inputs available and TOut draining, a tile takes the sum of its vOps' cycles.
"""

from __future__ import annotations

import math

from golden.deca_spec import CODE_BITS, RAW_BITS, SQQ_READ_VALUES_RAW, SUB_LUT_DEPTH, SUB_LUTS, TILE

# Characterization record keys (``unit`` in sysmodel/data/characterization.json): tb writes, sysmodel reads.
UNIT_PE = "deca_pe"
UNITS = (UNIT_PE,)


def pe_record(w: int, lanes: int, fmt: str, density: float) -> dict:
    """The params of a PE record measured on one format and density: the testbench writes, the System reads."""
    return {"w": w, "lanes": lanes, "fmt": fmt, "density": density}


def lookups_per_lut(bits: int) -> int:
    """Codes one big LUT answers per cycle: one per sub-LUT that holds a full copy of the table."""
    return max(1, SUB_LUTS * SUB_LUT_DEPTH >> max(bits, SUB_LUT_DEPTH.bit_length() - 1))


def lq(bits: int, lanes: int, w: int) -> int:
    """Values the dequantization stage handles per cycle, for ``lanes`` (L) big LUTs."""
    if bits == RAW_BITS:
        return min(w, SQQ_READ_VALUES_RAW)
    if bits not in CODE_BITS:
        raise ValueError(f"bits: {bits} not allowed; allowed 1..8 or {RAW_BITS}")
    return min(w, lanes * lookups_per_lut(bits))


def vop_cycles(window: int, lq_: int) -> int:
    return max(1, math.ceil(window / lq_))


def tile_cycles(windows: list[int], lq_: int) -> int:
    """Cycles the dequantization stage spends on a tile whose vOps have these windows."""
    return sum(vop_cycles(n, lq_) for n in windows)


def bpv(w: int, lq_: int, density: float) -> float:
    """Expected bubbles per vOp for i.i.d. nonzeros of density d (DECA §6.2):
    sum_k k * [F((k+1) Lq; W, d) - F(k Lq; W, d)], F the binomial CDF."""
    if density >= 1.0:
        return math.ceil(w / lq_) - 1
    from scipy.stats import binom  # here, not at import: scipy.stats takes 1.5 s, `membound systems` none

    return sum(
        k * (binom.cdf((k + 1) * lq_, w, density) - binom.cdf(k * lq_, w, density)) for k in range(math.ceil(w / lq_))
    )


def bpv_std(w: int, lq_: int, density: float) -> float:
    """Standard deviation of one vOp's bubbles under the same binomial assumption."""
    if density >= 1.0:
        return 0.0
    from scipy.stats import binom

    ks = range(math.ceil(w / lq_))
    p = [binom.cdf((k + 1) * lq_, w, density) - binom.cdf(k * lq_, w, density) for k in ks]
    mean = sum(k * pk for k, pk in zip(ks, p, strict=True))
    return math.sqrt(max(0.0, sum(k * k * pk for k, pk in zip(ks, p, strict=True)) - mean * mean))


def expected_tile_cycles(w: int, lq_: int, density: float) -> float:
    """#vOps * (1 + bpv): the reciprocal of DECA's AI_XV in vOp-cycles (§6.2)."""
    return TILE / w * (1 + bpv(w, lq_, density))
