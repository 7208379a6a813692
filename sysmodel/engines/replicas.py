"""Replicas behind a global router: ``replicas`` copies of one system, each its own serving engine
(:class:`sysmodel.engines.engine.Engine`), and a router that sends each arriving request to one of them.

One discrete-event loop advances every engine together: before each arrival is routed, every engine runs
the iterations that start before it (:meth:`~sysmodel.engines.engine.Engine.advance`), so the router sees each
replica's true state at that instant, and no engine is ever re-simulated. The routers (:data:`ROUTERS`):

* ``round-robin``: request i to replica i mod N.
* ``least-outstanding``: to the replica with the fewest requests routed to it and not finished by the
  arrival (ties: the lowest index) — the router real deployments use.
* ``kv-aware``: to the replica holding the fewest KV bytes (reserved, or in blocks) at the arrival; ties
  by outstanding requests, then the lowest index. It is the ``kv-cache-utilization-scorer`` of the Gateway
  API Inference Extension's endpoint picker (which llm-d deploys) used alone; prefix-cache affinity, which
  that picker weighs beside it, is not modelled (membound's traces carry no prompt contents).

With ``pp`` > 1 each replica is a pipeline of ``pp`` stages (:mod:`sysmodel.engines.pipeline`): its ``pp`` virtual
engines take the replica's requests by least-outstanding, as vLLM's do.

The result is one :class:`~sysmodel.engines.metrics.Result` over the whole trace, in its order: per-request times
from each request's replica, every replica's stages (TBT, energy and KV samples pooled), makespan from the
first arrival to the last finish, and in ``meta`` the replicas, the router and how many requests each got.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from sysmodel.engines.engine import Engine, StageCosts, admissible, check_options, simulate
from sysmodel.engines.metrics import ITER_FIELDS, Distinct, ExactSum, Result
from sysmodel.engines.pipeline import Pipelined, default_link
from sysmodel.engines.scheduling import get_scheduler
from sysmodel.engines.workload import Trace
from sysmodel.progress import serve_progress
from sysmodel.systems import System


class Replica:
    """One replica: its engines (``pp`` virtual engines, or one) and the requests each was given."""

    def __init__(self, engines: list[Engine]) -> None:
        self.engines = engines
        self.ids: list[list[int]] = [[] for _ in engines]

    def outstanding(self, t: float) -> int:
        return sum(e.outstanding(t) for e in self.engines)

    def kv_bytes(self) -> float:
        return sum(e.kv_bytes() for e in self.engines)

    def advance(self, until: float) -> None:
        for e in self.engines:
            e.advance(until)

    def take(self, trace: Trace, i: int) -> None:
        """Request ``i`` to the virtual engine with the fewest outstanding requests (vLLM's choice)."""
        t = trace.arrival[i]
        j = min(range(len(self.engines)), key=lambda k: self.engines[k].outstanding(t))
        self.engines[j].add(trace.prompt[i : i + 1], trace.output[i : i + 1], trace.arrival[i : i + 1])
        self.ids[j].append(i)


def _round_robin(reps: list[Replica], t: float, i: int) -> int:
    return i % len(reps)


def _least_outstanding(reps: list[Replica], t: float, i: int) -> int:
    return min(range(len(reps)), key=lambda j: reps[j].outstanding(t))


def _kv_aware(reps: list[Replica], t: float, i: int) -> int:
    return min(range(len(reps)), key=lambda j: (reps[j].kv_bytes(), reps[j].outstanding(t)))


ROUTERS: dict[str, Callable[[list[Replica], float, int], int]] = {
    "round-robin": _round_robin,
    "least-outstanding": _least_outstanding,
    "kv-aware": _kv_aware,
}


def route(trace: Trace, system: System, replicas: int, router: str, **kw) -> np.ndarray:
    """The replica of every request."""
    where = np.full(len(trace), -1)
    for j, rep in enumerate(_loop(trace, system, replicas, router, **kw)[0]):
        for ids in rep.ids:
            where[ids] = j
    return where


def serve(trace: Trace, system: System, replicas: int = 1, router: str = "round-robin", **kw) -> Result:
    """``trace`` on ``replicas`` copies of ``system`` behind ``router``; ``kw``: :func:`simulate`'s options
    (``concurrency`` is not: a closed loop has no arrivals to route) and ``pp``, ``pp_link``."""
    return run(trace, system, replicas, router, **kw)[0]


def run_all(traces: list[Trace], system: System, dask: str | None = None, **kw) -> list[tuple[Result, list[Result]]]:
    """:func:`run` on each trace (``kw``: its options), here or, with ``dask`` (``tcp://host:port``), as one
    task per trace on that Dask cluster; the results are the local run's (the engine is deterministic)."""
    if dask is None:
        return [run(t, system, **kw) for t in traces]
    from sysmodel.cluster import client

    with client(dask, "--dask") as c:
        return c.gather(c.map(partial(run, system=system, **kw), traces, pure=False))


def run(
    trace: Trace, system: System, replicas: int = 1, router: str = "round-robin", **kw
) -> tuple[Result, list[Result]]:
    """:func:`serve`'s pooled result and each engine's own — one per replica, or per virtual engine with
    ``pp`` (stage-by-stage views such as KV utilisation over time are per engine: pooled stages of
    different engines do not share a time axis)."""
    if replicas < 1:
        raise ValueError(f"replicas: {replicas} not allowed; must be >= 1")
    if router not in ROUTERS:
        raise ValueError(f"router: {router!r} not allowed; allowed: {', '.join(ROUTERS)}")
    pp = kw.get("pp", 1)
    if kw.get("concurrency") is not None and (replicas > 1 or pp > 1):
        which = "replicas" if replicas > 1 else "pp"
        raise ValueError(f"concurrency: not allowed with {which} > 1 (a closed loop has no arrivals to route)")
    if replicas == pp == 1:
        kw.pop("pp", None)
        kw.pop("pp_link", None)
        res = simulate(trace, system, **kw)
        return res, [res]
    reps, trace, meta, rejected = _loop(trace, system, replicas, router, **kw)
    each = [_engine_results(trace, rep, meta) for rep in reps]
    parts = [
        _replica_result(trace, rep, runs, system, kw.get("pp_link"))
        for rep, runs in zip(reps, each, strict=True)
        if runs
    ]
    if replicas == 1:
        pooled = parts[0][1]
    else:
        counts = [len(idx) for idx, _ in parts]
        pooled = _merge(trace, parts[0][1].system, parts, replicas, router, counts)  # a replica's name, PP in it
    pooled.meta["rejected"] = rejected
    return pooled, [r for runs in each for r in runs]


def _loop(
    trace: Trace,
    system: System,
    replicas: int,
    router: str,
    pp: int = 1,
    pp_link: str | None = None,
    max_batch: int = 256,
    prefill_budget: int | None = None,
    concurrency: int | None = None,
    progress: bool = False,
    oversize: str = "error",
    scheduler: str = "vllm",
    stages: bool = False,
    **settings,
) -> tuple[list[Replica], Trace, dict, int]:
    """The event loop: every engine advanced to each arrival, which ``router`` then places; (replicas, the
    trace without rejected requests, the engines' meta, how many were rejected)."""
    pol = get_scheduler(scheduler, prefill_budget=prefill_budget, **settings)
    check_options(max_batch, concurrency, oversize)
    sys_ = Pipelined(system, pp, pp_link) if pp > 1 else system
    longest = int(trace.output.max())
    trace, rejected = admissible(trace, sys_, pol, oversize, longest)
    max_batch = min(max_batch, getattr(sys_, "max_batch", max_batch))
    costs = StageCosts(sys_)
    reps = [
        Replica([Engine(sys_, pol, max_batch, longest, costs=costs, stages=stages) for _ in range(pp)])
        for _ in range(replicas)
    ]
    bar = serve_progress(trace.arrival, f"serve {sys_.name} x {replicas}", progress)
    for rep in reps:
        for e in rep.engines:
            e.on_finish = bar
    pick = ROUTERS[router]
    for i, t in enumerate(trace.arrival.tolist()):
        for rep in reps:
            rep.advance(t)
        reps[pick(reps, t, i)].take(trace, i)
    for rep in reps:
        rep.advance(math.inf)
    bar.close()
    meta = {"max_batch": max_batch, "prefill_budget": prefill_budget, "concurrency": None, "rejected": 0}
    return reps, trace, meta, rejected


def _engine_results(trace: Trace, rep: Replica, meta: dict) -> list[Result]:
    return [
        e.result(_subset(trace, np.array(ids, np.int64)), meta)
        for e, ids in zip(rep.engines, rep.ids, strict=True)
        if ids
    ]


def _replica_result(
    trace: Trace, rep: Replica, runs: list[Result], system: System, pp_link: str | None
) -> tuple[np.ndarray, Result]:
    """(The replica's requests, its result): its engine's, or its virtual engines' pooled."""
    ids = [np.array(i, np.int64) for i in rep.ids if i]
    own = np.sort(np.concatenate(ids))
    if len(rep.engines) == 1:
        return own, runs[0]
    local = [np.searchsorted(own, idx) for idx in ids]
    pp = len(rep.engines)
    res = _merge(
        _subset(trace, own),
        rep.engines[0].system.name,
        list(zip(local, runs, strict=True)),
        pp,
        "",
        [len(i) for i in ids],
    )
    res.system = f"{system.name}, PP {pp}"
    res.meta.update(
        pp=pp,
        pp_link=pp_link or default_link(system),
        virtual_engines=res.meta.pop("replicas"),
        requests_per_virtual_engine=res.meta.pop("requests_per_replica"),
    )
    del res.meta["router"]
    return own, res


def _subset(trace: Trace, idx: np.ndarray) -> Trace:
    return Trace(trace.arrival[idx], trace.prompt[idx], trace.output[idx], trace.name)


def _merge(
    trace: Trace, name: str, runs: list[tuple[np.ndarray, Result]], replicas: int, router: str, counts: list[int]
) -> Result:
    n = len(trace)
    per = {k: np.full(n, np.nan) for k in ("admitted", "first_token", "finish", "arrival", "stage_max")}
    req_iters, max_gap = np.zeros((n, 2), np.int64), np.zeros(n)
    offset, tbt, energy = 0, Distinct(), ExactSum()
    for idx, r in runs:
        for k in per:
            per[k][idx] = getattr(r, k)
        req_iters[idx] = r.req_iters + offset
        max_gap[idx] = r.max_gap if r.max_gap is not None else 0.0
        offset += r.stages
        tbt.merge(r.tbt)
        energy.add(r.energy.terms)
    kept = {}
    if all(r.iter_time is not None for _, r in runs):  # every engine kept its stages
        kept = {k: np.concatenate([getattr(r, k) for _, r in runs]) for k in ITER_FIELDS}
    meta = {**runs[0][1].meta, "replicas": replicas, "router": router, "requests_per_replica": counts}
    for k in ("preemptions", "recomputed_tokens", "swapped_gb", "rejected"):
        if k in meta:
            meta[k] = sum(r.meta[k] for _, r in runs)
    return Result(
        trace,
        f"{name} x {replicas} ({router})",
        per["admitted"],
        per["first_token"],
        per["finish"],
        per["arrival"],
        req_iters,
        max(r.kv_peak for _, r in runs),
        runs[0][1].kv_capacity,
        meta,
        stages=offset,
        energy=energy,
        tbt=tbt,
        tbt_count=sum(r.tbt_count for _, r in runs),
        stage_max=per["stage_max"],
        max_gap=max_gap,
        stall_gaps=np.concatenate([r.stall_gaps for _, r in runs]),
        stall_counts=np.concatenate([r.stall_counts for _, r in runs]),
        **kept,
    )
