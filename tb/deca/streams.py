"""Turning golden.deca tiles into the DECA PE's port traffic, and its output back into tiles."""

from __future__ import annotations

import numpy as np

from golden import deca
from golden.deca_spec import LINE_BITS, TILE, VALUE_BITS
from hw.deca.descriptor import CMD
from hw.deca.lut_array import LUT_WRITE
from hw.deca.queues import tile_entry
from hw.deca.tout import chunk_out
from tb.streams import pack


def lut_items(image: list[int]) -> list[int]:
    return [pack(LUT_WRITE, {"addr": a, "data": v}) for a, v in enumerate(image)]


def _delimited(values: list[int], width: int) -> list[int]:
    layout = tile_entry(width)
    return [pack(layout, {"data": v, "last": int(i == len(values) - 1)}) for i, v in enumerate(values)]


def tile_items(ts: deca.TileStreams, w: int) -> dict[str, list[int]]:
    """Per-port items for one tile: the mask only for sparse tiles, scales only for scaled ones."""
    c = ts.cmd
    items = {"cmd": [pack(CMD, c.fields())], "sqq": _delimited(ts.lines, LINE_BITS), "mask": [], "scale": []}
    if c.sparse:
        items["mask"] = _delimited(ts.mask, w)
    if c.scaled:
        items["scale"] = _delimited(ts.scales, VALUE_BITS)
    return items


def expected_chunks(out: np.ndarray, flags: int, w: int) -> list[int]:
    layout = chunk_out(w)
    nv = TILE // w
    return [
        pack(layout, {"data": [int(x) for x in out[v * w : (v + 1) * w]], "last": int(v == nv - 1), "error": flags})
        for v in range(nv)
    ]
