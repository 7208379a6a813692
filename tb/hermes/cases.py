"""The Hermes testbench cases for the shared stream testbench (tb/stream_tb.py): the NDP core's bit-serial
multiplier and the GEMV unit against golden.hermes. ``SPECS`` is what `make test` runs; ``FULL_SPECS`` adds the paper's
sizes for `make sim` (marker ``full``)."""

from __future__ import annotations

import itertools
import random

import numpy as np

from golden import hermes
from golden.fp import FP16
from golden.hermes_spec import (
    ACT_BUFFER_BYTES,
    ACT_LANES,
    MAX_BATCH,
    MUL_LANES,
    REDUCED,
    ActOp,
    Gemv,
    Mode,
    Op,
    pack_desc,
)
from hw.arith.cycles import UNIT_FPMUL
from hw.hermes import activation, bitserial, core, gemv
from hw.hermes import cycles as hcycles
from hw.hermes.cycles import PAPER_RECORDS, UNIT_ACTIVATION, UNIT_BITSERIAL, UNIT_CORE, UNIT_GEMV
from tb.case import StreamCase, command_case, desc_items, malformed_items
from tb.runner import TbSpec
from tb.stimulus import edge_values, random_value
from tb.streams import pack

EDGES = edge_values(FP16)
PROBE_BEATS = 8  # the activation probe's softmax length


def _fp16(rng: random.Random, edge: float = 0.05) -> int:
    return rng.choice(EDGES) if rng.random() < edge else random_value(rng, FP16)


def _matrix(rng: random.Random, shape: tuple[int, int], edge: float) -> np.ndarray:
    return np.array([[_fp16(rng, edge) for _ in range(shape[1])] for _ in range(shape[0])], np.uint16)


