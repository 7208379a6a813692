"""Serving simulator: request traces, iteration-level (ORCA) continuous batching, latency metrics.

**Requests** are (arrival time, prompt tokens, output tokens): :class:`Trace`. Generators, all seeded:
fixed lengths, Gaussian lengths (Duplex §VI: means given; std a named parameter), the four L3 traces
(Table 4 means and standard deviations: a log-normal, truncated at a generation limit, whose mean and std
are those — rounded, and clipped to >= 1), and arrivals all at t = 0 (offline, L3), Poisson at a given QPS,
or closed loop (``concurrency`` requests in the system; a finished one is replaced at once, Duplex).
:func:`load_trace` reads a user's CSV or JSONL (columns ``arrival_s``, ``prompt_tokens``,
``output_tokens``); a bad row is an error naming its line and field.

**Stages** (:func:`simulate`): every iteration runs the admitted requests a scheduler policy picks
(:mod:`sysmodel.scheduling`: ``vllm``, the default, ``reserve``, ``orca``, ``orca-reserve``,
``sarathi``). It is *mixed* when it holds prefill work (whole prompts, or chunks under a token budget) with
the decodes riding along (``vllm`` runs prompts alone, at most ``max_batched_tokens`` of them), and
*decode-only* otherwise. A request's first output token comes at the
end of the stage that finishes its prompt; each later stage it is in gives it one more.
**Admission** is FCFS up to ``max_batch`` requests. Under ``reserve`` a request is admitted only when its
whole KV cache — (prompt + output tokens) x the system's bytes per token — fits next to what admitted
requests reserved (never over-commit, never preempt; it needs output lengths in advance: an idealisation;
``orca-reserve`` reserves the trace's longest output instead of the request's own).
The paged policies hold KV in blocks allocated as tokens are produced, admit by free blocks above a
watermark and, under ``vllm`` and ``sarathi``, only while the iteration's token budget has room, and
preempt (recompute or swap) when a block is missing; they learn a request is done when it
emits its last token. A request that could never fit is :class:`~sysmodel.cost.Infeasible`, or with
``oversize="reject"`` is dropped before the run (vLLM rejects a request longer than its KV cache) and
counted in the result's ``meta["rejected"]``.

**Systems** implement :class:`System`: bytes of KV they hold, and the time of a vector of stages given
as a :class:`~sysmodel.models.StageShape` with array fields. Decode-only stretches between events
(a finish, an admissible arrival) are priced in one vectorised call, so a trace of 10^7 output tokens
runs in seconds.

**Metrics** (:class:`Result`): throughput (output tokens / makespan), T2FT (arrival -> first token), TBT
(gap between a request's consecutive tokens: the duration of the stage that made it, or, after a stall — a
preemption, a decode paused for a prompt — the whole gap) and E2E (arrival -> last token), with
p50/p90/p99; scheduling delay (arrival -> first admission), preemptions and recomputed tokens, KV
utilisation per stage, goodput at TBT/T2FT SLOs; a per-request CSV; TBT CDF, KV utilisation and
throughput-vs-QPS plots.
"""

from __future__ import annotations

import csv
import json
import math
from collections import deque
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from sysmodel.cost import Infeasible
from sysmodel.devices import get_link
from sysmodel.models import StageShape
from sysmodel.outputs import atomic
from sysmodel.plots import legend_outside, log_axis, pyplot, save, series_style
from sysmodel.progress import progress as make_progress
from sysmodel.scheduling import BLOCK_SIZE, HOST_LINK, PREEMPT, SCHEDULERS, WATERMARK, Blocks, get_scheduler
from sysmodel.systems import Area, Provenance, System

# --- requests ------------------------------------------------------------------------------------------

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
        raise ValueError(f"trace: unknown {kind!r}; allowed: fixed, gaussian, {', '.join(L3_TRACES)}, or a file")
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


