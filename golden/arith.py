"""Golden twins of the hw/arith units, on raw bit patterns.

Semantics (the RTL implements exactly these):

* mul, add: the exact result rounded once by :func:`golden.fp.round_pack` (RNE, gradual underflow,
  overflow to ±Inf). NaN results are the canonical NaN; Inf*0 and Inf-Inf are NaN. An exact zero sum is
  +0 unless both addends are -0. mul may widen (e.g. BF16 x BF16 -> FP32, rounded once in FP32).
* convert: the exact value rounded once into the target format (narrowing FP32 -> FP16).
* mac: ``add(mul(a, b) -> acc format, c)``: two roundings (a separate, not fused, multiply-add).
* add_tree: pairwise reduction in a fixed order, each adder rounding: level k adds elements 2i and 2i+1
  of level k-1, so for 4 inputs ((x0+x1)+(x2+x3)). N must be a power of two.
* max_tree: the same pairwise order with max(a, b) that orders -0 < +0 and returns the canonical NaN
  if either input is NaN.
* exp, recip: the hardware algorithms, step by step in integers; see their docstrings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from golden.fp import FloatFormat, Rounding, round_pack, unpack


def _inf(fmt: FloatFormat, sign: int) -> int:
    return fmt.inf_bits | (fmt.sign_bit if sign else 0)


def fp_mul(a: int, b: int, fmt_in: FloatFormat, fmt_out: FloatFormat | None = None, rounding: Rounding = "rne") -> int:
    fmt_out = fmt_out or fmt_in
    ca, sa, ma, ea = unpack(a, fmt_in)
    cb, sb, mb, eb = unpack(b, fmt_in)
    sign = sa ^ sb
    if "nan" in (ca, cb) or {ca, cb} == {"inf", "zero"}:
        return fmt_out.nan_bits
    if "inf" in (ca, cb):
        return _inf(fmt_out, sign)
    return round_pack(sign, ma * mb, ea + eb, fmt_out, rounding)


def fp_add(a: int, b: int, fmt: FloatFormat, rounding: Rounding = "rne") -> int:
    ca, sa, ma, ea = unpack(a, fmt)
    cb, sb, mb, eb = unpack(b, fmt)
    if "nan" in (ca, cb) or (ca == cb == "inf" and sa != sb):
        return fmt.nan_bits
    if ca == "inf" or cb == "inf":
        return _inf(fmt, sa if ca == "inf" else sb)
    e = min(ea, eb)
    total = (-1) ** sa * (ma << (ea - e)) + (-1) ** sb * (mb << (eb - e))
    if total == 0:
        return round_pack(sa & sb, 0, 0, fmt)
    return round_pack(int(total < 0), abs(total), e, fmt, rounding)


def fp_convert(x: int, fmt_in: FloatFormat, fmt_out: FloatFormat, rounding: Rounding = "rne") -> int:
    """``x`` re-encoded in ``fmt_out``: its exact value rounded once; NaN canonical, Inf kept."""
    cls, sign, sig, exp = unpack(x, fmt_in)
    if cls == "nan":
        return fmt_out.nan_bits
    if cls == "inf":
        return _inf(fmt_out, sign)
    return round_pack(sign, sig, exp, fmt_out, rounding)


def fp_mac(a: int, b: int, c: int, fmt_in: FloatFormat, fmt_acc: FloatFormat, rounding: Rounding = "rne") -> int:
    return fp_add(fp_mul(a, b, fmt_in, fmt_acc, rounding), c, fmt_acc, rounding)


def fp_max(a: int, b: int, fmt: FloatFormat) -> int:
    if "nan" in (unpack(a, fmt)[0], unpack(b, fmt)[0]):
        return fmt.nan_bits
    return a if order_key(a, fmt) >= order_key(b, fmt) else b


def order_key(bits: int, fmt: FloatFormat) -> int:
    """Unsigned key whose order is the numeric order of non-NaN values, with -0 < +0."""
    mask = (1 << fmt.width) - 1
    return (~bits & mask) if bits & fmt.sign_bit else bits | fmt.sign_bit


def _tree(xs: list[int], op) -> int:
    if not xs or len(xs) & (len(xs) - 1):
        raise ValueError(f"xs: {len(xs)} inputs not allowed; a tree takes a power of two >= 1")
    while len(xs) > 1:
        xs = [op(xs[i], xs[i + 1]) for i in range(0, len(xs), 2)]
    return xs[0]


def add_tree(xs: list[int], fmt: FloatFormat, rounding: Rounding = "rne") -> int:
    return _tree(list(xs), lambda a, b: fp_add(a, b, fmt, rounding))


def max_tree(xs: list[int], fmt: FloatFormat) -> int:
    return _tree(list(xs), lambda a, b: fp_max(a, b, fmt))


# --- exponential: the hw/arith/fpexp.py algorithm --------------------------------------------------


@dataclass(frozen=True)
class ExpParams:
    """Fixed-point parameters of the exp unit (see :func:`fp_exp`)."""

    int_bits: int  # |x| >= 2**int_bits overflows (x > 0) or underflows (x < 0) outright
    x_frac: int = 16  # fraction bits of |x| in fixed point (truncated)
    c_frac: int = 20  # fraction bits of the log2(e) constant
    y_frac: int = 16  # fraction bits of y = x*log2(e) (truncated)
    lut_bits: int = 6  # 2**lut_bits intervals of 2**f on [0, 1)
    p_frac: int = 16  # fraction bits of the 2**f table entries

    @property
    def log2e(self) -> int:
        return round(math.log2(math.e) * (1 << self.c_frac))

    def table(self) -> list[int]:
        n = 1 << self.lut_bits
        return [round(2 ** (k / n) * (1 << self.p_frac)) for k in range(n + 1)]


EXP_PARAMS = {"bf16": ExpParams(int_bits=7), "fp16": ExpParams(int_bits=5)}


def fp_exp(x: int, fmt: FloatFormat) -> int:
    """exp(x), as the hardware computes it:

    1. X = floor(|x| * 2**x_frac); |x| >= 2**int_bits gives +Inf (x > 0) or +0 (x < 0).
    2. Y = floor(X * round(log2(e) * 2**c_frac) / 2**(x_frac + c_frac - y_frac)), y = ±Y / 2**y_frac.
    3. y = n + f with n = floor(y), f in [0, 1); f's top lut_bits index a 65-entry table of
       round(2**(k/64) * 2**p_frac); the remaining bits interpolate linearly to the next entry (floor).
    4. The result p * 2**(n - p_frac) is rounded once (RNE) by round_pack: overflow to +Inf, gradual
       underflow. NaN -> NaN, +Inf -> +Inf, -Inf -> +0.

    Accuracy against true exp over every finite input (exhaustive, tests/test_arith_golden.py): at
    most 0.504 ULP for bf16 and 0.559 ULP for fp16 (0.5 of it is the final rounding).
    """
    p = EXP_PARAMS[fmt.name]
    cls, sign, sig, exp = unpack(x, fmt)
    if cls == "nan":
        return fmt.nan_bits
    if cls == "inf":
        return 0 if sign else fmt.inf_bits
    if sig and sig.bit_length() - 1 + exp >= p.int_bits:
        return 0 if sign else fmt.inf_bits
    shift = exp + p.x_frac
    big_x = sig << shift if shift >= 0 else sig >> -shift
    y = (big_x * p.log2e) >> (p.x_frac + p.c_frac - p.y_frac)
    if sign:
        y = -y
    n, f = y >> p.y_frac, y & ((1 << p.y_frac) - 1)
    r_bits = p.y_frac - p.lut_bits
    k, r = f >> r_bits, f & ((1 << r_bits) - 1)
    t = p.table()
    mant = t[k] + (((t[k + 1] - t[k]) * r) >> r_bits)
    return round_pack(0, mant, n - p.p_frac, fmt)


# --- reciprocal: the hw/arith/fprecip.py algorithm -------------------------------------------------


def fp_recip(x: int, fmt: FloatFormat, rounding: Rounding = "rne") -> int:
    """1/x correctly rounded (RNE): the significand is normalised, Q = floor(2**(2M+2) / sig) by
    restoring division with the remainder as sticky bit, then one round_pack. ±0 -> ±Inf,
    ±Inf -> ±0, NaN -> NaN; overflow (1/subnormal) -> ±Inf, underflow gradual."""
    cls, sign, sig, exp = unpack(x, fmt)
    if cls == "nan":
        return fmt.nan_bits
    if cls == "inf":
        return fmt.sign_bit if sign else 0
    if cls == "zero":
        return _inf(fmt, sign)
    lz = fmt.man_bits + 1 - sig.bit_length()
    sig, exp = sig << lz, exp - lz
    q, rem = divmod(1 << (2 * fmt.man_bits + 2), sig)
    return round_pack(sign, q, -(2 * fmt.man_bits + 2) - exp, fmt, rounding, sticky=rem != 0)
