"""One energy basis for every system: joules from bytes moved, operations done and time spent.

Every system's ``energy(shape)`` fills a :class:`Usage` — bytes read from each memory over each access path,
FP16 FLOPs, vector operations, bytes over each link, and the static power of its parts — and
:func:`joules` prices it on the tables below. Nothing else in membound holds an energy constant.

Sources are marked as in the papers' modules: [Q] a paper states it, [D] derived from a stated number,
[EXT] a public datasheet or simulator, [S] membound's assumption where no source gives the number (each
says why it is reasonable). The report prints the whole table (:func:`sysmodel.report.sections.energy_lines`).

* **Memory** (pJ per bit read; writes are priced the same [S]): each technology is a chain of parts a bit
  crosses on its way out (row activation, cell read, on-die datapath, TSVs, the off-chip interface), and an
  *access path* names the parts it crosses: ``host`` all of them; the PIM paths stop early — ``logic``
  (Duplex's Logic-PIM on the HBM logic die), ``bankgroup``, ``bank`` (in-bank PUs), ``buffer`` (a DIMM's
  buffer chip: Hermes' NDP core, L3's rank PU).
* **Operations**: one FP16/BF16 FLOP on any MAC array (GPU tensor cores, AMX, PIM and NDP MACs) costs the
  same ALU energy (AttAcc's table), so placement changes only the data-movement energy; a decompression
  vector operation (a DECA vOp, or an AVX-512 instruction of the software path, both 32 elements wide)
  costs what DECA's 3.1 W over 56 PEs at 2.5 GHz implies.
* **Static**: :data:`STATIC_SHARE` of each device's datasheet TDP, for as long as the stage runs; DIMMs
  their background (IDD3N) power.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from sysmodel.cost.devices import SPR_CLOCK_HZ, SPR_CORES

PJ = 1e-12


@dataclass(frozen=True)
class Memory:
    """A memory technology: pJ per bit of each part along the read path, and which parts each path crosses."""

    name: str
    parts: dict[str, float]
    paths: dict[str, tuple[str, ...]]
    source: str

    def pj_per_bit(self, path: str = "host") -> float:
        try:
            return sum(self.parts[p] for p in self.paths[path])
        except KeyError:
            raise ValueError(f"path: {path!r} not allowed for {self.name}; allowed: {sorted(self.paths)}") from None


_HBM_PARTS = {"act": 0.11, "cell": 0.44, "col_to_bg": 1.01, "bg_to_gio": 1.23, "tsv": 0.5, "io": 0.3}
_HBM_PATHS = {
    "host": tuple(_HBM_PARTS),
    "logic": ("act", "cell", "col_to_bg", "tsv"),
    "bankgroup": ("act", "cell", "col_to_bg"),
    "bank": ("act", "cell"),
}
_HBM_SOURCE = (
    "[EXT] AttAcc simulator's FGDRAM-derived table (scale-snu/attacc_simulator; O'Connor et al., MICRO "
    "2017, Duplex's [37]; notes §2.3): ACT 0.11, cell 0.44, column to bank-group mux 1.01, bank group to "
    "global IO 1.23, TSV 0.5, interposer IO 0.3 pJ/bit"
)

# DDR4-3200 8Gb x8 chip, by Micron TN-40-07's method from IDD currents (VDD 1.2 V; IDD0 60, IDD2N 50, IDD3N 55,
# IDD4R 145 mA; tRAS 32.5 ns, tRP 13.75 ns, a BL8 burst 4 x 0.625 ns): [EXT] the DDR4 IDD set Ramulator 2
# ships (as collected in the public Dongyunkam/DRAM_info notes, §5.5).
_VDD, _IDD0, _IDD2N, _IDD3N, _IDD4R = 1.2, 60e-3, 50e-3, 55e-3, 145e-3
_ROW_BITS = 8 * 1024  # a 1 KB page per x8 chip
_ACT_PRE_J = _VDD * (_IDD0 - _IDD3N) * 32.5e-9 + _VDD * (_IDD0 - _IDD2N) * 13.75e-9
_READ_J = _VDD * (_IDD4R - _IDD3N) * 4 * 0.625e-9  # one burst: 64 bits of an x8 chip
DDR4_CHIP_STATIC_W = _VDD * _IDD3N  # active standby (IDD3N) of one chip
_DDR_PARTS = {
    "act": _ACT_PRE_J / _ROW_BITS / PJ,
    "read": _READ_J / 64 / PJ,
    "dq": 2.0,  # [S] the chip's DQ drivers onto the DIMM: half of the ~4 pJ/bit DDR interface
    "channel": 2.0,
}  # [S] the channel PHY and termination to the host (same split)
_DDR_PATHS = {"host": ("act", "read", "dq", "channel"), "buffer": ("act", "read", "dq"), "bank": ("act", "read")}
_DDR_SOURCE = (
    "[D] ACT/PRE and RD from DDR4 IDD currents (TN-40-07 method); [S] DQ and channel I/O 2 + 2 pJ/bit "
    "(no paper of the five states a DDR interface energy); in-bank PUs (L3) skip the I/O only [S]"
)

MEMORIES = {
    m.name: m
    for m in (
        Memory("hbm3", _HBM_PARTS, _HBM_PATHS, _HBM_SOURCE),
        Memory("hbm2e", _HBM_PARTS, _HBM_PATHS, _HBM_SOURCE + " (FGDRAM's HBM2 baseline)"),
        Memory("ddr4", _DDR_PARTS, _DDR_PATHS, _DDR_SOURCE),
        Memory("ddr5", _DDR_PARTS, _DDR_PATHS, _DDR_SOURCE + "; DDR5 priced as DDR4 [S]"),
        Memory("gddr6x", {"device": 7.25}, {"host": ("device",)}, "[EXT] Micron GDDR6X: 7.25 pJ/bit"),
        Memory("gddr6", {"device": 7.5}, {"host": ("device",)}, "[EXT] Micron GDDR6: ~7.5 pJ/bit"),
        Memory("lpddr5", {"device": 4.0}, {"host": ("device",)}, "[S] LPDDR5 ~4 pJ/bit (JEDEC low-power class)"),
        Memory(
            "nand",
            {"device": 107.0},
            {"host": ("device",)},
            "[D] an NVMe SSD at its sequential read rate: ~6 W over 7 GB/s (Samsung 990 PRO-class datasheet "
            "figures) = 107 pJ/bit",
        ),
    )
}

FLOP_PJ = 0.32 * 2  # [EXT] AttAcc ALU: 0.32 pJ per op-byte of FP16 operands -> 0.64 pJ per FLOP (notes §2.3)
DECA_PES_W = 3.1  # [Q] DECA §7: the 56 PEs' dynamic plus static power
VOP_PJ = DECA_PES_W / (SPR_CORES * SPR_CLOCK_HZ) / PJ  # [D] a PE per core at the core clock, one vOp per cycle each
LINK_PJ = {  # pJ per bit moved over a link
    "pcie4x16": 5.0,
    "pcie5x16": 5.0,  # [S] PCIe SerDes class figure
    "dimm-link": 1.17,  # [Q] Hermes Table II
    "nvlink-a100": 1.3,
    "nvlink-h100": 1.3,  # [EXT] NVIDIA NVLink-C2C, 1.3 pJ/bit (Grace Hopper whitepaper)
    "host-ddr": _DDR_PARTS["channel"],  # L3's GPU <-> host transfers land in DIMMs over the channel
}
STATIC_SHARE = 0.3  # [S] leakage and idle uncore as a share of TDP, for every device alike


@dataclass
class Usage:
    """What a stage (or a vector of stages) did: bytes read per (memory, path), FLOPs, vector operations,
    bytes per link, and the static power (W) of the parts that stay on while it runs."""

    bytes: dict[tuple[str, str], ArrayLike] = field(default_factory=lambda: defaultdict(float))
    flops: ArrayLike = 0.0
    vops: ArrayLike = 0.0
    links: dict[str, ArrayLike] = field(default_factory=lambda: defaultdict(float))
    static_w: float = 0.0

    def read(self, memory: str, nbytes: ArrayLike, path: str = "host") -> None:
        self.bytes[(memory, path)] = np.add(self.bytes[(memory, path)], nbytes)

    def move(self, link: str, nbytes: ArrayLike) -> None:
        self.links[link] = np.add(self.links[link], nbytes)


def device_static_w(tdp_w: float, count: int = 1) -> float:
    return STATIC_SHARE * tdp_w * count


def joules(u: Usage, seconds: ArrayLike) -> np.ndarray:
    """Energy of the stages ``u`` describes, each lasting ``seconds``."""
    e = np.multiply(u.flops, FLOP_PJ * PJ) + np.multiply(u.vops, VOP_PJ * PJ) + np.multiply(seconds, u.static_w)
    for (mem, path), nbytes in u.bytes.items():
        e = e + np.multiply(nbytes, 8 * MEMORIES[mem].pj_per_bit(path) * PJ)
    for link, nbytes in u.links.items():
        e = e + np.multiply(nbytes, 8 * LINK_PJ[link] * PJ)
    return np.asarray(e, float)
