"""L3 DIMM-PIM decode attention, bit-exact, in the hardware's order and precision (L3 §4; shared/notes
§1.4). Every value is an FP16 bit pattern; every operation is one golden.arith FP16 operation (rounded
once, RNE, gradual underflow), so the RTL (hw/l3) matches bit for bit.

* **Re-layout** (§4.1): within each 2-beat window of a host burst, output beat j, byte i is input beat
  i//4, byte 2*(i%4)+j — chip i receives element 8w+i of window w whole (low byte, then high byte). Over
  a 64-byte burst chip i holds elements i, 8+i, 16+i, 24+i as one 64-bit word (element m at bits 16m).
  :func:`relayout` with ``inverse`` undoes it for read-back.
* **K mapping** (§4.2, Fig. 5d): burst r of token t's K goes to bank t mod B, column (t div B)*R + r
  (R = d_head/32 bursts): a token's elements sit in one bank per chip, tokens spread over banks.
* **V mapping** (Fig. 5e): token t belongs to bank group g = t mod 4; its burst r goes to bank g*R + r,
  column t div 4.
* **Bank PU, score mode**: per RD, the 4 FP16 products of its word and the shared-buffer word go through
  a pairwise tree ((p0+p1)+(p2+p3)); the first RD's tree value loads the accumulator, later ones add to
  it (acc + tree), in RD order.
* **Bank PU, context mode**: per RD (one token of its group), acc[m] = v[m]*s (first enabled token) or
  acc[m] + v[m]*s; a disabled token (beyond the head's length) leaves the accumulators alone.
* **Adder unit**: score — the 8 chips' partials of one bank through an 8-input pairwise tree; context —
  the 4 bank groups' accumulators of one dimension through a 4-input tree.
* **Chunk softmax** (§4.3): chunk c holds the scores of banks 0..B-1 (tokens cB..cB+B-1; past the head's
  end they are -Inf). m_c = max tree; e_i = exp(s_i - m_c) (subtract, then golden.arith.fp_exp); l_c = add
  tree of the e_i. Running statistics: the first chunk sets M = m_c, S = l_c; later ones M' = max(M, m_c),
  S = S*exp(M - M') + l_c*exp(m_c - M'). Then r = 1/S (golden.arith.fp_recip) and p_i = e_i * (exp(m_c -
  M) * r).
* **Head**: q is pre-scaled by 1/sqrt(d_head) on the GPU [S]; scores are q.k_t as above; the output
  dimension d = 32r + c + 8m comes from chip c, burst r, element m.

The agreement with float64 attention is measured in tests/test_l3_golden.py (:func:`error_ulps`).
"""

from __future__ import annotations

import math

import numpy as np

from golden import arith
from golden.fp import FP16, decode_array, encode, encode_array
from golden.l3_spec import (
    BEAT_BITS,
    BEATS_PER_BURST,
    CHIPS,
    ELEM_BITS,
    ELEMS_PER_BURST,
    ELEMS_PER_RD,
    V_GROUPS,
    WINDOW_BEATS,
    Err,
    Geometry,
    Op,
)
from golden.softmax import NEG_INF

F = FP16
MASK16 = (1 << ELEM_BITS) - 1


def mul(a: int, b: int) -> int:
    return arith.fp_mul(a, b, F)


def add(a: int, b: int) -> int:
    return arith.fp_add(a, b, F)


def sub(a: int, b: int) -> int:
    return arith.fp_add(a, b ^ F.sign_bit, F)


def exp(x: int) -> int:
    return arith.fp_exp(x, F)


# --- data layout -----------------------------------------------------------------------------------


