"""Expert routing for the Duplex system model: which experts a stage's tokens go to.

* :class:`UniformRouting` (the paper's setting, §VI "uniform top-2"): each token picks ``top_k`` distinct
  experts uniformly at random (seeded).
* :class:`TableRouting`: a user's routing trace — a NumPy ``.npy`` file, or ``.npz`` with an array named
  ``experts``, of integer shape (tokens, top_k): row t holds the experts token t was routed to. Stages take
  consecutive rows, wrapping around. An expert id outside the model's experts, a row with repeated ids or
  the wrong top-k is refused with a ValueError naming the field.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class UniformRouting:
    def __init__(self, experts: int, top_k: int, seed: int = 1):
        self.experts, self.top_k, self.rng = experts, top_k, np.random.default_rng(seed)

    def counts(self, tokens: int) -> np.ndarray:
        """Tokens per expert for a stage of ``tokens`` tokens: k picks without replacement per token (pick j
        is uniform over the experts not picked yet: a uniform index among experts - j, shifted past the
        earlier picks in increasing order)."""
        picks = np.empty((tokens, 0), dtype=np.int64)
        for j in range(self.top_k):
            r = self.rng.integers(0, self.experts - j, tokens)
            for prev in np.sort(picks, axis=1).T:
                r = r + (r >= prev)
            picks = np.column_stack([picks, r])
        return np.bincount(picks.ravel(), minlength=self.experts)


class TableRouting:
    def __init__(self, table: np.ndarray, experts: int, top_k: int, model: str = "the model"):
        t = np.asarray(table)
        if t.ndim != 2 or t.shape[0] < 1 or not np.issubdtype(t.dtype, np.integer):
            raise ValueError(f"routing: an integer array of shape (tokens, {top_k}) needed, got {t.dtype} {t.shape}")
        if t.shape[1] != top_k:
            raise ValueError(f"routing: {t.shape[1]} experts per token; {model} routes each token to top_k = {top_k}")
        bad = (t < 0) | (t >= experts)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            raise ValueError(
                f"routing: token {row} names expert {int(t[bad][0])}; {model} has experts 0..{experts - 1}"
            )
        srt = np.sort(t, axis=1)
        twice = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
        if twice.any():
            row = int(np.argmax(twice))
            raise ValueError(f"routing: token {row} names an expert twice ({t[row].tolist()}); the top-k are distinct")
        self.table, self.experts, self.pos = t, experts, 0

    def counts(self, tokens: int) -> np.ndarray:
        idx = (self.pos + np.arange(tokens)) % len(self.table)
        self.pos = int((self.pos + tokens) % len(self.table))
        return np.bincount(self.table[idx].ravel(), minlength=self.experts)


def load_routing(path: Path, experts: int, top_k: int, model: str = "the model") -> TableRouting:
    """A routing trace file (module docstring)."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"routing: {path} does not exist")
    if path.suffix not in (".npy", ".npz"):
        raise ValueError(f"routing: {path.name} not allowed; a .npy file or an .npz with an 'experts' array")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"routing: {path.name} is not a NumPy file ({e})") from None
    if path.suffix == ".npz":
        if "experts" not in data:
            raise ValueError(f"routing: {path.name} has no array named 'experts' (it has {sorted(data.files)})")
        data = data["experts"]
    return TableRouting(data, experts, top_k, model)
