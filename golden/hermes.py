"""Golden models of the Hermes NDP core (Hermes §IV-A1, §IV-C; shared/notes/hermes.md §3-4), on FP16 bit
patterns (``golden.hermes_spec`` holds the geometry and constants).

Semantics (hw/hermes implements exactly these):

* **Bit-serial product** (:func:`mul`): FP16 x FP16 -> FP32, which is exact (11 x 11 significand bits fit
  FP32's 24, and every FP16 product's exponent is an FP32 normal or subnormal one); NaN canonical,
  Inf x 0 = NaN. The hardware reaches it in ``Gemv.serial_steps`` shift-add steps; the value does not
  depend on them.
* **GEMV, dot mode** (:func:`gemv_dot`): for each row i and batch vector b, the row is cut into beats of
  ``multipliers * lanes`` elements (the host pads K with +0 to whole beats); a beat's products go through
  the pairwise FP32 add tree (``golden.arith.add_tree``, each adder rounding to nearest even) and the tree
  sums accumulate in beat order into an FP32 register that starts at -0 (the additive identity, so an
  all -0 row stays -0); the result is rounded once to FP16.
* **GEMV, AXPY mode** (:func:`gemv_axpy`): out[b, :] += a[b, i] * W[:, i] for the columns i in order; the
  products skip the tree and add elementwise into FP32 partial sums in the buffer that start at -0; each
  output is rounded once to FP16 at the end.
* **Neuron state table** (§IV-C1, notes §4.2): a 4-bit saturating state per neuron, initialized from its
  prefill activation frequency, +4 when the neuron fires and -1 when it does not; a neuron is predicted
  active iff state + 6 * s2 > 15, with s2 the number of its 2 correlated previous-layer neurons that fired
  for this token; hot iff state > 10 (§IV-C2).
"""

from __future__ import annotations

import numpy as np

from golden import hermes_spec as hs
from golden.arith import add_tree, fp_add, fp_convert, fp_mul
from golden.fp import FP16, FP32
from golden.hermes_spec import Gemv

NEG_ZERO32 = FP32.sign_bit


def mul(a: int, b: int) -> int:
    """The bit-serial multiplier's product of two FP16 values, FP32 (exact)."""
    return fp_mul(a, b, FP16, FP32)


def to_fp16(x: int) -> int:
    """An FP32 accumulator's final rounding to FP16."""
    return fp_convert(x, FP32, FP16)


def _beats(v: np.ndarray, beat: int) -> np.ndarray:
    """``v`` (..., K) padded with +0 to whole beats, shaped (..., beats, beat)."""
    k = v.shape[-1]
    pad = -k % beat
    v = np.concatenate([v, np.zeros((*v.shape[:-1], pad), v.dtype)], axis=-1)
    return v.reshape(*v.shape[:-1], -1, beat)


def gemv_dot(w: np.ndarray, x: np.ndarray, g: Gemv) -> np.ndarray:
    """(rows, K) FP16 weights times (batch, K) FP16 vectors -> (batch, rows) FP16."""
    wb, xb = _beats(np.asarray(w, np.uint16), g.beat), _beats(np.asarray(x, np.uint16), g.beat)
    out = np.zeros((xb.shape[0], wb.shape[0]), np.uint16)
    for i, row in enumerate(wb):
        for b, vec in enumerate(xb):
            acc = NEG_ZERO32
            for wbeat, xbeat in zip(row, vec, strict=True):
                acc = fp_add(acc, add_tree([mul(int(p), int(q)) for p, q in zip(wbeat, xbeat, strict=True)], FP32),
                             FP32)
            out[b, i] = to_fp16(acc)
    return out


def gemv_axpy(w: np.ndarray, a: np.ndarray, g: Gemv) -> np.ndarray:
    """(cols, d) FP16 weight columns W[:, i] times (batch, cols) FP16 scalars -> (batch, d) FP16, d padded
    with +0 to whole beats."""
    wc = _beats(np.asarray(w, np.uint16), g.beat).reshape(len(w), -1)
    a = np.asarray(a, np.uint16)
    acc = np.full((a.shape[0], wc.shape[1]), NEG_ZERO32, np.uint32)
    for i, col in enumerate(wc):
        for b in range(a.shape[0]):
            for j, wv in enumerate(col):
                acc[b, j] = fp_add(int(acc[b, j]), mul(int(wv), int(a[b, i])), FP32)
    return np.vectorize(to_fp16, otypes=[np.uint16])(acc)


# --- the neuron predictor ----------------------------------------------------------------------------------

def init_states(freq: np.ndarray) -> np.ndarray:
    """States from prefill activation frequencies: > 90% -> 15, < 2% -> 0, else 1 + floor(14 (f - 0.02) /
    0.88) clipped to 1..14 [S: the paper gives only the ends]."""
    f = np.asarray(freq, float)
    if np.any((f < 0) | (f > 1)):
        raise ValueError("freq: activation frequencies must lie in [0, 1]")
    mid = np.clip(1 + np.floor(14 * (f - hs.INIT_LOW) / (hs.INIT_HIGH - hs.INIT_LOW)), 1, hs.STATE_MAX - 1)
    return np.where(f > hs.INIT_HIGH, hs.STATE_MAX, np.where(f < hs.INIT_LOW, 0, mid)).astype(np.uint8)


def update_states(state: np.ndarray, active: np.ndarray) -> np.ndarray:
    """One token's update: +4 where the neuron fired, -1 where it did not, saturating at 0 and 15."""
    s = np.asarray(state, int)
    return np.clip(np.where(active, s + hs.STEP_UP, s - hs.STEP_DOWN), 0, hs.STATE_MAX).astype(np.uint8)


def predict(state: np.ndarray, corr: np.ndarray, prev_active: np.ndarray) -> np.ndarray:
    """Predicted-active flags: state + 6 * s2 > 15, s2 = how many of a neuron's ``corr`` (n, 2) indices
    fired in the previous layer (``prev_active``) for this token."""
    corr = np.asarray(corr)
    if corr.ndim != 2 or corr.shape[1] != hs.CORRELATED:
        raise ValueError(f"corr: shape {corr.shape} not allowed; (neurons, {hs.CORRELATED})")
    s2 = np.asarray(prev_active, bool)[corr].sum(axis=1)
    return np.asarray(state, int) + hs.LAMBDA * s2 > hs.THRESHOLD


def hot(state: np.ndarray) -> np.ndarray:
    """Hot neurons (GPU-resident candidates): state > T_h."""
    return np.asarray(state, int) > hs.HOT_STATE
