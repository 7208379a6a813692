"""golden.deca: compress/decompress, size accounting, the streams the PE reads, and bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden import deca, fp
from golden.deca_spec import TILE, TILE_COLS, TILE_ROWS
from golden.fp import BF16, decode, encode
from hw.deca import cycles

DENSITIES = [1.0, 0.5, 0.3, 0.2, 0.1, 0.05, 0.0]


def weights(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(TILE) * 0.05


def as_float(bits: np.ndarray) -> np.ndarray:
    return np.array([decode(int(b), BF16) for b in bits])


@pytest.mark.parametrize("name", sorted(deca.FORMATS))
@pytest.mark.parametrize("density", DENSITIES)
def test_compress_decompress_approximates(name: str, density: float) -> None:
    fmt = deca.get_format(name)
    x = weights(1)
    tile = deca.compress(x, fmt, density, sparse=density < 1)
    y = as_float(deca.decompress(tile))
    kept = np.zeros(TILE, bool)
    kept[np.argsort(-np.abs(x), kind="stable")[: round(density * TILE)]] = True
    assert np.all(y[~kept] == 0)
    # half an ULP relative, plus the format's absolute floor (subnormal step, or half a scaled step);
    # scaled formats add the BF16 rounding of the scale (clipping at the top) and of the product
    amax = float(np.max(np.abs(x)))
    rel, floor = {
        "q16": (2**-8, 0),
        "q8": (2**-3, 2**-17),
        "q8_e4m3": (2**-4, 2**-10),
        "q4": (2**-8, amax / 4),
        "int8": (2**-8, amax * (1 / 254 + 2**-8)),
        "int4": (2**-8, amax * (1 / 14 + 2**-8)),
    }[name]
    assert np.all(np.abs(y[kept] - x[kept]) <= rel * np.abs(x[kept]) + floor)


def test_q16_dense_is_exact_bf16() -> None:
    x = weights(2)
    out = deca.decompress(deca.compress(x, deca.Q16))
    assert np.array_equal(out, np.array([encode(v, BF16) for v in x], np.uint16))


def test_mxfp4_matches_golden_fp_mx_blocks() -> None:
    x = weights(3)
    tile = deca.compress(x, deca.Q4_MXFP4)
    out = as_float(deca.decompress(tile))
    for row in range(TILE_ROWS):
        block = x[row * TILE_COLS : (row + 1) * TILE_COLS]
        s, elems = fp.mx_quantize(block)
        assert encode(decode(s, fp.E8M0), BF16) == tile.scales[row]
        assert np.array_equal(out[row * TILE_COLS : (row + 1) * TILE_COLS], fp.mx_dequantize(s, elems))


@pytest.mark.parametrize("name", ["q16", "q8", "q4"])
@pytest.mark.parametrize("density", [0.5, 0.3, 0.2, 0.1, 0.05])
def test_compression_factor_formula(name: str, density: float) -> None:
    """16/(Q*d+1) for a sparse tile without scales; scales add their stored bytes."""
    fmt = deca.get_format(name)
    tile = deca.compress(weights(4), fmt, density)
    d = tile.density
    if fmt.group is None:
        assert deca.compression_factor(tile) == pytest.approx(deca.paper_compression_factor(fmt.bits, d))
    assert tile.nbytes() == math.ceil(tile.nnz * fmt.bits / 8) + 64 + fmt.n_scales * fmt.scale_bytes


def test_dense_sizes() -> None:
    assert deca.compress(weights(5), deca.Q8_E5M2).nbytes() == 512
    assert deca.compress(weights(5), deca.Q4_MXFP4).nbytes() == 256 + 16  # 4.25 bits per weight


def test_bad_input_names_the_field() -> None:
    tile = deca.compress(weights(6), deca.Q8_E5M2, 0.3)
    with pytest.raises(ValueError, match=r"codes: 153 values but the bitmask has 154 ones"):
        deca.CompressedTile(tile.fmt, tile.codes[:-1], tile.mask, None).check()
    with pytest.raises(ValueError, match=r"scales: 0 given; format q4 needs 16"):
        deca.CompressedTile(deca.Q4_MXFP4, np.zeros(512, np.uint16), None, np.zeros(0, np.uint16)).check()
    with pytest.raises(ValueError, match=r"codes: 0x10 does not fit in 4 bits"):
        deca.CompressedTile(deca.INT4, np.full(512, 16, np.uint16), None, np.zeros(16, np.uint16)).check()
    with pytest.raises(ValueError, match=r"density: 1.5 not allowed; allowed 0..1"):
        deca.compress(weights(6), deca.Q8_E5M2, 1.5)
    with pytest.raises(ValueError, match=r"density: 0.5 needs a bitmask"):
        deca.compress(weights(6), deca.Q8_E5M2, 0.5, sparse=False)
    with pytest.raises(ValueError, match=r"bits: 9 not allowed; allowed 1..8"):
        deca.DecaFormat("x", 9, tuple(range(512)))
    with pytest.raises(ValueError, match=r"table: 3 entries; a 2-bit format needs 4"):
        deca.DecaFormat("x", 2, (0, 1, 2))
    with pytest.raises(ValueError, match=r"group: 24 not allowed"):
        deca.DecaFormat("x", 2, (0, 1, 2, 3), group=24)
    with pytest.raises(ValueError, match=r"format: unknown 'q3'"):
        deca.get_format("q3")
    with pytest.raises(ValueError, match=r"16-bit values bypass the LUT"):
        deca.lut_image(deca.Q16)


@st.composite
def formats(draw) -> deca.DecaFormat:
    bits = draw(st.integers(1, 8))
    table = tuple(draw(st.lists(st.integers(0, 0xFFFF), min_size=1 << bits, max_size=1 << bits)))
    group = draw(st.sampled_from([None, 32, 64, 128, 256, 512]))
    return deca.DecaFormat("fuzz", bits, table, group=group)


@given(formats(), st.sampled_from([0.0, 1.0, 0.5, 0.05, 0.97]), st.integers(0, 2**32 - 1), st.booleans())
def test_random_tiles_stream_round_trip(fmt: deca.DecaFormat, density: float, seed: int, sparse: bool) -> None:
    """Packing the values into SQQ lines and the mask into W-bit words loses nothing."""
    rng = np.random.default_rng(seed)
    tile = deca.random_tile(rng, fmt, density if sparse else 1.0, sparse)
    lines = deca.sqq_lines(tile)
    stream = sum(line << (512 * i) for i, line in enumerate(lines))
    assert [(stream >> (k * fmt.bits)) & ((1 << fmt.bits) - 1) for k in range(tile.nnz)] == list(tile.codes)
    assert len(lines) == max(1, math.ceil(tile.nnz * fmt.bits / 512))  # an empty tile sends one line
    for w in (8, 32, 64):
        words = deca.mask_words(tile, w)
        if tile.mask is not None:
            assert [bool(words[i // w] >> (i % w) & 1) for i in range(512)] == list(tile.mask)
    image = deca.lut_image(fmt)
    assert all(image[a] == fmt.table[a % (1 << fmt.bits)] for a in range(256))
    out = deca.decompress(tile)
    assert out.shape == (512,) and out.dtype == np.uint16


def test_bubble_formula_edges() -> None:
    assert cycles.lq(8, 8, 32) == 8 and cycles.lq(7, 8, 32) == 16 and cycles.lq(4, 8, 32) == 32
    assert cycles.lq(16, 8, 32) == 32 and cycles.lq(4, 64, 64) == 64
    assert cycles.bpv(32, 8, 1.0) == 3 and cycles.bpv(32, 32, 1.0) == 0
    assert cycles.bpv(32, 8, 0.0) == pytest.approx(0.0)
    # Monte Carlo agrees with the closed form
    rng = np.random.default_rng(0)
    nnz = rng.binomial(32, 0.3, 200000)
    mc = np.mean(np.maximum(1, np.ceil(nnz / 8)) - 1)
    assert mc == pytest.approx(cycles.bpv(32, 8, 0.3), abs=0.01)
    with pytest.raises(ValueError, match="bits: 12 not allowed"):
        cycles.lq(12, 8, 32)


def test_mx_special_values_agree_in_compress_decompress_and_pe() -> None:
    """An Inf and a NaN in two MXFP4 groups: the OCP rule (golden.fp.mx_quantize) makes those groups'
    scales NaN; decompress and the PE's contract both give NaN for exactly those 32 elements each."""
    x = weights(9)
    x[70], x[300] = np.inf, np.nan
    tile = deca.compress(x, deca.Q4_MXFP4)
    assert [int(s) for s in tile.scales[[2, 9]]] == [BF16.nan_bits] * 2
    for out in (
        deca.decompress(tile),
        deca.pe_decompress(deca.TileStreams.of(tile, 32), deca.lut_image(deca.Q4_MXFP4), 32)[0],
    ):
        vals = np.array([decode(int(b), BF16) for b in out])
        group_nan = np.isnan(vals).reshape(-1, 32).all(axis=1)
        assert list(np.flatnonzero(group_nan)) == [2, 9] and not np.isnan(vals[:64]).any()


def test_int_groups_reject_non_finite_weights() -> None:
    x = weights(4)
    x[3] = np.inf
    with pytest.raises(ValueError, match="dense: Inf/NaN has no encoding in int4"):
        deca.compress(x, deca.INT4)
