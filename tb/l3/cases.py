"""The L3 testbench cases for the shared stream testbench (tb/stream_tb.py): re-layout, bank PU, adder
unit, softmax unit and the rank (one head written through the re-layout unit, then run), each against
golden.l3. ``SPECS`` is what `make test` runs (the reduced rank: 8 chips x 4 banks, d_head 32);
``FULL_SPECS`` adds the paper's 8 x 16 rank (d_head 128) for `make sim` (pytest marker ``full``)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from golden import l3
from golden.l3_spec import BEATS_PER_BURST, ELEMS_PER_RD, FULL, REDUCED, V_GROUPS, Err, Geometry, Mode, Op
from golden.softmax import NEG_INF
from hw.l3 import adder_unit, bank_pu, rank, relayout, softmax_unit
from hw.l3.cycles import (
    PAPER_RECORDS,
    UNIT_ADDER,
    UNIT_BANK_PU,
    UNIT_RANK,
    UNIT_RELAYOUT,
    UNIT_SOFTMAX,
    error_cycles,
)
from tb.case import StreamCase
from tb.runner import TbSpec
from tb.stimulus import edge_values, random_value
from tb.streams import pack

F = l3.F
EDGES = edge_values(F)


def _fp16(rng: random.Random) -> int:
    return random_value(rng, F, exp_span=4) if rng.random() < 0.9 else rng.choice(EDGES)


def _word(vals: list[int]) -> int:
    return pack(bank_pu.WORD, vals)


# --- re-layout: a write of host beats -----------------------------------------------------------------------


def _relayout_case(spec: TbSpec) -> StreamCase:
    inverse = spec.params.get("inverse", False)

    def rand(rng: random.Random) -> list[int]:
        n = rng.choice([8, 8, 16, 24, rng.randint(1, 20)])  # mostly whole bursts, sometimes not
        return [rng.getrandbits(64) for _ in range(n)]

    def items(beats: list[int]) -> list[dict]:
        return [{"data": b, "last": int(i == len(beats) - 1)} for i, b in enumerate(beats)]

    def golden(beats: list[int]) -> list[int]:
        return [
            pack(relayout.BEAT_OUT, {"data": d, "last": last, "error": err})
            for d, last, err in l3.relayout_write(beats, inverse)
        ]

    def whole(rng: random.Random) -> list[int]:  # whole bursts: one beat out per beat in
        return [rng.getrandbits(64) for _ in range(8 * rng.randint(1, 3))]

    directed = [[0] * 8, [(1 << 64) - 1] * 8, list(range(8)), [0x0123456789ABCDEF] * 3, [5]]
    return StreamCase(golden, rand, directed, relayout.cycle_model(), items, timing=whole)


# --- bank PU: one token's RD steps (score) or one group's tokens (context) ---------------------------------


def _bank_pu_case(spec: TbSpec) -> StreamCase:
    mode, group = Mode[spec.case_params["mode"].upper()], spec.params.get("group", 0)

    def rand(rng: random.Random) -> list[tuple]:
        n = rng.choice([1, 2, 4, 4, rng.randint(1, 9)])
        steps = []
        for _ in range(n):
            a = [_fp16(rng) for _ in range(ELEMS_PER_RD)]
            b = [_fp16(rng) for _ in range(ELEMS_PER_RD)]
            steps.append((a, b, mode == Mode.SCORE or rng.random() < 0.85))
        return steps

    def items(steps: list[tuple]) -> list[dict]:
        return [
            {"mode": int(mode), "a": a, "b": b, "en": int(en), "last": int(i == len(steps) - 1)}
            for i, (a, b, en) in enumerate(steps)
        ]

    def golden(steps: list[tuple]) -> list[int]:
        a_words = [_word(a) for a, _, _ in steps]
        if mode == Mode.SCORE:
            return [_word([l3.bank_score(a_words, [_word(b) for _, b, _ in steps]), 0, 0, 0])]
        return [_word(l3.bank_context(a_words, [b[group] for _, b, _ in steps], [en for *_, en in steps]))]

    one = l3.to_fp16(1.0)
    directed = [[([e] * 4, [one] * 4, True)] for e in EDGES] + [
        [([one] * 4, [e] * 4, True), ([e] * 4, [one] * 4, True)] for e in EDGES[:8]
    ]
    if mode == Mode.CONTEXT:
        directed += [[([one] * 4, [one] * 4, False)], [([one] * 4, [one] * 4, False), ([one] * 4, [one] * 4, True)]]
    return StreamCase(golden, rand, directed, bank_pu.cycle_model(mode.name.lower()), items)


# --- adder unit: one bank's 8 chip partials (score) or one dimension's 4 group accumulators (context) ---


def _adder_case(spec: TbSpec) -> StreamCase:
    def rand(rng: random.Random) -> dict:
        mode = rng.choice([Mode.SCORE, Mode.CONTEXT])
        return {"mode": int(mode), "x": [_fp16(rng) for _ in range(8)]}

    def golden(v: dict) -> list[int]:
        return [l3.adder_unit(v["x"][: 8 if v["mode"] == Mode.SCORE else 4])]

    directed = [
        {"mode": int(md), "x": [EDGES[(i + k) % len(EDGES)] for i in range(8)]}
        for k in range(len(EDGES))
        for md in Mode
    ]
    return StreamCase(golden, rand, directed, adder_unit.cycle_model())


# --- softmax unit: one head's scores --------------------------------------------------------------------


def _softmax_case(spec: TbSpec) -> StreamCase:
    chunk, max_tokens = spec.params["chunk"], spec.params["max_tokens"]

    def rand(rng: random.Random) -> list[int]:
        n = rng.choice([1, chunk, chunk + 1, rng.randint(1, 6 * chunk), rng.randint(1, max_tokens)])
        if rng.random() < 0.05:
            n = max_tokens + rng.randint(1, 2 * chunk)  # longer than the buffer: one error item
        return [_score(rng) for _ in range(n)]

    def _score(rng: random.Random) -> int:
        return random_value(rng, F, exp_span=3) if rng.random() < 0.97 else rng.choice(EDGES)

    def items(scores: list[int]) -> list[dict]:
        return [{"s": s, "last": int(i == len(scores) - 1)} for i, s in enumerate(scores)]

    def golden(scores: list[int]) -> list[int]:
        if len(scores) > max_tokens:
            return [pack(softmax_unit.PROB, {"p": 0, "last": 1, "error": int(Err.LEN_OVER)})]
        probs, _ = l3.chunk_softmax(scores, chunk)
        return [
            pack(softmax_unit.PROB, {"p": p, "last": int(i == len(probs) - 1), "error": 0}) for i, p in enumerate(probs)
        ]

    def one_chunk(rng: random.Random) -> list[int]:
        return [_score(rng) for _ in range(chunk)]

    def lone(scores: list[int]) -> int:
        return softmax_unit.head_cycles(len(scores), chunk, max_tokens)

    big = l3.to_fp16(60000.0)
    directed = [
        [0] * chunk,
        [NEG_INF] + [0] * (chunk - 1),
        [big, big | F.sign_bit, 0],
        [e for e in EDGES if e not in (F.nan_bits, F.nan_bits | F.sign_bit, F.inf_bits | 1)],
    ]
    return StreamCase(
        golden,
        rand,
        directed,
        softmax_unit.cycle_model(chunk, max_tokens),
        items,
        lone_cycles=lone,
        timing=one_chunk,
        ii_per="txn",
    )


# --- rank: one head written through the re-layout unit, then run ---------------------------------------------


@dataclass
class _Heads:
    """The rank's transactions, {"n": tokens written, "items": (op, data, last) command items}: one head's
    q, K and V drawn from ``nrng`` in call order (the stimulus is a function of the call sequence)."""

    g: Geometry
    max_tokens: int
    nrng: np.random.Generator

    def head(self, n: int, run: int | None = None, scale: float = 1.0, edit=None) -> dict:
        q, k, v = l3.random_head(np.random.default_rng(self.nrng.integers(1 << 32)), n, self.g, scale)
        if edit is not None:
            edit(q, k, v)
        return {"n": n, "items": l3.rank_items(q, k, v, run)}

    def open_write(self, n: int, op: Op, beats: int, run: int | None = None) -> dict:
        """A RUN sent ``beats`` into the head's ``op`` write, its ``last`` beat never sent: PARTIAL_BURST."""
        t = self.head(n, run)
        start = next(i for i, it in enumerate(t["items"]) if it[0] == op)
        return {"n": n, "items": t["items"][: start + beats] + t["items"][-1:]}

    def random(self, rng: random.Random) -> dict:
        g, max_tokens = self.g, self.max_tokens
        n = rng.choice([1, g.chunk, g.chunk + 1, rng.randint(1, max_tokens), rng.randint(1, max_tokens)])
        roll = rng.random()
        if roll < 0.04:
            return self.head(n, run=0)  # LEN_ZERO
        if roll < 0.08:
            return self.head(n, run=n + rng.randint(1, 3))  # LEN_OVER: more than written
        if roll < 0.12:
            return {"n": n, "items": _drop_beat(rng, self.head(n)["items"])}
        if roll < 0.16:  # the RUN sent early, most often mid-write
            items = self.head(n)["items"]
            return {"n": n, "items": items[: rng.randrange(1, len(items) - 1)] + items[-1:]}
        return self.head(n, scale=rng.choice([0.5, 1.0, 3.0]))

    def directed(self) -> list[dict]:
        g, max_tokens, head, open_write = self.g, self.max_tokens, self.head, self.open_write
        beats = g.bursts * BEATS_PER_BURST  # one token's
        return [
            head(1),
            open_write(2, Op.K, 3),  # mid K, an odd beat held in the re-layout unit
            head(2),
            open_write(3, Op.V, beats + 4, run=1),  # mid V, its first token landed: PARTIAL_BURST alone
            head(3),
            open_write(2, Op.Q, beats - 1, run=0),  # mid Q (all but its last beat), with LEN_ZERO
            head(g.chunk),
            head(g.chunk, edit=_set_k(0)),
            head(3, edit=_set_k(F.inf_bits)),
            head(5, edit=_set_k(NEG_INF)),
            head(g.chunk + 1, edit=_edge_v),
            head(max_tokens),
            head(4, run=0),
            head(2, run=3),
            head(max_tokens + 1, run=max_tokens),
        ]

    def mixed_ops(self) -> list[dict]:
        """Writes whose later beats carry another op, which the rank ignores (a write's op is its first
        beat's): a head whose K write's later beats say V, run whole; a V write whose later beats say K, cut
        by a RUN of 1 token once its first token has landed (PARTIAL_BURST alone)."""
        beats = self.g.bursts * BEATS_PER_BURST  # one token's
        done, cut = self.head(2), self.open_write(3, Op.V, beats + 4, run=1)
        return [
            {"n": t["n"], "items": _relabel(t["items"], op, other)}
            for t, op, other in ((done, Op.K, Op.V), (cut, Op.V, Op.K))
        ]

    def first_beat_cuts(self) -> list[dict]:
        """RUNs one beat into a write: the head's first beat (no whole window to wait for) and V's first,
        the K write's last window still to land."""
        return [self.open_write(1, Op.K, 1), self.open_write(1, Op.V, 1)]


