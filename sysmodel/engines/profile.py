"""A user's measured iteration times as a system's stage times — the form Vidur and LLMServingSim take
profiles in — for ``membound serve --profile FILE``. A profile is not extrapolated: a stage outside the
measured range is refused (``Infeasible`` naming it). Everything else — KV capacity, energy (at the
profiled times), area — is the wrapped system's. The file is a CSV in one of two forms, told by its header.

**Per operator class** (header :data:`COLUMNS`), one row per measured iteration, its time split by operator
class as a profiler (Vidur's, PyTorch's) reports it:

* ``decode_reqs``, ``decode_ctx``: decode requests and the context tokens they attend to, summed;
* ``prefill_tokens``: prompt tokens the iteration computes; ``prefill_pairs``: the (query, key) pairs of its
  prefill attention, summed over the prompts' chunks — a chunk of c tokens after p already computed has
  c x p + c(c + 1)/2 (causal), so tokens already computed and the way a prefill splits across prompts count;
* ``linear_s``: every operator whose work grows with the tokens through the layers (projections, FFN,
  norms, LM head), at ``decode_reqs + prefill_tokens`` tokens;
* ``prefill_attention_s``: prefill attention, at ``prefill_pairs`` pairs (0 without prefill);
* ``decode_attention_s``: decode attention, at ``decode_reqs`` requests over ``decode_ctx`` (0 without decodes).

A stage costs linear(tokens) + prefill attention(pairs) + decode attention(requests, context): linear
between measured token counts (repeated counts averaged) and between measured pair counts, the decode
part linear in both variables (a Delaunay triangulation when the points span a plane, else along the one
line they lie on). A mixed iteration (Sarathi's chunks beside decodes) is priced by what it computes.

**Two tables** (header :data:`LEGACY`: ``decode_reqs,decode_ctx,prefill_tokens,seconds``), the earlier form:
whole-iteration times; rows with no prefill form the decode table, rows with no decodes the prefill table
(each needs at least one row); t = t_decode(decode_reqs, decode_ctx) + t_prefill(prefill_tokens). This
additive form counts the weights' pass twice in a mixed iteration and cannot see tokens already computed
(too expensive on Sarathi-style iterations: issue 52 measured 12%); it still loads.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sysmodel.cost.models import StageShape
from sysmodel.cost.stage import Infeasible
from sysmodel.engines.workload import USER_ENCODING, text_file
from sysmodel.systems import Area, Provenance, System

LEGACY = ("decode_reqs", "decode_ctx", "prefill_tokens", "seconds")
COLUMNS = (
    "decode_reqs",
    "decode_ctx",
    "prefill_tokens",
    "prefill_pairs",
    "linear_s",
    "prefill_attention_s",
    "decode_attention_s",
)


class ProfiledSystem:
    """``base`` with its stage times read from the profile at ``path`` (module docstring)."""

    def __init__(self, base: System, path: Path):
        self.base, self.path = base, Path(path)
        header, rows = load(self.path)
        self._terms = _legacy_terms(rows, self.path) if header == LEGACY else _operator_terms(rows, self.path)
        self.name = f"{base.name} (profile {self.path.name})"
        self.kv_bytes_per_token = base.kv_bytes_per_token
        self.max_batch = getattr(base, "max_batch", None) or 1 << 30
        self.sha256 = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]

    def kv_capacity(self) -> float:
        return self.base.kv_capacity()

    def stage_times(self, shape: StageShape) -> np.ndarray:
        reqs, ctx, tokens, pairs = (
            np.asarray(v, float)
            for v in np.broadcast_arrays(shape.decode_reqs, shape.decode_ctx, shape.tokens, shape.prefill_pairs)
        )
        variables = {"decode": (reqs, ctx), "prefill": (tokens - reqs,), "linear": (tokens,), "pairs": (pairs,)}
        t = np.zeros(reqs.shape)
        for name, price in self._terms:
            args = variables[name]
            on = args[0] > 0  # a term costs nothing in a stage without its work
            if on.any():
                t[on] += price(*(a[on] for a in args))
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


Term = tuple[str, Callable[..., np.ndarray]]  # (the stage variables it is priced on, its price)


def _legacy_terms(rows: np.ndarray, path: Path) -> list[Term]:
    dec, pre = rows[rows[:, 2] == 0], rows[rows[:, 0] == 0]
    if not len(dec) or not len(pre):
        raise ValueError(
            f"profile: {path} needs rows with prefill_tokens 0 (decode) and rows with decode_reqs 0 "
            f"(prefill); it has {len(dec)} and {len(pre)}"
        )
    return [
        ("decode", _Plane(dec[:, :2], dec[:, 3], path)),
        ("prefill", _Line(pre[:, 2], pre[:, 3], path, "prefill of")),
    ]


def _operator_terms(rows: np.ndarray, path: Path) -> list[Term]:
    dec, pre = rows[rows[:, 0] > 0], rows[rows[:, 2] > 0]
    if not len(dec) or not len(pre):
        raise ValueError(
            f"profile: {path} needs rows with decodes (decode_reqs > 0) and rows with prefill "
            f"(prefill_tokens > 0); it has {len(dec)} and {len(pre)}"
        )
    return [
        ("linear", _Line(rows[:, 0] + rows[:, 2], rows[:, 4], path, "linear layers at")),
        ("pairs", _Line(pre[:, 3], pre[:, 5], path, "prefill attention at", "(query, key) pairs")),
        ("decode", _Plane(dec[:, :2], dec[:, 6], path)),
    ]


def load(path: Path) -> tuple[tuple[str, ...], np.ndarray]:
    """The profile's header (:data:`COLUMNS` or :data:`LEGACY`) and rows as floats; a bad row is an error
    naming its line and field."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"profile: {path} is a directory; name a CSV file")
    if not path.is_file():
        raise ValueError(f"profile: {path} does not exist")
    with text_file("profile", path), path.open(newline="", encoding=USER_ENCODING) as f:
        reader = csv.DictReader(f)
        header = tuple(c.strip() for c in reader.fieldnames or ())
        if header not in (COLUMNS, LEGACY):
            raise ValueError(f"profile: {path} needs the header {','.join(COLUMNS)} (or {','.join(LEGACY)})")
        rows = []
        for line, r in enumerate(reader, start=2):
            try:
                v = [float(r[c]) for c in reader.fieldnames or ()]
            except (TypeError, ValueError):
                raise ValueError(f"profile: {path} line {line}: every column needs a number") from None
            problem = _row_problem(dict(zip(header, v, strict=True)))
            if problem:
                raise ValueError(f"profile: {path} line {line}: {problem}")
            rows.append(v)
    if not rows:
        raise ValueError(f"profile: {path} has no rows")
    return header, np.array(rows)


