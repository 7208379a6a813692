"""The Duplex section of `membound report`: Logic-PIM's derived peaks and the measured units, Fig. 11
throughput, Fig. 12 GLaM latency, Fig. 13 serving load, Fig. 14 against Bank-PIM and Fig. 15 energy, each
with the paper's value, the model's and their ratio, and a plot per figure."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from golden.duplex_spec import FULL, MODULES_PER_STACK, REDUCED, SOFTMAX_LANES, STACKS
from hw.duplex.cycles import UNITS, gemm_txn_cycles
from sysmodel import ledger
from sysmodel.cost import characterization
from sysmodel.designs.duplex import figures, paper
from sysmodel.designs.duplex.claims import GAPS
from sysmodel.designs.duplex.figures import over
from sysmodel.designs.duplex.grids import SYSTEMS
from sysmodel.designs.duplex.model import PIMS, dram_efficiency, pim_area_mm2
from sysmodel.ledger import Claim
from sysmodel.report import Context, caption, results
from sysmodel.report.plots import pyplot, save
from sysmodel.report.results import head


def _claim_lines(rs: list[ledger.Row], cs: Iterable[Claim], fmt: str = ".2f") -> list[str]:
    """Each claim's paper-vs-model table row, from the section's ledger rows."""
    return [results.claim_row(GAPS, c.quantity, ledger.find(rs, c.quantity), fmt) for c in cs]


def fig11_lines(rows: list[dict], rs: list[ledger.Row]) -> list[str]:
    lines = [
        "Output tokens/s over GPU's, closed loop at the batch (§VI), Gaussian lengths (std 0.25 x mean [S]), "
        "uniform top-2 routing; the paper's device counts (Table I).",
        "",
        caption("Duplex Fig. 11: each system's output tokens/s over the GPU system's per model, lengths and batch"),
        "| model | L_in, L_out | batch | GPU tok/s | " + " | ".join(SYSTEMS[1:]) + " |",
        "| --- | --- | ---: | ---: | " + " | ".join("---:" for _ in SYSTEMS[1:]) + " |",
    ]
    for r in rows:
        cells = " | ".join(f"{over(r[s], r['GPU']):.2f}" for s in SYSTEMS[1:])
        gpu = "OOM" if r["GPU"] is None else f"{r['GPU']:.0f}"
        lines.append(f"| {r['model']} | {r['lengths'][0]}, {r['lengths'][1]} | {r['batch']} | {gpu} | {cells} |")
    return lines + [
        "",
        *results.kv_policy_band("the KV policy its systems run"),
        f"Nor does it name Logic-PIM's refresh scheme: the band also spans {figures.REFRESH_BAND} refresh "
        f"(bank-bundle efficiency {dram_efficiency(refresh=figures.REFRESH_BAND):.3f}, against the default "
        f"on-time refresh's {dram_efficiency():.3f} and postpone's {dram_efficiency(refresh='postpone'):.3f}, "
        "which gets no band of its own).",
        "",
        *head("Fig. 11's headline throughput ratios over the figure's models (Mixtral, GLaM, Grok1), paper vs model"),
        *_claim_lines(rs, figures.FIG11_HEADLINE),
        "",
        *head("Fig. 11's other statements over the figure's cells (§VII-A), paper vs model"),
        *_claim_lines(rs, figures.FIG11_STATEMENTS),
    ]


def fig12_lines(rows: list[dict], rs: list[ledger.Row], out: Path) -> list[str]:
    lines = [
        f"GLaM, batch {paper.GLAM_BATCH}: Duplex+PE+ET's reduction of median TBT and mean E2E.",
        "",
        caption(f"Duplex Fig. 12: Duplex+PE+ET's latency reductions on GLaM at batch {paper.GLAM_BATCH}"),
        "| L_in, L_out | p50 TBT vs GPU | E2E vs GPU | E2E vs 2xGPU |",
        "| --- | ---: | ---: | ---: |",
    ]
    red = figures.fig12_reductions(rows)
    lines += [
        f"| {r['lengths'][0]}, {r['lengths'][1]} | {tbt:.1%} | {e2e:.1%} | {e2e2:.1%} |"
        for r, tbt, e2e, e2e2 in zip(rows, red["tbt"], red["e2e"], red["e2e2"], strict=True)
    ]
    means = dict(zip(("p50 TBT vs GPU", "E2E vs GPU", "E2E vs 2xGPU"), figures.FIG12[:3], strict=True))
    p12 = _bars(
        {
            "model": {k: ledger.find(rs, c.quantity).model_value for k, c in means.items()},
            "paper": means,
        },
        "reduction (share of the baseline's)",
        "Duplex Fig. 12: GLaM, Duplex+PE+ET's latency reductions, model beside paper",
        out / "duplex_fig12.png",
        "latency metric and baseline",
    )
    return lines + [
        "",
        *head("Fig. 12's latency reductions, mean over the lengths, paper vs model"),
        *_claim_lines(rs, figures.FIG12[:3], ".3f"),
        *_claim_lines(rs, figures.FIG12[3:]),
        "",
        f"![Duplex Fig. 12]({p12.name})",
    ]


def fig13_lines(rows: list[dict], rs: list[ledger.Row], plot: Path) -> list[str]:
    lines = [
        f"Mixtral, Poisson arrivals, (L_in, L_out) = {paper.QPS_LENGTHS}, max batch {paper.QPS_MAX_BATCH}. "
        f"A system handles a QPS while its median T2FT stays within {paper.T2FT_BLOWUP:g}x its value at "
        f"{paper.QPS_VALUES[0]} QPS [S].",
        "",
        caption("Duplex Fig. 13: TBT and T2FT of Mixtral under Poisson arrivals per offered load and system"),
        "| QPS | " + " | ".join(f"{s} p50 / p90 TBT ms, p50 T2FT s" for s in ("GPU", "2xGPU", "Duplex+PE+ET")) + " |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for q in paper.QPS_VALUES:
        cells = [f"{r['tbt50'] * 1e3:.1f} / {r['tbt90'] * 1e3:.1f}, {r['t2ft50']:.2f}" for r in rows if r["qps"] == q]
        lines.append(f"| {q} | " + " | ".join(cells) + " |")
    return lines + [
        "",
        f"2xGPU handles up to {figures.saturation_qps(rows, '2xGPU'):g} QPS (paper: about the same as Duplex).",
        "",
        *head("Fig. 13's saturation loads, paper vs model"),
        *_claim_lines(rs, figures.FIG13[:2], ".1f"),
        *_claim_lines(rs, figures.FIG13[2:]),
        "",
        *head("Fig. 13's stated comparisons of TBT (§VII-B), paper vs model"),
        *_claim_lines(rs, figures.FIG13_DIRECTIONS),
        "",
        f"![Duplex Fig. 13]({plot.name})",
    ]


def plot_fig13(rows: list[dict], path: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (key, label, scale) in zip(
        axes,
        (("tbt50", "median TBT (ms)", 1e3), ("tbt90", "p90 TBT (ms)", 1e3), ("t2ft50", "median T2FT (s)", 1)),
        strict=True,
    ):
        for name in ("GPU", "2xGPU", "Duplex+PE+ET"):
            pts = [r for r in rows if r["system"] == name]
            ax.plot([r["qps"] for r in pts], [r[key] * scale for r in pts], marker="o", ms=3, label=name)
        ax.set_xlabel("offered load (requests/s)")
        ax.set_ylabel(label)
        ax.set_title(label.split(" (")[0], fontsize=10)
    from matplotlib.ticker import NullFormatter

    axes[2].set_yscale("log")
    axes[2].yaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones collide on short spans
    axes[0].legend(fontsize=8)
    fig.suptitle("Duplex Fig. 13 (model): Mixtral under Poisson arrivals, (L_in, L_out) = (4096, 512), max batch 128")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return save(fig, plt, path)


def fig14_lines(rows: list[dict], sweep: list[dict], rs: list[ledger.Row], out: Path) -> list[str]:
    lines = [
        "Mixtral: Duplex (Logic-PIM, 8 Op/B) over Bank-PIM (16x HBM bandwidth, 1 Op/B, same placement), "
        f"batches {' and '.join(map(str, paper.BANK_PIM_BATCHES))} as §VII-C. Both send their scores to the "
        f"same logic-die softmax unit (§VI: the baselines keep softmax on the logic die), of {SOFTMAX_LANES} "
        "lanes: the paper gives no width, so the table after the figure sweeps it.",
        "",
        caption("Duplex Fig. 14: Duplex's throughput over Bank-PIM's on Mixtral per lengths and batch"),
        "| L_in, L_out | batch | Duplex / Bank-PIM |",
        "| --- | ---: | ---: |",
    ]
    cells = {f"{r['lengths'][0]}/{r['lengths'][1]}\nb{r['batch']}": r["ratio"] for r in rows}
    lines += [f"| {r['lengths'][0]}, {r['lengths'][1]} | {r['batch']} | {r['ratio']:.2f} |" for r in rows]
    p14 = _bars(
        {"Duplex / Bank-PIM": cells},
        "throughput over Bank-PIM's",
        "Duplex Fig. 14 (model): Mixtral, Duplex over Bank-PIM",
        out / "duplex_fig14.png",
        "L_in/L_out and batch",
    )
    return lines + [
        "",
        *head("Fig. 14's ratios over Bank-PIM, paper vs model"),
        *_claim_lines(rs, figures.FIG14),
        "",
        f"![Duplex Fig. 14]({p14.name})",
        "",
        caption(
            "Duplex Fig. 14's ratios over Bank-PIM against the softmax unit's width (the headline "
            f"uses {SOFTMAX_LANES})"
        ),
        "| softmax lanes | max | mean |",
        "| ---: | ---: | ---: |",
        *(f"| {s['lanes']} | {s['max']:.2f} | {s['mean']:.2f} |" for s in sweep),
    ]


def fig15_lines(rs: list[ledger.Row], out: Path) -> list[str]:
    """Energy per token of a steady decode stage on Fig. 15's grid: "up to" is the grid's maximum per model,
    the mean is over the grid of the figure's three models (§X)."""
    lines = [
        "Energy per output token of a steady decode stage, Duplex+PE+ET against GPU, on Fig. 15's grid (the "
        "ends of (L_in, L_out) 256-4096 and of batch 32-128, at the decode's mean context): DRAM bits x path "
        "energy + FLOPs x ALU energy (AttAcc's FGDRAM table). \"Up to\" is each model's maximum over the grid.",
        "",
        *head(
            "Duplex Fig. 15: energy reduction per token against the GPU system, paper vs model (dynamic DRAM "
            "and ALU energy of a steady decode stage)"
        ),
        *_claim_lines(rs, figures.FIG15, ".3f"),
        *_claim_lines(rs, figures.FIG15_TRENDS),
    ]
    up_to = {m: paper.ENERGY[m] for m in paper.FIG11_MODELS}
    p15 = _bars(
        {"model": {m: ledger.find(rs, c.quantity).model_value for m, c in up_to.items()}, "paper": up_to},
        "energy reduction per token vs GPU",
        "Duplex Fig. 15: energy per token, model beside paper",
        out / "duplex_fig15.png",
        "model",
    )
    return lines + ["", f"![Duplex Fig. 15]({p15.name})"]


