"""Bit-exact number formats: encode/decode to raw bit patterns and the one rounding routine.

Semantics (every golden model and every RTL unit in membound follows these):

* A value is decoded *exactly*: every format here is a subset of float64.
* Encoding rounds the exact value **once**, to nearest with ties to even (RNE). ``rounding="rtz"``
  (toward zero) exists only so tests can prove that a wrong rounding mode is caught.
* Subnormals: gradual underflow on input and output, never flushed to zero.
* Special values by ``style``:

  ``ieee``  max exponent field is Inf (mantissa 0) or NaN; overflow rounds to ±Inf (RNE) or ±max (RTZ).
  ``fn``    E4M3FN (OCP FP8): no Inf, only S.1111.111 is NaN; overflow and ±Inf encode to the NaN with
            their sign, as in ml_dtypes.
  ``none``  E2M1 (OCP FP4): no Inf/NaN; overflow and ±Inf saturate to ±max; encoding a NaN is an error.
  ``e8m0``  OCP MX block scale: unsigned powers of two 2^-127..2^127, 0xFF is NaN, no zero; values are
            rounded in the log domain with ties up (the hidden bit is the LSB), zero/negatives are NaN.

* A NaN result is the format's canonical NaN (sign 0, quiet bit set) — RTL produces exactly that pattern.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

Rounding = Literal["rne", "rtz"]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format with ``exp_bits`` exponent and ``man_bits`` fraction bits."""

    name: str
    exp_bits: int
    man_bits: int
    style: Literal["ieee", "fn", "none", "e8m0"] = "ieee"

    @property
    def signed(self) -> bool:
        return self.style != "e8m0"

    @property
    def width(self) -> int:
        return int(self.signed) + self.exp_bits + self.man_bits

    @property
    def bias(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def emax_field(self) -> int:
        return (1 << self.exp_bits) - 1

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal number."""
        return -self.bias if self.style == "e8m0" else 1 - self.bias

    @property
    def max_bits(self) -> int:
        """Bit pattern of the largest finite positive value."""
        if self.style == "ieee":
            return ((self.emax_field - 1) << self.man_bits) | ((1 << self.man_bits) - 1)
        if self.style == "fn":
            return (self.emax_field << self.man_bits) | ((1 << self.man_bits) - 2)
        if self.style == "e8m0":
            return self.emax_field - 1
        return (self.emax_field << self.man_bits) | ((1 << self.man_bits) - 1)

    @property
    def nan_bits(self) -> int:
        if self.style == "ieee":
            return (self.emax_field << self.man_bits) | (1 << (self.man_bits - 1))
        if self.style == "fn":
            return (self.emax_field << self.man_bits) | ((1 << self.man_bits) - 1)
        if self.style == "e8m0":
            return self.emax_field
        raise ValueError(f"format {self.name} has no NaN encoding")

    @property
    def inf_bits(self) -> int:
        if self.style != "ieee":
            raise ValueError(f"format {self.name} has no Inf encoding")
        return self.emax_field << self.man_bits

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1) if self.signed else 0


FP32 = FloatFormat("fp32", 8, 23)
FP16 = FloatFormat("fp16", 5, 10)
BF16 = FloatFormat("bf16", 8, 7)
E5M2 = FloatFormat("e5m2", 5, 2)  # the papers' "BF8"
E4M3 = FloatFormat("e4m3", 4, 3, "fn")
E2M1 = FloatFormat("e2m1", 2, 1, "none")
E8M0 = FloatFormat("e8m0", 8, 0, "e8m0")
FORMATS = {f.name: f for f in (FP32, FP16, BF16, E5M2, E4M3, E2M1, E8M0)}


def get_format(name: str) -> FloatFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"format: unknown {name!r}; allowed: {sorted(FORMATS)}") from None


def _check_bits(bits: int, fmt: FloatFormat) -> None:
    if not 0 <= bits < (1 << fmt.width):
        raise ValueError(f"bits: {bits:#x} out of range 0..{(1 << fmt.width) - 1:#x} for {fmt.name}")


def classify(bits: int, fmt: FloatFormat) -> str:
    """One of 'nan', 'inf', 'zero', 'sub', 'normal'."""
    _check_bits(bits, fmt)
    e = (bits >> fmt.man_bits) & fmt.emax_field
    f = bits & ((1 << fmt.man_bits) - 1)
    if fmt.style == "e8m0":
        return "nan" if e == fmt.emax_field else "normal"
    if fmt.style == "ieee" and e == fmt.emax_field:
        return "inf" if f == 0 else "nan"
    if fmt.style == "fn" and e == fmt.emax_field and f == (1 << fmt.man_bits) - 1:
        return "nan"
    if e == 0:
        return "zero" if f == 0 else "sub"
    return "normal"


def unpack(bits: int, fmt: FloatFormat) -> tuple[str, int, int, int]:
    """(class, sign, sig, exp) with value = (-1)**sign * sig * 2**exp for finite classes."""
    cls = classify(bits, fmt)
    sign = (bits >> (fmt.width - 1)) & 1 if fmt.signed else 0
    e = (bits >> fmt.man_bits) & fmt.emax_field
    f = bits & ((1 << fmt.man_bits) - 1)
    if fmt.style == "e8m0":
        return cls, 0, 1, e - fmt.bias
    hidden = int(e != 0)
    return cls, sign, (hidden << fmt.man_bits) | f, max(e, 1) - fmt.bias - fmt.man_bits


def decode(bits: int, fmt: FloatFormat) -> float:
    """The exact value of ``bits`` as a Python float."""
    cls, sign, sig, exp = unpack(bits, fmt)
    if cls == "nan":
        return math.nan
    if cls == "inf":
        return -math.inf if sign else math.inf
    return math.ldexp(-sig if sign else sig, exp) if sig else (-0.0 if sign else 0.0)


def round_pack(
    sign: int, sig: int, exp: int, fmt: FloatFormat, rounding: Rounding = "rne", sticky: bool = False
) -> int:
    """Round (-1)**sign * (sig + sticky*eps) * 2**exp to ``fmt`` once and return its bit pattern.

    ``sticky`` says nonzero bits lie below ``sig``'s LSB (used by twins of hardware that keeps a sticky
    bit). This is the single rounding routine of membound; the RTL's round-and-pack stage mirrors it.
    """
    if sig < 0:
        raise ValueError("sig: must be >= 0")
    if fmt.style == "e8m0" and (sign or (sig == 0 and not sticky)):
        return fmt.nan_bits
    if sig == 0:
        if sticky:
            raise ValueError("sticky: set with a zero significand")
        return fmt.sign_bit if sign else 0
    m = fmt.man_bits
    e_top = sig.bit_length() - 1 + exp  # unbiased exponent of the leading one
    e_q = max(e_top, fmt.emin)  # below emin the quantum stays 2**(emin - m): gradual underflow
    shift = (e_q - m) - exp  # bits of sig below the quantum
    if shift > 0:
        kept, rem, half = sig >> shift, sig & ((1 << shift) - 1), 1 << (shift - 1)
        if rounding == "rne":
            above_half = rem > half or (rem == half and sticky)
            tie = rem == half and not sticky
            kept += int(above_half or (tie and bool(kept & 1)))
    elif sticky:
        raise ValueError("sticky: needs at least one guard bit below the rounding position")
    else:
        kept = sig << -shift
    if fmt.style == "e8m0":
        if kept == 0:  # below half of 2^-127 — saturate to the smallest scale
            return 0
        e_q += kept.bit_length() - 1 - m
        field = e_q + fmt.bias
        return fmt.nan_bits if field >= fmt.emax_field else max(field, 0)
    enc = ((e_q + fmt.bias - 1) << m) + kept if kept else 0
    if enc > fmt.max_bits or (fmt.style == "fn" and enc == fmt.nan_bits):
        if fmt.style == "ieee":
            enc = fmt.inf_bits if rounding == "rne" else fmt.max_bits
        elif fmt.style == "fn":
            enc = fmt.nan_bits
        else:
            enc = fmt.max_bits
    return enc | (fmt.sign_bit if sign else 0)


def encode(x: float, fmt: FloatFormat, rounding: Rounding = "rne") -> int:
    """Bit pattern of the float ``x`` rounded to ``fmt`` (see the module docstring for specials)."""
    x = float(x)
    if math.isnan(x):
        if fmt.style == "none":
            raise ValueError(f"x: NaN has no encoding in {fmt.name} (allowed: finite or ±Inf)")
        return fmt.nan_bits
    sign = int(math.copysign(1.0, x) < 0)
    if math.isinf(x):
        if fmt.style == "ieee":
            return fmt.inf_bits | (fmt.sign_bit if sign else 0)
        if fmt.style == "none":
            return fmt.max_bits | (fmt.sign_bit if sign else 0)
        return fmt.nan_bits | (fmt.sign_bit if sign else 0)
    mant, e = math.frexp(abs(x))
    return round_pack(sign, int(mant * (1 << 53)), e - 53, fmt, rounding)


def encode_array(x: np.ndarray, fmt: FloatFormat, rounding: Rounding = "rne") -> np.ndarray:
    return np.array(
        [encode(v, fmt, rounding) for v in np.asarray(x, dtype=np.float64).ravel()], dtype=np.uint32
    ).reshape(np.shape(x))


def decode_array(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    return np.array([decode(int(b), fmt) for b in np.asarray(bits).ravel()], dtype=np.float64).reshape(np.shape(bits))


# --- integers with scales ---------------------------------------------------------------------------


def _half_even(v: np.ndarray) -> np.ndarray:
    return np.round(v)  # numpy rounds half to even


def quantize_int(x: np.ndarray, bits: int, scale: float) -> np.ndarray:
    """Two's-complement INT``bits`` codes of x/scale, rounded half-to-even in float64 and saturated to
    [-2**(bits-1), 2**(bits-1)-1]. Returns codes as int64."""
    if bits not in (2, 3, 4, 5, 6, 7, 8):
        raise ValueError(f"bits: {bits} not allowed; allowed 2..8")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale: {scale} not allowed; must be finite and > 0")
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.clip(_half_even(np.asarray(x, np.float64) / scale), lo, hi).astype(np.int64)


def dequantize_int(codes: np.ndarray, scale: float) -> np.ndarray:
    return np.asarray(codes, np.float64) * scale


# --- OCP MX blocks ------------------------------------------------------------------------------------

MX_BLOCK = 32


def mx_quantize(x: np.ndarray, elem: FloatFormat = E2M1) -> tuple[int, np.ndarray]:
    """OCP MX v1.0 §6.3, as the spec's reference implementation (microsoft/microxcaling, mx/mx_ops.py
    _quantize_mx with saturate_normals) does it: shared scale X = 2**(floor(log2(max|x|)) - emax_elem) as
    E8M0, clamped to E8M0's range; elements = x / X rounded once (RNE) to ``elem`` and **saturated** to
    +-max normal (never Inf or NaN). An all-zero block gets the smallest scale (0x00). Special values:
    a block holding any NaN or +-Inf has the NaN scale (0xFF), so every element of it decodes as NaN
    (microxcaling mx/tests/test_corners_mx.py: "All other values in a shared vector with a NaN/Inf become
    NaNs/Infs"); its element bits are 0. Returns (scale_bits, element_bits[32])."""
    x = np.asarray(x, np.float64)
    if x.shape != (MX_BLOCK,):
        raise ValueError(f"x: shape {x.shape} not allowed; an MX block is ({MX_BLOCK},)")
    if not np.isfinite(x).all():
        return E8M0.nan_bits, np.zeros(MX_BLOCK, np.uint32)
    amax = float(np.max(np.abs(x)))
    elem_max = decode(elem.max_bits, elem)
    if amax == 0:
        shared = E8M0.emin
    else:
        shared = math.frexp(amax)[1] - 1 - (math.frexp(elem_max)[1] - 1)
        shared = min(max(shared, E8M0.emin), E8M0.emax_field - 1 - E8M0.bias)
    scaled = np.clip(np.ldexp(x, -shared), -elem_max, elem_max)
    return shared + E8M0.bias, np.array([encode(v, elem) for v in scaled], np.uint32)


def mx_dequantize(scale_bits: int, elems: np.ndarray, elem: FloatFormat = E2M1) -> np.ndarray:
    """Element value x scale, exactly; a NaN scale makes every element NaN."""
    scale = decode(scale_bits, E8M0)
    return np.array([decode(int(b), elem) * scale for b in elems], np.float64)