def _row_problem(r: dict[str, float]) -> str:
    """What is wrong with one row (empty: nothing)."""
    if not all(np.isfinite(list(r.values()))) or min(r.values()) < 0:
        return "counts >= 0 and seconds > 0 needed"
    if "seconds" in r:
        return "" if r["seconds"] > 0 else "counts >= 0 and seconds > 0 needed"
    if r["decode_reqs"] + r["prefill_tokens"] < 1 or r["linear_s"] <= 0:
        return "an iteration has tokens (decode_reqs + prefill_tokens >= 1) and linear_s > 0"
    if r["decode_ctx"] < r["decode_reqs"] or (r["decode_reqs"] > 0) != (r["decode_attention_s"] > 0):
        return "decode_ctx >= decode_reqs, and decode_attention_s > 0 exactly when decode_reqs > 0"
    if r["prefill_pairs"] < r["prefill_tokens"] or (r["prefill_tokens"] > 0) != (r["prefill_pairs"] > 0):
        return "prefill_pairs >= prefill_tokens (a chunk of c has at least c(c + 1)/2), 0 without prefill"
    if (r["prefill_tokens"] > 0) != (r["prefill_attention_s"] > 0):
        return "prefill_attention_s > 0 exactly when prefill_tokens > 0"
    return ""


class _Line:
    """y linear in x between the measured x (a repeated x: its times averaged); outside them Infeasible."""

    def __init__(self, x: np.ndarray, y: np.ndarray, path: Path, what: str, unit: str = "tokens"):
        self.x, inv = np.unique(x, return_inverse=True)
        self.y = np.bincount(inv, y) / np.bincount(inv)
        self.name, self.what, self.unit = path.name, what, unit

    def __call__(self, v: np.ndarray) -> np.ndarray:
        out = (v < self.x[0]) | (v > self.x[-1])
        if out.any():
            raise Infeasible(
                f"profile: {self.name} measures {self.what} {self.x[0]:g}-{self.x[-1]:g} {self.unit}, not "
                f"{v[out][0]:g} (it is not extrapolated)"
            )
        return np.interp(v, self.x, self.y)


class _Plane:
    """Decode time over (requests, context tokens) between the measured points; outside them Infeasible."""

    def __init__(self, xy: np.ndarray, y: np.ndarray, path: Path):
        self.f, self.name = _plane(xy, y, path), path.name

    def __call__(self, reqs: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        t = self.f(reqs, ctx)
        if np.isnan(t).any():
            i = int(np.flatnonzero(np.isnan(t))[0])
            raise Infeasible(
                f"profile: {self.name} has no measurement around {reqs[i]:g} decode requests "
                f"with {ctx[i]:g} context tokens (it is not extrapolated)"
            )
        return t


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
