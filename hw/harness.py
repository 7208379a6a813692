"""The transaction-level simulation harness: RTL around any unit with stream ports, so a testbench touches
the simulator once per batch instead of once per clock cycle.

:class:`StreamHarness` wraps a unit (the *DUT*) and mirrors its ports at the top under the same names, so
the per-cycle cocotb drivers (tb/streams.py) drive it unchanged while ``hx_go`` is low. While ``hx_go`` is
high the harness itself drives the DUT:

* every input stream plays items from an :class:`InputPlayer` memory that the testbench fills beforehand,
  ``k`` items per load word (``hx_load_*``), with valid gaps drawn from a seeded :class:`XorShift32`;
* every output stream is taken by an :class:`OutputCapture` whose ready is drawn the same way and which
  stores each accepted payload with its cycle stamp; every input's acceptance cycles are stored too;
* a cycle counter stamps transfers, ``hx_done`` rises once every input item was accepted and every
  output has its expected count, ``hx_linger`` cycles later (so an extra output is caught), or at
  ``hx_timeout`` cycles (``hx_status`` bit 0) or when a capture memory is full (bit 1);
* a passive :class:`StreamMonitor` watches every DUT stream port, in both modes: ``hx_violation`` has a
  sticky bit per port (inputs first, then outputs; ``hx_status`` bit 2 is any of them) for a protocol
  violation — valid dropped, or payload changed, while valid was high and ready low — cleared at reset
  and when a batch starts.

Handshake draws follow tb/streams.py: an input idles a cycle with probability 1 - p_valid until it asserts
valid, then holds valid and payload until the transfer; an output's ready is high with probability p_ready
each cycle. Probabilities are thresholds out of 2**16 (``hx_p_valid``, ``hx_p_ready``) compared with the
top 16 bits of each port's generator, seeded from ``hx_seed`` at the rising edge of ``hx_go``
(:func:`port_seed`). tb/txn.py is the Python side; tb/harness_main.py the no-Python C++ driver.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Shape, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

STAMP_BITS = 32
PROB_ONE = 1 << 16  # a probability threshold of 1.0
_SEED_SALT = 0x9E3779B9  # golden-ratio constant: distinct, well-mixed seeds per port


def port_seed(seed: int, index: int) -> int:
    """The generator state port ``index`` (inputs first, then outputs) starts from: never zero."""
    return ((seed ^ (_SEED_SALT * (index + 1))) & 0xFFFFFFFF) | 1


def xorshift32(x: int) -> int:
    """Marsaglia's xorshift32 (13, 17, 5): the step :class:`XorShift32` takes every cycle."""
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    return x ^ ((x << 5) & 0xFFFFFFFF)


class XorShift32(wiring.Component):
    """A 32-bit xorshift generator (a linear-feedback generator over GF(2)) stepping every ``run`` cycle.

    Members: ``seed`` (in, 32): loaded on ``load``; ``load`` (in); ``run`` (in): step this cycle;
    ``threshold`` (in, 17): ``hit`` = top 16 state bits < threshold; ``hit`` (out)."""

    def __init__(self):
        super().__init__({"seed": In(32), "load": In(1), "run": In(1), "threshold": In(17), "hit": Out(1)})

    def elaborate(self, platform) -> Module:
        m = Module()
        state = Signal(32, init=1)
        a = Signal(32)
        b = Signal(32)
        m.d.comb += [a.eq(state ^ (state << 13)[:32]), b.eq(a ^ (a >> 17)), self.hit.eq(state[16:] < self.threshold)]
        with m.If(self.load):
            m.d.sync += state.eq(self.seed)
        with m.Elif(self.run):
            m.d.sync += state.eq(b ^ (b << 5)[:32])
        return m


def _k_words(k: int, depth: int) -> int:
    if depth % k:
        raise ValueError(f"depth: {depth} must be a multiple of k={k}")
    return depth // k


