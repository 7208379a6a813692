"""Cycle models of L3's rank PU units (L3 §4.3, §6.4), in plain Python: the re-layout unit, the bank PU,
the adder unit, the chunk softmax unit (SU) and the rank that composes them.

The RTL (``hw/l3/*.py``) sizes its pipelines from these depths, the testbenches assert the functions cycle
for cycle, and the system model (``sysmodel/designs/l3/model.py``) prices a head with :func:`run_cycles` without
loading Amaranth. The depths built on the FP latencies are functions reading ``hw.arith.cycles`` when called
(not names bound at import), so a formal instance with shorter FP pipelines
(``tb.formal.abstract.fp_latency``) sizes the RTL and replays the control with the same numbers.
"""

from __future__ import annotations

import math

from golden.l3_spec import (
    BEATS_PER_BURST,
    CHIPS,
    FULL,
    MAX_TOKENS,
    RD_INTERVAL,
    V_GROUPS,
    WINDOW_BEATS,
    Geometry,
    Mode,
)
from hw.arith import cycles as arith

RELAYOUT_LATENCY = 3  # the re-layout unit: beat in, transposed beat out
ADDER_LEVELS = (CHIPS - 1).bit_length()  # 3: one FP16 adder level per halving of the chips


def bank_pu_latency(mode: Mode) -> int:
    """A bank PU step: the multiply, then score: the two tree levels and the accumulation; context: the
    accumulation (8 / 4 at full latency)."""
    return arith.FPMUL + (3 if mode == Mode.SCORE else 1) * arith.FPADD


def adder_latency() -> int:
    return ADDER_LEVELS * arith.FPADD


# Characterization record keys (``unit`` in sysmodel/data/characterization.json): tb writes, sysmodel reads.
UNIT_RELAYOUT = "l3_relayout"
UNIT_BANK_PU = "l3_bank_pu"
UNIT_ADDER = "l3_adder_unit"
UNIT_SOFTMAX = "l3_softmax_unit"
UNIT_RANK = "l3_rank"
UNITS = (UNIT_RELAYOUT, UNIT_BANK_PU, UNIT_ADDER, UNIT_SOFTMAX, UNIT_RANK)
# The paper-size records the System reads (unit -> params): tb's FULL_SPECS measure them, the System's
# ``records=`` requires them and its provenance cites them.
PAPER_RECORDS = {UNIT_RANK: {"banks": FULL.banks, "d_head": FULL.d_head, "max_tokens": 64}}

# --- the chunk softmax unit (hw/l3/softmax_unit.py) ------------------------------------------------------------

MAX_LAT = 1  # fp_max: one register per tree level


def update_cycles() -> int:
    """The running fold: operands registered, then max, subtract, exp, multiply, add (11 at full latency)."""
    return 1 + MAX_LAT + arith.FPADD + arith.FPEXP + arith.FPMUL + arith.FPADD


def norm_depth() -> int:
    """Pass 2's pipeline: buffer read, subtract, exp, two products."""
    return 1 + arith.FPADD + arith.FPEXP + 2 * arith.FPMUL


def chunk_depth(chunk: int) -> int:
    """ChunkStats' pipeline: max tree, subtract, exp, add tree."""
    levels = chunk.bit_length() - 1
    return levels * MAX_LAT + arith.FPADD + arith.FPEXP + levels * arith.FPADD


def su_check_params(chunk: int, max_tokens: int) -> None:
    if chunk < 2 or chunk & (chunk - 1) or chunk > 64:
        raise ValueError(f"chunk: {chunk} not allowed; a power of two from 2 to 64")
    if max_tokens < chunk or max_tokens % chunk:
        raise ValueError(f"max_tokens: {max_tokens} not allowed; a multiple of chunk ({chunk})")


