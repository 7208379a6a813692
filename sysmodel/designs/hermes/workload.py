"""Hermes activation workloads: seeded per-token, per-layer neuron activations whose statistics are the
paper's (§I, §II-B, §III-B), and real traces from ``.npz`` files.

The generator (a Gaussian copula, so every statistic has a closed form the parameters are solved from):

* Neuron i of a (layer, block) has a profile popularity g_i ~ N(0, 1); a sequence sees
  g'_i = sqrt(1 - d^2) g_i + d h_i with its own h_i ~ N(0, 1) (``dynamic_hot``: how much a sequence's hot set
  differs from the profiled one).
* Token t activates the neuron iff mu + sigma g'_i + z_{t,i} > 0, so P(active) = Phi(mu + sigma g'_i).
  mu and sigma are solved so that the mean activation is 1 - ``sparsity`` and a sequence's top
  ``hot_neurons`` (by its own g') do ``hot_work`` of its activations. Per sequence, because pooled over
  sequences the drift that makes 52% of the hot set vary caps the profile's skew below 80% in this model.
* z is N(0, 1) per neuron and token: z_l = a (z_{l-1}[p1] + z_{l-1}[p2]) / sqrt(2) + sqrt(1 - a^2) y_l with two
  planted parents p1, p2 in the previous layer (the paper's top-2 correlated neurons, a = ``layer_coupling``)
  and y an AR(1) process over tokens whose coefficient r is solved so that adjacent tokens share
  ``adjacent_similarity`` of their active neurons.

Blocks: ``attn`` (the QKV input dimensions behind the ReLU inserted before QKV, ``hidden`` neurons) and
``mlp`` (FFN neurons, ``intermediate``). Layers are statistically identical, so a run may generate fewer
layers than the model has: they stand for all of them (``sysmodel.designs.hermes.model.simulate`` scales their time
by model layers / trace layers). A trace file's layers are read the same way: fewer than the model's are a
sample of its layers; more are refused.

Trace files (``.npz``, :func:`load_trace`): one boolean array per (layer, block) named ``layer{l}_{block}``
of shape (batch, tokens, neurons) — tokens include the prompt — plus ``prefill`` (prompt tokens, an int)
and, optionally, ``parents_layer{l}_{block}`` (neurons, 2) ints: each neuron's top-2 correlated neurons
of the previous layer (computed by :func:`correlation_table` when absent). Any other name is refused, and
files are read without unpickling (data, never code). A loaded trace's offline profile (what the partition
ILP sees) is its prompts' activation frequencies.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from sysmodel.designs.hermes import paper
from sysmodel.designs.npz import read_npz

BLOCKS = ("attn", "mlp")
_X = np.linspace(-9, 9, 2001)  # quadrature grid for the N(0, 1) expectations below
_W = np.exp(-(_X**2) / 2.0) / np.sqrt(2 * np.pi) * (_X[1] - _X[0])  # N(0, 1) density: scipy.stats' formula
_SCRATCH = 1 << 21  # elements of one block's (neurons, columns) scratch in correlation_table: 16 MB of int64


@dataclass(frozen=True)
class ActivationStats:
    """The paper's activation statistics, each a named parameter with its source."""

    sparsity: float = float(paper.WORKLOAD["sparsity"])  # §II-B: "70%-90%" of activations are zero; the midpoint [S]
    hot_neurons: float = 0.2  # §I, §III-A: ~20% of neurons ...
    hot_work: float = float(paper.WORKLOAD["hot_work"])  # ... account for ~80% of the computation
    adjacent_similarity: float = float(paper.WORKLOAD["adjacent"])  # §III-B1: adjacent tokens share >90%
    dynamic_hot: float = float(paper.WORKLOAD["dynamic_hot"])  # §III-B: ~52% of the initial hot neurons vary
    #                                                            (LLaMA2-70B); read as leaving the hot set [S]
    layer_coupling: float = 0.6  # [S] weight of the two planted parents; §III-B2 gives only an example (>90%)

    def __post_init__(self) -> None:
        for name in ("sparsity", "hot_neurons", "adjacent_similarity", "dynamic_hot", "layer_coupling"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ValueError(f"stats.{name}: {v} not allowed; a fraction in (0, 1)")
        if not self.hot_neurons < self.hot_work < 1:
            raise ValueError(f"stats.hot_work: {self.hot_work} not allowed; in (hot_neurons, 1)")


# Per model family [Q Hermes §II-B: 70-90% of activations are zero; §V-A3: OPT has native ReLU, LLaMA2 and Falcon
# are ReLU-fied (SparseLLM checkpoints)]: native ReLU at the sparse end of the range (Deja Vu reports ~85%+
# contextual MLP sparsity on OPT), ReLU-fied models at its middle [S: which point each family takes; the lower
# end cannot hold "20% of neurons do 80% of the work", which needs at most 20% active]; Falcon's adjacent tokens
# share 95% of their active neurons [Q §III-B1, Fig. 4a].
FAMILY_STATS = {
    "opt": ActivationStats(sparsity=0.9),
    "llama": ActivationStats(sparsity=0.8),
    "falcon": ActivationStats(sparsity=0.8, adjacent_similarity=0.95),
}
RELU_FIED = FAMILY_STATS["llama"]  # any other model runs on Hermes ReLU-fied, as LLaMA2 and Falcon do [S]


def stats_for(model: str) -> ActivationStats:
    """The activation statistics of ``model``'s family (:data:`FAMILY_STATS`)."""
    return FAMILY_STATS.get(model.split("-")[0].rstrip("0123456789"), RELU_FIED)


def _both_above(q: np.ndarray | float, rho: float) -> np.ndarray:
    """P(X > q, Y > q) for standard normals of correlation rho (vectorised over q)."""
    q = np.atleast_1d(np.asarray(q, float))
    s = np.sqrt(max(1 - rho * rho, 1e-12))
    inner = ndtr((rho * _X[None, :] - q[:, None]) / s)
    return ((_X[None, :] > q[:, None]) * inner * _W).sum(axis=1)


@dataclass(frozen=True)
class Solved:
    """The generator's parameters solved from :class:`ActivationStats` (module docstring)."""

    mu: float
    sigma: float
    drift: float  # d
    ar: float  # r
    coupling: float  # a


def _mu(sigma: float, active: float) -> float:
    return ndtri(active) * np.sqrt(1 + sigma * sigma)


@functools.lru_cache(maxsize=16)
def solve(stats: ActivationStats) -> Solved:
    active, q_hot = 1 - stats.sparsity, ndtri(1 - stats.hot_neurons)

    def share(sigma: float) -> float:
        p = ndtr(_mu(sigma, active) + sigma * _X)
        return float((p * _W)[q_hot < _X].sum() / (p * _W).sum()) - stats.hot_work

    sigma = brentq(share, 1e-3, 50.0)
    mu = _mu(sigma, active)
    # the sequence's hot set (top hot_neurons by g') keeps 1 - dynamic_hot of the profile's
    keep = 1 - stats.dynamic_hot
    drift = brentq(lambda d: _both_above(q_hot, np.sqrt(1 - d * d))[0] / stats.hot_neurons - keep, 1e-6, 1 - 1e-9)
    beta = mu + sigma * _X  # per-neuron offsets over the popularity distribution (the sequence's own)
    p = ndtr(beta)

    def similarity(r: float) -> float:  # E|A_t & A_t-1| / E|A_t|: z has the same lag-1 correlation r
        return float((_both_above(-beta, r) * _W).sum() / (p * _W).sum()) - stats.adjacent_similarity

    ar = brentq(similarity, 0.0, 1 - 1e-9)
    return Solved(float(mu), float(sigma), float(drift), float(ar), stats.layer_coupling)


def profile_freq(g: np.ndarray, s: Solved) -> np.ndarray:
    """Activation frequency of neurons of profile popularity ``g`` averaged over sequences (what the
    paper's offline profiling on C4/Pile measures): Phi((mu + sigma sqrt(1-d^2) g) / sqrt(1 + sigma^2 d^2))."""
    return ndtr((s.mu + s.sigma * np.sqrt(1 - s.drift**2) * g) / np.sqrt(1 + (s.sigma * s.drift) ** 2))


def stage(bar: Any, desc: str, total: int | None = None) -> None:
    """Name the next step on ``bar`` (a tqdm progress bar, or None), counting to ``total`` when it counts."""
    if bar is not None:
        bar.set_description_str(desc, refresh=False)
        bar.reset(total=total)  # and redraw


@dataclass
class Trace:
    """Activations of ``batch`` sequences: ``acts[(layer, block)]`` bool (batch, tokens, neurons), the first
    ``prefill`` tokens being the prompt; ``parents[(layer, block)]`` (neurons, 2) correlation table (layer 0:
    none); ``freq[(layer, block)]`` offline profile frequencies."""

    acts: dict[tuple[int, str], np.ndarray]
    prefill: int
    parents: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)
    freq: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)

    @property
    def sim_layers(self) -> int:
        return 1 + max(layer for layer, _ in self.acts)

    @property
    def batch(self) -> int:
        return next(iter(self.acts.values())).shape[0]

    @property
    def tokens(self) -> int:
        return next(iter(self.acts.values())).shape[1]

    def save(self, path: Path, parents: bool = True) -> Path:
        """The trace as a file :func:`load_trace` reads; without ``parents``, loading profiles them."""
        arrays = {f"layer{layer}_{b}": a for (layer, b), a in self.acts.items()}
        arrays |= {f"parents_layer{layer}_{b}": p for (layer, b), p in self.parents.items() if parents}
        np.savez_compressed(path, prefill=self.prefill, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as its bool options
        return path


def generate(
    neurons: dict[str, int],
    sim_layers: int,
    tokens: int,
    prefill: int,
    batch: int = 1,
    stats: ActivationStats = ActivationStats(),
    seed: int = 0,
    bar: Any = None,
) -> Trace:
    """Seeded activations of ``batch`` sequences over ``tokens`` tokens (``prefill`` of them the prompt),
    for ``sim_layers`` layers of blocks sized ``neurons`` ({"attn": hidden, "mlp": intermediate});
    ``bar`` (a progress bar) counts the tokens."""
    if set(neurons) != set(BLOCKS) or min(neurons.values()) < 2:
        raise ValueError(f"neurons: {neurons} not allowed; {{'attn': n, 'mlp': n}} with n >= 2")
    if not 0 < prefill < tokens or batch < 1 or sim_layers < 1:
        raise ValueError("prefill: in [1, tokens); batch, sim_layers: >= 1")
    stage(bar, "solving the activation statistics")
    s, rng = solve(stats), np.random.default_rng(seed)
    stage(bar, "generating activations", tokens)
    tr = Trace({}, prefill)
    innov, keep = np.sqrt(1 - s.ar**2), np.sqrt(1 - s.coupling**2)
    beta: dict = {}
    y: dict = {}
    for b in BLOCKS:
        n = neurons[b]
        for layer in range(sim_layers):
            g = rng.standard_normal(n)
            tr.freq[(layer, b)] = profile_freq(g, s)
            beta[(layer, b)] = (
                s.mu + s.sigma * (np.sqrt(1 - s.drift**2) * g + s.drift * rng.standard_normal((batch, n)))
            ).astype(np.float32)
            tr.acts[(layer, b)] = np.empty((batch, tokens, n), bool)
            if layer:
                par = np.stack([rng.permutation(n), rng.permutation(n)], axis=1)  # two parents per neuron
                same = par[:, 0] == par[:, 1]
                par[same, 1] = (par[same, 1] + 1) % n
                tr.parents[(layer, b)] = par
    for t in range(tokens):  # token by token, so only one token's latents are held
        if bar is not None:
            bar.update()
        for b in BLOCKS:
            z_prev = None
            for layer in range(sim_layers):
                key, n = (layer, b), neurons[b]
                e = rng.standard_normal((batch, n), dtype=np.float32)
                y[key] = e if t == 0 else s.ar * y[key] + innov * e
                z = (
                    y[key]
                    if z_prev is None
                    else s.coupling * (z_prev[:, tr.parents[key][:, 0]] + z_prev[:, tr.parents[key][:, 1]]) / np.sqrt(2)
                    + keep * y[key]
                )
                tr.acts[key][:, t] = beta[key] + z > 0
                z_prev = z
    return tr


def _distinct_columns(prev: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """``prev``'s distinct activation columns in order of their first neuron (so argmax's ties go to the
    lowest): that neuron's index, and each column's first ``top`` neurons (-1 past its count)."""
    _, first, group = np.unique(np.packbits(prev, axis=0).T, axis=0, return_index=True, return_inverse=True)
    rank = np.argsort(first)
    group = np.argsort(rank)[group.reshape(-1)]
    order, size = np.argsort(group, kind="stable"), np.bincount(group)
    at = (np.cumsum(size) - size)[:, None] + np.arange(top)
    return first[rank], np.where(at < (np.cumsum(size))[:, None], order[np.minimum(at, len(order) - 1)], -1)


def correlation_table(prev: np.ndarray, cur: np.ndarray, top: int = 2) -> np.ndarray:
    """Each current-layer neuron's ``top`` previous-layer neurons ranked by P(cur active | prev active) on
    profiling activations ``prev`` (samples, n_prev) and ``cur`` (samples, n_cur); ties by co-activation
    count, then by index (notes §4.2 [S]). Previous-layer neurons with the same activation column rank
    alike for every current neuron, and current neurons with the same column rank alike, so distinct
    columns are ranked against distinct columns, a block at a time: memory stays at the block's scratch
    whatever the layer widths, and a short profile (few samples, few distinct columns) is quick."""
    prev, cur = np.asarray(prev, bool), np.asarray(cur, bool)
    if prev.ndim != 2 or cur.ndim != 2 or prev.shape[0] != cur.shape[0] or prev.shape[1] < top:
        raise ValueError(
            f"prev, cur: shapes {prev.shape}, {cur.shape} not allowed; (samples, neurons) each, >= {top} previous"
        )
    first, members = _distinct_columns(prev, top)
    cols = prev[:, first].astype(np.float32)
    count = np.maximum(cols.sum(axis=0), 1)
    # current neurons with the same column get the same parents: rank each distinct column once
    _, same, back = np.unique(np.packbits(cur, axis=0).T, axis=0, return_index=True, return_inverse=True)
    cur = cur[:, same]
    out = np.empty((cur.shape[1], top), np.int64)
    step = max(1, _SCRATCH // len(first))
    for lo in range(0, cur.shape[1], step):
        both = cur[:, lo : lo + step].T.astype(np.float32) @ cols  # co-activation counts, 0..samples
        # (cond, both) as one integer: a non-negative float32's bits order as it does, and both < samples + 1
        key = (both / count).view(np.int32).astype(np.int64) * (len(cur) + 1) + both.astype(np.int64)
        rows, picks = np.arange(len(key))[:, None], []
        for _ in range(top):  # the best remaining column (argmax: ties to the lowest first neuron)
            g = key.argmax(axis=1)[:, None]
            picks.append((members[g[:, 0]], key[rows, g]))
            key[rows, g] = -1
        # the top neurons are among these columns' first ones; tied columns interleave by index
        who, best = (np.concatenate(x, axis=1) for x in zip(*picks, strict=True))
        best = np.where(who < 0, -2, np.repeat(best, top, axis=1))  # a column's missing members rank last
        out[lo : lo + step] = np.take_along_axis(who, np.lexsort((who, -best), axis=-1)[:, :top], axis=1)
    return out[back.reshape(-1)]


_KEY = re.compile(r"(parents_)?layer(0|[1-9]\d*)_(\w+)")  # a trace file's array names besides prefill


def _split(arrays: dict[str, np.ndarray], path: Path) -> tuple[dict, dict]:
    """The activation and parents arrays by (layer, block); any other name than theirs and prefill refused."""
    acts: dict[tuple[int, str], np.ndarray] = {}
    parents: dict[tuple[int, str], np.ndarray] = {}
    for key, a in arrays.items():
        m = _KEY.fullmatch(key)
        if key != "prefill" and (m is None or m[3] not in BLOCKS):
            raise ValueError(
                f"trace {path}: key {key!r} not allowed; prefill, layer<l>_<block>, parents_layer<l>_<block> "
                f"(l a layer number, block one of {', '.join(BLOCKS)})"
            )
        if m is not None:
            (parents if m[1] else acts)[(int(m[2]), m[3])] = a
    if "prefill" not in arrays:
        raise ValueError(f"trace {path}: missing 'prefill' (prompt tokens)")
    if not acts:
        raise ValueError(f"trace {path}: no layer<l>_<block> arrays")
    return acts, parents


def _check_acts(acts: dict[tuple[int, str], np.ndarray], path: Path) -> None:
    for (layer, b), a in acts.items():
        if a.dtype != bool or a.ndim != 3 or a.shape[0] < 1 or a.shape[2] < 2:
            raise ValueError(
                f"trace {path}: layer{layer}_{b} is {a.dtype} {a.shape}; bool (batch, tokens, neurons), "
                "batch >= 1, neurons >= 2"
            )
    layers = 1 + max(layer for layer, _ in acts)
    for b in BLOCKS:
        if any((layer, b) not in acts for layer in range(layers)):
            raise ValueError(f"trace {path}: block {b!r} misses some of layers 0..{layers - 1}")
        shapes = {acts[(layer, b)].shape for layer in range(layers)}
        if len(shapes) != 1:
            raise ValueError(
                f"trace {path}: {b} arrays differ in shape {sorted(shapes)}; one (batch, tokens, neurons) per block"
            )
    if len({acts[(0, b)].shape[:2] for b in BLOCKS}) != 1:
        raise ValueError(f"trace {path}: attn and mlp arrays differ in (batch, tokens)")


def _check_parents(parents: dict, acts: dict, path: Path) -> None:
    for (layer, b), p in parents.items():
        if layer == 0 or (layer, b) not in acts:
            raise ValueError(
                f"trace {path}: parents_layer{layer}_{b} not allowed; parents name a neuron's correlated "
                "neurons in the previous layer, so only layers >= 1 of the trace's blocks have them"
            )
        n, n_prev = acts[(layer, b)].shape[2], acts[(layer - 1, b)].shape[2]
        if p.shape != (n, 2) or not np.issubdtype(p.dtype, np.integer) or p.min() < 0 or p.max() >= n_prev:
            raise ValueError(
                f"trace {path}: parents_layer{layer}_{b} {p.dtype} {p.shape} not allowed; ({n}, 2) "
                f"integer indices into the previous layer's {n_prev} neurons"
            )


def load_trace(path: Path, check: Callable[[Trace], None] | None = None, bar: Any = None) -> Trace:
    """A trace file (module docstring); a wrong key, dtype or shape is a ValueError naming it, as is what
    ``check`` refuses (called before the profiling, which computes the correlation tables a file lacks;
    ``bar``, a progress bar, counts its layers)."""
    stage(bar, f"reading {path.name}")
    arrays = read_npz(path, "trace")
    acts, parents = _split(arrays, path)
    _check_acts(acts, path)
    _check_parents(parents, acts, path)
    pf, tokens = arrays["prefill"], acts[(0, "mlp")].shape[1]
    if pf.ndim != 0 or not np.issubdtype(pf.dtype, np.integer):
        raise ValueError(f"trace {path}: prefill is {pf.dtype} {pf.shape}; one integer (prompt tokens)")
    if not 0 < int(pf) < tokens:
        raise ValueError(f"trace {path}: prefill {int(pf)} not allowed; in [1, {tokens - 1}] (tokens {tokens})")
    tr = Trace(acts, int(pf))
    if check is not None:
        check(tr)
    stage(bar, f"profiling {path.name}", tr.sim_layers)
    for layer in range(tr.sim_layers):
        for b in BLOCKS:
            prompt = acts[(layer, b)][:, : tr.prefill].reshape(-1, acts[(layer, b)].shape[2])
            tr.freq[(layer, b)] = prompt.mean(axis=0)
            if layer and (layer, b) in parents:
                tr.parents[(layer, b)] = parents[(layer, b)]
            elif layer:
                prev = acts[(layer - 1, b)][:, : tr.prefill].reshape(-1, acts[(layer - 1, b)].shape[2])
                tr.parents[(layer, b)] = correlation_table(prev, prompt)
        if bar is not None:
            bar.update()
    return tr
