"""Golden models of the Hermes NDP core (Hermes §IV-A1, §IV-C; shared/notes/hermes.md §3-4), on FP16 bit
patterns (``golden.hermes_spec`` holds the geometry and constants).

Semantics (hw/hermes implements exactly these):

* **Bit-serial product** (:func:`mul`): FP16 x FP16 -> FP32, which is exact (11 x 11 significand bits fit
  FP32's 24, and every FP16 product's exponent is an FP32 normal or subnormal one); NaN canonical,
  Inf x 0 = NaN. The hardware reaches it in ``Gemv.serial_steps`` shift-add steps; the value does not
  depend on them.
* **GEMV, dot mode** (:func:`gemv_dot`): for each row i and batch vector b, the row is cut into beats of
  ``multipliers * lanes`` elements (the host pads K with +0 to whole beats); multiplier m takes elements
  m*lanes .. m*lanes + lanes - 1 of a beat. The beat's products are summed lane by lane, as the multipliers
  hand them out: for each lane t a pairwise FP32 tree over the multipliers (``golden.arith.add_tree``,
  each adder rounding to nearest even), then a pairwise tree over the ``lanes`` lane sums; the beat sums
  accumulate in beat order into an FP32 register that starts at -0 (the additive identity, so an all -0
  row stays -0); the result is rounded once to FP16.
* **GEMV, AXPY mode** (:func:`gemv_axpy`): out[b, :] += a[b, i] * W[:, i] for the columns i in order; the
  products skip the tree and add elementwise into FP32 partial sums in the buffer that start at -0; each
  output is rounded once to FP16 at the end.
* **Command stream** (:func:`gemv_items`, :func:`gemv_run`; ``golden.hermes_spec.Op``): DESC (mode, n,
  kb, batch); the operands (DOT: batch x kb X beats, vector by vector; AXPY: n x batch X items of one FP16
  scalar a[b, i], column by column); then n x kb W beats, row (column) by row; ``last`` on the final W.
  DOT answers one item per row and vector (row-major), its value in y[0]; AXPY answers, once every column
  is in, batch x kb x lanes items, y[m] = out[b, k*beat + m*lanes + t] for (b, k, t) in order. A
  descriptor the unit cannot run or a malformed stream is consumed to its ``last`` item and answered,
  after the rows already complete, with one error item.
* **Activation unit** (:func:`act_run`; ``golden.hermes_spec.ActOp``), all FP16 with RNE: softmax over
  n scores is ``golden.softmax.softmax`` (the unit Duplex uses too: running max over lanes-wide beats, exp(s - M)
  with the library's exp, pairwise beat sums into even/odd partials, one reciprocal, a multiply), the last
  beat's lanes past n taken as -Inf; ReLU passes x when its sign is clear or it is NaN, else +0 (so -0 ->
  +0); merge a + b; scale a * b[0]. A transaction is ceil(n / lanes) beats of one op; a malformed one
  answers the beats before the offending item (elementwise ops) and one error item.
* **Neuron state table** (§IV-C1, notes §4.2): a 4-bit saturating state per neuron, initialized from its
  prefill activation frequency, +4 when the neuron fires and -1 when it does not; a neuron is predicted
  active iff state + 6 * s2 > 15, with s2 the number of its 2 correlated previous-layer neurons that fired
  for this token; hot iff state > 10 (§IV-C2).
"""

from __future__ import annotations

import numpy as np

from golden import hermes_spec as hs
from golden.arith import add_tree, fp_add, fp_convert, fp_mul
from golden.commands import skip_to_last, take
from golden.fp import FP16, FP32
from golden.hermes_spec import ACT_N_BITS, ELEM_BITS, ActErr, ActOp, Err, Gemv, Mode, Op, pack_desc, unpack_desc
from golden.softmax import softmax as _softmax

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
                acc = fp_add(acc, beat_sum(wbeat, xbeat, g), FP32)
            out[b, i] = to_fp16(acc)
    return out