def _bitserial_case(spec: TbSpec) -> StreamCase:
    p = {"lanes": MUL_LANES, "serial_bits": 1, **spec.params}
    lanes, layout = p["lanes"], bitserial.out_layout(p["lanes"])

    def rand(rng: random.Random) -> dict:
        return {"a": [_fp16(rng) for _ in range(lanes)], "b": [_fp16(rng) for _ in range(lanes)]}

    def golden(v: dict) -> list[int]:
        return [
            pack(layout, {"p": hermes.mul(a, b), "lane": t})
            for t, (a, b) in enumerate(zip(v["a"], v["b"], strict=True))
        ]

    pairs = list(itertools.product(EDGES, EDGES))  # every edge value against every other
    directed = [
        {"a": [a for a, _ in pairs[i : i + lanes]], "b": [b for _, b in pairs[i : i + lanes]]}
        for i in range(0, len(pairs) - lanes + 1, lanes)
    ]
    return StreamCase(golden, rand, directed, bitserial.cycle_model(**p), max_items=80_000 // lanes)


# --- GEMV unit: one descriptor, its operands and its weights ------------------------------------------------


def _gemv_words(g: Gemv) -> tuple[int, int]:
    """The operand buffer's capacity in beats: DOT's FP16 operands, AXPY's FP32 partial sums."""
    return g.buffer_bytes // (2 * g.beat), g.buffer_bytes // (4 * g.beat)


def _gemv_txn(g: Gemv, rng: random.Random, mode: int, n: int, kb: int, batch: int, edge: float = 0.05) -> dict:
    w = _matrix(rng, (n, kb * g.beat - rng.randrange(g.beat)), edge)
    v = _matrix(rng, (batch, w.shape[1] if mode == Mode.DOT else n), edge)
    return {"items": hermes.gemv_items(mode, w, v, g), "shape": (mode, n, kb, batch)}


def _gemv_fits(g: Gemv, rng: random.Random) -> tuple[int, int, int, int]:
    """A random descriptor the buffer holds."""
    dot_words, psum_words = _gemv_words(g)
    mode = rng.choice(list(Mode))
    batch = rng.choice([1, 2, rng.randint(1, MAX_BATCH)])
    kb = rng.randint(1, max(1, min(3, (dot_words if mode == Mode.DOT else psum_words) // batch)))
    if batch * kb > (dot_words if mode == Mode.DOT else psum_words):
        batch = 1
    return mode, rng.randint(1, 3), kb, batch


def _gemv_flagged(g: Gemv, rng: random.Random) -> dict:
    dot_words, psum_words = _gemv_words(g)
    roll = rng.randrange(5)
    mode, n, kb, batch = _gemv_fits(g, rng)
    if roll == 0:
        n, kb, batch = rng.choice([(0, kb, batch), (n, 0, batch), (n, kb, 0)])
    elif roll == 1:
        batch = rng.randint(MAX_BATCH + 1, 31)
    elif roll == 2:
        kb = (dot_words if mode == Mode.DOT else psum_words) // batch + 1  # BUF_OVER
    else:  # MALFORMED
        return malformed_items(rng, _gemv_txn(g, rng, mode, n, kb, batch)["items"], Op, drop=roll == 3)
    return desc_items(rng, pack_desc(mode, n, kb, batch), Op)


def _gemv_const(g: Gemv, mode: int, n: int, kb: int, batch: int, wv: int, xv: int) -> dict:
    w = np.full((n, kb * g.beat), wv, np.uint16)
    v = np.full((batch, w.shape[1] if mode == Mode.DOT else n), xv, np.uint16)
    return {"items": hermes.gemv_items(mode, w, v, g), "shape": (mode, n, kb, batch)}


def _gemv_directed(g: Gemv) -> list[dict]:
    """Edge values per mode, the full buffer, and descriptors the unit flags."""
    dot_words, psum_words = _gemv_words(g)
    rng = random.Random(7)
    one, neg_zero = 0x3C00, FP16.sign_bit
    directed = []
    for mode in Mode:
        words = dot_words if mode == Mode.DOT else psum_words
        directed += [
            _gemv_const(g, mode, 1, 1, 1, neg_zero, one),
            _gemv_const(g, mode, 2, 1, 2, 0, 0),
            _gemv_const(g, mode, 1, 1, 1, FP16.inf_bits, one),
            _gemv_const(g, mode, 1, 1, 2, FP16.inf_bits, neg_zero),
            _gemv_const(g, mode, 1, 1, 1, 1, one),  # subnormal weights
            _gemv_const(g, mode, 2, 1, 1, FP16.max_bits, FP16.max_bits),  # FP16 overflow at the final rounding
            _gemv_txn(g, rng, mode, 2, 1, 1, edge=0.5),
            _gemv_txn(g, rng, mode, 1, 1, MAX_BATCH if words >= MAX_BATCH else 1),
            _gemv_txn(g, rng, mode, 1, words, 1),
        ]  # the full buffer
    return directed + [
        {"items": [(Op.DESC, pack_desc(*d), 1)], "shape": None}
        for d in [(0, 0, 0, 0), (0, 1, 1, 1), (1, 1, 1, MAX_BATCH + 1), (0, 1, dot_words + 1, 1)]
    ]


def _gemv_case(spec: TbSpec) -> StreamCase:
    g = gemv.geometry(**spec.params)

    def timing(rng: random.Random) -> dict:
        return _gemv_txn(g, rng, *gemv.TIMING)

    def probe(rng: random.Random) -> dict:  # the operations' rate over a longer batch: the system model's
        return _gemv_txn(g, rng, Mode.DOT, 2, 2, 4)

    def measure(dut, t: dict) -> dict:
        return {
            "probe_shape": list(t["shape"]),
            "probe_cycles": gemv.txn_cycles(*t["shape"], g),
            "op_cycles": gemv.ii(g),
        }  # the probe's measured cycles were asserted equal to these

    return command_case(
        lambda rng: _gemv_txn(g, rng, *_gemv_fits(g, rng)),
        lambda rng: _gemv_flagged(g, rng),
        lambda items: hermes.gemv_run(items, g),
        gemv.out_layout(g),
        lambda *shape: gemv.txn_cycles(*shape, g),
        gemv.error_cycles,
        _gemv_directed(g),
        gemv.cycle_model(**spec.params),
        timing=timing,
        probe=probe,
        measure=measure,
        max_items=max(48, 8000 // g.beat),
    )  # the golden's Python products: ~1 s per full-size beat


# --- activation unit: one command's beats -------------------------------------------------------------------


def _act_command(lanes: int, op: int, a: list[int], b: list[int] | None = None) -> dict:
    return {"beats": hermes.act_items(op, a, b, lanes), "op": op, "n": len(a), "ok": True}


def _act_values(rng: random.Random, n: int, op: int) -> list[int]:
    if op == ActOp.SOFTMAX:  # scores within a few units: the probabilities are not all 0
        spread = rng.choice([1, 4, 12])
        return [_fp16(rng, 0.02) if rng.random() < 0.3 else random_value(rng, FP16, exp_span=spread) for _ in range(n)]
    return [_fp16(rng, 0.05) for _ in range(n)]


def _act_good(rng: random.Random, lanes: int, cap: int) -> dict:
    op = rng.choice(list(ActOp))
    n = rng.choice([1, lanes, lanes + 1, rng.randint(1, 4 * lanes)])
    if op == ActOp.SOFTMAX and rng.random() < 0.3:
        n = rng.randint(1, cap)
    b = [_fp16(rng, 0.05)] * n if op == ActOp.SCALE else _act_values(rng, n, op)
    return _act_command(lanes, op, _act_values(rng, n, op), b)


def _act_flagged(rng: random.Random, lanes: int, cap: int) -> dict:
    t, roll = _act_good(rng, lanes, cap), rng.randrange(4)
    beats = [dict(b) for b in t["beats"]]
    if roll == 0:
        beats[0]["n"] = 0  # ZERO_LEN
    elif roll == 1:
        beats = hermes.act_items(ActOp.SOFTMAX, [0] * (cap + 1), None, lanes)  # LEN_OVER
    elif roll == 2:
        beats[0]["n"] = t["n"] + lanes  # more beats promised than sent: last early
    else:  # an op change, or a missing last followed by a stray beat
        extra = dict(beats[-1], last=1, op=(beats[-1]["op"] + 1) % 4)
        beats[-1]["last"] = 0
        beats.append(extra)
    return {"beats": beats, "ok": False}


def _act_directed(lanes: int, cap: int) -> list[dict]:
    """Edge values per operation, the full buffer, and commands the unit flags."""

    def command(op: int, a: list[int], b: list[int] | None = None) -> dict:
        return _act_command(lanes, op, a, b)

    rng = random.Random(11)
    directed = [
        command(ActOp.SOFTMAX, [0]),
        command(ActOp.SOFTMAX, [FP16.sign_bit] + [0] * (lanes - 1)),
        command(ActOp.SOFTMAX, [FP16.nan_bits] + [0] * lanes),
        command(ActOp.SOFTMAX, [FP16.inf_bits, 0]),
        command(ActOp.SOFTMAX, [0x3C00] * cap),  # the full buffer
        command(ActOp.SOFTMAX, [1, 0x8001, 0x0400] * lanes),  # subnormals
        command(ActOp.RELU, EDGES),
        command(ActOp.MERGE, EDGES, EDGES[::-1]),
        command(ActOp.MERGE, [FP16.max_bits] * lanes, [FP16.max_bits] * lanes),  # overflow
        command(ActOp.SCALE, EDGES, [0x3C00 ^ FP16.sign_bit] * len(EDGES)),
        command(ActOp.SCALE, EDGES, [FP16.inf_bits] * len(EDGES)),
        command(ActOp.SCALE, [1] * lanes, [0x3800] * lanes),  # a subnormal halved: ties to even
        {"beats": hermes.act_items(ActOp.RELU, [], None, lanes), "ok": False},  # n = 0
        {"beats": hermes.act_items(ActOp.SOFTMAX, [0] * (cap + 1), None, lanes), "ok": False},
    ]
    return directed + [_act_flagged(rng, lanes, cap) for _ in range(6)]


def _activation_case(spec: TbSpec) -> StreamCase:
    p = {"lanes": ACT_LANES, "buffer_bytes": ACT_BUFFER_BYTES, **spec.params}
    lanes = p["lanes"]
    cap = activation.max_scores(lanes, p["buffer_bytes"])
    layout = activation.out_layout(lanes)

    def rand(rng: random.Random) -> dict:
        return _act_flagged(rng, lanes, cap) if rng.random() < 0.1 else _act_good(rng, lanes, cap)

    def golden(t: dict) -> list[int]:
        return [
            pack(layout, {"y": y, "last": last, "error": err})
            for y, last, err in hermes.act_run(t["beats"], lanes, cap)
        ]

    def lone(t: dict) -> int:
        if t["ok"]:
            return activation.txn_cycles(t["op"], t["n"], **p)
        # flagged: a bound (the beat that closes a malformed transaction still runs its path; only timeouts use it)
        beats = t["beats"]
        return hcycles.act_error_cycles(len(beats)) + activation.txn_cycles(beats[0]["op"], len(beats) * lanes, **p)

    def softmax_row(rng: random.Random, beats: int) -> dict:
        return _act_command(lanes, ActOp.SOFTMAX, _act_values(rng, beats * lanes, ActOp.SOFTMAX))

    def measure(dut, t: dict) -> dict:
        return {
            "probe_beats": PROBE_BEATS,
            "probe_cycles": activation.txn_cycles(ActOp.SOFTMAX, t["n"], **p),
            "timing_beats": activation.TIMING[1],
        }  # the probe's measured cycles were asserted equal

    return StreamCase(
        golden,
        rand,
        _act_directed(lanes, cap),
        activation.cycle_model(**p),
        lambda t: t["beats"],
        lone_cycles=lone,
        timing=lambda rng: softmax_row(rng, activation.TIMING[1]),
        probe=lambda rng: softmax_row(rng, PROBE_BEATS),  # a second softmax length: the system model's cycles per beat
        measure=measure,
        ii_per="txn",
        burst_txns=8,
        max_items=16_000 // lanes,
    )


# --- NDP core: a layer's cold-neuron work through the command front end ----------------------------------------


def _wrap(unit: int, t: dict) -> dict:
    return {"unit": unit, "t": t}


def _core_layer(g: Gemv, act_lanes: int) -> list[dict]:
    """A layer's cold-neuron MLP work as the host issues it: up-projection rows, ReLU, down-projection
    columns, merge."""
    rng = random.Random(13)
    d = g.beat
    w1, x = _matrix(rng, (3, 2 * d), 0.02), _matrix(rng, (1, 2 * d), 0.02)
    h = hermes.gemv_dot(w1, x, g)[0]
    w2 = _matrix(rng, (3, d), 0.02)
    hidden = hermes.elementwise(ActOp.RELU, list(h), [])
    y = hermes.gemv_axpy(w2, np.array([hidden], np.uint16), g)[0]
    merge = hermes.act_items(ActOp.MERGE, list(y), _matrix(rng, (1, d), 0.02)[0].tolist(), act_lanes)
    return [
        _wrap(core.GEMV, {"items": hermes.gemv_items(Mode.DOT, w1, x, g), "shape": (Mode.DOT, 3, 2, 1)}),
        _wrap(
            core.ACT,
            {"beats": hermes.act_items(ActOp.RELU, list(h), None, act_lanes), "op": ActOp.RELU, "n": 3, "ok": True},
        ),
        _wrap(
            core.GEMV,
            {
                "items": hermes.gemv_items(Mode.AXPY, w2, np.array([hidden], np.uint16), g),
                "shape": (Mode.AXPY, 3, 1, 1),
            },
        ),
        _wrap(core.ACT, {"beats": merge, "op": ActOp.MERGE, "n": d, "ok": True}),
    ]


def _core_case(spec: TbSpec) -> StreamCase:
    p = spec.params
    gp = {k: p[k] for k in ("multipliers", "lanes", "buffer_bytes") if k in p}
    ap = {"lanes": p.get("act_lanes", ACT_LANES), "buffer_bytes": p.get("act_buffer_bytes", ACT_BUFFER_BYTES)}
    sub = {
        core.GEMV: _gemv_case(TbSpec(UNIT_GEMV, "hw.hermes.gemv:GemvUnit", gp)),
        core.ACT: _activation_case(TbSpec(UNIT_ACTIVATION, "hw.hermes.activation:ActivationUnit", ap)),
    }
    g = gemv.geometry(**gp)
    out = core.out_layout(g, ap["lanes"])

    def rand(rng: random.Random) -> dict:
        unit = rng.choice([core.GEMV, core.ACT])
        return _wrap(unit, sub[unit].random(rng))

    def items(t: dict) -> list[dict]:
        other = core.ACT if t["unit"] == core.GEMV else core.GEMV
        field = {core.GEMV: "gemv", core.ACT: "act"}
        return [{"unit": t["unit"], field[t["unit"]]: it, field[other]: 0} for it in sub[t["unit"]].items(t["t"])]

    def golden(t: dict) -> list[int]:  # the other unit's field reads 0
        field = "gemv" if t["unit"] == core.GEMV else "act"
        return [
            pack(out, {"unit": t["unit"], "gemv": 0, "act": 0, field: bits}) for bits in sub[t["unit"]].golden(t["t"])
        ]

    directed = (
        _core_layer(g, ap["lanes"])
        + [_wrap(core.GEMV, t) for t in sub[core.GEMV].directed[-2:]]
        + [_wrap(core.ACT, t) for t in sub[core.ACT].directed[-2:]]
    )
    return StreamCase(
        golden,
        rand,
        directed,
        core.cycle_model(**p),
        items,
        lone_cycles=lambda t: sub[t["unit"]].txn_cycles(t["t"]),
        timing=lambda rng: _wrap(core.GEMV, sub[core.GEMV].timing_txn(rng)),
        ii_per="txn",
        burst_txns=8,
        max_items=sub[core.GEMV].max_items,
    )


CASES = {
    UNIT_BITSERIAL: _bitserial_case,
    UNIT_GEMV: _gemv_case,
    UNIT_ACTIVATION: _activation_case,
    UNIT_CORE: _core_case,
}


def case(spec: TbSpec) -> StreamCase:
    return CASES[spec.unit](spec)


_G = {"multipliers": REDUCED.multipliers, "lanes": REDUCED.lanes, "buffer_bytes": REDUCED.buffer_bytes}
SPECS = [
    TbSpec(UNIT_BITSERIAL, "hw.hermes.bitserial:BitSerialMul", {"lanes": 2}),
    TbSpec(UNIT_GEMV, "hw.hermes.gemv:GemvUnit", _G),
    TbSpec(UNIT_ACTIVATION, "hw.hermes.activation:ActivationUnit", {"lanes": 4, "buffer_bytes": 64}),
    TbSpec(UNIT_CORE, "hw.hermes.core:NdpCore", {**_G, "act_lanes": 4, "act_buffer_bytes": 64}),
    TbSpec(UNIT_BITSERIAL, "hw.hermes.bitserial:BitSerialMul", {"lanes": 2, "serial_bits": 4}),
]
# the paper's sizes (make sim only: pytest marker "full"), all on Verilator. The 2048-lane GEMV (Icarus: hours): ~9
# min, 7 of them elaboration, verilation and C++ (2026-11-24; on 2026-11-26, stage by stage: Amaranth's RTLIL 368 s,
# Yosys 41 s, Verilator 178 s after tb.runner.merge_identical_modules (252 before), C++ at -O0 287 s, simulation 216
# s; RTLIL 327 s on 2026-11-27 after Operands' beat became one assignment; 49 s, 57 s with Yosys, once hw/share.py
# built each FP datapath and the multiplier once: 10 min 9 s cold in make sim; its model's C++ at -O1, big_opt: its
# tests 103 s instead of 233 s, for 2 more minutes of compiling). The 256-lane activation unit: 4.9
# min, 2.5 of them elaboration (26 MB of Verilog; 28 s with hw/share.py: 5.5 min cold in make sim), 2 verilating
# (without merge-cond: tb/runner.BIG_VERILATOR_ARGS) and compiling, 33 s of simulation; on Icarus it did not
# finish compiling in 11 min. Its C++ at -O1 (big_opt; 2026-11-27, compiled alone, no ccache): 5 min 9 s of CPU
# instead of 4 min 4 s, its tests 54 s instead of 101 s. The 8-lane multiplier streams its
# 10,000 products transaction-level on Verilator: 40 s with the build, against 218 s per-cycle on Icarus.
FULL_SPECS = [
    TbSpec(UNIT_BITSERIAL, "hw.hermes.bitserial:BitSerialMul", {"lanes": MUL_LANES}, sim="verilator", harness=True),
    TbSpec(UNIT_GEMV, "hw.hermes.gemv:GemvUnit", PAPER_RECORDS[UNIT_GEMV], sim="verilator", big_opt="-O1"),
    TbSpec(
        UNIT_ACTIVATION,
        "hw.hermes.activation:ActivationUnit",
        PAPER_RECORDS[UNIT_ACTIVATION],
        sim="verilator",
        big_opt="-O1",
    ),
]
# The area proxy (`make area`, tb/area.py): one bit-serial multiplier against one parallel FP16 x FP16 -> FP32
# multiplier, and the GEMV unit and activation unit each at two sizes, so the report can extrapolate cells
# linearly to the DSE's 32-512 multipliers and the paper's 256 lanes; buffers of a few beats, since the
# paper's SRAM is not logic
AREA_SPECS = {
    "bitserial_mul": TbSpec(UNIT_BITSERIAL, "hw.hermes.bitserial:BitSerialMul", {"lanes": MUL_LANES}),
    "parallel_mul": TbSpec(UNIT_FPMUL, "hw.arith.fpmul:FpMul", {"fmt_in": "fp16", "fmt_out": "fp32"}),
    **{
        f"gemv_m{m}": TbSpec(
            UNIT_GEMV,
            "hw.hermes.gemv:GemvUnit",
            {"multipliers": m, "lanes": MUL_LANES, "buffer_bytes": 4 * m * MUL_LANES * 4},
        )
        for m in (4, 8)
    },
    **{
        f"activation_l{n}": TbSpec(
            UNIT_ACTIVATION, "hw.hermes.activation:ActivationUnit", {"lanes": n, "buffer_bytes": 4 * n}
        )
        for n in (4, 8)
    },
}
