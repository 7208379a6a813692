"""DRAM/HBM timing engine: per-bank state, bank groups, ranks, channels, an open-page FR-FCFS controller,
refresh, and the PIM access modes of L3, Duplex and Hermes; plus a fast analytical model for sweeps.

Engine semantics (all times in controller clock cycles, tCK):

* Address map (low to high, above the burst offset): channel, bank group, column, bank, rank, row — a
  sequential stream alternates bank groups (tCCD_S apart) and stays in a row (row hits).
* One command per channel per cycle. ACT needs the bank closed, tRP after its PRE, tRC after its last
  ACT, tRRD_S/L after the rank's last ACT (other/same bank group) and at most 4 ACTs per tFAW. RD/WR need
  the row open tRCD ago and tCCD_S/L after the rank's last column command (other/same bank group); the
  data bus carries one burst at a time, and tRTRS more when the next burst comes from another rank (RD->RD,
  WR->WR and the RD<->WR cases alike, as DRAMsim3's *_o timings); WR->RD waits tWTR_S/L after the write
  data, RD->WR waits CL + BL + 2 - CWL. PRE needs tRAS after ACT, tRTP after RD, tWR after write data.
* FR-FCFS: among queued requests (a window of ``queue`` oldest), the command that can issue earliest
  wins; ties go to row hits, then to the oldest. A bank with queued hits to its open row is not
  precharged for another request.
* Refresh: all-bank REF per rank every tREFI (tRFC long, all banks precharged first); postponed up to
  ``max_postpone`` (JEDEC: 8) intervals while the rank has queued row hits, then every owed refresh is
  issued back to back.
* A read completes when its last data beat arrives (RD + CL + BL), a write when its data is sent.

PIM modes reuse the same engine on a transformed organisation (:func:`pim_view`): all-bank (L3 bank
PUs: every bank of every chip of a rank reads 8 B per tCCD_L in lock step), bank-bundle (Duplex: 8
banks of a pseudo-channel, two per bank group, 512 bits per bank group per tCCD_L), rank-level (Hermes
NDP: every rank of a channel is its own bus to the DIMM buffer chip).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace


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

    def peak_bw(self) -> float:
        """Bytes/s over all channels: one burst per ``bl`` cycles per channel."""
        return self.org.channels * self.org.burst_bytes / (self.timing.bl * self.timing.tck_ns * 1e-9)


DDR4_3200 = DramPreset(
    "ddr4-3200",
    DramOrg(channels=1, ranks=2, bankgroups=4, banks_per_group=4, rows=65536, columns=128, burst_bytes=64),
    DramTiming(tck_ns=0.625, bl=4, cl=22, cwl=16, trcd=22, trp=22, tras=52, trc=74, tccd_s=4, tccd_l=8,
               trrd_s=4, trrd_l=8, tfaw=34, twtr_s=4, twtr_l=12, twr=24, trtp=12, trfc=560, trefi=12480,
               trtrs=1),
    "L3 Table 2 (DDR4-3200 x8); tFAW, tRFC, tREFI, tRTRS, rows from DRAMsim3 DDR4_8Gb_x8_3200 (shared/notes §1.2)")
DDR4_3200_HERMES = DramPreset(
    "ddr4-3200-hermes",
    DramOrg(channels=1, ranks=4, bankgroups=2, banks_per_group=4, rows=65536, columns=128, burst_bytes=64),
    DramTiming(tck_ns=0.625, bl=4, cl=24, cwl=16, trcd=24, trp=24, tras=52, trc=76, tccd_s=4, tccd_l=8,
               trrd_s=4, trrd_l=6, tfaw=26, twtr_s=4, twtr_l=12, twr=24, trtp=12, trfc=560, trefi=12480,
               trtrs=1),
    "Hermes Table II (DDR4-3200 NDP-DIMM: 4 ranks/DIMM, 2 BG x 4 banks; tRC 76, tRCD/CL/tRP 24, tCCD 4/8, "
    "tRRD 4/6, tFAW 26); tRAS = tRC - tRP; CWL, tWTR, tWR, tRTP, tRFC, tREFI, tRTRS from DRAMsim3 DDR4-3200")
DDR5_4800 = DramPreset(
    "ddr5-4800",
    DramOrg(channels=2, ranks=1, bankgroups=8, banks_per_group=4, rows=65536, columns=128, burst_bytes=64),
    DramTiming(tck_ns=0.4167, bl=8, cl=40, cwl=38, trcd=39, trp=39, tras=77, trc=116, tccd_s=8, tccd_l=12,
               trrd_s=8, trrd_l=12, tfaw=32, twtr_s=6, twtr_l=24, twr=72, trtp=18, trfc=708, trefi=9360,
               trtrs=2),
    "[EXT] JEDEC JESD79-5 DDR5-4800B 16Gb x8 typical values; one DIMM = two 32-bit subchannels, BL16; tRTRS "
    "2 [S] (not a JEDEC parameter; simulators use 1-2)")
HBM3 = DramPreset(
    "hbm3",
    DramOrg(channels=32, ranks=2, bankgroups=4, banks_per_group=4, rows=16384, columns=32, burst_bytes=32),
    DramTiming(tck_ns=0.769, bl=2, cl=19, cwl=6, trcd=19, trp=19, tras=45, trc=63, tccd_s=2, tccd_l=4,
               trrd_s=2, trrd_l=4, tfaw=39, twtr_s=8, twtr_l=11, twr=21, trtp=8, trfc=455, trefi=5070,
               trtrs=1),
    "[EXT] AttAcc Ramulator2 HBM3_5.2Gbps / HBM3_8Gb_2R per Duplex §II-D notes: one stack = 16 channels x "
    "2 pseudo-channels (32 here), 32-bit PC, BL4; tRFC 350 ns; tRTRS 1 [S] as DDR4", chips_per_rank=1)
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
        timing = replace(t, bl=t.tccd_l, tccd_s=t.tccd_l, trcd=t.trcd + spread, tras=t.tras + spread,
                         trc=t.trc + spread)
        return replace(p, name=f"{p.name}/all-bank{'/tFAW' if tfaw else ''}", org=lockstep, timing=timing)
    if tfaw:
        raise ValueError(f"tfaw: only the all_bank mode enforces it, not {mode!r}")
    if mode == "bank_bundle":  # Duplex: 8 banks (2 per bank group) read 512 bits per bank group per tCCD_L
        bundle = DramOrg(o.channels, o.ranks * (o.banks // 8), 1, 1, o.rows, o.columns,
                         o.bankgroups * 64)
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


@dataclass
class Request:
    addr: int
    write: bool = False
    arrival: int = 0
    done: int = -1


@dataclass
class _Bank:
    open_row: int = -1
    act: int = -(10**9)  # last ACT
    pre: int = -(10**9)  # last PRE
    rd: int = -(10**9)  # last RD
    wr_data_end: int = -(10**9)  # end of the last write's data


@dataclass
class _Rank:
    acts: list[int] = field(default_factory=list)  # recent ACT times (tFAW)
    last_act: int = -(10**9)
    last_act_bg: int = -1
    last_col: int = -(10**9)
    last_col_bg: int = -1
    wr_data_end: int = -(10**9)
    wr_bg: int = -1
    next_ref: int = 0
    busy_until: int = 0  # refresh
    postponed: int = 0


class Channel:
    """One channel's controller and devices."""

    def __init__(self, preset: DramPreset, queue: int = 32, max_postpone: int = 8, refresh: bool = True):
        self.p, self.o, self.t = preset, preset.org, preset.timing
        self.queue, self.max_postpone, self.refresh = queue, max_postpone, refresh
        self.banks = [[_Bank() for _ in range(self.o.banks)] for _ in range(self.o.ranks)]
        self.ranks = [_Rank(next_ref=self.t.trefi) for _ in range(self.o.ranks)]
        self.bus_free = 0  # data bus free from
        self.bus_rank = -1  # rank that drove the last burst
        self.last_rd_data_end = -(10**9)
        self.cmd_free = 0  # command bus
        self.refreshes = 0

    def decode(self, addr: int) -> tuple[int, int, int, int]:
        return decode(self.o, addr)

    def _bg(self, bank: int) -> int:
        return bank // self.o.banks_per_group

    def _turnaround(self, rank: int) -> int:
        """tRTRS between bursts of two ranks on the shared data bus (RD->RD, WR->WR, RD<->WR alike)."""
        return self.t.trtrs if self.bus_rank not in (-1, rank) else 0

    def _earliest(self, req: Request, now: int, hits: set) -> tuple[int, str]:
        t = self.t
        rank_i, bank_i, row, _ = self.decode(req.addr)
        rk, bk = self.ranks[rank_i], self.banks[rank_i][bank_i]
        bg = self._bg(bank_i)
        base = max(now, req.arrival, self.cmd_free, rk.busy_until)
        if bk.open_row == row:
            if req.write:
                tt = max(base, bk.act + t.trcd, rk.last_col + (t.tccd_l if rk.last_col_bg == bg else t.tccd_s),
                         self.last_rd_data_end + 2 - t.cwl, self.bus_free + self._turnaround(rank_i) - t.cwl)
                return tt, "WR"
            wtr = t.twtr_l if rk.wr_bg == bg else t.twtr_s
            tt = max(base, bk.act + t.trcd, rk.last_col + (t.tccd_l if rk.last_col_bg == bg else t.tccd_s),
                     rk.wr_data_end + wtr, self.bus_free + self._turnaround(rank_i) - t.cl)
            return tt, "RD"
        if bk.open_row >= 0:
            if (rank_i, bank_i, bk.open_row) in hits:
                return 10**18, "PRE"  # serve the open row's hits first
            return max(base, bk.act + t.tras, bk.rd + t.trtp, bk.wr_data_end + t.twr), "PRE"
        faw = rk.acts[-4] + t.tfaw if len(rk.acts) >= 4 else base
        rrd = rk.last_act + (t.trrd_l if rk.last_act_bg == bg else t.trrd_s)
        return max(base, bk.pre + t.trp, bk.act + t.trc, rrd, faw), "ACT"

    def _issue(self, req: Request, when: int, cmd: str) -> bool:
        """Apply a command; True when it completes the request."""
        t = self.t
        rank_i, bank_i, row, _ = self.decode(req.addr)
        rk, bk = self.ranks[rank_i], self.banks[rank_i][bank_i]
        bg = self._bg(bank_i)
        self.cmd_free = when + 1
        if cmd == "ACT":
            bk.open_row, bk.act = row, when
            rk.acts = (rk.acts + [when])[-4:]
            rk.last_act, rk.last_act_bg = when, bg
            return False
        if cmd == "PRE":
            bk.open_row, bk.pre = -1, when
            return False
        rk.last_col, rk.last_col_bg = when, bg
        self.bus_rank = rank_i
        if cmd == "RD":
            bk.rd = when
            self.bus_free = when + t.cl + t.bl
            self.last_rd_data_end = self.bus_free
            req.done = self.bus_free
        else:
            end = when + t.cwl + t.bl
            self.bus_free = end
            bk.wr_data_end = rk.wr_data_end = end
            rk.wr_bg = bg
            req.done = end
        return True

    def _refresh(self, rank_i: int, now: int) -> int:
        """Precharge the rank and issue every owed refresh back to back; returns when the first issues."""
        t = self.t
        rk = self.ranks[rank_i]
        start = max(now, self.cmd_free, rk.busy_until)
        ready = start
        for bk in self.banks[rank_i]:
            if bk.open_row >= 0:
                pre = max(start, bk.act + t.tras, bk.rd + t.trtp, bk.wr_data_end + t.twr)
                bk.open_row, bk.pre = -1, pre
                ready = max(ready, pre + t.trp)
            ready = max(ready, bk.pre + t.trp)
        owed = rk.postponed + 1
        rk.busy_until = ready + owed * t.trfc
        rk.next_ref += t.trefi
        rk.postponed = 0
        self.cmd_free = ready + 1
        self.refreshes += owed
        return ready

    def run(self, reqs: list[Request]) -> list[Request]:
        pending = sorted(reqs, key=lambda r: r.arrival)
        now = 0
        while pending:
            window = [r for r in pending[: self.queue] if r.arrival <= max(now, pending[0].arrival)]
            hits = set()
            for r in window:
                rank_i, bank_i, row, _ = self.decode(r.addr)
                if self.banks[rank_i][bank_i].open_row == row:
                    hits.add((rank_i, bank_i, row))
            if self.refresh:
                for i, rk in enumerate(self.ranks):
                    if now >= rk.next_ref:
                        if any(h[0] == i for h in hits) and rk.postponed < self.max_postpone:
                            rk.postponed += 1
                            rk.next_ref += self.t.trefi
                        else:
                            self._refresh(i, now)
            best = None
            for age, r in enumerate(window):
                when, cmd = self._earliest(r, now, hits)
                key = (when, cmd not in ("RD", "WR"), age)
                if best is None or key < best[0]:
                    best = (key, r, when, cmd)
            _, r, when, cmd = best
            if self._issue(r, when, cmd):
                pending.remove(r)
            now = when
        return reqs