def relayout(beats: list[int], inverse: bool = False) -> list[int]:
    """Re-layout (or undo it) over 2-beat windows of 64-bit beats (module docstring)."""
    if len(beats) % WINDOW_BEATS:
        raise ValueError(f"beats: {len(beats)} not allowed; whole {WINDOW_BEATS}-beat windows")
    out = []
    for w in range(0, len(beats), WINDOW_BEATS):
        src = [[(beats[w + b] >> (8 * i)) & 0xFF for i in range(8)] for b in range(WINDOW_BEATS)]
        dst = [[0] * 8 for _ in range(WINDOW_BEATS)]
        for j in range(WINDOW_BEATS):
            for i in range(8):
                if inverse:
                    dst[i // 4][2 * (i % 4) + j] = src[j][i]
                else:
                    dst[j][i] = src[i // 4][2 * (i % 4) + j]
        out += [sum(byte << (8 * i) for i, byte in enumerate(row)) for row in dst]
    return out


def burst_beats(vec: list[int], r: int) -> list[int]:
    """Host beats of burst r of a vector of FP16 bit patterns: element k at bytes 2k, 2k+1 of the burst."""
    elems = vec[r * ELEMS_PER_BURST : (r + 1) * ELEMS_PER_BURST]
    per_beat = BEAT_BITS // ELEM_BITS
    return [
        sum(e << (ELEM_BITS * i) for i, e in enumerate(elems[b * per_beat : (b + 1) * per_beat]))
        for b in range(BEATS_PER_BURST)
    ]


def chip_words(beats: list[int]) -> list[int]:
    """The 64-bit word each chip stores from 8 re-laid-out beats: chip c takes byte c of every beat."""
    return [sum(((beats[b] >> (8 * c)) & 0xFF) << (8 * b) for b in range(BEATS_PER_BURST)) for c in range(CHIPS)]


def words(vec: list[int], r: int) -> list[int]:
    """Burst r of a vector as the chips hold it after re-layout."""
    return chip_words(relayout(burst_beats(vec, r)))


def elems(word: int) -> list[int]:
    return [(word >> (ELEM_BITS * m)) & MASK16 for m in range(ELEMS_PER_RD)]


def dim(c: int, r: int, m: int) -> int:
    """The vector dimension element m of chip c's word of burst r holds."""
    return ELEMS_PER_BURST * r + c + CHIPS * m


def k_address(t: int, r: int, g: Geometry) -> tuple[int, int]:
    return t % g.banks, (t // g.banks) * g.bursts + r


def v_address(t: int, r: int, g: Geometry) -> tuple[int, int]:
    return (t % V_GROUPS) * g.bursts + r, t // V_GROUPS


def store(k: list[list[int]], v: list[list[int]], g: Geometry) -> dict:
    """Bank contents {(chip, bank, 'k'|'v', column): word} after writing K and V through the re-layout."""
    mem = {}
    for t in range(len(k)):
        for r in range(g.bursts):
            for kind, vec, addr in (("k", k[t], k_address(t, r, g)), ("v", v[t], v_address(t, r, g))):
                for c, word in enumerate(words(vec, r)):
                    mem[c, addr[0], kind, addr[1]] = word
    return mem


# --- processing units ------------------------------------------------------------------------------


def bank_score(a_words: list[int], b_words: list[int]) -> int:
    """Bank PU score mode over a token's RDs (module docstring)."""
    acc = None
    for a, b in zip(a_words, b_words, strict=True):
        p = [mul(x, y) for x, y in zip(elems(a), elems(b), strict=True)]
        tree = arith.add_tree(p, F)
        acc = tree if acc is None else add(acc, tree)
    return acc


def bank_context(v_words: list[int], s: list[int], enable: list[bool]) -> list[int]:
    """Bank PU context mode over its group's tokens; accumulators read 0 if no token was enabled."""
    acc: list[int] | None = None
    for word, sv, en in zip(v_words, s, enable, strict=True):
        if not en:
            continue
        p = [mul(x, sv) for x in elems(word)]
        acc = p if acc is None else [add(a, b) for a, b in zip(acc, p, strict=True)]
    return acc or [0] * ELEMS_PER_RD


def adder_unit(xs: list[int]) -> int:
    """The rank PU's adder unit: a pairwise tree over 8 chip partials (score) or 4 group partials."""
    return arith.add_tree(list(xs), F)


def chunk_softmax(scores: list[int], chunk: int) -> tuple[list[int], dict]:
    """FP16 probabilities of ``scores`` (module docstring); the list is padded to whole chunks with -Inf
    and the padding's probabilities (0) are dropped."""
    if not scores:
        raise ValueError("scores: a head needs at least one token")
    n = len(scores)
    padded = list(scores) + [NEG_INF] * (-n % chunk)
    es, ms, m_run, s_run = [], [], None, None
    for c in range(0, len(padded), chunk):
        s = padded[c : c + chunk]
        m_c = arith.max_tree(s, F)
        e = [exp(sub(x, m_c)) for x in s]
        l_c = arith.add_tree(e, F)
        if m_run is None:
            m_run, s_run = m_c, l_c
        else:
            m_new = arith.fp_max(m_run, m_c, F)
            s_run = add(mul(s_run, exp(sub(m_run, m_new))), mul(l_c, exp(sub(m_c, m_new))))
            m_run = m_new
        es.append(e)
        ms.append(m_c)
    r = arith.fp_recip(s_run, F)
    probs = [mul(x, mul(exp(sub(m_c, m_run)), r)) for e, m_c in zip(es, ms, strict=True) for x in e]
    return probs[:n], {"max": m_run, "sum": s_run, "recip": r, "chunk_max": ms}


def head_attention(q: list[int], k: list[list[int]], v: list[list[int]], g: Geometry) -> tuple[list[int], dict]:
    """One head of decode attention as the rank computes it: (output FP16 bits in host order, details)."""
    n = len(k)
    if n == 0 or len(v) != n:
        raise ValueError(f"k, v: {n} and {len(v)} tokens; a head needs >= 1 token and as many V as K")
    if len(q) != g.d_head or any(len(x) != g.d_head for x in (*k, *v)):
        raise ValueError(f"q, k, v: vectors of {g.d_head} FP16 values")
    mem = store(k, v, g)
    q_words = [words(q, r) for r in range(g.bursts)]
    scores = []
    for t in range(n):
        partials = []
        for c in range(CHIPS):
            bank, col = k_address(t, 0, g)
            a = [mem[c, bank, "k", col + r] for r in range(g.bursts)]
            partials.append(bank_score(a, [q_words[r][c] for r in range(g.bursts)]))
        scores.append(adder_unit(partials))
    probs, stats = chunk_softmax(scores, g.chunk)
    cols = math.ceil(n / V_GROUPS)
    out = [0] * g.d_head
    for c in range(CHIPS):
        for r in range(g.bursts):
            group_acc = []
            for grp in range(V_GROUPS):
                bank = grp * g.bursts + r
                toks = [j * V_GROUPS + grp for j in range(cols)]
                group_acc.append(
                    bank_context(
                        [mem.get((c, bank, "v", j), 0) for j in range(cols)],
                        [probs[t] if t < n else 0 for t in toks],
                        [t < n for t in toks],
                    )
                )
            for m in range(ELEMS_PER_RD):
                out[dim(c, r, m)] = adder_unit([acc[m] for acc in group_acc])
    return out, {"scores": scores, "probs": probs, **stats}


# --- the float64 reference ------------------------------------------------------------------------------


def reference(q: list[int], k: list[list[int]], v: list[list[int]]) -> np.ndarray:
    """softmax(q.K^T) V in float64 from the same FP16 inputs."""
    qf, kf, vf = decode_array(np.array(q), F), decode_array(np.array(k), F), decode_array(np.array(v), F)
    s = kf @ qf
    p = np.exp(s - s.max())
    return (p / p.sum()) @ vf


def error_ulps(out: list[int], ref: np.ndarray) -> np.ndarray:
    """|out - ref| in FP16 ULPs of the output's largest magnitude: the vector is a p-weighted sum of V rows,
    so an element that cancels to near 0 carries the absolute error of the large terms (shared/notes §4:
    "a few ulps per element, relative to the max")."""
    got = decode_array(np.array(out), F)
    scale = max(float(np.max(np.abs(ref))), 2.0**F.emin)
    return np.abs(got - ref) / 2.0 ** (math.floor(math.log2(scale)) - F.man_bits)


def random_head(rng: np.random.Generator, n: int, g: Geometry, scale: float = 1.0) -> tuple:
    """FP16 q (pre-scaled by 1/sqrt(d_head)), K and V with N(0, scale^2) entries: attention-like inputs."""

    def fp16(x: np.ndarray) -> list:
        return encode_array(x, F).astype(int).tolist()

    q = fp16(rng.standard_normal(g.d_head) * scale / math.sqrt(g.d_head))
    return q, fp16(rng.standard_normal((n, g.d_head)) * scale), fp16(rng.standard_normal((n, g.d_head)))


def to_fp16(x: float) -> int:
    return encode(x, F)


def relayout_write(beats: list[int], inverse: bool = False) -> list[tuple[int, int, int]]:
    """The re-layout unit's output for one write of host beats: (data, last, error) per beat. An odd write's
    last window is completed with a zero beat; ``error`` (on the last beat) marks a write that is not a
    whole number of bursts."""
    if not beats:
        raise ValueError("beats: a write has at least one beat")
    padded = list(beats) + [0] * (len(beats) % WINDOW_BEATS)
    out = relayout(padded, inverse)
    err = int(len(beats) % BEATS_PER_BURST != 0)
    return [(d, int(i == len(out) - 1), err if i == len(out) - 1 else 0) for i, d in enumerate(out)]


# --- the rank's host interface (hw/l3/rank.py) -----------------------------------------------------------


def rank_items(q: list[int], k: list[list[int]], v: list[list[int]], n: int | None = None) -> list[tuple]:
    """The rank command items (op, data, last) that write one head's K, V and Q (golden.l3_spec.Op) and run
    it over ``n`` tokens (default: all written)."""
    items = []
    for op, vecs in ((Op.K, k), (Op.V, v), (Op.Q, [q])):
        beats = [b for vec in vecs for r in range(len(vec) // ELEMS_PER_BURST) for b in burst_beats(vec, r)]
        items += [(op, b, int(i == len(beats) - 1)) for i, b in enumerate(beats)]
    return items + [(Op.RUN, len(k) if n is None else n, 1)]


def rank_run(items: list[tuple], g: Geometry, max_tokens: int) -> tuple[list[int], int]:
    """What the rank answers to ``items`` (one head's writes, then RUN): (outputs, error flags) — the
    head's d_head values in host order and 0, or [] and the golden.l3_spec.Err flags of a bad head.
    A write's op is its first beat's (latched as the write opens; the op of its later beats is ignored),
    whether it ends with ``last`` or is still open at the RUN. A RUN that arrives while a write is open (its
    ``last`` beat not yet sent) ends that write there, as an unterminated write: PARTIAL_BURST, its whole
    bursts kept (they have landed, as a partial write's do), the rest dropped; the RUN is then checked as
    any head's."""
    writes: dict[Op, list[list[int]]] = {Op.K: [], Op.V: [], Op.Q: []}
    err, run, cur, cur_op = Err(0), None, [], Op.K
    for op, word, last in items:
        if op == Op.RUN:
            run = word
            if cur:  # an open write, never terminated
                err |= Err.PARTIAL_BURST
                writes[cur_op].append(cur[: len(cur) - len(cur) % BEATS_PER_BURST])
            break
        if not cur:  # the write opens: its op
            cur_op = Op(op)
        cur.append(word)
        if last:
            if len(cur) % BEATS_PER_BURST:
                err |= Err.PARTIAL_BURST
            writes[cur_op].append(cur[: len(cur) - len(cur) % BEATS_PER_BURST])
            cur = []
    n = run

    def vectors(op: Op) -> list[list[int]]:
        beats = [b for w in writes[op] for b in w]
        per_vec = g.bursts * BEATS_PER_BURST
        per_beat = BEAT_BITS // ELEM_BITS
        return [
            [(beats[i + j // per_beat] >> (ELEM_BITS * (j % per_beat))) & MASK16 for j in range(g.d_head)]
            for i in range(0, len(beats) - per_vec + 1, per_vec)
        ]

    k, v, q_bursts = vectors(Op.K), vectors(Op.V), sum(len(w) for w in writes[Op.Q]) // BEATS_PER_BURST
    if q_bursts != g.bursts:
        err |= Err.PARTIAL_BURST
    if n == 0:
        err |= Err.LEN_ZERO
    if len(k) > max_tokens or len(v) > max_tokens or n > len(k) or n > len(v):
        err |= Err.LEN_OVER
    if err:
        return [], int(err)
    q = vectors(Op.Q)[0]
    return head_attention(q, k[:n], v[:n], g)[0], 0
