"""DECA as a serving system (`deca`, registered by system.py): a Sapphire Rapids-class CPU whose 56 cores each
carry a DECA PE, its weights held compressed (a DECA format: scheme and density) and decompressed near the core
for every stage, the GeMMs on AMX (DECA §7-8).

A stage of N tokens (decode requests plus prefill chunk tokens) costs, per the Table 6 model
(:mod:`sysmodel.designs.deca.roof_surface`):

* **FC GeMMs**: every weight tile once, each at the slowest of memory (compressed bytes / (ETA_MEM x MBW)),
  decompression (the PE's *measured* RTL cycles per tile / VOS with DECA; libxsmm's instruction count with
  ``decompressor=sw``) and the TMUL (ceil(N/16) tile operations / MOS) — so prefill chunks are AMX-bound and
  decode steps memory- or decompression-bound, as the Roof-Surface says;
* **attention**: decode reads the KV cache at ETA_MEM x MBW; prefill attention's FLOPs at the TMUL rate;
* **everything else** (norms, activations, launches): the per-layer a + b*N fitted to Table 1
  (:func:`sysmodel.designs.deca.roof_surface.layer_overhead`).

Memory: the machine's (SPR-HBM: 64 GB of HBM; SPR-DDR5: 512 GB), so Llama2-70B at dense Q16, Q16 50% or
dense Q8 does not fit SPR-HBM — the paper says so and simulates a larger HBM for those (§7 item 3):
``capacity_gb`` does the same. A format the PE rejects (a scale group narrower than W) is infeasible, as in
the DSE.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from golden.deca_spec import LANES, TILE, TILE_ROWS, W
from hw.deca.cycles import UNIT_PE, pe_record
from sysmodel.cost.energy import Usage, device_static_w, joules
from sysmodel.cost.models import KV_BYTES, StageShape, layer_groups, layer_ops, load_model
from sysmodel.cost.num import Num
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.deca import paper
from sysmodel.designs.deca import roof_surface as dm
from sysmodel.systems import Area, Provenance

MACHINES = {"SPR-HBM": (dm.SPR_HBM, "spr-hbm"), "SPR-DDR5": (dm.SPR_DDR, "spr-ddr5")}


class DecaSystem:
    pure_stage_times = True  # a stage's time is a function of its shape alone: the serving engine memoizes it

    def __init__(
        self,
        model: str,
        scheme: str = "q8",
        density: float = 0.3,
        machine: str = "SPR-HBM",
        decompressor: str = "deca",
        capacity_gb: float = 0.0,
    ):
        from sysmodel.cost.devices import get_device

        self.cfg = load_model(model)
        self.kernel = dm.Kernel(scheme, density)
        self.machine, dev = MACHINES[machine]
        self.device = get_device(dev)
        self.deca = decompressor == "deca"
        self.capacity = capacity_gb * 1e9 or self.device.mem_bytes
        if self.deca and (self.kernel.scheme != "q16" or self.kernel.sparse) and not dm.supported(self.kernel, W):
            raise Infeasible(f"{self.kernel.label}: the DECA PE at W={W} rejects the format (bad_cfg)")
        self.name = f"{'DECA' if self.deca else 'SW-decompress'} {self.kernel.label} ({machine})"
        if self.kv_capacity() <= 0:
            raise Infeasible(
                f"{model} at {self.kernel.label}: {self.weight_bytes / 1e9:.0f} GB of weights do not "
                f"fit {machine}'s {self.capacity / 1e9:.3g} GB (DECA §7 simulates a larger HBM for such "
                "formats: --set capacity_gb=...)"
            )

    @cached_property
    def all_tiles(self) -> int:
        return dm.fc_weight_tiles(self.cfg.name, max(1, self.cfg.experts))

    @property
    def weight_bytes(self) -> float:
        """FC weights compressed, the rest (embeddings, norms) in BF16."""
        rest = self.cfg.params() - self.all_tiles * TILE
        return self.all_tiles * self.kernel.tile_bytes() + 2.0 * max(rest, 0)

    @property
    def kv_bytes_per_token(self) -> float:
        return self.cfg.kv_bytes_per_token(KV_BYTES)

    def kv_capacity(self) -> float:
        return self.capacity - self.weight_bytes

    def hardware(self) -> str:
        d = self.device
        return (
            (
                f"{self.machine.cores}-core {self.machine.name} + {self.machine.cores} DECA PEs (W={W}, L={LANES}), "
                f"{self.capacity / 1e9:.0f} GB {d.memory.upper()}"
            )
            if self.deca
            else f"{self.machine.cores}-core {self.machine.name} (AVX-512 decompression), {self.capacity / 1e9:.0f} GB"
        )

    def _tiles(self, tokens: np.ndarray) -> np.ndarray:
        """Weight tiles the stage streams (MoE: the experts its tokens route to)."""
        if self.cfg.experts <= 1:
            return np.full(tokens.shape, self.all_tiles, float)
        return np.vectorize(lambda n: dm.fc_weight_tiles(self.cfg.name, int(max(n, 1))), otypes=[float])(tokens)

    def _decompress_per_tile(self) -> float:
        """Seconds of decompression per tile across the machine (0 for uncompressed BF16)."""
        k, m = self.kernel, self.machine
        if k.scheme == "q16" and not k.sparse:
            return 0.0
        if self.deca:
            return dm.deca_cycles_per_tile(k, W, LANES) / m.vos_deca
        return dm.sw_vo_per_tile(k) / (dm.ETA_AVX * m.vos_sw)

    def stage_times(self, shape: StageShape) -> np.ndarray:
        m, c = self.machine, self.cfg
        tokens = np.atleast_1d(np.asarray(shape.tokens, float))
        per_tile = np.maximum(
            max(self.kernel.tile_bytes() / (dm.ETA_MEM * m.mbw), self._decompress_per_tile()),
            np.ceil(np.maximum(tokens, 1) / TILE_ROWS) / m.mos,
        )
        fc = self._tiles(tokens) * per_tile
        mtx_flops = 2.0 * TILE * TILE_ROWS * m.mos  # FLOP/s of the TMULs at full occupancy
        attn: Num = 0.0
        for moe, count in layer_groups(c):
            ops = {op.name: op for op in layer_ops(c, shape, moe)}
            attn = attn + count * (
                np.divide(ops["attn_decode"].kv_bytes, dm.ETA_MEM * m.mbw)
                + np.divide(ops["attn_prefill"].flops, mtx_flops)
                + np.divide(ops["attn_prefill"].kv_bytes, dm.ETA_MEM * m.mbw)
            )
        return fc + attn + c.layers * dm.layer_overhead(tokens, m)

    def usage(self, shape: StageShape) -> Usage:
        tokens = np.atleast_1d(np.asarray(shape.tokens, float))
        tiles = self._tiles(tokens)
        u = Usage(static_w=device_static_w(self.device.tdp_w))
        u.read(self.device.memory, tiles * self.kernel.tile_bytes())
        for moe, count in layer_groups(self.cfg):
            for op in layer_ops(self.cfg, shape, moe):
                u.flops = np.add(u.flops, np.multiply(count, op.flops))
                if op.kind != "gemm":
                    u.read(self.device.memory, np.multiply(count, op.bytes))
        vops = self._decompress_per_tile() * (self.machine.vos_deca if self.deca else self.machine.vos_sw * dm.ETA_AVX)
        u.vops = tiles * vops
        return u

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        return joules(self.usage(shape), self.stage_times(shape) if seconds is None else seconds)

    def area(self) -> Area:
        if not self.deca:
            return Area(0.0, "software decompression: nothing added")
        return Area(paper.AREA_MM2, f"[Q] DECA §7: 56 PEs at W=32, L=8, 7 nm, ~{paper.AREA_MM2} mm2")

    def provenance(self) -> Provenance:
        p = Provenance()
        k = self.kernel
        if self.deca and (k.scheme != "q16" or k.sparse):
            key = (W, LANES, k.scheme, k.density)
            if key in dm.measured_cycles():
                p.record(UNIT_PE, "hw/deca/pe.py", "golden/deca.py", **pe_record(W, LANES, k.scheme, k.density))
            else:
                p.constant(
                    "cycles per tile",
                    dm.analytical_cycles_per_tile(k, W, LANES),
                    "analytical #vOps*(1+bpv) (hw/deca/cycles.py): no RTL record at this density",
                )
        elif not self.deca:
            p.constant(
                "instructions per VO", dm.INSTR_PER_VO, "libxsmm instruction counts, fitted on BF8-sparse (Table 2)"
            )
            p.fits.append("INSTR_PER_VO: fitted to DECA Table 2's BF8-sparse cells")
        p.constant("ETA_MEM", dm.ETA_MEM, "DECA Table 4 (N=1, HBM)")
        p.constant("ETA_AVX", dm.ETA_AVX, "DECA Table 4")
        p.constant(
            "machine", {"mbw": self.machine.mbw, "cores": self.machine.cores, "freq": self.machine.freq}, "DECA §7.1"
        )
        p.fits.append("layer_overhead a + b*N: fitted to DECA Table 1's FC shares at N=1 and 16 (Llama2-70B)")
        return p
