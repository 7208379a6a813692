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
layers than the model has and scale (:class:`Trace.layers`).

Trace files (``.npz``, :func:`load_trace`): one boolean array per (layer, block) named ``layer{l}_{block}``
of shape (batch, tokens, neurons) — tokens include the prompt — plus ``prefill`` (prompt tokens, an int)
and, optionally, ``parents_layer{l}_{block}`` (neurons, 2) ints: each neuron's top-2 correlated neurons
of the previous layer (computed by :func:`correlation_table` when absent). A loaded trace's offline profile
(what the partition ILP sees) is its prompts' activation frequencies.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from sysmodel.hermes import paper

BLOCKS = ("attn", "mlp")
_X = np.linspace(-9, 9, 2001)  # quadrature grid for the N(0, 1) expectations below
_W = norm.pdf(_X) * (_X[1] - _X[0])


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
    inner = norm.cdf((rho * _X[None, :] - q[:, None]) / s)
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
    return norm.ppf(active) * np.sqrt(1 + sigma * sigma)


@functools.lru_cache(maxsize=16)
def solve(stats: ActivationStats) -> Solved:
    active, q_hot = 1 - stats.sparsity, norm.ppf(1 - stats.hot_neurons)

    def share(sigma: float) -> float:
        p = norm.cdf(_mu(sigma, active) + sigma * _X)
        return float((p * _W)[q_hot < _X].sum() / (p * _W).sum()) - stats.hot_work

    sigma = brentq(share, 1e-3, 50.0)
    mu = _mu(sigma, active)
    # the sequence's hot set (top hot_neurons by g') keeps 1 - dynamic_hot of the profile's
    keep = 1 - stats.dynamic_hot
    drift = brentq(lambda d: _both_above(q_hot, np.sqrt(1 - d * d))[0] / stats.hot_neurons - keep, 1e-6, 1 - 1e-9)
    beta = mu + sigma * _X  # per-neuron offsets over the popularity distribution (the sequence's own)
    p = norm.cdf(beta)

    def similarity(r: float) -> float:  # E|A_t & A_t-1| / E|A_t|: z has the same lag-1 correlation r
        return float((_both_above(-beta, r) * _W).sum() / (p * _W).sum()) - stats.adjacent_similarity

    ar = brentq(similarity, 0.0, 1 - 1e-9)
    return Solved(float(mu), float(sigma), float(drift), float(ar), stats.layer_coupling)


def profile_freq(g: np.ndarray, s: Solved) -> np.ndarray:
    """Activation frequency of neurons of profile popularity ``g`` averaged over sequences (what the
    paper's offline profiling on C4/Pile measures): Phi((mu + sigma sqrt(1-d^2) g) / sqrt(1 + sigma^2 d^2))."""
    return norm.cdf((s.mu + s.sigma * np.sqrt(1 - s.drift**2) * g) / np.sqrt(1 + (s.sigma * s.drift) ** 2))


@dataclass
class Trace:
    """Activations of ``batch`` sequences: ``acts[(layer, block)]`` bool (batch, tokens, neurons), the first
    ``prefill`` tokens being the prompt; ``parents[(layer, block)]`` (neurons, 2) correlation table (layer 0:
    none); ``freq[(layer, block)]`` offline profile frequencies; ``layers`` the model's layer count the
    generated ones stand for."""

    acts: dict[tuple[int, str], np.ndarray]
    prefill: int
    parents: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)
    freq: dict[tuple[int, str], np.ndarray] = field(default_factory=dict)
    layers: int = 0

    @property
    def sim_layers(self) -> int:
        return 1 + max(layer for layer, _ in self.acts)

    @property
    def batch(self) -> int:
        return next(iter(self.acts.values())).shape[0]

    @property
    def tokens(self) -> int:
        return next(iter(self.acts.values())).shape[1]

    def save(self, path: Path) -> Path:
        arrays = {f"layer{layer}_{b}": a for (layer, b), a in self.acts.items()}
        arrays |= {f"parents_layer{layer}_{b}": p for (layer, b), p in self.parents.items()}
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
    layers: int | None = None,
) -> Trace:
    """Seeded activations of ``batch`` sequences over ``tokens`` tokens (``prefill`` of them the prompt),
    for ``sim_layers`` layers of blocks sized ``neurons`` ({"attn": hidden, "mlp": intermediate})."""
    if set(neurons) != set(BLOCKS) or min(neurons.values()) < 2:
        raise ValueError(f"neurons: {neurons} not allowed; {{'attn': n, 'mlp': n}} with n >= 2")
    if not 0 < prefill < tokens or batch < 1 or sim_layers < 1:
        raise ValueError("prefill: in [1, tokens); batch, sim_layers: >= 1")
    s, rng = solve(stats), np.random.default_rng(seed)
    tr = Trace({}, prefill, layers=layers or sim_layers)
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


