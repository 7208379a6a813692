"""Hermes' results as data, computed once per report: the grids read from the cache, the generated
activations' statistics, the predictor's accuracy, and each paper-vs-model table's model values. A table is
``{row name: (the paper's claim, the model's value)}`` in the report's order; ``sysmodel.designs.hermes.claims`` turns
the tables into ledger rows and ``sysmodel.designs.hermes.report`` renders them. Nothing here renders."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from sysmodel.cost.models import load_model
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.hermes import grids as gr
from sysmodel.designs.hermes import model as hm
from sysmodel.designs.hermes import paper
from sysmodel.designs.hermes import scheduler as sch
from sysmodel.ledger import Claim

if TYPE_CHECKING:
    from sysmodel.report import Context

Table = dict[str, tuple[Claim, float]]
LARGE, SMALL = ("falcon-40b", "llama2-70b"), ("opt-13b", "llama2-13b")  # §V-B1's large models; the 13B ones


@dataclass(frozen=True)
class Grids:
    """The section's simulation grids (``sysmodel.designs.hermes.grids``), as the report cache holds them."""

    runs: list[dict]  # tokens/s per model and batch, Hermes and its baselines (§V-B, §V-D, §V-F)
    ablation: dict[str, float]  # MLP-block seconds per policy (§V-C)
    dse: list[list[float]]  # tokens/s per multiplier count, batches 1 and 16 (§V-E3)
    gpus: dict[str, dict[str, float]]  # tokens/s per GPU and model (§V-E2)
    runs_alt: dict[str, list[dict]]  # {profile: the runs grid with every GPU at that profile} for GPU_PROFILES
    dse_alt: dict[str, list[list[float]]]  # {profile: the multiplier sweep with the GPU at that profile}


# The GPU efficiency profile (sysmodel.cost.stage.PROFILES), which the paper does not state: it measures its kernels on
# a real RTX 4090 (Nsight Compute, §V-A), a part no profile of the kit is fitted to, and its analytic model (Eqs.
# 3-5) prices a GPU layer by the bytes of its active neurons. So the default stays the roofline at AttAcc's
# fractions; the band spans calibrated (the A100 laws, which reach the 4090 through the A100's fractions, and
# TensorRT-LLM's A100s directly) and peak (no derating).
GPU_DEFAULT = (
    "attacc, a roofline at AttAcc's fractions (0.8 of peak FLOP/s, 0.85 of peak bandwidth), since the paper "
    "prices a GPU layer by its active neurons' bytes (Eqs. 3-5) and measures an RTX 4090 no profile is fitted to"
)
GPU_PROFILES = ("calibrated", "peak")


@cache
def grids(ctx: Context) -> Grids:
    """Every grid of the section, read once per report (``ctx``: a ``sysmodel.report.Context``)."""
    return Grids(
        ctx.grid("hermes-runs", gr.runs, paper.MODELS, paper.BATCHES),
        ctx.grid("hermes-ablation", gr.ablation),
        ctx.grid("hermes-dse", gr.dse, paper.DSE_MULTIPLIERS),
        ctx.grid("hermes-gpus", gr.gpus),
        {p: ctx.grid(f"hermes-runs-{p}", gr.runs, paper.MODELS, paper.BATCHES, p) for p in GPU_PROFILES},
        {p: ctx.grid(f"hermes-dse-{p}", gr.dse, paper.DSE_MULTIPLIERS, p) for p in GPU_PROFILES},
    )


def min_dimms(model: str, counts: tuple[int, ...] = paper.DIMM_COUNTS) -> int:
    """The fewest NDP-DIMMs of ``counts`` that hold ``model``'s weights (the model's own check, require_dimms)."""
    cfg, hw = load_model(model), hm.Hardware()
    for k in counts:
        try:
            hm.require_dimms(cfg, replace(hw, dimms=k))
        except Infeasible:
            continue
        return k
    raise ValueError(f"counts: {model} fits none of {counts} NDP-DIMMs")


def capacity() -> Table:
    """What fits where: the shares of OPT-13B and OPT-66B the GPU's weight budget holds (§V-B1, the facts the
    budget is derived from: inputs) and the fewest DIMMs Falcon-40B needs (§V-E1)."""
    shares = {
        c.quantity: (c, paper.GPU_WEIGHT_BYTES / load_model(m).weight_bytes()) for m, c in paper.GPU_PARAM_SHARE.items()
    }
    return {**shares, "NDP-DIMMs Falcon-40B needs at least": (paper.MIN_DIMMS, min_dimms("falcon-40b"))}


