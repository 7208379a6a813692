"""A user's measured iteration times as a system's stage times — the form Vidur and LLMServingSim take
profiles in — for ``membound serve --profile FILE``.

The file is a CSV with the header ``decode_reqs,decode_ctx,prefill_tokens,seconds``: one row per measured
iteration (``decode_ctx``: context tokens the decode requests attend to, summed; ``prefill_tokens``: prompt
tokens the iteration computes). Rows with no prefill form the decode table, rows with no decodes the
prefill table (each needs at least one row). A stage's time is

    t = t_decode(decode_reqs, decode_ctx) + t_prefill(prefill_tokens)

— the decode part linear in both variables between the measured points (a Delaunay triangulation when
the points span a plane, else along the one line they lie on), the prefill part linear between measured
token counts — an additive approximation of a mixed iteration, stated here because piggybacked decodes
can cost less than alone. A stage outside the measured range is refused (``Infeasible`` naming it): a
profile is not extrapolated. Everything else — KV capacity, energy (at the profiled times), area — is
the wrapped system's.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import numpy as np

from sysmodel.cost import Infeasible
from sysmodel.models import StageShape
from sysmodel.systems import Area, Provenance, System

COLUMNS = ("decode_reqs", "decode_ctx", "prefill_tokens", "seconds")


class ProfiledSystem:
    """``base`` with its stage times read from the profile at ``path`` (module docstring)."""

    def __init__(self, base: System, path: Path):
        self.base, self.path = base, Path(path)
        rows = load(self.path)
        dec, pre = rows[rows[:, 2] == 0], rows[rows[:, 0] == 0]
        if not len(dec) or not len(pre):
            raise ValueError(
                f"profile: {path} needs rows with prefill_tokens 0 (decode) and rows with decode_reqs 0 "
                f"(prefill); it has {len(dec)} and {len(pre)}"
            )
        self._decode = _plane(dec[:, :2], dec[:, 3], path)
        order = np.argsort(pre[:, 2])
        self._pre_x, self._pre_y = pre[order, 2], pre[order, 3]
        self.name = f"{base.name} (profile {self.path.name})"
        self.kv_bytes_per_token = base.kv_bytes_per_token
        self.max_batch = getattr(base, "max_batch", None) or 1 << 30
        self.sha256 = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]

    def kv_capacity(self) -> float:
        return self.base.kv_capacity()

    def stage_times(self, shape: StageShape) -> np.ndarray:
        reqs, ctx = np.broadcast_arrays(np.asarray(shape.decode_reqs, float), np.asarray(shape.decode_ctx, float))
        pre = np.broadcast_to(np.asarray(shape.tokens, float) - reqs, reqs.shape)
        t = np.zeros(reqs.shape)
        d = reqs > 0
        if d.any():
            td = self._decode(reqs[d], ctx[d])
            if np.isnan(td).any():
                i = int(np.flatnonzero(np.isnan(td))[0])
                raise Infeasible(
                    f"profile: {self.path.name} has no measurement around {reqs[d][i]:g} decode requests "
                    f"with {ctx[d][i]:g} context tokens (it is not extrapolated)"
                )
            t[d] += td
        p = pre > 0
        if p.any():
            lo, hi = self._pre_x[0], self._pre_x[-1]
            out = (pre[p] < lo) | (pre[p] > hi)
            if out.any():
                raise Infeasible(
                    f"profile: {self.path.name} measures prefill of {lo:g}-{hi:g} tokens, not "
                    f"{pre[p][out][0]:g} (it is not extrapolated)"
                )
            t[p] += np.interp(pre[p], self._pre_x, self._pre_y)
        return t

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        return self.base.energy(shape, self.stage_times(shape) if seconds is None else seconds)

    def area(self) -> Area:
        return self.base.area()

    def hardware(self) -> str:
        return f"{self.base.hardware()}, iteration times measured ({self.path.name})"

    def provenance(self) -> Provenance:
        p = self.base.provenance()
        p.constant("iteration times", str(self.path), f"user profile, sha256 {self.sha256}")
        return p


def load(path: Path) -> np.ndarray:
    """The profile's rows as floats (columns :data:`COLUMNS`); a bad row is an error naming its line."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"profile: {path} does not exist")
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None or [c.strip() for c in reader.fieldnames] != list(COLUMNS):
            raise ValueError(f"profile: {path} needs the header {','.join(COLUMNS)}")
        rows = []
        for line, r in enumerate(reader, start=2):
            try:
                v = [float(r[c]) for c in COLUMNS]
            except (TypeError, ValueError):
                raise ValueError(f"profile: {path} line {line}: every column needs a number") from None
            if not (all(np.isfinite(v)) and min(v[:3]) >= 0 and v[3] > 0):
                raise ValueError(f"profile: {path} line {line}: counts >= 0 and seconds > 0 needed")
            rows.append(v)
    if not rows:
        raise ValueError(f"profile: {path} has no rows")
    return np.array(rows)


def _plane(xy: np.ndarray, y: np.ndarray, path: Path):
    """Linear interpolation of ``y`` over the points ``xy`` (NaN outside them): on a Delaunay triangulation,
    or along their line when they are collinear (one batch size, or one context per request)."""
    from scipy.interpolate import LinearNDInterpolator

    centred = xy - xy.mean(axis=0)
    if len(xy) >= 3 and np.linalg.matrix_rank(centred, tol=1e-9 * max(1.0, np.abs(centred).max())) == 2:
        f = LinearNDInterpolator(xy, y)
        return lambda a, b: f(a, b)
    if len(np.unique(xy, axis=0)) < 2:
        raise ValueError(f"profile: {path} needs at least two distinct decode points")
    direction = centred[np.argmax(np.abs(centred).sum(axis=1))]
    direction = direction / np.linalg.norm(direction)
    s = centred @ direction
    order = np.argsort(s)
    s, ys, origin = s[order], y[order], xy.mean(axis=0)

    def along(a, b):
        pts = np.stack([a, b], axis=-1) - origin
        t = pts @ direction
        off_line = np.linalg.norm(pts - np.outer(t, direction), axis=-1) > 1e-6 * max(1.0, np.abs(pts).max())
        out = np.interp(t, s, ys, left=np.nan, right=np.nan)
        return np.where(off_line, np.nan, out)

    return along
