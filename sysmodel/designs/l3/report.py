"""The L3 section of `membound report`: the rank's measured figures, Fig. 8 throughput over the models and
traces, the batch sizes, scalability, ablation, TBT against ranksets and the runtime predictors, each with
the paper's value, the model's and their ratio."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sysmodel import ledger
from sysmodel.cost import characterization
from sysmodel.cost.energy import FLOP_PJ
from sysmodel.designs.l3 import figures, paper
from sysmodel.designs.l3.claims import AREA_GAP, GAPS
from sysmodel.designs.l3.figures import TBT_BATCHES, TBT_RANKSETS, Cells, stall_probes
from sysmodel.designs.l3.grids import BASELINES
from sysmodel.designs.l3.model import dram_efficiency, head_cycles, train_predictors
from sysmodel.report import caption, results
from sysmodel.report.plots import legend_outside, pyplot, save


def _row(rows: list[ledger.Row], quantity: str, fmt: str = ".2f") -> str:
    return results.claim_row(GAPS, quantity, ledger.find(rows, quantity), fmt)


def _ratio(a, b) -> str:
    return "OOM" if a is None or b is None else f"{a / b:.2f}"


def fig8_lines(cells: Cells, rows: list[ledger.Row]) -> list[str]:
    """Fig. 8's cells (§6.2) and its headline claims' rows (``rows``: :func:`sysmodel.designs.l3.claims.fig8_rows`)."""
    lines = [
        "Throughput (output tokens/s, all DP replicas) and L3's speedup over each baseline. A system rejects "
        "the requests whose KV cache can never fit next to its weights (as vLLM does) and serves the rest; "
        "OOM: the trace's mean request does not fit (the paper normalizes GPU-only's OOM cells to L3). L3 runs "
        "its own scheduler (prefill chunks beside the decodes, §5.2-5.3), the baselines vLLM's prefill-prioritized "
        "iterations (§6.1 gives HBM-PIM and R-PIM prefill-prioritized scheduling).",
        "",
        caption(
            "L3 Fig. 8: L3's output tokens/s and its speedup over each baseline per model and trace (L3 "
            "Table 3 TP/DP, Table 4 traces)"
        ),
        "| model | trace | L3 tok/s | "
        + " | ".join(f"vs {b}" for b in BASELINES)
        + " | batch L3 / GPU | GPU-only rejects |",
        "| --- | --- | ---: | " + " | ".join("---:" for _ in BASELINES) + " | ---: | ---: |",
    ]
    for r in cells:
        rej = r["GPU-only rejected"]
        lines.append(
            f"| {r['model']} | {r['trace']} | {r['L3']:.0f} | "
            + " | ".join(_ratio(r["L3"], r[b]) for b in BASELINES)
            + f" | {_ratio(r['L3 batch'], r['GPU-only batch'])} | {'-' if rej is None else f'{rej:.1%}'} |"
        )
    lines += [
        "",
        *results.kv_policy_band("its baselines' KV policy"),
        *results.gpu_profile_band(figures.GPU_DEFAULT, figures.GPU_PROFILES),
        "Nor does it say how L3 chunks a prompt when the decodes alone already keep the GPU longer than the PIM "
        "(§5.3's step 3 stops before adding any): by default such a stage runs prompts whole (§5.2: chunking keeps "
        "the GPU from overrunning the PIM, 'chunked only once'); L3 is rerun chunking them to the PIM time as "
        "steps 3-4 read (gpu_bound chunk), and the bands span it.",
        "",
        *results.head("Fig. 8's headline speedups (the largest over the cells), paper vs model"),
    ]
    lines += [_row(rows, c.quantity) for c in paper.HEADLINE.values()]
    return lines + [_row(rows, paper.BATCH_RATIO.quantity), *comparison_lines(rows)]


def comparison_lines(rows: list[ledger.Row]) -> list[str]:
    """The comparisons §6.2 states over Fig. 8's cells besides the headline, from their claims' rows
    (:func:`sysmodel.designs.l3.figures.comparisons`)."""
    lines = ["", *results.head("§6.2's other statements over Fig. 8's cells, paper vs model")]
    lines += [_row(rows, c.quantity) for c in (*paper.LOWEST.values(), *paper.BATCH_LOWEST.values())]
    return lines + [
        _row(rows, paper.HBM_PIM_DOLPHIN.quantity),
        _row(rows, paper.OOM_TRACES.quantity, ".0f"),
        _row(rows, paper.GPU_KV_GB.quantity, ".0f"),
        _row(rows, paper.REQUESTS_PER_A100.quantity),
    ]


def study_lines(got: dict[str, dict[str, float]], rows: list[ledger.Row]) -> list[str]:
    """Figs. 9-10 (§6.2): the scalability and ablation claims' rows, and the tFAW switch's effect (``got``)."""
    lines = [
        "GPT-175B on OpenR1. Scalability over the base (512 GB, 2 ranksets); ablation over the naive design "
        "(no sub-batch interleaving: vLLM's prefill-prioritized iterations, GPU + PIM per layer; no communication "
        "overlap), cumulative.",
        "",
        *results.head("L3 Figs. 9-10: scalability and ablation throughput ratios, paper vs model (GPT-175B, OpenR1)"),
    ]
    lines += [_row(rows, c.quantity) for c in (*paper.SCALABILITY.values(), *paper.ABLATION.values())]
    eff = dram_efficiency(tfaw=True)
    lines += [
        "",
        f"tFAW switch (notes §1.8.4): enforcing tFAW on the all-bank ACT (16 bank ACTs, 4 per tFAW) "
        f"lowers the all-bank DRAM efficiency from {dram_efficiency():.3f} to {eff:.3f} and L3's throughput "
        f"by {got['tFAW']['tFAW enforced']:.3f}x on this workload; the tables use the default (off).",
    ]
    return lines


def tbt_lines(ratios: dict[tuple[int, int], float], rows: list[ledger.Row]) -> list[str]:
    """Fig. 11 (§6.3): the TBT ratios' table and its claims' rows."""
    lines = [
        caption(
            "L3 Fig. 11: L3's TBT over GPU-only's (unbounded HBM) per rankset count and batch, GPT-89B "
            "decoding 6K-token requests"
        ),
        "| ranksets | " + " | ".join(f"batch {b}" for b in TBT_BATCHES) + " |",
        "| ---: | " + " | ".join("---:" for _ in TBT_BATCHES) + " |",
    ]
    lines += [f"| {rs} | " + " | ".join(f"{ratios[rs, b]:.2f}" for b in TBT_BATCHES) + " |" for rs in TBT_RANKSETS]
    return lines + [
        "",
        *results.gpu_profile_band(figures.GPU_DEFAULT, figures.GPU_PROFILES),
        *results.head("Fig. 11's range at 16 ranksets and its trends, paper vs model"),
        *(_row(rows, c.quantity) for c in (*paper.TBT_16_RANKSETS, paper.TBT_FEWEST, paper.TBT_SCALING)),
    ]


def power_lines(rows: list[ledger.Row]) -> list[str]:
    """Table 5's (§6.4) power of the units with FP16 arithmetic against the one energy basis
    (sysmodel/cost/energy.py) at their full rate: one FLOP per lane per tCK
    (:func:`sysmodel.designs.l3.figures.power_mw`)."""
    lines = [
        "Table 5's unit power against the energy basis every system's J/token uses: the adder unit (8 FP16 "
        "adders) and the bank PU (4 multipliers + 4 adders) at one operation per lane per tCK, each FLOP at "
        f"the basis' {FLOP_PJ:.2f} pJ. (The re-layout unit moves data and the softmax unit mixes exp, add and "
        "divide lanes of unstated count: no like-for-like FLOP rate.)",
        "",
        *results.head("L3 Table 5 power (28 nm) against the energy basis at the units' full rate"),
    ]
    return lines + [_row(rows, c.quantity) for c in paper.POWER.values()]


def area_lines(rows: list[ledger.Row]) -> list[str]:
    """Table 5's (§6.4) RU : AU : SU : bank PU against the Yosys cell counts of the four units (`make area`);
    the claimed ratios from their rows (:func:`sysmodel.designs.l3.claims.area_rows`)."""
    area = characterization.load_area("l3")
    if not area:
        return ["Table 5 area: not synthesized yet (`make area`)."]
    lines = [
        "Table 5 (28 nm, Design Compiler) against Yosys generic cells (tb/area.py; no technology mapping, so "
        "ratios between units, normalized to the bank PU, are what compares). The softmax unit is synthesized "
        "with one chunk of exp buffer (the rank PU's 256 KB score buffer is SRAM outside Table 5's SU).",
        "",
        caption("L3 Table 5: the units' areas relative to the bank PU, paper (28 nm) vs Yosys generic cells"),
        "| unit | paper um^2 | paper / bank PU | cells | flip-flops | cells / bank PU | model / paper |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for unit, um2 in paper.AREA_UM2.items():
        cells, claim = area[unit]["cells"], paper.AREA_RATIO.get(unit)
        # the reference unit (the bank PU): 1 by definition, paper and model alike
        want, got = (1.0, 1.0) if claim is None else (float(claim), ledger.find(rows, claim.quantity).model_value)
        ffs = sum(v for k, v in cells.items() if "DFF" in k)
        lines.append(f"| {unit} | {um2} | {want:.2f} | {cells['total']} | {ffs} | {got:.2f} | {got / want:.2f} |")
    return lines + ["", f"Gaps: {AREA_GAP}."]


def rank_lines() -> list[str]:
    """The rank's measured figures: one head's cycles (§4.3), the DRAM efficiency and the softmax unit's stalls."""
    slope, fixed = head_cycles()
    lines = [
        f"One head on one rank (hw/l3/rank.py, d_head 128, 8 chips x 16 banks): {slope:g} PU cycles per "
        f"token + {fixed:g} (cycle model asserted against the RTL); all-bank DRAM efficiency "
        f"{dram_efficiency():.3f} (memory engine: ACT/PRE, refresh). The context RDs start with the first "
        "S word and overlap the softmax unit's normalization pass, as the paper pipelines them (§4.3).",
        "",
    ]
    return lines + [
        f"- measured, banks={banks}: softmax-unit stall {e['su_stall_cycles']} of "
        f"{e['score_cycles']} score cycles ({e['su_stall_fraction']:.1%}) on a "
        f"{e['probe_tokens']}-token head"
        for banks, e in stall_probes()
    ]


