"""The Hermes testbench cases for the shared stream testbench (tb/stream_tb.py): the NDP core's bit-serial
multiplier against golden.hermes. ``SPECS`` is what `make test` runs; ``FULL_SPECS`` adds the paper's
sizes for `make sim` (marker ``full``)."""

from __future__ import annotations

import itertools
import random

from amaranth.lib import data

from golden import hermes
from golden.fp import FP16
from golden.hermes_spec import ACC_BITS, MUL_LANES
from hw.hermes import bitserial
from tb.case import StreamCase
from tb.runner import TbSpec
from tb.stimulus import edge_values, random_value
from tb.streams import pack

EDGES = edge_values(FP16)


def _fp16(rng: random.Random, edge: float = 0.05) -> int:
    return rng.choice(EDGES) if rng.random() < edge else random_value(rng, FP16)


def _bitserial_case(spec: TbSpec) -> StreamCase:
    p = {"lanes": MUL_LANES, "serial_bits": 1, **spec.params}
    lanes, layout = p["lanes"], data.ArrayLayout(ACC_BITS, p["lanes"])

    def rand(rng: random.Random) -> dict:
        return {"a": [_fp16(rng) for _ in range(lanes)], "b": [_fp16(rng) for _ in range(lanes)]}

    def golden(v: dict) -> list[int]:
        return [pack(layout, [hermes.mul(a, b) for a, b in zip(v["a"], v["b"], strict=True)])]

    pairs = list(itertools.product(EDGES, EDGES))  # every edge value against every other
    directed = [{"a": [a for a, _ in pairs[i:i + lanes]], "b": [b for _, b in pairs[i:i + lanes]]}
                for i in range(0, len(pairs) - lanes + 1, lanes)]
    return StreamCase(golden, rand, directed, bitserial.cycle_model(**p), max_items=80_000 // lanes)


CASES = {"hermes_bitserial": _bitserial_case}


def case(spec: TbSpec) -> StreamCase:
    return CASES[spec.unit](spec)


SPECS = [TbSpec("hermes_bitserial", "hw.hermes.bitserial:BitSerialMul", {"lanes": 2}),
         TbSpec("hermes_bitserial", "hw.hermes.bitserial:BitSerialMul", {"lanes": 2, "serial_bits": 4})]
# the paper's sizes (make sim only: pytest marker "full")
FULL_SPECS = [TbSpec("hermes_bitserial", "hw.hermes.bitserial:BitSerialMul", {"lanes": MUL_LANES})]
