"""The PIM access modes the designs read DRAM in, each with its paper's bandwidth and source: the modes
(:func:`pim_modes`), their streams re-measured on the DRAM engine under every refresh policy
(:func:`pim_refresh_table`), and the papers' aggregate PIM bandwidths against the modes' peaks
(:func:`aggregates`, :func:`claims`). The engine (:mod:`sysmodel.engines.memory`) knows the access modes
(:func:`~sysmodel.engines.memory.pim_view`); which design uses which, at what size, is said here."""

from __future__ import annotations

import functools
from dataclasses import replace

from sysmodel import ledger
from sysmodel.designs.duplex.paper import PC_BANDWIDTH, PEAK_TBS
from sysmodel.designs.l3.paper import CHANNELS, PIM_BANDWIDTH, RANKSETS
from sysmodel.engines.memory import (
    DDR4_3200,
    DDR4_3200_HERMES,
    HBM3,
    REFRESH,
    DramPreset,
    analytical_bw,
    pim_view,
    simulate,
    streaming_trace,
)


def pim_modes() -> list[tuple[str, DramPreset, int, float | None, str, str]]:
    """The PIM access modes the system models use: (name, one channel's view, stream bytes, the paper's
    bandwidth for that view in B/s or None, its source, what the system model takes: a refresh policy or
    "analytical")."""

    def one(p: DramPreset) -> DramPreset:
        return replace(p, org=replace(p.org, channels=1))

    l3_rank = PIM_BANDWIDTH * 1e12 / (CHANNELS * RANKSETS)
    return [
        (
            "L3 bank-level (all-bank PUs), one rank",
            one(pim_view(DDR4_3200, "all_bank")),
            32 << 20,
            l3_rank,
            "L3 §6.1: 13.0 TB/s over 16 ch x 4 ranks; postponed refresh per §4.4",
            "postpone",
        ),
        (
            "L3 bank-level with tFAW on the all-bank ACT",
            one(pim_view(DDR4_3200, "all_bank", True)),
            32 << 20,
            l3_rank,
            "as above (the tFAW switch)",
            "postpone",
        ),
        (
            "L3 rank-level (R-PIM baseline), one rank's bus",
            one(replace(DDR4_3200, org=replace(DDR4_3200.org, ranks=1))),
            8 << 20,
            25.6e9,
            "L3 Table 2: DDR4-3200, 25.6 GB/s; the R-PIM baseline "
            "takes 1/8 of this bus derated by the bank-level row's efficiency, not this stream's",
            "postpone",
        ),
        (
            "Duplex bank-bundle, one pseudo-channel",
            one(pim_view(HBM3, "bank_bundle")),
            8 << 20,
            PC_BANDWIDTH * 1e9,
            "Duplex §IV-C: 4 x 20.8 GB/s; no refresh scheme named: the default",
            "on-time",
        ),
        (
            "Hermes rank-level, one NDP-DIMM",
            pim_view(DDR4_3200_HERMES, "rank_level"),
            8 << 20,
            None,
            "not stated (Hermes notes: 4 ranks x 25.6 GB/s derived)",
            "analytical",
        ),
    ]


@functools.cache
def pim_refresh_table() -> list[tuple[str, float | None, str, str, float, dict[str, float | None]]]:
    """Per PIM mode: (name, paper B/s, source, what the model uses, peak B/s, {policy or "analytical": B/s,
    None where the preset has no such refresh})."""
    out = []
    for name, view, nbytes, paper, src, used in pim_modes():
        trace = streaming_trace(view, nbytes)
        bw = {
            pol: None if pol == "per-bank" and not view.timing.trfc_pb else simulate(view, trace, refresh=pol).bandwidth
            for pol in REFRESH
        }
        bw["analytical"] = analytical_bw(view, "streaming")
        out.append((name, paper, src, used, view.peak_bw(), bw))
    return out


def aggregates() -> list[tuple[str, float, ledger.Claim, str, str]]:
    """The papers' aggregate PIM bandwidths against the access modes' peak: (what, model, the paper's claim,
    unit, source). L3's and Duplex's per-PC rows are identities (the peak is arithmetic of the stated
    organisation); the per-stack row is the Duplex section's input."""
    l3 = replace(DDR4_3200, org=replace(DDR4_3200.org, channels=CHANNELS, ranks=RANKSETS))
    duplex_pc = replace(HBM3, org=replace(HBM3.org, channels=1))
    return [
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


def claims(ctx: object = None) -> list[ledger.Row]:
    """The ledger rows of :func:`aggregates` (the per-stack row is an input the Duplex section records)."""
    return [ledger.evaluate(claim, model) for _, model, claim, _, _ in aggregates()[:2]]
