"""How a `serve` or `compare` run was made, as data every output of it carries (issue 50): the model, the trace
and a hash of its requests, how they arrive, the scheduler and its settings, replicas, pipeline stages, the
seed and the project's commit. A saved table then says, for instance, that its J/token and area are for two
replicas — without it a two-replica table reads like a single-replica one."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np

from sysmodel.engines.serving import Trace

ROOT = Path(__file__).resolve().parent.parent


def commit() -> str:
    """The project's git commit (``+dirty`` with uncommitted changes), or ``unknown`` outside a checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}+dirty" if dirty else head or "unknown"


def trace_sha256(trace: Trace) -> str:
    """A 16-hex-digit SHA-256 of the requests as run (arrival times, prompt and output tokens)."""
    h = hashlib.sha256()
    for column in (trace.arrival.astype("<f8"), trace.prompt.astype("<i8"), trace.output.astype("<i8")):
        h.update(np.ascontiguousarray(column).tobytes())
    return h.hexdigest()[:16]


def arrivals(trace_file: bool, qps: float | None, concurrency: int | None) -> str:
    """How the requests arrive, in words (the serve headline and the run block say the same)."""
    if concurrency:
        return f"closed loop at {concurrency}"
    if qps is not None:
        return f"Poisson at {qps:g} QPS"
    return "the file's arrival times" if trace_file else "all at t=0"


def block(
    model: str,
    trace_arg: str,
    trace: Trace,
    load: str,
    qps: float | None,
    seed: int,
    max_batch: int,
    scheduling: dict,
    parallel: dict,
    **extra,
) -> dict:
    """The run block (module docstring): plain values, JSON-ready; ``extra``: command-specific fields."""
    return {
        "model": model,
        "trace": trace_arg,
        "trace_name": trace.name,
        "trace_sha256": trace_sha256(trace),
        "requests": len(trace),
        "arrivals": load,
        "qps": qps,
        **extra,
        "max_batch": max_batch,
        **scheduling,
        **parallel,
        "seed": seed,
        "commit": commit(),
    }


def line(run: dict) -> str:
    """The run block in one line, for terminals and Markdown (fields that do not apply, None, left out)."""

    def shown(v) -> str:
        return "; ".join(map(str, v)) or "none" if isinstance(v, list) else str(v)

    return "run: " + ", ".join(f"{k} {shown(v)}" for k, v in run.items() if v is not None)
