"""DECA registered as a serving system (`deca`): the factory and its parameters, the records it reads; the
System is :class:`sysmodel.designs.deca.model.DecaSystem`."""

from __future__ import annotations

from golden.deca_spec import LANES, W
from hw.deca.cycles import UNIT_PE, pe_record
from sysmodel.designs.deca.model import MACHINES, DecaSystem
from sysmodel.systems import Param, register


@register(
    "deca",
    "Sapphire Rapids-class CPU with a DECA PE per core: compressed weights decompressed near the "
    "core, GeMMs on AMX (DECA §7-8; measured PE cycles)",
    (
        Param("scheme", "q8", "weight format: q16 (BF16), q8 (BF8), q4 (MXFP4)", choices=("q16", "q8", "q4")),
        Param("density", 0.3, "share of weights kept (bitmask sparsity); 1 is dense", minimum=0.01, maximum=1),
        Param("machine", "SPR-HBM", "the server", choices=tuple(MACHINES)),
        Param(
            "decompressor",
            "deca",
            "deca (the PE), or sw (libxsmm AVX-512, the paper's baseline)",
            choices=("deca", "sw"),
        ),
        Param("capacity_gb", 0.0, "memory capacity in GB (0: the machine's own)", minimum=0),
    ),
    records=tuple((UNIT_PE, pe_record(W, LANES, f, d)) for f in ("q8", "q4") for d in (0.3, 1.0)),
)
def _deca(model: str, scheme: str, density: float, machine: str, decompressor: str, capacity_gb: float) -> DecaSystem:
    return DecaSystem(model, scheme, density, machine, decompressor, capacity_gb)
