"""Serving simulator: request traces, iteration-level (ORCA) continuous batching, latency metrics.

**Requests** are (arrival time, prompt tokens, output tokens): :class:`Trace`. Generators, all seeded:
fixed lengths, Gaussian lengths (Duplex §VI: means given; std a named parameter), the four L3 traces
(Table 4 means and standard deviations: a log-normal, truncated at a generation limit, whose mean and std
are those — rounded, and clipped to >= 1), and arrivals all at t = 0 (offline, L3), Poisson at a given QPS,
or closed loop (``concurrency`` requests in the system; a finished one is replaced at once, Duplex).
:func:`load_trace` reads a user's CSV or JSONL (columns ``arrival_s``, ``prompt_tokens``,
``output_tokens``); a bad row is an error naming its line and field.

**Stages** (:func:`simulate`): every iteration runs all admitted requests together. It is *mixed* when it
holds prefill work (each admitted request's prompt, or chunks of at most ``prefill_budget`` prompt tokens
in all, Sarathi-style, FCFS) — decode requests ride along — and *decode-only* otherwise. A request's first
output token comes at the end of the stage that finishes its prompt; each later stage it is in gives it one
more. **Admission** is FCFS up to ``max_batch`` requests, and only when the request's whole KV cache —
(prompt + output tokens) x the system's bytes per token — fits next to what admitted requests reserved:
the policy is *reserve on admission* (never over-commit, never preempt; a request waits at the head of
the queue until enough finishes). A request that could never fit is :class:`~sysmodel.cost.Infeasible`,
or with ``oversize="reject"`` is dropped before the run (vLLM rejects a request longer than its KV cache)
and counted in the result's ``meta["rejected"]``.

**Systems** implement :class:`System`: bytes of KV they hold, and the time of a vector of stages given
as a :class:`~sysmodel.models.StageShape` with array fields. Decode-only stretches between events
(a finish, an admissible arrival) are priced in one vectorised call, so a trace of 10^7 output tokens
runs in seconds.

**Metrics** (:class:`Result`): throughput (output tokens / makespan), T2FT (arrival -> first token), TBT
(gap between a request's consecutive tokens; every decode token's is the duration of the stage that made
it) and E2E (arrival -> last token), with p50/p90/p99; a per-request CSV; TBT CDF and throughput-vs-QPS
plots.
"""

from __future__ import annotations

import csv
import json
import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sysmodel.cost import Infeasible
from sysmodel.models import StageShape
from sysmodel.outputs import atomic
from sysmodel.plots import pyplot, save
from sysmodel.progress import progress as make_progress
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
    sol, _, ok, msg = fsolve(lambda v: [a - b for a, b in zip(moments(v[0], math.exp(v[1])), (mean, std),
                                                               strict=True)],
                             [math.log(mean) - s2 / 2, math.log(math.sqrt(s2))], full_output=True, xtol=1e-10)
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


def make_trace(kind: str, n: int, seed: int = 1, qps: float | None = None, prompt: int = 128,
               output: int = 128, std_frac: float = GAUSSIAN_STD, cap: int = TRACE_CAP) -> Trace:
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

    def tbt_percentiles(self, qs=(50, 90, 99)) -> dict[int, float]:
        """Percentiles over every decode token's TBT (each stage's duration, weighted by its tokens)."""
        w = self.iter_decode
        if w.sum() == 0:
            return {q: math.nan for q in qs}
        order = np.argsort(self.iter_time, kind="stable")
        cum = np.cumsum(w[order]) / w.sum()
        return {q: float(self.iter_time[order][np.searchsorted(cum, q / 100)]) for q in qs}

    def per_request_tbt(self) -> tuple[np.ndarray, np.ndarray]:
        """(mean, max) TBT of each request (NaN for single-token requests)."""
        mean = np.where(self.trace.output > 1, (self.finish - self.first_token) / np.maximum(self.trace.output - 1, 1),
                        np.nan)
        mx = np.full(len(self.trace), np.nan)
        for i, (a, b) in enumerate(self.req_iters):
            if b > a:
                mx[i] = self.iter_time[a:b].max()
        return mean, mx

    def summary(self) -> dict:
        pct = (50, 90, 99)
        t = self.tbt_percentiles(pct)
        out = {"system": self.system, "trace": self.trace.name, "requests": len(self.trace),
               "output_tokens": int(self.trace.output.sum()), "makespan_s": self.makespan,
               "throughput_tok_s": self.throughput, "joules_per_token": self.joules_per_token,
               "stages": len(self.iter_time),
               "kv_peak_gb": float(self.kv_peak) / 1e9, **self.meta}
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
            w.writerow(["id", "arrival_s", "prompt_tokens", "output_tokens", "admitted_s", "first_token_s",
                        "finish_s", "t2ft_s", "e2e_s", "mean_tbt_s", "max_tbt_s"])
            for i in range(len(self.trace)):
                w.writerow([i, self.arrival[i], self.trace.prompt[i], self.trace.output[i], self.admitted[i],
                            self.first_token[i], self.finish[i], self.t2ft[i], self.e2e[i], mean[i], mx[i]])
        return path


