"""The report's memory-timing section: the presets' peak and sustained bandwidth, the papers' PIM aggregates
against the access modes' peaks, and the PIM modes under each refresh policy (the numbers from
:mod:`sysmodel.engines.memory` and :mod:`sysmodel.designs.pim`; this module only renders them)."""

from __future__ import annotations

from sysmodel.designs.pim import aggregates, pim_refresh_table
from sysmodel.engines.memory import DEFAULT_REFRESH, PRESETS, REFRESH, analytical_bw
from sysmodel.report import caption


def memory_lines(ctx=None, rows: list | None = None) -> list[str]:
    """Presets and PIM modes: peak, analytical streaming/random, and the papers' aggregates (their ledger rows,
    ``rows``, come from :func:`sysmodel.designs.pim.claims`)."""
    lines = [
        caption(
            "DRAM and HBM presets: peak bandwidth and the analytical model's sustained bandwidth on "
            "streaming and random reads (one channel or stack)"
        ),
        "| preset | source | peak GB/s | streaming GB/s | random GB/s |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for p in PRESETS.values():
        lines.append(
            f"| {p.name} | {p.source} | {p.peak_bw() / 1e9:.1f} | {analytical_bw(p, 'streaming') / 1e9:.1f}"
            f" | {analytical_bw(p, 'random') / 1e9:.1f} |"
        )
    lines += [
        "",
        caption("The papers' PIM aggregate bandwidths against the access modes' peak (paper vs model)"),
        "| PIM aggregate | paper | model | ratio | unit | source |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    lines += [
        f"| {n} | {float(paper)} | {model:.2f} | {model / paper:.3f} | {u} | {src} |"
        for n, model, paper, u, src in aggregates()
    ]
    return lines + ["", *pim_refresh_lines()]


def pim_refresh_lines() -> list[str]:
    """The PIM modes re-measured on the engine under every refresh policy."""
    cols = [*REFRESH, "analytical"]
    lines = [
        caption(
            f"The PIM access modes streamed on the engine under each refresh policy (GB/s; engine "
            f"default {DEFAULT_REFRESH}), what each system model takes, and that against the paper's "
            f"bandwidth for the same view"
        ),
        f"| mode | paper | peak | {' | '.join(cols)} | model takes | model / paper | source |",
        "| --- | ---: | ---: | " + "---: | " * len(cols) + "--- | ---: | --- |",
    ]
    for name, paper, src, used, peak, bw in pim_refresh_table():

        def g(v: float | None) -> str:
            return "—" if v is None else f"{v / 1e9:.1f}"

        took = bw[used]
        ratio = "—" if paper is None or took is None else f"{took / paper:.3f}"
        lines.append(
            f"| {name} | {g(paper)} | {g(peak)} | {' | '.join(g(bw[c]) for c in cols)} | {used} | {ratio} | {src} |"
        )
    return lines