def _bars(series: dict[str, dict[str, float]], ylabel: str, title: str, path: Path, xlabel: str) -> Path:
    """Grouped bars: one group per key of the first series, one bar per series that has it."""
    plt = pyplot()
    keys = list(next(iter(series.values())))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.3 * len(keys) + 2), 3.8))
    width = 0.8 / len(series)
    for i, (name, vals) in enumerate(series.items()):
        xs = [j + i * width for j, k in enumerate(keys) if k in vals]
        ax.bar(xs, [vals[k] for k in keys if k in vals], width, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))], keys, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return save(fig, plt, path)


def unit_lines(rs: list[ledger.Row]) -> list[str]:
    lines = [
        "Derived, not typed in: 32 modules x 512 MACs x 2 x 650 MHz, and 32 pseudo-channels of bank bundles "
        "(memory engine, HBM3 preset).",
        "",
        *head(
            "Logic-PIM's peaks derived from the units and the memory "
            "engine beside the paper's (inputs the paper states)"
        ),
        *_claim_lines(rs, figures.PEAKS),
        "",
        f"Bank-bundle DRAM efficiency (ACT/PRE, refresh; memory engine): {dram_efficiency():.3f}. "
        f"{STACKS} stacks per device.",
    ]
    recs = [r for r in characterization.load() if r.unit in UNITS]
    lines += [
        "",
        caption("Duplex's measured units: RTL testbench records, bit-exact against golden"),
        "| unit | parameters | simulator | latency | II | probe (m, k, n): cycles, compute |",
        "| --- | --- | --- | ---: | ---: | --- |",
    ]
    for r in recs:
        params = ", ".join(f"{k}={v}" for k, v in sorted(r.params.items()))
        probe = r.extra.get("probe_shape")
        pr = f"{tuple(probe)}: {r.extra['probe_cycles']}, {r.extra['compute_cycles']}" if probe else "-"
        lines.append(f"| {r.unit} | {params} | {r.simulator} | {r.latency} | {r.ii:g} | {pr} |")
    m, k, n = 256, 512, 8
    lines += [
        "",
        f"GEMM module cycle model at the paper's size, a {m} x {k} tile with {n} tokens: "
        f"{gemm_txn_cycles(m, k, n, FULL)} cycles against {m // FULL.rows * k} of compute "
        f"(reduced {REDUCED.rows} x {REDUCED.lanes} module in make test).",
    ]
    return lines