def beat_sum(wbeat, xbeat, g: Gemv) -> int:
    """One beat's FP32 sum in the dot mode's order: per lane a tree over the multipliers, then a tree over
    the lanes."""
    p = [mul(int(a), int(b)) for a, b in zip(wbeat, xbeat, strict=True)]
    return add_tree([add_tree(p[t :: g.lanes], FP32) for t in range(g.lanes)], FP32)


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


def _beat_int(vals) -> int:
    return sum(int(v) << (ELEM_BITS * i) for i, v in enumerate(vals))


def _unbeat(data: int, n: int) -> list[int]:
    return [data >> (ELEM_BITS * e) & 0xFFFF for e in range(n)]


def gemv_items(mode: int, w: np.ndarray, v: np.ndarray, g: Gemv) -> list[tuple[int, int, int]]:
    """A GEMV as command items (op, data, last): DOT ``w`` (rows, K), ``v`` = x (batch, K); AXPY ``w`` =
    the columns W[:, i] as rows (cols, d), ``v`` = a (batch, cols). K and d are padded with +0 to beats."""
    w, v = np.asarray(w, np.uint16), np.asarray(v, np.uint16)
    wb = _beats(w, g.beat)
    n, kb, batch = wb.shape[0], wb.shape[1], v.shape[0]
    items = [(Op.DESC, pack_desc(mode, n, kb, batch), 0)]
    if mode == Mode.DOT:
        items += [(Op.X, _beat_int(beat), 0) for vec in _beats(v, g.beat) for beat in vec]
    else:
        items += [(Op.X, int(v[b, i]), 0) for i in range(n) for b in range(batch)]
    items += [(Op.W, _beat_int(beat), 0) for row in wb for beat in row]
    items[-1] = (*items[-1][:2], 1)
    return items


def gemv_run(items: list[tuple[int, int, int]], g: Gemv) -> list[tuple[list[int], int, int]]:
    """The unit's output items (y: ``multipliers`` FP16, last, error) for a stream of transactions."""
    out, i = [], 0
    while i < len(items):
        op, data, last = items[i]
        i += 1
        mode, n, kb, batch = unpack_desc(data)
        err = Err.MALFORMED if op != Op.DESC else g.check(mode, n, kb, batch) or (Err.MALFORMED if last else Err(0))
        done = bool(last)
        if not err:
            err, i = _run(items, i, mode, n, kb, batch, g, out)
            done = not err
        if not done:  # a flagged transaction is consumed to its last item
            i = skip_to_last(items, i)
        if err:
            out.append(([0] * g.multipliers, 1, int(err)))
    return out


def _run(items: list, i: int, mode: int, n: int, kb: int, batch: int, g: Gemv, out: list) -> tuple[Err, int]:
    """The X and W items of one transaction from ``items[i]``: (error, index after the last one accepted;
    the offending item is left to the caller's skip)."""
    got = {Op.X: [], Op.W: []}
    nx = batch * kb if mode == Mode.DOT else n * batch
    for want, count in ((Op.X, nx), (Op.W, n * kb)):
        for c in range(count):
            op, data, last = take(items, i)
            if op != want or bool(last) != (want == Op.W and c == count - 1):
                return Err.MALFORMED, i
            i += 1
            got[want].append(data)
            if mode == Mode.DOT and want == Op.W and (c + 1) % kb == 0:  # a row is complete
                row = np.array([_unbeat(d, g.beat) for d in got[Op.W][-kb:]], np.uint16).reshape(1, -1)
                xs = np.array(
                    [sum((_unbeat(d, g.beat) for d in got[Op.X][b * kb : (b + 1) * kb]), []) for b in range(batch)],
                    np.uint16,
                )
                y = gemv_dot(row, xs, g)[:, 0]
                final = c == count - 1
                out += [
                    ([int(y[b])] + [0] * (g.multipliers - 1), int(final and b == batch - 1), 0) for b in range(batch)
                ]
    if mode == Mode.AXPY:
        cols = np.array(
            [sum((_unbeat(d, g.beat) for d in got[Op.W][c * kb : (c + 1) * kb]), []) for c in range(n)], np.uint16
        )
        a = np.array(got[Op.X], np.uint16).reshape(n, batch).T
        y = gemv_axpy(cols, a, g).reshape(batch, kb, g.multipliers, g.lanes)
        out += [
            ([int(v) for v in y[b, k, :, t]], int((b, k, t) == (batch - 1, kb - 1, g.lanes - 1)), 0)
            for b in range(batch)
            for k in range(kb)
            for t in range(g.lanes)
        ]
    return Err(0), i


