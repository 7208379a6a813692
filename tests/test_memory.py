"""The DRAM timing engine against the presets' peaks, the papers' PIM bandwidths, and the analytical model."""

from dataclasses import astuple, replace

import pytest

from sysmodel.designs import pim
from sysmodel.designs.l3.paper import CHANNELS, RANKSETS
from sysmodel.engines import memory as mm


def one_channel(p: mm.DramPreset, **org) -> mm.DramPreset:
    return replace(p, org=replace(p.org, channels=1, **org))


def test_peaks() -> None:
    assert mm.DDR4_3200.peak_bw() == pytest.approx(25.6e9)  # per channel, L3 Table 2
    assert mm.DDR4_3200_HERMES.peak_bw() == pytest.approx(25.6e9)  # Hermes Table II
    assert mm.get_preset("ddr5-4800").peak_bw() == pytest.approx(2 * 19.2e9, rel=1e-3)
    assert mm.HBM3.peak_bw() == pytest.approx(666e9, rel=0.01)  # one stack (Duplex notes: 666 GB/s)
    with pytest.raises(ValueError, match="preset: unknown 'ddr3'"):
        mm.get_preset("ddr3")


@pytest.mark.parametrize("name", sorted(mm.PRESETS))
def test_streaming_sustains_near_peak(name: str) -> None:
    """A stream sits in one rank at a time, so on-time refresh stalls it tRFC per tREFI (9% on HBM3)."""
    p = one_channel(mm.PRESETS[name])
    r = mm.simulate(p, mm.streaming_trace(p, 16000 * p.org.burst_bytes))
    t = p.timing
    assert 0.90 * p.peak_bw() * (1 - t.trfc / t.trefi) <= r.bandwidth <= p.peak_bw()
    assert r.bandwidth == pytest.approx(mm.analytical_bw(p, "streaming"), rel=0.05)


def test_refresh_costs_trfc_over_trefi_on_one_rank() -> None:
    p = one_channel(mm.DDR4_3200, ranks=1)
    trace = mm.streaming_trace(p, 40000 * 64)  # ~13 refresh intervals
    on, off = mm.simulate(p, trace), mm.simulate(p, trace, refresh=False)
    due = on.cycles // p.timing.trefi
    assert due - 8 <= on.refreshes <= due  # at most 8 postponed refreshes still owed at the end
    expect = 1 - p.timing.trfc / p.timing.trefi
    assert on.bandwidth / off.bandwidth == pytest.approx(expect, abs=0.02)


def test_tfaw_and_trrd_bound_random_rows() -> None:
    """One rank, every burst a new row: at most 4 ACTs per tFAW, so 4 bursts per tFAW."""
    p = one_channel(mm.DDR4_3200, ranks=1)
    trace = mm.random_trace(p, 3000, seed=5)
    r = mm.simulate(p, trace, refresh=False)
    bound = 4 * 64 / (p.timing.tfaw * p.timing.tck_ns * 1e-9)
    assert 0.85 * bound <= r.bandwidth <= bound * 1.001
    relaxed = replace(p, timing=replace(p.timing, tfaw=0, trrd_s=1, trrd_l=1))
    # without tFAW/tRRD the limit moves to tRC over 16 banks (~4.6 cycles per row) and the column path
    assert mm.simulate(relaxed, trace, refresh=False).bandwidth > 1.3 * r.bandwidth


@pytest.mark.parametrize("name", sorted(mm.PRESETS))
@pytest.mark.parametrize(
    ("pattern", "stride"),
    [("streaming", 1), ("random", 1), ("strided", 4), ("strided", 16), ("strided", 64), ("strided", 256)],
)
def test_engine_agrees_with_analytical(name: str, pattern: str, stride: int) -> None:
    """Tolerance 15%: most points agree within 5%; the worst (Hermes DDR4, stride 16) is 13% — FR-FCFS
    keeps two ranks busy more often than the analytical sliding-window average (refresh off in both:
    it is tested on its own above)."""
    p = one_channel(mm.PRESETS[name])
    r = mm.simulate(p, mm.pattern_addrs(p, pattern, 3000, stride), refresh=False)
    assert r.bandwidth == pytest.approx(mm.analytical_bw(p, pattern, stride, refresh=False), rel=0.15)