# --- plots ---------------------------------------------------------------------------------------------


def plot_fig8(rows: list[dict], path: Path) -> Path:
    """Fig. 8 style: each system's throughput over GPU-only's per (model, trace); where GPU-only is OOM,
    over L3's (as the paper does), and an OOM system gets no bar."""
    plt = pyplot()
    names = (*BASELINES, "L3")
    fig, ax = plt.subplots(figsize=(12, 4.2))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        ys = [(r[name] or 0) / (r["GPU-only"] or r["L3"]) for r in rows]
        ax.bar(np.arange(len(rows)) + (k - (len(names) - 1) / 2) * width, ys, width, label=name)
    ax.set_xticks(np.arange(len(rows)), [f"{r['model']}\n{r['trace']}" for r in rows], fontsize=7)
    ax.set_xlabel("model and trace (L3 Table 4)")
    ax.set_ylabel("throughput / GPU-only's")
    legend_outside(ax)  # inside, it covered the first group's bars
    ax.set_title(
        "L3 Fig. 8 (model): output tokens/s over GPU-only's (over L3's where GPU-only is OOM; no bar: OOM)", fontsize=10
    )
    return save(fig, plt, path)


def plot_studies(got: dict[str, dict[str, float]], tbt: dict[tuple[int, int], float], path: Path) -> Path:
    """Fig. 9-11 style: the scalability and ablation ratios beside the paper's, and TBT against ranksets
    with the paper's 16-rankset range."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for ax, (study, want, ylabel) in zip(
        axes,
        (
            ("scalability", paper.SCALABILITY, "throughput over the base (512 GB, 2 ranksets)"),
            ("ablation", paper.ABLATION, "throughput over the naive design"),
        ),
        strict=False,
    ):
        x = np.arange(len(want))
        ax.bar(x - 0.2, list(want.values()), 0.4, label="paper")
        ax.bar(x + 0.2, [got[study][k] for k in want], 0.4, label="model")
        ax.set_xticks(x, [k.replace(" (", "\n(") for k in want], fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("configuration" if study == "scalability" else "design step (cumulative)")
        ax.set_title(f"Fig. {9 if study == 'scalability' else 10}: {study}, GPT-175B on OpenR1", fontsize=10)
        ax.legend(fontsize=8)
    ax = axes[2]
    for b in TBT_BATCHES:
        ax.plot(TBT_RANKSETS, [tbt[rs, b] for rs in TBT_RANKSETS], marker="o", label=f"batch {b}")
    ax.fill_between([14, 18], *paper.TBT_16_RANKSETS, color="grey", alpha=0.3, label="paper at 16 ranksets")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranksets")
    ax.set_ylabel("TBT over GPU-only's")
    ax.set_title("Fig. 11: TBT, GPT-89B, 6K-token decodes", fontsize=10)
    ax.legend(fontsize=8)
    fig.suptitle("L3 Figs. 9-11 (model beside paper)")
    fig.tight_layout()
    return save(fig, plt, path)


def report_lines(ctx, rows: list[ledger.Row]) -> list[str]:
    """The L3 section, its tables' claim rows from ``rows`` (:func:`sysmodel.designs.l3.claims.claims`, computed "
    "once)."""
    out, requests = ctx.out, ctx.requests
    cells, _ = figures.fig8_cells(ctx)
    (got, _), tbt = figures.study_ratios(ctx), figures.tbt_ratios()
    p8, ps = plot_fig8(cells, out / "l3_fig8.png"), plot_studies(got, tbt, out / "l3_studies.png")
    lines = ["### The rank", "", *rank_lines(), "", f"### Throughput (Fig. 8), {requests} requests per run", ""]
    lines += [*fig8_lines(cells, rows), "", f"![L3 Fig. 8]({p8.name})"]
    lines += ["", "### Scalability and ablation (Figs. 9-10)", "", *study_lines(got, rows)]
    lines += ["", "### TBT against ranksets (Fig. 11)", "", *tbt_lines(tbt, rows), "", f"![L3 Figs. 9-11]({ps.name})"]
    re = train_predictors()
    lines += [
        "",
        "### Runtime predictors (§5.3), relative error on held-out profiles",
        "",
        *(f"- {k}: RE {v:.3f}" for k, v in re.items()),
        "",
        "### Area (Table 5)",
        "",
        *area_lines(rows),
        "",
        "### Power (Table 5) against the energy basis",
        "",
        *power_lines(rows),
    ]
    return lines