def _relabel(items: list[tuple], op: Op, other: Op) -> list[tuple]:
    """``items`` with every beat of the ``op`` write but its first carrying the op ``other``."""
    first = next(i for i, it in enumerate(items) if it[0] == op)
    return [(other, *it[1:]) if it[0] == op and i > first else it for i, it in enumerate(items)]


def _drop_beat(rng: random.Random, items: list[tuple]) -> list[tuple]:
    """A beat lost (never the RUN): PARTIAL_BURST, and a token short; a lost ``last`` moves to the beat before."""
    drop = rng.randrange(len(items) - 1)
    out = items[:drop] + items[drop + 1 :]
    if items[drop][2]:
        out[drop - 1] = (*out[drop - 1][:2], 1)
    return out


def _open_beats(items: list[tuple]) -> int:
    """The beats of the write still open at the head's RUN (its last item): 0 if none is."""
    n = 0
    for _, _, last in items[:-1]:
        n = 0 if last else n + 1
    return n


def _set_k(value: int):
    """A head edit: token 0's K all ``value``."""

    def edit(q, k, v):
        k[0][:] = [value] * len(k[0])

    return edit


def _edge_v(q, k, v) -> None:
    """A head edit: V rows of the FP16 edge values, rotated per token."""
    for t, row in enumerate(v):
        row[:] = [EDGES[(t + d) % len(EDGES)] for d in range(len(row))]