def area_lines(rs: list[ledger.Row]) -> list[str]:
    """The logic die's breakdown (§VII-E) and the GEMM : softmax ratio against Yosys cells (`make area`)."""
    a = paper.AREA_MM2
    lines = [
        f"Per stack (7 nm, §VII-E): {', '.join(f'{k} {v} mm2' for k, v in a.items())}; "
        f"{paper.AREA_SHARE:.2%} of the {paper.LOGIC_DIE_MM2:.0f} mm2 logic die."
    ]
    split = figures.area_split()
    if split is None:
        return lines + ["", "GEMM : softmax cells: not synthesized yet (`make area`)."]
    synth = ", ".join(f"{d} {p['cells']['total']}" for d, p in split.area.items())
    return lines + [
        "",
        f"Yosys generic cells (tb/area.py; no technology mapping): {synth}, "
        f"extrapolated along the line through each pair to {MODULES_PER_STACK} modules of {FULL.macs} MACs "
        f"({split.gemm:.3g} cells) and {SOFTMAX_LANES} lanes ({split.softmax:.3g}); buffers of one vector (SRAM "
        "is not logic).",
        "",
        *head("Logic-die area split, paper (7 nm) vs Yosys generic cells"),
        *_claim_lines(rs, [paper.GEMM_OVER_SOFTMAX]),
        "",
        f"At our cells per softmax lane, the paper's ratio implies a softmax unit of about "
        f"{split.gemm * a['softmax'] / a['gemm'] / split.per_lane:.0f} lanes: the "
        "paper's 1.64 mm2 is far more than 64 lanes of exp, add and compare (its lanes, exp method and "
        "dividers are unstated; notes §2.8). It also includes 128 KB of SRAM buffers, and the 3.02 mm2 the "
        "modules' 8 KB buffers, while the cells count logic only.",
    ]


