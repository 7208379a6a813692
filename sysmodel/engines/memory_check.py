"""A passive checker for the DRAM engine's command log: replays it (:data:`sysmodel.engines.memory.LOG_FIELDS`)
against the timing rules of the standard, written from the standard's formulas as command-pair minimum
distances (as DRAMsim3's ``timing.cc`` and Ramulator 2's constraint tables state them), not from the
engine's bookkeeping. Used by the conformance tests and, on 10^5 random requests per preset, by
``make fuzz``.

Rules (cycles, tCK; JEDEC DDR4 JESD79-4 with AL = 0, so RL = CL and WL = CWL; BL/2 is ``bl``, the
data-bus cycles of one burst):

* one command per channel per cycle, cycles non-decreasing in the log;
* ACT: bank closed; tRP after its PRE; tRC after its ACT; tRRD_S/L after the rank's ACT; 4 ACTs per tFAW;
  tRFC after the rank's REF, tRFCpb after its bank's REFpb;
* RD/WR: the row open, tRCD after ACT; then for every earlier column command (:func:`column_gaps`):
  RD->WR, any rank, RL + BL/2 - WL + 2 (JESD79-4 "READ to WRITE command delay", 1 tCK write preamble);
  same rank tCCD_S/L and WR->RD WL + BL/2 + tWTR_S/L (tWTR from the end of the write data); across ranks the data
  bursts do not overlap, and a burst after another rank's read, or a read after another rank's write,
  starts tRTRS after its data (JESD79-4 leaves rank-to-rank spacing to the system: tRTRS is the preset's
  allowance); a write after another rank's write needs only the bus;
* PRE (and PREA, per open bank): the bank open; tRAS after ACT, tRTP after RD, WL + BL/2 + tWR after WR;
* REF: every bank of the rank closed and tRP after its PRE; REFpb: likewise for its banks;
* refresh, the policy's own rule (``refresh`` of :func:`check`; the schedules are
  :mod:`sysmodel.engines.memory`'s). A REF falls due, then the rank's banks must close: tRAS, tRTP or
  WL + BL/2 + tWR after the last command before the due time, then tRP (:func:`close_allowance`; one
  cycle more per PRE when a REFpb's banks close one PRE per cycle).

  - ``on-time``: the k-th REF of rank r is due at floor((r + 1) tREFI / ranks) + k tREFI and issues no
    earlier and at most the allowance later; by every command, every REF due an allowance earlier has
    issued. A policy that drifts (each REF a little late on the last) breaks this within a few intervals.
  - ``postpone`` (JESD79-4 "Refresh Command": at most 8 REFs postponed, at most 8 pulled in, at most
    9 tREFI between surrounding REFs): REFs fall due every tREFI, every rank at once, and the ranks are
    refreshed one at a time (the allowance grows by tRP + 1 per other rank: a rank closes its banks after
    the previous rank's REF); at every command, owed REFs (due an allowance earlier, not issued) at most
    8 and REFs ahead of their due time at most 8; consecutive REFs of a rank at most 9 tREFI plus the
    allowance apart.
  - ``per-bank``: as ``on-time`` at tREFI / (commands per round) per REFpb (REFsb on DDR5), and every
    bank refreshed at least every tREFI plus the allowance (the standard's per-bank rule: each bank once
    per tREFI).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from sysmodel.engines.memory import COMMANDS, REFRESH, DramPreset, DramTiming, policy_index

ACT, PRE, RD, WR, REF, REFPB, PREA = range(len(COMMANDS))
NEVER = -(10**9)
MAX_POSTPONED = 8  # JESD79-4 "Refresh Command": at most 8 REFs postponed ...
MAX_PULLED_IN = 8  # ... and at most 8 pulled in
MAX_REF_GAP = 9  # ... so at most 9 x tREFI between surrounding REFs


@dataclass(frozen=True)
class Violation:
    index: int  # row of the log
    cycle: int
    command: str
    constraint: str  # the timing parameter broken, e.g. "tRCD"
    earliest: int  # the first legal cycle; for a deadline, the last
    deadline: bool = False

    def __str__(self) -> str:
        return (
            f"log row {self.index}: {self.command} at {self.cycle} breaks {self.constraint} "
            f"(legal {'until' if self.deadline else 'from'} {self.earliest})"
        )


def column_gaps(t: DramTiming, first: int, second: int, same_rank: bool, same_bg: bool) -> list[tuple[int, str]]:
    """The minimum cycles from column command ``first`` to ``second`` (RD or WR), each with its rule's
    name (module docstring)."""
    rl, wl, half = t.cl, t.cwl, t.bl
    lat = {RD: rl, WR: wl}
    out = [(lat[first] + half - lat[second], "data bus")]  # the two bursts do not overlap
    if (first, second) == (RD, WR):
        out.append((rl + half - wl + 2, "RD->WR (RL + BL/2 - WL + 2)"))
    if same_rank:
        out.append((t.tccd_l if same_bg else t.tccd_s, "tCCD_L" if same_bg else "tCCD_S"))
        if (first, second) == (WR, RD):
            out.append((wl + half + (t.twtr_l if same_bg else t.twtr_s), "tWTR_L" if same_bg else "tWTR_S"))
    elif RD in (first, second):  # the bus passes from one device's drivers to another's
        out.append((lat[first] + half + t.trtrs - lat[second], "tRTRS"))
    return out


def close_allowance(t: DramTiming) -> int:
    """Cycles from a REF's due time to the REF when the rank's banks must first close (module docstring)."""
    return max(t.tras, t.trtp, t.cwl + t.bl + t.twr) + t.trp


class _Channel:
    """The replay state of one channel."""

    def __init__(self, p: DramPreset) -> None:
        o = p.org
        self.open = np.full((o.ranks, o.banks), -1, np.int64)
        self.act = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.pre = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.rd = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.wr = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.pb_ref = np.full((o.ranks, o.banks), NEVER, np.int64)
        self.ref = np.full(o.ranks, NEVER, np.int64)
        self.refs: list[list[int]] = [[] for _ in range(o.ranks)]  # REF or REFpb cycles per rank
        self.acts: list[deque[int]] = [deque(maxlen=4) for _ in range(o.ranks)]
        self.last_act = [(NEVER, -1)] * o.ranks  # (cycle, bank group)
        self.col = [[[NEVER] * o.bankgroups for _ in range(o.ranks)] for _ in (RD, WR)]  # [RD/WR][rank][bg]
        self.cycle = NEVER


class _Refresh:
    """The refresh rule of one policy (module docstring): ``at(...)`` checks it before each command."""

    def __init__(self, p: DramPreset, policy: str) -> None:
        t, o = p.timing, p.org
        self.policy, self.trefi, self.ranks = policy, t.trefi, o.ranks
        cmds = (o.banks_per_group if p.refsb else o.banks) if policy == "per-bank" else 1
        self.interval = t.trefi // cmds  # between one rank's REFs (REFpb under per-bank)
        self.allow = close_allowance(t) + (o.banks // cmds - 1 if policy == "per-bank" else 0)
        if policy == "postpone":  # every rank falls due together; each closes after the previous one's REF
            self.allow += (o.ranks - 1) * (t.trp + 1)

    def due(self, rank: int, k: int) -> int:
        """The k-th REF's due time (the policy's schedule: staggered across ranks but under postpone)."""
        if self.policy == "postpone":
            return (k + 1) * self.trefi
        return self.interval * (rank + 1) // self.ranks + k * self.interval

    def at(self, s: _Channel, cyc: int, rank: int, cmd: int, need, until) -> None:
        """``need(earliest, rule)`` / ``until(latest, rule)`` for a command at ``cyc`` of ``rank``."""
        if self.policy == "none":
            return
        owed = MAX_POSTPONED if self.policy == "postpone" else 0
        for q in range(self.ranks) if cmd not in (REF, REFPB) else ():  # no rank owes more than allowed
            if self.due(q, len(s.refs[q]) + owed) + self.allow < cyc:
                need(cyc + 1, f"tREFI: a rank owes more than {owed} REFs ({self.policy})")
        if self.policy == "per-bank" and cmd not in (REF, REFPB):
            last = int(np.maximum(s.pb_ref, 0).min())
            until(last + self.trefi + self.allow, "tREFI: a bank unrefreshed for tREFI (per-bank)")
        if cmd not in (REF, REFPB):
            return
        k, prev = len(s.refs[rank]), (s.refs[rank][-1] if s.refs[rank] else 0)
        if self.policy == "postpone":
            until(prev + MAX_REF_GAP * self.trefi + self.allow, "tREFI: 9 x tREFI between REFs (postpone)")
            need(self.due(rank, k - MAX_PULLED_IN), "tREFI: more than 8 REFs pulled in (postpone)")
        else:
            need(self.due(rank, k), f"tREFI: REF before its due time ({self.policy})")
            until(self.due(rank, k) + self.allow, f"tREFI: REF late ({self.policy})")
        s.refs[rank].append(cyc)


def check(preset: DramPreset, log: np.ndarray, refresh: bool | str = True) -> list[Violation]:
    """Every rule a log breaks (empty: the log is legal). ``refresh``: the policy the log ran under, a
    name of :data:`sysmodel.engines.memory.REFRESH` (True: the engine's default; False: "none"), whose refresh
    rule is checked."""
    rule = _Refresh(preset, REFRESH[policy_index(preset, refresh)])
    gaps = {
        (a, b, sr, sb): column_gaps(preset.timing, a, b, sr, sb)
        for a in (RD, WR)
        for b in (RD, WR)
        for sr in (False, True)
        for sb in (False, True)
    }
    out: list[Violation] = []
    chans: dict[int, _Channel] = {}
    for i, e in enumerate(log):
        cyc, r, cmd = int(e["cycle"]), int(e["rank"]), int(e["command"])
        s = chans.setdefault(int(e["channel"]), _Channel(preset))

        def need(earliest: int, rule: str, i=i, cyc=cyc, cmd=cmd) -> None:
            if cyc < earliest:
                out.append(Violation(i, cyc, COMMANDS[cmd], rule, int(earliest)))

        def until(latest: int, rule: str, i=i, cyc=cyc, cmd=cmd) -> None:
            if cyc > latest:
                out.append(Violation(i, cyc, COMMANDS[cmd], rule, int(latest), deadline=True))

        need(s.cycle + 1, "one command per cycle")
        s.cycle = cyc
        rule.at(s, cyc, r, cmd, need, until)
        _replay(preset, gaps, s, (cyc, r, int(e["bankgroup"]), int(e["bank"]), int(e["row"]), cmd), need)
    return out


def _replay(preset: DramPreset, gaps: dict, s: _Channel, e: tuple[int, ...], need) -> None:
    """Check one command's timing rules against the channel's state, then apply it."""
    o, t = preset.org, preset.timing
    cyc, r, bg, b, row, cmd = e
    bank = bg * o.banks_per_group + b
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
        for first in (RD, WR):  # the gaps depend on (same rank, same bank group): the latest of each binds
            col, own = s.col[first - RD], s.col[first - RD][r]
            latest = {
                (True, True): own[bg],
                (True, False): max((c for g, c in enumerate(own) if g != bg), default=NEVER),
                (False, False): max((max(x) for q, x in enumerate(col) if q != r), default=NEVER),
            }
            for (same_rank, same_bg), last in latest.items():
                for gap, name in gaps[first, cmd, same_rank, same_bg] if last > NEVER else ():
                    need(last + gap, name)
        (s.rd if cmd == RD else s.wr)[r, bank] = cyc
        s.col[cmd - RD][r][bg] = cyc
    elif cmd in (PRE, PREA):
        for k in range(o.banks) if cmd == PREA else (bank,):
            if s.open[r, k] < 0:
                if cmd == PRE:
                    need(cyc + 1, "bank open")
                continue
            need(s.act[r, k] + t.tras, "tRAS")
            need(s.rd[r, k] + t.trtp, "tRTP")
            need(s.wr[r, k] + t.cwl + t.bl + t.twr, "tWR (WL + BL/2 + tWR)")
            s.open[r, k], s.pre[r, k] = -1, cyc
    else:
        slots = o.banks_per_group if preset.refsb else o.banks
        covered = (
            range(o.banks) if cmd == REF else [k for k in range(o.banks) if k % slots == (b if preset.refsb else bank)]
        )
        for k in covered:
            if s.open[r, k] >= 0:
                need(cyc + 1, "banks closed")
            need(s.pre[r, k] + t.trp, "tRP")
            need(s.pb_ref[r, k] + t.trfc_pb, "tRFCpb")
        if cmd == REF:
            need(s.ref[r] + t.trfc, "tRFC")
            s.ref[r] = cyc
        s.pb_ref[r, list(covered)] = cyc
