"""Hermes encodings: the one definition of the NDP core's geometry, GEMV command items, error flags and the
neuron-predictor constants that hw/hermes, golden/hermes.py, tb/hermes and sysmodel share.

Paper: Hermes (NDP-DIMM + consumer GPU) §IV-A1, §IV-C, Table II; choices where the paper is silent follow
shared/notes/hermes.md §3-4 and are marked [S]; [D] marks arithmetic from the paper's numbers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from golden.commands import flag_fields, pack_fields, unpack_fields

ELEM_BITS = 16  # FP16 weights and activations throughout (§IV-A1)
ACC_BITS = 32  # FP32 products (exact for FP16 x FP16) and accumulation, one final rounding [S, notes §3.1]
CLOCK_HZ = 1e9  # NDP core clock (§V-A)
MULTIPLIERS = 256  # GEMV multipliers per NDP core (Table II); the DSE sweeps 32-512 (§V-E3)
MUL_LANES = 8  # "each multiplier computes eight FP16 values simultaneously": 128-bit operands (§IV-A1)
SERIAL_BITS = 1  # multiplier significand bits consumed per cycle: "a typical bit-serial manner" [S]
SIG_BITS = 11  # FP16 significand, hidden bit included: what the bit-serial multiplier shifts out
BUFFER_BYTES = 256 * 1024  # NDP core buffer (Table II)
ACT_LANES = 256  # activation unit: 256 FP16 exp, add and multiply units (§IV-A1)
DIM_BITS = 16  # descriptor fields n and kb
BATCH_BITS = 5  # descriptor field batch
# a DESC item's data, LSB first: mode (Mode), n (rows or columns), kb (beats per row or column), batch
DESC_FIELDS = {"mode": 1, "n": DIM_BITS, "kb": DIM_BITS, "batch": BATCH_BITS}
MAX_BATCH = 16  # "batch 1-16" (§V-A); the accumulators and output queue are sized for it

# --- the neuron predictor (§IV-C1, notes §4.2-4.3) ---------------------------------------------------------
STATE_BITS = 4  # "a 4-bit state per neuron"
STATE_MAX = (1 << STATE_BITS) - 1
STEP_UP, STEP_DOWN = 4, 1  # activated: +4; not activated: -1 (saturating) (§IV-C1, Fig. 7)
LAMBDA, THRESHOLD = 6, 15  # predict active iff state + LAMBDA * s2 > THRESHOLD
CORRELATED = 2  # top-2 correlated neurons of the previous layer
HOT_STATE = 10  # T_h: a neuron whose state exceeds it is hot (§IV-C2)
INIT_HIGH, INIT_LOW = 0.90, 0.02  # prefill frequency > 90% -> 15, < 2% -> 0; linear bins between [S]


class Mode(enum.IntEnum):
    """GEMV dataflow (notes §3.1 [S]): DOT y_i = sum_k W[i,k] x[k] over activated rows; AXPY
    out += a_i W[:, i] over activated columns."""

    DOT = 0
    AXPY = 1


class Op(enum.IntEnum):
    """A GEMV command item's ``op``: one DESC (mode, n, kb, batch), then the operands from the buffer (X
    items), then the weights from the DRAM cells (W items, one 8M-element beat each); the transaction's
    final item carries ``last``."""

    DESC = 0
    X = 1
    W = 2


class Err(enum.IntFlag):
    """What the GEMV unit flags (one error item after consuming the transaction to ``last``)."""

    ZERO_DIM = 1  # n, kb or batch is 0
    BUF_OVER = 2  # the operands or partial sums do not fit the buffer
    MALFORMED = 4  # an item of the wrong op, or ``last`` early or missing
    BATCH = 8  # batch above MAX_BATCH


ERR_FIELDS = flag_fields(Err)


class ActOp(enum.IntEnum):
    """An activation-unit transaction's ``op`` (every beat of it carries the same): softmax over n scores,
    ReLU, merge (a + b: a GPU partial plus a DIMM partial), scale (a * b[0]: the 1/sqrt(d) scale)."""

    SOFTMAX = 0
    RELU = 1
    MERGE = 2
    SCALE = 3


class ActErr(enum.IntFlag):
    """What the activation unit flags (one error item after consuming the transaction to ``last``)."""

    ZERO_LEN = 1  # n is 0
    LEN_OVER = 2  # a softmax longer than the score buffer
    MALFORMED = 4  # beats other than ceil(n / lanes), or an op change within the transaction


ACT_ERR_FIELDS = flag_fields(ActErr)
ACT_N_BITS = 20  # an activation transaction's n: past the softmax buffer's 128K scores, so LEN_OVER is reachable
ACT_BUFFER_BYTES = BUFFER_BYTES  # the softmax row buffer: the NDP core buffer (Table II) [S]


def serial_steps(serial_bits: int = SERIAL_BITS) -> int:
    """Shift-add steps of one bit-serial product: the SIG_BITS significand, ``serial_bits`` at a time."""
    return -(-SIG_BITS // serial_bits)


@dataclass(frozen=True)
class Gemv:
    """A GEMV unit: ``multipliers`` x ``lanes`` FP16 products per operation (a beat of 8M weights) over a
    pairwise FP32 reduction tree; ``serial_bits`` per cycle in each bit-serial multiplier; ``buffer_bytes``
    for operands and partial sums."""

    multipliers: int = MULTIPLIERS
    lanes: int = MUL_LANES
    serial_bits: int = SERIAL_BITS
    buffer_bytes: int = BUFFER_BYTES

    def __post_init__(self) -> None:
        for name, hi in (("multipliers", 512), ("lanes", 8)):
            v = getattr(self, name)
            if v < 1 or v & (v - 1) or v > hi:
                raise ValueError(f"{name}: {v} not allowed; a power of two from 1 to {hi}")
        if not 1 <= self.serial_bits <= SIG_BITS:
            raise ValueError(f"serial_bits: {self.serial_bits} not allowed; 1 to {SIG_BITS} (the FP16 significand)")
        if self.buffer_bytes < 4 * self.beat or self.buffer_bytes % (4 * self.beat):
            raise ValueError(
                f"buffer_bytes: {self.buffer_bytes} not allowed; a positive multiple of "
                f"4 * multipliers * lanes = {4 * self.beat}"
            )

    @property
    def beat(self) -> int:
        """FP16 elements per operation (one weight beat)."""
        return self.multipliers * self.lanes

    @property
    def serial_steps(self) -> int:
        return serial_steps(self.serial_bits)

    def check(self, mode: int, n: int, kb: int, batch: int) -> Err:
        """A descriptor's error flags (0: it runs). DOT keeps batch x kb operand beats (FP16) in the buffer;
        AXPY keeps batch x kb beats of FP32 partial sums, and its n x batch FP16 scalars, each in a buffer
        of ``buffer_bytes``."""
        if n == 0 or kb == 0 or batch == 0:
            return Err.ZERO_DIM
        if batch > MAX_BATCH:
            return Err.BATCH
        if mode == Mode.DOT:
            over = 2 * batch * kb * self.beat > self.buffer_bytes
        else:
            over = 4 * batch * kb * self.beat > self.buffer_bytes or 2 * n * batch > self.buffer_bytes
        return Err.BUF_OVER if over else Err(0)


def pack_desc(mode: int, n: int, kb: int, batch: int) -> int:
    """A DESC item's data (:data:`DESC_FIELDS`)."""
    return pack_fields(DESC_FIELDS, mode=mode, n=n, kb=kb, batch=batch)


def unpack_desc(data: int) -> tuple[int, ...]:
    return unpack_fields(DESC_FIELDS, data)


FULL = Gemv()
REDUCED = Gemv(multipliers=2, lanes=4, buffer_bytes=1024)
