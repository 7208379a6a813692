"""Hermes NDP GEMV unit (Hermes §IV-A1, Table II; shared/notes/hermes.md §3.1): ``multipliers`` bit-serial
multipliers of ``lanes`` FP16 products each (256 x 8 by default: one 4 KiB weight beat per operation), a
reduction-tree accumulator, the dot and AXPY dataflows and batch time-multiplexing (semantics and items:
``golden.hermes.gemv_run``; encodings: ``golden.hermes_spec``).

A transaction is one DESC (mode, n, kb, batch), the operands into the buffer (DOT: batch x kb X beats;
AXPY: n x batch scalars), then n x kb W beats. Each W beat is read once and held while the multiplier
array runs it against every batch vector (scalar), one operation per :func:`hw.hermes.bitserial.ii`
cycles: the weights are read once per batch. The multipliers hand their products out lane by lane:

* DOT (:class:`DotPath`): an FP32 add tree over the multipliers per lane, a tree over the lane sums, and
  one FP32 accumulator per batch vector; a row's result is rounded to FP16 into the output queue.
* AXPY (:class:`AxpyPath`): each lane's products add into FP32 partial sums in the buffer (read, add,
  write); once every column is in, the partial sums stream out rounded to FP16, ``multipliers`` per item.

A descriptor the unit cannot run or a malformed stream is consumed to its ``last`` item and answered,
once the rows already complete are out, with one error item — never a hang; the next transaction is
unaffected.

Cycle model (:func:`txn_cycles`): DESC 1 cycle, the X items 1 each, one cycle to hold the first W beat,
then an operation every II cycles, then the path's tail (:func:`dot_tail`, :func:`axpy_tail`); the next
transaction's DESC is taken the cycle after the last output.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.fp import FP16, FP32
from golden.hermes_spec import (
    ACC_BITS,
    BATCH_BITS,
    DESC_FIELDS,
    DIM_BITS,
    ELEM_BITS,
    ERR_FIELDS,
    FULL,
    MAX_BATCH,
    Gemv,
    Mode,
    Op,
)
from hw.arith import fpadd
from hw.arith.addtree import AddTree
from hw.arith.fpcore import round_pack, special, unpack
from hw.arith.tree import check_n
from hw.common.commands import CommandFront
from hw.cycles import CycleModel
from hw.hermes import bitserial
from hw.pipeline import delay
from hw.share import shared

ERR = data.StructLayout(ERR_FIELDS)
MALFORMED = ERR.const({"malformed": 1})
DESC = data.StructLayout(DESC_FIELDS)  # a DESC item's data (golden.hermes_spec.pack_desc)
OUT_QUEUE = 2 * MAX_BATCH  # DOT results waiting for the sink
TAGS = 4  # operations between issue and their lanes leaving the multipliers


def item_layout(g: Gemv) -> data.StructLayout:
    return data.StructLayout({"op": 2, "data": max(g.beat * ELEM_BITS, DESC.size), "last": 1})


def out_layout(g: Gemv) -> data.StructLayout:
    return data.StructLayout({"y": data.ArrayLayout(ELEM_BITS, g.multipliers), "last": 1, "error": ERR})


def geometry(
    multipliers: int = FULL.multipliers,
    lanes: int = FULL.lanes,
    serial_bits: int = FULL.serial_bits,
    buffer_bytes: int = FULL.buffer_bytes,
) -> Gemv:
    """The spec's geometry, checked for what this datapath needs on top: two or more multipliers and
    lanes (the trees) and at least 3 cycles per operation (the accumulator's read-add-write)."""
    g = Gemv(multipliers, lanes, serial_bits, buffer_bytes)
    check_n(g.multipliers)
    if g.lanes < 2:
        raise ValueError(f"lanes: {g.lanes} not allowed; 2 to 8 in the GEMV unit (its lane tree)")
    if bitserial.ii(serial_bits, lanes) < 3:
        raise ValueError(
            f"serial_bits: {serial_bits} not allowed with lanes {lanes}; an operation must take 3 or more cycles"
        )
    return g


def ii(g: Gemv) -> int:
    return bitserial.ii(g.serial_bits, g.lanes)


def dot_tail(g: Gemv) -> int:
    """Last operation issued -> its row's result accepted: the steps and hold move, the lanes, the two
    trees, the accumulator add, the output queue."""
    return g.serial_steps + 1 + g.lanes + fpadd.LATENCY * (check_n(g.multipliers) + check_n(g.lanes) + 1) + 1


def axpy_tail(g: Gemv, kb: int, batch: int) -> int:
    """Last operation issued -> last partial sum accepted: the steps, hold move and lanes, the product
    register and read, the add and write, the cycle the unit sees the path idle, then batch x kb x lanes
    output items."""
    return g.serial_steps + 1 + g.lanes + 1 + fpadd.LATENCY + 1 + batch * kb * g.lanes


def txn_cycles(mode: int, n: int, kb: int, batch: int, g: Gemv = FULL) -> int:
    """First item (DESC) accepted -> last output accepted, for a GEMV that runs, into a ready sink."""
    nx = batch * kb if mode == Mode.DOT else n * batch
    issue = 1 + nx + 1 + (n * kb * batch - 1) * ii(g)
    return issue + (dot_tail(g) if mode == Mode.DOT else axpy_tail(g, kb, batch))


def error_cycles(items: int) -> int:
    """A flagged transaction of ``items`` items read back to back: its error item the cycle after the last."""
    return items + 1


TIMING = (Mode.DOT, 2, 2, 2)  # the transaction the cycle test streams back to back


def cycle_model(**params) -> CycleModel:
    """For :data:`TIMING`: latency from its last W beat (taken while the previous beat's last operation
    issues, so its own operations start one II later: batch operations, then the tail) and II per
    transaction (its cycles plus the one after its last output)."""
    g = geometry(**params)
    mode, n, kb, batch = TIMING
    return CycleModel(latency=batch * ii(g) + dot_tail(g), ii=txn_cycles(mode, n, kb, batch, g) + 1)


def to_fp16(m: Module, x, name: str):
    """An FP32 value rounded to FP16 (RNE), as golden.hermes.to_fp16."""
    u = unpack(m, x, FP32, name)
    return special(FP16, u.is_nan, u.is_inf, u.sign, round_pack(m, u.sign, u.sig, u.exp, 0, FP16, name))


def psum_words(g: Gemv) -> int:
    """AXPY partial-sum words in the buffer: ``multipliers`` FP32 sums each."""
    return g.buffer_bytes // (4 * g.multipliers)


def tag_layout(g: Gemv) -> data.StructLayout:
    """What an operation carries to its path: batch vector, first / last beat of its row (column), last
    operation of the transaction, first column (AXPY), and its partial-sum word (AXPY)."""
    return data.StructLayout(
        {"b": range(MAX_BATCH), "first": 1, "lastk": 1, "final": 1, "col0": 1, "word": range(max(2, psum_words(g)))}
    )


def _lanes_in(g: Gemv) -> dict:
    """A path's inputs: the multipliers' lanes and their operation's tag."""
    return {
        "valid": In(1),
        "lane": In(range(g.lanes)),
        "p": In(data.ArrayLayout(ACC_BITS, g.multipliers)),
        "tag": In(tag_layout(g)),
    }


class MulArray(wiring.Component):
    """``multipliers`` :class:`hw.hermes.bitserial.BitSerialMul` in lockstep. Members: ``go`` In, ``ready``
    Out, ``a``, ``b`` In(beat FP16) — an operation's weights and operands, taken when ``go`` and ``ready``
    (separate ports, not one stream payload: a 2 x 2048-lane struct passes Amaranth's 65536-bit net limit);
    ``valid`` Out, ``lane`` Out, ``p`` Out(multipliers FP32) — lane ``lane`` of every multiplier's products
    (the consumer is always ready)."""

    def __init__(self, g: Gemv):
        self.g = g
        beat = data.ArrayLayout(ELEM_BITS, g.beat)
        super().__init__(
            {
                "go": In(1),
                "ready": Out(1),
                "a": In(beat),
                "b": In(beat),
                "valid": Out(1),
                "lane": Out(range(g.lanes)),
                "p": Out(data.ArrayLayout(ACC_BITS, g.multipliers)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        for j in range(g.multipliers):
            m.submodules[f"mul{j}"] = mul = shared(bitserial.BitSerialMul, g.lanes, g.serial_bits)
            m.d.comb += [mul.i.valid.eq(self.go), mul.o.ready.eq(1), self.p[j].eq(mul.o.payload.p)]
            for t in range(g.lanes):
                e = j * g.lanes + t
                m.d.comb += [mul.i.payload.a[t].eq(self.a[e]), mul.i.payload.b[t].eq(self.b[e])]
            if j == 0:
                m.d.comb += [self.ready.eq(mul.i.ready), self.valid.eq(mul.o.valid), self.lane.eq(mul.o.payload.lane)]
        return m


class DotPath(wiring.Component):
    """Dot mode. Members: ``valid``, ``lane``, ``p`` In — the multipliers' lanes; ``tag`` In(:func:`tag_layout`)
    — their operation's; ``out_valid`` Out, ``y`` Out(FP16), ``final`` Out — a row's result for one batch
    vector; ``busy`` Out — a beat sum in the trees or the accumulator."""

    def __init__(self, g: Gemv):
        self.g = g
        super().__init__({**_lanes_in(g), "out_valid": Out(1), "y": Out(ELEM_BITS), "final": Out(1), "busy": Out(1)})

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        m.submodules.mtree = mtree = AddTree("fp32", g.multipliers)
        m.submodules.ltree = ltree = AddTree("fp32", g.lanes)
        m.d.comb += [
            mtree.i.valid.eq(self.valid),
            mtree.i.payload.x.eq(self.p),
            mtree.o.ready.eq(1),
            ltree.o.ready.eq(1),
        ]
        lane_at = delay(m, Const(1), self.lane, mtree.latency, "lane_at")
        tag_at = delay(m, Const(1), self.tag, mtree.latency, "tag_at")
        sums = Signal(data.ArrayLayout(ACC_BITS, g.lanes))  # lane sums 0 .. lanes-2 of the operation
        with m.If(mtree.o.valid):
            m.d.sync += sums[lane_at].eq(mtree.o.payload)
        for t in range(g.lanes - 1):
            m.d.comb += ltree.i.payload.x[t].eq(sums[t])
        m.d.comb += [
            ltree.i.payload.x[g.lanes - 1].eq(mtree.o.payload),
            ltree.i.valid.eq(mtree.o.valid & (lane_at == g.lanes - 1)),
        ]
        tag = tag_layout(g)(delay(m, Const(1), tag_at, ltree.latency, "tag_l"))
        acc = Array(Signal(ACC_BITS, name=f"acc{b}", init=FP32.sign_bit) for b in range(MAX_BATCH))
        addend = Mux(tag.first, FP32.sign_bit, acc[tag.b])
        total = fpadd.fp_add(m, Const(1), addend, ltree.o.payload, FP32, "acc_add")
        done = delay(m, Const(1), ltree.o.valid, fpadd.LATENCY, "acc_v")
        tag_d = tag_layout(g)(delay(m, Const(1), tag, fpadd.LATENCY, "acc_tag"))
        with m.If(done):
            m.d.sync += acc[tag_d.b].eq(total)
        m.d.comb += [
            self.out_valid.eq(done & tag_d.lastk),
            self.y.eq(to_fp16(m, total, "y16")),
            self.final.eq(tag_d.final),
            self.busy.eq(in_flight(m, self.valid, mtree.latency + ltree.latency + fpadd.LATENCY, "dot_busy")),
        ]
        return m


def in_flight(m: Module, valid, depth: int, name: str) -> Signal:
    """High while an item that entered with ``valid`` is within ``depth`` cycles of it."""
    busy = Signal(name=name)
    chain = [valid]
    for i in range(depth):
        chain.append(delay(m, Const(1), chain[-1], 1, f"{name}{i}_"))
    m.d.comb += busy.eq(Cat(*chain).any())
    return busy


class AxpyPath(wiring.Component):
    """AXPY mode. Members: ``valid``, ``lane``, ``p``, ``tag`` In — as :class:`DotPath`; ``r_word`` In,
    ``y`` Out(multipliers FP16) — a partial-sum word read for output, rounded; ``busy`` Out — a
    read-add-write in flight."""

    def __init__(self, g: Gemv):
        self.g = g
        self.words = psum_words(g)
        super().__init__(
            {
                **_lanes_in(g),
                "r_word": In(range(max(2, self.words))),
                "y": Out(data.ArrayLayout(ELEM_BITS, g.multipliers)),
                "busy": Out(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g, one = self.g, Const(1)
        vec = data.ArrayLayout(ACC_BITS, g.multipliers)
        m.submodules.psum = mem = Memory(shape=vec, depth=self.words, init=[])
        rd, wr, out = mem.read_port(), mem.write_port(), mem.read_port(domain="comb")
        addr = Signal.like(self.tag.word)
        m.d.comb += [addr.eq(self.tag.word + self.lane), rd.addr.eq(addr), rd.en.eq(1), out.addr.eq(self.r_word)]
        prod = vec(delay(m, one, self.p, 1, "prod"))
        v1, a1, c1 = (delay(m, one, s, 1, n) for s, n in ((self.valid, "v1"), (addr, "a1"), (self.tag.col0, "c1")))
        sums = Signal(vec)
        for j in range(g.multipliers):
            old = Mux(c1, FP32.sign_bit, rd.data[j])
            m.d.comb += sums[j].eq(fpadd.fp_add(m, one, old, prod[j], FP32, f"psum{j}"))
            m.d.comb += self.y[j].eq(to_fp16(m, out.data[j], f"y{j}"))
        v3, a3 = delay(m, one, v1, fpadd.LATENCY, "v3_"), delay(m, one, a1, fpadd.LATENCY, "a3_")
        m.d.comb += [
            wr.addr.eq(a3),
            wr.data.eq(sums),
            wr.en.eq(v3),
            self.busy.eq(in_flight(m, self.valid, 1 + fpadd.LATENCY, "axpy_busy")),
        ]
        return m


class Operands(wiring.Component):
    """The operand buffer: DOT X beats and AXPY scalars. Members: ``w_en``, ``w_addr``, ``w_data`` In — an X
    item's write (DOT: a beat at word ``w_addr``; AXPY: data[0:16] at scalar ``w_addr``); ``mode`` In;
    ``r_addr`` In, ``x`` Out(beat FP16) — the operand beat of word ``r_addr`` (AXPY: the scalar at
    ``r_addr`` in every element), combinationally."""

    def __init__(self, g: Gemv):
        self.g, self.words, self.scalars = g, max(2, g.buffer_bytes // (2 * g.beat)), g.buffer_bytes // 2
        beat = data.ArrayLayout(ELEM_BITS, g.beat)
        super().__init__(
            {
                "w_en": In(1),
                "w_addr": In(range(self.scalars)),
                "w_data": In(g.beat * ELEM_BITS),
                "mode": In(1),
                "r_addr": In(range(self.scalars)),
                "x": Out(beat),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.xbuf = xbuf = Memory(shape=self.g.beat * ELEM_BITS, depth=self.words, init=[])
        m.submodules.sbuf = sbuf = Memory(shape=ELEM_BITS, depth=self.scalars, init=[])
        xw, sw = xbuf.write_port(), sbuf.write_port()
        xr, sr = xbuf.read_port(domain="comb"), sbuf.read_port(domain="comb")
        m.d.comb += [
            xw.addr.eq(self.w_addr),
            xw.data.eq(self.w_data),
            xw.en.eq(self.w_en & (self.mode == Mode.DOT)),
            sw.addr.eq(self.w_addr),
            sw.data.eq(self.w_data[:ELEM_BITS]),
            sw.en.eq(self.w_en & (self.mode == Mode.AXPY)),
            xr.addr.eq(self.r_addr),
            sr.addr.eq(self.r_addr),
        ]
        # one assignment for the whole beat: one per element costs Amaranth's driver check O(elements x bits),
        # 41 of the 69 s elaborating the paper's 2048-element GEMV unit
        m.d.comb += self.x.eq(Mux(self.mode == Mode.DOT, xr.data, sr.data.replicate(self.g.beat)))
        return m


class Descriptor(wiring.Component):
    """A DESC item's fields and their check (``golden.hermes_spec.Gemv.check``). Members: ``data`` In;
    ``mode``, ``n``, ``kb``, ``batch`` Out; ``error`` Out(:data:`ERR`) — zero_dim, batch or buf_over."""

    def __init__(self, g: Gemv):
        self.g = g
        super().__init__(
            {
                "data": In(DESC.size),
                "mode": Out(1),
                "n": Out(DIM_BITS),
                "kb": Out(DIM_BITS),
                "batch": Out(BATCH_BITS),
                "error": Out(ERR),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g, d = self.g, DESC(self.data)
        m.d.comb += [self.mode.eq(d.mode), self.n.eq(d.n), self.kb.eq(d.kb), self.batch.eq(d.batch)]
        zero = (self.n == 0) | (self.kb == 0) | (self.batch == 0)
        beats = self.batch * self.kb
        over = Mux(
            self.mode == Mode.DOT,
            beats > g.buffer_bytes // (2 * g.beat),
            (beats > g.buffer_bytes // (4 * g.beat)) | (self.n * self.batch > g.buffer_bytes // 2),
        )
        big = self.batch > MAX_BATCH
        m.d.comb += [
            self.error.zero_dim.eq(zero),
            self.error.batch.eq(~zero & big),
            self.error.buf_over.eq(~zero & ~big & over),
        ]
        return m


class Issue(wiring.Component):
    """The held W beat and the operations it issues, one per batch vector. Members: ``load`` In, ``w`` In
    — take a W beat (when ``free``); its place: ``k`` In (its beat in the row), ``lastk`` In, ``col0`` In
    (first row / column), ``final`` In (last beat of the transaction), ``x_base`` In (AXPY: scalar
    row*batch); ``kb``, ``batch``, ``mode`` In — the descriptor's; ``free`` Out — no beat held, or its last
    operation issuing; ``held`` Out; ``dot_room`` In — the output queue can take a row's results;
    ``tag_room`` In — the tag queue has room; ``go`` Out, ``mul_ready`` In, ``w_held`` Out — an operation to
    the multiplier array, the held beat its weights; ``x_addr`` Out — the operand read (the array's other
    input); ``tag`` Out, ``tag_en`` Out — the issued operation's tag."""

    def __init__(self, g: Gemv):
        self.g = g
        tag = tag_layout(g)
        super().__init__(
            {
                "load": In(1),
                "w": In(g.beat * ELEM_BITS),
                "k": In(DIM_BITS),
                "lastk": In(1),
                "col0": In(1),
                "final": In(1),
                "x_base": In(range(g.buffer_bytes // 2)),
                "kb": In(DIM_BITS),
                "batch": In(BATCH_BITS),
                "mode": In(1),
                "free": Out(1),
                "held": Out(1),
                "dot_room": In(1),
                "tag_room": In(1),
                "go": Out(1),
                "mul_ready": In(1),
                "w_held": Out(g.beat * ELEM_BITS),
                "x_addr": Out(range(g.buffer_bytes // 2)),
                "tag": Out(tag),
                "tag_en": Out(1),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        held, w = Signal(), Signal(g.beat * ELEM_BITS)
        k, lastk, col0, final = Signal(DIM_BITS), Signal(), Signal(), Signal()
        b = Signal(BATCH_BITS)
        xa = Signal(range(g.buffer_bytes // 2))  # DOT: b*kb + k; AXPY: row*batch + b
        word = Signal(DIM_BITS + BATCH_BITS)  # DOT operand word b*kb + k (the AXPY partial-sum row too)
        last_b = b == self.batch - 1
        room = self.tag_room & ((self.mode == Mode.AXPY) | ~lastk | self.dot_room)
        m.d.comb += [
            self.go.eq(held & room),
            self.w_held.eq(w),
            self.x_addr.eq(Mux(self.mode == Mode.DOT, word, xa)),
            self.held.eq(held),
        ]
        go = self.go & self.mul_ready
        m.d.comb += [
            self.free.eq(~held | (go & last_b)),
            self.tag_en.eq(go),
            self.tag.b.eq(b),
            self.tag.first.eq(k == 0),
            self.tag.lastk.eq(lastk),
            self.tag.final.eq(final & last_b),
            self.tag.col0.eq(col0),
            self.tag.word.eq(word * g.lanes),
        ]
        with m.If(go):
            m.d.sync += [b.eq(b + 1), xa.eq(xa + 1), word.eq(word + self.kb)]
            with m.If(last_b):
                m.d.sync += [held.eq(0), b.eq(0)]
        with m.If(self.load):
            m.d.sync += [
                held.eq(1),
                w.eq(self.w),
                k.eq(self.k),
                lastk.eq(self.lastk),
                col0.eq(self.col0),
                final.eq(self.final),
                b.eq(0),
                xa.eq(self.x_base),
                word.eq(self.k),
            ]
        return m


class Datapath(wiring.Component):
    """The GEMV datapath the unit's sequencer drives: the operand buffer, the held W beat's issue, the
    multiplier array, the DOT and AXPY paths and the DOT result queue. Members: ``mode``, ``kb``, ``batch``
    In — the descriptor's; ``data`` In — the item's data (an X item's or a W beat); ``x_we``, ``x_addr``
    In — write an X item at operand word (AXPY: scalar) ``x_addr``; ``load`` In — take a W beat (when
    ``free``) at its place ``k``, ``lastk``, ``col0``, ``final``, ``x_base`` In (as :class:`Issue`);
    ``free`` Out; ``idle`` Out — no beat held, no operation in a path; ``dot`` Out(stream of {y, last}) —
    the DOT results, ``last`` on the transaction's final one; ``r_word`` In, ``axpy_y`` Out(multipliers
    FP16) — the AXPY partial-sum word ``r_word``, rounded."""

    def __init__(self, g: Gemv):
        self.g = g
        super().__init__(
            {
                "mode": In(1),
                "kb": In(DIM_BITS),
                "batch": In(BATCH_BITS),
                "data": In(g.beat * ELEM_BITS),
                "x_we": In(1),
                "x_addr": In(range(g.buffer_bytes // 2)),
                "load": In(1),
                "k": In(DIM_BITS),
                "lastk": In(1),
                "col0": In(1),
                "final": In(1),
                "x_base": In(range(g.buffer_bytes // 2)),
                "free": Out(1),
                "idle": Out(1),
                "dot": Out(stream.Signature(data.StructLayout({"y": ELEM_BITS, "last": 1}))),
                "r_word": In(range(max(2, psum_words(g)) + 1)),
                "axpy_y": Out(data.ArrayLayout(ELEM_BITS, g.multipliers)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g, dot_mode = self.g, self.mode == Mode.DOT
        m.submodules.mul = mul = MulArray(g)
        m.submodules.dot = dot = DotPath(g)
        m.submodules.axpy = axpy = AxpyPath(g)
        m.submodules.tags = tags = SyncFIFO(width=tag_layout(g).size, depth=TAGS)
        m.submodules.outq = outq = SyncFIFO(width=ELEM_BITS + 1, depth=OUT_QUEUE)
        m.submodules.ops = ops = Operands(g)
        m.submodules.issue = issue = Issue(g)
        for path in (dot, axpy):
            m.d.comb += [path.valid.eq(mul.valid), path.lane.eq(mul.lane), path.p.eq(mul.p), path.tag.eq(tags.r_data)]
        m.d.comb += [mul.go.eq(issue.go), issue.mul_ready.eq(mul.ready), mul.a.eq(issue.w_held), mul.b.eq(ops.x)]
        owed = Signal(range(OUT_QUEUE + 1))  # DOT results issued and not yet out
        dot_out = self.dot.valid & self.dot.ready
        m.d.sync += owed.eq(owed + (issue.tag_en & issue.tag.lastk & dot_mode) - dot_out)
        m.d.comb += [
            tags.r_en.eq(mul.valid & (mul.lane == g.lanes - 1)),
            tags.w_en.eq(issue.tag_en),
            tags.w_data.eq(issue.tag),
            issue.tag_room.eq(tags.w_rdy),
            issue.dot_room.eq(owed < OUT_QUEUE),
            ops.r_addr.eq(issue.x_addr),
            ops.w_en.eq(self.x_we),
            ops.w_data.eq(self.data),
            ops.w_addr.eq(self.x_addr),
            ops.mode.eq(self.mode),
            outq.w_data.eq(Cat(dot.y, dot.final)),
            outq.w_en.eq(dot.out_valid & dot_mode),
            self.dot.valid.eq(outq.r_rdy),
            self.dot.payload.y.eq(outq.r_data[:ELEM_BITS]),
            self.dot.payload.last.eq(outq.r_data[ELEM_BITS]),
            outq.r_en.eq(self.dot.ready),
            axpy.r_word.eq(self.r_word),
            self.axpy_y.eq(axpy.y),
            self.idle.eq(~issue.held & ~tags.r_rdy & Mux(dot_mode, ~dot.busy, ~axpy.busy)),
            self.free.eq(issue.free),
        ]
        m.d.comb += [
            issue.load.eq(self.load),
            issue.w.eq(self.data),
            issue.mode.eq(self.mode),
            issue.kb.eq(self.kb),
            issue.batch.eq(self.batch),
            issue.k.eq(self.k),
            issue.lastk.eq(self.lastk),
            issue.col0.eq(self.col0),
            issue.final.eq(self.final),
            issue.x_base.eq(self.x_base),
        ]
        return m


class GemvUnit(wiring.Component):
    """Members: ``i`` In(stream of :func:`item_layout`) — DESC, X and W items; ``o`` Out(stream of
    :func:`out_layout`) — results (DOT: y[0]; AXPY: ``multipliers`` values), or one error item. The
    sequencer here walks the transaction's phases; :class:`Datapath` computes."""

    def __init__(
        self,
        multipliers: int = FULL.multipliers,
        lanes: int = FULL.lanes,
        serial_bits: int = FULL.serial_bits,
        buffer_bytes: int = FULL.buffer_bytes,
    ):
        self.g = geometry(multipliers, lanes, serial_bits, buffer_bytes)
        super().__init__(
            {"i": In(stream.Signature(item_layout(self.g))), "o": Out(stream.Signature(out_layout(self.g)))}
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        g = self.g
        m.submodules.desc = desc = Descriptor(g)
        m.submodules.path = path = Datapath(g)
        item = self.i.payload
        # the descriptor's fields (held), the phase's item count, the next W beat's place, AXPY's row * batch
        # and output word
        c = self._seq = {
            "mode": path.mode,
            "kb": path.kb,
            "batch": path.batch,
            "n": Signal(DIM_BITS, name="n"),
            "count": Signal(DIM_BITS + BATCH_BITS + 1, name="count"),
            "k": Signal(DIM_BITS, name="k"),
            "row": Signal(DIM_BITS, name="row"),
            "x_base": Signal(range(g.buffer_bytes // 2), name="x_base"),
            "r_word": Signal.like(path.r_word, name="r_word"),
            "err": Signal(ERR, name="err"),
        }
        lastk, last_row = c["k"] == c["kb"] - 1, c["row"] == c["n"] - 1
        m.d.comb += [
            desc.data.eq(item.data),
            path.data.eq(item.data),
            path.x_addr.eq(c["count"]),
            path.k.eq(c["k"]),
            path.lastk.eq(lastk),
            path.col0.eq(c["row"] == 0),
            path.final.eq(lastk & last_row),
            path.x_base.eq(Mux(c["mode"] == Mode.DOT, 0, c["x_base"])),
            path.r_word.eq(c["r_word"]),
        ]
        self._front = front = CommandFront(m, self.i, c["err"], MALFORMED, "DRAIN_ERR")
        with m.FSM():
            with m.State("DESC"):
                self._desc(m, desc)
            with m.State("X"):
                self._x(m, path)
            with m.State("W"):
                self._w(m, path, lastk, last_row)
                self._dot_out(m, path.dot)
            with m.State("RUN"):  # DOT: until the last result is out; AXPY: until the partial sums are written
                with m.If((c["mode"] == Mode.AXPY) & path.idle):
                    m.next = "OUT"
                self._dot_out(m, path.dot, "DESC")
            with m.State("OUT"):
                self._axpy_out(m, path)
            with m.State("SKIP"):  # a flagged transaction: consumed to its last item
                front.skip()
                self._dot_out(m, path.dot)
            with m.State("DRAIN_ERR"):  # the rows already complete go out first
                with m.If(path.idle & ~path.dot.valid):
                    m.next = "ERROR"
                self._dot_out(m, path.dot)
            with m.State("ERROR"):
                m.d.comb += [self.o.valid.eq(1), self.o.payload.last.eq(1), self.o.payload.error.eq(c["err"])]
                with m.If(self.o.ready):
                    m.next = "DESC"
        return m

    def _desc(self, m: Module, desc: Descriptor) -> None:
        """A DESC item: its fields held, or its error flagged."""
        c = self._seq
        m.d.comb += self.i.ready.eq(1)
        with m.If(self.i.valid):
            m.d.sync += [c["mode"].eq(desc.mode), c["n"].eq(desc.n), c["kb"].eq(desc.kb), c["batch"].eq(desc.batch)]
            m.d.sync += [c[f].eq(0) for f in ("count", "k", "row", "x_base", "r_word")]
            self._front.desc(Op.DESC, desc.error, "X")

    def _x(self, m: Module, path: Datapath) -> None:
        """The operands' X items into the buffer (DOT: batch x kb beats; AXPY: n x batch scalars)."""
        c, item = self._seq, self.i.payload
        m.d.comb += self.i.ready.eq(1)
        with m.If(self.i.valid):
            with m.If((item.op != Op.X) | item.last):
                self._front.fail(MALFORMED)
            with m.Else():
                m.d.comb += path.x_we.eq(1)
                m.d.sync += c["count"].eq(c["count"] + 1)
                with m.If(c["count"] + 1 == Mux(c["mode"] == Mode.DOT, c["batch"] * c["kb"], c["n"] * c["batch"])):
                    m.next = "W"

    def _w(self, m: Module, path: Datapath, lastk: Value, last_row: Value) -> None:
        """The n x kb W beats, each to the datapath when it is free; the final one carries ``last``."""
        c, item = self._seq, self.i.payload
        m.d.comb += self.i.ready.eq(path.free)
        with m.If(self.i.valid & self.i.ready):
            with m.If((item.op != Op.W) | (item.last != (lastk & last_row))):
                self._front.fail(MALFORMED)
            with m.Else():
                m.d.comb += path.load.eq(1)
                m.d.sync += c["k"].eq(c["k"] + 1)
                with m.If(lastk):
                    m.d.sync += [c["k"].eq(0), c["row"].eq(c["row"] + 1), c["x_base"].eq(c["x_base"] + c["batch"])]
                with m.If(item.last):
                    m.next = "RUN"

    def _axpy_out(self, m: Module, path: Datapath) -> None:
        """AXPY's batch x kb x lanes partial-sum words, rounded, in order."""
        c = self._seq
        last = c["r_word"] == c["batch"] * c["kb"] * self.g.lanes - 1
        m.d.comb += [self.o.valid.eq(1), self.o.payload.y.eq(path.axpy_y), self.o.payload.last.eq(last)]
        with m.If(self.o.ready):
            m.d.sync += c["r_word"].eq(c["r_word"] + 1)
            with m.If(last):
                m.next = "DESC"

    def _dot_out(self, m: Module, dot: stream.Interface, then: str | None = None) -> None:
        """Stream the DOT results; on the transaction's final result go to ``then`` (when given)."""
        m.d.comb += [
            self.o.valid.eq(dot.valid),
            self.o.payload.y[0].eq(dot.payload.y),
            self.o.payload.last.eq(dot.payload.last),
            dot.ready.eq(self.o.ready),
        ]
        if then is not None:
            with m.If(dot.valid & dot.ready & dot.payload.last):
                m.next = then
