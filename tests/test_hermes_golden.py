"""golden.hermes: the bit-serial product is exact, the GEMV modes equal an independent float32 re-run of
their stated order (numpy's float32 adds are IEEE round-to-nearest-even), and the neuron state table
follows the paper's rules and worked example."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import hermes
from golden.fp import FP16, FP32, decode
from golden.hermes_spec import MAX_BATCH, REDUCED, ActErr, ActOp, Err, Gemv, Mode, Op, pack_desc
from tb.stimulus import edge_values, random_value

EDGES = edge_values(FP16)


def _fp16(rng: random.Random, shape: tuple[int, int], edge: float = 0.1) -> np.ndarray:
    vals = [
        rng.choice(EDGES) if rng.random() < edge else random_value(rng, FP16, exp_span=8)
        for _ in range(shape[0] * shape[1])
    ]
    return np.array(vals, np.uint16).reshape(shape)


def _tree32(xs: np.ndarray) -> np.float32:
    while len(xs) > 1:
        xs = (xs[0::2] + xs[1::2]).astype(np.float32)
    return xs[0]


def float32_dot(w: np.ndarray, x: np.ndarray, g: Gemv) -> np.ndarray:
    """The dot mode's order in numpy float32: per beat, a tree over the multipliers for each lane and a tree
    over the lanes; beat sums accumulated from -0, rounded to FP16."""
    beat = g.beat
    wf, xf = w.view(np.float16).astype(np.float32), x.view(np.float16).astype(np.float32)
    pad = -w.shape[1] % beat
    wf, xf = np.pad(wf, ((0, 0), (0, pad))), np.pad(xf, ((0, 0), (0, pad)))
    out = np.zeros((x.shape[0], w.shape[0]), np.float16)
    with np.errstate(all="ignore"):
        for i in range(w.shape[0]):
            for b in range(x.shape[0]):
                acc = np.float32(-0.0)
                for c in range(0, wf.shape[1], beat):
                    p = (wf[i, c : c + beat] * xf[b, c : c + beat]).reshape(g.multipliers, g.lanes)
                    acc = np.float32(acc + _tree32(np.array([_tree32(p[:, t]) for t in range(g.lanes)])))
                out[b, i] = np.float16(acc)
    return out.view(np.uint16)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit patterns, any NaN equal to any NaN (numpy's NaN payloads are not canonical)."""
    fa, fb = a.view(np.float16), b.view(np.float16)
    return bool(np.all((a == b) | (np.isnan(fa) & np.isnan(fb))))


def test_product_is_exact() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        a, b = (rng.choice(EDGES) if rng.random() < 0.2 else random_value(rng, FP16, exp_span=30) for _ in "ab")
        p, want = hermes.mul(a, b), decode(a, FP16) * decode(b, FP16)  # float64 holds the 22-bit product
        if np.isnan(want):
            assert p == FP32.nan_bits
        else:
            assert decode(p, FP32) == want and (p >> 31) == ((a ^ b) >> 15)
    assert hermes.mul(FP16.inf_bits, 0) == FP32.nan_bits


def test_narrowing_matches_numpy() -> None:
    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(over="ignore"):
        want = bits.view(np.float32).astype(np.float16).view(np.uint16)
    got = np.array([hermes.to_fp16(int(v)) for v in bits], np.uint16)
    assert _same(got, want)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(1, 20), st.integers(1, 3))
def test_dot_is_the_stated_order(seed: int, rows: int, k: int, batch: int) -> None:
    rng = random.Random(seed)
    w, x = _fp16(rng, (rows, k)), _fp16(rng, (batch, k))
    assert _same(hermes.gemv_dot(w, x, REDUCED), float32_dot(w, x, REDUCED))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 20), st.integers(1, 3))
def test_axpy_is_the_stated_order(seed: int, cols: int, d: int, batch: int) -> None:
    rng = random.Random(seed)
    w, a = _fp16(rng, (cols, d)), _fp16(rng, (batch, cols))
    wf, af = w.view(np.float16).astype(np.float32), a.view(np.float16).astype(np.float32)
    acc = np.full((batch, d), -0.0, np.float32)
    with np.errstate(all="ignore"):
        for i in range(cols):
            acc = (acc + af[:, i : i + 1] * wf[i]).astype(np.float32)
    got = hermes.gemv_axpy(w, a, REDUCED)
    assert got.shape == (batch, d + (-d % REDUCED.beat))
    with np.errstate(over="ignore"):
        assert _same(got[:, :d], acc.astype(np.float16).view(np.uint16))


def test_signed_zero_and_padding() -> None:
    g = Gemv(multipliers=1, lanes=2, buffer_bytes=8)
    neg = np.array([[FP16.sign_bit] * 2], np.uint16)
    assert hermes.gemv_dot(neg, np.array([[0x3C00] * 2], np.uint16), g)[0, 0] == FP16.sign_bit  # -0 stays -0
    # an odd K is padded with +0 products: (-0) + (+0) = +0 in the last tree
    assert hermes.gemv_dot(neg[:, :1], np.array([[0x3C00]], np.uint16), g)[0, 0] == 0