OVERSIZE = ("error", "reject")


def simulate(trace: Trace, system: System, max_batch: int = 256, prefill_budget: int | None = None,
             concurrency: int | None = None, progress: bool = False, oversize: str = "error") -> Result:
    """Run ``trace`` on ``system`` (module docstring). ``concurrency``: closed loop with that many requests
    in the system (the trace's arrival times are ignored). ``prefill_budget``: prompt tokens per stage
    (default: the system's ``prefill_budget(decode_reqs, decode_ctx)`` if it has one, else unbounded)."""
    if max_batch < 1:
        raise ValueError(f"max_batch: {max_batch} not allowed; must be >= 1")
    if prefill_budget is not None and prefill_budget < 1:
        raise ValueError(f"prefill_budget: {prefill_budget} not allowed; must be >= 1 token")
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"concurrency: {concurrency} not allowed; must be >= 1")
    if oversize not in OVERSIZE:
        raise ValueError(f"oversize: {oversize!r} not allowed; allowed: {', '.join(OVERSIZE)}")
    max_batch = min(max_batch, getattr(system, "max_batch", max_batch))  # a hardware limit on the batch
    per_tok, cap = system.kv_bytes_per_token, system.kv_capacity()
    fits = (trace.prompt + trace.output) * per_tok <= cap
    rejected = 0
    if oversize == "reject" and fits.any() and not fits.all():
        rejected = int((~fits).sum())
        trace = Trace(trace.arrival[fits], trace.prompt[fits], trace.output[fits], trace.name)
    n = len(trace)
    prompt, out = trace.prompt, trace.output
    need = (prompt + out) * per_tok
    if cap <= 0:
        raise Infeasible(f"{system.name}: no room for a KV cache: its weights fill its memory ({system.hardware()})")
    if (need > cap).any():
        i = int(np.argmax(need > cap))
        raise Infeasible(f"{system.name}: request {i} ({prompt[i]} + {out[i]} tokens) needs {need[i] / 1e9:.1f} GB "
                         f"of KV cache; the system holds {cap / 1e9:.1f} GB next to its weights")
    arrival = trace.arrival.copy() if concurrency is None else np.full(n, np.inf)
    if concurrency is not None:
        arrival[:concurrency] = 0.0
    admitted, first, finish = (np.full(n, np.nan) for _ in range(3))
    done_pf = np.zeros(n, np.int64)  # prompt tokens computed
    gen = np.zeros(n, np.int64)  # output tokens produced
    first_it = np.zeros(n, np.int64)
    last_it = np.zeros(n, np.int64)
    waiting: deque[int] = deque()
    running: list[int] = []
    nxt, released, finished, t, kv_used, kv_peak = 0, min(n, concurrency or n), 0, 0.0, 0.0, 0.0
    times: list[np.ndarray] = []
    decs: list[np.ndarray] = []
    insys: list[np.ndarray] = []
    energy: list[np.ndarray] = []
    n_iter = 0
    bar = make_progress(n, f"serve {system.name}", progress)

    def finish_some(done: np.ndarray) -> None:
        nonlocal finished, kv_used, released
        for r in done:
            finish[r] = t
            last_it[r] = n_iter
            kv_used -= need[r]
            running.remove(int(r))
            finished += 1
            if concurrency is not None and released < n:
                arrival[released] = t
                released += 1
        bar.update(len(done))

    while finished < n:
        while nxt < n and arrival[nxt] <= t:
            waiting.append(nxt)
            nxt += 1
        while waiting and len(running) < max_batch and kv_used + need[waiting[0]] <= cap:
            r = waiting.popleft()
            running.append(r)
            admitted[r] = t
            kv_used += need[r]
        kv_peak = max(kv_peak, kv_used)
        if not running:
            t = max(t, arrival[nxt])
            continue
        run = np.array(running)
        pre = run[done_pf[run] < prompt[run]]
        dec = run[done_pf[run] >= prompt[run]]
        in_sys = len(running) + len(waiting)
        if len(pre):  # mixed stage
            budget = prefill_budget or math.inf
            if prefill_budget is None and hasattr(system, "prefill_budget"):  # the system's own scheduler
                budget = system.prefill_budget(len(dec), int((prompt[dec] + gen[dec]).sum()))
            chunk = np.zeros(len(pre), np.int64)
            for j, r in enumerate(pre):  # FCFS in admission order
                chunk[j] = min(prompt[r] - done_pf[r], budget)
                budget -= chunk[j]
                if budget <= 0:
                    break
            p = done_pf[pre]
            shape = StageShape(tokens=int(chunk.sum()) + len(dec), decode_reqs=len(dec),
                               decode_ctx=int((prompt[dec] + gen[dec]).sum()),
                               prefill_pairs=float((chunk * p + chunk * (chunk + 1) / 2).sum()),
                               prefill_kv=int(((p + chunk) * (chunk > 0)).sum()))
            dt = float(np.asarray(system.stage_times(shape)).reshape(-1)[0])
            energy.append(np.asarray(system.energy(shape, np.array([dt])), float).reshape(-1)[:1])
            t += dt
            done_pf[pre] += chunk
            gen[dec] += 1
            new = pre[(done_pf[pre] == prompt[pre]) & (chunk > 0)]
            gen[new] = 1
            first[new] = t
            first_it[new] = n_iter + 1
            times.append(np.array([dt]))
            decs.append(np.array([len(dec)]))
            insys.append(np.array([in_sys]))
            n_iter += 1
            finish_some(run[(gen[run] >= out[run]) & (done_pf[run] == prompt[run])])
            continue
        # decode-only stretch up to the next finish or admissible arrival
        k = int(min((out[dec] - gen[dec]).min(), MAX_STRETCH))
        ctx0 = int((prompt[dec] + gen[dec]).sum())
        steps = np.arange(k)
        shape = StageShape(tokens=np.full(k, len(dec)), decode_reqs=np.full(k, len(dec)),
                           decode_ctx=ctx0 + steps * len(dec))
        dts = np.broadcast_to(np.asarray(system.stage_times(shape), float), (k,))
        joules = np.broadcast_to(np.asarray(system.energy(shape, dts), float), (k,))
        ends = t + np.cumsum(dts)
        if nxt < n and len(running) < max_batch and kv_used + need[nxt] <= cap and arrival[nxt] < ends[-1]:
            k = int(np.searchsorted(ends, arrival[nxt], side="right")) + 1  # the stage it arrives in completes
            k = min(k, len(ends))
        t = float(ends[k - 1])
        gen[dec] += k
        times.append(dts[:k])
        energy.append(joules[:k])
        decs.append(np.full(k, len(dec)))
        insys.append(np.full(k, in_sys))
        n_iter += k
        finish_some(dec[gen[dec] >= out[dec]])
    bar.close()
    return Result(trace, system.name, admitted, first, finish, arrival, np.concatenate(times),
                  np.concatenate(decs), np.concatenate(insys), np.concatenate(energy),
                  np.stack([first_it, last_it], axis=1), kv_peak, cap,
                  {"max_batch": max_batch, "prefill_budget": prefill_budget, "concurrency": concurrency,
                   "rejected": rejected})


