"""L3's serving grids (the report's slow part, cached by ``sysmodel.report.Context.grid``): Fig. 8 over the
models and traces, and the scalability, ablation and tFAW studies."""

from __future__ import annotations

import numpy as np

from sysmodel.cost.stage import Infeasible
from sysmodel.designs.baselines import GpuOnly, HbmPim, device_profile
from sysmodel.designs.l3 import paper
from sysmodel.designs.l3.model import GPU_BOUND, HostConfig, L3System
from sysmodel.engines.serving import Result, make_trace, simulate

BASELINES = ("GPU-only", "HBM-PIM", "R-PIM", "CPU offload")
# L3's own iteration policy (§5.2-5.3: "adaptive chunk-partitioned batch interleaving", prefill chunks beside the
# decodes, sized by L3System.prefill_budget) on each KV policy the baselines run; the baselines keep the policy
# itself, prefill-prioritised under vLLM's, as §6.1 gives HBM-PIM and R-PIM ("prefilling-prioritized scheduling")
L3_POLICY = {"vllm": "interleave", "reserve": "reserve"}  # reserve already chunks by the system's own budget


def systems(
    model: str, host: HostConfig | None = None, efficiency: str = "attacc", gpu_bound: str = GPU_BOUND[0]
) -> dict:
    """L3 and its baselines for one DP replica of ``model`` (Table 3's TP and DP), every GPU at the
    ``efficiency`` profile (sysmodel.cost.stage.PROFILES: all five systems share the DGX's GPUs); L3's prefill in
    a GPU-bound stage as ``gpu_bound`` (sysmodel.designs.l3.model.GPU_BOUND)."""
    tp, dp = paper.MODELS[model]
    host, eff = host or HostConfig(), device_profile(efficiency, paper.GPU)
    return {
        "L3": lambda: L3System(model, tp, dp, host, eff=eff, gpu_bound=gpu_bound),
        "GPU-only": lambda: GpuOnly(model, paper.GPU, tp, eff=eff),
        "HBM-PIM": lambda: HbmPim(model, paper.GPU, tp, eff=eff),
        "R-PIM": lambda: L3System(model, tp, dp, host, attention="r-pim", scheduler=False, eff=eff),
        "CPU offload": lambda: L3System(model, tp, dp, host, attention="cpu", eff=eff),
    }


def serve(make, model: str, trace: str, requests: int, seed: int = 1, scheduler: str = "vllm") -> Result | None:
    """One DP replica serving its share of ``requests``. A request whose KV cache can never fit is rejected
    (as vLLM does; counted in ``meta["rejected"]``) and the rest served; the system is OOM (None) when the
    trace's mean request does not fit [S: the paper reports OOM per trace without its criterion]."""
    tr = make_trace(trace, max(1, requests // paper.MODELS[model][1]), seed)
    try:
        sys = make()
        if (tr.prompt + tr.output).mean() * sys.kv_bytes_per_token > sys.kv_capacity():
            return None
        return simulate(tr, sys, oversize="reject", scheduler=scheduler)
    except Infeasible:
        return None


def fig8(
    requests: int,
    scheduler: str = "vllm",
    efficiency: str = "attacc",
    gpu_bound: str = GPU_BOUND[0],
    only: tuple[str, ...] = (),
) -> list[dict]:
    """Fig. 8's cells under one KV policy: ``vllm`` (paged, the default: the frameworks the paper names in §2,
    vLLM among them, page the KV cache) or ``reserve`` (each request's whole KV reserved at admission), the
    alternative the paper's unstated baseline setup leaves open, L3 interleaving on it (``L3_POLICY``); one GPU
    ``efficiency`` profile (:data:`sysmodel.designs.l3.figures.GPU_PROFILES`); and L3's ``gpu_bound`` prefill.
    ``only``: the systems to run (all when empty)."""
    rows = []
    for model, (_tp, dp) in paper.MODELS.items():
        makers = systems(model, efficiency=efficiency, gpu_bound=gpu_bound)
        makers = {name: make for name, make in makers.items() if not only or name in only}
        for trace in paper.TRACES:
            res = {
                name: serve(make, model, trace, requests, scheduler=L3_POLICY[scheduler] if name == "L3" else scheduler)
                for name, make in makers.items()
            }
            row: dict[str, object] = {"model": model, "trace": trace}
            for name, r in res.items():
                row[name] = None if r is None else r.throughput * dp
                row[f"{name} batch"] = None if r is None else float(np.average(r.iter_decode, weights=r.iter_time))
                rej = None if r is None else r.meta["rejected"] / (len(r.trace) + r.meta["rejected"])
                row[f"{name} rejected"] = rej
            rows.append(row)
    return rows


def _l3_throughput(requests: int, host: HostConfig, efficiency: str, **kw) -> float:
    """GPT-175B on OpenR1 with every GPU at ``efficiency``; with L3's scheduler (``kw``'s, default on) its
    interleaving, else vLLM's policy."""
    model = "gpt3-175b"
    tp, dp = paper.MODELS[model]
    eff = device_profile(efficiency, paper.GPU)
    policy = L3_POLICY["vllm"] if kw.get("scheduler", True) else "vllm"
    r = serve(lambda: L3System(model, tp, dp, host, eff=eff, **kw), model, "openr1", requests, scheduler=policy)
    return float("nan") if r is None else r.throughput * dp


def studies(requests: int, rows: list[dict], efficiency: str = "attacc") -> dict[str, dict[str, float]]:
    """GPT-175B on OpenR1: scalability over the base (512 GB, 2 ranksets), the ablation over the naive
    design (cumulative), and tFAW enforced over the default — each a throughput ratio, the GPUs at the
    ``efficiency`` profile. The full design's throughput is Fig. 8's cell (``rows`` from :func:`fig8` at the
    same ``requests`` and profile)."""
    full = next(r["L3"] for r in rows if (r["model"], r["trace"]) == ("gpt3-175b", "openr1"))

    def run(host: HostConfig, **kw) -> float:
        return _l3_throughput(requests, host, efficiency, **kw)

    base = run(HostConfig(int(paper.SCALE_BASE["ranksets"]), paper.SCALE_BASE["capacity"]))
    naive = run(HostConfig(), scheduler=False, overlap=False)
    return {
        "scalability": {name: run(HostConfig(rs, cap)) / base for name, (cap, rs) in paper.SCALE_POINTS.items()},
        "ablation": {"+ scheduler": run(HostConfig(), overlap=False) / naive, "+ overlap": full / naive},
        "tFAW": {"tFAW enforced": run(HostConfig(), tfaw=True) / full},
    }
