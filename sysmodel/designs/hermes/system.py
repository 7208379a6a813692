"""Hermes as a serving system (`hermes`): a consumer GPU plus NDP-DIMMs, the hot neurons on the GPU and the
cold ones on the DIMMs' NDP cores (:class:`sysmodel.designs.hermes.model.HermesSystem`, Hermes §IV-§V)."""

from __future__ import annotations

from golden.hermes_spec import MULTIPLIERS
from hw.hermes.cycles import PAPER_RECORDS
from sysmodel.designs.baselines import EFFICIENCY, device_profile
from sysmodel.designs.hermes import paper
from sysmodel.systems import Param, register


@register(
    "hermes",
    "Consumer GPU + NDP-DIMMs: hot neurons on the GPU, cold neurons and attention on the DIMMs' "
    "NDP cores, ILP mapping with online adjustment (Hermes §IV-§V; the GEMV unit's measured cycles)",
    (
        Param("dimms", paper.DIMMS, f"NDP-DIMMs ({paper.DIMM_BYTES / 1e9:g} GB each)", minimum=1, maximum=64),
        Param("multipliers", MULTIPLIERS, "GEMV multipliers per NDP core", minimum=1, maximum=paper.MAX_MULTIPLIERS),
        Param(
            "policy",
            "hermes",
            f"{', '.join(paper.POLICIES)} (the ablation steps)",
            choices=paper.POLICIES,
        ),
        Param("host", False, "Hermes-host: the CPU computes the cold neurons (PowerInfer-like)"),
        Param("seed", 1, "activation trace seed", minimum=0),  # numpy generators take seeds >= 0
        *EFFICIENCY,
    ),
    records=tuple(PAPER_RECORDS.items()),
)
def _hermes(model: str, dimms: int, multipliers: int, policy: str, host: bool, seed: int, efficiency: str):
    from sysmodel.designs.hermes.model import HermesSystem

    given = (("dimms", dimms, paper.DIMMS), ("multipliers", multipliers, MULTIPLIERS))
    unused = [f"{k}={v}" for k, v, default in given if v != default]
    if host and unused:  # settings that would do nothing
        raise ValueError(f"{', '.join(unused)}: Hermes-host computes the cold neurons on the CPU; no NDP-DIMMs")
    return HermesSystem(model, dimms, multipliers, policy, host, seed, device_profile(efficiency, paper.GPU))