# --- plots ----------------------------------------------------------------------------------------------

CDF_POINTS = 512  # points a TBT CDF is drawn with, whatever the run's length


def tbt_cdf(r: Result, points: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(TBT seconds, fraction of decode tokens at or below it) at ``points`` quantiles: the distinct stage
    durations weighted by their tokens, so a run of millions of stages costs one sort of the distinct values."""
    times, inv = np.unique(r.iter_time, return_inverse=True)
    w = np.bincount(inv, weights=r.iter_decode, minlength=len(times))
    keep = w > 0
    times, cum = times[keep], np.cumsum(w[keep]) / max(w.sum(), 1)
    if len(times) > points:
        idx = np.unique(np.searchsorted(cum, np.linspace(0, 1, points), side="left").clip(0, len(cum) - 1))
        times, cum = times[idx], cum[idx]
    return times, cum


def plot_tbt_cdf(results: list[Result], path: Path, labels: list[str] | None = None) -> Path:
    """The TBT CDF of each run (``labels``: one legend entry per run, e.g. per offered rate)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, r in enumerate(results):
        t, cum = tbt_cdf(r)
        if len(t):
            ax.step(t * 1e3, cum, where="post", label=labels[i] if labels else r.system)
    ax.set_xlabel("time between tokens (ms)")
    ax.set_ylabel("fraction of decode tokens")
    ax.set_title(f"TBT CDF, {results[0].trace.name.split('@')[0]}")
    ax.legend(fontsize=7)
    ax.grid(True, lw=0.3)
    return save(fig, plt, path)


def plot_qps(rows: list[dict], path: Path) -> Path:
    """Throughput and p50 E2E against offered QPS (rows from :func:`qps_sweep`)."""
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for system in sorted({r["system"] for r in rows}):
        pts = [r for r in rows if r["system"] == system]
        a1.plot([r["qps"] for r in pts], [r["throughput_tok_s"] for r in pts], marker="o", label=system)
        a2.plot([r["qps"] for r in pts], [r["e2e_p50_s"] for r in pts], marker="o", label=system)
    a1.set(xlabel="offered load (requests/s)", ylabel="output tokens/s", title="throughput vs offered load")
    a2.set(xlabel="offered load (requests/s)", ylabel="median end-to-end latency (s)", title="latency vs offered load")
    a1.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, plt, path)


def qps_sweep(systems: list[System], kind: str, n: int, qps_values: list[float], seed: int = 1,
              **kw) -> list[dict]:
    """Poisson arrivals at each QPS, same seed per point, on every system: the saturation curve."""
    rows = []
    for q in qps_values:
        trace = make_trace(kind, n, seed, qps=q, **{k: v for k, v in kw.items() if k in ("prompt", "output")})
        for s in systems:
            res = simulate(trace, s, **{k: v for k, v in kw.items() if k in ("max_batch", "prefill_budget")})
            rows.append({"qps": q, **res.summary()})
    return rows
