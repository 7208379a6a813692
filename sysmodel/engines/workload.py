"""Requests of the serving engine: :class:`Trace` (arrival time, prompt tokens, output tokens per request),
its seeded generators and a user's trace file.

Generators: fixed lengths, Gaussian lengths (Duplex §VI: means given; std a named parameter), the four L3
traces (Table 4 means and standard deviations: a log-normal, truncated at a generation limit, whose mean
and std are those — rounded, and clipped to >= 1), and arrivals all at t = 0 (offline, L3) or Poisson at a
given QPS (closed loop is the engine's ``concurrency``). :func:`load_trace` reads a user's CSV or JSONL
(columns ``arrival_s``, ``prompt_tokens``, ``output_tokens``); a bad row is an error naming its line and
field.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

L3_TRACES = {  # L3 Table 4: (mean L_in, std L_in, mean L_out, std L_out)
    "openr1": (96.0, 75.1, 12684.1, 8464.6),  # OpenR1-Math-220k
    "dolphin": (201.9, 563.0, 3926.2, 4216.0),  # Dolphin-r1
    "openthoughts": (89.4, 66.7, 6366.7, 4662.9),  # OpenThoughts-114k-math
    "longbench": (7703.9, 4285.5, 89.8, 213.7),  # LongBench
}
TRACE_CAP = 1 << 15  # longest prompt or output a generated trace holds (tokens): L3 gives means and stds
# only; reasoning traces are produced under a generation limit, and without one a log-normal tail of this
# spread yields requests no GPU-only baseline could hold. Our choice; a parameter of make_trace.
GAUSSIAN_STD = 0.25  # Duplex §VI samples L_in, L_out from Gaussians with the stated means; std unstated
# (shared/notes §2.8 #6 suggests 0.25 x mean)
TRACE_COLUMNS = ("arrival_s", "prompt_tokens", "output_tokens")


@dataclass
class Trace:
    """Requests in arrival order: ``arrival`` seconds (ignored in closed loop), token counts."""

    arrival: np.ndarray
    prompt: np.ndarray
    output: np.ndarray
    name: str = "trace"

    def __post_init__(self) -> None:
        self.arrival = np.asarray(self.arrival, float)
        self.prompt = np.asarray(self.prompt, np.int64)
        self.output = np.asarray(self.output, np.int64)
        n = len(self.prompt)
        if n == 0:
            raise ValueError("trace: no requests")
        if len(self.arrival) != n or len(self.output) != n:
            raise ValueError("trace: arrival, prompt and output need one entry per request")
        if (self.prompt < 1).any() or (self.output < 1).any():
            bad = int(np.flatnonzero((self.prompt < 1) | (self.output < 1))[0])
            raise ValueError(f"trace: request {bad}: prompt and output tokens must be >= 1")
        if (self.arrival < 0).any() or (np.diff(self.arrival) < 0).any():
            raise ValueError("trace: arrival_s must be >= 0 and non-decreasing")

    def __len__(self) -> int:
        return len(self.prompt)


def _truncated_lognormal(mean: float, std: float, cap: float) -> tuple[float, float]:
    """(mu, sigma) of the log-normal that, truncated to (0, cap], has this mean and std."""
    from scipy.optimize import fsolve
    from scipy.stats import norm

    def moments(mu: float, sigma: float) -> tuple[float, float]:
        z = norm.cdf((math.log(cap) - mu) / sigma)
        m1 = math.exp(mu + sigma**2 / 2) * norm.cdf((math.log(cap) - mu - sigma**2) / sigma) / z
        m2 = math.exp(2 * mu + 2 * sigma**2) * norm.cdf((math.log(cap) - mu - 2 * sigma**2) / sigma) / z
        return m1, math.sqrt(max(m2 - m1 * m1, 0.0))

    s2 = math.log1p((std / mean) ** 2)  # the untruncated solution starts the search
    sol, _, ok, msg = fsolve(
        lambda v: [a - b for a, b in zip(moments(v[0], math.exp(v[1])), (mean, std), strict=True)],
        [math.log(mean) - s2 / 2, math.log(math.sqrt(s2))],
        full_output=True,
        xtol=1e-10,
    )
    if ok != 1:
        raise ValueError(f"mean, std: no log-normal below {cap:g} tokens has mean {mean} and std {std} ({msg})")
    return float(sol[0]), math.exp(sol[1])


def lognormal_lengths(rng: np.random.Generator, mean: float, std: float, n: int, cap: int = 1 << 15) -> np.ndarray:
    """Whole token counts in [1, cap] from the log-normal truncated at ``cap`` whose mean and standard
    deviation are the given ones (rounding and the clip at 1 move them by well under 1% for the L3
    traces; tests/test_serving.py checks)."""
    if mean <= 0 or std < 0 or not mean < cap:
        raise ValueError(f"mean, std: {mean}, {std} not allowed; need 0 < mean < cap ({cap}), std >= 0")
    from scipy.stats import norm

    mu, sigma = _truncated_lognormal(mean, std, cap)
    u = rng.random(n) * norm.cdf((math.log(cap) - mu) / sigma)  # inverse CDF below the cap
    x = np.exp(mu + sigma * norm.ppf(u))
    return np.clip(np.rint(x), 1, cap).astype(np.int64)


def gaussian_lengths(rng: np.random.Generator, mean: float, n: int, std_frac: float = GAUSSIAN_STD) -> np.ndarray:
    return np.maximum(1, np.rint(rng.normal(mean, std_frac * mean, n))).astype(np.int64)


def poisson_arrivals(rng: np.random.Generator, qps: float, n: int) -> np.ndarray:
    if not qps > 0:
        raise ValueError(f"qps: {qps} not allowed; must be > 0")
    return np.cumsum(rng.exponential(1 / qps, n))


def make_trace(
    kind: str,
    n: int,
    seed: int = 1,
    qps: float | None = None,
    prompt: int = 128,
    output: int = 128,
    std_frac: float = GAUSSIAN_STD,
    cap: int = TRACE_CAP,
) -> Trace:
    """``kind``: ``fixed`` (prompt/output tokens), ``gaussian`` (those as means), or an L3 trace name
    (:data:`L3_TRACES`). Arrivals at t = 0, or Poisson at ``qps``."""
    if n < 1:
        raise ValueError(f"requests: {n} not allowed; must be >= 1")
    rng = np.random.default_rng(seed)
    if kind == "fixed":
        p, o = np.full(n, prompt), np.full(n, output)
    elif kind == "gaussian":
        p, o = gaussian_lengths(rng, prompt, n, std_frac), gaussian_lengths(rng, output, n, std_frac)
    elif kind in L3_TRACES:
        mi, si, mo, so = L3_TRACES[kind]
        p, o = lognormal_lengths(rng, mi, si, n, cap), lognormal_lengths(rng, mo, so, n, cap)
    else:
        raise ValueError(
            f"trace: unknown {kind!r}; allowed: fixed, gaussian, {', '.join(L3_TRACES)}, or a .csv or .jsonl file"
        )
    arrival = np.zeros(n) if qps is None else poisson_arrivals(rng, qps, n)
    return Trace(arrival, p, o, kind if qps is None else f"{kind}@{qps:g}qps")


def _whole(value, line: int, name: str, where: str, minimum: int) -> int:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v == int(v) and v >= minimum):
        raise ValueError(f"{where} line {line}: {name}: {value!r} is not a whole number >= {minimum}")
    return int(v)


# a user's text files (traces, profiles, sweep configs): UTF-8, a leading byte-order mark dropped (Excel's
# "CSV UTF-8" writes one; read as plain UTF-8 it renamed the first column, and arrival_s went unread)
USER_ENCODING = "utf-8-sig"


@contextlib.contextmanager
def text_file(what: str, path: Path) -> Iterator[None]:
    """Reading a user's text file: bytes that are not UTF-8 (a binary, another encoding), or CSV the csv module
    cannot split (an unclosed quote running into a field over its size limit), are an error naming ``what``
    and the file, not the library's message alone (csv.Error is no ValueError: it was a traceback)."""
    try:
        yield
    except UnicodeDecodeError as e:
        raise ValueError(f"{what}: {path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except csv.Error as e:
        raise ValueError(f"{what}: {path}: not readable as CSV ({e}; an unclosed quote?)") from None


def checked_row(row: dict, line: int, where: str) -> dict:
    """A CSV row, refused when it has more fields than the header names (csv.DictReader files them under
    None, where they would be dropped unread)."""
    if None in row:
        given, named = len(row) - 1 + len(row[None]), len(row) - 1
        raise ValueError(f"{where} line {line}: {given} fields; the header names {named}")
    return row


def load_trace(path: Path) -> Trace:
    """A CSV (header ``arrival_s,prompt_tokens,output_tokens``; ``arrival_s`` optional, default 0) or
    JSONL file (one object per line with those keys) of requests, sorted by arrival."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"trace: {path} does not exist")
    rows: list[tuple[int, dict]] = []
    if path.suffix == ".jsonl":
        for i, ln in enumerate(path.read_text(USER_ENCODING).splitlines(), 1):
            if ln.strip():
                try:
                    rows.append((i, json.loads(ln)))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path.name} line {i}: not a JSON object ({e.msg})") from None
    elif path.suffix == ".csv":
        with path.open(newline="", encoding=USER_ENCODING) as f:
            reader = csv.DictReader(f)
            missing = set(TRACE_COLUMNS[1:]) - set(reader.fieldnames or [])
            if missing:
                raise ValueError(f"{path.name} line 1: missing columns {sorted(missing)}; need {TRACE_COLUMNS}")
            rows = [(i, checked_row(r, i, path.name)) for i, r in enumerate(reader, 2)]
    else:
        raise ValueError(f"trace: {path.name} not allowed; a .csv or .jsonl file")
    if not rows:
        raise ValueError(f"{path.name}: no requests")
    arr, pro, out = [], [], []
    for i, r in rows:
        if not isinstance(r, dict):
            raise ValueError(f"{path.name} line {i}: not a JSON object")
        unread = sorted(set(r) - set(TRACE_COLUMNS))
        if "arrival_s" not in r and unread:  # a misspelt arrival_s would silently mean every request at t = 0
            raise ValueError(
                f"{path.name} line {i}: no arrival_s, and {unread} not read; name the arrival times arrival_s (or "
                "leave only prompt_tokens, output_tokens: every request at t = 0)"
            )
        a = r.get("arrival_s", 0) or 0
        try:
            a = float(a)
        except (TypeError, ValueError):
            a = math.nan
        if not (math.isfinite(a) and a >= 0):
            raise ValueError(f"{path.name} line {i}: arrival_s: {r.get('arrival_s')!r} is not a time >= 0")
        arr.append(a)
        pro.append(_whole(r.get("prompt_tokens"), i, "prompt_tokens", path.name, 1))
        out.append(_whole(r.get("output_tokens"), i, "output_tokens", path.name, 1))
    order = np.argsort(arr, kind="stable")
    return Trace(np.array(arr)[order], np.array(pro)[order], np.array(out)[order], path.stem)