def _rank_golden(g: Geometry, max_tokens: int):
    def golden(t: dict) -> list[int]:
        out, err = l3.rank_run(t["items"], g, max_tokens)
        if err:
            return [pack(rank.OUT, {"d": 0, "last": 1, "error": err})]
        return [pack(rank.OUT, {"d": x, "last": int(i == len(out) - 1), "error": 0}) for i, x in enumerate(out)]

    return golden


def _rank_measure(g: Geometry, max_tokens: int):
    """The probe's performance counters: SU stalls asserted against the cycle model, for the record."""

    def measure(dut, t: dict) -> dict:
        stalls: list[int] = []
        rank.run_cycles(t["n"], g, max_tokens, stalls)
        got = {"su_stall_cycles": int(dut.su_stall.value), "score_cycles": int(dut.score_cycles.value)}
        assert got["su_stall_cycles"] == len(stalls), f"SU stalls: measured {got}, model {len(stalls)}"
        return {**got, "probe_tokens": t["n"], "su_stall_fraction": round(len(stalls) / got["score_cycles"], 4)}

    return measure


def _rank_case(spec: TbSpec) -> StreamCase:
    g, max_tokens = Geometry(spec.params["banks"], spec.params["d_head"]), spec.params["max_tokens"]
    seed = spec.params["banks"]
    heads = _Heads(g, max_tokens, np.random.default_rng(seed))
    # the op-mixing and first-beat heads draw from a generator of their own: the others' stimulus ignores them
    added = _Heads(g, max_tokens, np.random.default_rng(seed + 1))
    directed = heads.directed() + added.mixed_ops() + added.first_beat_cuts()

    def items(t: dict) -> list[dict]:
        return [{"op": int(op), "data": d, "last": last} for op, d, last in t["items"]]

    def error(t: dict) -> bool:
        return l3.rank_run(t["items"], g, max_tokens)[1] != 0

    def lone(t: dict) -> int:
        if error(t):
            return error_cycles(len(t["items"]) - 1, _open_beats(t["items"]))
        return rank.head_cycles(t["n"], g, max_tokens)

    return StreamCase(
        _rank_golden(g, max_tokens),
        heads.random,
        directed,
        rank.cycle_model(**spec.params),
        items,
        lone_cycles=lone,
        timing=lambda rng: heads.head(g.chunk),
        ii_per="txn",
        burst_txns=4,
        probe=lambda rng: heads.head(max_tokens),
        measure=_rank_measure(g, max_tokens),
        timed=[t for t in directed if error(t)],  # the error path's cycles, mid-write RUNs among them
    )