def correlation_table(prev: np.ndarray, cur: np.ndarray, top: int = 2) -> np.ndarray:
    """Each current-layer neuron's ``top`` previous-layer neurons ranked by P(cur active | prev active) on
    profiling activations ``prev`` (samples, n_prev) and ``cur`` (samples, n_cur); ties by co-activation
    count (notes §4.2 [S])."""
    prev, cur = np.asarray(prev, np.float32), np.asarray(cur, np.float32)
    if prev.ndim != 2 or cur.ndim != 2 or prev.shape[0] != cur.shape[0]:
        raise ValueError(f"prev, cur: shapes {prev.shape}, {cur.shape} not allowed; (samples, neurons) each")
    both = cur.T @ prev  # (n_cur, n_prev) co-activation counts
    cond = both / np.maximum(prev.sum(axis=0), 1)[None, :]
    return np.lexsort((-both, -cond), axis=-1)[:, :top]


def load_trace(path: Path) -> Trace:
    """A trace file (module docstring); a wrong key, dtype or shape is a ValueError naming it."""
    try:
        data = np.load(path)
    except (OSError, ValueError) as e:
        raise ValueError(f"trace: cannot read {path}: {e}") from None
    if "prefill" not in data:
        raise ValueError(f"trace {path}: missing 'prefill' (prompt tokens)")
    acts, parents = {}, {}
    for key in data.files:
        if key.startswith("layer"):
            name, _, block = key[len("layer") :].partition("_")
            if block not in BLOCKS or not name.isdigit():
                raise ValueError(f"trace {path}: key {key!r} not allowed; layer<l>_<block>, block in {BLOCKS}")
            a = data[key]
            if a.dtype != bool or a.ndim != 3:
                raise ValueError(f"trace {path}: {key} is {a.dtype} {a.shape}; bool (batch, tokens, neurons)")
            acts[(int(name), block)] = a
        elif key.startswith("parents_layer"):
            name, _, block = key[len("parents_layer") :].partition("_")
            parents[(int(name), block)] = data[key]
    if not acts:
        raise ValueError(f"trace {path}: no layer<l>_<block> arrays")
    layers = 1 + max(layer for layer, _ in acts)
    for b in BLOCKS:
        if any((layer, b) not in acts for layer in range(layers)):
            raise ValueError(f"trace {path}: block {b!r} misses some of layers 0..{layers - 1}")
        shapes = {acts[(layer, b)].shape for layer in range(layers)}
        if len({(s[0], s[1]) for s in shapes}) != 1 or len(shapes) != 1:
            raise ValueError(
                f"trace {path}: {b} arrays differ in shape {sorted(shapes)}; one (batch, tokens, neurons) per block"
            )
    if len({acts[(0, b)].shape[:2] for b in BLOCKS}) != 1:
        raise ValueError(f"trace {path}: attn and mlp arrays differ in (batch, tokens)")
    pf = data["prefill"]
    if pf.ndim != 0 or not np.issubdtype(pf.dtype, np.integer):
        raise ValueError(f"trace {path}: prefill is {pf.dtype} {pf.shape}; one integer (prompt tokens)")
    prefill = int(pf)
    for layer, b in parents:
        if layer == 0 or (layer, b) not in acts:
            raise ValueError(
                f"trace {path}: parents_layer{layer}_{b} not allowed; parents name a neuron's correlated "
                "neurons in the previous layer, so only layers >= 1 of the trace's blocks have them"
            )
    tokens = acts[(0, "mlp")].shape[1]
    if not 0 < prefill < tokens:
        raise ValueError(f"trace {path}: prefill {prefill} not allowed; in [1, {tokens - 1}] (tokens {tokens})")
    tr = Trace(acts, prefill, layers=layers)
    for (layer, b), a in acts.items():
        prompt = a[:, :prefill].reshape(-1, a.shape[2])
        tr.freq[(layer, b)] = prompt.mean(axis=0)
        if layer:
            p = parents.get((layer, b))
            if p is None:
                prev = acts[(layer - 1, b)][:, :prefill].reshape(-1, acts[(layer - 1, b)].shape[2])
                p = correlation_table(prev, prompt)
            elif (
                p.shape != (a.shape[2], 2)
                or not np.issubdtype(p.dtype, np.integer)
                or p.min() < 0
                or p.max() >= acts[(layer - 1, b)].shape[2]
            ):
                raise ValueError(
                    f"trace {path}: parents_layer{layer}_{b} {p.shape} not allowed; ({a.shape[2]}, 2) "
                    "indices into the previous layer"
                )
            tr.parents[(layer, b)] = p
    return tr
