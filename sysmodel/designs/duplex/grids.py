"""Duplex's serving grids (the report's slow part, cached by ``sysmodel.report.Context.grid``): Figs. 11-14."""

from __future__ import annotations

import numpy as np

from golden.duplex_spec import SOFTMAX_LANES
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.duplex import paper
from sysmodel.designs.duplex.model import DuplexSystem
from sysmodel.engines.memory import DEFAULT_REFRESH
from sysmodel.engines.serving import Result, make_trace, simulate

SYSTEMS = ("GPU", "2xGPU", "Duplex", "Duplex+PE", "Duplex+PE+ET")


def makers(model: str, refresh: str = DEFAULT_REFRESH) -> dict:
    """Each system of the figures on ``model``, its PIM's banks refreshed under ``refresh``."""
    nodes, devs = paper.SYSTEMS[model]
    two = (nodes * 2, devs) if devs == 8 else (nodes, devs * 2)
    return {
        "GPU": lambda: DuplexSystem(model, "gpu"),
        "2xGPU": lambda: DuplexSystem(model, "gpu", nodes=two[0], devices=two[1]),
        "Duplex": lambda: DuplexSystem(model, "duplex", refresh=refresh),
        "Duplex+PE": lambda: DuplexSystem(model, "duplex+pe", refresh=refresh),
        "Duplex+PE+ET": lambda: DuplexSystem(model, "duplex+pe+et", refresh=refresh),
        "Bank-PIM": lambda: DuplexSystem(model, "duplex", pim="bank", refresh=refresh),
    }


def fits(r: Result | None, what: str) -> Result:
    """``r``, for a grid cell the paper runs (so it must fit): an ``Infeasible`` naming it otherwise."""
    if r is None:
        raise Infeasible(f"{what}: does not fit the system")
    return r


def serve(
    make, lengths: tuple[int, int], batch: int, requests: int, seed: int = 1, scheduler: str = "vllm"
) -> Result | None:
    """Closed loop at ``batch`` requests in the system (§VI), Gaussian lengths; None if it cannot fit."""
    n = max(1, min(requests, 2 * batch))
    tr = make_trace("gaussian", n, seed, prompt=lengths[0], output=lengths[1])
    try:
        return simulate(tr, make(), max_batch=batch, concurrency=min(batch, n), oversize="reject", scheduler=scheduler)
    except Infeasible:
        return None


def fig11(requests: int, scheduler: str = "vllm", refresh: str = DEFAULT_REFRESH) -> list[dict]:
    """Fig. 11's cells under one KV policy: ``vllm`` (paged, the default: continuous batching as §VI runs it,
    with the paged KV of the PagedAttention work the paper discusses in §VIII-C) or ``reserve`` (each request's
    whole KV reserved at admission), the alternative its unstated setup leaves open; and one refresh policy of
    Logic-PIM's banks (``memory.REFRESH``), which the paper does not state either."""
    rows = []
    for model in paper.SYSTEMS:
        mk = makers(model, refresh)
        for lengths in paper.LENGTHS:
            for batch in paper.BATCHES:
                res = {name: serve(mk[name], lengths, batch, requests, scheduler=scheduler) for name in SYSTEMS}
                rows.append(
                    {
                        "model": model,
                        "lengths": lengths,
                        "batch": batch,
                        **{k: None if r is None else r.throughput for k, r in res.items()},
                    }
                )
    return rows


def fig12(requests: int) -> list[dict]:
    mk, rows = makers("glam-143b"), []
    for lengths in paper.GLAM_LENGTHS:
        res = {name: serve(mk[name], lengths, paper.GLAM_BATCH, requests) for name in ("GPU", "2xGPU", "Duplex+PE+ET")}
        rows.append(
            {
                "lengths": lengths,
                **{
                    k: (fits(r, f"Fig. 12 {k} {lengths}").tbt_percentiles()[50], float(np.mean(fits(r, k).e2e)))
                    for k, r in res.items()
                },
            }
        )
    return rows


def fig13(requests: int) -> list[dict]:
    """Mixtral under Poisson arrivals: per system and QPS, the median and p90 TBT and the median T2FT."""
    mk, rows = makers(paper.QPS_MODEL), []
    for q in paper.QPS_VALUES:
        tr = make_trace("gaussian", requests, 1, qps=float(q), prompt=paper.QPS_LENGTHS[0], output=paper.QPS_LENGTHS[1])
        for name in ("GPU", "2xGPU", "Duplex+PE+ET"):
            res = simulate(tr, mk[name](), max_batch=paper.QPS_MAX_BATCH, oversize="reject")
            t = res.tbt_percentiles((50, 90))
            rows.append(
                {"system": name, "qps": q, "tbt50": t[50], "tbt90": t[90], "t2ft50": float(np.median(res.t2ft))}
            )
    return rows


def fig14(requests: int, lanes: int = SOFTMAX_LANES) -> list[dict]:
    """Mixtral: Duplex's throughput over Bank-PIM's per (lengths, batch), both sending scores to the same
    logic-die softmax unit of ``lanes`` lanes."""
    rows = []
    for lengths in paper.LENGTHS:
        for batch in paper.BANK_PIM_BATCHES:
            d, b = (
                serve(
                    lambda pim=pim: DuplexSystem("mixtral-8x7b", "duplex", pim=pim, softmax_lanes=lanes),
                    lengths,
                    batch,
                    requests,
                )
                for pim in ("logic", "bank")
            )
            what = f"Fig. 14 {lengths} batch {batch}"
            rows.append(
                {"lengths": lengths, "batch": batch, "ratio": fits(d, what).throughput / fits(b, what).throughput}
            )
    return rows


def fig14_models(requests: int) -> dict[str, float]:
    """§VII-C's out-of-target models: Duplex's mean throughput over Bank-PIM's on Fig. 14's grid, per model."""
    out = {}
    for model in paper.BANK_PIM_OTHER:
        ratios = []
        for lengths in paper.LENGTHS:
            for batch in paper.BANK_PIM_BATCHES:
                d, b = (
                    serve(lambda pim=pim, m=model: DuplexSystem(m, "duplex", pim=pim), lengths, batch, requests)
                    for pim in ("logic", "bank")
                )
                what = f"§VII-C {model} {lengths} batch {batch}"
                ratios.append(fits(d, what).throughput / fits(b, what).throughput)
        out[model] = float(np.mean(ratios))
    return out


SOFTMAX_SWEEP = (16, 32, 64, 128, 256)  # the paper sets no softmax width: Fig. 14's headline across widths


def fig14_lanes(requests: int) -> list[dict]:
    """Fig. 14's max and mean ratio at each softmax width of :data:`SOFTMAX_SWEEP`."""
    out = []
    for lanes in SOFTMAX_SWEEP:
        r = [row["ratio"] for row in fig14(requests, lanes)]
        out.append({"lanes": lanes, "max": max(r), "mean": float(np.mean(r))})
    return out
