"""L3 as a serving system (`l3`): a DGX-A100 running the FC layers and prefill attention, DIMM-PIM in the
host's 2 TB of DDR4 running decode attention (:class:`sysmodel.designs.l3.model.L3System`).

Registry defaults [S]: one replica on the whole DGX (``tp`` 8, ``dp`` 1), so `compare` prices the machine
the paper describes on any model whose weights fit 8 GPUs; the paper's Table 3 TP/DP pairs run in the L3
report section (``--set tp=2 --set dp=4`` serves one of four replicas, on a quarter of the host).
"""

from __future__ import annotations

from hw.l3.cycles import PAPER_RECORDS
from sysmodel.designs.baselines import EFFICIENCY, device_profile
from sysmodel.designs.l3 import paper
from sysmodel.designs.l3.model import GPU_BOUND
from sysmodel.systems import Param, register


@register(
    "l3",
    "DGX-A100 + DIMM-PIM in host DDR4: decode attention in bank PUs, FC layers on the GPUs, "
    "sub-batch interleaving (L3 §4-5; the rank's measured cycles)",
    (
        Param("tp", paper.GPUS, "GPUs in tensor parallel per replica", minimum=1, maximum=paper.GPUS),
        Param(
            "dp",
            1,
            "data-parallel replicas sharing the host (this system is one of them)",
            minimum=1,
            maximum=paper.GPUS,
        ),
        Param("ranksets", paper.RANKSETS, f"ranks per channel ({paper.CHANNELS} channels)", minimum=1, maximum=64),
        Param("capacity_gb", paper.HOST_BYTES / 1e9, "host DIMM capacity, GB", minimum=1),
        Param("attention", "l3", "l3 (bank PUs), r-pim (rank PUs), cpu (host CPU)", choices=("l3", "r-pim", "cpu")),
        Param("scheduler", True, "sub-batch interleaving of GPU and PIM work"),
        Param("overlap", True, "communication overlap (L3: across ranksets; R-PIM: behind the computation)"),
        Param(
            "gpu_bound",
            GPU_BOUND[0],
            "prefill in a stage whose decodes alone are GPU-bound: whole prompts, or chunk (to the PIM time, §5.3)",
            choices=GPU_BOUND,
        ),
        *EFFICIENCY,
    ),
    records=tuple(PAPER_RECORDS.items()),
)
def _l3(
    model: str,
    tp: int,
    dp: int,
    ranksets: int,
    capacity_gb: float,
    attention: str,
    scheduler: bool,
    overlap: bool,
    gpu_bound: str,
    efficiency: str,
):
    from sysmodel.designs.baselines import tp_devices
    from sysmodel.designs.l3.model import HostConfig, L3System

    if tp * dp > paper.GPUS:
        raise ValueError(f"tp, dp: {tp} x {dp} not allowed; the DGX has {paper.GPUS} GPUs")
    host = HostConfig(ranksets, capacity_gb * 1e9)
    eff = device_profile(efficiency, paper.GPU)
    tp = tp_devices(model, tp, "tp", paper.GPUS)
    return L3System(model, tp, dp, host, attention, scheduler, overlap, eff=eff, gpu_bound=gpu_bound)
