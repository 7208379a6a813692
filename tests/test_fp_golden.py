"""golden.fp against ml_dtypes: every representable value of the small formats, and float32/float64
inputs rounded to each; hypothesis properties for round trips and monotonicity."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden import fp

# these tests cast out-of-range values on purpose (overflow to Inf, NaN): numpy warns, we check
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

ML = {
    "fp32": np.float32,
    "fp16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e5m2": ml_dtypes.float8_e5m2,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
    "e8m0": ml_dtypes.float8_e8m0fnu,
}
SMALL = ["fp16", "bf16", "e5m2", "e4m3", "e2m1", "e8m0"]
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def ml_bits(values: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values).astype(ML[name])
    bits = arr.view(UINT[arr.dtype.itemsize]).astype(np.uint32)
    return bits & ((1 << fp.get_format(name).width) - 1)


@pytest.mark.parametrize("name", SMALL)
def test_decode_every_pattern_matches_ml_dtypes(name: str) -> None:
    fmt = fp.get_format(name)
    bits = np.arange(1 << fmt.width, dtype=np.uint32)
    ours = fp.decode_array(bits, fmt)
    ref = bits.astype(UINT[np.dtype(ML[name]).itemsize]).view(ML[name]).astype(np.float64)
    assert np.array_equal(ours, ref, equal_nan=True)
    num = ~np.isnan(ref)  # a NaN's sign is not part of its value
    assert np.array_equal(np.signbit(ours[num]), np.signbit(ref[num]))


@pytest.mark.parametrize("name", SMALL)
def test_encode_every_value_and_midpoint(name: str) -> None:
    """Every representable value, every midpoint between neighbours (ties) and the float32 values just
    off them. Probes are float32 because ml_dtypes converts float64 through float32 (double rounding);
    golden.fp rounds float64 once, checked against float32 in test_encode_fp32_random_float64."""
    fmt = fp.get_format(name)
    vals = fp.decode_array(np.arange(1 << fmt.width), fmt)
    finite = np.unique(vals[np.isfinite(vals)]).astype(np.float32)
    mids = (finite[:-1] + finite[1:]) / np.float32(2)
    probes = np.concatenate(
        [
            finite,
            mids,
            np.nextafter(mids, np.float32(np.inf)),
            np.nextafter(mids, np.float32(-np.inf)),
            np.array([np.inf, -np.inf, 0.0, -0.0, 3e38, -3e38, 1e-45], np.float32),
        ]
    )
    if fmt.style == "e8m0":
        # ml_dtypes maps zero/negatives to NaN (ours too, checked here) and rounds float32-subnormal
        # inputs up even below the midpoint (ours rounds them correctly, checked here)
        probes = probes[probes >= np.float32(2.0**-126)]
        assert fp.encode(0.0, fmt) == fmt.nan_bits and fp.encode(-1.0, fmt) == fmt.nan_bits
        assert fp.encode(1.49 * 2.0**-127, fmt) == 0x00 and fp.encode(1.5 * 2.0**-127, fmt) == 0x01
    ours = fp.encode_array(probes, fmt)
    ref = ml_bits(probes, name)
    bad = np.nonzero(ours != ref)[0]
    assert bad.size == 0, [(probes[i], hex(ours[i]), hex(ref[i])) for i in bad[:5]]


def test_encode_fp32_random_float64() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(20000) * np.exp2(rng.integers(-160, 130, 20000))
    assert np.array_equal(fp.encode_array(x, fp.FP32), x.astype(np.float32).view(np.uint32))


def test_nan_and_overflow_policies() -> None:
    assert fp.encode(math.nan, fp.BF16) == 0x7FC0
    assert fp.encode(1e10, fp.E4M3) == 0x7F and fp.encode(-math.inf, fp.E4M3) == 0xFF
    assert fp.encode(100.0, fp.E2M1) == 0x7 and fp.encode(-math.inf, fp.E2M1) == 0xF
    with pytest.raises(ValueError, match="x: NaN has no encoding in e2m1"):
        fp.encode(math.nan, fp.E2M1)
    with pytest.raises(ValueError, match=r"bits: .* out of range"):
        fp.decode(0x1FFFF, fp.BF16)
    with pytest.raises(ValueError, match="format: unknown 'fp12'"):
        fp.get_format("fp12")


def test_rtz_differs_from_rne() -> None:
    x = 1.0 + 2.0**-8 + 2.0**-9  # above the BF16 midpoint between 1 and 1+2^-7
    assert fp.encode(x, fp.BF16) == 0x3F81 and fp.encode(x, fp.BF16, "rtz") == 0x3F80


def test_round_pack_sticky_breaks_ties() -> None:
    # 1 + half an ULP is a tie (to even: 1.0); with a sticky bit below it is above the tie
    sig, exp = (1 << 8) | 1, -8
    assert fp.round_pack(0, sig, exp, fp.BF16) == 0x3F80
    assert fp.round_pack(0, sig, exp, fp.BF16, sticky=True) == 0x3F81


finite_f32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(st.sampled_from(["fp32", "fp16", "bf16", "e5m2", "e4m3"]), st.integers(0, 2**32 - 1))
def test_decode_encode_round_trip(name: str, raw: int) -> None:
    fmt = fp.get_format(name)
    bits = raw & ((1 << fmt.width) - 1)
    if fp.classify(bits, fmt) == "nan":
        assert fp.encode(fp.decode(bits, fmt), fmt) == fmt.nan_bits
    else:
        assert fp.encode(fp.decode(bits, fmt), fmt) == bits


@given(st.sampled_from(["fp16", "bf16", "e5m2", "e4m3", "e2m1"]), finite_f32, finite_f32)
def test_encode_is_monotonic(name: str, a: float, b: float) -> None:
    fmt = fp.get_format(name)
    lo, hi = sorted((a, b))
    da, db = fp.decode(fp.encode(lo, fmt), fmt), fp.decode(fp.encode(hi, fmt), fmt)
    if not (math.isnan(da) or math.isnan(db)):
        assert da <= db


@given(st.sampled_from(["fp16", "bf16", "e5m2", "e4m3", "e2m1"]), finite_f32)
def test_encode_matches_ml_dtypes_on_float32(name: str, x: float) -> None:
    assert fp.encode(x, fp.get_format(name)) == int(ml_bits(np.float32(x), name))


@given(st.lists(st.floats(-1e4, 1e4, width=32), min_size=32, max_size=32))
def test_mx_block_round_trip_error_bound(xs: list[float]) -> None:
    x = np.array(xs)
    scale, elems = fp.mx_quantize(x)
    y = fp.mx_dequantize(scale, elems)
    amax = np.max(np.abs(x))
    # elements lie in [-8, 8) units of 2**shared = 2**(floor(log2 amax) - 2); E2M1 rounds to within 1
    # unit and saturates (6..8) within 2; a scale clamped at 2**-127 rounds to within 2**-129
    tol = max(2.0 ** (math.frexp(amax)[1] - 2), 2.0**-129) if amax else 0.0
    assert np.all(np.abs(y - x) <= tol)


def test_mx_specials_and_errors() -> None:
    assert fp.mx_quantize(np.zeros(32))[0] == 0
    assert fp.mx_quantize(np.full(32, np.nan))[0] == 0xFF
    with pytest.raises(ValueError, match=r"x: shape \(31,\) not allowed"):
        fp.mx_quantize(np.zeros(31))


MX_ELEMS = ["e2m1", "e4m3", "e5m2"]


@pytest.mark.parametrize("elem", MX_ELEMS)
@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_mx_block_with_a_special_value_is_all_nan(elem: str, special: float) -> None:
    """OCP MX reference (microxcaling): a NaN or Inf anywhere makes the shared scale NaN, so every element
    of the block decodes as NaN — not a finite scale that silently shrinks the other values."""
    x = np.ones(32)
    x[7] = special
    scale, elems = fp.mx_quantize(x, fp.get_format(elem))
    assert scale == 0xFF and np.isnan(fp.mx_dequantize(scale, elems, fp.get_format(elem))).all()


def test_mx_e4m3_saturates_instead_of_nan() -> None:
    """A scaled value of 482.99 rounds above E4M3's max 448: the element saturates to 0x7E, not NaN 0x7F."""
    scale, elems = fp.mx_quantize(np.array([482.99] + [0.0] * 31), fp.E4M3)
    assert scale == 127 and elems[0] == 0x7E


