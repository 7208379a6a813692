"""DECA encodings: the one definition of every number and layout the DECA PE's RTL, golden model,
testbench and system model share (hw/deca, golden/deca.py, tb/deca, sysmodel/designs/deca).

Paper: DECA (MICRO '25) §2.3 (the AMX weight tile), §6.1 (the PE), Table 3 (queue and buffer sizes).
Convention for every paper in membound: ``golden/<paper>_spec.py`` holds sizes, field widths, descriptor
layouts and flag bits as plain Python; hw builds its Amaranth layouts from these field dictionaries, golden
packs and unpacks with them, and nothing restates them.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass

from golden.commands import flag_fields

# --- tile geometry (§2.3): an AMX BF16 weight tile --------------------------------------------------------
TILE_ROWS, TILE_COLS = 16, 32
TILE = TILE_ROWS * TILE_COLS  # 512 elements
VALUE_BITS = 16  # every decompressed element and every group scale is BF16
MASK_BYTES = TILE // 8  # one bitmask bit per element

# --- value codes -----------------------------------------------------------------------------------------
RAW_BITS = 16  # 16-bit codes are raw BF16 values: the LUT array is bypassed (the paper's Q16)
CODE_BITS = (*range(1, 9), RAW_BITS)  # widths a descriptor may name
GROUP_LOG2_MAX = 9  # a scale group spans at most the whole tile (2**9 = 512)

# --- the PE (§6.1, Table 3) -----------------------------------------------------------------------------
LINE_BITS = 512  # one SQQ entry: a 64-byte cache line
SQQ_DEPTH, MASK_DEPTH, SCALE_DEPTH = 32, 16, 32  # SQQ 32 x 64 B, bitmask queue 16 x 4 B, scale queue 32 x 2 B
LUT_ENTRIES = 256  # one big LUT: 256 BF16 entries ...
SUB_LUTS, SUB_LUT_DEPTH = 4, 64  # ... as four 64-entry sub-LUTs with one read port each
W_CHOICES = (8, 16, 32, 64)  # output lanes per vOp
W, LANES = 32, 8  # the paper's design point {W, L} = {32, 8} (§8.2): every unit's and model's default
# §8.2's design-space exploration: under-provisioned, the paper's choice, over-provisioned {W, L}
DESIGN_POINTS = {"{8,4} under": (8, 4), "{32,8} best": (W, LANES), "{64,64} over": (64, 64)}
LANE_CHOICES = (1, 2, 4, 8, 16, 32, 64)  # big LUTs (L)
SQQ_READ_VALUES_RAW = LINE_BITS // RAW_BITS  # raw BF16 values read per cycle: one SQQ entry (our choice)


class Err(enum.IntFlag):
    """Per-tile error flags on the PE's output (``golden.deca.pe_decompress`` defines when each is set)."""

    SQQ_SHORT = 1 << 0
    SQQ_LONG = 1 << 1
    MASK_SHORT = 1 << 2
    MASK_LONG = 1 << 3
    SCALE_SHORT = 1 << 4
    SCALE_LONG = 1 << 5
    BAD_CFG = 1 << 6


ERR_FIELDS = flag_fields(Err)  # bit order = declaration order: hw builds a StructLayout


def err_names(flags: int) -> list[str]:
    return [str(f.name).lower() for f in Err if flags & f]


CMD_FIELDS = {"bits": 5, "sparse": 1, "scaled": 1, "group_log2": 4}  # the tile descriptor, LSB first


@dataclass(frozen=True)
class TileCmd:
    """The per-tile descriptor the core hands a loader (TEPL metadata, §5): how to decompress. Any
    field values may be sent (the PE flags bad ones); :meth:`fields` gives the packed field values."""

    bits: int  # 1..8, or 16 (raw BF16)
    sparse: bool
    scaled: bool
    group_log2: int = 5

    def fields(self) -> dict[str, int]:
        return {k: int(v) for k, v in asdict(self).items()}

    def valid(self, w: int) -> bool:
        """A descriptor the PE accepts at ``w`` lanes (else it flags ``bad_cfg``)."""
        return self.bits in CODE_BITS and (not self.scaled or w <= 1 << self.group_log2 <= TILE)
