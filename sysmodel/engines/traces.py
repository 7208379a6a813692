"""Public request traces by their own columns, detected from the header (:data:`FORMATS`):

- Azure LLM inference traces (github.com/Azure/AzurePublicDataset, AzureLLMInferenceDataset2023 and 2024):
  CSV ``TIMESTAMP`` (date and time), ``ContextTokens``, ``GeneratedTokens``;
- BurstGPT (github.com/HPMLL/BurstGPT): CSV ``Timestamp`` (seconds), ``Model``, ``Request tokens``,
  ``Response tokens``, ``Total tokens``, ``Log Type``; a failed request has 0 response tokens;
- Mooncake (github.com/kvcache-ai/Mooncake, FAST '25 traces): JSONL ``timestamp`` (ms), ``input_length``,
  ``output_length``, ``hash_ids``;
- the kit's own CSV or JSONL (``arrival_s``, ``prompt_tokens``, ``output_tokens``: :func:`serving.load_trace`).

:func:`load` returns the requests and a :class:`Loaded` account: rows kept, and rows left out by reason —
outside the ``--start/--duration`` window, not matching a ``--trace-where`` filter, zero or negative tokens
(BurstGPT's failures), over the model's context — never silently. A row that cannot be read (a missing
field, a token count or time that is not a number) is an error naming its line.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from sysmodel.engines.serving import TRACE_COLUMNS, Trace, load_trace
from sysmodel.engines.workload import USER_ENCODING, checked_row, text_file


@dataclass(frozen=True)
class Format:
    """A trace format: its columns for arrival time, prompt and output tokens, and seconds per time unit
    (0: the time column is a date and time)."""

    name: str
    time: str
    prompt: str
    output: str
    unit: float


FORMATS = {
    "azure": Format("Azure LLM inference", "TIMESTAMP", "ContextTokens", "GeneratedTokens", 0.0),
    "burstgpt": Format("BurstGPT", "Timestamp", "Request tokens", "Response tokens", 1.0),
    "mooncake": Format("Mooncake", "timestamp", "input_length", "output_length", 1e-3),
    "membound": Format("membound", *TRACE_COLUMNS, 1.0),
}
FILTERED = "not matching --trace-where"


@dataclass(frozen=True)
class Window:
    """Which part of a trace to replay: ``start`` and ``duration`` seconds on the trace's clock (0 at its
    first request), then every arrival times ``time_scale`` (0.5 replays it twice as fast)."""

    time_scale: float = 1.0
    start: float = 0.0
    duration: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.time_scale) and self.time_scale > 0):
            raise ValueError(f"--time-scale: {self.time_scale} not allowed; a number > 0")
        if not (math.isfinite(self.start) and self.start >= 0):
            raise ValueError(f"--start: {self.start} not allowed; seconds >= 0")
        if self.duration is not None and not (math.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"--duration: {self.duration} not allowed; seconds > 0")


@dataclass
class Loaded:
    """What :func:`load` read: the format, the rows, and the rows left out by reason."""

    format: str
    rows: int
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def kept(self) -> int:
        return self.rows - sum(self.skipped.values())


def detect(columns: list[str], where: str) -> Format:
    """The format whose time, prompt and output columns the header has."""
    for fmt in FORMATS.values():
        if {fmt.prompt, fmt.output} <= set(columns) and (fmt.time in columns or fmt is FORMATS["membound"]):
            return fmt
    known = "; ".join(f"{f.name}: {f.time}, {f.prompt}, {f.output}" for f in FORMATS.values())
    raise ValueError(f"{where} line 1: columns {columns} match no trace format; known: {known}")


def _object(text: str, line: int, name: str) -> dict:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{name} line {line}: not a JSON object ({e.msg})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{name} line {line}: not a JSON object")
    return obj


def _header(path: Path) -> list[str]:
    """A CSV's header, or the keys of a JSONL file's first object."""
    with path.open(newline="", encoding=USER_ENCODING) as f:
        if path.suffix == ".csv":
            return next(csv.reader(f), [])
        for i, ln in enumerate(f, 1):
            if ln.strip():
                return list(_object(ln, i, path.name))
    return []


def _records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line, row) of every request row."""
    with path.open(newline="", encoding=USER_ENCODING) as f:
        if path.suffix == ".csv":
            yield from ((i, checked_row(r, i, path.name)) for i, r in enumerate(csv.DictReader(f), 2))
        else:
            yield from ((i, _object(ln, i, path.name)) for i, ln in enumerate(f, 1) if ln.strip())


def _number(value: object, line: int, column: str, where: str) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v):
        raise ValueError(f"{where} line {line}: {column}: {value!r} is not a number")
    return v


