"""DRAM/HBM timing engine: per-bank state, bank groups, ranks, channels, an open-page FR-FCFS controller,
refresh, and the PIM access modes of L3, Duplex and Hermes; plus a fast analytical model for sweeps.

Engine semantics (all times in controller clock cycles, tCK):

* Address map (low to high, above the burst offset): channel, bank group, column, bank, rank, row — a
  sequential stream alternates bank groups (tCCD_S apart) and stays in a row (row hits).
* One command per channel per cycle. ACT needs the bank closed, tRP after its PRE, tRC after its last
  ACT, tRRD_S/L after the rank's last ACT (other/same bank group) and at most 4 ACTs per tFAW. RD/WR need
  the row open tRCD ago and tCCD_S/L after the rank's last column command (other/same bank group). The
  data bus carries one burst at a time. Turnarounds, from JEDEC DDR4 (JESD79-4, AL = 0: RL = CL,
  WL = CWL; BL/2 = ``bl``, the bus cycles of a BL8 burst):

  - RD->WR, any rank: RL + BL/2 - WL + 2 tCK (JESD79-4's "READ to WRITE command delay" with the 1 tCK
    write preamble; the 2 tCK hold the read postamble and write preamble apart on the shared DQS): 12 on
    DDR4-3200. Ramulator 2 has the same (nCL + nBL + 2 - nCWL); DRAMsim3 has RL + BL/2 - WL + tRTRS, 11
    with its tRTRS of 1: the textbook form (Jacob et al., *Memory Systems*), not JEDEC's. The DDR5 and
    HBM3 presets take the same formula; their own (Ramulator 2: 2 tCK more on DDR5 for its longer write
    preamble, a tRTW parameter on HBM3) are not modelled: no report stream writes.
  - WR->RD, same rank: WL + BL/2 + tWTR_S/L (tWTR counts from the end of the write data), from every
    earlier write: tWTR_L from the last write to the same bank group even when one to another bank group
    came since (until issue 52 only the rank's last write counted; the replay checker found it).
  - across ranks: JESD79-4 defines no rank-to-rank spacing; tRTRS (a controller/board allowance, as
    DRAMsim3's and Ramulator 2's nCS) separates a read's data from the next burst of another rank (RD->RD,
    RD->WR, WR->RD), where the bus passes from one device's drivers to another's. WR->WR across ranks
    adds nothing: the controller drives both bursts (DRAMsim3's write_to_write_o is BL/2; Ramulator 2
    has only its channel-level nBL).

  PRE needs tRAS after ACT, tRTP after RD, tWR after write data.
* FR-FCFS: among queued requests (a window of ``queue`` oldest), the command that can issue earliest
  wins; ties go to row hits, then to the oldest. A bank with queued hits to its open row is not
  precharged for another request. ``age_cap`` (cycles; off by default: DRAMsim3's and Ramulator 2's FR-FCFS
  have none): once the oldest request has waited that long, only its commands are chosen (its bank is
  closed even if others hit its open row) until it is served, so a stream that keeps winning cannot
  starve it. A cap in cycles rather than, as FR-FCFS+Cap (Mutlu and Moscibroda, MICRO 2007), in younger
  row hits let past it.
* Refresh, a policy of :data:`REFRESH` (``refresh=`` of :func:`simulate`):

  - ``on-time`` (the default): an all-bank REF per rank every tREFI, staggered across the ranks (rank r
    first at (r+1)/ranks x tREFI), issued before any command that would go after it is due. This is the
    JEDEC baseline (DDR4 JESD79-4, DDR5 JESD79-5, HBM3 JESD238 all define REFab at tREFI) and the default
    of DRAMsim3 (``RANK_LEVEL_STAGGERED``) and Ramulator 2 (its ``AllBank`` refresh manager).
  - ``postpone``: the earlier engine's policy, kept for comparison: a due REF is postponed while the rank
    has queued row hits, at most ``max_postpone`` intervals (JEDEC allows 8), then every owed REF issues
    back to back. Every rank falls due at once (not staggered) and the ranks are refreshed one at a time.
    A due REF is seen when a command issues past it; the last one allowed to wait (the ninth owed) and
    one the channel would stay idle a whole tREFI past are seen at their due time, as on-time's (until
    issue 52 the first came late and an idle gap skipped REFs; the replay checker found both).
  - ``per-bank`` (presets with ``trfc_pb``): REFpb to one bank (HBM3) or REFsb to the same bank of every
    bank group (DDR5) in round robin, tREFI / (commands per round) apart, staggered across ranks; only the
    refreshed banks wait tRFCpb/tRFCsb. tRREFD (REFpb to ACT of another bank) is not modelled.
  - ``none``.

  Before a REF the refreshed banks close: one PREA for an all-bank REF, a PRE per open bank (one command
  per cycle) for REFpb; the REF follows tRP after the last precharge.
* A read completes when its last data beat arrives (RD + CL + BL), a write when its data is sent.
* Command log (``log=True``): one row per command (:data:`LOG_FIELDS`, codes :data:`COMMANDS`) in issue
  order; :mod:`sysmodel.engines.memory_check` replays it against every timing constraint.

The engine is compiled with numba (about 10^6 requests/s on one core; the pure-Python engine it replaced,
at commit 52d6dd2, ran 7-20 x 10^3 and gave the same command log under ``postpone`` except that it closed
the banks before a REF with per-bank PREs that could share a cycle).

PIM modes reuse the same engine on a transformed organisation (:func:`pim_view`): all-bank (L3 bank
PUs: every bank of every chip of a rank reads 8 B per tCCD_L in lock step), bank-bundle (Duplex: 8
banks of a pseudo-channel, two per bank group, 512 bits per bank group per tCCD_L; each bundle a bank of
its rank), rank-level (Hermes NDP: every rank of a channel is its own bus to the DIMM buffer chip).
:func:`sysmodel.designs.pim.pim_refresh_table` streams each mode under every refresh policy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class DramTiming:
    """JEDEC-style timings in tCK cycles. ``bl`` is the data-bus cycles of one burst (BL8 on DDR = 4)."""

    tck_ns: float
    bl: int
    cl: int
    cwl: int
    trcd: int
    trp: int
    tras: int
    trc: int
    tccd_s: int
    tccd_l: int
    trrd_s: int
    trrd_l: int
    tfaw: int
    twtr_s: int
    twtr_l: int
    twr: int
    trtp: int
    trfc: int
    trefi: int
    trtrs: int  # rank-to-rank data-bus turnaround (not a JEDEC parameter: simulator/ODT switch allowance)
    trfc_pb: int = 0  # same-bank / per-bank refresh (tRFCsb on DDR5, tRFCpb on HBM3); 0: the standard has none


@dataclass(frozen=True)
class DramOrg:
    channels: int
    ranks: int
    bankgroups: int
    banks_per_group: int
    rows: int
    columns: int  # bursts per row (per bank)
    burst_bytes: int  # bytes one burst moves over the channel's data bus

    @property
    def banks(self) -> int:
        return self.bankgroups * self.banks_per_group


@dataclass(frozen=True)
class DramPreset:
    name: str
    org: DramOrg
    timing: DramTiming
    source: str
    chips_per_rank: int = 8  # x8 devices on a 64-bit DDR rank
    refsb: bool = False  # per-bank refresh is DDR5's REFsb: the same bank of every bank group at once

    def peak_bw(self) -> float:
        """Bytes/s over all channels: one burst per ``bl`` cycles per channel."""
        return self.org.channels * self.org.burst_bytes / (self.timing.bl * self.timing.tck_ns * 1e-9)


DDR4_3200 = DramPreset(
    "ddr4-3200",
    DramOrg(channels=1, ranks=2, bankgroups=4, banks_per_group=4, rows=65536, columns=128, burst_bytes=64),
    DramTiming(
        tck_ns=0.625,
        bl=4,
        cl=22,
        cwl=16,
        trcd=22,
        trp=22,
        tras=52,
        trc=74,
        tccd_s=4,
        tccd_l=8,
        trrd_s=4,
        trrd_l=8,
        tfaw=34,
        twtr_s=4,
        twtr_l=12,
        twr=24,
        trtp=12,
        trfc=560,
        trefi=12480,
        trtrs=1,
    ),
    "L3 Table 2 (DDR4-3200 x8); tFAW, tRFC, tREFI, tRTRS, rows from DRAMsim3 DDR4_8Gb_x8_3200 (shared/notes §1.2)",
)
DDR4_3200_HERMES = replace(
    DDR4_3200,
    name="ddr4-3200-hermes",
    org=replace(DDR4_3200.org, ranks=4, bankgroups=2),
    timing=replace(DDR4_3200.timing, cl=24, trcd=24, trp=24, trc=76, trrd_l=6, tfaw=26),
    source="Hermes Table II (DDR4-3200 NDP-DIMM: 4 ranks/DIMM, 2 BG x 4 banks; tRC 76, tRCD/CL/tRP 24, tCCD 4/8, "
    "tRRD 4/6, tFAW 26); tRAS = tRC - tRP; CWL, tWTR, tWR, tRTP, tRFC, tREFI, tRTRS from DRAMsim3 DDR4-3200",
)
DDR5_4800 = DramPreset(
    "ddr5-4800",
    DramOrg(channels=2, ranks=1, bankgroups=8, banks_per_group=4, rows=65536, columns=128, burst_bytes=64),
    DramTiming(
        tck_ns=0.4167,
        bl=8,
        cl=40,
        cwl=38,
        trcd=39,
        trp=39,
        tras=77,
        trc=116,
        tccd_s=8,
        tccd_l=12,
        trrd_s=8,
        trrd_l=12,
        tfaw=32,
        twtr_s=6,
        twtr_l=24,
        twr=72,
        trtp=18,
        trfc=708,
        trefi=9360,
        trtrs=2,
        trfc_pb=312,
    ),
    "[EXT] JEDEC JESD79-5 DDR5-4800B 16Gb x8 typical values; one DIMM = two 32-bit subchannels, BL16; tRTRS "
    "2 [S] (not a JEDEC parameter; simulators use 1-2); tRFCsb 130 ns (16Gb)",
    refsb=True,
)
HBM3 = DramPreset(
    "hbm3",
    DramOrg(channels=32, ranks=2, bankgroups=4, banks_per_group=4, rows=16384, columns=32, burst_bytes=32),
    DramTiming(
        tck_ns=0.769,
        bl=2,
        cl=19,
        cwl=6,
        trcd=19,
        trp=19,
        tras=45,
        trc=63,
        tccd_s=2,
        tccd_l=4,
        trrd_s=2,
        trrd_l=4,
        tfaw=39,
        twtr_s=8,
        twtr_l=11,
        twr=21,
        trtp=8,
        trfc=455,
        trefi=5070,
        trtrs=1,
        trfc_pb=208,
    ),
    "[EXT] AttAcc Ramulator2 HBM3_5.2Gbps / HBM3_8Gb_2R per Duplex §II-D notes: one stack = 16 channels x "
    "2 pseudo-channels (32 here), 32-bit PC, BL4; tRFC 350 ns, tRFCpb 160 ns (Ramulator 2 HBM3 nRFCpb); tRTRS 1 [S] "
    "as DDR4",
    chips_per_rank=1,
)
PRESETS = {p.name: p for p in (DDR4_3200, DDR4_3200_HERMES, DDR5_4800, HBM3)}


def get_preset(name: str) -> DramPreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"preset: unknown {name!r}; allowed: {sorted(PRESETS)}") from None


# --- PIM access modes -----------------------------------------------------------------------------------


def act_spread(t: DramTiming, banks: int) -> int:
    """Cycles from the first to the last of ``banks`` ACTs issued as early as tRRD_S and "at most 4 ACTs
    per tFAW" allow: the extra row-open time of an all-bank ACT when tFAW is enforced."""
    k = banks - 1
    return (k // 4) * t.tfaw + (k % 4) * t.trrd_s


def pim_view(p: DramPreset, mode: str, tfaw: bool = False) -> DramPreset:
    """The organisation a PIM unit sees (same timings; see the module docstring). ``tfaw`` (all-bank only):
    enforce tFAW on the all-bank ACT — its banks open :func:`act_spread` apart, so a row opens that much
    later (tRCD, tRAS, tRC grow by it); off by default, as AttAcc-style PIM models treat the all-bank ACT
    as one command (L3 notes §1.8.4)."""
    o, t = p.org, p.timing
    if mode == "all_bank":  # L3: banks of all chips of a rank in lock step, 8 B per chip per bank per RD
        lockstep = DramOrg(o.channels * o.ranks, 1, 1, 1, o.rows, o.columns, 8 * p.chips_per_rank * o.banks)
        spread = act_spread(t, o.banks) if tfaw else 0
        timing = replace(
            t, bl=t.tccd_l, tccd_s=t.tccd_l, trcd=t.trcd + spread, tras=t.tras + spread, trc=t.trc + spread
        )
        return replace(p, name=f"{p.name}/all-bank{'/tFAW' if tfaw else ''}", org=lockstep, timing=timing)
    if tfaw:
        raise ValueError(f"tfaw: only the all_bank mode enforces it, not {mode!r}")
    if mode == "bank_bundle":  # Duplex: 8 banks (2 per bank group) read 512 bits per bank group per tCCD_L
        # a bundle is one "bank" of its rank, so the rank's REFab covers all its bundles, as on the device
        bundle = DramOrg(o.channels, o.ranks, o.banks // 8, 1, o.rows, o.columns, o.bankgroups * 64)
        return replace(p, name=f"{p.name}/bank-bundle", org=bundle, timing=replace(t, bl=t.tccd_l, tccd_s=t.tccd_l))
    if mode == "rank_level":  # Hermes NDP: each rank streams to the buffer chip on its own bus
        return replace(p, name=f"{p.name}/rank-level", org=replace(o, channels=o.channels * o.ranks, ranks=1))
    raise ValueError(f"mode: unknown {mode!r}; allowed: all_bank, bank_bundle, rank_level")


# --- the engine -----------------------------------------------------------------------------------------


def decode(o: DramOrg, addr: int) -> tuple[int, int, int, int]:
    """(rank, bank index, row, column) of a channel-local burst address (map: module docstring)."""
    bg, a = addr % o.bankgroups, addr // o.bankgroups
    col, a = a % o.columns, a // o.columns
    bk, a = a % o.banks_per_group, a // o.banks_per_group
    rank, a = a % o.ranks, a // o.ranks
    return rank, bg * o.banks_per_group + bk, a % o.rows, col


def encode(o: DramOrg, rank: int, bank: int, row: int, col: int = 0) -> int:
    """The channel-local burst address of (rank, bank index, row, column): :func:`decode`'s inverse."""
    bg, bk = divmod(bank, o.banks_per_group)
    return bg + o.bankgroups * (col + o.columns * (bk + o.banks_per_group * (rank + o.ranks * row)))


REFRESH = ("on-time", "postpone", "per-bank", "none")
DEFAULT_REFRESH = "on-time"  # DRAMsim3's default (rank-staggered) and Ramulator 2's all-bank refresh manager
COMMANDS = ("ACT", "PRE", "RD", "WR", "REF", "REFpb", "PREA")  # codes 0-6 in the command log
LOG_FIELDS = ("cycle", "channel", "rank", "bankgroup", "bank", "row", "command")
_T = (
    "bl",
    "cl",
    "cwl",
    "trcd",
    "trp",
    "tras",
    "trc",
    "tccd_s",
    "tccd_l",
    "trrd_s",
    "trrd_l",
    "tfaw",
    "twtr_s",
    "twtr_l",
    "twr",
    "trtp",
    "trfc",
    "trefi",
    "trtrs",
    "trfc_pb",
)  # the order _channel reads timings in


def _njit(fn):
    """numba's compiler with an on-disk cache (compiled once per machine, a few seconds)."""
    from numba import njit

    return njit(cache=True)(fn)


@functools.cache
def _engine():
    return _njit(_channel)


def _channel(rank, bank, row, write, arrival, tm, ranks, banks, bpg, slots, queue, policy, max_postpone, age_cap, log):
    """One channel's controller (module docstring) over requests in arrival order; returns (done cycle per
    request, refreshes, log entries written, False if ``log`` ran out of room). ``policy``: an index into
    REFRESH; ``slots``: per-bank refresh commands per tREFI (a REFpb covers the banks ``b % slots == s``);
    ``age_cap``: cycles (10^18: no cap).
    Compiled by numba (:func:`_engine`); plain Python runs it too, slowly. One function on purpose: numba
    compiles it into one loop whose controller state (open rows, bank and rank timers, the queue, refresh
    debts) lives in locals; split into helpers, that state crosses calls as arrays or tuples each
    scheduling step. Measured (2026-11-28): split into 16 ``register_jitable`` helpers under 30 lines (the
    state in tuples of arrays and an int64 vector of the scalars), bit-identical (tests/test_memory*.py; done
    cycles, refreshes and logs on seeded random traces over every preset, refresh policy, age cap, queue
    size and log overflow), tb/bench.py's bench_dram workload ran 6.5% (streaming) and 7.5% (strided 128)
    slower, random 1%, 3% in all (best of 11, interleaved with this kernel), and compiled cold in 12.0 s
    instead of 3.8 s: with the window, FR-FCFS choice and candidate timing inlined by numba
    (``inline="always"``) and the helpers compiled without reference counting (``_nrt=False``; with it,
    10x slower), each remaining call passes 7-9 words per array argument; inlining the command issue too
    did not compile in 2.5 minutes, and the state packed into a few 2-3-D arrays ran 44% slower."""
    bl, cl, cwl, trcd, trp, tras, trc, tccd_s, tccd_l = tm[0], tm[1], tm[2], tm[3], tm[4], tm[5], tm[6], tm[7], tm[8]
    trrd_s, trrd_l, tfaw, twtr_s, twtr_l, twr, trtp = tm[9], tm[10], tm[11], tm[12], tm[13], tm[14], tm[15]
    trfc, trefi, trtrs, trfc_pb = tm[16], tm[17], tm[18], tm[19]
    n, cap = rank.shape[0], log.shape[0]
    never, inf = -(10**9), 10**18
    open_row = np.full((ranks, banks), -1, np.int64)
    b_act = np.full((ranks, banks), never, np.int64)
    b_pre = np.full((ranks, banks), never, np.int64)
    b_rd = np.full((ranks, banks), never, np.int64)
    b_wr = np.full((ranks, banks), never, np.int64)  # end of the bank's last write data
    b_busy = np.zeros((ranks, banks), np.int64)  # per-bank refresh
    acts = np.full((ranks, 4), never, np.int64)  # the rank's last four ACTs (tFAW), oldest first
    nacts = np.zeros(ranks, np.int64)
    last_act = np.full(ranks, never, np.int64)
    last_act_bg = np.full(ranks, -1, np.int64)
    last_col = np.full(ranks, never, np.int64)
    last_col_bg = np.full(ranks, -1, np.int64)
    r_wr = np.full(ranks, never, np.int64)  # end of the rank's last write data
    bg_wr = np.full((ranks, banks // bpg), never, np.int64)  # ... per bank group: tWTR_L binds on it
    busy = np.zeros(ranks, np.int64)  # all-bank refresh
    postponed = np.zeros(ranks, np.int64)
    train_at = np.zeros(ranks, np.int64)  # postpone: the first of a rank's back-to-back owed REFs
    train_n = np.zeros(ranks, np.int64)
    next_ref = np.zeros(ranks, np.int64)
    slot = np.zeros(ranks, np.int64)
    interval = trefi if policy != 2 else trefi // slots
    for r in range(ranks):  # postpone: all ranks at tREFI; on-time and per-bank: staggered across ranks
        next_ref[r] = trefi if policy == 1 else interval * (r + 1) // ranks
    bus_free, bus_rank, bus_wr, last_rd_end, cmd_free, refreshes, nlog = 0, -1, False, never, 0, 0, 0
    done = np.full(n, -1, np.int64)
    nxt = np.arange(1, n + 1)  # the pending requests: a linked list in arrival order
    prv = np.arange(-1, n - 1)
    head, left, now = 0, n, 0
    window = np.zeros(queue, np.int64)
    hit = np.zeros((ranks, banks), np.bool_)
    rank_hit = np.zeros(ranks, np.bool_)
    closing = np.zeros(banks, np.bool_)
    while left > 0:
        limit = max(now, arrival[head])
        w, i = 0, head
        while i < n and w < queue and arrival[i] <= limit:
            window[w] = i
            w += 1
            i = nxt[i]
        hit[:, :] = False
        rank_hit[:] = False
        for k in range(w):
            j = window[k]
            if open_row[rank[j], bank[j]] == row[j]:
                hit[rank[j], bank[j]] = True
                rank_hit[rank[j]] = True
        best_when, best_col, best_k, best_cmd = inf, False, -1, -1
        alone = now - arrival[head] >= age_cap  # the oldest request waited age_cap cycles: it alone may go
        for k in range(1 if alone else w):  # FR-FCFS: earliest command, then column commands, then the oldest
            j = window[k]
            r, b, bg = rank[j], bank[j], bank[j] // bpg
            base = max(now, arrival[j], cmd_free, busy[r], b_busy[r, b])
            if open_row[r, b] == row[j]:
                ccd = tccd_l if last_col_bg[r] == bg else tccd_s
                turn = trtrs if bus_rank != -1 and bus_rank != r else 0
                if write[j]:  # no tRTRS after another rank's write: the controller drives both bursts
                    turn = 0 if bus_wr else turn
                    when = max(
                        base, b_act[r, b] + trcd, last_col[r] + ccd, last_rd_end + 2 - cwl, bus_free + turn - cwl
                    )
                    cmd = 3
                else:
                    wtr = max(r_wr[r] + twtr_s, bg_wr[r, bg] + twtr_l)
                    when = max(base, b_act[r, b] + trcd, last_col[r] + ccd, wtr, bus_free + turn - cl)
                    cmd = 2
            elif open_row[r, b] >= 0:  # a bank with queued hits to its open row is not closed
                when = (
                    inf
                    if hit[r, b] and not alone
                    else max(base, b_act[r, b] + tras, b_rd[r, b] + trtp, b_wr[r, b] + twr)
                )
                cmd = 1
            else:
                faw = acts[r, 0] + tfaw if nacts[r] >= 4 else base
                rrd = last_act[r] + (trrd_l if last_act_bg[r] == bg else trrd_s)
                when = max(base, b_pre[r, b] + trp, b_act[r, b] + trc, rrd, faw)
                cmd = 0
            if policy == 1:  # not on a cycle an owed REF of a back-to-back train holds
                q = 0
                while q < ranks:
                    gap = when - train_at[q]
                    if 0 < gap < train_n[q] * trfc and gap % trfc == 0:
                        when += 1
                        q = 0
                    else:
                        q += 1
            col = cmd >= 2
            if when < best_when or (when == best_when and col and not best_col):
                best_when, best_col, best_k, best_cmd = when, col, k, cmd
        due = -1  # on-time and per-bank: the rank whose refresh falls due first, if before the chosen command
        if policy == 0 or policy == 2:
            for q in range(ranks):
                if next_ref[q] <= best_when and (due < 0 or next_ref[q] < next_ref[due]):
                    due = q
        refreshed = False
        for r in range(ranks):
            if policy == 1:  # postpone while the rank has queued row hits, at most max_postpone intervals
                forced = postponed[r] >= max_postpone  # the last REF allowed to wait: due as on-time's
                if now < next_ref[r] and best_when < next_ref[r] + (0 if forced else trefi):
                    continue  # seen when a command issues past it, or at its due time if forced or idle a tREFI
                if rank_hit[r] and not forced:
                    postponed[r] += 1
                    next_ref[r] += trefi
                    continue
                start = max(now, cmd_free, busy[r], next_ref[r])
            elif r == due:
                start = max(next_ref[r], cmd_free, busy[r])
            else:
                continue
            s = slot[r] if policy == 2 else -1
            ready, pre_all = start, never
            for b in range(banks):  # close the banks it refreshes: one PREA, or a PRE per bank
                closing[b] = False
                if s >= 0 and b % slots != s:
                    continue
                ready = max(ready, b_busy[r, b])
                if open_row[r, b] >= 0:
                    pre = max(start, b_act[r, b] + tras, b_rd[r, b] + trtp, b_wr[r, b] + twr)
                    if s >= 0:
                        pre = max(pre, cmd_free, b_busy[r, b])
                        cmd_free = pre + 1
                        if nlog < cap:
                            log[nlog, 0], log[nlog, 1], log[nlog, 2] = pre, r, b // bpg
                            log[nlog, 3], log[nlog, 4], log[nlog, 5] = b % bpg, open_row[r, b], 1
                        nlog += 1
                        b_pre[r, b] = pre
                    open_row[r, b], closing[b] = -1, True
                    pre_all = max(pre_all, pre)
            if s < 0 and pre_all > never:
                if nlog < cap:
                    log[nlog, 0], log[nlog, 1], log[nlog, 2] = pre_all, r, -1
                    log[nlog, 3], log[nlog, 4], log[nlog, 5] = -1, -1, 6
                nlog += 1
                for b in range(banks):
                    if closing[b]:
                        b_pre[r, b] = pre_all
            for b in range(banks):
                if s < 0 or b % slots == s:
                    ready = max(ready, b_pre[r, b] + trp)
            owed = postponed[r] + 1 if policy == 1 else 1
            for k in range(owed):
                if nlog < cap:
                    log[nlog, 0], log[nlog, 1], log[nlog, 4] = ready + k * trfc, r, -1
                    log[nlog, 2] = s // bpg if s >= 0 and slots == banks else -1
                    log[nlog, 3] = s % bpg if s >= 0 else -1
                    log[nlog, 5] = 4 if s < 0 else 5
                nlog += 1
            train_at[r], train_n[r] = ready, owed
            if s < 0:
                busy[r] = ready + owed * trfc
                next_ref[r] += trefi
            else:
                for b in range(banks):
                    if b % slots == s:
                        b_busy[r, b] = ready + trfc_pb
                slot[r] = (s + 1) % slots
                next_ref[r] += interval
            postponed[r] = 0
            cmd_free = ready + 1
            refreshes += owed
            refreshed = True
        if refreshed:  # the refresh changed the banks: choose again
            continue
        j = window[best_k]
        r, b, bg = rank[j], bank[j], bank[j] // bpg
        when = best_when
        cmd_free = when + 1
        if nlog < cap:
            log[nlog, 0], log[nlog, 1], log[nlog, 2] = when, r, bg
            log[nlog, 3], log[nlog, 4], log[nlog, 5] = b % bpg, row[j], best_cmd
        nlog += 1
        if best_cmd == 0:
            open_row[r, b], b_act[r, b] = row[j], when
            if nacts[r] >= 4:
                acts[r, 0], acts[r, 1], acts[r, 2] = acts[r, 1], acts[r, 2], acts[r, 3]
                acts[r, 3] = when
            else:
                acts[r, nacts[r]] = when
                nacts[r] += 1
            last_act[r], last_act_bg[r] = when, bg
        elif best_cmd == 1:
            open_row[r, b], b_pre[r, b] = -1, when
        else:
            last_col[r], last_col_bg[r] = when, bg
            bus_rank, bus_wr = r, best_cmd == 3
            if best_cmd == 2:
                b_rd[r, b] = when
                bus_free = when + cl + bl
                last_rd_end = bus_free
            else:
                bus_free = when + cwl + bl
                b_wr[r, b] = bus_free
                r_wr[r] = bus_free
                bg_wr[r, bg] = bus_free
            done[j] = bus_free
            left -= 1
            if prv[j] >= 0:
                nxt[prv[j]] = nxt[j]
            else:
                head = nxt[j]
            if nxt[j] < n:
                prv[nxt[j]] = prv[j]
        now = when
    return done, refreshes, nlog, nlog <= cap


# --- running traces ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceResult:
    bytes: int
    cycles: int
    seconds: float
    bandwidth: float  # B/s
    refreshes: int
    log: np.ndarray | None = None  # structured: LOG_FIELDS, one row per command, in issue order per channel

    def write_log(self, path) -> None:
        """The command log as CSV (cycle, channel, rank, bankgroup, bank, row, command name)."""
        from sysmodel.outputs import atomic

        if self.log is None:
            raise ValueError("log: the trace ran without log=True")
        with atomic(path) as tmp, open(tmp, "w") as f:
            f.write(",".join(LOG_FIELDS) + "\n")
            for e in self.log:
                f.write(",".join(str(int(e[k])) for k in LOG_FIELDS[:-1]) + f",{COMMANDS[e['command']]}\n")


def policy_index(preset: DramPreset, refresh: bool | str) -> int:
    """``refresh``: a REFRESH policy name, True (the default policy) or False ("none")."""
    name = DEFAULT_REFRESH if refresh is True else "none" if refresh is False else refresh
    if name not in REFRESH:
        raise ValueError(f"refresh: {refresh!r} not allowed; allowed: {', '.join(REFRESH)}")
    if name == "per-bank" and not preset.timing.trfc_pb:
        raise ValueError(
            f"refresh: per-bank not allowed for {preset.name} (its standard has no per-bank refresh); "
            f"allowed: on-time, postpone, none"
        )
    t = preset.timing
    if name != "none" and not t.trfc < t.trefi:
        raise ValueError(f"trefi: {t.trefi} not allowed with refresh; must exceed trfc ({t.trfc})")
    return REFRESH.index(name)


def _check_age_cap(age_cap: int | None) -> None:
    if age_cap is not None and (isinstance(age_cap, bool) or not isinstance(age_cap, (int, np.integer)) or age_cap < 1):
        raise ValueError(f"age_cap: {age_cap!r} not allowed; an integer number of cycles >= 1, or None (no cap)")


def _decode(o: DramOrg, local: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A channel's burst addresses -> (rank, bank index within the rank, row); the lowest bits pick the bank
    group, then the column, the bank in its group, the rank and the row."""
    bg, a = local % o.bankgroups, local // o.bankgroups
    a = a // o.columns
    bk, a = a % o.banks_per_group, a // o.banks_per_group
    return a % o.ranks, bg * o.banks_per_group + bk, (a // o.ranks) % o.rows


def _run_channel(run: Callable, args: tuple, n: int, log: bool) -> tuple[np.ndarray, int, np.ndarray]:
    """The kernel over one channel's ``n`` requests: (done cycle per request, refreshes, log entries); with
    ``log``, rerun with room for twice the entries until the log fits."""
    cap = 4 * n + 1024 if log else 0
    while True:
        buf = np.zeros((cap, 6), np.int64)
        done, r, nlog, fits = run(*args, buf)
        if fits or not log:
            return done, r, buf[:nlog]
        cap = 2 * nlog


def _log_records(entries: np.ndarray, ch: int) -> np.ndarray:
    """One channel's log entries as records of :data:`LOG_FIELDS`, in cycle order."""
    e = entries[np.argsort(entries[:, 0], kind="stable")]  # owed REFs are logged ahead of time
    rec = np.zeros(len(e), dtype=[(f, np.int64) for f in LOG_FIELDS])
    rec["channel"] = ch
    for k, f in enumerate(("cycle", "rank", "bankgroup", "bank", "row", "command")):
        rec[f] = e[:, k]
    return rec


def simulate(
    preset: DramPreset,
    addrs: list[int],
    writes: list[bool] | None = None,
    arrivals: list[int] | None = None,
    queue: int = 32,
    refresh: bool | str = True,
    max_postpone: int = 8,
    log: bool = False,
    age_cap: int | None = None,
) -> TraceResult:
    """Run burst addresses (global: the lowest bits pick the channel) and return achieved bandwidth; with
    ``log`` the command log (``TraceResult.log``). ``refresh``: a policy of :data:`REFRESH` (True: the
    default, :data:`DEFAULT_REFRESH`; False: none). ``age_cap``: FR-FCFS's starvation bound in cycles
    (module docstring; None, the default: no cap)."""
    o = preset.org
    if len(addrs) == 0:
        raise ValueError("addrs: empty trace")
    _check_age_cap(age_cap)
    policy = policy_index(preset, refresh)
    addr_a = np.asarray(addrs, np.int64)
    writes_a = np.zeros(len(addrs), np.bool_) if writes is None else np.asarray(writes, np.bool_)
    arrive = np.zeros(len(addrs), np.int64) if arrivals is None else np.asarray(arrivals, np.int64)
    tm = np.array([getattr(preset.timing, k) for k in _T], np.int64)
    slots = o.banks_per_group if preset.refsb else o.banks
    run = _engine()
    cycles, refs, logs = 0, 0, []
    for ch in range(o.channels):
        sel = np.flatnonzero(addr_a % o.channels == ch)
        if not len(sel):
            continue
        sel = sel[np.argsort(arrive[sel], kind="stable")]
        rank, bank, row = _decode(o, addr_a[sel] // o.channels)
        done, r, entries = _run_channel(
            run,
            (
                rank,
                bank,
                row,
                writes_a[sel],
                arrive[sel],
                tm,
                o.ranks,
                o.banks,
                o.banks_per_group,
                slots,
                queue,
                policy,
                max_postpone,
                10**18 if age_cap is None else age_cap,
            ),
            len(sel),
            log,
        )
        cycles, refs = max(cycles, int(done.max())), refs + int(r)
        if log:
            logs.append(_log_records(entries, ch))
    secs = cycles * preset.timing.tck_ns * 1e-9
    total = len(addrs) * o.burst_bytes
    return TraceResult(total, cycles, secs, total / secs, refs, np.concatenate(logs) if log else None)


def streaming_trace(preset: DramPreset, nbytes: int) -> list[int]:
    return list(range(math.ceil(nbytes / preset.org.burst_bytes)))


def random_trace(preset: DramPreset, n: int, seed: int = 0) -> list[int]:
    import random

    rng = random.Random(seed)
    o = preset.org
    space = o.channels * o.ranks * o.banks * o.rows * o.columns
    return [rng.randrange(space) for _ in range(n)]


def strided_trace(preset: DramPreset, n: int, stride_bursts: int) -> list[int]:
    return [i * stride_bursts for i in range(n)]


# --- analytical model ------------------------------------------------------------------------------------

PATTERNS = ("streaming", "random", "strided")


def pattern_addrs(preset: DramPreset, pattern: str, n: int, stride_bursts: int = 1, seed: int = 0) -> list[int]:
    """Channel-local burst addresses of a pattern (what one channel's controller sees)."""
    one = replace(preset, org=replace(preset.org, channels=1))
    if pattern == "streaming":
        return streaming_trace(one, n * one.org.burst_bytes)
    if pattern == "random":
        return random_trace(one, n, seed)
    if pattern == "strided":
        if stride_bursts < 1:
            raise ValueError(f"stride_bursts: {stride_bursts} not allowed; must be >= 1")
        return strided_trace(one, n, stride_bursts)
    raise ValueError(f"pattern: unknown {pattern!r}; allowed: {', '.join(PATTERNS)}")


@functools.cache  # a pure function of frozen settings, asked per stage shape by a design's cost model (Hermes)
def analytical_bw(
    preset: DramPreset, pattern: str, stride_bursts: int = 1, queue: int = 32, refresh: bool = True
) -> float:
    """Closed-form bandwidth for sweeps, from the pattern's statistics under the address map (decoded
    from its first 512 addresses, no timing simulated): bank groups touched g, banks touched B, bursts per
    row visit h, ranks within a scheduler window R. Cycles per burst:
    column path: one rank alone issues a burst every max(BL, tCCD_S, tCCD_L/g) cycles; when that leaves the
    bus idle and the window holds R > 1 ranks, the scheduler interleaves ranks, paying tRTRS per switch:
    max(single/R, BL + tRTRS); activation max(max(tRRD_S, tFAW/4)/R, tRC/B)/h.
    Refresh (on-time, staggered) costs tRFC/(tREFI x R): while one rank refreshes, the window's other ranks
    keep serving; a stream in one rank at a time (R = 1) stalls for the whole tRFC.
    """
    o, t = preset.org, preset.timing
    addrs = pattern_addrs(preset, pattern, 512, stride_bursts)
    dec = [decode(o, a) for a in addrs]
    g = len({bank // o.banks_per_group for _, bank, _, _ in dec})
    banks = len({(rank, bank) for rank, bank, _, _ in dec})
    visits: dict = {}
    for rank, bank, row, _ in dec:
        visits.setdefault((rank, bank), []).append(row)
    row_visits = sum(1 + sum(a != b for a, b in zip(rows, rows[1:], strict=False)) for rows in visits.values())
    h = len(dec) / row_visits
    windows = [len({d[0] for d in dec[i : i + queue]}) for i in range(len(dec) - queue + 1)]  # it slides
    r = sum(windows) / len(windows)
    single = max(t.bl, t.tccd_s, t.tccd_l / g)
    col = max(single / r, t.bl + t.trtrs) if r > 1 and single > t.bl else single
    act = max(max(t.trrd_s, t.tfaw / 4) / r, t.trc / banks) / h
    ref = 1 - t.trfc / (t.trefi * r) if refresh else 1.0
    return o.channels * o.burst_bytes / (max(col, act) * t.tck_ns * 1e-9) * ref
