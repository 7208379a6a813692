"""The comparison written out (README "Compare designs"): the terminal table, Markdown and CSV, the two plots
(tokens/s against J/token with the Pareto front; p99 TBT against tokens/s), the provenance sidecar, and the
report's cross-design section. The rows come from :mod:`sysmodel.compare`.

Columns: system; hardware; tokens/s (output tokens over the makespan); TBT p50/p99 (ms, over every decode
token); T2FT p50/p99 (s, arrival to first token); J/token (the run's energy over its output tokens); added area
(mm², silicon the design adds to stock parts); feasible, and the reason when not.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from sysmodel import systems
from sysmodel.compare import COLUMNS, pareto, rows_of
from sysmodel.outputs import atomic, write_text
from sysmodel.report.plots import described, legend_outside, log_axis, pyplot, save, system_style
from sysmodel.runinfo import line


def _cell(row: dict, key: str, fmt: str) -> str:
    v = row.get(key)
    if key == "feasible":
        return "yes" if v else f"no: {row['reason']}"
    if v is None or v == "" or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return format(v, fmt) if fmt else str(v)


def table_lines(rows: list[dict]) -> list[str]:
    head = [c for c, _, _ in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "| --- | --- | " + " | ".join("---:" for _ in head[2:-1]) + " | --- |"]
    return lines + ["| " + " | ".join(_cell(r, k, f) for _, k, f in COLUMNS) + " |" for r in rows]


def terminal_lines(rows: list[dict]) -> list[str]:
    """The table in aligned plain text (what the terminal shows)."""
    cells = [[c for c, _, _ in COLUMNS]] + [[_cell(r, k, f) for _, k, f in COLUMNS] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS) - 1)]
    out = []
    for c in cells:
        out.append(
            "  ".join(c[i].rjust(widths[i]) if i >= 2 else c[i].ljust(widths[i]) for i in range(len(widths)))
            + "  "
            + c[-1]
        )
    return out


def profile_line(rows: list[dict]) -> str:
    """Which efficiency profile each system's device ran on (``--set efficiency=NAME``); systems without a
    profiled device (or not run) left out."""
    named = [f"{r['system']} {r['efficiency_profile']}" for r in rows if r.get("efficiency_profile")]
    return f"efficiency profile: {', '.join(named) or 'none'}"


def write_csv(rows: list[dict], path: Path, run: dict | None = None) -> Path:
    """The rows, each with the run block's fields (``run``: :func:`sysmodel.runinfo.block`) as columns."""
    run = run or {}
    keys = ["system", "hardware", "efficiency_profile", "feasible", "reason", *[k for _, k, _ in COLUMNS[2:9]]]
    keys += ["area_source", *run]
    with atomic(path) as tmp, tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows({**run, **r} for r in rows)
    return path


def plot(rows: list[dict], title: str, out: Path, stem: str = "compare") -> list[Path]:
    """tokens/s against J/token with the Pareto front, and p99 TBT against tokens/s."""
    plt = pyplot()
    ok = [r for r in rows if r["feasible"]]
    front = sorted(pareto(rows), key=lambda r: r["joules_per_token"])
    paths = []
    for name, (xk, xl), (yk, yl) in (
        ("energy", ("joules_per_token", "energy per output token (J)"), ("throughput_tok_s", "output tokens/s")),
        ("latency", ("throughput_tok_s", "output tokens/s"), ("tbt_p99_ms", "p99 time between tokens (ms)")),
    ):
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        shown = [r for r in ok if r[xk] > 0 and r[yk] > 0]  # a log axis: no TBT without a second output token
        for r in shown:  # hollow: a system at (nearly) another's point still shows its outline
            style = system_style(r["system"])
            ax.scatter(
                r[xk],
                r[yk],
                s=44,
                label=r["system"],
                zorder=3,
                marker=style["marker"],
                facecolors="none",
                edgecolors=style["color"],
                linewidths=1.4,
            )
        if name == "energy" and front:
            # a ring on each front point: a front of one system (one dominates all) draws no line
            ax.plot(
                [r[xk] for r in front],
                [r[yk] for r in front],
                "k--o",
                lw=0.8,
                ms=12,
                mfc="none",
                mew=0.8,
                label="Pareto front",
                zorder=2,
            )
        if shown:
            log_axis(ax.xaxis)
            log_axis(ax.yaxis)
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(
            f"{title}: {'throughput vs energy' if name == 'energy' else 'tail latency vs throughput'}", fontsize=9
        )
        if not shown:
            why = "no system can run this workload" if not ok else f"no system has a value of {yl}"
            ax.text(0.5, 0.5, why, transform=ax.transAxes, ha="center")
        legend_outside(ax)
        ax.grid(True, which="both", lw=0.3)
        paths.append(save(fig, plt, out / f"{stem}_{name}.png"))
    return paths


