"""What a serving run measured (:class:`Result`): per-request times, per-stage records, and the metrics
derived from them — throughput (output tokens / makespan), T2FT (arrival -> first token), TBT (gap between a
request's consecutive tokens: the duration of the stage that made it, or, after a stall — a preemption, a
decode paused for a prompt — the whole gap) and E2E (arrival -> last token), with p50/p90/p99; scheduling
delay (arrival -> first admission), goodput at TBT/T2FT SLOs, the TBT CDF, and a per-request CSV."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sysmodel.engines.workload import Trace
from sysmodel.outputs import atomic

CDF_POINTS = 512  # points a TBT CDF is drawn with, whatever the run's length
# Weighted samples (distinct values) up to which percentiles are exact; above it a DDSketch summarises them
# (our choice: 2^20 values sort in well under a second, and no report grid comes near it).
EXACT_SAMPLES = 1 << 20
# DDSketch's relative accuracy (Masson et al., VLDB 2019): every quantile it returns is within this share of
# a value of the data at that rank. Our choice: 0.5%, below the 1-2% the report's TBT columns resolve.
SKETCH_ACCURACY = 0.005


def weighted_percentiles(values: np.ndarray, weights: np.ndarray, qs=(50, 90, 99)) -> dict[int, float]:
    """Percentiles ``qs`` of ``values`` each counted ``weights`` times: exact (the lowest value whose
    cumulative weight reaches q%) up to :data:`EXACT_SAMPLES` values, a DDSketch's beyond."""
    total = weights.sum()
    if total == 0:
        return {q: math.nan for q in qs}
    if len(values) > EXACT_SAMPLES:
        from ddsketch import DDSketch

        sketch = DDSketch(SKETCH_ACCURACY)
        keep = weights > 0
        for v, w in zip(values[keep].tolist(), weights[keep].tolist(), strict=True):
            sketch.add(v, w)
        return {q: float(sketch.get_quantile_value(q / 100)) for q in qs}
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order]) / total
    return {q: float(values[order][np.searchsorted(cum, q / 100)]) for q in qs}


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
    iter_energy: np.ndarray  # joules of each stage (the system's energy on sysmodel.cost.energy's basis)
    req_iters: np.ndarray  # [first, last) stage indices in which each request produced decode tokens
    kv_peak: float
    kv_capacity: float
    meta: dict = field(default_factory=dict)
    iter_kv: np.ndarray | None = None  # share of the KV capacity held (reserved or in blocks) at each stage
    iter_stalled: np.ndarray | None = None  # decode tokens of each stage that came after a stall
    stall_gaps: np.ndarray = field(default_factory=lambda: np.zeros(0))  # those tokens' own gaps (s), distinct
    stall_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # tokens at each gap
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

    @property
    def stall_tbt(self) -> np.ndarray:
        """Every stalled token's gap, ascending (kept as distinct gaps and counts: a prompt pausing the decodes
        gives them all one gap)."""
        return np.repeat(self.stall_gaps, self.stall_counts)

    def tbt_samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(TBT values, token weights): each stage's duration for the decode tokens it made on time, and each
        stalled token's own gap (a preempted request's wait, or a decode paused for a prompt)."""
        if not len(self.stall_gaps):
            return self.iter_time, self.iter_decode
        return (
            np.concatenate([self.iter_time, self.stall_gaps]),
            np.concatenate([self.iter_decode - self.iter_stalled, self.stall_counts]),
        )

    def tbt_percentiles(self, qs=(50, 90, 99)) -> dict[int, float]:
        """Percentiles over every decode token's TBT (:meth:`tbt_samples`; :func:`weighted_percentiles`)."""
        return weighted_percentiles(*self.tbt_samples(), qs)

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
        a, b = self.req_iters[:, 0], self.req_iters[:, 1]
        some = b > a
        if some.any():  # each request's longest stage: a running maximum read at its last stage
            mx[some] = _range_max(self.iter_time, a[some], b[some])
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
            cols = (
                np.arange(len(self.trace)),
                self.arrival,
                self.trace.prompt,
                self.trace.output,
                self.admitted,
                self.first_token,
                self.finish,
                self.t2ft,
                self.e2e,
                mean,
                mx,
            )
            w.writerows(zip(*(c.tolist() for c in cols), strict=True))  # Python scalars: one C loop, same text
        return path


STAGE_COLUMNS = ("engine", "stage", "seconds", "decode_tokens", "stalled_tokens", "in_system", "kv_share", "joules")


def write_stages(engines: list[Result], path: Path) -> Path:
    """Every stage of each engine's run (``--trace-stages``), in order: its duration, the decode tokens it made
    (those after a stall among them), the requests waiting or running when it began, the KV share held and its
    energy. Engines are numbered in the order given (replicas, then each replica's virtual engines)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic(path) as tmp, tmp.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(STAGE_COLUMNS)
        for j, r in enumerate(engines):
            n = len(r.iter_time)
            stalled = r.iter_stalled if r.iter_stalled is not None else np.zeros(n, np.int64)
            kv = r.iter_kv if r.iter_kv is not None else np.full(n, np.nan)
            cols = (np.full(n, j), np.arange(n), r.iter_time, r.iter_decode, stalled, r.iter_in_system, kv)
            w.writerows(zip(*(c.tolist() for c in (*cols, r.iter_energy)), strict=True))
    return path


def _range_max(values: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """max(values[start[i]:stop[i]]) for each i (every range non-empty), in one ``reduceat`` pass: the even
    slots of the interleaved bounds are the ranges (a sentinel lets a range end at the last value)."""
    bounds = np.stack([start, stop], axis=1).ravel()
    return np.maximum.reduceat(np.append(values, 0.0), bounds)[::2]


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
