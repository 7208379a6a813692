"""golden.arith against an independent reference: numpy/ml_dtypes arithmetic.

numpy float32 and float64 add/mul are IEEE correctly rounded; float16 and bfloat16 arithmetic is done in
float32 and rounded again, which is still correctly rounded because 24 >= 2p + 2 (Figueroa, "When is
double rounding innocuous?", 1995). So on non-NaN results the golden twins must agree bit for bit.
"""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden import arith
from golden.fp import BF16, FP16, FP32, FloatFormat, classify, decode, encode

# these tests compute overflowing values on purpose (to Inf): numpy warns, we check the bits
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

NP = {"fp32": (np.float32, np.uint32), "fp16": (np.float16, np.uint16), "bf16": (ml_dtypes.bfloat16, np.uint16)}
FMT = {"fp32": FP32, "fp16": FP16, "bf16": BF16}


def np_op(op: str, a: int, b: int, name: str) -> int:
    dt, ut = NP[name]
    x, y = np.array([a], ut).view(dt), np.array([b], ut).view(dt)
    with np.errstate(all="ignore"):
        r = (
            (x.astype(np.float32) * y.astype(np.float32))
            if op == "mul"
            else (x.astype(np.float32) + y.astype(np.float32))
        )
        if name == "fp32":
            r = (x.astype(np.float64) * y.astype(np.float64)) if op == "mul" else x + y
    return int(np.asarray(r).astype(dt).view(ut)[0])


def check(op: str, a: int, b: int, name: str) -> None:
    fmt: FloatFormat = FMT[name]
    ours = arith.fp_mul(a, b, fmt) if op == "mul" else arith.fp_add(a, b, fmt)
    ref = np_op(op, a, b, name)
    if classify(ref, fmt) == "nan":
        assert ours == fmt.nan_bits
    else:
        assert ours == ref, f"{op} {a:#x} {b:#x}: ours {ours:#x} numpy {ref:#x}"


@pytest.mark.parametrize("name", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("op", ["mul", "add"])
def test_random_against_numpy(op: str, name: str) -> None:
    rng = np.random.default_rng(7)
    width = FMT[name].width
    for a, b in rng.integers(0, 1 << width, size=(3000, 2)):
        check(op, int(a), int(b), name)


@given(
    st.sampled_from(["fp32", "fp16", "bf16"]),
    st.sampled_from(["mul", "add"]),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
)
def test_property_against_numpy(name: str, op: str, a: int, b: int) -> None:
    mask = (1 << FMT[name].width) - 1
    check(op, a & mask, b & mask, name)


def test_widening_mul_is_exact_then_rounded() -> None:
    # BF16 x BF16 -> FP32: products of 8-bit significands are exact in FP32 within range
    a, b = 0x3FC1, 0x4011  # 1.5078125 * 2.265625
    ref = np.array([1.5078125 * 2.265625], np.float32).view(np.uint32)[0]
    assert arith.fp_mul(a, b, BF16, FP32) == int(ref)


def test_tree_order_and_specials() -> None:
    one, big = 0x3F800000, 0x4B800000  # 1.0, 2**24
    # ((2^24 + 1) + (1 + 1)) = 2^24 + 2 exactly; a left-to-right sum would lose the first 1
    assert arith.add_tree([big, one, one, one], FP32) == 0x4B800001
    assert arith.max_tree([0x8000, 0x0000], BF16) == 0x0000 and arith.max_tree([0x0000, 0x8000], BF16) == 0
    assert arith.max_tree([0x3F80, 0x7FC1], BF16) == BF16.nan_bits
    assert arith.fp_add(0x8000, 0x8000, BF16) == 0x8000 and arith.fp_add(0x3F80, 0xBF80, BF16) == 0
    with pytest.raises(ValueError, match="xs: 3 inputs not allowed"):
        arith.add_tree([1, 2, 3], FP32)


def ulp_error(got: int, true: float, fmt: FloatFormat) -> float:
    """|got - true| in units of the spacing of ``fmt`` at ``true``; 0 where both round to Inf."""
    ref = encode(true, fmt)
    if classify(got, fmt) == "inf" or classify(ref, fmt) == "inf":
        return 0.0 if got == ref else math.inf
    lo = ref - 1 if ref & ~fmt.sign_bit else ref
    spacing = (
        abs(decode(ref + 1, fmt) - decode(ref, fmt))
        if ref + 1 < fmt.inf_bits
        else abs(decode(ref, fmt) - decode(lo, fmt))
    )
    return abs(decode(got, fmt) - true) / spacing


@pytest.mark.parametrize(("name", "bound"), [("bf16", 0.504), ("fp16", 0.559)])
def test_exp_worst_case_error_exhaustive(name: str, bound: float) -> None:
    """The documented worst-case error of the exp approximation, over every finite input."""
    fmt = FMT[name]
    worst = 0.0
    for bits in range(1 << fmt.width):
        if classify(bits, fmt) in ("nan", "inf"):
            continue
        x = decode(bits, fmt)
        true = math.exp(x) if x < 700 else math.inf
        worst = max(worst, ulp_error(arith.fp_exp(bits, fmt), true, fmt))
    assert 0.5 <= worst <= bound, worst


def test_exp_specials() -> None:
    assert arith.fp_exp(0x0000, BF16) == 0x3F80 and arith.fp_exp(0x8000, BF16) == 0x3F80
    assert arith.fp_exp(BF16.inf_bits, BF16) == BF16.inf_bits
    assert arith.fp_exp(BF16.inf_bits | BF16.sign_bit, BF16) == 0
    assert arith.fp_exp(0x7FC1, BF16) == BF16.nan_bits
    assert arith.fp_exp(encode(89.0, BF16), BF16) == BF16.inf_bits
    assert arith.fp_exp(encode(-100.0, BF16), BF16) == 0


@pytest.mark.parametrize("name", ["fp32", "fp16", "bf16"])
def test_recip_against_numpy(name: str) -> None:
    fmt = FMT[name]
    dt, ut = NP[name]
    rng = np.random.default_rng(3)
    bits = range(1 << 16) if fmt.width == 16 else [int(b) for b in rng.integers(0, 1 << 32, 20000)]
    for b in bits:
        x = np.array([b], ut).view(dt)
        with np.errstate(all="ignore"):
            ref = (
                int((np.float32(1) / x.astype(np.float32)).astype(dt).view(ut)[0])
                if name != "fp32"
                else int((np.float32(1) / x).view(ut)[0])
            )
        ours = arith.fp_recip(b, fmt)
        assert ours == (fmt.nan_bits if classify(ref, fmt) == "nan" else ref), hex(b)
