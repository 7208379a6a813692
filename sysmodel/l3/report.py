"""The L3 section of `membound report`: the rank's measured figures, Fig. 8 throughput over the models and
traces, the batch sizes, scalability, ablation, TBT against ranksets and the runtime predictors, each with
the paper's value, the model's and their ratio."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sysmodel import characterization
from sysmodel.baselines import GpuOnly, HbmPim
from sysmodel.cost import Infeasible
from sysmodel.l3 import paper
from sysmodel.l3.model import HostConfig, L3System, dram_efficiency, head_cycles, train_predictors
from sysmodel.models import StageShape
from sysmodel.serving import Result, make_trace, simulate

BASELINES = ("GPU-only", "HBM-PIM", "R-PIM", "CPU offload")


def systems(model: str, host: HostConfig | None = None) -> dict:
    """L3 and its baselines for one DP replica of ``model`` (Table 3's TP and DP)."""
    tp, dp = paper.MODELS[model]
    host = host or HostConfig()
    return {"L3": lambda: L3System(model, tp, dp, host),
            "GPU-only": lambda: GpuOnly(model, paper.GPU, tp),
            "HBM-PIM": lambda: HbmPim(model, paper.GPU, tp),
            "R-PIM": lambda: L3System(model, tp, dp, host, attention="r-pim", scheduler=False),
            "CPU offload": lambda: L3System(model, tp, dp, host, attention="cpu")}


def serve(make, model: str, trace: str, requests: int, seed: int = 1) -> Result | None:
    """One DP replica serving its share of ``requests``; None when the system cannot hold a request."""
    dp = paper.MODELS[model][1]
    try:
        return simulate(make_trace(trace, max(1, requests // dp), seed), make())
    except Infeasible:
        return None


def fig8(requests: int) -> list[dict]:
    rows = []
    for model, (_tp, dp) in paper.MODELS.items():
        makers = systems(model)
        for trace in paper.TRACES:
            res = {name: serve(make, model, trace, requests) for name, make in makers.items()}
            row = {"model": model, "trace": trace}
            for name, r in res.items():
                row[name] = None if r is None else r.throughput * dp
                row[f"{name} batch"] = None if r is None else float(np.average(r.iter_decode, weights=r.iter_time))
            rows.append(row)
    return rows


def _ratio(a, b) -> str:
    return "OOM" if a is None or b is None else f"{a / b:.2f}"


def fig8_lines(rows: list[dict]) -> list[str]:
    lines = ["Throughput (output tokens/s, all DP replicas) and L3's speedup over each baseline; OOM: a request's "
             "KV cache does not fit next to the weights (the paper normalizes those cells to 1).", "",
             "| model | trace | L3 tok/s | " + " | ".join(f"vs {b}" for b in BASELINES) + " | batch L3 / GPU |",
             "| --- | --- | ---: | " + " | ".join("---:" for _ in BASELINES) + " | ---: |"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['trace']} | {r['L3']:.0f} | "
                     + " | ".join(_ratio(r["L3"], r[b]) for b in BASELINES)
                     + f" | {_ratio(r['L3 batch'], r['GPU-only batch'])} |")
    lines += ["", "| headline (max over cells) | paper | model | model / paper |", "| --- | ---: | ---: | ---: |"]
    for b, want in paper.HEADLINE.items():
        got = max((r["L3"] / r[b] for r in rows if r[b]), default=float("nan"))
        lines.append(f"| speedup over {b} | {want:.1f} | {got:.2f} | {got / want:.2f} |")
    got = max((r["L3 batch"] / r["GPU-only batch"] for r in rows if r["GPU-only batch"]), default=float("nan"))
    lines.append(f"| batch size over GPU-only | {paper.BATCH_RATIO:.1f} | {got:.2f} | {got / paper.BATCH_RATIO:.2f} |")
    return lines


def _l3_throughput(requests: int, host: HostConfig, **kw) -> float:
    model = "gpt3-175b"
    tp, dp = paper.MODELS[model]
    r = serve(lambda: L3System(model, tp, dp, host, **kw), model, "openr1", requests)
    return float("nan") if r is None else r.throughput * dp


def study_lines(requests: int) -> list[str]:
    lines = ["GPT-175B on OpenR1. Scalability over the base (512 GB, 2 ranksets); ablation over the naive design "
             "(no sub-batch interleaving, no communication overlap), cumulative.", "",
             "| study | point | paper | model | model / paper |", "| --- | --- | ---: | ---: | ---: |"]
    base = _l3_throughput(requests, HostConfig(paper.SCALE_BASE["ranksets"], paper.SCALE_BASE["capacity"]))
    for name, (cap, rs) in paper.SCALE_POINTS.items():
        got = _l3_throughput(requests, HostConfig(rs, cap)) / base
        want = paper.SCALABILITY[name]
        lines.append(f"| scalability | {name} | {want:.1f} | {got:.2f} | {got / want:.2f} |")
    naive = _l3_throughput(requests, HostConfig(), scheduler=False, overlap=False)
    for name, kw in (("+ scheduler", {"overlap": False}), ("+ overlap", {})):
        got = _l3_throughput(requests, HostConfig(), **kw) / naive
        want = paper.ABLATION[name]
        lines.append(f"| ablation | {name} | {want:.2f} | {got:.2f} | {got / want:.2f} |")
    return lines


def tbt_lines() -> list[str]:
    """Decode step time (TBT) of GPT-89B with 6K-token requests against ranksets, over GPU-only's with
    unbounded HBM at the same batch."""
    model, ctx = "gpt-89b", paper.TBT_CONTEXT
    tp, dp = paper.MODELS[model]
    gpu = GpuOnly(model, paper.GPU, tp)
    lines = ["| ranksets | " + " | ".join(f"batch {b}" for b in (16, 32, 64)) + " |", "| ---: | ---: | ---: | ---: |"]
    ratios = {}
    for rs in (2, 4, 8, 16):
        sys = L3System(model, tp, dp, HostConfig(rs))
        cells = []
        for b in (16, 32, 64):
            shape = StageShape.decode(b, ctx)
            ratios[rs, b] = float(sys.stage_times(shape)) / float(gpu.stage_times(shape))
            cells.append(f"{ratios[rs, b]:.2f}")
        lines.append(f"| {rs} | " + " | ".join(cells) + " |")
    lo, hi = min(v for (rs, _), v in ratios.items() if rs == 16), max(v for (rs, _), v in ratios.items() if rs == 16)
    want = paper.TBT_16_RANKSETS
    lines += ["", f"TBT at 16 ranksets over GPU-only: paper {want[0]:.2f}-{want[1]:.2f}, model {lo:.2f}-{hi:.2f} "
              f"(ratio of range midpoints {(lo + hi) / (want[0] + want[1]):.2f})."]
    return lines


def rank_lines() -> list[str]:
    slope, fixed = head_cycles()
    lines = [f"One head on one rank (hw/l3/rank.py, d_head 128, 8 chips x 16 banks): {slope:g} PU cycles per "
             f"token + {fixed:g} (cycle model asserted against the RTL); all-bank DRAM efficiency "
             f"{dram_efficiency():.3f} (memory engine: ACT/PRE, refresh). The RTL starts the context RDs after "
             "the softmax unit's normalization pass (1 cycle per token of the 5); the paper overlaps them.", ""]
    recs = [m for m in characterization.load() if m.unit == "l3_rank"]
    for m in recs:
        e = m.extra
        if "su_stall_fraction" in e:
            lines.append(f"- measured, banks={m.params['banks']}: softmax-unit stall {e['su_stall_cycles']} of "
                         f"{e['score_cycles']} score cycles ({e['su_stall_fraction']:.1%}) on a "
                         f"{e['probe_tokens']}-token head")
    return lines


def report_lines(out: Path, requests: int = paper.REQUESTS) -> list[str]:
    lines = ["### The rank", "", *rank_lines(), "", f"### Throughput (Fig. 8), {requests} requests per run", ""]
    lines += fig8_lines(fig8(requests))
    lines += ["", "### Scalability and ablation (Figs. 11-12)", "", *study_lines(requests)]
    lines += ["", "### TBT against ranksets (Fig. 13)", "", *tbt_lines()]
    re = train_predictors()
    lines += ["", "### Runtime predictors (§5.3), relative error on held-out profiles", "",
              *(f"- {k}: RE {v:.3f}" for k, v in re.items()),
              "", "Table 5 area ratios against Yosys cell counts: not yet computed (`make area` covers DECA only)."]
    return lines
