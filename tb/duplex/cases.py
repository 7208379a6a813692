"""The Duplex testbench cases for the shared stream testbench (tb/stream_tb.py): the Logic-PIM GEMM module,
softmax unit and gated activation, each against golden.duplex. ``SPECS`` is what `make test` runs (a
4 x 2 module); ``FULL_SPECS`` adds the paper's 64-lane activation for `make sim` (marker ``full``)."""

from __future__ import annotations

import random

import numpy as np

from golden import duplex
from golden.duplex_spec import ACT_LANES, REDUCED, SOFTMAX_BUFFER_BYTES, SOFTMAX_LANES, Geometry, Op
from golden.softmax import NEG_INF, softmax
from hw.common import softmax as softmax_hw
from hw.duplex import activation, gemm_module, softmax_unit
from hw.duplex import cycles as dcycles
from hw.duplex.cycles import PAPER_RECORDS, UNIT_ACTIVATION, UNIT_GEMM_MODULE, UNIT_SOFTMAX, UNIT_STACK
from tb.case import StreamCase, command_case, desc_items, malformed_items
from tb.runner import TbSpec
from tb.stimulus import edge_values, random_value
from tb.streams import pack

F = duplex.F
EDGES = edge_values(F)


def _fp16(rng: random.Random, edge: float = 0.03) -> int:
    return rng.choice(EDGES) if rng.random() < edge else random_value(rng, F, exp_span=6)


def _matrix(rng: random.Random, shape: tuple[int, int], edge: float = 0.03) -> np.ndarray:
    return np.array([[_fp16(rng, edge) for _ in range(shape[1])] for _ in range(shape[0])], dtype=np.uint16)


# --- GEMM module: one descriptor, its inputs and its weights -------------------------------------------------


def _gemm(g: Geometry, rng: random.Random, m: int, k: int, n: int, edge: float = 0.03) -> dict:
    w, x = _matrix(rng, (g.modules * m, k), edge), _matrix(rng, (n, k), edge)
    return {"items": duplex.module_items(w, x, g), "shape": (m, k, n)}


def _gemm_fits(g: Geometry, rng: random.Random) -> tuple[int, int, int]:
    """A random descriptor the input buffer holds."""
    n = rng.choice([1, g.lanes, g.lanes + 1, rng.randint(1, 3 * g.lanes)])
    kb_max = g.lane_words // g.groups(n)
    if kb_max == 0:
        n, kb_max = g.lanes, g.lane_words
    return g.rows * rng.randint(1, 3), g.rows * rng.randint(1, min(kb_max, 4)), n


