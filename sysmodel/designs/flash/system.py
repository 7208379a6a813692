"""LLM in a flash as a serving system (`flash`): a device whose DRAM holds only part of the weights, the
FFN neurons loaded from flash per token (:class:`sysmodel.designs.flash.model.FlashSystem`)."""

from __future__ import annotations

from sysmodel.designs.flash import paper
from sysmodel.systems import Param, register


@register(
    "flash",
    "A device whose DRAM holds half the model: FFN neurons the predictor selects loaded from flash "
    "per token with windowing and row-column bundling (LLM in a flash §3-4; single-batch)",
    (
        Param(
            "backend",
            "cpu",
            "cpu (M1 Max fp32), metal-m1, metal-m2 (M2 Ultra), gpu (RTX 4090 box)",
            choices=tuple(paper.BACKEND_DEVICE),
        ),
        Param("dram_gb", 0.0, "DRAM for the model, GB (0: half the device's memory, §4.1)", minimum=0),
    ),
)
def _flash(model: str, backend: str, dram_gb: float):
    from sysmodel.designs.flash.model import FlashSystem

    return FlashSystem(model, backend, dram_gb)
