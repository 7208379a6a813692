"""Duplex Logic-PIM GEMM module (Duplex §IV-D, §VI): an output-stationary array of ``rows`` x ``lanes``
FP16 MACs (64 x 8 = 512 by default) fed 128 B of weights per cycle from its bank bundle, with an 8 KB
input buffer (semantics: ``golden.duplex.module_run``; items: ``golden.duplex_spec.Op``).

A transaction is one DESC (m, k, n), the n input vectors (X beats of ``rows`` FP16 elements, token by
token) into the input buffer — one bank per token lane, token j in lane j mod lanes — then the weights, row
block by row block, one beat W[o0:o0+rows, k] per k. Each weight beat is held for G = ceil(n/lanes)
cycles, one per token group (tokens beyond ``lanes`` loop; lanes past n idle). The MACs keep two FP32
partial sums per output (k even / odd) in the accumulator memory; after a row block's last beat the
combine stage adds them (one FP32 adder per row) and streams the block's n output beats of ``rows`` FP32
values, token by token — the results buffer's temporal partials.

A descriptor the module cannot run (``golden.duplex_spec.Err``) or a malformed item stream is consumed to
its ``last`` item and answered with one error item — never a hang; the next transaction is unaffected.

Cycle model (:func:`txn_cycles`): DESC 1 cycle, n*k/rows input beats, then per row block max(compute
k*G, weight beats k) issue cycles + n output beats + 5 (MAC pipeline and combine fill); 2 more to the last
output. Back-to-back transactions start the cycle after the previous one's last output.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.duplex_spec import (
    ACC_BITS,
    ACC_PHASES,
    DESC_FIELDS,
    DIM_BITS,
    ELEM_BITS,
    ERR_FIELDS,
    FULL,
    PHASE_BITS,
    Err,
    Geometry,
    Op,
)
from golden.fp import FP16, FP32
from hw.arith import fpadd, fpmul
from hw.common.commands import CommandFront
from hw.cycles import CycleModel
from hw.duplex.cycles import FLUSH, MAC_DEPTH
from hw.duplex.cycles import gemm_txn_cycles as txn_cycles
from hw.pipeline import PipelineCtl, delay

ERR = data.StructLayout(ERR_FIELDS)
DESC = data.StructLayout(DESC_FIELDS)  # a DESC item's data (golden.duplex.pack_desc)


def item_layout(g: Geometry) -> data.StructLayout:
    return data.StructLayout({"op": 2, "data": max(g.modules * g.rows * ELEM_BITS, DESC.size), "last": 1})


def out_layout(g: Geometry) -> data.StructLayout:
    return data.StructLayout({"y": data.ArrayLayout(ACC_BITS, g.modules * g.rows), "last": 1, "error": ERR})


def timing_shape(g: Geometry) -> tuple[int, int, int]:
    """The GEMM the cycle test streams back to back: two row blocks, two beats per vector, one token group."""
    return 2 * g.rows, 2 * g.rows, g.lanes


def cycle_model(
    rows: int = FULL.rows, lanes: int = FULL.lanes, buffer_bytes: int = FULL.buffer_bytes, **_params
) -> CycleModel:
    """For :func:`timing_shape`: latency from its last weight beat (G = 1 issue, FLUSH, n drain reads, the
    combine) and II per transaction (its cycles plus the one after its last output)."""
    g = Geometry(rows, lanes, buffer_bytes)
    m, k, n = timing_shape(g)
    return CycleModel(latency=g.groups(n) + FLUSH + n + fpadd.LATENCY - 1, ii=txn_cycles(m, k, n, g) + 1)


class InputBuffer(wiring.Component):
    """One memory bank per token lane, ``lane_words`` words of ``rows`` FP16 each. Members: ``w_lane``,
    ``w_addr``, ``w_data``, ``w_en`` In — an X beat's write; ``r_addr``, ``r_elem`` In — the word and
    element every lane reads (combinationally); ``x`` Out(lanes FP16) — lane t's element."""

    def __init__(self, g: Geometry):
        self.g = g
        super().__init__(
            {
                "w_lane": In(range(g.lanes)),
                "w_addr": In(range(g.lane_words)),
                "w_data": In(g.rows * ELEM_BITS),
                "w_en": In(1),
                "r_addr": In(range(g.lane_words)),
                "r_elem": In(range(g.rows)),
                "x": Out(data.ArrayLayout(ELEM_BITS, g.lanes)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        for t in range(self.g.lanes):
            m.submodules[f"lane{t}"] = mem = Memory(shape=self.g.rows * ELEM_BITS, depth=self.g.lane_words, init=[])
            w, r = mem.write_port(), mem.read_port(domain="comb")
            m.d.comb += [
                w.addr.eq(self.w_addr),
                w.data.eq(self.w_data),
                w.en.eq(self.w_en & (self.w_lane == t)),
                r.addr.eq(self.r_addr),
                self.x[t].eq(r.data.word_select(self.r_elem, ELEM_BITS)),
            ]
        return m


class MacArray(wiring.Component):
    """rows x lanes FP16 x FP16 -> FP32 MACs into ACC_PHASES (2) partial sums per output. Members: ``issue``
    In — a MAC step this cycle; ``w`` In(rows FP16), ``x`` In(lanes FP16) — its operands; ``phase`` In (k mod
    ACC_PHASES),
    ``group`` In (token group), ``first`` In (the phase's first k: add to -0); ``r_group`` In, ``acc``
    Out(2 x rows x lanes FP32) — the two partials of a group, read combinationally by the combine stage;
    ``busy`` Out — a step whose sum has not reached the write port yet.
    Free-running: a step's sum is written MAC_DEPTH cycles after issue, forwarded if read meanwhile."""

    def __init__(self, g: Geometry):
        self.g = g
        vec = data.ArrayLayout(ACC_BITS, g.macs)
        super().__init__(
            {
                "issue": In(1),
                "w": In(data.ArrayLayout(ELEM_BITS, g.rows)),
                "x": In(data.ArrayLayout(ELEM_BITS, g.lanes)),
                "phase": In(range(ACC_PHASES)),
                "group": In(range(g.lane_words)),
                "first": In(1),
                "r_group": In(range(g.lane_words)),
                "acc": Out(data.ArrayLayout(vec, ACC_PHASES)),
                "busy": Out(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g, one = self.g, Const(1)
        tag = Cat(self.issue, self.phase, self.group, self.first)
        chain = [tag]
        for i in range(MAC_DEPTH):  # the tag beside the products (stage 2), then the sums (stage 4)
            chain.append(delay(m, one, chain[-1], 1, f"tag{i}"))
        at_add, at_out = chain[fpmul.LATENCY], chain[-1]
        m.d.comb += self.busy.eq(Cat(*(c[0] for c in chain[1:-1])).any())
        slot_add, slot_out = at_add[1:-1], at_out[1:-1]
        sums = Signal(g.macs * ACC_BITS)
        fwd = at_out[0] & (slot_out == slot_add)
        stored = Signal(g.macs * ACC_BITS)
        for p in range(ACC_PHASES):
            m.submodules[f"acc{p}"] = mem = Memory(shape=g.macs * ACC_BITS, depth=g.lane_words, init=[])
            w, r, d = mem.write_port(), mem.read_port(domain="comb"), mem.read_port(domain="comb")
            m.d.comb += [
                w.addr.eq(at_out[1 + PHASE_BITS : -1]),
                w.data.eq(sums),
                w.en.eq(at_out[0] & (at_out[1 : 1 + PHASE_BITS] == p)),
                r.addr.eq(at_add[1 + PHASE_BITS : -1]),
                d.addr.eq(self.r_group),
                self.acc[p].eq(d.data),
            ]
            with m.If(at_add[1 : 1 + PHASE_BITS] == p):
                m.d.comb += stored.eq(r.data)
        outs = []
        for r in range(g.rows):
            for t in range(g.lanes):
                i = r * g.lanes + t
                # per-MAC muxes over signal slices: a slice of one wide Mux re-lowers it per MAC (quadratic)
                c = Mux(
                    at_add[-1], FP32.sign_bit, Mux(fwd, sums.word_select(i, ACC_BITS), stored.word_select(i, ACC_BITS))
                )
                prod = fpmul.fp_mul(m, one, self.w[r], self.x[t], FP16, FP32, f"mul_r{r}_t{t}")
                outs.append(fpadd.fp_add(m, one, prod, c, FP32, f"acc_r{r}_t{t}"))
        m.d.comb += sums.eq(Cat(*outs))
        return m


class Combine(wiring.Component):
    """The drain: acc_0 + acc_1 for one token, one FP32 adder per row. Members: ``i`` In(stream of {a0,
    a1: rows FP32, last, error}); ``o`` Out(stream of the module's output items); ``busy`` Out — an item
    in flight."""

    def __init__(self, g: Geometry):
        vec = data.ArrayLayout(ACC_BITS, g.rows)
        self.g = g
        super().__init__(
            {
                "i": In(stream.Signature(data.StructLayout({"a0": vec, "a1": vec, "last": 1, "error": ERR}))),
                "o": Out(stream.Signature(out_layout(g))),
                "busy": Out(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        ctl = PipelineCtl(m, self.i, self.o, fpadd.LATENCY)
        p = self.i.payload
        error = delay(m, ctl.en, p.error.as_value(), fpadd.LATENCY, "err_dly")
        for r in range(self.g.rows):  # an error item carries y = 0
            total = fpadd.fp_add(m, ctl.en, p.a0[r], p.a1[r], FP32, f"comb_r{r}")
            m.d.comb += self.o.payload.y[r].eq(Mux(error.any(), 0, total))
        m.d.comb += [
            self.o.payload.last.eq(delay(m, ctl.en, p.last, fpadd.LATENCY, "last_dly")),
            self.o.payload.error.eq(error),
            self.busy.eq(ctl.busy),
        ]
        return m


class GemmModule(wiring.Component):
    """Members: ``i`` In(stream of {op, data, last}) — DESC, X and W items (``golden.duplex_spec.Op``;
    DESC data: :data:`DESC`); ``o`` Out(stream of {y: rows FP32, last, error}) — each row block's
    n output beats, or one error item. With ``modules`` > 1 (hw/duplex/stack.py) one controller drives that
    many datapaths (input buffer, MAC array, combine) in lockstep; W items and outputs carry one row block
    per module."""

    def __init__(
        self, rows: int = FULL.rows, lanes: int = FULL.lanes, buffer_bytes: int = FULL.buffer_bytes, modules: int = 1
    ):
        if rows * ELEM_BITS < DESC.size:
            raise ValueError(
                f"rows: {rows} not allowed; >= {-(-DESC.size // ELEM_BITS)} (a beat carries the "
                f"{DESC.size}-bit descriptor)"
            )
        self.g = Geometry(rows, lanes, buffer_bytes, modules)
        super().__init__(
            {"i": In(stream.Signature(item_layout(self.g))), "o": Out(stream.Signature(out_layout(self.g)))}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        m.submodules.ctl = ctl = Controller(g)
        wiring.connect(m, wiring.flipped(self.i), ctl.i)
        paths = [self._datapath(m, d) for d in range(g.modules)]
        _, macs, comb = paths[0]  # the lockstep datapaths' leader: its handshakes and busy flags speak for all
        m.d.comb += [
            ctl.mac_busy.eq(macs.busy),
            ctl.out_busy.eq(comb.busy),
            ctl.drain.ready.eq(comb.i.ready),
            self.o.valid.eq(comb.o.valid),
            self.o.payload.last.eq(comb.o.payload.last),
            self.o.payload.error.eq(comb.o.payload.error),
        ]
        for d, (bd, md, cd) in enumerate(paths):
            m.d.comb += [
                bd.w_lane.eq(ctl.x_lane),
                bd.w_addr.eq(ctl.x_addr),
                bd.w_data.eq(self.i.payload.data),
                bd.w_en.eq(ctl.x_we),
                bd.r_addr.eq(ctl.r_addr),
                bd.r_elem.eq(ctl.r_elem),
                md.w.eq(ctl.w.as_value().word_select(d, g.rows * ELEM_BITS)),
                md.x.eq(bd.x),
                md.phase.eq(ctl.phase),
                md.group.eq(ctl.group),
                md.first.eq(ctl.first),
                md.issue.eq(ctl.issue),
                md.r_group.eq(ctl.r_group),
                cd.i.valid.eq(ctl.drain.valid),
                cd.i.payload.last.eq(ctl.drain.payload.last),
                cd.i.payload.error.eq(ctl.drain.payload.error),
                self.o.payload.y.as_value().word_select(d, g.rows * ACC_BITS).eq(cd.o.payload.y),
                cd.o.ready.eq(self.o.ready),
            ]
            for r in range(g.rows):  # the combine reads the draining token's lane of both partials
                for ph, a in enumerate((cd.i.payload.a0, cd.i.payload.a1)):
                    m.d.comb += a[r].eq(Array(md.acc[ph][r * g.lanes + t] for t in range(g.lanes))[ctl.lane])
        return m

    def _datapath(self, m: Module, d: int) -> tuple[InputBuffer, MacArray, Combine]:
        """Module ``d``'s input buffer, MAC array and combine stage."""
        suffix = f"{d}" if self.g.modules > 1 else ""
        m.submodules[f"buf{suffix}"] = buf = InputBuffer(self.g)
        m.submodules[f"macs{suffix}"] = macs = MacArray(self.g)
        m.submodules[f"comb{suffix}"] = comb = Combine(self.g)
        return buf, macs, comb


class Controller(wiring.Component):
    """The module's item FSM and counters (one per stack: hw/duplex/stack.py), with the descriptor check.
    Members: ``i`` In(stream of :func:`item_layout`) — the items; ``x_we``, ``x_lane``, ``x_addr`` Out —
    the X beat on ``i`` goes to this lane's word of the input buffer; ``w`` Out(modules x rows FP16) — the
    weight beat being issued, ``issue`` Out — one token group of it this cycle, ``r_addr``, ``r_elem`` Out
    — the input-buffer word and element it multiplies, ``phase``, ``group``, ``first`` Out — the MAC
    array's partial, token group and first-k flag; ``r_group``, ``lane`` Out — the token the combine
    stage reads; ``drain`` Out(stream of {last, error}) — a combine step (a token's output beat, or the
    error item); ``mac_busy``, ``out_busy`` In — the MAC array's and the combine stage's work in flight."""

    def __init__(self, g: Geometry):
        self.g = g
        super().__init__(
            {
                "i": In(stream.Signature(item_layout(g))),
                "x_we": Out(1),
                "x_lane": Out(range(g.lanes)),
                "x_addr": Out(range(g.lane_words)),
                "w": Out(data.ArrayLayout(ELEM_BITS, g.modules * g.rows)),
                "issue": Out(1),
                "r_addr": Out(range(g.lane_words)),
                "r_elem": Out(range(g.rows)),
                "phase": Out(range(ACC_PHASES)),
                "group": Out(range(g.lane_words)),
                "first": Out(1),
                "r_group": Out(range(g.lane_words)),
                "lane": Out(range(g.lanes)),
                "drain": Out(stream.Signature(data.StructLayout({"last": 1, "error": ERR}))),
                "mac_busy": In(1),
                "out_busy": In(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        lr, lt = g.rows.bit_length() - 1, g.lanes.bit_length() - 1
        m.submodules.check = check = DescCheck(g)
        c = self._counters = {
            n: Signal(DIM_BITS, name=n)
            for n in ("m", "k", "n", "groups", "xj", "xb", "blk", "kk", "k_held", "grp", "dj")
        }
        kb = c["k"] >> lr  # beats per input vector
        m.d.comb += [
            check.data.eq(self.i.payload.data),
            self.x_lane.eq(c["xj"][:lt] if lt else 0),
            self.x_addr.eq((c["xj"] >> lt) * kb + c["xb"]),
            self.r_addr.eq(c["grp"] * kb + (c["k_held"] >> lr)),
            self.r_elem.eq(c["k_held"][:lr]),
            self.phase.eq(c["k_held"][:PHASE_BITS]),
            self.group.eq(c["grp"]),
            self.first.eq(c["k_held"] < ACC_PHASES),
            self.r_group.eq(c["dj"] >> lt),
            self.lane.eq(c["dj"][:lt] if lt else 0),
        ]
        last_grp = c["grp"] == c["groups"] - 1
        with m.If(self.issue):  # a held weight beat issues one token group per cycle
            m.d.sync += c["grp"].eq(Mux(last_grp, 0, c["grp"] + 1))
            with m.If(last_grp):
                m.d.sync += self.issue.eq(0)
        err = Signal(ERR)
        self._front = front = CommandFront(m, self.i, err, Err.MALFORMED)
        with m.FSM():
            with m.State("IDLE"):
                self._idle(m, check)
            with m.State("LOAD"):
                self._load(m, kb)
            with m.State("RUN"):
                self._run(m, last_grp, lr)
            with m.State("DRAIN"):
                self._drain(m, lr)
            with m.State("SKIP"):
                front.skip()
            with m.State("ERROR"):
                m.d.comb += [self.drain.valid.eq(1), self.drain.payload.last.eq(1), self.drain.payload.error.eq(err)]
                with m.If(self.drain.ready):
                    m.next = "IDLE"
        return m

    def _idle(self, m: Module, check: DescCheck) -> None:
        """A DESC item: its fields latched, or its error flagged."""
        c = self._counters
        m.d.comb += self.i.ready.eq(~self.out_busy)  # one transaction's outputs at a time
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [c["m"].eq(check.m), c["k"].eq(check.k), c["n"].eq(check.n), c["groups"].eq(check.groups)]
            m.d.sync += [c[n].eq(0) for n in ("xj", "xb", "blk", "kk", "dj", "grp")]
            self._front.desc(Op.DESC, check.err, "LOAD")

    def _load(self, m: Module, kb: Value) -> None:
        """The n input vectors' X beats into the input buffer."""
        c, p = self._counters, self.i.payload
        m.d.comb += self.i.ready.eq(1)
        with m.If(self.i.valid):
            with m.If((p.op != Op.X) | p.last):
                self._front.fail(Err.MALFORMED)
            with m.Else():
                m.d.comb += self.x_we.eq(1)
                m.d.sync += c["xb"].eq(Mux(c["xb"] == kb - 1, 0, c["xb"] + 1))
                with m.If(c["xb"] == kb - 1):
                    m.d.sync += c["xj"].eq(c["xj"] + 1)
                    with m.If(c["xj"] == c["n"] - 1):
                        m.next = "RUN"

    def _run(self, m: Module, last_grp: Value, lr: int) -> None:
        """A row block's weight beats, each held for its token groups; then the drain once its sums land."""
        c, p, g = self._counters, self.i.payload, self.g
        m.d.comb += self.i.ready.eq((c["kk"] < c["k"]) & (~self.issue | last_grp))
        with m.If(self.i.valid & self.i.ready):
            with m.If((p.op != Op.W) | (p.last != is_final(c["blk"], c["kk"], c["m"], c["k"], lr))):
                self._front.fail(Err.MALFORMED)
            with m.Else():
                m.d.sync += [
                    self.w.eq(p.data[: g.modules * g.rows * ELEM_BITS]),
                    self.issue.eq(1),
                    c["k_held"].eq(c["kk"]),
                    c["kk"].eq(c["kk"] + 1),
                ]
        with m.If((c["kk"] == c["k"]) & ~self.issue & ~self.mac_busy):  # the block's last sums are landing
            m.next = "DRAIN"

    def _drain(self, m: Module, lr: int) -> None:
        """The row block's n output beats, token by token, through the combine stage."""
        c = self._counters
        final_blk = c["blk"] == (c["m"] >> lr) - 1
        m.d.comb += [self.drain.valid.eq(1), self.drain.payload.last.eq(final_blk & (c["dj"] == c["n"] - 1))]
        with m.If(self.drain.ready):
            m.d.sync += c["dj"].eq(c["dj"] + 1)
            with m.If(c["dj"] == c["n"] - 1):
                m.d.sync += [c["dj"].eq(0), c["blk"].eq(c["blk"] + 1), c["kk"].eq(0)]
                with m.If(final_blk):
                    m.next = "IDLE"
                with m.Else():
                    m.next = "RUN"


def is_final(blk: Signal, kk: Signal, dm: Signal, dk: Signal, lr: int):
    """The transaction's final weight beat: the last row block's last k."""
    return (blk == (dm >> lr) - 1) & (kk == dk - 1)


class DescCheck(wiring.Component):
    """The descriptor's fields and error flags (``golden.duplex_spec.Geometry.check``). Members: ``data``
    In — a DESC item's data; ``m``, ``k``, ``n``, ``groups`` Out; ``err`` Out(flags)."""

    def __init__(self, g: Geometry):
        self.g = g
        super().__init__(
            {
                "data": In(item_layout(g)["data"].shape),
                "m": Out(DIM_BITS),
                "k": Out(DIM_BITS),
                "n": Out(DIM_BITS),
                "groups": Out(DIM_BITS),
                "err": Out(ERR),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        lr, lt = g.rows.bit_length() - 1, g.lanes.bit_length() - 1
        d = DESC(self.data[: DESC.size])
        m.d.comb += [self.m.eq(d.m), self.k.eq(d.k), self.n.eq(d.n), self.groups.eq((self.n + g.lanes - 1) >> lt)]
        zero = (self.m == 0) | (self.k == 0) | (self.n == 0)
        aligned = self.k[:lr] == 0
        over = aligned & (self.groups * (self.k >> lr) > g.lane_words)
        # one assignment of the whole flag vector (MALFORMED is the controller's): no constant-only process
        m.d.comb += self.err.as_value().eq(
            Cat(zero, ~zero & (self.m[:lr] != 0), ~zero & ~aligned, ~zero & over, Const(0, 1))
        )
        return m
