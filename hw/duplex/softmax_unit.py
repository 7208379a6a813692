"""Duplex softmax unit (Duplex §IV-D, §VI: "softmax units with 128 KB of buffers"): the shared softmax
unit (:mod:`hw.common.softmax`, semantics ``golden.softmax.softmax``) at Duplex's width and buffer —
``golden.duplex_spec.SOFTMAX_LANES`` FP16 scores per beat (the GEMM module's 64-wide stream [S]) and
``SOFTMAX_BUFFER_BYTES``. The attention path defers normalization (``normalize`` off: the context GEMM
scales by r).

Cycle model: :func:`hw.common.softmax.row_cycles` at these defaults.
"""

from __future__ import annotations

from golden.duplex_spec import SOFTMAX_BUFFER_BYTES, SOFTMAX_LANES
from hw.common import softmax
from hw.cycles import CycleModel


def cycle_model(
    lanes: int = SOFTMAX_LANES, buffer_bytes: int = SOFTMAX_BUFFER_BYTES, normalize: bool = True, **_params
) -> CycleModel:
    return softmax.cycle_model(lanes, buffer_bytes, normalize)


class SoftmaxUnit(softmax.SoftmaxUnit):
    """Members: as :class:`hw.common.softmax.SoftmaxUnit`."""

    def __init__(self, lanes: int = SOFTMAX_LANES, buffer_bytes: int = SOFTMAX_BUFFER_BYTES, normalize: bool = True):
        super().__init__(lanes, buffer_bytes, normalize)