# --- running traces ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TraceResult:
    bytes: int
    cycles: int
    seconds: float
    bandwidth: float  # B/s
    refreshes: int


def simulate(preset: DramPreset, addrs: list[int], writes: list[bool] | None = None,
             arrivals: list[int] | None = None, queue: int = 32, refresh: bool = True) -> TraceResult:
    """Run burst addresses (global: the lowest bits pick the channel) and return achieved bandwidth."""
    o = preset.org
    if not addrs:
        raise ValueError("addrs: empty trace")
    per_ch: list[list[Request]] = [[] for _ in range(o.channels)]
    for i, a in enumerate(addrs):
        per_ch[a % o.channels].append(Request(a // o.channels, bool(writes and writes[i]),
                                              arrivals[i] if arrivals else 0))
    cycles, refs = 0, 0
    for reqs in per_ch:
        if reqs:
            ch = Channel(preset, queue=queue, refresh=refresh)
            ch.run(reqs)
            cycles = max(cycles, max(r.done for r in reqs))
            refs += ch.refreshes
    secs = cycles * preset.timing.tck_ns * 1e-9
    total = len(addrs) * o.burst_bytes
    return TraceResult(total, cycles, secs, total / secs, refs)


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


def analytical_bw(preset: DramPreset, pattern: str, stride_bursts: int = 1, queue: int = 32,
                  refresh: bool = True) -> float:
    """Closed-form bandwidth for sweeps, from the pattern's statistics under the address map (decoded
    from its first 512 addresses, no timing simulated): bank groups touched g, banks touched B, bursts per
    row visit h, ranks within a scheduler window R. Cycles per burst:
    column path: one rank alone issues a burst every max(BL, tCCD_S, tCCD_L/g) cycles; when that leaves the
    bus idle and the window holds R > 1 ranks, the scheduler interleaves ranks, paying tRTRS per switch:
    max(single/R, BL + tRTRS); activation max(max(tRRD_S, tFAW/4)/R, tRC/B)/h.
    Refresh costs tRFC/(tREFI x ranks): the other ranks keep serving while one refreshes.
    """
    o, t = preset.org, preset.timing
    addrs = pattern_addrs(preset, pattern, 512, stride_bursts)
    dec = [decode(o, a) for a in addrs]
    g = len({bank // o.banks_per_group for _, bank, _, _ in dec})
    banks = len({(rank, bank) for rank, bank, _, _ in dec})
    visits = {}
    for rank, bank, row, _ in dec:
        visits.setdefault((rank, bank), []).append(row)
    row_visits = sum(1 + sum(a != b for a, b in zip(rows, rows[1:], strict=False)) for rows in visits.values())
    h = len(dec) / row_visits
    windows = [len({d[0] for d in dec[i:i + queue]}) for i in range(len(dec) - queue + 1)]  # it slides
    r = sum(windows) / len(windows)
    single = max(t.bl, t.tccd_s, t.tccd_l / g)
    col = max(single / r, t.bl + t.trtrs) if r > 1 and single > t.bl else single
    act = max(max(t.trrd_s, t.tfaw / 4) / r, t.trc / banks) / h
    ref = 1 - t.trfc / (t.trefi * o.ranks) if refresh else 1.0
    return o.channels * o.burst_bytes / (max(col, act) * t.tck_ns * 1e-9) * ref


def report_lines(ctx=None) -> list[str]:
    """Presets and PIM modes: peak, analytical streaming/random, and the papers' aggregates."""
    from sysmodel.report import caption

    lines = [caption("DRAM and HBM presets: peak bandwidth and the analytical model's sustained bandwidth on "
                     "streaming and random reads (one channel or stack)"),
             "| preset | source | peak GB/s | streaming GB/s | random GB/s |",
             "| --- | --- | ---: | ---: | ---: |"]
    for p in PRESETS.values():
        lines.append(f"| {p.name} | {p.source} | {p.peak_bw() / 1e9:.1f} | {analytical_bw(p, 'streaming') / 1e9:.1f}"
                     f" | {analytical_bw(p, 'random') / 1e9:.1f} |")
    from sysmodel import ledger
    from sysmodel.duplex.paper import PC_BANDWIDTH, PEAK_TBS
    from sysmodel.l3.paper import PIM_BANDWIDTH

    l3 = replace(DDR4_3200, org=replace(DDR4_3200.org, channels=16, ranks=4))
    duplex_pc = replace(HBM3, org=replace(HBM3.org, channels=1))
    rows = [("L3 all-bank PIM, 16 ch x 4 ranks DDR4-3200", pim_view(l3, "all_bank").peak_bw() / 1e12, PIM_BANDWIDTH,
             "TB/s", "L3 §6.1 / Table 2"),
            ("Duplex bank-bundle per pseudo-channel", pim_view(duplex_pc, "bank_bundle").peak_bw() / 1e9, PC_BANDWIDTH,
             "GB/s", "Duplex §IV-C (4x of 20.8 GB/s)"),
            ("Duplex bank-bundle per stack", pim_view(HBM3, "bank_bundle").peak_bw() / 1e12, PEAK_TBS, "TB/s",
             "Duplex §IV-C, notes §2.2 (the Duplex section's input)")]
    lines += ["", caption("The papers' PIM aggregate bandwidths against the access modes' peak (paper vs model)"),
              "| PIM aggregate | paper | model | ratio | unit | source |",
              "| --- | ---: | ---: | ---: | --- | --- |"]
    lines += [f"| {n} | {float(paper)} | {model:.2f} | {model / paper:.3f} | {u} | {src} |"
              for n, model, paper, u, src in rows]
    for _, model, claim, _, _ in rows[:2]:  # the third is the Duplex section's input row
        ledger.record(claim, model)
    return lines
