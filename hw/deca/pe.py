"""The DECA processing element (DECA §6.1, Fig. 10): dequantize -> expand -> scale, W lanes per vOp.

Ports (all ``amaranth.lib.stream``):

* ``lut``   {addr, data}: programs every big LUT (``golden.deca.lut_image``), before the tiles using it.
* ``cmd``   one descriptor per tile (``golden.deca_spec.TileCmd``, layout ``hw.deca.descriptor.CMD``).
* ``sqq``   the tile's values as 64-byte lines {data, last}; ``mask`` its bitmask as W-bit words
  {data, last} (sparse tiles only); ``scale`` its BF16 group scales {data, last} (scaled tiles only).
  The loaders' memory side (L2, prefetcher) is the system model's; here it is these streams.
* ``o``     the decompressed tile, 512/W chunks of W BF16 values {data, last, error}; ``error`` holds
  the ``golden.deca_spec.Err`` flags of the tile (on every chunk, final on the ``last`` one).

Structure: input queues (``hw.deca.queues``) -> dequantization stage (``hw.deca.dequant``, with the
descriptor decode and the LUT array) -> expansion and scaling (``hw.deca.scale``) -> TOut double buffer
(``hw.deca.tout``). Output semantics: :func:`golden.deca.pe_decompress`.

Cycle model (``hw.deca.cycles`` and :func:`cycle_model`): a vOp holds the dequantization stage
max(1, ceil(Wnd/Lq)) cycles, so with inputs ready and the output draining a tile occupies
sum(vop cycles) cycles (>= 512/W, the TOut drain time, which the double buffer hides). A tile's last
chunk leaves ``FILL_TO_OUT`` cycles after its last vOp's final dequantization cycle, plus the drain:
SD, DD, 2 multiplier stages, TOut write, then 512/W chunks.
"""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.deca_spec import (
    LANE_CHOICES,
    LANES,
    LINE_BITS,
    MASK_DEPTH,
    SCALE_DEPTH,
    SQQ_DEPTH,
    TILE,
    VALUE_BITS,
    W_CHOICES,
    W,
)
from hw.cycles import CycleModel
from hw.deca.cycles import expected_tile_cycles, lq
from hw.deca.dequant import Dequantize
from hw.deca.descriptor import CMD
from hw.deca.lut_array import LUT_WRITE, LutArray
from hw.deca.queues import SqqAligner, TileQueue, tile_entry
from hw.deca.scale import PIPE_DEPTH, ScaleStage
from hw.deca.tout import TOut, chunk_out

FILL_TO_OUT = PIPE_DEPTH + 1  # + the TOut write; the first chunk is offered the cycle after


def check_params(w: int, lanes: int, tile: int = TILE) -> None:
    if w not in W_CHOICES:
        raise ValueError(f"w: {w} not allowed; allowed {', '.join(map(str, W_CHOICES))}")
    if lanes not in LANE_CHOICES:
        raise ValueError(f"lanes: {lanes} not allowed; a power of two from 1 to {LANE_CHOICES[-1]}")
    if tile & (tile - 1) or not 2 * w <= tile <= TILE:
        raise ValueError(f"tile: {tile} not allowed; a power of two from 2 * w = {2 * w} to {TILE}")


def cycle_model(w: int = W, lanes: int = LANES, bits: int = 8, density: float = 1.0, **_params) -> CycleModel:
    """latency: from a tile's last dequantization cycle (its descriptor retires) to its last chunk's
    acceptance, FILL_TO_OUT + 512/W - 1; ii: cycles per tile, 512/W * (1 + bpv) — exact for dense
    tiles, the binomial expectation for sparse ones (each tile's exact count: ``tile_cycles``)."""
    check_params(w, lanes)
    return CycleModel(latency=FILL_TO_OUT + TILE // w - 1, ii=expected_tile_cycles(w, lq(bits, lanes, w), density))


class DecaPE(wiring.Component):
    """W output lanes per vOp, L big LUTs; queue depths default to Table 3 (SQQ 32 x 64 B, bitmask queue
    16 x 4 B, scale-factor queue 32 x 2 B); ``tile`` elements per tile default to the AMX tile's 512 (a
    smaller one: the same control with fewer vOps, for the formal check). Members: the ports listed in the
    module docstring."""

    def __init__(
        self,
        w: int = W,
        lanes: int = LANES,
        sqq_depth: int = SQQ_DEPTH,
        mask_depth: int = MASK_DEPTH,
        scale_depth: int = SCALE_DEPTH,
        tile: int = TILE,
    ):
        check_params(w, lanes, tile)
        self.w, self.lanes, self.tile = w, lanes, tile
        self.sqq_depth, self.mask_depth, self.scale_depth = sqq_depth, mask_depth, scale_depth
        super().__init__(
            {
                "lut": In(stream.Signature(LUT_WRITE)),
                "cmd": In(stream.Signature(CMD)),
                "sqq": In(stream.Signature(tile_entry(LINE_BITS))),
                "mask": In(stream.Signature(tile_entry(w))),
                "scale": In(stream.Signature(tile_entry(VALUE_BITS))),
                "o": Out(stream.Signature(chunk_out(w))),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.sqq = sqq = SqqAligner(self.sqq_depth)
        m.submodules.maskq = maskq = TileQueue(self.w, self.mask_depth)
        m.submodules.scaleq = scaleq = TileQueue(VALUE_BITS, self.scale_depth)
        m.submodules.dequant = dq = Dequantize(self.w, self.lanes, self.tile)
        m.submodules.luts = luts = LutArray(self.lanes, dq.lookups)
        m.submodules.scale_stage = sc = ScaleStage(self.w, self.tile)
        m.submodules.tout = tout = TOut(self.w, self.tile)
        for port, sub in (
            (self.sqq, sqq.i),
            (self.mask, maskq.i),
            (self.scale, scaleq.i),
            (self.lut, luts.w),
            (self.cmd, dq.cmd),
        ):
            wiring.connect(m, wiring.flipped(port), sub)
        wiring.connect(m, sqq.r, dq.sqq)
        wiring.connect(m, maskq.r, dq.maskq)
        wiring.connect(m, scaleq.r, dq.scaleq)
        wiring.connect(m, dq.lut, luts.lookup)
        wiring.connect(m, dq.o, sc.i)
        wiring.connect(m, sc.o, tout.i)
        wiring.connect(m, tout.o, wiring.flipped(self.o))
        return m
