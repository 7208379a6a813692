"""A passive checker for the DRAM engine's command log: replays it (:data:`sysmodel.memory.LOG_FIELDS`)
against every timing constraint of the preset, independently of the engine's own bookkeeping, in the
spirit of Ramulator 2's per-timing checks. Used by the conformance tests and, on 10^5 random requests per
preset, by ``make fuzz``.

Constraints (cycles; module docstring of :mod:`sysmodel.memory` for the semantics):

* one command per channel per cycle, cycles non-decreasing in the log;
* ACT: bank closed; tRP after its PRE; tRC after its ACT; tRRD_S/L after the rank's ACT; 4 ACTs per tFAW;
  tRFC after the rank's REF, tRFCpb after its bank's REFpb;
* RD/WR: the row open; tRCD after ACT; tCCD_S/L after the rank's column command; data bursts do not
  overlap, and tRTRS apart across ranks; RD tWTR_S/L after the rank's write data; WR's data starts at
  least 2 cycles after the last read data ends (RD->WR = CL + BL + 2 - CWL);
* PRE (and PREA, per open bank): the bank open; tRAS after ACT, tRTP after RD, tWR after write data;
* REF: every bank of the rank closed and tRP after its PRE; REFpb: likewise for its banks;
* tREFI: by every command's cycle a rank (all-bank) or a bank (per-bank) has had at least
  floor(cycle / tREFI) - 9 refreshes when ``refresh`` requires it (JEDEC: at most 8 postponed, and the
  first due one interval in).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from sysmodel.memory import COMMANDS, DramPreset

ACT, PRE, RD, WR, REF, REFPB, PREA = range(len(COMMANDS))
NEVER = -(10**9)
MAX_OWED = 9  # JEDEC: eight postponed refreshes, the ninth due


@dataclass(frozen=True)
class Violation:
    index: int  # row of the log
    cycle: int
    command: str
    constraint: str  # the timing parameter broken, e.g. "tRCD"
    earliest: int  # the first legal cycle

    def __str__(self) -> str:
        return (
            f"log row {self.index}: {self.command} at {self.cycle} breaks {self.constraint} "
            f"(legal from {self.earliest})"
        )


class _Channel:
    """The replay state of one channel."""

    def __init__(self, p: DramPreset) -> None:
        o = p.org
        self.open = np.full((o.ranks, o.banks), -1, np.int64)
        self.act = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.pre = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.rd = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.wr_end = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.pb_ref = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.pb_count = np.zeros((o.ranks, o.banks), np.int64)
        self.ref = np.full(o.ranks, NEVER, np.int64)
        self.ref_count = np.zeros(o.ranks, np.int64)
        self.acts: list[deque[int]] = [deque(maxlen=4) for _ in range(o.ranks)]
        self.last_act = [(NEVER, -1)] * o.ranks  # (cycle, bank group)
        self.last_col = [(NEVER, -1)] * o.ranks
        self.last_wr = [(NEVER, -1)] * o.ranks  # (write data end, bank group)
        self.bus = (NEVER, -1)  # (last burst's data end, rank)
        self.rd_end = NEVER
        self.cycle = NEVER


def check(preset: DramPreset, log: np.ndarray, refresh: bool = True) -> list[Violation]:
    """Every constraint a log breaks (empty: the log is legal). ``refresh``: also require the tREFI rate
    (all-bank or per-bank, whichever the log uses)."""
    o, t = preset.org, preset.timing
    bpg = o.banks_per_group
    slots = bpg if preset.refsb else o.banks
    out: list[Violation] = []
    chans: dict[int, _Channel] = {}
    per_bank = bool(np.any(log["command"] == REFPB))
    for i, e in enumerate(log):
        cyc, ch, r, cmd = int(e["cycle"]), int(e["channel"]), int(e["rank"]), int(e["command"])
        bg, b, row = int(e["bankgroup"]), int(e["bank"]), int(e["row"])
        s = chans.setdefault(ch, _Channel(preset))
        bank = bg * bpg + b
        name = COMMANDS[cmd]

        def need(earliest: int, constraint: str, i=i, cyc=cyc, name=name) -> None:
            if cyc < earliest:
                out.append(Violation(i, cyc, name, constraint, int(earliest)))

        need(s.cycle + 1, "one command per cycle")
        s.cycle = cyc
        if refresh and cmd in (ACT, RD, WR):
            due = cyc // t.trefi - MAX_OWED
            if per_bank:
                need(cyc if s.pb_count[r].min() >= due else cyc + 1, "tREFI (per-bank)")
            else:
                need(cyc if s.ref_count[r] >= due else cyc + 1, "tREFI")
        if cmd == ACT:
            if s.open[r, bank] >= 0:
                need(cyc + 1, "bank closed")
            need(s.pre[r, bank] + t.trp, "tRP")
            need(s.act[r, bank] + t.trc, "tRC")
            last, lbg = s.last_act[r]
            need(last + (t.trrd_l if lbg == bg else t.trrd_s), "tRRD_L" if lbg == bg else "tRRD_S")
            if len(s.acts[r]) == 4:
                need(s.acts[r][0] + t.tfaw, "tFAW")
            need(s.ref[r] + t.trfc, "tRFC")
            need(s.pb_ref[r, bank] + t.trfc_pb, "tRFCpb")
            s.open[r, bank], s.act[r, bank] = row, cyc
            s.acts[r].append(cyc)
            s.last_act[r] = (cyc, bg)
        elif cmd in (RD, WR):
            if s.open[r, bank] != row:
                need(cyc + 1, "row open")
            need(s.act[r, bank] + t.trcd, "tRCD")
            last, lbg = s.last_col[r]
            need(last + (t.tccd_l if lbg == bg else t.tccd_s), "tCCD_L" if lbg == bg else "tCCD_S")
            lat = t.cl if cmd == RD else t.cwl
            end, brank = s.bus
            need(end - lat, "data bus")
            if brank not in (-1, r):
                need(end + t.trtrs - lat, "tRTRS")
            if cmd == RD:
                wend, wbg = s.last_wr[r]
                need(wend + (t.twtr_l if wbg == bg else t.twtr_s), "tWTR_L" if wbg == bg else "tWTR_S")
                s.rd[r, bank] = cyc
                s.rd_end = cyc + t.cl + t.bl
            else:
                need(s.rd_end + 2 - t.cwl, "RD->WR turnaround")
                s.wr_end[r, bank] = cyc + t.cwl + t.bl
                s.last_wr[r] = (cyc + t.cwl + t.bl, bg)
            s.last_col[r] = (cyc, bg)
            s.bus = (cyc + lat + t.bl, r)
        elif cmd in (PRE, PREA):
            for k in range(o.banks) if cmd == PREA else (bank,):
                if s.open[r, k] < 0:
                    if cmd == PRE:
                        need(cyc + 1, "bank open")
                    continue
                need(s.act[r, k] + t.tras, "tRAS")
                need(s.rd[r, k] + t.trtp, "tRTP")
                need(s.wr_end[r, k] + t.twr, "tWR")
                s.open[r, k], s.pre[r, k] = -1, cyc
        elif cmd == REF:
            if (s.open[r] >= 0).any():
                need(cyc + 1, "banks closed")
            need(int(s.pre[r].max()) + t.trp, "tRP")
            need(s.ref[r] + t.trfc, "tRFC")
            s.ref[r] = cyc
            s.ref_count[r] += 1
            s.pb_count[r] += 1
        elif cmd == REFPB:
            banks = [k for k in range(o.banks) if k % slots == (bank if slots == o.banks else b)]
            for k in banks:
                if s.open[r, k] >= 0:
                    need(cyc + 1, "banks closed")
                need(s.pre[r, k] + t.trp, "tRP")
                need(s.pb_ref[r, k] + t.trfc_pb, "tRFCpb")
                s.pb_ref[r, k] = cyc
                s.pb_count[r, k] += 1
    return out