def plot_fig8(ops: tuple[int, ...], edap: dict[str, list[float]], path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for p, vals in edap.items():
        ax.plot(ops, [v / lg for v, lg in zip(vals, edap["logic"], strict=True)], marker="o", label=p)
    ax.axvline(paper.EDAP_CROSSOVER, color="k", lw=0.6, ls=":", label="paper crossover")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("operations per byte (tokens sharing each weight)")
    ax.set_ylabel("EDAP over Logic-PIM's")
    ax.set_title("Duplex Fig. 8 (model): EDAP of a 16384 x 4096 FP16 GEMM", fontsize=10)
    ax.legend(fontsize=8)
    return save(fig, plt, path)


def fig8_lines(rs: list[ledger.Row], out: Path) -> list[str]:
    """Fig. 8 (§IV-E): EDAP of the 16384 x 4096 GEMM per stack by Op/B, each PIM over Logic-PIM."""
    ops, edap = figures.FIG8_OPS, figures.fig8_edap()
    lines = [
        f"A {paper.EDAP_SHAPE[0]} x {paper.EDAP_SHAPE[1]} FP16 GEMM on one stack, n tokens (Op/B = n): delay "
        "(GEMM module cycle model, or Bank-PIM's roofline) x energy (weight bits x path energy + ALU) x area "
        "(from §VII-E: " + ", ".join(f"{p} {pim_area_mm2(p):.1f} mm2" for p in PIMS) + "; DRAM-die units at "
        f"{paper.DRAM_AREA_FACTOR}x logic area [S: scaling in model.pim_area_mm2]). EDAP over Logic-PIM's:",
        "",
        caption(
            f"Duplex Fig. 8: EDAP of a {paper.EDAP_SHAPE[0]} x {paper.EDAP_SHAPE[1]} GEMM per PIM over "
            "Logic-PIM's, by operations per byte"
        ),
        "| PIM | " + " | ".join(f"{n} Op/B" for n in ops) + " |",
        "| --- |" + " ---: |" * len(ops),
    ]
    lines += [
        f"| {p} | " + " | ".join(f"{e / lg:.2f}" for e, lg in zip(edap[p], edap["logic"], strict=True)) + " |"
        for p in PIMS
    ]
    worse = ledger.find(rs, paper.BANKGROUP_WORSE.quantity)
    p8 = plot_fig8(ops, edap, out / "duplex_fig8.png")
    return lines + [
        "",
        *head("Fig. 8's crossover, paper vs model"),
        *_claim_lines(rs, [paper.EDAP_CROSSOVER], ".1f"),
        "",
        f"BankGroup-PIM worse than Logic-PIM at every Op/B: paper yes, model {worse.direction_agrees} (its EDAP is "
        f"at least {worse.model_value:.2f}x Logic-PIM's).",
        "",
        f"![Duplex Fig. 8]({p8.name})",
    ]


def plot_fig11(rows: list[dict], path: Path) -> Path:
    """Fig. 11: each system's throughput over GPU's, one panel per model, groups per (lengths, batch)."""
    plt = pyplot()
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(1, len(models), figsize=(3.6 * len(models), 4.2), sharey=True)
    width = 0.8 / (len(SYSTEMS) - 1)
    for ax, model in zip(axes, models, strict=True):
        pts = [r for r in rows if r["model"] == model]
        x = np.arange(len(pts))
        for i, s in enumerate(SYSTEMS[1:]):
            ax.bar(x + i * width, [over(r[s], r["GPU"]) for r in pts], width, label=s, color=f"C{i}")
        ax.axhline(1, color="k", lw=0.6)
        ax.set_xticks(x + 0.4 - width / 2, [f"{r['lengths'][0]}\nb{r['batch']}" for r in pts], fontsize=8)
        ax.set_title(model, fontsize=10)
        ax.set_xlabel("L_in = L_out, batch")
    axes[0].set_ylabel("throughput / GPU's")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, bbox_to_anchor=(0.5, -0.03))
    fig.suptitle("Duplex Fig. 11 (model): output tokens/s over the GPU system's, closed loop at the batch")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return save(fig, plt, path)


