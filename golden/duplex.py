"""Duplex Logic-PIM arithmetic, bit-exact, in the hardware's order and precision (Duplex §IV-D, §VI;
shared/notes/l3_duplex_flash.md §2.4). Values are bit patterns: FP16 operands, FP32 partial sums.

* **GEMM module** (:func:`gemm_tile`): y[j][o] = sum_k W[o][k] * x[j][k] for n tokens j and m rows o. Each
  product is FP16 x FP16 -> FP32, which is exact. Two FP32 partial sums per output, acc_0 over even k and
  acc_1 over odd k, both start at -0 (the identity of IEEE addition, so a first product passes unchanged)
  and add in increasing k, each add rounded once (RNE, gradual underflow); the tile's output is
  acc_0 + acc_1, in FP32. Two phases let the 2-cycle FP32 adder take a weight beat every cycle [S].
  NumPy float32 arithmetic is IEEE binary32 with RNE and subnormals, so the model runs vectorised; every
  NaN is the canonical NaN. tests/test_duplex_golden.py checks it against golden.arith's bit-level ops.
* **GEMM** (:func:`gemm`): K split into tiles the input buffer holds; tile partials add in FP32 in tile
  order in the results buffer, then one final rounding to FP16.
* **Softmax unit**: the shared unit's (``golden.softmax.softmax``), at 64 lanes and 128 KB.
* **Gated activation** (:func:`silu_gate`): SiLU(g) * u = (g * (1 / (1 + exp(-g)))) * u, each step one
  FP16 operation in that order.
* **GQA decode attention** (:func:`gqa_decode`): the hardware's composition — scores = the GEMM with
  K (L x d) as weights and the g query heads (pre-scaled by 1/sqrt(d) [S]) as tokens, rounded to FP16;
  softmax per head; context = the GEMM with V^T (d x L) as weights and the g probability rows as tokens.
"""

from __future__ import annotations

import math

import numpy as np

from golden import arith
from golden.commands import pack_fields, skip_to_last, take, unpack_fields
from golden.duplex_spec import ACC_PHASES, DESC_FIELDS, ELEM_BITS, Err, Geometry, Op
from golden.fp import FP16, FP32, decode_array, encode_array, round_pack, unpack
from golden.softmax import softmax

F, F32 = FP16, FP32
ONE = 0x3C00  # FP16 1.0


# --- GEMM module ----------------------------------------------------------------------------------------


