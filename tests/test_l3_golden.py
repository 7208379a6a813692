"""golden/l3.py: the re-layout permutation, the K/V mappings, the processing units' order of operations,
one head's attention against float64 within a stated ULP bound, and the rank's error rules."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden import arith, l3
from golden.fp import decode
from golden.l3_spec import BANKS, CHIPS, ELEMS_PER_BURST, FULL, MAX_TOKENS, REDUCED, Err, Geometry, Op

F = l3.F
ULP_BOUND = 12  # ULPs of max|out| for N(0, 1) q, K, V (measured worst over the seeds below: ~8)


@given(st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=8).map(lambda b: b + b[: len(b) % 2]))
def test_relayout_inverse_round_trips(beats) -> None:
    assert l3.relayout(l3.relayout(beats), inverse=True) == beats
    assert l3.relayout(l3.relayout(beats, inverse=True)) == beats


def test_relayout_puts_each_element_whole_in_one_chip() -> None:
    vec = list(range(0x100, 0x100 + ELEMS_PER_BURST))  # distinct elements
    for c, word in enumerate(l3.words(vec, 0)):
        assert l3.elems(word) == [vec[l3.dim(c, 0, m)] for m in range(4)]  # chip c: elements c, 8+c, 16+c, 24+c


def test_relayout_rejects_half_window() -> None:
    with pytest.raises(ValueError, match="beats: 3 not allowed"):
        l3.relayout([0, 1, 2])


@pytest.mark.parametrize("g", [REDUCED, FULL, Geometry(8, 64)])
def test_mappings_are_bijections(g) -> None:
    n = 4 * g.banks
    k = {l3.k_address(t, r, g) for t in range(n) for r in range(g.bursts)}
    v = {l3.v_address(t, r, g) for t in range(n) for r in range(g.bursts)}
    assert len(k) == len(v) == n * g.bursts
    assert {b for b, _ in k} == {b for b, _ in v} == set(range(g.banks))
    # a token's K sits in one bank (consecutive columns); a V column holds 4 consecutive tokens
    assert all(l3.k_address(t, r, g)[0] == t % g.banks for t in range(n) for r in range(g.bursts))
    assert {l3.v_address(t, 0, g)[1] for t in range(8, 12)} == {2}


def test_geometry_errors_name_the_field() -> None:
    with pytest.raises(ValueError, match="d_head: 40 not allowed"):
        Geometry(banks=4, d_head=40)
    with pytest.raises(ValueError, match="banks: 8 not allowed"):
        Geometry(banks=8, d_head=128)
    assert FULL.banks == BANKS and FULL.chunk == 16 and MAX_TOKENS == 131072


def test_bank_score_order() -> None:
    rng = np.random.default_rng(3)
    a = [l3.to_fp16(x) for x in rng.standard_normal(8)]
    b = [l3.to_fp16(x) for x in rng.standard_normal(8)]
    aw, bw = [l3.words(a + [0] * 24, 0)[0]], [l3.words(b + [0] * 24, 0)[0]]
    p = [l3.mul(x, y) for x, y in zip(l3.elems(aw[0]), l3.elems(bw[0]), strict=True)]
    assert l3.bank_score(aw, bw) == l3.add(l3.add(p[0], p[1]), l3.add(p[2], p[3]))
    two = l3.bank_score(aw * 2, bw * 2)
    assert two == l3.add(l3.bank_score(aw, bw), l3.bank_score(aw, bw))


def test_bank_context_skips_disabled_tokens() -> None:
    one, two = l3.to_fp16(1.0), l3.to_fp16(2.0)
    word = sum(one << (16 * m) for m in range(4))
    assert l3.bank_context([word, word], [two, two], [True, False]) == [two] * 4
    assert l3.bank_context([word], [two], [False]) == [0] * 4


def test_chunk_softmax_is_a_distribution() -> None:
    rng = np.random.default_rng(5)
    scores = [l3.to_fp16(x) for x in rng.standard_normal(50) * 3]
    probs, stats = l3.chunk_softmax(scores, 16)
    total = sum(decode(p, F) for p in probs)
    assert len(probs) == 50 and abs(total - 1) < 0.01
    assert stats["max"] == arith.max_tree(scores + [l3.NEG_INF] * 14, F)
    with pytest.raises(ValueError, match="scores"):
        l3.chunk_softmax([], 16)


@pytest.mark.parametrize("n", [1, 7, 16, 100, 300])
@pytest.mark.parametrize("g", [REDUCED, FULL])
def test_head_within_ulp_bound_of_float64(n, g) -> None:
    worst = 0.0
    for seed in range(3):
        q, k, v = l3.random_head(np.random.default_rng(seed), n, g)
        out, _ = l3.head_attention(q, k, v, g)
        worst = max(worst, float(l3.error_ulps(out, l3.reference(q, k, v)).max()))
    assert worst <= ULP_BOUND, f"{worst:.1f} ULPs"


def test_head_matches_float64_order_of_magnitude_at_scale() -> None:
    q, k, v = l3.random_head(np.random.default_rng(9), 64, FULL, scale=3.0)
    out, _ = l3.head_attention(q, k, v, FULL)
    assert l3.error_ulps(out, l3.reference(q, k, v)).max() <= 4 * ULP_BOUND  # peaked softmax: exp's error


def test_head_rejects_bad_shapes() -> None:
    q, k, v = l3.random_head(np.random.default_rng(0), 2, REDUCED)
    with pytest.raises(ValueError, match="k, v"):
        l3.head_attention(q, [], [], REDUCED)
    with pytest.raises(ValueError, match="q, k, v"):
        l3.head_attention(q[:-1], k, v, REDUCED)


def _run(items, max_tokens=64):
    return l3.rank_run(items, REDUCED, max_tokens)


def test_rank_run_answers_the_head() -> None:
    q, k, v = l3.random_head(np.random.default_rng(1), 9, REDUCED)
    assert _run(l3.rank_items(q, k, v)) == (l3.head_attention(q, k, v, REDUCED)[0], 0)
    out, err = _run(l3.rank_items(q, k, v, n=4))
    assert err == 0 and out == l3.head_attention(q, k[:4], v[:4], REDUCED)[0]


def test_rank_run_errors() -> None:
    q, k, v = l3.random_head(np.random.default_rng(2), 3, REDUCED)
    items = l3.rank_items(q, k, v)
    assert _run(l3.rank_items(q, k, v, n=0))[1] == Err.LEN_ZERO
    assert _run(l3.rank_items(q, k, v, n=4))[1] == Err.LEN_OVER
    cut = [it for i, it in enumerate(items) if i != 3]  # a K beat lost: a partial burst, a token short
    assert _run(cut)[1] == Err.PARTIAL_BURST | Err.LEN_OVER
    no_q = [it for it in items if it[0] != Op.Q]
    assert _run(no_q)[1] == Err.PARTIAL_BURST
    q2, k2, v2 = l3.random_head(np.random.default_rng(2), 65, REDUCED)
    assert _run(l3.rank_items(q2, k2, v2, n=64))[1] == Err.LEN_OVER  # K/V beyond the rank's storage


def test_rank_run_mid_write() -> None:
    """A RUN while a write is open ends it: PARTIAL_BURST, its whole bursts kept (LEN_OVER counts them)."""
    q, k, v = l3.random_head(np.random.default_rng(3), 2, REDUCED)
    items = l3.rank_items(q, k, v)
    run = items[-1]
    k_end = 2 * REDUCED.bursts * 8  # K: 2 tokens of R bursts of 8 beats
    assert _run(items[:3] + [run])[1] == Err.PARTIAL_BURST | Err.LEN_OVER  # mid K: no token written
    mid_v = items[: k_end + 9] + [(Op.RUN, 1, 1)]  # V: its first token's burst landed, one beat open
    assert _run(mid_v)[1] == Err.PARTIAL_BURST
    assert _run(mid_v[:-1] + [run])[1] == Err.PARTIAL_BURST | Err.LEN_OVER
    mid_q = items[:-2] + [(Op.RUN, 0, 1)]  # Q's last beat not sent
    assert _run(mid_q)[1] == Err.PARTIAL_BURST | Err.LEN_ZERO


def test_rank_run_write_op_is_its_first_beats() -> None:
    """A write's op is its first beat's, the later beats' op ignored (the RTL latches it as the write opens),
    for a write that ends and for one a RUN cuts."""
    q, k, v = l3.random_head(np.random.default_rng(4), 2, REDUCED)
    items = l3.rank_items(q, k, v)
    k_end = 2 * REDUCED.bursts * 8  # K: 2 tokens of R bursts of 8 beats
    k_says_v = [items[0], *((Op.V, *it[1:]) for it in items[1:k_end]), *items[k_end:]]
    assert _run(k_says_v) == (l3.head_attention(q, k, v, REDUCED)[0], 0)
    v_says_k = [*items[: k_end + 1], *((Op.K, *it[1:]) for it in items[k_end + 1 : k_end + 9]), (Op.RUN, 1, 1)]
    assert _run(v_says_k)[1] == Err.PARTIAL_BURST  # V's first token landed; as K, V would be short: LEN_OVER


def test_error_ulps_scale() -> None:
    ref = np.array([1.0, -0.5])
    one_ulp = [l3.to_fp16(1.0 + 2.0**-10), l3.to_fp16(-0.5)]
    assert l3.error_ulps(one_ulp, ref).tolist() == [1.0, 0.0]
    assert math.isclose(float(l3.error_ulps([0, 0], np.zeros(2)).max()), 0.0)
    assert CHIPS == 8
