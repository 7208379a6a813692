"""A minimal out-of-tree system (docs/guide.md, "Adding a design"): an HBM-side GEMV engine. The weights sit in
HBM stacks whose logic dies run every GEMM on a roofline of their internal bandwidth and FLOPS (decode GEMVs
are bandwidth-bound, long prefill chunks compute-bound); attention, norms and activations run on one A100
whose 80 GB hold the KV cache. Every number below is this example's assumption, not a paper's:

    PYTHONPATH=examples MEMBOUND_SYSTEMS=hbm_gemv membound compare --model llama2-70b --systems gpu,hbm-gemv
"""

from __future__ import annotations

import numpy as np

from sysmodel.cost.devices import get_device
from sysmodel.cost.energy import Usage, device_static_w, joules
from sysmodel.cost.models import KV_BYTES, StageShape, layer_groups, layer_ops, load_model
from sysmodel.cost.stage import ATTACC, Engine, Infeasible
from sysmodel.designs.baselines import profile_provenance
from sysmodel.systems import Area, Param, Provenance, register

GPU = "a100-80g-sxm"  # runs attention, norms and activations, and holds the KV cache
WBYTES = 2.0  # FP16 weights
BW_TBPS = 8.0  # [assumption] the GEMV engines' internal bandwidth, about 4 HBM3 stacks' 2 TB/s each
ENGINE_TFLOPS = 64.0  # [assumption] the GEMV engines' FP16 peak, all stacks together
CAPACITY_GB = 192.0  # [assumption] 8 stacks of 24 GB
ADDED_MM2 = 20.0  # [assumption] the GEMV engines on the stacks' logic dies


class HbmGemv:
    """The System: everything ``membound serve`` and ``compare`` call (``sysmodel.systems.System``)."""

    name = "hbm-gemv"
    pure_stage_times = True  # stage_times depends on the shape alone: the engine prices each distinct stage once

    def __init__(self, model: str, bw_tbps: float, capacity_gb: float):
        self.cfg = load_model(model)
        self.gpu = Engine(get_device(GPU), ATTACC)
        self.bw, self.capacity = bw_tbps * 1e12, capacity_gb * 1e9
        weights = self.cfg.weight_bytes(WBYTES)
        if weights > self.capacity:  # Infeasible: compare shows "no: <reason>" and runs the other systems
            raise Infeasible(f"{self.cfg.name}: {weights / 1e9:.0f} GB of weights do not fit {capacity_gb:g} GB of HBM")

    @property
    def kv_bytes_per_token(self) -> float:
        return self.cfg.kv_bytes_per_token(KV_BYTES)

    def kv_capacity(self) -> float:
        return self.gpu.device.mem_bytes  # the weights are in the GEMV engines' HBM, not here

    def _ops(self, shape: StageShape):
        for kind, count in layer_groups(self.cfg):
            for op in layer_ops(self.cfg, shape, kind, WBYTES):
                yield count, op

    def stage_times(self, shape: StageShape) -> np.ndarray:
        t: object = 0.0
        for count, op in self._ops(shape):
            near = op.kind == "gemm"
            gemm = np.maximum(np.divide(op.weight_bytes, self.bw), np.divide(op.flops, ENGINE_TFLOPS * 1e12))
            t = np.add(t, count * (gemm if near else self.gpu.op_time(op, shape)))
        return np.asarray(t, float)

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        u = Usage(static_w=device_static_w(self.gpu.device.tdp_w))
        for count, op in self._ops(shape):  # GEMM weights read on the logic die, the rest through the GPU
            u.read("hbm3", np.multiply(count, op.bytes), "logic" if op.kind == "gemm" else "host")
            u.flops = np.add(u.flops, np.multiply(count, op.flops))
        return joules(u, self.stage_times(shape) if seconds is None else seconds)

    def area(self) -> Area:
        return Area(ADDED_MM2, "assumption: GEMV engines on the HBM logic dies (examples/hbm_gemv.py)")

    def hardware(self) -> str:
        return f"1 x {GPU} + {self.capacity / 1e9:g} GB HBM with GEMV engines at {self.bw / 1e12:g} TB/s"

    def provenance(self) -> Provenance:
        p = Provenance()
        p.constant("bw_tbps", self.bw / 1e12, "assumption (examples/hbm_gemv.py)")
        p.constant("engine_tflops", ENGINE_TFLOPS, "assumption (examples/hbm_gemv.py)")
        p.constant("capacity_gb", self.capacity / 1e9, "assumption (examples/hbm_gemv.py)")
        profile_provenance(p, self.gpu)  # the GPU's efficiency profile: compare's profile line names it
        return p


@register(
    "hbm-gemv",
    "HBM-side GEMV engines: every GEMM where the weights live, attention on one A100 (examples/hbm_gemv.py)",
    (
        Param("bw_tbps", BW_TBPS, "GEMV engines' internal bandwidth (TB/s)", minimum=0, open_minimum=True),
        Param("capacity_gb", CAPACITY_GB, "HBM holding the weights (GB)", minimum=0, open_minimum=True),
    ),
)
def _hbm_gemv(model: str, bw_tbps: float, capacity_gb: float) -> HbmGemv:
    return HbmGemv(model, bw_tbps, capacity_gb)
