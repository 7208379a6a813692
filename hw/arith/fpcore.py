"""Combinational floating-point building blocks shared by every arithmetic unit.

They implement exactly the semantics of :mod:`golden.fp` for IEEE-style formats (FP32, FP16, BF16,
E5M2): gradual underflow on input and output, one RNE rounding in :func:`round_pack`, overflow to ±Inf,
canonical NaN results. The arithmetic units put pipeline registers between these blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed

from golden.fp import FloatFormat

EXP_BITS = 12  # signed width of internal exponents: holds every product/quotient exponent of FP32


def check_ieee(fmt: FloatFormat, field: str) -> None:
    if fmt.style != "ieee":
        raise ValueError(
            f"{field}: {fmt.name} not allowed; the arithmetic units take IEEE-style formats (fp32, fp16, bf16, e5m2)"
        )


@dataclass
class Unpacked:
    """value = (-1)**sign * sig * 2**exp, with class flags; as :func:`golden.fp.unpack`."""

    sign: Value
    sig: Value  # man_bits + 1 bits, hidden bit included
    exp: Value  # signed(EXP_BITS)
    is_zero: Value
    is_inf: Value
    is_nan: Value


def unpack(m: Module, bits: Value, fmt: FloatFormat, name: str) -> Unpacked:
    e = bits[fmt.man_bits : fmt.man_bits + fmt.exp_bits]
    f = bits[: fmt.man_bits]
    exp = Signal(signed(EXP_BITS), name=f"{name}_exp")
    m.d.comb += exp.eq(Mux(e == 0, 1, e) - (fmt.bias + fmt.man_bits))
    sig = Signal(fmt.man_bits + 1, name=f"{name}_sig")
    m.d.comb += sig.eq(Cat(f, e != 0))
    return Unpacked(
        sign=bits[fmt.width - 1],
        sig=sig,
        exp=exp,
        is_zero=(e == 0) & (f == 0),
        is_inf=(e == fmt.emax_field) & (f == 0),
        is_nan=(e == fmt.emax_field) & (f != 0),
    )


def leading_zeros(m: Module, value: Value, name: str) -> Signal:
    """Count of leading zeros of ``value`` (its width when zero): a priority encoder."""
    width = len(value)
    lz = Signal(range(width + 1), name=f"{name}_lz")
    m.d.comb += lz.eq(width)
    for i in range(width):  # later assignments win: the highest set bit decides
        with m.If(value[i]):
            m.d.comb += lz.eq(width - 1 - i)
    return lz


def round_pack(m: Module, sign: Value, sig: Value, exp: Value, sticky: Value, fmt: FloatFormat, name: str) -> Signal:
    """Bits of (-1)**sign * (sig + sticky) * 2**exp rounded to ``fmt`` (RNE), as golden.fp.round_pack.

    Normalise with a leading-zero count, choose the quantum (the subnormal one below emin), shift into
    M+1 bits keeping guard and sticky, round to nearest even, and pack with the carry running into the
    exponent field. Callers keep at least one guard bit below the quantum whenever ``sticky`` can be set.
    """
    w, mb = len(sig), fmt.man_bits
    lz = leading_zeros(m, sig, name)
    e_top = Signal(signed(EXP_BITS), name=f"{name}_etop")
    m.d.comb += e_top.eq(exp + (w - 1) - lz)
    e_q = Signal(signed(EXP_BITS), name=f"{name}_eq")
    m.d.comb += e_q.eq(Mux(e_top < fmt.emin, fmt.emin, e_top))
    shift = Signal(signed(EXP_BITS + 1), name=f"{name}_shift")
    m.d.comb += shift.eq(e_q - mb - exp)

    # right shift (shift > 0): guard = last bit shifted out, rest = the bits below it
    rsh = Signal(range(w + 3), name=f"{name}_rsh")
    m.d.comb += rsh.eq(Mux(shift > w + 2, w + 2, shift.as_unsigned()[: len(rsh)]))
    wide = Signal(2 * w + 2, name=f"{name}_wide")
    m.d.comb += wide.eq(Cat(Const(0, w + 2), sig) >> rsh)
    # left shift (shift <= 0): exact; the leading one lands at or below bit M
    lsh = Signal(range(mb + 2), name=f"{name}_lsh")
    m.d.comb += lsh.eq(Mux(-shift > mb + 1, mb + 1, (-shift).as_unsigned()[: len(lsh)]))

    kept = Signal(mb + 1, name=f"{name}_kept")
    guard = Signal(name=f"{name}_guard")
    rest = Signal(name=f"{name}_rest")
    with m.If(shift > 0):
        m.d.comb += [kept.eq(wide[w + 2 :]), guard.eq(wide[w + 1]), rest.eq((wide[: w + 1] != 0) | sticky)]
    with m.Else():
        m.d.comb += [kept.eq(sig << lsh), guard.eq(0), rest.eq(0)]
    rounded = Signal(mb + 2, name=f"{name}_rounded")
    m.d.comb += rounded.eq(kept + (guard & (rest | kept[0])))

    enc = Signal(signed(EXP_BITS + mb + 2), name=f"{name}_enc")
    m.d.comb += enc.eq(((e_q + (fmt.bias - 1)) << mb) + rounded)
    out = Signal(fmt.width, name=f"{name}_out")
    mag = Signal(fmt.width - 1, name=f"{name}_mag")
    with m.If((sig == 0) | (rounded == 0)):
        m.d.comb += mag.eq(0)
    with m.Elif(enc >= fmt.inf_bits):
        m.d.comb += mag.eq(fmt.inf_bits)
    with m.Else():
        m.d.comb += mag.eq(enc[: fmt.width - 1])
    m.d.comb += out.eq(Cat(mag, sign))
    return out


def special(fmt: FloatFormat, nan: Value, inf: Value, inf_sign: Value, normal: Value) -> Value:
    """``normal`` unless the result is NaN (canonical) or ±Inf."""
    return Mux(nan, fmt.nan_bits, Mux(inf, Cat(Const(fmt.inf_bits, fmt.width - 1), inf_sign), normal))
