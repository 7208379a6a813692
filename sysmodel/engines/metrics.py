"""What a serving run measured (:class:`Result`): per-request times, statistics streamed from its stages (per-stage
records only when asked for), and the metrics
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


def weighted_percentiles(
    values: np.ndarray, weights: np.ndarray, qs=(50, 90, 99), samples: int | None = None
) -> dict[int, float]:
    """Percentiles ``qs`` of ``values`` each counted ``weights`` times: exact (the lowest value whose
    cumulative weight reaches q%) up to :data:`EXACT_SAMPLES` samples (``samples``, default the values;
    a run counts its stages, whose durations come here merged into distinct values), a DDSketch's beyond
    (both answer the same for distinct values with summed weights as for the samples themselves)."""
    total = weights.sum()
    if total == 0:
        return {q: math.nan for q in qs}
    if (len(values) if samples is None else samples) > EXACT_SAMPLES:
        from ddsketch import DDSketch

        sketch = DDSketch(SKETCH_ACCURACY)
        keep = weights > 0
        for v, w in zip(values[keep].tolist(), weights[keep].tolist(), strict=True):
            sketch.add(v, w)
        return {q: float(sketch.get_quantile_value(q / 100)) for q in qs}
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order]) / total
    return {q: float(values[order][np.searchsorted(cum, q / 100)]) for q in qs}


# Buffered (value, weight) pairs a Distinct folds into its table of distinct values: bounds the buffer (our choice).
FOLD_AT = 1 << 16
# Points of a run's KV-occupancy series kept without --trace-stages (every 2^j-th stage, j grown as the run
# does): our choice, several times the plot's width in pixels; a run of fewer stages keeps every one.
KV_POINTS = 1 << 14


class Distinct:
    """Values each counted with a weight, kept as their distinct values and summed weights (a run's TBT
    samples: memory grows with distinct stage times, not with stages). Weights are token counts: their sums
    are exact, so percentiles and CDFs over the table equal those over the samples it was built from."""

    def __init__(self) -> None:
        self.values, self.weights = np.zeros(0), np.zeros(0, np.int64)
        self._buf: list[tuple[np.ndarray, np.ndarray]] = []
        self._held = 0

    def add(self, values: np.ndarray, weights: np.ndarray) -> None:
        keep = weights > 0  # a zero weight is never a percentile's answer (weighted_percentiles)
        self._buf.append((np.asarray(values, float)[keep], np.asarray(weights, np.int64)[keep]))
        self._held += int(keep.sum())
        if self._held > FOLD_AT:
            self._fold()

    def merge(self, other: Distinct) -> None:
        self._buf.append(other.table())
        self._fold()

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """(Distinct values ascending, their summed weights)."""
        if self._buf:
            self._fold()
        return self.values, self.weights

    def _fold(self) -> None:
        values = np.concatenate([self.values, *(v for v, _ in self._buf)])
        weights = np.concatenate([self.weights, *(w for _, w in self._buf)])
        self.values, inv = np.unique(values, return_inverse=True)
        self.weights = np.bincount(inv, weights=weights, minlength=len(self.values)).astype(np.int64)
        self._buf, self._held = [], 0


class ExactSum:
    """A running sum rounded once, at the end (``math.fsum``'s exactly rounded result over every value
    added): the terms it keeps sum exactly to what was added, so the result depends on neither the order
    nor the chunking of the values (a run's energy, streamed stage by stage)."""

    def __init__(self) -> None:
        self.terms: list[float] = []

    def add(self, values: np.ndarray | list[float]) -> None:
        rest = [*self.terms, *np.asarray(values, float).tolist()]
        self.terms = []
        while (s := math.fsum(rest)) != 0 and math.isfinite(s):
            self.terms.append(s)  # rest - s, rounded once more, is what s left out
            rest.append(-s)
        if not math.isfinite(s):
            self.terms = [s]

    @property
    def value(self) -> float:
        return math.fsum(self.terms)


class KvSeries:
    """A run's KV share at the start of its stages, at most :data:`KV_POINTS` of them: every ``stride``-th
    stage, the stride doubled (every other point dropped) whenever the series fills. Start times are the
    running sum of stage times, added in stage order as ``np.cumsum`` adds them."""

    def __init__(self) -> None:
        self.start, self.kv = np.zeros(0), np.zeros(0)
        self.stride, self.n, self.t = 1, 0, 0.0

    def add(self, seconds: np.ndarray, kv: np.ndarray) -> None:
        cum = np.cumsum(np.concatenate([[self.t], seconds]))
        at = np.arange(self.n, self.n + len(seconds))
        keep = at % self.stride == 0
        self.start, self.kv = np.append(self.start, cum[:-1][keep]), np.append(self.kv, kv[keep])
        self.n, self.t = self.n + len(seconds), float(cum[-1])
        while len(self.kv) > KV_POINTS:
            self.start, self.kv, self.stride = self.start[::2], self.kv[::2], 2 * self.stride


ITER_FIELDS = ("iter_time", "iter_decode", "iter_in_system", "iter_energy", "iter_kv", "iter_stalled")


@dataclass
class Result:
    """A run's per-request columns and the statistics streamed from its stages as they ran (memory grows with
    requests, not stages); the per-stage records themselves only when asked for (``stages=True``,
    ``--trace-stages``)."""

    trace: Trace
    system: str
    admitted: np.ndarray
    first_token: np.ndarray
    finish: np.ndarray
    arrival: np.ndarray  # as simulated (closed loop assigns them)
    req_iters: np.ndarray  # [first, last) stage indices in which each request produced decode tokens
    kv_peak: float
    kv_capacity: float
    meta: dict = field(default_factory=dict)
    stages: int = 0  # stages (iterations) run
    energy: ExactSum = field(default_factory=ExactSum)  # joules of every stage, summed exactly
    tbt: Distinct = field(default_factory=Distinct)  # every decode token's TBT (tbt_samples)
    tbt_count: int = 0  # samples the TBT percentiles choose exact or sketch by: stages + distinct stall gaps
    stage_max: np.ndarray | None = None  # each request's longest stage in its req_iters range (NaN: none)
    max_gap: np.ndarray | None = None  # each request's longest stalled gap (0: none)
    stall_gaps: np.ndarray = field(default_factory=lambda: np.zeros(0))  # stalled tokens' own gaps (s), distinct
    stall_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # tokens at each gap
    kv_series: KvSeries | None = None  # KV share at (a bounded sample of) the stages' starts, for the plot
    # per-stage records (stages=True only): duration, decode tokens (TBT samples), requests waiting or running
    # when it began, joules (the system's energy on sysmodel.cost.energy's basis), share of the KV capacity
    # held (reserved or in blocks), decode tokens that came after a stall
    iter_time: np.ndarray | None = None
    iter_decode: np.ndarray | None = None
    iter_in_system: np.ndarray | None = None
    iter_energy: np.ndarray | None = None
    iter_kv: np.ndarray | None = None
    iter_stalled: np.ndarray | None = None

    @property
    def makespan(self) -> float:
        return float(self.finish.max() - self.arrival.min())

    @property
    def throughput(self) -> float:
        """Output tokens per second over the whole run."""
        return float(self.trace.output.sum() / self.makespan)

    @property
    def joules_per_token(self) -> float:
        """Energy of the whole run over its output tokens. The energy is summed exactly rounded (:class:`ExactSum`,
        streamed as the stages end), not as ``np.sum`` of the stages' energies: the two differ in the last digits."""
        return float(self.energy.value / self.trace.output.sum())

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
        stalled token's own gap (a preempted request's wait, or a decode paused for a prompt); as distinct
        values ascending and their summed token counts (zero-weight values left out)."""
        return self.tbt.table()

    def tbt_percentiles(self, qs=(50, 90, 99)) -> dict[int, float]:
        """Percentiles over every decode token's TBT (:meth:`tbt_samples`; :func:`weighted_percentiles`)."""
        return weighted_percentiles(*self.tbt_samples(), qs, self.tbt_count)

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
        mx = self.stage_max.copy() if self.stage_max is not None else np.full(len(self.trace), np.nan)
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
            "stages": self.stages,
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
            if r.iter_time is None or r.iter_decode is None or r.iter_in_system is None or r.iter_energy is None:
                raise ValueError(f"{r.system}: the run kept no stages (run it with stages=True)")
            n = len(r.iter_time)
            stalled = r.iter_stalled if r.iter_stalled is not None else np.zeros(n, np.int64)
            kv = r.iter_kv if r.iter_kv is not None else np.full(n, np.nan)
            cols = (np.full(n, j), np.arange(n), r.iter_time, r.iter_decode, stalled, r.iter_in_system, kv)
            w.writerows(zip(*(c.tolist() for c in (*cols, r.iter_energy)), strict=True))
    return path


def range_max(values: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
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
