"""Duplex encodings: the one definition of the Logic-PIM geometry, command items and error flags that
hw/duplex, golden/duplex.py, tb/duplex and sysmodel/designs/duplex share.

Paper: Duplex (xPU + Logic-PIM) §IV-C/D and §VI; choices where the paper is silent follow
shared/notes/l3_duplex_flash.md §2.3-2.4 and are marked [S]; [D] marks arithmetic from the paper's numbers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from golden.commands import flag_fields

ELEM_BITS = 16  # FP16 weights, activations, scores (§VI: "FP16")
ACC_BITS = 32  # FP32 accumulation [S, notes §2.8.9]
CLOCK_HZ = 650e6  # Logic-PIM arithmetic clock = 1/tCCD_S (§VI)
BUS_BYTES = 128  # a bank bundle's 83.2 GB/s at 650 MHz: 128 B per cycle per module [D]
ROWS = BUS_BYTES * 8 // ELEM_BITS  # 64 output rows: one FP16 weight per row per cycle [D]
LANES = 8  # token lanes: 512 MACs / 64 rows (§VI "512 FP16 MACs") [D]
INPUT_BUFFER_BYTES = 8 * 1024  # per GEMM module (§VI)
MODULES_PER_STACK = 32  # one per pseudo-channel (§VI) [D]
STACKS = 5  # 80 GB / 16 GB per 8-hi HBM3 stack (§VI) [D]
ACC_PHASES = 2  # partial sums per output (k even / k odd): hides the 2-cycle FP32 adder [S]; fixed at 2:
# the combine stage (hw/duplex/gemm_module.py Combine, golden gemm_tile) sums two partials with one FP32 add
PHASE_BITS = (ACC_PHASES - 1).bit_length()  # a k's partial, k mod ACC_PHASES: k's low bits (a power of two)
DIM_BITS = 16  # descriptor fields m, k, n
DESC_FIELDS = {"m": DIM_BITS, "k": DIM_BITS, "n": DIM_BITS}  # a DESC item's data, LSB first
SOFTMAX_LANES = 64  # matches the module's 64-wide stream [S, notes §2.4f]
SOFTMAX_BUFFER_BYTES = 128 * 1024  # "128 KB of buffers" (§VI): 64K FP16 scores
ACT_LANES = 64  # gated-activation lanes [S]: the paper gives no design


class Op(enum.IntEnum):
    """A GEMM-module command item's ``op``: one DESC (m, k, n), then the n input vectors (n*k/ROWS beats
    of ROWS FP16 elements, token by token), then the weights (m/ROWS row blocks of k beats, beat k =
    W[o0:o0+ROWS, k]); the transaction's final item carries ``last``."""

    DESC = 0
    X = 1
    W = 2


class Err(enum.IntFlag):
    """What the GEMM module flags (one error item after consuming the transaction to ``last``)."""

    ZERO_DIM = 1 << 0  # m, k or n is 0
    M_ALIGN = 1 << 1  # m not a multiple of the array's rows
    K_ALIGN = 1 << 2  # k not a multiple of the burst (ROWS elements)
    BUF_OVER = 1 << 3  # the n input vectors do not fit the 8 KB input buffer
    MALFORMED = 1 << 4  # items out of order, or ``last`` early or missing


ERR_FIELDS = flag_fields(Err)


@dataclass(frozen=True)
class Geometry:
    """A GEMM module: ``rows`` x ``lanes`` MACs, a ``buffer_bytes`` input buffer split into one bank per
    token lane, with the paper's values as defaults and a reduced module for fast tests. ``modules`` > 1:
    a Logic-PIM stack of that many modules under one controller (hw/duplex/stack.py), each holding ``m``
    rows of the weights in its own bank bundle; a W item carries one beat per module, an output item
    one row block per module."""

    rows: int = ROWS
    lanes: int = LANES
    buffer_bytes: int = INPUT_BUFFER_BYTES
    modules: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.modules <= MODULES_PER_STACK:
            raise ValueError(f"modules: {self.modules} not allowed; 1 to {MODULES_PER_STACK}")
        for name in ("rows", "lanes"):
            v = getattr(self, name)
            if v < 1 or v & (v - 1) or v > 256:
                raise ValueError(f"{name}: {v} not allowed; a power of two from 1 to 256")
        if self.buffer_bytes % (2 * self.rows * self.lanes) or self.buffer_bytes < 2 * self.rows * self.lanes:
            raise ValueError(
                f"buffer_bytes: {self.buffer_bytes} not allowed; a positive multiple of "
                f"2 * rows * lanes = {2 * self.rows * self.lanes}"
            )

    @property
    def lane_words(self) -> int:
        """Words of ``rows`` FP16 elements per token lane's buffer bank."""
        return self.buffer_bytes // (2 * self.rows * self.lanes)

    @property
    def macs(self) -> int:
        return self.rows * self.lanes

    def groups(self, n: int) -> int:
        """Token groups: tokens beyond ``lanes`` loop over the array."""
        return -(-n // self.lanes)

    def check(self, m: int, k: int, n: int) -> Err:
        """The descriptor's error flags (0 if the module runs it)."""
        err = Err(0)
        if 0 in (m, k, n):
            return Err.ZERO_DIM
        if m % self.rows:
            err |= Err.M_ALIGN
        if k % self.rows:
            err |= Err.K_ALIGN
        elif self.groups(n) * (k // self.rows) > self.lane_words:
            err |= Err.BUF_OVER
        return err


FULL = Geometry()
REDUCED = Geometry(rows=4, lanes=2, buffer_bytes=256)  # what `make test` simulates