def load_trace(path: Path) -> Trace:
    """A CSV (header ``arrival_s,prompt_tokens,output_tokens``; ``arrival_s`` optional, default 0) or
    JSONL file (one object per line with those keys) of requests, sorted by arrival."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"trace: {path} does not exist")
    rows: list[tuple[int, dict]] = []
    if path.suffix == ".jsonl":
        for i, ln in enumerate(path.read_text().splitlines(), 1):
            if ln.strip():
                try:
                    rows.append((i, json.loads(ln)))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path.name} line {i}: not a JSON object ({e.msg})") from None
    elif path.suffix == ".csv":
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            missing = set(TRACE_COLUMNS[1:]) - set(reader.fieldnames or [])
            if missing:
                raise ValueError(f"{path.name} line 1: missing columns {sorted(missing)}; need {TRACE_COLUMNS}")
            rows = [(i, r) for i, r in enumerate(reader, 2)]
    else:
        raise ValueError(f"trace: {path.name} not allowed; a .csv or .jsonl file")
    if not rows:
        raise ValueError(f"{path.name}: no requests")
    arr, pro, out = [], [], []
    for i, r in rows:
        if not isinstance(r, dict):
            raise ValueError(f"{path.name} line {i}: not a JSON object")
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


# --- a system for the engine's closed-form tests ------------------------------------------------------


@dataclass
class ConstantSystem:
    """Every stage takes ``seconds`` and ``joules``: the closed forms the tests check the engine against."""

    seconds: float
    capacity: float = math.inf
    kv_bytes_per_token: float = 1.0
    name: str = "constant"
    joules: float = 0.0

    def kv_capacity(self) -> float:
        return self.capacity

    def stage_times(self, shape: StageShape) -> np.ndarray:
        return np.full(np.shape(shape.tokens), self.seconds, float)

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        return np.full(np.shape(shape.tokens), self.joules, float)

    def area(self) -> Area:
        return Area(0.0, "a test system")

    def hardware(self) -> str:
        return f"{self.seconds * 1e3:g} ms per stage"

    def provenance(self) -> Provenance:
        return Provenance()


# --- the engine ---------------------------------------------------------------------------------------

MAX_STRETCH = 1 << 16  # decode-only iterations priced in one call (bounds memory)


@dataclass
class Result:
    trace: Trace
    system: str
    admitted: np.ndarray
    first_token: np.ndarray
    finish: np.ndarray
    arrival: np.ndarray  # as simulated (closed loop assigns them)
    iter_time: np.ndarray  # duration of each stage
    iter_decode: np.ndarray  # decode tokens (TBT samples) each stage produced
    iter_in_system: np.ndarray  # requests waiting or running when each stage began
    iter_energy: np.ndarray  # joules of each stage (the system's energy on sysmodel.energy's basis)
    req_iters: np.ndarray  # [first, last) stage indices in which each request produced decode tokens
    kv_peak: float
    kv_capacity: float
    meta: dict = field(default_factory=dict)
    iter_kv: np.ndarray | None = None  # share of the KV capacity held (reserved or in blocks) at each stage
    iter_stalled: np.ndarray | None = None  # decode tokens of each stage that came after a stall
    stall_tbt: np.ndarray = field(default_factory=lambda: np.zeros(0))  # those tokens' own gaps (s)
    max_gap: np.ndarray | None = None  # each request's longest stalled gap (0: none)

    @property
    def makespan(self) -> float:
        return float(self.finish.max() - self.arrival.min())

    @property
    def throughput(self) -> float:
        """Output tokens per second over the whole run."""
        return float(self.trace.output.sum() / self.makespan)

    @property
    def joules_per_token(self) -> float:
        """Energy of the whole run over its output tokens."""
        return float(self.iter_energy.sum() / self.trace.output.sum())

    @property
    def t2ft(self) -> np.ndarray:
        return self.first_token - self.arrival

    @property
    def e2e(self) -> np.ndarray:
        return self.finish - self.arrival

    @property
    def scheduling_delay(self) -> np.ndarray:
        """Arrival -> first admission of each request."""
        return self.admitted - self.arrival

    def tbt_samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(TBT values, token weights): each stage's duration for the decode tokens it made on time, and each
        stalled token's own gap (a preempted request's wait, or a decode paused for a prompt)."""
        if not len(self.stall_tbt):
            return self.iter_time, self.iter_decode
        return (
            np.concatenate([self.iter_time, self.stall_tbt]),
            np.concatenate([self.iter_decode - self.iter_stalled, np.ones(len(self.stall_tbt))]),
        )

    def tbt_percentiles(self, qs=(50, 90, 99)) -> dict[int, float]:
        """Percentiles over every decode token's TBT (:meth:`tbt_samples`)."""
        values, w = self.tbt_samples()
        if w.sum() == 0:
            return {q: math.nan for q in qs}
        order = np.argsort(values, kind="stable")
        cum = np.cumsum(w[order]) / w.sum()
        return {q: float(values[order][np.searchsorted(cum, q / 100)]) for q in qs}

    def goodput(self, slo_tbt: float | None = None, slo_ttft: float | None = None) -> dict:
        """Requests meeting both SLOs (seconds; None: no bound): first token within ``slo_ttft`` of arrival
        and no gap between tokens over ``slo_tbt`` (stalls included); their count, share, requests/s and
        output tokens/s over the run's makespan."""
        for name, v in (("slo_tbt", slo_tbt), ("slo_ttft", slo_ttft)):
            if v is not None and not v > 0:
                raise ValueError(f"{name}: {v:g} not allowed; seconds > 0")
        met = np.ones(len(self.trace), bool)
        if slo_ttft is not None:
            met &= self.t2ft <= slo_ttft
        if slo_tbt is not None:
            met &= ~(self.per_request_tbt()[1] > slo_tbt)  # a one-token request has no gap: it meets it
        return {
            "met": int(met.sum()),
            "share": float(met.mean()),
            "requests_per_s": float(met.sum() / self.makespan),
            "tokens_per_s": float(self.trace.output[met].sum() / self.makespan),
        }

    def per_request_tbt(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean, max) TBT of each request (NaN for single-token requests)."""
        mean = np.where(
            self.trace.output > 1, (self.finish - self.first_token) / np.maximum(self.trace.output - 1, 1), np.nan
        )
        mx = np.full(len(self.trace), np.nan)
        for i, (a, b) in enumerate(self.req_iters):
            if b > a:
                mx[i] = self.iter_time[a:b].max()
        if self.max_gap is not None and self.max_gap.any():
            mx = np.fmax(mx, np.where(self.max_gap > 0, self.max_gap, np.nan))
        return mean, mx

    def summary(self) -> dict:
        pct = (50, 90, 99)
        t = self.tbt_percentiles(pct)
        out = {
            "system": self.system,
            "trace": self.trace.name,
            "requests": len(self.trace),
            "output_tokens": int(self.trace.output.sum()),
            "makespan_s": self.makespan,
            "throughput_tok_s": self.throughput,
            "joules_per_token": self.joules_per_token,
            "stages": len(self.iter_time),
            "kv_peak_gb": float(self.kv_peak) / 1e9,
            **self.meta,
            "scheduling_delay_p50_s": float(np.percentile(self.scheduling_delay, 50)),
            "scheduling_delay_p99_s": float(np.percentile(self.scheduling_delay, 99)),
        }
        for q in pct:
            out[f"tbt_p{q}_ms"] = t[q] * 1e3
            out[f"t2ft_p{q}_s"] = float(np.percentile(self.t2ft, q))
            out[f"e2e_p{q}_s"] = float(np.percentile(self.e2e, q))
        return out

    def write_csv(self, path: Path) -> Path:
        mean, mx = self.per_request_tbt()
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic(path) as tmp, tmp.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                [
                    "id",
                    "arrival_s",
                    "prompt_tokens",
                    "output_tokens",
                    "admitted_s",
                    "first_token_s",
                    "finish_s",
                    "t2ft_s",
                    "e2e_s",
                    "mean_tbt_s",
                    "max_tbt_s",
                ]
            )
            for i in range(len(self.trace)):
                w.writerow(
                    [
                        i,
                        self.arrival[i],
                        self.trace.prompt[i],
                        self.trace.output[i],
                        self.admitted[i],
                        self.first_token[i],
                        self.finish[i],
                        self.t2ft[i],
                        self.e2e[i],
                        mean[i],
                        mx[i],
                    ]
                )
        return path


OVERSIZE = ("error", "reject")
DEFAULT_SCHEDULER = "vllm"  # paged, preempting, output lengths unknown: what deployed servers do (issue 33)


class _Stages:
    """The stages of a run as the engine produces them, turned into per-stage columns at the end. Single
    stages are kept as rows; a decode-only stretch as one row (first stage, steps, requests, context at its
    first step, requests in the system, KV share at its start and end, stalled tokens of its first step),
    expanded in one vectorised pass — a paged run has thousands of short stretches. Energy is priced there
    too: a stage's energy depends on nothing after it, so one call per MAX_STRETCH stages replaces one per
    segment."""

    def __init__(self) -> None:
        self.single: list[tuple] = []  # (stage, decode, in system, KV share, stalled, *StageShape fields)
        self.stretch: list[tuple] = []  # (stage, steps, requests, context, in system, KV0, KV1, stalled)
        self.seconds: list[np.ndarray] = []
        self.n = 0

    def stage(self, shape: StageShape, dt: float, in_sys: int, kv: float, stalled: int) -> None:
        self.single.append(
            (self.n, shape.decode_reqs, in_sys, kv, stalled, *(getattr(shape, f.name) for f in fields(StageShape)))
        )
        self.seconds.append(np.array([dt]))
        self.n += 1

    def decode(self, dts: np.ndarray, reqs: int, ctx0: int, in_sys: int, kv0: float, kv1: float, stalled: int) -> None:
        self.stretch.append((self.n, len(dts), reqs, ctx0, in_sys, kv0, kv1, stalled))
        self.seconds.append(dts)
        self.n += len(dts)

    def columns(self, system: System) -> dict[str, np.ndarray]:
        """Per-stage ``time``, ``decode`` tokens, requests ``in_system``, ``energy``, ``kv`` share, ``stalled``."""
        n = self.n
        col = {
            "time": np.concatenate(self.seconds),
            "decode": np.zeros(n, np.int64),
            "in_system": np.zeros(n, np.int64),
            "energy": np.zeros(n),
            "kv": np.zeros(n),
            "stalled": np.zeros(n, np.int64),
        }
        if self.single:
            c = list(zip(*self.single, strict=True))
            at = np.array(c[0], np.int64)
            for name, v in zip(("decode", "in_system", "kv", "stalled"), c[1:5], strict=True):
                col[name][at] = v
            col["energy"][at] = self._price(system, StageShape(*(np.array(v) for v in c[5:])), col["time"][at])
        if self.stretch:
            first, k, reqs, ctx0, in_sys = (np.array(v, np.int64) for v in list(zip(*self.stretch, strict=True))[:5])
            kv0, kv1 = (np.array(v, float) for v in list(zip(*self.stretch, strict=True))[5:7])
            step = np.arange(k.sum()) - np.repeat(np.cumsum(k) - k, k)  # step within its stretch
            at = np.repeat(first, k) + step
            r = np.repeat(reqs, k)
            col["decode"][at], col["in_system"][at] = r, np.repeat(in_sys, k)
            slope = np.repeat((kv1 - kv0) / np.maximum(k - 1, 1), k)  # KV grows linearly over a stretch
            kv = step * slope + np.repeat(kv0, k)
            last = np.cumsum(k) - 1
            kv[last] = np.where(k > 1, kv1, kv0)
            col["kv"][at] = kv
            col["stalled"][first] = [s[7] for s in self.stretch]
            shape = StageShape(tokens=r, decode_reqs=r, decode_ctx=np.repeat(ctx0, k) + step * r)
            col["energy"][at] = self._price(system, shape, col["time"][at])
        return col

    @staticmethod
    def _price(system: System, shape: StageShape, seconds: np.ndarray) -> np.ndarray:
        parts = []
        for i in range(0, len(seconds), MAX_STRETCH):
            part = StageShape(
                *(
                    np.broadcast_to(getattr(shape, f.name), len(seconds))[i : i + MAX_STRETCH]
                    for f in fields(StageShape)
                )
            )
            e = np.asarray(system.energy(part, seconds[i : i + MAX_STRETCH]), float)
            parts.append(np.broadcast_to(e, len(seconds[i : i + MAX_STRETCH])))
        return np.concatenate(parts)


def simulate(
    trace: Trace,
    system: System,
    max_batch: int = 256,
    prefill_budget: int | None = None,
    concurrency: int | None = None,
    progress: bool = False,
    oversize: str = "error",
    scheduler: str = DEFAULT_SCHEDULER,
    block_size: int = BLOCK_SIZE,
    watermark: float = WATERMARK,
    preempt: str = "recompute",
    max_batched_tokens: int | None = None,
) -> Result:
    """Run ``trace`` on ``system`` (module docstring) under a scheduler policy of
    :data:`sysmodel.scheduling.SCHEDULERS` (``block_size``, ``watermark``, ``preempt``: its paged cache).
    ``concurrency``: closed loop with that many requests in the system (the trace's arrival times are
    ignored). ``prefill_budget``: tokens per stage (``reserve``: prompt tokens, default the system's
    ``prefill_budget(decode_reqs, decode_ctx)`` if it has one, else unbounded; ``sarathi``: prompt and
    decode tokens, default 512; ``orca`` and ``orca-reserve`` run whole prompts). ``max_batched_tokens``
    (``vllm`` only): prompt tokens one prefill iteration admits, default vLLM's 2048."""
    pol = get_scheduler(scheduler)
    if max_batch < 1:
        raise ValueError(f"max_batch: {max_batch} not allowed; must be >= 1")
    for option, value in (("prefill_budget", prefill_budget), ("max_batched_tokens", max_batched_tokens)):
        if value is not None and value < 1:
            raise ValueError(f"{option}: {value} not allowed; must be >= 1 token")
        if value is not None and pol.budget_option != option:
            takers = [s.name for s in SCHEDULERS.values() if s.budget_option == option]
            raise ValueError(f"{option}: not allowed with scheduler {pol.name}; allowed with {' and '.join(takers)}")
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"concurrency: {concurrency} not allowed; must be >= 1")
    if oversize not in OVERSIZE:
        raise ValueError(f"oversize: {oversize!r} not allowed; allowed: {', '.join(OVERSIZE)}")
    if preempt not in PREEMPT:
        raise ValueError(f"preempt: {preempt!r} not allowed; allowed: {', '.join(PREEMPT)}")
    max_batch = min(max_batch, getattr(system, "max_batch", max_batch))  # a hardware limit on the batch
    per_tok, cap = system.kv_bytes_per_token, system.kv_capacity()
    blocks = Blocks.of(max(cap, 0.0), per_tok, len(trace), block_size, watermark) if pol.paged else None
    room = cap if blocks is None else (blocks.total - blocks.watermark) * block_size * per_tok
    longest = int(trace.output.max())  # orca-reserve's max_tokens (scheduling.py)

    def reserved(p: np.ndarray, o: np.ndarray) -> np.ndarray:
        return (p + (longest if pol.reserve_longest else o)) * per_tok

    fits = reserved(trace.prompt, trace.output) <= room
    rejected = 0
    if oversize == "reject" and fits.any() and not fits.all():
        rejected = int((~fits).sum())
        trace = Trace(trace.arrival[fits], trace.prompt[fits], trace.output[fits], trace.name)
        blocks = Blocks.of(cap, per_tok, len(trace), block_size, watermark) if pol.paged else None
    n = len(trace)
    prompt, out = trace.prompt, trace.output
    need = reserved(prompt, out)
    allowed = pol.budget(max_batched_tokens if pol.budget_option == "max_batched_tokens" else prefill_budget)
    if cap <= 0:
        raise Infeasible(f"{system.name}: no room for a KV cache: its weights fill its memory ({system.hardware()})")
    if (need > room).any():
        i = int(np.argmax(need > room))
        raise Infeasible(
            f"{system.name}: request {i} ({prompt[i]} + {need[i] / per_tok - prompt[i]:.0f} tokens) needs "
            f"{need[i] / 1e9:.1f} GB "
            f"of KV cache; the system holds {room / 1e9:.1f} GB next to its weights"
        )
    link_bw = getattr(system, "host_link_bw", None) or get_link(HOST_LINK).bw
    arrival = trace.arrival.copy() if concurrency is None else np.full(n, np.inf)
    if concurrency is not None:
        arrival[:concurrency] = 0.0
    admitted, first, finish, t_last = (np.full(n, np.nan) for _ in range(4))
    max_gap = np.zeros(n)
    target = prompt.copy()  # tokens to prefill: the prompt, or prompt and output after a recompute
    done_pf = np.zeros(n, np.int64)  # of them computed
    gen = np.zeros(n, np.int64)  # output tokens produced
    kvtok = np.zeros(n, np.int64)  # tokens whose KV is held
    out_blocks = np.zeros(n, np.int64)  # blocks a swapped-out request left in host memory
    first_it = np.zeros(n, np.int64)
    last_it = np.zeros(n, np.int64)
    waiting: deque[int] = deque()
    swapped: deque[int] = deque()
    running: list[int] = []
    nxt, released, finished, t, kv_used, kv_peak = 0, min(n, concurrency or n), 0, 0.0, 0.0, 0.0
    preemptions, recomputed, swap_bytes, link_s = 0, 0, 0.0, 0.0
    stages = _Stages()
    stall_tbt: list[float] = []
    n_iter = 0
    bar = make_progress(n, f"serve {system.name}", progress)

    def kv_share() -> float:
        return kv_used / cap if blocks is None else (blocks.total - blocks.free) * block_size * per_tok / cap

    def finish_some(done: np.ndarray) -> None:
        nonlocal finished, kv_used, released
        for r in done:
            finish[r] = t
            last_it[r] = n_iter
            if blocks is None:
                kv_used -= need[r]
            else:
                blocks.release(r)
            running.remove(int(r))
            finished += 1
            if concurrency is not None and released < n:
                arrival[released] = t
                released += 1
        bar.update(len(done))

    def tokens_at(rs: np.ndarray, end: float, dt: float) -> int:
        """``rs`` emit a token at ``end`` after a stage of ``dt``: a longer gap (a stall) is its own TBT sample."""
        gap = end - t_last[rs]
        late = gap > dt * (1 + 1e-9)
        stall_tbt.extend(gap[late].tolist())
        np.maximum.at(max_gap, rs[late], gap[late])
        t_last[rs] = end
        return int(late.sum())

    def token_room() -> tuple[float, bool]:
        """(Tokens of the iteration's budget the running requests leave, whether none of them prefills)."""
        r = np.array(running, np.int64)
        left = (target[r] - done_pf[r]).clip(0)
        if allowed is None:
            return math.inf, not left.any()
        return allowed - int(left.sum()) - (int((left == 0).sum()) if pol.budget_counts_decode else 0), not left.any()

    def preempt_one() -> None:
        nonlocal preemptions, recomputed, swap_bytes, link_s
        victim = max(running)  # the latest arrived (vLLM's victim)
        assert blocks is not None  # only the paged policies preempt
        running.remove(victim)
        preemptions += 1
        if preempt == "recompute":
            recomputed += int(kvtok[victim])
            blocks.release(victim)
            kvtok[victim], done_pf[victim], target[victim] = 0, 0, prompt[victim] + gen[victim]
            waiting.appendleft(victim)
        else:
            out_blocks[victim] = blocks.held[victim]
            moved = int(out_blocks[victim]) * block_size * per_tok
            swap_bytes += moved
            link_s += moved / link_bw
            blocks.release(victim)
            swapped.append(victim)

    while finished < n:
        while nxt < n and arrival[nxt] <= t:
            waiting.append(nxt)
            nxt += 1
        if blocks is None:
            while waiting and len(running) < max_batch and kv_used + need[waiting[0]] <= cap:
                r = waiting.popleft()
                running.append(r)
                admitted[r] = t
                kv_used += need[r]
        else:
            while (
                swapped
                and len(running) < max_batch
                and blocks.can_admit(max(int(kvtok[swapped[0]]) + 1, int(target[swapped[0]])))
            ):
                r = swapped.popleft()  # swapped requests come back before any new admission
                blocks.grow(np.array([r]), max(kvtok[r] + 1, target[r]))
                moved = int(out_blocks[r]) * block_size * per_tok
                swap_bytes += moved
                link_s += moved / link_bw
                running.append(r)
            room, empty = token_room()
            while (
                not swapped
                and waiting
                and len(running) < max_batch
                and blocks.can_admit(int(target[waiting[0]]))
                and pol.admits(room, int(target[waiting[0]]), empty)
            ):
                r = waiting.popleft()
                running.append(r)
                room, empty = room - int(target[r]), False
                if np.isnan(admitted[r]):
                    admitted[r] = t
                blocks.grow(np.array([r]), target[r])
        kv_peak = max(kv_peak, kv_used if blocks is None else (blocks.total - blocks.free) * block_size * per_tok)
        if not running:
            t = max(t, arrival[nxt])
            continue
        run = np.array(running)
        pre = run[done_pf[run] < target[run]]
        dec = run[done_pf[run] >= target[run]]
        if blocks is not None and len(dec) and not (len(pre) and not pol.mixed):
            while len(dec) and int((blocks.need(kvtok[dec] + 1) - blocks.held[dec]).clip(0).sum()) > blocks.free:
                preempt_one()  # a decode needs a block and none is free
                run = np.array(running, np.int64)
                pre = run[done_pf[run] < target[run]]
                dec = run[done_pf[run] >= target[run]]
        if not running:
            continue
        in_sys = len(running) + len(waiting) + len(swapped)
        if len(pre):  # a stage with prefill work; decodes ride along unless the policy runs prompts alone
            ride = dec if pol.mixed else dec[:0]
            budget: float = math.inf if allowed is None or not pol.chunked else allowed
            if pol.budget_counts_decode:
                budget -= len(ride)
            elif allowed is None and pol.chunked and hasattr(system, "prefill_budget"):  # reserve's default
                budget = system.prefill_budget(len(ride), int((prompt[ride] + gen[ride]).sum()))
            chunk = np.zeros(len(pre), np.int64)
            for j, r in enumerate(pre):  # FCFS in admission order
                if budget <= 0:
                    break
                chunk[j] = min(target[r] - done_pf[r], budget)
                budget -= chunk[j]
            p = done_pf[pre]
            shape = StageShape(
                tokens=int(chunk.sum()) + len(ride),
                decode_reqs=len(ride),
                decode_ctx=int((prompt[ride] + gen[ride]).sum()),
                prefill_pairs=float((chunk * p + chunk * (chunk + 1) / 2).sum()),
                prefill_kv=int(((p + chunk) * (chunk > 0)).sum()),
            )
            dt = float(np.asarray(system.stage_times(shape)).reshape(-1)[0]) + link_s
            kv_at_start = kv_share()
            link_s = 0.0
            t += dt
            done_pf[pre] += chunk
            kvtok[pre] += chunk
            gen[ride] += 1
            kvtok[ride] += 1
            if blocks is not None and len(ride):
                blocks.grow(ride, kvtok[ride])
            stages.stage(shape, dt, in_sys, kv_at_start, tokens_at(ride, t, dt))
            new = pre[(done_pf[pre] == target[pre]) & (chunk > 0)]
            back = new[gen[new] > 0]  # a recomputed request's prefill gives its next token
            if len(back):
                tokens_at(back, t, 0.0)
            gen[new] += 1
            fresh = new[np.isnan(first[new])]
            first[fresh] = t
            t_last[fresh] = t
            first_it[fresh] = n_iter + 1
            n_iter += 1
            finish_some(run[(gen[run] >= out[run]) & (done_pf[run] == target[run])])
            continue
        # decode-only stretch up to the next finish or admissible arrival (or the last block)
        k = int(min((out[dec] - gen[dec]).min(), MAX_STRETCH))
        if blocks is not None:
            k = max(1, blocks.steps_that_fit(kvtok[dec], k))
        ctx0 = int((prompt[dec] + gen[dec]).sum())
        steps = np.arange(k)
        shape = StageShape(tokens=len(dec), decode_reqs=len(dec), decode_ctx=ctx0 + steps * len(dec))
        dts = np.broadcast_to(np.asarray(system.stage_times(shape), float), (k,))
        if link_s:
            dts = dts.copy()
            dts[0] += link_s
            link_s = 0.0
        ends = t + np.cumsum(dts)
        if (
            nxt < n
            and len(running) < max_batch
            and arrival[nxt] < ends[-1]
            and (kv_used + need[nxt] <= cap if blocks is None else blocks.can_admit(int(target[nxt])))
        ):
            k = int(np.searchsorted(ends, arrival[nxt], side="right")) + 1  # the stage it arrives in completes
            k = min(k, len(ends))
        kv0 = kv_share()
        t = float(ends[k - 1])
        first_stalls = tokens_at(dec, float(ends[0]), float(dts[0]))
        t_last[dec] = t
        gen[dec] += k
        kvtok[dec] += k
        if blocks is not None:
            blocks.grow(dec, kvtok[dec])
        stages.decode(dts[:k], len(dec), ctx0, in_sys, kv0, kv_share() if blocks is not None else kv0, first_stalls)
        n_iter += k
        finish_some(dec[gen[dec] >= out[dec]])
    bar.close()
    col = stages.columns(system)
    return Result(
        trace,
        system.name,
        admitted,
        first,
        finish,
        arrival,
        col["time"],
        col["decode"],
        col["in_system"],
        col["energy"],
        np.stack([first_it, last_it], axis=1),
        kv_peak,
        cap,
        {
            "max_batch": max_batch,
            "prefill_budget": prefill_budget,
            "concurrency": concurrency,
            "rejected": rejected,
            "scheduler": pol.name,
            **(
                {
                    "block_size": block_size,
                    "watermark": watermark,
                    "preempt": preempt,
                    "preemptions": preemptions,
                    "recomputed_tokens": recomputed,
                    "swapped_gb": swap_bytes / 1e9,
                }
                if blocks is not None
                else {}
            ),
        },
        iter_kv=col["kv"],
        iter_stalled=col["stalled"],
        stall_tbt=np.array(stall_tbt),
        max_gap=max_gap,
    )