def test_l3_all_bank_aggregate() -> None:
    """L3: 16 channels x 4 ranks of DDR4-3200 x8, every bank of every chip 8 B per tCCD_L: ~13 TB/s
    (paper: 13.0 TB/s, L3 Table 2 / §6.1); rows cost about tRC per 128 bursts."""
    l3 = replace(mm.DDR4_3200, org=replace(mm.DDR4_3200.org, channels=CHANNELS, ranks=RANKSETS))
    pim = mm.pim_view(l3, "all_bank")
    assert pim.peak_bw() / 1e12 == pytest.approx(13.0, rel=0.01)
    rank = one_channel(pim)
    r = mm.simulate(rank, mm.streaming_trace(rank, 8 * 128 * rank.org.burst_bytes), refresh=False)
    assert 0.88 <= r.bandwidth / rank.peak_bw() <= 0.97  # ACT/PRE overhead, not hidden in lock step


def test_all_bank_tfaw_switch() -> None:
    """With tFAW enforced, 16 bank ACTs go 4 per tFAW, tRRD_S apart: the last one 3 tFAW + 3 tRRD_S
    after the first; the row opens that much later and the stream loses bandwidth."""
    t = mm.DDR4_3200.timing
    assert mm.act_spread(t, 16) == 3 * t.tfaw + 3 * t.trrd_s
    assert mm.act_spread(t, 1) == 0
    free, faw = (one_channel(mm.pim_view(mm.DDR4_3200, "all_bank", tfaw)) for tfaw in (False, True))
    assert faw.timing.trcd - free.timing.trcd == mm.act_spread(t, 16)
    bw = [
        mm.simulate(v, mm.streaming_trace(v, 8 * 128 * v.org.burst_bytes), refresh=False).bandwidth for v in (free, faw)
    ]
    assert bw[1] < bw[0]
    with pytest.raises(ValueError, match="tfaw: only the all_bank mode"):
        mm.pim_view(mm.HBM3, "bank_bundle", tfaw=True)


def test_duplex_bank_bundle_is_4x_per_pseudo_channel() -> None:
    """Duplex §IV-C: 512 bits per bank group per tCCD_L from 8 banks vs 256 bits per tCCD_S: 4x."""
    pc, bundle = one_channel(mm.HBM3), one_channel(mm.pim_view(mm.HBM3, "bank_bundle"))
    assert bundle.peak_bw() / pc.peak_bw() == pytest.approx(4.0)
    assert bundle.peak_bw() / 1e9 == pytest.approx(83.2, rel=0.01)  # notes §2.2: 83.2 GB/s per PC
    n = 4 * 32 * bundle.org.ranks
    got = mm.simulate(bundle, mm.streaming_trace(bundle, n * bundle.org.burst_bytes), refresh=False)
    ref = mm.simulate(pc, mm.streaming_trace(pc, 4 * n * bundle.org.burst_bytes), refresh=False)
    assert got.bandwidth / ref.bandwidth >= 3.4


def test_hermes_rank_level_parallelism() -> None:
    """Hermes NDP (Table II: 4 ranks per DIMM): each rank streams to the buffer chip on its own bus."""
    dimm = mm.DDR4_3200_HERMES
    ndp = mm.pim_view(dimm, "rank_level")
    assert ndp.peak_bw() == pytest.approx(4 * dimm.peak_bw())
    r = mm.simulate(ndp, mm.streaming_trace(ndp, 8000 * 64), refresh=False)
    assert r.bandwidth >= 0.9 * ndp.peak_bw()


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="mode: unknown 'x'"):
        mm.pim_view(mm.DDR4_3200, "x")
    with pytest.raises(ValueError, match="pattern: unknown 'zigzag'"):
        mm.analytical_bw(mm.DDR4_3200, "zigzag")
    with pytest.raises(ValueError, match="stride_bursts: 0 not allowed"):
        mm.analytical_bw(mm.DDR4_3200, "strided", 0)
    with pytest.raises(ValueError, match="addrs: empty trace"):
        mm.simulate(mm.DDR4_3200, [])