def su_head_cycles(
    n: int,
    chunk: int = 16,
    max_tokens: int = MAX_TOKENS,
    arrivals: list[int] | None = None,
    stalls: list[int] | None = None,
) -> int:
    """Cycles from the first score accepted to the last output accepted for a head of ``n`` scores offered
    one per cycle into a ready sink: a replay of the unit's control, register for register (collector,
    the stall-all ChunkStats pipeline held while the fold is busy, the fold, the reciprocal, pass 2).
    With ``arrivals`` (the cycle, from 0, at which score i is first offered) the result counts from cycle
    0; ``stalls`` (a list to append to) receives the cycles in which an offered score was refused."""
    su_check_params(chunk, max_tokens)
    valid = [False] * chunk_depth(chunk)  # ChunkStats stage valid bits
    lane = fed = left = taken = 0
    update = update_cycles()
    cvalid = head_done = False
    n_chunks, t = math.ceil(n / chunk), 0
    while not (head_done and left == 0):  # the cycle phase 0 ends
        take = valid[-1] and left == 0
        en = not valid[-1] or left == 0
        moving = cvalid and en
        offered = fed < n and (arrivals is None or arrivals[fed] <= t)
        completing = offered and (fed == n - 1 or lane == chunk - 1)
        accept = offered and (not completing or not cvalid or moving)
        if offered and not accept and stalls is not None:
            stalls.append(t)
        if en:
            valid = [moving] + valid[:-1]
        cvalid = (cvalid and not moving) or (accept and completing)
        if accept:
            fed, lane = fed + 1, 0 if completing else lane + 1
        left = left - 1 if left else 0
        if take:
            left = update if taken else 0
            taken += 1
            head_done = taken == n_chunks
        t += 1
    pass2 = t + 1 + arith.FPRECIP  # phase 1 waits for the reciprocal
    return pass2 if n > max_tokens else pass2 + (n - 1) + 1 + norm_depth() - 1


# --- the rank (hw/l3/rank.py) -----------------------------------------------------------------------------------

RUN_WAIT = RELAYOUT_LATENCY + 1  # last write beat accepted -> RUN accepted: it leaves the re-layout unit, pops
START = 2  # RUN accepted -> first RD: the error check


def score_to_su() -> int:
    """RD -> score offered to the SU: the PU step a cycle after the RD, its latency, the result buffer and feed
    registers, the adder tree, the queue."""
    return 1 + bank_pu_latency(Mode.SCORE) + 2 + adder_latency() + 1


def ctx_to_out() -> int:
    """Last V RD -> first output."""
    return 1 + bank_pu_latency(Mode.CONTEXT) + 2 + adder_latency()


def score_arrivals(n: int, g: Geometry) -> list[int]:
    """When each score reaches the softmax unit, from the first K RD: step s's scores leave the adder unit
    one per cycle after its last RD."""
    to_su = score_to_su()
    return [RD_INTERVAL * ((t // g.banks) * g.bursts + g.bursts - 1) + to_su + t % g.banks for t in range(n)]


def run_cycles(n: int, g: Geometry, max_tokens: int, stalls: list[int] | None = None) -> int:
    """Cycles from a valid RUN item's acceptance to the head's last output accepted (ready sink): RDs one
    per RD_INTERVAL, the softmax unit replayed on the scores' arrival times (``stalls`` receives its
    refusals; its n probabilities leave one per cycle), context RDs from the first full S word on, then
    d_head outputs one per cycle through the adder unit."""
    arrivals = score_arrivals(n, g)
    su_last = arrivals[0] + su_head_cycles(n, g.chunk, max_tokens, [a - arrivals[0] for a in arrivals], stalls)
    su_first = su_last - (n - 1)
    # RD j waits for S word j (written by cycle su_first + 4j + 3) and RD_INTERVAL after RD j - 1: the
    # softmax unit writes 4 probabilities per 4 cycles, the RDs take 8, so only the first word waits
    ctx_rds = math.ceil(n / V_GROUPS)
    return START + su_first + min(V_GROUPS, n) + RD_INTERVAL * (ctx_rds - 1) + ctx_to_out() + g.d_head - 1


def head_cycles(n: int, g: Geometry, max_tokens: int, error: bool = False) -> int:
    """A lone head from its first K beat accepted to its last output accepted, inputs offered back to back:
    (2n + 1) x R bursts of writes, the wait for them to land, then the run (or the error item)."""
    beats = (2 * n + 1) * g.bursts * BEATS_PER_BURST
    return error_cycles(beats) if error else beats - 1 + RUN_WAIT + run_cycles(n, g, max_tokens)


def error_cycles(beats: int, open_beats: int = 0) -> int:
    """The latency of the error path: a head answered by its one error item, from its first write beat
    accepted to that item accepted, its ``beats`` write beats and then its RUN offered back to back, the
    last ``open_beats`` of them a write still open at the RUN (0: none, as :func:`head_cycles` with
    ``error``). Such a RUN is not held until the open write lands (it never ends): it is taken once the
    re-layout unit holds no whole window, RUN_WAIT after the last beat that closed one (a window's second
    beat, or a write's last), at once if none did; then the error check (START)."""
    if beats < 1 or not 0 <= open_beats <= beats:
        raise ValueError(f"beats, open_beats: {beats}, {open_beats} not allowed; beats >= 1, 0 <= open_beats <= beats")
    closed = beats - 1 - open_beats % WINDOW_BEATS  # the last beat that closed a window (from 0; -1: none)
    taken = max(beats, closed + RUN_WAIT) if closed >= 0 else beats  # the RUN is offered at cycle ``beats``
    return taken + START
