"""The one way membound's reports get matplotlib: pyplot on the file-only Agg backend, imported at the first
plot so commands that draw nothing never load it; and the one way a figure is written (atomically).

Every saved figure can be checked for colliding text (:func:`overlaps`: titles, axis labels, tick labels,
legend entries and annotations whose boxes intersect at the size the figure is saved), for missing titles
(:func:`unlabelled`) and for legends drawn over data (:func:`hidden`). ``CHECK`` (set by the report's figure
test) makes :func:`save` record all three in ``FOUND``.

One system keeps one colour and marker in every plot (:func:`system_style`, from the registry's order)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

import numpy as np

from sysmodel.engines.metrics import Result, tbt_cdf
from sysmodel.outputs import atomic

CHECK = False
FOUND: list[str] = []
_DESCRIPTION: list[str] = []  # what the figures being saved show (:func:`described`)


@contextlib.contextmanager
def described(text: str) -> Iterator[None]:
    """Figures saved inside the block carry ``text`` (a run block) as their PNG Description."""
    _DESCRIPTION.append(text)
    try:
        yield
    finally:
        _DESCRIPTION.pop()


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def log_axis(axis) -> None:
    """A log axis labelled at 1-2-5 steps in plain numbers (minor ticks unlabelled): readable at any span,
    where matplotlib's default labels every minor tick of a short span in colliding scientific notation."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def label(v: float, _) -> str:  # past two decades (a stall beside millisecond gaps) decades only: no collisions
        lo, hi = sorted(axis.get_view_interval())
        wide = lo > 0 and math.log10(hi / lo) > 2
        return f"{v:g}" if not wide or math.isclose(math.log10(v), round(math.log10(v))) else ""

    axis._set_axes_scale("log")
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(NullFormatter())


MARKERS = "osD^vP*Xph<>"  # one per registered system, beside its colour: coinciding points stay apart
LINESTYLES = ("-", "--", "-.", ":")  # cycled over a plot's series: a series drawn over another still shows


def system_style(name: str) -> dict:
    """A registered system's colour and marker, the same in every plot: its place in the registry."""
    from sysmodel.systems import entries

    names = list(entries())
    i = names.index(name) if name in names else len(names)
    return {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)]}


def series_style(i: int) -> dict:
    """The ``i``-th series of a plot of one system's runs (rates, engines): its colour and line style."""
    return {"color": f"C{i % 10}", "linestyle": LINESTYLES[i % len(LINESTYLES)]}


def legend_outside(ax) -> None:
    """The legend beside the axes, where it can cover no data; nothing when no series is labelled."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)


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


def _data_boxes(ax, renderer) -> list:
    """Display-space boxes of what an axes plots: each line vertex and scatter point (as a point), each bar."""
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.transforms import Bbox

    points = [line.get_transform().transform(line.get_xydata()) for line in ax.lines if line.get_visible()]
    points += [
        c.get_offset_transform().transform(np.asarray(c.get_offsets()).reshape(-1, 2))
        for c in ax.collections
        if isinstance(c, PathCollection) and c.get_visible()
    ]
    view = ax.get_window_extent(renderer)  # what falls outside the axes is clipped, not drawn
    boxes = [Bbox([p, p]) for pts in points for p in pts if view.contains(*p)]
    bars = [patch.get_window_extent(renderer) for patch in ax.patches if patch.get_visible()]
    return boxes + [clipped for b in bars if (clipped := Bbox.intersection(b, view)) is not None]


def hidden(fig) -> list[str]:
    """Legends drawn over data: a legend whose box holds a plotted point or line vertex, or covers a bar."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        if any(
            min(box.x1, b.x1) >= max(box.x0, b.x0) and min(box.y1, b.y1) >= max(box.y0, b.y0)
            for b in _data_boxes(ax, renderer)
        ):
            out.append(f"panel {ax.get_title()!r}: the legend covers data")
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
            FOUND.extend(f"{path.name}: {o}" for o in overlaps(fig) + unlabelled(fig) + hidden(fig))
        with atomic(path) as tmp:
            about = {"Description": _DESCRIPTION[-1]} if _DESCRIPTION and path.suffix == ".png" else None
            fig.savefig(tmp, dpi=110, bbox_inches="tight", metadata=about)
    finally:
        plt.close(fig)
    return path


# --- serving runs (sysmodel.engines.engine) ---------------------------------------------------------------------


def plot_tbt_cdf(results: list[Result], path: Path, labels: list[str] | None = None) -> Path:
    """The TBT CDF of each run (``labels``: one legend entry per run, e.g. per offered rate) on a log time
    axis: a stall of hours beside gaps of milliseconds (a preempted request's wait) leaves both readable;
    each entry states its run's longest gap."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, r in enumerate(results):
        t, cum = tbt_cdf(r)
        if len(t):
            longest = f"{t[-1] * 1e3:.4g} ms" if t[-1] < 1 else f"{t[-1]:.4g} s"
            label = f"{labels[i] if labels else r.system} (longest {longest})"
            ax.step(t * 1e3, cum, where="post", label=label, **series_style(i))
    log_axis(ax.xaxis)
    ax.set_xlabel("time between tokens (ms, log scale)")
    ax.set_ylabel("fraction of decode tokens")
    ax.set_title(f"TBT CDF, {results[0].trace.name.split('@')[0]}")
    legend_outside(ax)
    ax.grid(True, which="both", lw=0.3)
    return save(fig, plt, path)


def plot_kv(results: list[Result], path: Path, labels: list[str] | None = None) -> Path:
    """KV cache utilisation (share of the capacity held) over the run, one line per run: at every stage when
    the run kept its stages, else at the bounded sample it streamed (every stage up to KV_POINTS of them)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, r in enumerate(results):
        if r.iter_kv is not None and r.iter_time is not None:
            start, kv = np.concatenate([[0.0], np.cumsum(r.iter_time)[:-1]]), r.iter_kv
        else:
            assert r.kv_series is not None  # every engine's result streams one
            start, kv = r.kv_series.start, r.kv_series.kv
        ax.plot(r.arrival.min() + start, kv * 100, lw=0.8, label=labels[i] if labels else r.system, **series_style(i))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("KV cache held (% of capacity)")
    ax.set_title(f"KV utilisation, {results[0].trace.name.split('@')[0]} ({results[0].meta['scheduler']})")
    legend_outside(ax)
    ax.grid(True, lw=0.3)
    return save(fig, plt, path)


def plot_qps(rows: list[dict], path: Path) -> Path:
    """Throughput and p50 E2E against offered QPS (rows from :func:`qps_sweep`)."""
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for i, system in enumerate(sorted({r["system"] for r in rows})):
        pts = sorted((r for r in rows if r["system"] == system), key=lambda r: r["qps"])
        style = {"marker": "o", "label": system, **series_style(i)}
        a1.plot([r["qps"] for r in pts], [r["throughput_tok_s"] for r in pts], **style)
        a2.plot([r["qps"] for r in pts], [r["e2e_p50_s"] for r in pts], **style)
    a1.set(xlabel="offered load (requests/s)", ylabel="output tokens/s", title="throughput vs offered load")
    a2.set(xlabel="offered load (requests/s)", ylabel="median end-to-end latency (s)", title="latency vs offered load")
    legend_outside(a2)
    fig.tight_layout()
    return save(fig, plt, path)