def _f32(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def _bits32(x: np.ndarray) -> np.ndarray:
    out = np.asarray(x, dtype=np.float32).view(np.uint32).copy()
    out[np.isnan(x)] = F32.nan_bits
    return out


def gemm_tile(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """FP32 partials (n x m bit patterns) of FP16 weights ``w`` (m x k) and tokens ``x`` (n x k)."""
    w, x = np.asarray(w, dtype=np.uint16), np.asarray(x, dtype=np.uint16)
    if w.ndim != 2 or x.ndim != 2 or w.shape[1] != x.shape[1] or 0 in w.shape + x.shape:
        raise ValueError(f"w, x: shapes {w.shape} and {x.shape}; need (m, k) and (n, k), all >= 1")
    wf, xf = w.view(np.float16).astype(np.float32), x.view(np.float16).astype(np.float32)
    acc = np.full((ACC_PHASES, x.shape[0], w.shape[0]), -0.0, dtype=np.float32)
    with np.errstate(all="ignore"):
        for k in range(w.shape[1]):
            acc[k % ACC_PHASES] += xf[:, k, None] * wf[None, :, k]  # exact product, one FP32 rounding per add
        return _bits32(acc[0] + acc[1])


def fp32_to_fp16(bits: int) -> int:
    """One RNE rounding of an FP32 value to FP16 (overflow to Inf, gradual underflow, canonical NaN)."""
    cls, sign, sig, exp = unpack(int(bits), F32)
    if cls == "nan":
        return F.nan_bits
    if cls == "inf":
        return F.inf_bits | (F.sign_bit if sign else 0)
    return round_pack(sign, sig, exp, F)


def gemm(w: np.ndarray, x: np.ndarray, k_tile: int) -> np.ndarray:
    """FP16 outputs (n x m) of a GEMM whose K is split into ``k_tile``-long tiles (module docstring)."""
    k = np.shape(w)[1]
    tiles = [gemm_tile(np.asarray(w)[:, s : s + k_tile], np.asarray(x)[:, s : s + k_tile]) for s in range(0, k, k_tile)]
    total = _f32(tiles[0])
    with np.errstate(all="ignore"):
        for t in tiles[1:]:
            total = total + _f32(t)
    return np.vectorize(fp32_to_fp16)(_bits32(total)).astype(np.uint16)


def pack_desc(m: int, k: int, n: int) -> int:
    """A DESC item's data (``golden.duplex_spec.DESC_FIELDS``)."""
    return pack_fields(DESC_FIELDS, m=m, k=k, n=n)


def unpack_desc(data: int) -> tuple[int, ...]:
    return unpack_fields(DESC_FIELDS, data)


def pack_beat(vals, width: int = ELEM_BITS) -> int:
    return sum(int(v) << (width * i) for i, v in enumerate(vals))


def module_items(w: np.ndarray, x: np.ndarray, g: Geometry) -> list[tuple[int, int, int]]:
    """A GEMM as the module's command items (op, data, last): DESC, X beats, W beats (golden.duplex_spec.Op).
    With ``g.modules`` > 1, module d owns rows [d*m, (d+1)*m) of ``w`` and a W beat carries every module's."""
    (rows_total, k), n, r = np.shape(w), np.shape(x)[0], g.rows
    if rows_total % g.modules:
        raise ValueError(f"w: {rows_total} rows do not split over {g.modules} modules")
    m = rows_total // g.modules
    items = [(Op.DESC, pack_desc(m, k, n), 0)]
    items += [(Op.X, pack_beat(x[j, b * r : (b + 1) * r]), 0) for j in range(n) for b in range(k // r)]
    items += [
        (Op.W, pack_beat(np.concatenate([w[d * m + o0 : d * m + o0 + r, kk] for d in range(g.modules)])), 0)
        for o0 in range(0, m, r)
        for kk in range(k)
    ]
    items[-1] = (*items[-1][:2], 1)
    return items


def module_run(items: list[tuple[int, int, int]], g: Geometry) -> list[tuple[list[int], int, int]]:
    """The module's outputs (FP32 row-block values — every module's, module by module — last, error) for a
    stream of transactions: each row block's n output beats once its last weight beat is in; a flagged
    transaction ends in one error item (after any row blocks already out) once its ``last`` item is consumed."""
    out, i = [], 0
    while i < len(items):
        op, data, last = items[i]
        i += 1
        m, k, n = unpack_desc(data)
        err = Err.MALFORMED if op != Op.DESC else g.check(m, k, n) or (Err.MALFORMED if last else Err(0))
        consumed_last = bool(last)
        if not err:
            err, i = _run_gemm(items, i, m, k, n, g, out)
            consumed_last = not err
        if not consumed_last:  # a flagged transaction is consumed to its last item
            i = skip_to_last(items, i)
        if err:
            out.append(([0] * g.rows * g.modules, 1, int(err)))
    return out


def _run_gemm(items: list, i: int, m: int, k: int, n: int, g: Geometry, out: list) -> tuple[Err, int]:
    """The X and W items of one transaction from ``items[i]``: (error, index after what was accepted)."""
    xs, ws = [], []
    for want, count in ((Op.X, n * k // g.rows), (Op.W, m // g.rows * k)):
        for c in range(count):
            op, data, last = take(items, i)
            final = want == Op.W and c == count - 1
            if op != want or bool(last) != final:
                return Err.MALFORMED, i  # the offending item is consumed by the caller's skip
            i += 1
            width = g.rows * (g.modules if want == Op.W else 1)
            (xs if want == Op.X else ws).append([data >> (ELEM_BITS * e) & 0xFFFF for e in range(width)])
            if want == Op.W and (c + 1) % k == 0:
                y = gemm_tile(np.array(ws[-k:]).T, np.array(xs).reshape(n, k))
                out += [(y[j].tolist(), int(final and j == n - 1), 0) for j in range(n)]
    return Err(0), i


# --- gated activation -----------------------------------------------------------------------------------


def silu_gate(g: int, u: int) -> int:
    """SiLU(g) * u in FP16 (module docstring)."""
    sig = arith.fp_recip(arith.fp_add(ONE, arith.fp_exp(g ^ F.sign_bit, F), F), F)
    return arith.fp_mul(arith.fp_mul(g, sig, F), u, F)


# --- GQA decode attention -------------------------------------------------------------------------------


def gqa_decode(q: np.ndarray, k: np.ndarray, v: np.ndarray, lanes: int, k_tile: int) -> np.ndarray:
    """FP16 context (g x d) of g query heads ``q`` (pre-scaled) sharing one KV group ``k``, ``v`` (L x d)."""
    scores = gemm(k, q, k_tile)  # (g, L): K rows play the weights
    probs = np.array([softmax(row.tolist(), lanes)[0][: len(row)] for row in scores], dtype=np.uint16)
    return gemm(np.asarray(v).T, probs, k_tile)  # (g, d): V^T rows are the weights


def random_fp16(rng: np.random.Generator, shape, scale: float = 1.0) -> np.ndarray:
    return encode_array(rng.standard_normal(shape) * scale, F).astype(np.uint16)


def reference_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(q K^T) V in float64 from the same FP16 inputs (g x d)."""
    qf, kf, vf = (decode_array(np.asarray(a, dtype=np.int64), F) for a in (q, k, v))
    s = qf @ kf.T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ vf


def fp16_value(bits) -> np.ndarray:
    return decode_array(np.asarray(bits, dtype=np.int64), F)


def scale_q(q: np.ndarray) -> np.ndarray:
    """Queries pre-scaled by 1/sqrt(d) on the xPU [S]."""
    d = np.shape(q)[1]
    return encode_array(fp16_value(q) / math.sqrt(d), F).astype(np.uint16)
