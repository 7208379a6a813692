"""golden.duplex: the vectorised GEMM equals golden.arith's bit-level ops, the units agree with float64,
and the module's protocol flags every malformed transaction."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import arith, duplex
from golden.duplex_spec import FULL, REDUCED, Err, Geometry, Op
from golden.fp import FP16, FP32
from golden.softmax import softmax
from tb.stimulus import edge_values, random_value

EDGES = edge_values(FP16)


def scalar_tile(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The module docstring's order with golden.arith's bit-level operations, one output at a time."""
    out = np.zeros((x.shape[0], w.shape[0]), dtype=np.uint32)
    for j in range(x.shape[0]):
        for o in range(w.shape[0]):
            acc = [FP32.sign_bit, FP32.sign_bit]
            for k in range(w.shape[1]):
                prod = arith.fp_mul(int(w[o, k]), int(x[j, k]), FP16, FP32)
                acc[k % 2] = arith.fp_add(prod, acc[k % 2], FP32)
            out[j, o] = arith.fp_add(acc[0], acc[1], FP32)
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(1, 9), st.integers(1, 3))
def test_gemm_tile_is_the_bit_level_order(seed: int, m: int, k: int, n: int) -> None:
    rng = random.Random(seed)

    def pick() -> int:
        return rng.choice(EDGES) if rng.random() < 0.2 else random_value(rng, FP16, exp_span=12)

    w = np.array([[pick() for _ in range(k)] for _ in range(m)], dtype=np.uint16)
    x = np.array([[pick() for _ in range(k)] for _ in range(n)], dtype=np.uint16)
    assert np.array_equal(duplex.gemm_tile(w, x), scalar_tile(w, x))


def test_signed_zero_and_specials() -> None:
    neg0, one = FP16.sign_bit, duplex.ONE
    y = duplex.gemm_tile(np.array([[neg0, neg0]]), np.array([[one, one]]))
    assert int(y[0, 0]) == FP32.sign_bit  # -0 + -0 stays -0: the accumulators start at -0
    y = duplex.gemm_tile(np.array([[FP16.inf_bits, FP16.inf_bits | FP16.sign_bit]]), np.array([[one, one]]))
    assert int(y[0, 0]) == FP32.nan_bits  # Inf - Inf: the canonical NaN


def test_fp32_to_fp16_matches_numpy() -> None:
    rng = np.random.default_rng(3)
    vals = np.concatenate(
        [
            rng.standard_normal(2000).astype(np.float32) * 2.0 ** rng.integers(-30, 20, 2000),
            np.array([65519.0, 65520.0, 2.0**-25, 2.0**-24 * 1.5], dtype=np.float32),
        ]
    )
    with np.errstate(over="ignore"):  # 65520 rounds to Inf in both
        halves = vals.astype(np.float16).view(np.uint16)
    for v, h in zip(vals, halves, strict=True):
        assert duplex.fp32_to_fp16(int(np.float32(v).view(np.uint32))) == int(h)


def test_gemm_tiles_close_to_float64() -> None:
    rng = np.random.default_rng(1)
    w, x = duplex.random_fp16(rng, (16, 256)), duplex.random_fp16(rng, (3, 256))
    got = duplex.fp16_value(duplex.gemm(w, x, k_tile=64))
    ref = duplex.fp16_value(x) @ duplex.fp16_value(w).T
    assert np.all(np.abs(got - ref) <= np.abs(ref) * 2.0**-10 + 2.0**-14)


@pytest.mark.parametrize("n", [1, 7, 64, 65, 300])
def test_softmax_close_to_float64(n: int) -> None:
    rng = np.random.default_rng(n)
    s = duplex.random_fp16(rng, n, scale=3.0)
    p, r, err = softmax(s.tolist(), lanes=64)
    assert err == 0 and len(p) % 64 == 0
    ref = np.exp(duplex.fp16_value(s) - duplex.fp16_value(s).max())
    ref /= ref.sum()
    got = duplex.fp16_value(p[:n])
    assert np.all(np.abs(got - ref) <= 4 * 2.0**-11 * ref.max())
    assert all(x == 0 for x in p[n:])  # padding lanes: exp(-Inf) = 0
    e, r2, _ = softmax(s.tolist(), lanes=64, normalize=False)
    assert r2 == r and [arith.fp_mul(a, r, FP16) for a in e] == p  # deferred: the same p once scaled


def test_softmax_edges() -> None:
    assert softmax([FP16.nan_bits, 0], 4)[0][0] == FP16.nan_bits
    p, _, _ = softmax([0x7BFF, 0xFBFF, 0], 4)  # +max, -max, 0: one-hot
    assert duplex.fp16_value(p[:3]).tolist() == [1.0, 0.0, 0.0]
    assert softmax([0] * 9, 4, max_scores=8)[2] != 0
    with pytest.raises(ValueError, match="scores"):
        softmax([], 4)