def report_lines(ctx: Context, rs: list[ledger.Row]) -> list[str]:
    """The section, its paper-vs-model rows from ``rs`` (``sysmodel.designs.duplex.claims.claims``), its tables and
    plots from the grids those were computed on (``figures.grids``: read once per report)."""
    g, out, requests = figures.grids(ctx), ctx.out, ctx.requests
    p11 = plot_fig11(g.fig11, out / "duplex_fig11.png")
    return [
        "### Logic-PIM",
        "",
        *unit_lines(rs),
        "",
        f"### Throughput (Fig. 11), up to {requests} requests per run",
        "",
        *fig11_lines(g.fig11, rs),
        "",
        f"![Duplex Fig. 11]({p11.name})",
        "",
        "### GLaM latency (Fig. 12)",
        "",
        *fig12_lines(g.fig12, rs, out),
        "",
        f"### Serving load (Fig. 13), {requests} requests per point",
        "",
        *fig13_lines(g.fig13, rs, plot_fig13(g.fig13, out / "duplex_fig13.png")),
        "",
        "### Against Bank-PIM (Fig. 14)",
        "",
        *fig14_lines(g.fig14, g.lanes, rs, out),
        "",
        "### Energy (Fig. 15)",
        "",
        *fig15_lines(rs, out),
        "",
        "### EDAP against Bank-PIM and BankGroup-PIM (Fig. 8)",
        "",
        *fig8_lines(rs, out),
        "",
        "### Logic-die area (§VII-E)",
        "",
        *area_lines(rs),
    ]
