"""The low-rank activation predictor (LLM in a flash §3.1, App. B; notes §3.2(b)) and the synthetic
activations it is trained on here.

Predictor: Linear(d_model -> r, no bias) -> Linear(r -> d_ff) -> sigmoid -> threshold; input the attention
output of the same layer, output the mask of FFN neurons predicted active (ReLU output > 0). Training
[S, the paper gives no internals]: binary cross-entropy with the positives weighted by the layer's
negative/positive ratio (balanced), Adam, minibatches.

Synthetic activations (:func:`synthetic`), because OPT/Falcon/Llama weights cannot be downloaded here.
Documented structure [S]: the attention output is x_t = U z_t + sigma * e_t, with z_t in R^rank an AR(1)
process over tokens (coefficient ``rho``; the token-to-token correlation windowing exploits), U a random
d_model x rank basis and e_t white noise (what no low-rank predictor can see); the FFN pre-activation is
x_t W_up + b with W_up ~ N(0, 1/d_model) and each neuron's bias set so it fires on a share p_i of tokens,
p_i log-normal around ``active`` (OPT-6.7B's 3.3% average, Table 6) so a few neurons are hot. A user's real
dumps load from ``.npz`` (:func:`load_dump`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import norm

from sysmodel.designs.flash import paper
from sysmodel.designs.npz import read_npz


@dataclass(frozen=True)
class Activations:
    """``x`` (tokens, d_model) float32 predictor inputs, ``active`` (tokens, d_ff) bool true ReLU activity."""

    x: np.ndarray
    active: np.ndarray


@dataclass(frozen=True)
class Synthetic:
    """Parameters of :func:`synthetic` (module docstring)."""

    d_model: int = 512
    d_ff: int = 2048
    rank: int = 32  # [S] latent rank of the attention output
    sigma: float = 0.25  # [S] full-rank noise, relative to the latent part's scale
    rho: float = 0.9  # [S] AR(1) token correlation of the latent state
    active: float = paper.OPT_ACTIVE  # [Q] Table 6: 3.30% of OPT-6.7B's FFN neurons active per token
    spread: float = 0.7  # [S] log-normal sigma of the per-neuron firing rates (a few hot neurons)


def synthetic(tokens: int, p: Synthetic = Synthetic(), seed: int = 0) -> Activations:
    """``tokens`` consecutive tokens of one layer (module docstring), seeded."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((p.d_model, p.rank)) / np.sqrt(p.rank)
    z = np.empty((tokens, p.rank))
    z[0] = rng.standard_normal(p.rank)
    for t in range(1, tokens):
        z[t] = p.rho * z[t - 1] + np.sqrt(1 - p.rho**2) * rng.standard_normal(p.rank)
    x = (z @ u.T + p.sigma * rng.standard_normal((tokens, p.d_model))).astype(np.float32)
    w = rng.standard_normal((p.d_model, p.d_ff)) / np.sqrt(p.d_model)
    rate = np.clip(p.active * np.exp(p.spread * rng.standard_normal(p.d_ff) - p.spread**2 / 2), 1e-4, 0.5)
    # x w_i is N(0, w_i' (U U' + sigma^2 I) w_i) over tokens: neuron i fires above its (1 - p_i) quantile
    scale = np.sqrt((((u @ u.T + p.sigma**2 * np.eye(p.d_model)) @ w) * w).sum(axis=0))
    pre = x @ w - norm.ppf(1 - rate) * scale
    return Activations(x, pre > 0)


