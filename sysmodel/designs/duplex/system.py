"""Duplex as a serving system (`duplex`): H100-class xPUs whose HBM3 logic dies carry Logic-PIM, the
experts and decode attention co-processed (:class:`sysmodel.designs.duplex.model.DuplexSystem`, Duplex §IV-§VI).

Registry defaults: the paper's best mode (``duplex+pe+et``) on Logic-PIM; nodes and devices per node from
Table I for the paper's models, else one node of four devices [S] (``--set devices=8`` for a larger model).
"""

from __future__ import annotations

from golden.duplex_spec import SOFTMAX_LANES
from hw.duplex.cycles import PAPER_RECORDS
from sysmodel.designs.baselines import EFFICIENCY, device_profile, tp_devices
from sysmodel.designs.duplex import paper
from sysmodel.systems import Param, register


@register(
    "duplex",
    "H100-class xPUs + Logic-PIM on the HBM3 logic die: MoE experts and decode attention "
    "co-processed (Duplex §IV-§VI; the GEMM module's and softmax unit's cycle models)",
    (
        Param(
            "mode",
            "duplex+pe+et",
            "gpu, duplex, duplex+pe, duplex+pe+et",
            choices=("gpu", "duplex", "duplex+pe", "duplex+pe+et"),
        ),
        Param("pim", "logic", "logic (Logic-PIM), bank (Bank-PIM), bankgroup", choices=("logic", "bank", "bankgroup")),
        Param("nodes", 0, "nodes (0: Table I's for the paper's models, else 1)", minimum=0, maximum=64),
        Param("devices", 0, "devices per node (0: Table I's, else 4)", minimum=0, maximum=8),
        Param("routing", "", "MoE routing trace (.npy (tokens, top_k) or .npz 'experts'); uniform when empty"),
        Param("seed", 1, "uniform routing seed", minimum=0),  # numpy generators take seeds >= 0
        Param(
            "softmax_lanes",
            SOFTMAX_LANES,
            f"softmax unit lanes (the paper gives none; {SOFTMAX_LANES} is the RTL's default)",
            minimum=1,
            maximum=4096,
        ),
        *EFFICIENCY,
    ),
    records=tuple(PAPER_RECORDS.items()),
)
def _duplex(
    model: str,
    mode: str,
    pim: str,
    nodes: int,
    devices: int,
    routing: str,
    seed: int,
    softmax_lanes: int,
    efficiency: str,
):
    from pathlib import Path

    from sysmodel.designs.duplex.model import DuplexSystem

    given = (  # (name, value, default, whether this configuration reads it)
        ("pim", pim, "logic", mode != "gpu"),
        ("softmax_lanes", softmax_lanes, SOFTMAX_LANES, mode != "gpu"),
        ("seed", seed, 1, not routing),
    )
    unused = [f"{k}={v}" for k, v, default, read in given if v != default and not read]
    if unused:  # settings that would do nothing
        raise ValueError(f"{', '.join(unused)}: unused with mode {mode}{' and a routing file' if routing else ''}")
    system = DuplexSystem(
        model,
        mode,
        pim,
        nodes or None,
        devices or None,
        seed,
        Path(routing) if routing else None,
        softmax_lanes,
        device_profile(efficiency, paper.XPU),
    )
    tp_devices(model, system.devices, "devices", 8)  # a node's devices split the heads (tensor parallel)
    return system
