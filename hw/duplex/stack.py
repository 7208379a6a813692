"""Duplex Logic-PIM stack top (Duplex §IV-C/D, §VI): the GEMM modules of one HBM3 stack — one per
pseudo-channel, 32 by default — under one controller (semantics: ``golden.duplex.module_run`` with
``Geometry.modules``).

The controller (:class:`hw.duplex.gemm_module.Controller`: descriptor check, item FSM, buffer and issue
counters) is the GEMM module's, built once; each module keeps its own datapath (8 KB input buffer, MAC
array, combine stage). DESC and X items are broadcast — every module holds the same input vectors — and
a W item carries one 128 B beat per module, as the pseudo-channels' bank bundles deliver them in the same
tCCD_S; module d owns rows [d*m, (d+1)*m) of the weights. The modules run in lockstep, so an output item
is one row block per module.

Cycle model: the module's (:func:`hw.duplex.gemm_module.txn_cycles`), whatever the module count: the
stack does ``modules`` times a module's work in a module's time — what sysmodel/designs/duplex assumes when it
deals (row block, K tile) units to a stack's modules. `make test` runs 4 modules of 4 x 2 MACs.
"""

from __future__ import annotations

from golden.duplex_spec import FULL, MODULES_PER_STACK
from hw.cycles import CycleModel
from hw.duplex import gemm_module
from hw.duplex.gemm_module import GemmModule


def cycle_model(
    rows: int = FULL.rows,
    lanes: int = FULL.lanes,
    buffer_bytes: int = FULL.buffer_bytes,
    modules: int = MODULES_PER_STACK,
    **_params,
) -> CycleModel:
    return gemm_module.cycle_model(rows, lanes, buffer_bytes)


class LogicPimStack(GemmModule):
    """Members: as :class:`hw.duplex.gemm_module.GemmModule` with ``modules`` beats per W item and row
    blocks per output item."""

    def __init__(
        self,
        rows: int = FULL.rows,
        lanes: int = FULL.lanes,
        buffer_bytes: int = FULL.buffer_bytes,
        modules: int = MODULES_PER_STACK,
    ):
        super().__init__(rows, lanes, buffer_bytes, modules)