def load_dump(path: Path) -> Activations:
    """A user's activation dump: ``.npz`` with ``x`` (tokens, d_model) float predictor inputs and either
    ``active`` (tokens, d_ff) bool or ``pre`` (tokens, d_ff) float pre-activations (active = pre > 0)."""
    data = read_npz(path, "activation dump")
    if "x" not in data or not ("active" in data or "pre" in data):
        raise ValueError(f"activation dump {path}: needs 'x' and one of 'active' or 'pre'; has {sorted(data)}")
    x = data["x"]
    if "active" not in data and not np.issubdtype(data["pre"].dtype, np.number):
        raise ValueError(f"activation dump {path}: pre is {data['pre'].dtype}; finite floats")
    act = data["active"] if "active" in data else data["pre"] > 0
    if x.ndim != 2 or act.ndim != 2 or x.shape[0] != act.shape[0]:
        raise ValueError(
            f"activation dump {path}: x is {x.shape} and active {act.shape}; (tokens, d_model) and "
            "(tokens, d_ff) with the same tokens"
        )
    if act.dtype != bool:
        raise ValueError(f"activation dump {path}: active is {act.dtype}; bool")
    if not np.issubdtype(x.dtype, np.number) or not np.isfinite(x).all():
        raise ValueError(f"activation dump {path}: x has non-finite or non-numeric values; finite floats")
    if "pre" in data and not np.isfinite(data["pre"]).all():
        raise ValueError(f"activation dump {path}: pre has non-finite values (NaN or Inf); finite floats")
    return Activations(x.astype(np.float32), act)


@dataclass
class Predictor:
    """Linear(d_model -> r) -> Linear(r -> d_ff) + c -> sigmoid -> ``threshold``."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    threshold: float = paper.PREDICTOR_THRESHOLD

    @property
    def rank(self) -> int:
        return self.a.shape[1]

    def logits(self, x: np.ndarray) -> np.ndarray:
        return (x @ self.a) @ self.b + self.c

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.logits(x) > np.log(self.threshold / (1 - self.threshold))


def train(
    data: Activations,
    rank: int,
    epochs: int = 20,
    batch: int = 128,
    lr: float = 1e-2,
    seed: int = 0,
    progress: bool = False,
) -> Predictor:
    """Balanced-BCE training with Adam (module docstring). ``epochs``, ``batch``, ``lr``: [S] (the paper's
    2 epochs over 10,000 C4 samples on an A100 has no counterpart at this scale). ``progress``: a bar over
    epochs on a terminal."""
    from sysmodel.progress import progress as progress_bar

    n, d = data.x.shape
    f = data.active.shape[1]
    if not 1 <= rank <= min(d, f):
        raise ValueError(f"rank: {rank} not allowed; 1 to min(d_model, d_ff) = {min(d, f)}")
    rng = np.random.default_rng(seed)
    pos = min(max(data.active.mean(), 1e-6), 1 - 1e-6)  # all-active or none: the bias stays finite
    w_pos = (1 - pos) / pos  # positives weighted by the class ratio
    params = [
        rng.standard_normal((d, rank)) / np.sqrt(d),
        rng.standard_normal((rank, f)) / np.sqrt(rank),
        np.full(f, np.log(pos / (1 - pos))),
    ]
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    step = 0
    bar = progress_bar(epochs, "train predictor", progress)
    for _ in range(epochs):
        bar.update()
        order = rng.permutation(n)  # a fresh shuffle per epoch, every minibatch drawn from it
        for lo in range(0, n, batch):
            sel = order[lo : lo + batch]
            x, y = data.x[sel].astype(np.float64), data.active[sel]
            h = x @ params[0]
            prob = 1 / (1 + np.exp(-(h @ params[1] + params[2])))
            wgt = np.where(y, w_pos, 1.0)
            g = wgt * (prob - y) / (x.shape[0] * f)  # d(loss)/d(logit)
            grads = [x.T @ (g @ params[1].T), h.T @ g, g.sum(axis=0)]
            step += 1
            for q, gq, mq, vq in zip(params, grads, m, v, strict=True):
                mq *= 0.9
                mq += 0.1 * gq
                vq *= 0.999
                vq += 0.001 * gq**2
                q -= lr * (mq / (1 - 0.9**step)) / (np.sqrt(vq / (1 - 0.999**step)) + 1e-12)
    bar.close()
    return Predictor(*(q.astype(np.float32) for q in params))


@dataclass(frozen=True)
class Quality:
    """False-negative rate (missed active / active), false-positive rate (predicted inactive / inactive),
    and the predicted and true active shares."""

    fnr: float
    fpr: float
    predicted: float
    active: float


def evaluate(pred: Predictor, data: Activations) -> Quality:
    got, want = pred.predict(data.x), data.active
    return Quality(
        float((want & ~got).sum() / max(want.sum(), 1)),
        float((got & ~want).sum() / max((~want).sum(), 1)),
        float(got.mean()),
        float(want.mean()),
    )