CASES = {
    UNIT_RELAYOUT: _relayout_case,
    UNIT_BANK_PU: _bank_pu_case,
    UNIT_ADDER: _adder_case,
    UNIT_SOFTMAX: _softmax_case,
    UNIT_RANK: _rank_case,
}


def case(spec: TbSpec) -> StreamCase:
    return CASES[spec.unit](spec)


SPECS = [
    TbSpec(UNIT_RELAYOUT, "hw.l3.relayout:Relayout", {"inverse": False}),
    TbSpec(UNIT_RELAYOUT, "hw.l3.relayout:Relayout", {"inverse": True}),
    TbSpec(UNIT_BANK_PU, "hw.l3.bank_pu:BankPU", {"group": 0}, case_params={"mode": "score"}),
    TbSpec(UNIT_BANK_PU, "hw.l3.bank_pu:BankPU", {"group": V_GROUPS - 1}, case_params={"mode": "context"}),
    TbSpec(UNIT_ADDER, "hw.l3.adder_unit:AdderUnit"),
    TbSpec(UNIT_SOFTMAX, "hw.l3.softmax_unit:SoftmaxUnit", {"chunk": REDUCED.chunk, "max_tokens": 64}),
    TbSpec(UNIT_SOFTMAX, "hw.l3.softmax_unit:SoftmaxUnit", {"chunk": 16, "max_tokens": 256}),
    TbSpec(UNIT_RANK, "hw.l3.rank:Rank", {"banks": REDUCED.banks, "d_head": REDUCED.d_head, "max_tokens": 64}),
]
# the paper's rank: 8 chips x 16 banks, d_head 128 (make sim only: pytest marker "full"), on Verilator: its three
# tests simulate in 49 s there, against 552 s on Icarus (about 34,000 cycles at 96 per second). Flattened: with its
# bank PUs' shared datapaths left as instances (hw/share.py) its tests ran 165 s instead of ~90 (2026-11-27)
FULL_SPECS = [
    TbSpec(
        UNIT_RANK,
        "hw.l3.rank:Rank",
        PAPER_RECORDS[UNIT_RANK],
        sim="verilator",
        flatten=True,
    )
]
# Table 5's four units at the paper's parameters for `make area`; the softmax unit holds one chunk of its
# exp buffer (the rank PU's 256 KB score buffer is SRAM beside it, not in Table 5's SU logic)
AREA_SPECS = [
    TbSpec(UNIT_RELAYOUT, "hw.l3.relayout:Relayout"),
    TbSpec(UNIT_ADDER, "hw.l3.adder_unit:AdderUnit"),
    TbSpec(UNIT_SOFTMAX, "hw.l3.softmax_unit:SoftmaxUnit", {"chunk": FULL.chunk, "max_tokens": FULL.chunk}),
    TbSpec(UNIT_BANK_PU, "hw.l3.bank_pu:BankPU"),
]