def _time(value: object, line: int, fmt: Format, where: str) -> float:
    """Seconds: a number times the format's unit, or a date and time (naive ones taken as UTC)."""
    if fmt.unit:
        return _number(value, line, fmt.time, where) * fmt.unit
    try:
        t = datetime.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{where} line {line}: {fmt.time}: {value!r} is not a date and time") from None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def _parse_where(where: list[str], columns: list[str], name: str) -> dict[str, str]:
    out = {}
    for text in where:
        col, eq, value = text.partition("=")
        if not eq:
            raise ValueError(f"--trace-where: {text!r} is not COLUMN=VALUE (e.g. Model=ChatGPT)")
        if col not in columns:
            raise ValueError(f"--trace-where: {name} has no column {col!r}; its columns: {', '.join(columns)}")
        out[col] = value
    return out


def _read(path: Path, fmt: Format, where: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, Loaded]:
    """A public trace's arrival seconds, prompt and output tokens, and its account so far."""
    wanted, loaded = _parse_where(where, _header(path), path.name), Loaded(fmt.name, 0)
    times, tokens = [], []
    for line, r in _records(path):
        loaded.rows += 1
        if any(str(r.get(c)) != v for c, v in wanted.items()):
            loaded.skipped[FILTERED] = loaded.skipped.get(FILTERED, 0) + 1
            continue
        pair = [_number(r.get(c), line, c, path.name) for c in (fmt.prompt, fmt.output)]
        for c, v in zip((fmt.prompt, fmt.output), pair, strict=True):
            if v != int(v):
                raise ValueError(f"{path.name} line {line}: {c}: {r.get(c)!r} is not a whole number")
        times.append(_time(r.get(fmt.time), line, fmt, path.name))
        tokens.append(pair)
    if not loaded.rows:
        raise ValueError(f"{path.name}: no requests")
    tok = np.asarray(tokens, np.int64).reshape(-1, 2)
    return np.asarray(times, float), tok[:, 0], tok[:, 1], loaded


def load(
    path: Path, window: Window = Window(), where: list[str] | None = None, context: int = 0
) -> tuple[Trace, Loaded]:
    """The requests of a trace file in any of :data:`FORMATS`, in ``window``; ``context``: the model's
    longest sequence (prompt + output tokens; 0: unknown, no row left out for length)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"trace: {path} does not exist")
    if path.suffix not in (".csv", ".jsonl"):
        raise ValueError(f"trace: {path.name} not allowed; a .csv or .jsonl file")
    with text_file("trace", path):
        fmt = detect(_header(path), path.name)
        if fmt is FORMATS["membound"]:  # the kit's own format: every row must be servable (an error otherwise)
            if where:
                raise ValueError("--trace-where: only for the public trace formats (Azure, BurstGPT, Mooncake)")
            base = load_trace(path)
            times, prompt, output, loaded = base.arrival, base.prompt, base.output, Loaded(fmt.name, len(base))
        else:
            times, prompt, output, loaded = _read(path, fmt, where or [])
    keep = _select(times, prompt, output, window, context, loaded)
    if not keep.any():
        raise ValueError(f"{path.name}: no request left ({_account(loaded)})")
    t = (times[keep] - times.min() - window.start) * window.time_scale
    order = np.argsort(t, kind="stable")
    name = path.stem if fmt is FORMATS["membound"] else f"{path.stem} ({fmt.name})"
    trace = Trace(t[order], prompt[keep][order], output[keep][order], name)
    return trace, loaded


def _select(
    times: np.ndarray, prompt: np.ndarray, output: np.ndarray, window: Window, context: int, loaded: Loaded
) -> np.ndarray:
    """Which rows to serve; the others counted in ``loaded.skipped`` by reason."""
    rel = times - (times.min() if len(times) else 0)
    end = math.inf if window.duration is None else window.start + window.duration
    too_long = prompt + output > context if context else np.zeros(len(prompt), bool)
    reasons = {
        "outside the --start/--duration window": (rel < window.start) | (rel >= end),
        "zero or negative tokens": (prompt < 1) | (output < 1),
        f"over the model's {context}-token context": too_long,
    }
    keep = np.ones(len(prompt), bool)
    for reason, out in reasons.items():  # each row counted once, under the first reason that applies
        n = int((out & keep).sum())
        if n:
            loaded.skipped[reason] = n
        keep &= ~out
    return keep


def _account(loaded: Loaded) -> str:
    left = ", ".join(f"{n} {reason}" for reason, n in loaded.skipped.items())
    return f"{loaded.rows} rows, {loaded.kept} kept" + (f"; skipped: {left}" if left else "")


def summary(loaded: Loaded, name: str) -> str:
    """One line for the terminal: the format detected and every row left out, by reason."""
    return f"{name}: {loaded.format} trace, {_account(loaded)}"
