"""The one way membound's reports get matplotlib: pyplot on the file-only Agg backend, imported at the first
plot so commands that draw nothing never load it; and the one way a figure is written (atomically).

Every saved figure can be checked for colliding text (:func:`overlaps`: titles, axis labels, tick labels,
legend entries and annotations whose boxes intersect at the size the figure is saved) and for missing titles
(:func:`unlabelled`). ``CHECK`` (set by the report's figure test) makes :func:`save` record both in ``FOUND``."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np

from sysmodel.metrics import Result, tbt_cdf
from sysmodel.outputs import atomic

CHECK = False
FOUND: list[str] = []


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def log_axis(axis) -> None:
    """A log axis labelled at 1-2-5 steps in plain numbers (minor ticks unlabelled): readable at any span,
    where matplotlib's default labels every minor tick of a short span in colliding scientific notation."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis._set_axes_scale("log")
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _drawn(axis, coord: int) -> list:
    """An axis' tick labels that are drawn: matplotlib keeps labels for ticks just outside the view."""
    lo, hi = sorted(axis.get_view_interval())
    return [t for t in axis.get_ticklabels(which="both") if lo <= t.get_position()[coord] <= hi]


def _texts(fig) -> list:
    out = [*fig.texts, fig._suptitle]
    for ax in fig.axes:
        out += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        if ax.name != "3d":  # a 3-D axis projects its tick labels; their 2-D boxes mean little
            out += _drawn(ax.xaxis, 0) + _drawn(ax.yaxis, 1)
        if ax.get_legend() is not None:
            out += list(ax.get_legend().get_texts())
    for legend in fig.legends:
        out += list(legend.get_texts())
    unique = {id(t): t for t in out if t is not None}
    return [t for t in unique.values() if t.get_visible() and t.get_text().strip()]


def overlaps(fig) -> list[str]:
    """Pairs of text elements whose boxes intersect (by more than a pixel each way), as drawn."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _texts(fig)]
    out = [
        f"{a!r} overlaps {b!r}"
        for (a, ba), (b, bb) in combinations(boxes, 2)
        if ba.width > 0
        and bb.width > 0
        and ba.overlaps(bb)
        and min(ba.x1, bb.x1) - max(ba.x0, bb.x0) > 1
        and min(ba.y1, bb.y1) - max(ba.y0, bb.y0) > 1
    ]
    return out


def unlabelled(fig) -> list[str]:
    """What a reader would miss: a figure without a title, a panel without axis titles (an inner panel of a
    grid shares its row's y title and its column's x title)."""
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.name != "3d" and ax.get_subplotspec() is not None]
    out = [] if fig._suptitle is not None or any(ax.get_title() for ax in fig.axes) else ["no title"]

    def span(ax, rows: bool) -> range:
        spec = ax.get_subplotspec()
        return spec.rowspan if rows else spec.colspan

    for ax in axes:
        if not any(o.get_xlabel() for o in axes if set(span(o, False)) & set(span(ax, False))):
            out.append(f"panel {ax.get_title()!r}: no x-axis title")
        if not any(o.get_ylabel() for o in axes if set(span(o, True)) & set(span(ax, True))):
            out.append(f"panel {ax.get_title()!r}: no y-axis title")
    return out


def save(fig, plt, path: Path) -> Path:
    """Write a report figure atomically (a failed run leaves no half-written PNG) and free it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if CHECK:
            FOUND.extend(f"{path.name}: {o}" for o in overlaps(fig) + unlabelled(fig))
        with atomic(path) as tmp:
            fig.savefig(tmp, dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


# --- serving runs (sysmodel.engine) ---------------------------------------------------------------------


def plot_tbt_cdf(results: list[Result], path: Path, labels: list[str] | None = None) -> Path:
    """The TBT CDF of each run (``labels``: one legend entry per run, e.g. per offered rate)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, r in enumerate(results):
        t, cum = tbt_cdf(r)
        if len(t):
            ax.step(t * 1e3, cum, where="post", label=labels[i] if labels else r.system)
    ax.set_xlabel("time between tokens (ms)")
    ax.set_ylabel("fraction of decode tokens")
    ax.set_title(f"TBT CDF, {results[0].trace.name.split('@')[0]}")
    ax.legend(fontsize=7)
    ax.grid(True, lw=0.3)
    return save(fig, plt, path)


def plot_kv(results: list[Result], path: Path, labels: list[str] | None = None) -> Path:
    """KV cache utilisation (share of the capacity held) over the run, one line per run."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, r in enumerate(results):
        assert r.iter_kv is not None  # simulate() records it on every run
        start = r.arrival.min() + np.concatenate([[0.0], np.cumsum(r.iter_time)[:-1]])
        ax.plot(start, r.iter_kv * 100, lw=0.8, label=labels[i] if labels else r.system)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("KV cache held (% of capacity)")
    ax.set_title(f"KV utilisation, {results[0].trace.name.split('@')[0]} ({results[0].meta['scheduler']})")
    ax.legend(fontsize=7)
    ax.grid(True, lw=0.3)
    return save(fig, plt, path)


def plot_qps(rows: list[dict], path: Path) -> Path:
    """Throughput and p50 E2E against offered QPS (rows from :func:`qps_sweep`)."""
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for system in sorted({r["system"] for r in rows}):
        pts = [r for r in rows if r["system"] == system]
        a1.plot([r["qps"] for r in pts], [r["throughput_tok_s"] for r in pts], marker="o", label=system)
        a2.plot([r["qps"] for r in pts], [r["e2e_p50_s"] for r in pts], marker="o", label=system)
    a1.set(xlabel="offered load (requests/s)", ylabel="output tokens/s", title="throughput vs offered load")
    a2.set(xlabel="offered load (requests/s)", ylabel="median end-to-end latency (s)", title="latency vs offered load")
    a1.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, plt, path)
