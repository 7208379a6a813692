"""The report's memory-timing section: the presets' peak and sustained bandwidth, the papers' PIM aggregates
against the access modes' peaks, and the PIM modes under each refresh policy (the numbers from
:mod:`sysmodel.memory`; this module only renders them and records the papers' claims)."""

from __future__ import annotations

from dataclasses import replace

from sysmodel import ledger
from sysmodel.duplex.paper import PC_BANDWIDTH, PEAK_TBS
from sysmodel.l3.paper import CHANNELS, PIM_BANDWIDTH, RANKSETS
from sysmodel.memory import (
    DDR4_3200,
    DEFAULT_REFRESH,
    HBM3,
    PRESETS,
    REFRESH,
    analytical_bw,
    pim_refresh_table,
    pim_view,
)
from sysmodel.report import caption


def memory_lines(ctx=None) -> list[str]:
    """Presets and PIM modes: peak, analytical streaming/random, and the papers' aggregates."""
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
    l3 = replace(DDR4_3200, org=replace(DDR4_3200.org, channels=CHANNELS, ranks=RANKSETS))
    duplex_pc = replace(HBM3, org=replace(HBM3.org, channels=1))
    rows = [
        (
            "L3 all-bank PIM, 16 ch x 4 ranks DDR4-3200",
            pim_view(l3, "all_bank").peak_bw() / 1e12,
            PIM_BANDWIDTH,
            "TB/s",
            "L3 §6.1 / Table 2",
        ),
        (
            "Duplex bank-bundle per pseudo-channel",
            pim_view(duplex_pc, "bank_bundle").peak_bw() / 1e9,
            PC_BANDWIDTH,
            "GB/s",
            "Duplex §IV-C (4x of 20.8 GB/s)",
        ),
        (
            "Duplex bank-bundle per stack",
            pim_view(HBM3, "bank_bundle").peak_bw() / 1e12,
            PEAK_TBS,
            "TB/s",
            "Duplex §IV-C, notes §2.2 (the Duplex section's input)",
        ),
    ]
    lines += [
        "",
        caption("The papers' PIM aggregate bandwidths against the access modes' peak (paper vs model)"),
        "| PIM aggregate | paper | model | ratio | unit | source |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    lines += [
        f"| {n} | {float(paper)} | {model:.2f} | {model / paper:.3f} | {u} | {src} |"
        for n, model, paper, u, src in rows
    ]
    for _, model, claim, _, _ in rows[:2]:  # the third is the Duplex section's input row
        ledger.record(claim, model)
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