def test_report_section() -> None:
    from sysmodel.report.memory import memory_lines

    lines = memory_lines()
    assert any(ln.startswith("| L3 all-bank PIM") and "| 13.0 | 13.11 |" in ln for ln in lines)


def test_rank_switching_costs_trtrs() -> None:
    """Stride 128 bursts stay in one bank group and alternate ranks (tCCD_L = 8 blocks back-to-back bursts
    of one rank), so every burst pays BL + tRTRS = 5 cycles: 4/5 of single-rank bank-group-alternating
    streaming. Engine and analytical model agree."""
    p = mm.DDR4_3200
    stream = mm.simulate(p, mm.streaming_trace(p, 4000 * 64), refresh=False).bandwidth
    strided = mm.simulate(p, mm.strided_trace(p, 4000, 128), refresh=False).bandwidth
    t = p.timing
    assert strided / stream == pytest.approx(t.bl / (t.bl + t.trtrs), rel=0.02)
    assert mm.analytical_bw(p, "strided", 128, refresh=False) == pytest.approx(strided, rel=0.02)
    no_rtrs = replace(p, timing=replace(t, trtrs=0))
    assert mm.simulate(no_rtrs, mm.strided_trace(p, 4000, 128), refresh=False).bandwidth > 1.2 * strided


def test_pim_modes_under_each_refresh_policy() -> None:
    """The re-measured PIM table: every mode under every policy it allows; Duplex's efficiency is its
    on-time row, L3's is postponed (§4.4) and above its on-time value; refresh never speeds a stream up."""
    from sysmodel.designs.duplex.model import dram_efficiency as duplex_eff
    from sysmodel.designs.l3.model import dram_efficiency as l3_eff

    table = {name: (used, peak, bw) for name, _, _, used, peak, bw in pim.pim_refresh_table()}
    used, peak, bw = table["Duplex bank-bundle, one pseudo-channel"]
    assert used == "on-time" and bw["on-time"] / peak == duplex_eff()
    assert bw["on-time"] < bw["per-bank"] < bw["none"]
    used, peak, bw = table["L3 bank-level (all-bank PUs), one rank"]
    assert used == "postpone" and bw["on-time"] < bw["postpone"] < bw["none"]
    assert l3_eff() == pytest.approx(bw["postpone"] / peak, rel=0.002)  # two channels there, one here
    for _, _, bw in table.values():
        assert all(v is None or v <= bw["none"] * 1.0001 for k, v in bw.items() if k != "analytical")
    from sysmodel.report.memory import pim_refresh_lines

    lines = pim_refresh_lines()
    assert len([ln for ln in lines if ln.startswith("| ")]) == 2 + len(table)  # header, rule, modes


# Every preset's fields as they were before the variants became replace() of their base (issue 51): org and
# timing in field order, chips_per_rank, refsb (the prose ``source`` aside)
_PRESET_FIELDS = {
    "ddr4-3200": (
        (1, 2, 4, 4, 65536, 128, 64),
        (0.625, 4, 22, 16, 22, 22, 52, 74, 4, 8, 4, 8, 34, 4, 12, 24, 12, 560, 12480, 1, 0),
        8,
        False,
    ),
    "ddr4-3200-hermes": (
        (1, 4, 2, 4, 65536, 128, 64),
        (0.625, 4, 24, 16, 24, 24, 52, 76, 4, 8, 4, 6, 26, 4, 12, 24, 12, 560, 12480, 1, 0),
        8,
        False,
    ),
    "ddr5-4800": (
        (2, 1, 8, 4, 65536, 128, 64),
        (0.4167, 8, 40, 38, 39, 39, 77, 116, 8, 12, 8, 12, 32, 6, 24, 72, 18, 708, 9360, 2, 312),
        8,
        True,
    ),
    "hbm3": (
        (32, 2, 4, 4, 16384, 32, 32),
        (0.769, 2, 19, 6, 19, 19, 45, 63, 2, 4, 2, 4, 39, 8, 11, 21, 8, 455, 5070, 1, 208),
        1,
        False,
    ),
}


def test_presets_keep_their_fields() -> None:
    got = {n: (astuple(p.org), astuple(p.timing), p.chips_per_rank, p.refsb) for n, p in mm.PRESETS.items()}
    assert got == _PRESET_FIELDS