def test_state_table_rules() -> None:
    # the paper's worked example (Fig. 7): neuron 6 fires 7 -> 11; neuron 5 does not, 10 -> 9
    assert list(hermes.update_states(np.array([7, 10]), np.array([True, False]))) == [11, 9]
    assert list(hermes.update_states(np.array([13, 0]), np.array([True, False]))) == [15, 0]  # saturating
    corr = np.array([[0, 1]] * 16)
    states = np.arange(16)
    for fired, first in (([0, 0], None), ([1, 0], 10), ([1, 1], 4)):  # s2 = 0, 1, 2
        got = hermes.predict(states, corr, np.array(fired, bool))
        assert list(got) == [first is not None and s >= first for s in states]
    assert list(hermes.init_states(np.array([0.95, 0.01, 0.02, 0.90, 0.5]))) == [15, 0, 1, 14, 8]
    assert list(hermes.hot(np.array([10, 11]))) == [False, True]
    with pytest.raises(ValueError, match="corr"):
        hermes.predict(states, np.zeros((16, 3), int), np.zeros(2, bool))
    with pytest.raises(ValueError, match="freq"):
        hermes.init_states(np.array([1.5]))


def test_geometry_is_checked() -> None:
    for bad in ({"multipliers": 3}, {"lanes": 16}, {"serial_bits": 0}, {"buffer_bytes": 100}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Gemv(**bad)
    assert Gemv().beat == 2048 and Gemv().serial_steps == 11 and Gemv(serial_bits=4).serial_steps == 3


def test_command_stream_flags() -> None:
    g = REDUCED
    rng = random.Random(5)
    w, x = _fp16(rng, (2, 2 * g.beat)), _fp16(rng, (3, 2 * g.beat))
    items = hermes.gemv_items(Mode.DOT, w, x, g)
    out = hermes.gemv_run(items, g)
    assert [y[0] for y, _, _ in out] == list(hermes.gemv_dot(w, x, g).T.ravel()) and out[-1][1] == 1
    for desc, err in [
        ((0, 0, 1, 1), Err.ZERO_DIM),
        ((0, 1, 1, MAX_BATCH + 1), Err.BATCH),
        ((0, 1, g.buffer_bytes // (2 * g.beat) + 1, 1), Err.BUF_OVER),
        ((1, g.buffer_bytes // 2 + 1, 1, 1), Err.BUF_OVER),
        ((0, 1, 1, 1), Err.MALFORMED),
    ]:
        assert hermes.gemv_run([(Op.DESC, pack_desc(*desc), 1)], g) == [([0] * g.multipliers, 1, int(err))]
    # a W beat lost in row 2: row 1's results, then the error; the next transaction is unaffected
    lost = items[:-2] + items[-1:]
    out = hermes.gemv_run(lost + items, g)
    assert [e for _, _, e in out[:4]] == [0, 0, 0, int(Err.MALFORMED)] and out[4:] == hermes.gemv_run(items, g)
    with pytest.raises(ValueError, match="without a last"):
        hermes.gemv_run(items[:-1], g)


def test_activation_ops_match_numpy() -> None:
    rng = random.Random(9)
    a = [random_value(rng, FP16, exp_span=6) for _ in range(64)] + EDGES
    b = [random_value(rng, FP16, exp_span=6) for _ in range(64)] + EDGES[::-1]
    fa, fb = np.array(a, np.uint16).view(np.float16), np.array(b, np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        merge = (fa + fb).view(np.uint16)
        scale = (fa * fb[0]).view(np.uint16)
    assert _same(np.array(hermes.elementwise(ActOp.MERGE, a, b), np.uint16), merge)
    assert _same(np.array(hermes.elementwise(ActOp.SCALE, a, b), np.uint16), scale)
    relu = hermes.elementwise(ActOp.RELU, a, b)
    assert all(r == (x if np.isnan(v) or not (x >> 15) else 0) for r, x, v in zip(relu, a, fa, strict=True))
    assert hermes.relu(FP16.sign_bit) == 0 and hermes.relu(FP16.nan_bits | FP16.sign_bit) != 0


def test_activation_transactions() -> None:
    lanes, cap = 4, 32
    scores = [random_value(random.Random(2), FP16, exp_span=3) for _ in range(6)]
    out = hermes.act_run(hermes.act_items(ActOp.SOFTMAX, scores, None, lanes), lanes, cap)
    assert len(out) == 2 and out[1][1] == 1
    assert sum(decode(p, FP16) for y, _, _ in out for p in y) == pytest.approx(1, abs=0.01)
    assert out[1][0][2:] == [0, 0]  # lanes past n are -Inf scores: probability +0
    relu = hermes.act_items(ActOp.RELU, [0x3C00] * 5, None, lanes)
    flagged = [
        (hermes.act_items(ActOp.RELU, [], None, lanes), ActErr.ZERO_LEN, 0),
        (hermes.act_items(ActOp.SOFTMAX, [0] * (cap + 1), None, lanes), ActErr.LEN_OVER, 0),
        ([dict(relu[0], n=9), relu[1]], ActErr.MALFORMED, 1),  # last early: beat 1 closes it
        ([dict(relu[0], last=0), dict(relu[1], op=ActOp.MERGE)], ActErr.MALFORMED, 1),  # op change
    ]
    for beats, err, good in flagged:
        out = hermes.act_run(beats + relu, lanes, cap)
        assert [e for _, _, e in out[: good + 1]] == [0] * good + [int(err)]
        assert out[good + 1 :] == hermes.act_run(relu, lanes, cap)  # the next transaction is unaffected