# --- plots ----------------------------------------------------------------------------------------------

CDF_POINTS = 512  # points a TBT CDF is drawn with, whatever the run's length


def tbt_cdf(r: Result, points: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(TBT seconds, fraction of decode tokens at or below it) at ``points`` quantiles: the distinct stage
    durations weighted by their tokens, so a run of millions of stages costs one sort of the distinct values."""
    values, weights = r.tbt_samples()
    times, inv = np.unique(values, return_inverse=True)
    w = np.bincount(inv, weights=weights, minlength=len(times))
    keep = w > 0
    times, cum = times[keep], np.cumsum(w[keep]) / max(w.sum(), 1)
    if len(times) > points:
        idx = np.unique(np.searchsorted(cum, np.linspace(0, 1, points), side="left").clip(0, len(cum) - 1))
        times, cum = times[idx], cum[idx]
    return times, cum


def plot_tbt_cdf(results: list[Result], path: Path, labels: list[str] | None = None) -> Path:
    """The TBT CDF of each run (``labels``: one legend entry per run, e.g. per offered rate) on a log time
    axis: a stall of hours beside gaps of milliseconds (a preempted request's wait) leaves both readable;
    each entry states its run's longest gap."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, r in enumerate(results):
        t, cum = tbt_cdf(r)
        if len(t):
            longest = f"{t[-1] * 1e3:.4g} ms" if t[-1] < 1 else f"{t[-1]:.4g} s"
            label = f"{labels[i] if labels else r.system} (longest {longest})"
            ax.step(t * 1e3, cum, where="post", label=label, **series_style(i))
    log_axis(ax.xaxis)
    ax.set_xlabel("time between tokens (ms, log scale)")
    ax.set_ylabel("fraction of decode tokens")
    ax.set_title(f"TBT CDF, {results[0].trace.name.split('@')[0]}")
    legend_outside(ax)
    ax.grid(True, which="both", lw=0.3)
    return save(fig, plt, path)


def plot_kv(results: list[Result], path: Path, labels: list[str] | None = None) -> Path:
    """KV cache utilisation (share of the capacity held) over the run, one line per run."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, r in enumerate(results):
        assert r.iter_kv is not None  # simulate() records it on every run
        start = r.arrival.min() + np.concatenate([[0.0], np.cumsum(r.iter_time)[:-1]])
        ax.plot(start, r.iter_kv * 100, lw=0.8, label=labels[i] if labels else r.system, **series_style(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("KV cache held (% of capacity)")
    ax.set_title(f"KV utilisation, {results[0].trace.name.split('@')[0]} ({results[0].meta['scheduler']})")
    legend_outside(ax)
    ax.grid(True, lw=0.3)
    return save(fig, plt, path)


def plot_qps(rows: list[dict], path: Path) -> Path:
    """Throughput and p50 E2E against offered QPS (rows from :func:`qps_sweep`)."""
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for i, system in enumerate(sorted({r["system"] for r in rows})):
        pts = sorted((r for r in rows if r["system"] == system), key=lambda r: r["qps"])
        style = {"marker": "o", "label": system, **series_style(i)}
        a1.plot([r["qps"] for r in pts], [r["throughput_tok_s"] for r in pts], **style)
        a2.plot([r["qps"] for r in pts], [r["e2e_p50_s"] for r in pts], **style)
    a1.set(xlabel="offered load (requests/s)", ylabel="output tokens/s", title="throughput vs offered load")
    a2.set(xlabel="offered load (requests/s)", ylabel="median end-to-end latency (s)", title="latency vs offered load")
    legend_outside(a2)
    fig.tight_layout()
    return save(fig, plt, path)


def qps_sweep(systems: list[System], kind: str, n: int, qps_values: list[float], seed: int = 1, **kw) -> list[dict]:
    """Poisson arrivals at each QPS, same seed per point, on every system: the saturation curve."""
    rows = []
    for q in qps_values:
        trace = make_trace(kind, n, seed, qps=q, **{k: v for k, v in kw.items() if k in ("prompt", "output")})
        for s in systems:
            res = simulate(trace, s, **{k: v for k, v in kw.items() if k in ("max_batch", "prefill_budget")})
            rows.append({"qps": q, **res.summary()})
    return rows
