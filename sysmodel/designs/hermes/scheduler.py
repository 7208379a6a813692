"""Hermes's host-side scheduler (§IV-B to §IV-D): the offline hot/cold partition (an ILP on HiGHS through
``scipy.optimize.milp``: exact on small models, decomposed at scale, and a greedy split to compare), the
activation predictor run over a trace, the online hot/cold adjustment and the window-based cold-neuron
remapping across DIMMs (Algorithm 1, corrected as in shared/notes §4.5).

A placement of one (layer, block) is ``on_gpu`` (bool per neuron: a hot copy in GPU memory) and ``dimm``
(int per neuron: the DIMM that computes it when it is cold). Every neuron's weights stay on the DIMMs
(§IV-C2), so moving a neuron to the GPU costs a PCIe copy and nothing is written back.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_array

from golden import hermes as gh
from golden import hermes_spec as hs


class InfeasibleMapping(ValueError):
    """No placement satisfies the capacities; the message names what does not fit."""


@dataclass(frozen=True)
class Costs:
    """Per-neuron times of one (layer, block) — ``gpu``/``dimm`` seconds per activated neuron — its neuron
    bytes, and the fixed GPU-side cost 2 T_sync of Eq. 3."""

    gpu: float
    dimm: float
    bytes: float
    sync: float


@dataclass
class Placement:
    on_gpu: np.ndarray
    dimm: np.ndarray

    def copy(self) -> Placement:
        return Placement(self.on_gpu.copy(), self.dimm.copy())


def layer_time(c: Costs, f: np.ndarray, p: Placement, dimms: int) -> float:
    """Eq. 1-5 for one (layer, block): max(T_GPU, slowest DIMM) with activation frequencies ``f``."""
    gpu = c.gpu * f[p.on_gpu].sum() + c.sync
    per_dimm = np.bincount(p.dimm[~p.on_gpu], weights=f[~p.on_gpu], minlength=dimms)
    return float(max(gpu, c.dimm * per_dimm.max()))


def lpt(f: np.ndarray, cold: np.ndarray, dimms: int) -> np.ndarray:
    """Longest-processing-time split over the DIMMs by frequency (notes §4.4 (c)): the ``cold`` neurons,
    most frequent first, each to the least-loaded DIMM; then the hot ones the same way on their own loads,
    so a neuron the online adjustment later evicts from the GPU lands on a balanced DIMM."""
    dimm = np.zeros(len(f), np.int64)
    for group in (cold, ~cold):
        heap = [(0.0, j) for j in range(dimms)]  # (load, DIMM): the least loaded, ties to the lowest DIMM
        idx = np.flatnonzero(group)[np.argsort(-f[group], kind="stable")]
        for i, fi in zip(idx.tolist(), f[idx].tolist(), strict=True):
            load, j = heap[0]
            heapq.heapreplace(heap, (load + fi, j))
            dimm[i] = j
    return dimm


def _ilp_constraints(
    freqs: list[np.ndarray], costs: list[Costs], gpu_bytes: float, dimm_bytes: float, dimms: int
) -> LinearConstraint:
    """:func:`exact_ilp`'s constraints over its variables (x[i, u] per neuron and unit, then one t_l per
    (layer, block)): each neuron placed once, t_l at least the GPU's and every DIMM's time, the capacities."""
    units = dimms + 1
    nx = sum(len(f) for f in freqs) * units
    nvar = nx + len(freqs)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []

    def add(entries: list[tuple[int, float]], lb: float, ub: float) -> None:
        r = len(lo)
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        lo.append(lb)
        hi.append(ub)

    base = 0
    gpu_cap: list = []
    dimm_cap: list[list] = [[] for _ in range(dimms)]
    for li, (f, c) in enumerate(zip(freqs, costs, strict=True)):
        t = nx + li
        xs = [[base + i * units + u for u in range(units)] for i in range(len(f))]
        for i in range(len(f)):
            add([(x, 1.0) for x in xs[i]], 1, 1)  # every neuron placed once
            gpu_cap.append((xs[i][0], c.bytes))
            for j in range(dimms):
                dimm_cap[j].append((xs[i][1 + j], c.bytes))
        add([(t, 1.0)] + [(xs[i][0], -c.gpu * f[i]) for i in range(len(f))], c.sync, np.inf)
        for j in range(dimms):
            add([(t, 1.0)] + [(xs[i][1 + j], -c.dimm * f[i]) for i in range(len(f))], 0, np.inf)
        base += len(f) * units
    add(gpu_cap, 0, gpu_bytes)
    for j in range(dimms):
        add(dimm_cap[j], 0, dimm_bytes)
    a = coo_array((vals, (rows, cols)), shape=(len(lo), nvar)).tocsr()
    return LinearConstraint(a, lo, hi)


def exact_ilp(
    freqs: list[np.ndarray],
    costs: list[Costs],
    gpu_bytes: float,
    dimm_bytes: float,
    dimms: int,
    time_limit: float = 60.0,
) -> tuple[list[Placement], bool]:
    """The paper's ILP (Eqs. 1-7) with the assignment constraint it omits (notes §4.4): binaries x[i, u]
    for u in {GPU, DIMM 0..J-1}, one t_l per (layer, block), minimise sum t_l. For small models only:
    returns the placements and whether HiGHS proved them optimal within ``time_limit`` seconds."""
    units = dimms + 1
    sizes = [len(f) for f in freqs]
    nx = sum(sizes) * units
    obj = np.r_[np.zeros(nx), np.ones(len(freqs))]
    integ = np.r_[np.ones(nx), np.zeros(len(freqs))]
    res = milp(
        obj,
        constraints=_ilp_constraints(freqs, costs, gpu_bytes, dimm_bytes, dimms),
        integrality=integ,
        bounds=Bounds(0, np.r_[np.ones(nx), np.full(len(freqs), np.inf)]),
        options={"time_limit": time_limit},
    )
    if res.x is None:
        raise InfeasibleMapping(
            f"ILP: no placement: GPU {gpu_bytes:.4g} B, {dimms} DIMMs x {dimm_bytes:.4g} B "
            f"for {sum(sizes)} neurons ({res.message})"
        )
    out, base = [], 0
    for f in freqs:
        x = res.x[base : base + len(f) * units].reshape(len(f), units) > 0.5
        out.append(Placement(x[:, 0].copy(), np.argmax(x[:, 1:], axis=1)))
        base += len(f) * units
    return out, res.status == 0


def decomposed_ilp(
    freqs: list[np.ndarray], costs: list[Costs], gpu_bytes: float, dimms: int, candidates: int = 64
) -> list[Placement]:
    """The ILP at scale (notes §4.4): within a (layer, block) the GPU keeps its top-k neurons by frequency;
    the k of every (layer, block) come from a multiple-choice knapsack on ``milp`` (``candidates`` values of
    k each, the cost of each its Eq. 1 time with the rest split evenly over the DIMMs); then LPT splits the
    cold neurons."""
    choices, cost, size = [], [], []
    for f, c in zip(freqs, costs, strict=True):
        order = np.argsort(-f, kind="stable")
        prefix = np.r_[0.0, np.cumsum(f[order])]
        ks = np.unique(np.linspace(0, len(f), candidates + 1).astype(int))
        choices.append((order, ks))
        cost.append(np.maximum(c.gpu * prefix[ks] + c.sync, c.dimm * (prefix[-1] - prefix[ks]) / dimms))
        size.append(ks * c.bytes)
    n = sum(len(k) for _, k in choices)
    rows, cols = [], []
    for r, off in enumerate(np.cumsum([0] + [len(k) for _, k in choices])[:-1]):
        rows += [r] * len(choices[r][1])
        cols += list(range(off, off + len(choices[r][1])))
    pick = coo_array((np.ones(n), (rows, cols)), shape=(len(freqs), n))
    res = milp(
        np.concatenate(cost),
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
        constraints=[LinearConstraint(pick, 1, 1), LinearConstraint(np.concatenate(size)[None, :], 0, gpu_bytes)],
    )
    if res.x is None:
        raise InfeasibleMapping(f"decomposed ILP: {res.message}")
    out, off = [], 0
    for f, (order, ks) in zip(freqs, choices, strict=True):
        k = int(ks[np.argmax(res.x[off : off + len(ks)])])
        off += len(ks)
        on_gpu = np.zeros(len(f), bool)
        on_gpu[order[:k]] = True
        out.append(Placement(on_gpu, lpt(f, ~on_gpu, dimms)))
    return out


def greedy(freqs: list[np.ndarray], costs: list[Costs], gpu_bytes: float, dimms: int) -> list[Placement]:
    """The split without an optimiser: the globally most frequent neurons (per byte) fill the GPU; the
    cold ones go round-robin over the DIMMs in index order."""
    dens = np.concatenate([f / c.bytes for f, c in zip(freqs, costs, strict=True)])
    nbytes = np.concatenate([np.full(len(f), c.bytes) for f, c in zip(freqs, costs, strict=True)])
    order = np.argsort(-dens, kind="stable")
    take = np.zeros(len(dens), bool)
    take[order[np.cumsum(nbytes[order]) <= gpu_bytes]] = True
    out, off = [], 0
    for f in freqs:
        on = take[off : off + len(f)]
        out.append(Placement(on.copy(), np.arange(len(f)) % dimms))
        off += len(f)
    return out


def random_mapping(
    freqs: list[np.ndarray], costs: list[Costs], gpu_bytes: float, dimms: int, seed: int = 0
) -> list[Placement]:
    """Hermes-random (§V-C): as many random neurons as fit on the GPU, the rest on random DIMMs."""
    rng = np.random.default_rng(seed)
    nbytes = np.concatenate([np.full(len(f), c.bytes) for f, c in zip(freqs, costs, strict=True)])
    order = rng.permutation(len(nbytes))
    take = np.zeros(len(nbytes), bool)
    take[order[np.cumsum(nbytes[order]) <= gpu_bytes]] = True
    out, off = [], 0
    for f in freqs:
        out.append(Placement(take[off : off + len(f)].copy(), rng.integers(0, dimms, len(f))))
        off += len(f)
    return out


def adjust(p: Placement, state: np.ndarray, budget: int) -> int:
    """Online hot/cold adjustment (§IV-C2, notes §4.3): neurons not on the GPU whose state exceeds T_h,
    highest first, replace the lowest-state GPU neurons while the victim's state is lower, at most
    ``budget`` copies (what PCIe moves during the projection). Returns the copies made."""
    cand = np.flatnonzero(~p.on_gpu & gh.hot(state))
    cand = cand[np.argsort(-state[cand].astype(int), kind="stable")]
    vict = np.flatnonzero(p.on_gpu)
    vict = vict[np.argsort(state[vict].astype(int), kind="stable")]
    m = min(len(cand), len(vict), budget)
    ok = state[vict[:m]].astype(int) < state[cand[:m]].astype(int)
    m = int(np.argmin(ok)) if not ok.all() else m
    p.on_gpu[cand[:m]], p.on_gpu[vict[:m]] = True, False
    return m


def window_remap(p: Placement, activity: np.ndarray, dimms: int, max_moves: int | None = None) -> int:
    """Algorithm 1, corrected (notes §4.5): DIMMs sorted by activated neurons Z (descending, stable) pair the
    k-th busiest with the k-th idlest; the busy one's most activated cold neurons move while that strictly
    narrows the pair's gap, at most ``max_moves`` per pair (what DIMM-link moves in the window). Returns
    the neurons moved."""
    cold = ~p.on_gpu
    z = np.bincount(p.dimm[cold], weights=activity[cold], minlength=dimms)
    order = np.argsort(-z, kind="stable")
    moved = 0
    for k in range(dimms // 2):
        hi, lo = order[k], order[dimms - 1 - k]
        cands = np.flatnonzero(cold & (p.dimm == hi) & (activity > 0))
        n = 0
        for h in cands[np.argsort(-activity[cands], kind="stable")]:
            if z[hi] <= z[lo] or (max_moves is not None and n >= max_moves):
                break
            if activity[h] >= z[hi] - z[lo]:
                continue
            p.dimm[h] = lo
            z[hi] -= activity[h]
            z[lo] += activity[h]
            n += 1
        moved += n
    return moved


RULES = ("literal", "state-or-correlation")


def predicted(state: np.ndarray, parents: np.ndarray | None, prev: np.ndarray | None, rule: str) -> np.ndarray:
    """Predicted-active flags of one token for a batch: ``prev`` (batch, n_prev) the previous layer's
    activations of this token (None for layer 0, which predicts state >= 10, notes A6). ``literal``: the
    paper's s1 + 6 s2 > 15 (golden.hermes.predict), which never predicts a neuron whose two correlated
    neurons are idle (notes A4); ``state-or-correlation`` [S]: that, or s1 >= 10 alone (the state table as
    the branch-predictor-like token-wise half)."""
    if rule not in RULES:
        raise ValueError(f"rule: {rule!r} not allowed; allowed: {', '.join(RULES)}")
    alone = state.astype(int) >= hs.HOT_STATE
    if prev is None or parents is None:
        return np.broadcast_to(alone, (1 if prev is None else len(prev), len(state)))
    pred = np.stack([gh.predict(state, parents, p) for p in prev])
    return pred | alone if rule != "literal" else pred


@dataclass(frozen=True)
class Accuracy:
    accuracy: float
    recall: float
    precision: float


def predictor_accuracy(
    prev: np.ndarray | None,
    cur: np.ndarray,
    parents: np.ndarray | None,
    prefill: int,
    rule: str = "state-or-correlation",
) -> Accuracy:
    """The token-wise state table plus layer-wise correlation (golden.hermes) over one layer's generation:
    states from the prompt's activation frequencies, then per token :func:`predicted` (state before this
    token's update; s2 from the previous layer's actual activations of this token) and the update with the
    batch's activations (oracle mode, notes A7). Binary accuracy over every (sequence, token, neuron),
    with recall and precision (notes A8)."""
    state = gh.init_states(cur[:, :prefill].mean(axis=(0, 1)))
    tp = fp = fn = tn = 0
    for t in range(prefill, cur.shape[1]):
        act = cur[:, t]
        pred = np.broadcast_to(predicted(state, parents, None if prev is None else prev[:, t], rule), act.shape)
        tp += int((pred & act).sum())
        fp += int((pred & ~act).sum())
        fn += int((~pred & act).sum())
        tn += int((~pred & ~act).sum())
        state = gh.update_states(state, np.asarray(act.any(axis=0)))
    return Accuracy((tp + tn) / (tp + fp + fn + tn), tp / max(tp + fn, 1), tp / max(tp + fp, 1))
