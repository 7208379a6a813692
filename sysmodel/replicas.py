"""Replicas behind a global router: ``replicas`` copies of one system, each its own serving engine
(:func:`sysmodel.serving.simulate`), and a router that sends each arriving request to one of them.

* ``round-robin``: request i to replica i mod N.
* ``least-outstanding``: each request, in arrival order, to the replica with the fewest requests assigned
  and not yet finished at its arrival (ties: the lowest index). The count is exact: an arrival changes an
  engine's schedule only from its arrival on (stages run to their end; admission happens at stage
  boundaries), so a replica's finishes before time t follow from the requests it holds that arrived by t.
  A replica is re-simulated only when it has taken a request and time has moved on since: n simulations
  of up to n/N requests at worst — fine for thousands of requests, not millions.

With ``pp`` > 1 each replica is a pipeline of ``pp`` stages (:mod:`sysmodel.pipeline`): its ``pp`` virtual
engines take the replica's requests by least-outstanding, as vLLM's do.

The result is one :class:`~sysmodel.serving.Result` over the whole trace, in its order: per-request times
from each request's replica, every replica's stages (TBT, energy and KV samples pooled), makespan from the
first arrival to the last finish, and in ``meta`` the replicas, the router and how many requests each got.
"""

from __future__ import annotations

import numpy as np

from sysmodel.pipeline import Pipelined, default_link
from sysmodel.progress import progress as make_progress
from sysmodel.serving import Result, Trace, simulate
from sysmodel.systems import System

ROUTERS = ("round-robin", "least-outstanding")


def engine(trace: Trace, system: System, pp: int = 1, pp_link: str | None = None, **kw) -> tuple[Result, list[Result]]:
    """One replica: a serving engine, or with ``pp`` > 1 the ``pp`` virtual engines of a pipeline
    (:mod:`sysmodel.pipeline`) behind the least-outstanding router; (pooled result, each engine's)."""
    if pp == 1:
        res = simulate(trace, system, **kw)
        return res, [res]
    res, parts = run(trace, Pipelined(system, pp, pp_link), pp, "least-outstanding", **kw)
    res.system = f"{system.name}, PP {pp}"
    res.meta.update(
        pp=pp,
        pp_link=pp_link or default_link(system),
        virtual_engines=res.meta.pop("replicas"),
        requests_per_virtual_engine=res.meta.pop("requests_per_replica"),
    )
    del res.meta["router"]
    return res, parts


def route(trace: Trace, system: System, replicas: int, router: str, progress: bool = False, **kw) -> np.ndarray:
    """The replica of every request (``progress``: a bar over the requests routed: least-outstanding
    re-simulates replicas as it goes)."""
    n = len(trace)
    if router == "round-robin":
        return np.arange(n) % replicas
    bar = make_progress(n, f"route {system.name}", progress)
    where = np.full(n, -1)
    finish = np.full(n, np.inf)  # as of each replica's last simulation
    dirty: set[int] = set()
    for i in range(n):
        t = trace.arrival[i]
        for j in sorted(dirty):  # replicas that took a request since they were last simulated
            if (trace.arrival[where == j] < t).all():
                idx = np.flatnonzero(where == j)
                finish[idx] = engine(_subset(trace, idx), system, **kw)[0].finish
                dirty.discard(j)
        outstanding = [int(((where == j) & ~(finish <= t)).sum()) for j in range(replicas)]
        where[i] = int(np.argmin(outstanding))
        finish[i] = np.inf
        dirty.add(int(where[i]))
        bar.update()
    bar.close()
    return where


def serve(trace: Trace, system: System, replicas: int = 1, router: str = "round-robin", **kw) -> Result:
    """``trace`` on ``replicas`` copies of ``system`` behind ``router``; ``kw``: :func:`simulate`'s options
    (``concurrency`` is not: a closed loop has no arrivals to route)."""
    return run(trace, system, replicas, router, **kw)[0]


def run(
    trace: Trace, system: System, replicas: int = 1, router: str = "round-robin", **kw
) -> tuple[Result, list[Result]]:
    """:func:`serve`'s pooled result and each engine's own — one per replica, or per virtual engine with
    ``pp`` (stage-by-stage views such as KV utilisation over time are per engine: pooled stages of
    different engines do not share a time axis). ``progress`` in ``kw``: a bar while routing and one per
    engine's run."""
    if replicas < 1:
        raise ValueError(f"replicas: {replicas} not allowed; must be >= 1")
    if router not in ROUTERS:
        raise ValueError(f"router: {router!r} not allowed; allowed: {', '.join(ROUTERS)}")
    if kw.get("concurrency") is not None and replicas > 1:
        raise ValueError("concurrency: not allowed with replicas > 1 (a closed loop has no arrivals to route)")
    if kw.get("concurrency") is not None and kw.get("pp", 1) > 1:
        raise ValueError("concurrency: not allowed with pp > 1 (a closed loop has no arrivals to route)")
    if replicas == 1:
        return engine(trace, system, **kw)
    where = route(trace, system, replicas, router, **kw)
    parts = [np.flatnonzero(where == j) for j in range(replicas) if (where == j).any()]
    runs = [(idx, engine(_subset(trace, idx), system, **kw)) for idx in parts]
    return (
        _merge(trace, system, [(idx, r) for idx, (r, _) in runs], replicas, router, [len(idx) for idx in parts]),
        [e for _, (_, each) in runs for e in each],
    )


def _subset(trace: Trace, idx: np.ndarray) -> Trace:
    return Trace(trace.arrival[idx], trace.prompt[idx], trace.output[idx], trace.name)


def _merge(
    trace: Trace, system: System, runs: list[tuple[np.ndarray, Result]], replicas: int, router: str, counts: list[int]
) -> Result:
    n = len(trace)
    per = {k: np.full(n, np.nan) for k in ("admitted", "first_token", "finish", "arrival")}
    req_iters, max_gap = np.zeros((n, 2), np.int64), np.zeros(n)
    offset = 0
    for idx, r in runs:
        for k in per:
            per[k][idx] = getattr(r, k)
        req_iters[idx] = r.req_iters + offset
        max_gap[idx] = r.max_gap if r.max_gap is not None else 0.0
        offset += len(r.iter_time)

    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(r, name) for _, r in runs])

    meta = {**runs[0][1].meta, "replicas": replicas, "router": router, "requests_per_replica": counts}
    for k in ("preemptions", "recomputed_tokens", "swapped_gb", "rejected"):
        if k in meta:
            meta[k] = sum(r.meta[k] for _, r in runs)
    return Result(
        trace,
        f"{system.name} x {replicas} ({router})",
        per["admitted"],
        per["first_token"],
        per["finish"],
        per["arrival"],
        cat("iter_time"),
        cat("iter_decode"),
        cat("iter_in_system"),
        cat("iter_energy"),
        req_iters,
        max(r.kv_peak for _, r in runs),
        runs[0][1].kv_capacity,
        meta,
        iter_kv=cat("iter_kv"),
        iter_stalled=cat("iter_stalled"),
        stall_tbt=cat("stall_tbt"),
        max_gap=max_gap,
    )