def _drain_ports(m: Module, mem: memory.Memory, k: int, en, addr, out) -> None:
    """``k`` synchronous read ports (enabled only while draining, so a run pays nothing for them) filling
    ``out`` with entries ``addr * k`` .. ``addr * k + k - 1``, entry 0 in the low bits."""
    width = Shape.cast(mem.shape).width
    for i in range(k):
        rd = mem.read_port()
        m.d.comb += [
            rd.en.eq(en),
            rd.addr.eq(Cat(Const(i, (k - 1).bit_length()), addr)),
            out[i * width : (i + 1) * width].eq(rd.data),
        ]


class InputPlayer(wiring.Component):
    """Plays ``count`` items from its memory into a stream, recording each item's acceptance cycle.

    Members: ``o`` (out stream, ``width`` bits); ``load_en``, ``load_addr``, ``load_data`` (in): write
    items ``load_addr * k`` .. ``+ k - 1`` (item 0 in the low bits); ``start`` (in): rewind, reseed;
    ``run`` (in): drive the stream this cycle; ``seed`` (in, 32), ``p_valid`` (in, 17); ``count`` (in):
    items to play; ``stamp`` (in, 32): the current cycle; ``played`` (out): items accepted so far;
    ``drain_en``, ``drain_addr`` (in), ``drain_stamps`` (out): the acceptance stamps of items
    ``drain_addr * k`` .. ``+ k - 1``, the cycle after."""

    def __init__(self, width: int, depth: int, k: int):
        self.width, self.depth, self.k = width, depth, k
        words = _k_words(k, depth)
        super().__init__(
            {
                "o": Out(stream.Signature(width)),
                "load_en": In(1),
                "load_addr": In(range(words)),
                "load_data": In(k * width),
                "start": In(1),
                "run": In(1),
                "seed": In(32),
                "p_valid": In(17),
                "count": In(range(depth + 1)),
                "stamp": In(STAMP_BITS),
                "played": Out(range(depth + 1)),
                "drain_en": In(1),
                "drain_addr": In(range(words)),
                "drain_stamps": Out(k * STAMP_BITS),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        k, w = self.k, self.width
        # one item per memory word (k write ports load a word of k items): a narrow read per cycle
        m.submodules.items = items = memory.Memory(shape=unsigned(w), depth=self.depth, init=[])
        m.submodules.stamps = stamps = memory.Memory(shape=unsigned(STAMP_BITS), depth=self.depth, init=[])
        m.submodules.rng = rng = XorShift32()
        for i in range(k):
            load = items.write_port()
            m.d.comb += [
                load.en.eq(self.load_en),
                load.addr.eq(Cat(Const(i, (k - 1).bit_length()), self.load_addr)),
                load.data.eq(self.load_data[i * w : (i + 1) * w]),
            ]
        rd, stamp_w = items.read_port(domain="comb"), stamps.write_port()
        _drain_ports(m, stamps, k, self.drain_en, self.drain_addr, self.drain_stamps)
        holding = Signal()
        m.d.comb += [
            rd.addr.eq(self.played),
            self.o.payload.eq(rd.data),
            rng.seed.eq(self.seed),
            rng.load.eq(self.start),
            rng.run.eq(self.run),
            rng.threshold.eq(self.p_valid),
            self.o.valid.eq(self.run & (self.played < self.count) & (holding | rng.hit)),
            stamp_w.addr.eq(self.played),
            stamp_w.data.eq(self.stamp),
            stamp_w.en.eq(self.o.valid & self.o.ready),
        ]
        with m.If(self.start):
            m.d.sync += [self.played.eq(0), holding.eq(0)]
        with m.Elif(self.run):
            m.d.sync += holding.eq(self.o.valid & ~self.o.ready)
            with m.If(self.o.valid & self.o.ready):
                m.d.sync += self.played.eq(self.played + 1)
        return m


class OutputCapture(wiring.Component):
    """Takes a stream with a seeded random ready and stores (stamp, payload) per accepted item.

    Members: ``i`` (in stream, ``width`` bits); ``start``, ``run``, ``seed``, ``p_ready`` (in) as
    :class:`InputPlayer`; ``stamp`` (in, 32); ``captured`` (out): items stored; ``full`` (out): the memory
    is full (the harness stops); ``drain_en``, ``drain_addr`` (in), ``drain_data`` (out): entries
    ``drain_addr * k`` .. ``+ k - 1``, each payload (low ``width`` bits) then stamp, the cycle after."""

    def __init__(self, width: int, depth: int, k: int):
        self.width, self.depth, self.k = width, depth, k
        words = _k_words(k, depth)
        super().__init__(
            {
                "i": In(stream.Signature(width)),
                "start": In(1),
                "run": In(1),
                "seed": In(32),
                "p_ready": In(17),
                "stamp": In(STAMP_BITS),
                "captured": Out(range(depth + 1)),
                "full": Out(1),
                "drain_en": In(1),
                "drain_addr": In(range(words)),
                "drain_data": Out(k * (width + STAMP_BITS)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=unsigned(self.width + STAMP_BITS), depth=self.depth, init=[])
        m.submodules.rng = rng = XorShift32()
        wr = mem.write_port()
        _drain_ports(m, mem, self.k, self.drain_en, self.drain_addr, self.drain_data)
        take = self.i.valid & self.i.ready
        m.d.comb += [
            self.full.eq(self.captured == self.depth),
            rng.seed.eq(self.seed),
            rng.load.eq(self.start),
            rng.run.eq(self.run),
            rng.threshold.eq(self.p_ready),
            self.i.ready.eq(self.run & ~self.full & rng.hit),
            wr.addr.eq(self.captured),
            wr.data.eq(Cat(self.i.payload, self.stamp)),
            wr.en.eq(take),
        ]
        with m.If(self.start):
            m.d.sync += self.captured.eq(0)
        with m.Elif(take):
            m.d.sync += self.captured.eq(self.captured + 1)
        return m


def stream_ports(dut: wiring.Component) -> tuple[list[str], list[str], list[str]]:
    """The DUT's (input stream, output stream, plain) port names in signature order."""
    ins, outs, plain = [], [], []
    for name, member in dut.signature.members.items():
        if member.is_port:
            plain.append(name)
        elif isinstance(member.signature, stream.Signature):
            (outs if member.flow == Out else ins).append(name)
        else:
            raise ValueError(f"{name}: the harness takes stream ports and plain ports, not {member.signature!r}")
    return ins, outs, plain


def harness_k(width: int, max_word: int = 8192, max_k: int = 64) -> int:
    """Items per load/drain word: the largest power of two up to ``max_k`` keeping a word <= ``max_word``
    bits (at least 1)."""
    k = 1
    while 2 * k <= max_k and 2 * k * width <= max_word:
        k *= 2
    return k


class StreamMonitor(wiring.Component):
    """A passive check of ``amaranth.lib.stream``'s rule: once a source asserts valid it holds valid and
    the payload until the transfer (valid and ready at a rising edge). Watches a port of ``width`` payload
    bits; ``violation`` is sticky until ``clear`` or reset.

    Members: ``valid``, ``ready`` (in, 1), ``payload`` (in, width): the watched port's signals;
    ``clear`` (in, 1): forget a violation; ``violation`` (out, 1): the rule was broken since the last clear."""

    def __init__(self, width: int):
        super().__init__({"valid": In(1), "ready": In(1), "payload": In(width), "clear": In(1), "violation": Out(1)})

    def elaborate(self, platform) -> Module:
        m = Module()
        held, last = Signal(), Signal.like(self.payload)  # a transfer was pending at the last edge, its payload
        m.d.sync += [held.eq(self.valid & ~self.ready), last.eq(self.payload)]
        with m.If(self.clear):
            m.d.sync += self.violation.eq(0)
        with m.Elif(held & (~self.valid | (self.payload != last))):
            m.d.sync += self.violation.eq(1)
        return m


class StreamHarness(wiring.Component):
    """``dut`` wrapped for transaction-level simulation (module docstring); ``depth``: items per port per
    batch (input memories and capture memories); ``k``: items per load/drain word (default
    :func:`harness_k` of the widest port and ``max_word``).

    Members: every DUT member under its own name (driven from the top while ``hx_go`` is low), and ``hx_go`` (in):
    the harness drives the DUT; its rising edge starts a batch; ``hx_seed`` (in, 32); ``hx_p_valid``, ``hx_p_ready``
    (in, 17): thresholds out of 2**16; ``hx_counts`` (in): items per input, packed in input order; ``hx_expect``
    (in): items per output; ``hx_linger`` (in, 16); ``hx_timeout`` (in, 32); ``hx_load_en``, ``hx_load_sel`` (input
    index), ``hx_load_addr``, ``hx_load_data`` (in): one load word; ``hx_drain_addr`` (in), ``hx_drain_data`` (out):
    word ``hx_drain_addr`` of every capture memory (outputs in order, each entry its payload then stamp) then of
    every input's stamp memory, side by side (:meth:`drain_sections`), the cycle after — one pass drains them all;
    ``hx_done``, ``hx_status`` (out, 3: timed out, capture full, protocol violation); ``hx_violation`` (out, one bit
    per port, inputs first): :class:`StreamMonitor` flags; ``hx_cycles`` (out, 32): cycles since the batch started;
    ``hx_played``, ``hx_captured`` (out): items per port."""

    def __init__(self, dut: wiring.Component, depth: int = 2048, k: int | None = None, max_word: int = 8192):
        self.dut, self.depth = dut, depth
        self.ins, self.outs, self.plain = stream_ports(dut)
        members = dut.signature.members
        self.widths = {n: Shape.cast(members[n].signature.members["payload"].shape).width for n in self.ins + self.outs}
        if not self.ins or not self.outs:
            raise ValueError(f"dut: the harness needs an input and an output stream; has {self.ins}, {self.outs}")
        self.k = k or harness_k(max(self.widths.values()) + STAMP_BITS, max_word)
        words = _k_words(self.k, depth)
        n_in, n_out = len(self.ins), len(self.outs)
        cnt = range(depth + 1)
        max_in = max(self.widths[n] for n in self.ins)
        super().__init__(
            {
                **members,
                "hx_go": In(1),
                "hx_seed": In(32),
                "hx_p_valid": In(17),
                "hx_p_ready": In(17),
                "hx_counts": In(data.ArrayLayout(cnt, n_in)),
                "hx_expect": In(data.ArrayLayout(cnt, n_out)),
                "hx_linger": In(16),
                "hx_timeout": In(32),
                "hx_load_en": In(1),
                "hx_load_sel": In(range(n_in)),
                "hx_load_addr": In(range(words)),
                "hx_load_data": In(self.k * max_in),
                "hx_drain_addr": In(range(words)),
                "hx_drain_data": Out(self.k * sum(bits for _, bits in self.drain_sections())),
                "hx_done": Out(1),
                "hx_status": Out(3),
                "hx_violation": Out(n_in + n_out),
                "hx_cycles": Out(STAMP_BITS),
                "hx_played": Out(data.ArrayLayout(cnt, n_in)),
                "hx_captured": Out(data.ArrayLayout(cnt, n_out)),
            }
        )

    def drain_sections(self) -> list[tuple[str, int]]:
        """``hx_drain_data``'s sections from bit 0, each ``k`` entries of (name, bits per entry): every output
        port's captures (payload, then stamp), then every input port's acceptance stamps."""
        return [(n, self.widths[n] + STAMP_BITS) for n in self.outs] + [(n, STAMP_BITS) for n in self.ins]

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.dut = dut = self.dut
        running, go_q = Signal(), Signal()
        start = self.hx_go & ~go_q
        m.d.sync += [go_q.eq(self.hx_go), running.eq(self.hx_go)]
        run = running & self.hx_go & ~self.hx_done
        for name in self.plain:
            port, inner = getattr(self, name), getattr(dut, name)
            m.d.comb += inner.eq(port) if dut.signature.members[name].flow == In else port.eq(inner)
        players = [self._player(m, i, name, start, run) for i, name in enumerate(self.ins)]
        captures = [self._capture(m, j, name, start, run) for j, name in enumerate(self.outs)]
        m.d.comb += self.hx_drain_data.eq(Cat(*[c.drain_data for c in captures], *[p.drain_stamps for p in players]))
        self._monitor(m, start)
        self._control(m, players, captures, start, run)
        return m

    def _monitor(self, m: Module, start) -> None:
        """A :class:`StreamMonitor` on every DUT stream port (the DUT side: whoever drives it)."""
        for i, name in enumerate(self.ins + self.outs):
            mon = m.submodules[f"monitor_{name}"] = StreamMonitor(self.widths[name])
            port = getattr(self.dut, name)
            m.d.comb += [
                mon.valid.eq(port.valid),
                mon.ready.eq(port.ready),
                mon.payload.eq(port.payload),
                mon.clear.eq(start),
                self.hx_violation[i].eq(mon.violation),
            ]

    def _player(self, m: Module, index: int, name: str, start, run) -> InputPlayer:
        p = InputPlayer(self.widths[name], self.depth, self.k)
        m.submodules[f"play_{name}"] = p
        top, inner = getattr(self, name), getattr(self.dut, name)
        m.d.comb += self._controls(p, index, start, run)
        m.d.comb += [
            p.load_en.eq(self.hx_load_en & (self.hx_load_sel == index)),
            p.load_addr.eq(self.hx_load_addr),
            p.load_data.eq(self.hx_load_data),
            p.p_valid.eq(self.hx_p_valid),
            p.count.eq(self.hx_counts[index]),
            self.hx_played[index].eq(p.played),
            inner.valid.eq(Mux(self.hx_go, p.o.valid, top.valid)),
            inner.payload.eq(Mux(self.hx_go, p.o.payload, top.payload)),
            p.o.ready.eq(inner.ready),
            top.ready.eq(inner.ready),
        ]
        return p

    def _capture(self, m: Module, index: int, name: str, start, run) -> OutputCapture:
        c = OutputCapture(self.widths[name], self.depth, self.k)
        m.submodules[f"capture_{name}"] = c
        top, inner = getattr(self, name), getattr(self.dut, name)
        m.d.comb += self._controls(c, len(self.ins) + index, start, run)
        m.d.comb += [
            c.p_ready.eq(self.hx_p_ready),
            self.hx_captured[index].eq(c.captured),
            c.i.valid.eq(inner.valid),
            c.i.payload.eq(inner.payload),
            inner.ready.eq(Mux(self.hx_go, c.i.ready, top.ready)),
            top.valid.eq(inner.valid),
            top.payload.eq(inner.payload),
        ]
        return c

    def _controls(self, unit, seed_index: int, start, run) -> list:
        """What a player and a capture both take: start/run, their port's seed (:func:`port_seed` order),
        the cycle stamp, and draining while the harness is idle."""
        return [
            unit.start.eq(start),
            unit.run.eq(run),
            unit.seed.eq(port_seed_expr(self.hx_seed, seed_index)),
            unit.stamp.eq(self.hx_cycles),
            unit.drain_en.eq(~self.hx_go),
            unit.drain_addr.eq(self.hx_drain_addr),
        ]

    def _control(self, m: Module, players: list, captures: list, start, run) -> None:
        """Cycle counter, completion (then ``hx_linger`` more cycles), timeout and capture-full stop."""
        settle = Signal(16)
        complete = Signal()
        m.d.comb += complete.eq(
            Cat(
                *[p.played == p.count for p in players],
                *[c.captured >= e for c, e in zip(captures, self.hx_expect, strict=True)],
            ).all()
        )
        timed_out, full = self.hx_cycles >= self.hx_timeout, Cat(*[c.full for c in captures]).any()
        with m.If(start):
            m.d.sync += [self.hx_cycles.eq(0), settle.eq(0), self.hx_done.eq(0), self.hx_status.eq(0)]
        with m.Elif(run):
            m.d.sync += self.hx_cycles.eq(self.hx_cycles + 1)
            m.d.sync += settle.eq(Mux(complete, settle + 1, 0))
            with m.If((complete & (settle >= self.hx_linger)) | timed_out | full):
                m.d.sync += [self.hx_done.eq(1), self.hx_status.eq(Cat(timed_out, full, self.hx_violation.any()))]


def port_seed_expr(seed, index: int):
    """:func:`port_seed` in hardware."""
    return (seed ^ ((_SEED_SALT * (index + 1)) & 0xFFFFFFFF)) | 1
