"""L3 encodings: the one definition of the DIMM-PIM geometry, data layout and flag bits that hw/l3,
golden/l3.py, tb/l3 and sysmodel/designs/l3 share.

Paper: L3 (DIMM-PIM for long-context attention) §4 and Table 2; choices where the paper is silent follow
shared/notes/l3_duplex_flash.md §1.3-1.4 and are marked [S].
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from golden.commands import flag_fields

ELEM_BITS = 16  # FP16 K, V, Q and scores (Table 3: N_pre = 2)
CHIPS = 8  # x8 DDR4 chips on a 64-bit rank (§4.1: "FP16 and x8 chips")
BEAT_BITS = 64  # the rank's data bus
BEATS_PER_BURST = 8  # BL8
BURST_BITS = BEAT_BITS * BEATS_PER_BURST  # 64 B: 32 FP16 elements
ELEMS_PER_BURST = BURST_BITS // ELEM_BITS
WINDOW_BEATS = 2  # the re-layout unit's double buffer: "two burst data of 64 bits" (§6.4)
RD_BITS = 64  # one RD gives each chip 64 bits = 4 FP16 (§4.4)
ELEMS_PER_RD = RD_BITS // ELEM_BITS
V_GROUPS = 4  # the shared buffer broadcasts 64 bits = one S value per bank group in context mode
D_HEAD = 128  # D_h = D_e / N_h (Table 3)
BANKS = 16  # per chip: 4 bank groups x 4 banks (Table 2)
RANK_BUFFER_BYTES = 256 * 1024  # rank PU on-chip buffer (§4.4, following Hermes)
MAX_TOKENS = RANK_BUFFER_BYTES // (ELEM_BITS // 8)  # FP16 scores of one head: "about a token size of 128K"
RD_INTERVAL = 8  # PU cycles between all-bank RD steps: tCCD_L at a PU clock equal to tCK [S]


class Mode(enum.IntEnum):
    """What a bank PU or the adder unit does with an RD step (§4.2)."""

    SCORE = 0  # inner product: products into an adder tree, accumulated over RDs
    CONTEXT = 1  # outer product: four self-accumulators


class Op(enum.IntEnum):
    """A rank command item's ``op`` (membound's host interface to one rank [S]): K, V and Q writes are runs
    of 64-bit host beats ending with ``last`` (K and V append whole tokens; Q is one vector), a write's op
    that of its first beat (the rank latches it as the write opens); RUN computes one head over the first
    ``data`` tokens and clears the rank for the next head."""

    K = 0
    V = 1
    Q = 2
    RUN = 3


class Err(enum.IntFlag):
    """Errors the rank flags instead of hanging or computing wrong attention."""

    # a K/V/Q write that is not a whole number of bursts or unterminated at the RUN (or a Q not one vector)
    PARTIAL_BURST = 1 << 0
    LEN_ZERO = 1 << 1  # a head of length 0
    LEN_OVER = 1 << 2  # a head longer than the rank PU buffer (or the rank's K/V storage)


ERR_FIELDS = flag_fields(Err)


@dataclass(frozen=True)
class Geometry:
    """A rank as the units see it: ``banks`` per chip and ``d_head`` dimensions, with the paper's values
    as defaults and a reduced rank for fast tests. The mappings need d_head/8 elements per chip per token,
    a whole number of RDs (d_head % 32 == 0), and V_GROUPS bank groups of d_head/32 banks."""

    banks: int = BANKS
    d_head: int = D_HEAD

    def __post_init__(self) -> None:
        if self.d_head < ELEMS_PER_BURST or self.d_head % ELEMS_PER_BURST:
            raise ValueError(f"d_head: {self.d_head} not allowed; a multiple of {ELEMS_PER_BURST} (whole bursts)")
        if self.banks != V_GROUPS * self.bursts:
            raise ValueError(
                f"banks: {self.banks} not allowed; {V_GROUPS} groups of d_head/32 = {self.bursts} "
                f"banks, i.e. {V_GROUPS * self.bursts}"
            )

    @property
    def bursts(self) -> int:
        """Bursts per K/V/Q vector, = RDs per token per chip in score mode."""
        return self.d_head // ELEMS_PER_BURST

    @property
    def chunk(self) -> int:
        """Scores per softmax chunk: one per logic bank (§4.3)."""
        return self.banks


FULL = Geometry()
REDUCED = Geometry(banks=4, d_head=32)  # 8 chips x 4 banks x 32 dims: what `make test` simulates