def _gemm_flagged(g: Geometry, rng: random.Random) -> dict:
    roll = rng.randrange(5)
    m, k, n = _gemm_fits(g, rng)
    if roll == 0:
        m, k, n = rng.choice([(0, k, n), (m, 0, n), (m, k, 0)])
    elif roll == 1:
        m, k = m + rng.randint(1, g.rows - 1), k + rng.choice([0, 1])  # M_ALIGN (and maybe K_ALIGN)
    elif roll == 2:
        n = g.lanes * (g.lane_words // (k // g.rows) + 1)  # BUF_OVER
    else:  # MALFORMED
        return malformed_items(rng, _gemm(g, rng, m, k, n)["items"], Op, drop=roll == 3)
    return desc_items(rng, duplex.pack_desc(m, k, n), Op)


def _gemm_directed(g: Geometry) -> list[dict]:
    """Edge values, the whole lane bank, the whole buffer, and descriptors the module flags."""
    rng = random.Random(7)
    one, neg_zero = duplex.ONE, F.sign_bit
    kmax = g.rows * g.lane_words  # one token: the whole lane bank

    def const(m: int, k: int, n: int, wv: int, xv: int) -> dict:
        w, x = np.full((g.modules * m, k), wv, dtype=np.uint16), np.full((n, k), xv, dtype=np.uint16)
        return {"items": duplex.module_items(w, x, g), "shape": (m, k, n)}

    directed = [
        const(g.rows, g.rows, 1, neg_zero, one),
        const(g.rows, g.rows, g.lanes, 0, 0),
        const(g.rows, g.rows, 1, F.inf_bits, one),
        const(g.rows, g.rows, 2, F.inf_bits, neg_zero),
        const(g.rows, g.rows, 1, 1, one),  # subnormal weights
        const(g.rows, g.rows, 1, F.max_bits, F.max_bits),
        _gemm(g, rng, g.rows, g.rows, 1, edge=0.5),
        _gemm(g, rng, g.rows, kmax, 1),
        _gemm(g, rng, g.rows, g.rows, g.lanes * g.lane_words),
    ]
    return directed + [
        {"items": [(Op.DESC, duplex.pack_desc(*s), 1)], "shape": None}
        for s in [(0, 0, 0), (g.rows, g.rows, 1), (g.rows + 1, g.rows, 1), (g.rows, kmax + g.rows, 1)]
    ]


def _gemm_case(spec: TbSpec) -> StreamCase:
    g = Geometry(**spec.params)

    def probe(rng: random.Random) -> dict:
        return _gemm(g, rng, 2 * g.rows, g.rows * (g.lane_words // 2), g.lanes * 2)

    def measure(dut, t: dict) -> dict:
        m, k, n = t["shape"]
        return {
            "probe_shape": [m, k, n],
            "probe_cycles": gemm_module.txn_cycles(m, k, n, g),
            "compute_cycles": m // g.rows * k * g.groups(n),
        }

    return command_case(
        lambda rng: _gemm(g, rng, *_gemm_fits(g, rng)),
        lambda rng: _gemm_flagged(g, rng),
        lambda items: duplex.module_run(items, g),
        gemm_module.out_layout(g),
        lambda *shape: gemm_module.txn_cycles(*shape, g),
        dcycles.gemm_error_cycles,
        _gemm_directed(g),
        gemm_module.cycle_model(**spec.params),
        timing=lambda rng: _gemm(g, rng, *gemm_module.timing_shape(g)),
        probe=probe,
        measure=measure,
        extra={"flush_cycles": gemm_module.FLUSH},
        max_items=None if g.modules == 1 else 10_000 // g.modules,
    )  # Icarus time grows with modules


# --- activation: one beat of gate/up pairs ------------------------------------------------------------------


def _activation_case(spec: TbSpec) -> StreamCase:
    lanes = spec.params["lanes"]

    def rand(rng: random.Random) -> dict:
        return {"g": [_fp16(rng, 0.05) for _ in range(lanes)], "u": [_fp16(rng, 0.05) for _ in range(lanes)]}

    def golden(v: dict) -> list[int]:
        return [
            pack(
                activation.Activation(lanes).o.payload.shape(),
                [duplex.silu_gate(a, b) for a, b in zip(v["g"], v["u"], strict=True)],
            )
        ]

    directed = [
        {
            "g": [EDGES[(i + k) % len(EDGES)] for i in range(lanes)],
            "u": [EDGES[(3 * i + k) % len(EDGES)] for i in range(lanes)],
        }
        for k in range(len(EDGES))
    ]
    # 40,000 gate/up pairs at most: 10,000 beats of 4 lanes, 625 of the paper's 64 (Icarus: ~14 beats/s)
    return StreamCase(golden, rand, directed, activation.cycle_model(), max_items=40_000 // lanes)


# --- softmax unit: one score row, padded to whole beats ------------------------------------------------------


def _row(lanes: int, scores: list[int]) -> dict:
    return {"scores": scores, "beats": -(-len(scores) // lanes)}


def _softmax_golden(t: dict, lanes: int, normalize: bool, max_beats: int) -> list[int]:
    """The output items golden's softmax gives a row: its beats (normalized), or e beats then one r item
    (deferred: hw/common/softmax.py), or one error item."""
    layout = softmax_hw.out_layout(lanes)
    vals, r, err = softmax(t["scores"], lanes, normalize, max_beats * lanes)
    if err:
        return [pack(layout, {"p": [0] * lanes, "r": 0, "last": 1, "error": err})]
    last = t["beats"] - 1 if normalize else -1
    beats = [
        pack(
            layout,
            {
                "p": vals[b * lanes : (b + 1) * lanes],
                "r": r if normalize else 0,
                "last": int(b == last),
                "error": 0,
            },
        )
        for b in range(t["beats"])
    ]
    return beats if normalize else beats + [pack(layout, {"p": [0] * lanes, "r": r, "last": 1, "error": 0})]


def _softmax_directed(lanes: int, max_beats: int) -> list[dict]:
    full = max_beats * lanes
    return [
        _row(lanes, s)
        for s in (
            [0],
            [NEG_INF] * lanes,
            [F.sign_bit] + [0] * (lanes - 1),  # -0 vs +0
            [F.nan_bits] + [0] * lanes,
            [F.inf_bits, 0, NEG_INF],
            [F.max_bits, F.max_bits ^ F.sign_bit] * lanes,
            [1, 0x8001, 0x0400] * lanes,  # subnormals
            [0x3C00] * full,
            [0] * (full + 1),
            EDGES * (2 * lanes // len(EDGES) + 1),
        )
    ]


def _softmax_case(spec: TbSpec) -> StreamCase:
    p = {"lanes": SOFTMAX_LANES, "buffer_bytes": SOFTMAX_BUFFER_BYTES, "normalize": True, **spec.params}
    lanes, normalize = p["lanes"], p["normalize"]
    max_beats = softmax_hw.max_beats(lanes, p["buffer_bytes"])

    def rand(rng: random.Random) -> dict:
        n = rng.choice([1, lanes, lanes + 1, rng.randint(1, min(max_beats, 16) * lanes), rng.randint(1, 3 * lanes)])
        if rng.random() < 0.04:
            n = max_beats * lanes + rng.randint(1, lanes + 1)  # LEN_OVER
        spread = rng.choice([1, 4, 12])  # scores within a few units: the probabilities are not all 0
        return _row(
            lanes,
            [_fp16(rng, 0.02) if rng.random() < 0.3 else random_value(rng, F, exp_span=spread) for _ in range(n)],
        )

    def items(t: dict) -> list[dict]:
        padded = t["scores"] + [NEG_INF] * (t["beats"] * lanes - len(t["scores"]))
        return [{"s": padded[b * lanes : (b + 1) * lanes], "last": int(b == t["beats"] - 1)} for b in range(t["beats"])]

    def timing(rng: random.Random) -> dict:
        return _row(lanes, [random_value(rng, F, exp_span=4) for _ in range(softmax_hw.TIMING_BEATS * lanes)])

    return StreamCase(
        lambda t: _softmax_golden(t, lanes, normalize, max_beats),
        rand,
        _softmax_directed(lanes, max_beats),
        softmax_unit.cycle_model(**p),
        items,
        lone_cycles=lambda t: dcycles.softmax_row_cycles(t["beats"], **p),
        timing=timing,
        ii_per="txn",
        burst_txns=8,
        max_items=16_000 // lanes,
    )


CASES = {
    UNIT_GEMM_MODULE: _gemm_case,
    UNIT_STACK: _gemm_case,
    UNIT_ACTIVATION: _activation_case,
    UNIT_SOFTMAX: _softmax_case,
}


def case(spec: TbSpec) -> StreamCase:
    return CASES[spec.unit](spec)


_R = {"rows": REDUCED.rows, "lanes": REDUCED.lanes, "buffer_bytes": REDUCED.buffer_bytes}
SPECS = [
    TbSpec(UNIT_GEMM_MODULE, "hw.duplex.gemm_module:GemmModule", _R),
    TbSpec(UNIT_STACK, "hw.duplex.stack:LogicPimStack", {**_R, "modules": 4}),
    TbSpec(UNIT_ACTIVATION, "hw.duplex.activation:Activation", {"lanes": 4}),
    TbSpec(UNIT_SOFTMAX, "hw.duplex.softmax_unit:SoftmaxUnit", {"lanes": 4, "buffer_bytes": 64}),
    TbSpec(
        UNIT_SOFTMAX,
        "hw.duplex.softmax_unit:SoftmaxUnit",
        {"lanes": 4, "buffer_bytes": 64, "normalize": False},
    ),
]
# the paper's sizes (make sim only: pytest marker "full"); the 512-MAC module on Verilator (Icarus: hours), and the
# 64-lane activation unit too (Icarus ran it at 12 cycles per second: 352 s in all). The module's C++ at -O1
# (big_opt; 2026-11-27, compiled alone, no ccache): 3 min 6 s of CPU instead of 2 min 36 s, its tests 31 s
# instead of 92 s
FULL_SPECS = [
    TbSpec(
        UNIT_GEMM_MODULE,
        "hw.duplex.gemm_module:GemmModule",
        PAPER_RECORDS[UNIT_GEMM_MODULE],
        sim="verilator",
        big_opt="-O1",
    ),
    TbSpec(UNIT_ACTIVATION, "hw.duplex.activation:Activation", {"lanes": ACT_LANES}, sim="verilator"),
    TbSpec(
        UNIT_SOFTMAX,
        "hw.duplex.softmax_unit:SoftmaxUnit",
        PAPER_RECORDS[UNIT_SOFTMAX],
    ),
]
# The area proxy (`make area`, tb/area.py): the GEMM module and the softmax unit each at two sizes, so the report
# can extrapolate cells linearly to the paper's 64 x 8 module and 64 lanes (synthesizing 512 MACs flat is hours);
# buffers of one vector, since the paper's SRAM is not logic
AREA_SPECS = {
    f"gemm_{r}x{t}": TbSpec(
        UNIT_GEMM_MODULE, "hw.duplex.gemm_module:GemmModule", {"rows": r, "lanes": t, "buffer_bytes": 2 * r * t}
    )
    for r, t in ((4, 2), (8, 2))
}
AREA_SPECS |= {
    f"softmax_{n}": TbSpec(UNIT_SOFTMAX, "hw.duplex.softmax_unit:SoftmaxUnit", {"lanes": n, "buffer_bytes": 2 * n})
    for n in (4, 8)
}