def test_silu_gate_close_to_float64() -> None:
    rng = np.random.default_rng(5)
    g, u = duplex.random_fp16(rng, 500, 3.0), duplex.random_fp16(rng, 500)
    got = duplex.fp16_value([duplex.silu_gate(int(a), int(b)) for a, b in zip(g, u, strict=True)])
    gf, uf = duplex.fp16_value(g), duplex.fp16_value(u)
    ref = gf / (1 + np.exp(-gf)) * uf
    assert np.all(np.abs(got - ref) <= np.abs(ref) * 4 * 2.0**-11 + 2.0**-20)


@pytest.mark.parametrize("heads", [1, 4, 8])
def test_gqa_decode_close_to_float64(heads: int) -> None:
    rng = np.random.default_rng(heads)
    d, length = 128, 200
    q = duplex.scale_q(duplex.random_fp16(rng, (heads, d)))
    k, v = duplex.random_fp16(rng, (length, d)), duplex.random_fp16(rng, (length, d))
    got = duplex.fp16_value(duplex.gqa_decode(q, k, v, lanes=64, k_tile=64))
    ref = duplex.reference_attention(q, k, v)
    assert np.all(np.abs(got - ref) <= 8 * 2.0**-11 * np.abs(ref).max(axis=1, keepdims=True))


def test_descriptor_flags() -> None:
    g = REDUCED
    assert g.check(0, 4, 1) == Err.ZERO_DIM
    assert g.check(5, 4, 1) == Err.M_ALIGN
    assert g.check(4, 6, 1) == Err.K_ALIGN
    assert g.check(4, 4 * (g.lane_words + 1), 1) == Err.BUF_OVER
    assert g.check(4, 4, g.lanes * g.lane_words) == 0
    assert g.check(4, 4, g.lanes * g.lane_words + 1) == Err.BUF_OVER
    assert FULL.lane_words * FULL.rows * FULL.lanes * 2 == 8192 and FULL.macs == 512


def test_geometry_errors_name_the_field() -> None:
    with pytest.raises(ValueError, match="rows"):
        Geometry(rows=3)
    with pytest.raises(ValueError, match="buffer_bytes"):
        Geometry(buffer_bytes=100)


def test_module_run_protocol() -> None:
    g, rng = REDUCED, np.random.default_rng(2)
    w, x = duplex.random_fp16(rng, (8, 8)), duplex.random_fp16(rng, (3, 8))
    good = duplex.module_items(w, x, g)
    out = duplex.module_run(good, g)
    y = duplex.gemm_tile(w, x)
    assert [o[0] for o in out] == [y[j, :4].tolist() for j in range(3)] + [y[j, 4:].tolist() for j in range(3)]
    assert [o[1] for o in out] == [0] * 5 + [1]
    lost = good[:5] + good[6:]  # one X beat lost: MALFORMED, and the next transaction is intact
    assert [o[2] for o in duplex.module_run(lost + good, g)] == [int(Err.MALFORMED)] + [0] * 6
    early = good[:4] + [(Op.X, 0, 1)] + good  # last too early
    assert duplex.module_run(early, g)[0][2] == Err.MALFORMED
    no_last = good[:-1] + [(Op.W, good[-1][1], 0), (Op.X, 0, 1)]  # the final beat without last
    out = duplex.module_run(no_last, g)
    assert [o[2] for o in out] == [0, 0, 0, int(Err.MALFORMED)]  # block 0 out, block 1 never completes
    with pytest.raises(ValueError, match="last"):
        duplex.module_run(good[:-1], g)
    assert math.isclose(duplex.fp16_value(duplex.fp32_to_fp16(0x3F800000)), 1.0)


def test_stack_runs_each_module_on_its_rows() -> None:
    """A stack of 2 modules: module d computes rows [d*m, (d+1)*m); an output item holds both row blocks."""
    g, rng = Geometry(rows=4, lanes=2, buffer_bytes=256, modules=2), np.random.default_rng(5)
    w, x = duplex.random_fp16(rng, (16, 8)), duplex.random_fp16(rng, (3, 8))  # m = 8 rows per module
    out = duplex.module_run(duplex.module_items(w, x, g), g)
    y = duplex.gemm_tile(w, x)
    blocks = [np.concatenate([y[:, d * 8 + b * 4 : d * 8 + b * 4 + 4] for d in range(2)], axis=1) for b in range(2)]
    assert [o[0] for o in out] == [blk[j].tolist() for blk in blocks for j in range(3)]
    with pytest.raises(ValueError, match="modules"):
        duplex.module_items(w[:15], x, g)
    with pytest.raises(ValueError, match="modules: 33 not allowed"):
        Geometry(modules=33)