def write(rows: list[dict], prov: dict, title: str, out: Path, run: dict, stem: str = "compare") -> list[Path]:
    """The table as Markdown and CSV, the plots, and the provenance sidecar (JSON: ``run``, the run block,
    and ``systems``, each system's provenance or its reason for not running)."""
    md = write_text(
        out / f"{stem}.md", "\n".join([f"# {title}", "", line(run), "", *table_lines(rows), "", profile_line(rows), ""])
    )
    with described(line(run)):
        paths = [md, write_csv(rows, out / f"{stem}.csv", run), *plot(rows, title, out, stem)]
    sidecar = json.dumps({"run": run, "systems": prov}, indent=1, default=str) + "\n"
    paths.append(write_text(out / f"{stem}_provenance.json", sidecar))
    return paths


def _params(params: dict | None) -> str:
    """A record's parameters as the terminal shows them: `` [banks=16, d_head=128]``, nothing without any."""
    return f" [{', '.join(f'{k}={v}' for k, v in params.items())}]" if params else ""


def provenance_lines(prov: dict) -> list[str]:
    lines = []
    for name, p in prov.items():
        if not p["feasible"]:
            lines.append(f"- {name}: not run: {p['reason']}")
            continue
        recs = (
            ", ".join(
                f"{r['unit']}{_params(r.get('params'))} ({r.get('simulator', 'cycle model')}, hw {r['hw_sha256']})"
                for r in p["records"]
            )
            or "none (analytical model)"
        )
        lines.append(
            f"- {name}: records {recs}; {len(p['constants'])} constants; fits: {'; '.join(p['fits']) or 'none'}"
        )
    return lines


# --- the report's cross-design section -------------------------------------------------------------------

WORKLOADS = (  # (model, trace kind, prompt, output): a conversational and a long-context trace [S]
    ("llama2-70b", "gaussian", 512, 256),
    ("llama2-70b", "longbench", 0, 0),
    ("mixtral-8x7b", "gaussian", 512, 256),
)


def report_lines(ctx) -> list[str]:
    from sysmodel.report import caption

    names = list(systems.entries())
    n = min(ctx.requests, 200)
    lines = [
        f"Every registered system ({', '.join(names)}) with its paper's defaults on the same trace: {n} "
        "requests arriving at t = 0, served by the one engine (sysmodel/engines/serving.py); energy on the one basis "
        "(sysmodel/cost/energy.py, table below), added area from each design's source. A system that cannot "
        "hold the model or a request's KV cache shows why. `membound compare` runs the same for any model "
        "and trace.",
        "",
    ]
    for model, kind, prompt, output in WORKLOADS:
        label = f"{model}, {kind}" + (f" {prompt}/{output} tokens" if prompt else " (L3 Table 4 lengths)")
        rows = ctx.grid(
            f"compare-{model}-{kind}", rows_of, model, kind, n, prompt, output, names, modules=systems.modules()
        )
        stem = f"compare_{model}_{kind}"
        pe, pl = plot(rows, label, ctx.out, stem)
        lines += [
            f"### {label}",
            "",
            caption(
                f"Every registered system on {label}, {n} requests at t = 0: "
                "throughput, latency percentiles, energy and added silicon"
            ),
            *table_lines(rows),
            "",
            f"![{label}: tokens/s against J/token]({pe.name}) ![{label}: p99 TBT against tokens/s]({pl.name})",
            "",
        ]
    from sysmodel.report.sections import energy_lines

    return lines + ["### The energy basis", "", *energy_lines()]