@cache
def workload() -> Table:
    """The generated activations' statistics (LLaMA2-70B MLP block, one sequence) against §I-§III-B's."""
    tr, w = gr.trace("llama2-70b", 1), paper.WORKLOAD
    a = tr.acts[(1, "mlp")][0]
    f = np.sort(a.mean(axis=0))[::-1]

    def sim(k: int) -> float:
        return float(((a[k:] & a[:-k]).sum(1) / np.maximum(a[k:].sum(1), 1)).mean())

    top = set(np.argsort(-tr.freq[(1, "mlp")])[: len(f) // 5])
    seq = set(np.argsort(-a.mean(axis=0))[: len(f) // 5])
    return {
        "sparsity": (w["sparsity"], 1 - float(a.mean())),
        "work of the top 20% of neurons": (w["hot_work"], float(f[: len(f) // 5].sum() / f.sum())),
        "adjacent-token similarity": (w["adjacent"], sim(1)),
        "similarity at distance 10 (~70%)": (w["distance10"], sim(10)),
        "similarity at distance 25 (flat beyond)": (w["distance25"], sim(25)),
        "similarity at distance 50 over distance 25": (w["flat"], sim(50) / sim(25)),
        "profiled hot neurons leaving the sequence's hot set": (w["dynamic_hot"], 1 - len(top & seq) / len(top)),
    }


@cache
def predictor() -> dict[str, sch.Accuracy]:
    """Each prediction rule's accuracy on LLaMA2-70B's MLP layer 1 at batch 1 (§IV-C1)."""
    tr = gr.trace("llama2-70b", 1)
    return {
        r: sch.predictor_accuracy(tr.acts[(0, "mlp")], tr.acts[(1, "mlp")], tr.parents[(1, "mlp")], tr.prefill, r)
        for r in sch.RULES
    }


def predictor_claims() -> Table:
    """§IV-C1's 98% accuracy against the rule the timing uses (``state-or-correlation`` [S])."""
    return {"predictor accuracy": (paper.PREDICTOR_ACCURACY, predictor()["state-or-correlation"].accuracy)}


def mean_over(
    rows: list[dict],
    other: str,
    models: tuple[str, ...] = paper.MODELS,
    of: str = "Hermes",
    batches: tuple[int, ...] | None = None,
) -> float:
    """Mean over the rows (models, batches) of ``of``'s tokens/s over ``other``'s."""
    return float(
        np.mean(
            [
                r[of] / r[other]
                for r in rows
                if r["model"] in models and other in r and of in r and (batches is None or r["batch"] in batches)
            ]
        )
    )


def implied_bw(rows: list[dict], name: str, ratio: float) -> float:
    """The PCIe bandwidth at which the model's baseline would give the paper's average speedup: its
    transfer time scaled by (model ratio / paper ratio), everything else kept."""
    return hm.Hardware().pcie.bw * mean_over(rows, name, paper.OPT_MODELS) / ratio


def headline(rows: list[dict]) -> Table:
    """Hermes' headline tokens/s and its average speedups over the baselines (Abstract, §V-B1, §V-B2)."""
    b1 = {r["model"]: r for r in rows if r["batch"] == 1}
    opt, one = paper.OPT_MODELS, (1,)
    host_b1 = [b1[m]["Hermes"] / b1[m]["Hermes-host"] for m in b1]
    return {
        "LLaMA2-70B tokens/s, batch 1": (paper.TOKENS_S["llama2-70b"], b1["llama2-70b"]["Hermes"]),
        "OPT-66B tokens/s, batch 1": (paper.TOKENS_S["opt-66b"], b1["opt-66b"]["Hermes"]),
        "over Accelerate, OPT, batch 1": (paper.OVER_ACCELERATE_B1, mean_over(rows, "Accelerate", opt, batches=one)),
        "over FlexGen, OPT, batch 1": (paper.OVER_FLEXGEN_B1, mean_over(rows, "FlexGen", opt, batches=one)),
        "Deja Vu over FlexGen, OPT, batch 1": (
            paper.DEJAVU_OVER_FLEXGEN_B1,
            mean_over(rows, "FlexGen", opt, "Deja Vu", one),
        ),
        "Hermes-host over Accelerate, batch 1": (
            paper.HOST_OVER_ACCELERATE,
            mean_over(rows, "Accelerate", of="Hermes-host", batches=one),
        ),
        "Hermes-host over FlexGen, OPT, batch 1": (
            paper.HOST_OVER_FLEXGEN,
            mean_over(rows, "FlexGen", opt, "Hermes-host", one),
        ),
        "Hermes-base over Accelerate, batch 1": (
            paper.BASE_OVER_ACCELERATE,
            mean_over(rows, "Accelerate", of="Hermes-base", batches=one),
        ),
        "over Hermes-base, mean": (paper.OVER_BASE, mean_over(rows, "Hermes-base", batches=one)),
        "over Hermes-host, batch 1, lowest model": (paper.OVER_HOST_B1[0], min(host_b1)),
        "over Hermes-host, batch 1, highest model": (paper.OVER_HOST_B1[1], max(host_b1)),
        "over Deja Vu, batch 1-16": (paper.OVER_DEJAVU, mean_over(rows, "Deja Vu", opt)),
        "over FlexGen, batch 1-16": (paper.OVER_FLEXGEN, mean_over(rows, "FlexGen", opt)),
        "over Hermes-host, batch 1-16": (paper.OVER_HOST, mean_over(rows, "Hermes-host")),
    }


def by_cell(rows: list[dict]) -> dict[tuple[str, int], dict]:
    """The runs grid's rows keyed by (model, batch)."""
    return {(r["model"], r["batch"]): r for r in rows}


def trends(rows: list[dict]) -> Table:
    """§V-B2's batch trends (Fig. 11), directions stated without numbers: Hermes' tokens/s rising with every
    batch, its gap over Hermes-host growing, its gap over Hermes-base smallest at batch 2. Each is the lowest
    ratio of its kind over the grid, above 1 when the paper's statement holds everywhere."""
    by = by_cell(rows)
    models = list(dict.fromkeys(r["model"] for r in rows))
    batches = sorted({r["batch"] for r in rows})

    def lowest_step(f: Callable[[dict], float]) -> float:  # f at each batch over f at the batch before
        return min(f(by[m, b]) / f(by[m, a]) for m in models for a, b in pairwise(batches))

    base = {b: float(np.mean([by[m, b]["Hermes"] / by[m, b]["Hermes-base"] for m in models])) for b in batches}
    return {
        "tokens/s rises with every batch": (paper.BATCH_RISES, lowest_step(lambda r: r["Hermes"])),
        "gap over Hermes-host grows with the batch": (
            paper.HOST_GAP_GROWS,
            lowest_step(lambda r: r["Hermes"] / r["Hermes-host"]),
        ),
        "gap over Hermes-base least at batch 2": (
            paper.BASE_GAP_LEAST_AT_2,
            min(base[b] for b in batches if b != 2) / base[2],
        ),
    }


def cells(rows: list[dict]) -> Table:
    """§V-B1's and §V-D's statements over single cells of Figs. 9-12: directions stated in words (each A over B,
    the least favourable cell of the set the sentence names) and Fig. 12's shares of the run at batch 1."""
    by = by_cell(rows)
    offload = ("Accelerate", "FlexGen", "Deja Vu")

    def over(m: str, other: str, b: int = 1) -> float:
        return by[m, b]["Hermes"] / by[m, b][other]

    base_large = min(over(m, "Hermes-base") for m in LARGE)
    base_small = max(over(m, "Hermes-base") for m in SMALL)
    decode = by["llama2-70b", 1]["decode share"]
    return {
        "OPT-66B's gain over OPT-13B's, lowest baseline": (
            paper.OPT66_GAINS_MORE,
            min(over("opt-66b", x) / over("opt-13b", x) for x in offload),
        ),
        "over the fastest baseline, OPT-66B, batch 1": (
            paper.OPT66_OVER_BEST,
            by["opt-66b", 1]["Hermes"] / max(by["opt-66b", 1][x] for x in offload),
        ),
        "Hermes-base gap, large models over 13B models": (paper.BASE_GAIN_LARGE, base_large / base_small),
        "over Hermes-base, lowest cell off batch 2": (
            paper.BASE_BEATEN,
            min(r["Hermes"] / r["Hermes-base"] for r in rows if r["batch"] != 2),
        ),
        "over Deja Vu, lowest cell": (
            paper.DEJAVU_BEATEN,
            min(r["Hermes"] / r["Deja Vu"] for r in rows if "Deja Vu" in r),
        ),
        "token generation's share of the run, LLaMA2-70B batch 1": (paper.DECODE_SHARE, decode),
        "prompting's share of the run, LLaMA2-70B batch 1": (paper.PROMPT_SHARE, 1 - decode),
    }


def ablation(mlp: dict[str, float]) -> Table:
    """§V-C (Fig. 13): each mapping policy's MLP-block speedup over the one before."""
    names = {
        "partition": "partition over random",
        "adjustment": "adjustment over partition",
        "hermes": "window remap over adjustment",
    }
    return {names[cur]: (paper.ABLATION[cur], mlp[prev] / mlp[cur]) for prev, cur in pairwise(hm.POLICIES)}


def dse(tokens: list[list[float]], mults: tuple[int, ...] = paper.DSE_MULTIPLIERS) -> Table:
    """§V-E3 (Fig. 16): the multiplier sweep's claims from tokens/s at batches 1 and 16 per multiplier count."""
    curves = dict(zip((1, 16), tokens, strict=True))
    c1, c16 = curves[1], curves[16]
    sat = next(k for k, v in zip(mults, c1, strict=True) if v >= 0.98 * c1[-1])
    return {
        "multipliers 32 -> 512, batch 16": (paper.DSE_SPEEDUP, max(c16) / c16[0]),
        "more multipliers help batch 16 more than batch 1": (
            paper.DSE_LARGER_BATCH,
            c16[-1] / c16[0] / (c1[-1] / c1[0]),
        ),
        "batch 16 rises with every multiplier step": (paper.DSE_B16_RISES, min(b / a for a, b in pairwise(c16))),
        "batch 1 saturates at (multipliers, within 2%)": (paper.DSE_SATURATES, sat),
    }


def gpus(tokens: dict[str, dict[str, float]]) -> Table:
    """§V-E2 (Fig. 15): the RTX 4090's throughput over the T4's and the 3090's, each the mean over the models of
    the per-model ratio (``tokens``: tokens/s per GPU and model). The paper's "average throughput improvement"
    is read as its other "average speedup" claims are (:func:`mean_over`): a mean of ratios, so each model
    weighs the same however fast it runs; a ratio of mean tokens/s would weigh the faster model more."""
    base = tokens["rtx4090-hermes"]

    def over(d: str) -> float:
        return float(np.mean([base[m] / tokens[d][m] for m in base]))

    return {
        "RTX 4090 over Tesla T4": (paper.GPU_SENSITIVITY["t4"], over("t4-hermes")),
        "RTX 4090 over RTX 3090": (paper.GPU_SENSITIVITY["rtx3090"], over("rtx3090-hermes")),
    }


def trt(rows: list[dict]) -> Table:
    """§V-F (Fig. 17): Hermes' tokens/s as a share of TensorRT-LLM's on 5 x A100-40GB, LLaMA2-70B."""
    got = {r["batch"]: r["Hermes"] / r["TensorRT-LLM"] for r in rows if r["model"] == "llama2-70b"}
    return {f"TensorRT-LLM share, batch {b}": (want, got[b]) for b, want in paper.TRT_SHARE.items()}


@dataclass(frozen=True)
class Tables:
    """Every paper-vs-model table of the section, in the report's (and the ledger's) order."""

    capacity: Table
    workload: Table
    predictor: Table
    headline: Table
    trends: Table
    cells: Table
    ablation: Table
    dse: Table
    gpus: Table
    trt: Table


def runs_tables(rows: list[dict]) -> dict[str, Table]:
    """The tables a runs grid gives, by their :class:`Tables` field."""
    return {"headline": headline(rows), "trends": trends(rows), "cells": cells(rows), "trt": trt(rows)}


@cache
def tables(ctx: Context) -> Tables:
    """The section's tables from its grids, computed once per report."""
    g = grids(ctx)
    r = runs_tables(g.runs)
    return Tables(
        capacity(),
        workload(),
        predictor_claims(),
        r["headline"],
        r["trends"],
        r["cells"],
        ablation(g.ablation),
        dse(g.dse),
        gpus(g.gpus),
        r["trt"],
    )


@cache
def alternatives(ctx: Context) -> tuple[dict[str, Table], ...]:
    """The tables of the grids the GPU moves (runs: :func:`runs_tables`; the multiplier sweep) under each of
    :data:`GPU_PROFILES`, by :class:`Tables` field: the claims' bands. (The ablation's and the GPU study's claims
    move by under 5% between the profiles.)"""
    g = grids(ctx)
    return tuple({**runs_tables(g.runs_alt[p]), "dse": dse(g.dse_alt[p])} for p in GPU_PROFILES)