@given(st.sampled_from(MX_ELEMS), st.lists(st.floats(-1e30, 1e30), min_size=32, max_size=32))
def test_mx_elements_are_finite_and_saturate(elem: str, xs: list[float]) -> None:
    """Every MX element type: finite input never yields an Inf or NaN element; each element is
    clip(x / X, +-max) rounded once (RNE)."""
    f = fp.get_format(elem)
    scale, elems = fp.mx_quantize(np.array(xs), f)
    emax = fp.decode(f.max_bits, f)
    shared = scale - fp.E8M0.bias
    for x, b in zip(xs, elems, strict=True):
        assert fp.classify(int(b), f) not in ("nan", "inf")
        assert int(b) == fp.encode(min(max(math.ldexp(x, -shared), -emax), emax), f)


@given(st.integers(2, 8), st.lists(st.floats(-300, 300), min_size=1, max_size=16), st.floats(0.01, 10))
def test_int_quantize_saturates_and_round_trips(bits: int, xs: list[float], scale: float) -> None:
    q = fp.quantize_int(np.array(xs), bits, scale)
    assert q.min() >= -(1 << (bits - 1)) and q.max() <= (1 << (bits - 1)) - 1
    inside = np.abs(np.array(xs) / scale) < (1 << (bits - 1)) - 1
    assert np.all(np.abs(fp.dequantize_int(q, scale) - np.array(xs))[inside] <= scale / 2 + 1e-9)


def test_int_quantize_bad_input() -> None:
    with pytest.raises(ValueError, match="bits: 9 not allowed; allowed 2..8"):
        fp.quantize_int(np.zeros(2), 9, 1.0)
    with pytest.raises(ValueError, match="scale: 0.0 not allowed"):
        fp.quantize_int(np.zeros(2), 8, 0.0)
