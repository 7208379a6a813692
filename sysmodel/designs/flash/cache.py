"""The DRAM neuron cache and its sliding window (LLM in a flash §3.1 "windowing", §3.3, Fig. 6; notes §3.2(c, e)).

Per layer, a preallocated ``matrix`` of ``capacity`` (the paper's Req_i) x 2 d_model rows holds the bundles
[up[:, i], down[i, :]] of the cached neurons, with companion arrays ``pointer`` (each row's neuron index),
``bias`` (its up-projection bias), ``num_used`` (rows in use) and ``last_k_active`` (the active masks of the
last k tokens, a ring). Per token (:meth:`NeuronCache.step`), with ``window`` the union of the last k masks
including this token's:

1. **delete** ``cached \\ window``: a linear scan of the used rows; each deleted row is overwritten by the
   current last kept row and the count drops (so rows stay packed in ``matrix[:num_used]``);
2. **insert** ``active \\ cached``: the new bundles, read from the source (a
:class:`~sysmodel.designs.flash.store.FlashReader`
   or an in-memory :class:`~sysmodel.designs.flash.store.FFN`), appended at ``num_used``;
3. **compute** (:meth:`NeuronCache.ffn`) from the first ``num_used`` rows only.

A window that needs more than ``capacity`` rows is a ValueError naming it, never a resize.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from sysmodel.designs.flash.store import FFN


class Source(Protocol):
    @property
    def d_model(self) -> int: ...

    @property
    def d_ff(self) -> int: ...

    def load(self, neurons: np.ndarray) -> np.ndarray: ...


def ffn_rows(x: np.ndarray, rows: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A ReLU FFN over the neurons whose bundles are ``rows`` (n, 2 d_model), in the rows' order.

    Semantics (so two callers holding the same rows in the same order agree bit for bit): the values are
    widened to float32; h_j = relu(sum_k up_j[k] x[k] + bias_j), the sum being numpy's ``add.reduce`` over
    the contiguous last axis (pairwise, fixed by the length); out = sum_j h_j down_j, accumulated row after
    row in float32 in the given order."""
    d = rows.shape[1] // 2
    r = np.ascontiguousarray(rows, dtype=np.float32)
    h = np.maximum(np.add.reduce(r[:, :d] * x.astype(np.float32), axis=1) + bias.astype(np.float32), 0)
    out = np.zeros(d, np.float32)
    for j in range(r.shape[0]):
        out += h[j] * r[j, d:]
    return out


def dense_active(ffn: FFN, x: np.ndarray, active: np.ndarray) -> np.ndarray:
    """The dense FFN restricted to ``active`` neurons, in ascending neuron order (the cache's reference)."""
    idx = np.flatnonzero(active)
    return ffn_rows(x, ffn.load(idx), ffn.bias[idx])


@dataclass
class StepStats:
    """One token's cache traffic: neurons ``loaded`` from the source and ``evicted``, rows ``moved`` within
    DRAM to fill holes, and ``used`` rows after the step."""

    loaded: int
    evicted: int
    moved: int
    used: int


class NeuronCache:
    """One layer's neuron cache (module docstring). ``capacity``: preallocated rows (Req_i); ``window``: the
    k tokens whose active neurons stay cached (k >= 1, the current token included)."""

    def __init__(self, source: Source, bias: np.ndarray, capacity: int, window: int, dtype=np.float32):
        if not 1 <= capacity <= source.d_ff:
            raise ValueError(f"capacity: {capacity} rows not allowed; 1 to d_ff = {source.d_ff}")
        if window < 1:
            raise ValueError(f"window: {window} tokens not allowed; at least 1")
        if bias.shape != (source.d_ff,):
            raise ValueError(f"bias: shape {bias.shape}, expected ({source.d_ff},)")
        self.source, self.all_bias, self.window = source, bias, window
        self.matrix = np.zeros((capacity, 2 * source.d_model), dtype)
        self.pointer = np.full(capacity, -1, np.int64)
        self.bias = np.zeros(capacity, bias.dtype)
        self.num_used = 0
        self.last_k_active = np.zeros((window, source.d_ff), bool)
        self.tokens = 0

    @property
    def capacity(self) -> int:
        return self.matrix.shape[0]

    def cached(self) -> np.ndarray:
        """A mask over the d_ff neurons: those in ``matrix[:num_used]``."""
        mask = np.zeros(self.source.d_ff, bool)
        mask[self.pointer[: self.num_used]] = True
        return mask

    def _delete(self, window: np.ndarray) -> tuple[int, int]:
        n = self.num_used
        keep = window[self.pointer[:n]]
        nk = int(keep.sum())
        holes = np.flatnonzero(~keep[:nk])  # scanned upward, each filled by the last kept row
        fillers = (np.flatnonzero(keep[nk:]) + nk)[::-1]
        for a in (self.matrix, self.pointer, self.bias):
            a[holes] = a[fillers]
        self.pointer[nk:n] = -1
        self.num_used = nk
        return n - nk, holes.size

    def step(self, active: np.ndarray) -> StepStats:
        """Advance one token whose active (predicted) neurons are the mask ``active`` (d_ff,)."""
        active = np.asarray(active, bool)
        if active.shape != (self.source.d_ff,):
            raise ValueError(f"active: shape {active.shape}, expected ({self.source.d_ff},)")
        self.last_k_active[self.tokens % self.window] = active
        self.tokens += 1
        evicted, moved = self._delete(np.asarray(self.last_k_active.any(axis=0)))
        new = np.flatnonzero(active & ~self.cached())
        if self.num_used + new.size > self.capacity:
            raise ValueError(
                f"capacity: the window needs {self.num_used + new.size} rows, the cache has "
                f"{self.capacity}; raise capacity (Req_i) or shrink the window"
            )
        lo, hi = self.num_used, self.num_used + new.size
        self.matrix[lo:hi] = self.source.load(new)
        self.pointer[lo:hi] = new
        self.bias[lo:hi] = self.all_bias[new]
        self.num_used = hi
        return StepStats(new.size, evicted, moved, hi)

    def ffn(self, x: np.ndarray, active: np.ndarray) -> np.ndarray:
        """The FFN over this token's ``active`` neurons, from ``matrix[:num_used]`` in ascending neuron order."""
        rows = np.flatnonzero(np.asarray(active, bool)[self.pointer[: self.num_used]])
        if rows.size != np.count_nonzero(active):
            raise ValueError("active: some neurons are not cached; step() with this token's mask first")
        rows = rows[np.argsort(self.pointer[rows], kind="stable")]
        return ffn_rows(x, self.matrix[rows], self.bias[rows])