# --- the activation unit ----------------------------------------------------------------------------------


def relu(x: int) -> int:
    return x if not x & FP16.sign_bit or (x & 0x7FFF) > FP16.inf_bits else 0


def elementwise(op: int, a: list[int], b: list[int]) -> list[int]:
    if op == ActOp.RELU:
        return [relu(x) for x in a]
    if op == ActOp.MERGE:
        return [fp_add(x, y, FP16) for x, y in zip(a, b, strict=True)]
    return [fp_mul(x, b[0], FP16) for x in a]


def act_items(op: int, a: list[int], b: list[int] | None, lanes: int) -> list[dict]:
    """One transaction as beats {op, n, a, b, last}: ``a`` (n values) padded with +0 to whole beats, ``b``
    likewise (merge: the second operand; scale: the scale in b[0] of every beat)."""
    n = len(a)
    if n >= 1 << ACT_N_BITS:
        raise ValueError(f"a: {n} values not allowed; n is a {ACT_N_BITS}-bit field")
    beats = max(1, -(-n // lanes))
    pad = [*a, *[0] * (beats * lanes - n)]
    bb = [*(b or []), *[0] * (beats * lanes - len(b or []))]
    return [
        {
            "op": int(op),
            "n": n,
            "a": pad[i * lanes : (i + 1) * lanes],
            "b": bb[i * lanes : (i + 1) * lanes],
            "last": int(i == beats - 1),
        }
        for i in range(beats)
    ]


def act_run(beats: list[dict], lanes: int, max_scores: int) -> list[tuple[list[int], int, int]]:
    """The activation unit's outputs (y: lanes FP16, last, error) for a stream of transactions (module
    docstring); ``max_scores``: the softmax buffer's length."""
    out, i = [], 0
    while i < len(beats):
        first = beats[i]
        op, n = first["op"], first["n"]
        want = -(-n // lanes)
        err = ActErr.ZERO_LEN if n == 0 else ActErr.LEN_OVER if op == ActOp.SOFTMAX and n > max_scores else ActErr(0)
        got = []
        while True:  # to the transaction's last beat; the beat where the count ends closes it too
            beat = take(beats, i, "beats")
            i += 1
            if not err:
                final = len(got) == want - 1
                if beat["op"] != op or bool(beat["last"]) != final:
                    err = ActErr.MALFORMED
                    if not beat["last"]:  # consumed to the transaction's last beat
                        i = skip_to_last(beats, i, "beats", lambda b: bool(b["last"]))
                    break
                got.append(beat)
            if beat["last"]:
                break
        if op != ActOp.SOFTMAX:
            out += [(elementwise(op, g["a"], g["b"]), int(not err and k == len(got) - 1), 0) for k, g in enumerate(got)]
        elif not err:
            scores = [x for g in got for x in g["a"]][:n]
            p = _softmax(scores, lanes)[0]
            out += [(p[k * lanes : (k + 1) * lanes], int(k == len(got) - 1), 0) for k in range(len(got))]
        if err:
            out.append(([0] * lanes, 1, int(err)))
    return out


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
