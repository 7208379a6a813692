"""Golden twins of the hw/arith units, on raw bit patterns.

Semantics (the RTL implements exactly these):

* mul, add: the exact result rounded once by :func:`golden.fp.round_pack` (RNE, gradual underflow,
  overflow to ±Inf). NaN results are the canonical NaN; Inf*0 and Inf-Inf are NaN. An exact zero sum is
  +0 unless both addends are -0. mul may widen (e.g. BF16 x BF16 -> FP32, rounded once in FP32).
* mac: ``add(mul(a, b) -> acc format, c)``: two roundings (a separate, not fused, multiply-add).
* add_tree: pairwise reduction in a fixed order, each adder rounding: level k adds elements 2i and 2i+1
  of level k-1, so for 4 inputs ((x0+x1)+(x2+x3)). N must be a power of two.
* max_tree: the same pairwise order with max(a, b) that orders -0 < +0 and returns the canonical NaN
  if either input is NaN.
* exp, recip: the hardware algorithms, step by step in integers; see their docstrings.
"""

from __future__ import annotations

from golden.fp import FloatFormat, Rounding, round_pack, unpack


def _inf(fmt: FloatFormat, sign: int) -> int:
    return fmt.inf_bits | (fmt.sign_bit if sign else 0)


def fp_mul(a: int, b: int, fmt_in: FloatFormat, fmt_out: FloatFormat | None = None,
           rounding: Rounding = "rne") -> int:
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


def fp_mac(a: int, b: int, c: int, fmt_in: FloatFormat, fmt_acc: FloatFormat,
           rounding: Rounding = "rne") -> int:
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
