"""Per-cycle cocotb drivers for ``amaranth.lib.stream`` ports, a scoreboard, and clock/reset helpers.

Python runs every clock cycle here: use these drivers where a test needs a given cycle (reset mid-stream,
cutting a source); stream data through tb/txn.py's transaction-level harness otherwise (its docstring).

Timing convention (race-free on every simulator): drivers write at the falling edge, then wait for
ReadOnly to see the settled handshake; a transfer with valid & ready then happens at the next rising
edge, whose index (rising edges since time 0) stamps the item. Sources hold valid and payload until the
transfer, as the stream protocol requires.

Gaps and backpressure come from *pause generators* (cocotbext-axi's ``set_pause_generator``): per port an
iterator giving, each cycle, whether the port pauses (a source keeps valid low, a sink ready low). The
default is :func:`bernoulli` at the driver's ``p_valid`` / ``p_ready`` on the test's seeded
``random.Random``; a test picks others per port (``pauses``), e.g. from :data:`PAUSES`.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Sequence

import cocotb
from amaranth.hdl import Shape
from amaranth.lib import data
from cocotb.clock import Clock
from cocotb.simtime import get_sim_time
from cocotb.triggers import ClockCycles, Event, FallingEdge, ReadOnly, RisingEdge, Timer, with_timeout

from tb.clock import FREE, PERIOD_NS

HARNESS_INPUTS = (
    "hx_go",
    "hx_seed",
    "hx_p_valid",
    "hx_p_ready",
    "hx_counts",
    "hx_expect",
    "hx_linger",
    "hx_timeout",
    "hx_load_en",
    "hx_load_sel",
    "hx_load_addr",
    "hx_load_data",
    "hx_drain_addr",
)  # hw/harness.py StreamHarness's control inputs


def cycle_now() -> int:
    """Index of the next rising edge (between a falling edge and the rising edge after it)."""
    return int(get_sim_time("ns") // PERIOD_NS) + 1


def pack(layout, value) -> int:
    """Pack a Python value (dict for structs, sequence for arrays, int otherwise: its raw bits) into
    layout bits."""
    if isinstance(value, int):
        return value & ((1 << Shape.cast(layout).width) - 1)
    if isinstance(layout, data.StructLayout):
        return sum(pack(f.shape, value[name]) << f.offset for name, f in layout)
    if isinstance(layout, data.ArrayLayout):
        width = Shape.cast(layout.elem_shape).width
        if len(value) != layout.length:
            raise ValueError(f"value: {len(value)} elements, the layout holds {layout.length}")
        return sum(pack(layout.elem_shape, v) << (i * width) for i, v in enumerate(value))
    return int(value) & ((1 << Shape.cast(layout).width) - 1)


def unpack(layout, bits: int):
    """Inverse of :func:`pack`."""
    if isinstance(layout, data.StructLayout):
        return {name: unpack(f.shape, (bits >> f.offset) & ((1 << f.width) - 1)) for name, f in layout}
    if isinstance(layout, data.ArrayLayout):
        width = Shape.cast(layout.elem_shape).width
        return [unpack(layout.elem_shape, (bits >> (i * width)) & ((1 << width) - 1)) for i in range(layout.length)]
    return bits


def field(layout: data.StructLayout, name: str, bits: int) -> int:
    """The raw bits of field ``name`` of a packed ``layout`` value."""
    f = layout[name]
    return (bits >> f.offset) & ((1 << f.width) - 1)


_CLOCK: dict[str, Clock] = {}  # the running test's clock, for run_free to stop and restart


async def start_clock(dut) -> None:
    _CLOCK["clk"] = Clock(dut.clk, PERIOD_NS, unit="ns")
    _CLOCK["clk"].start()
    dut.rst.value = 0
    if hasattr(dut, "hx_go"):  # a harness build (hw/harness.py): its ports pass through until hx_go; its
        # other inputs are driven too (undriven, Icarus lets Z reach the passed-through ports)
        for name in (*HARNESS_INPUTS, FREE):  # FREE: tb/clock.py's wrapper, around every harness build
            getattr(dut, name).value = 0


async def run_free(dut, done) -> None:
    """From a falling edge of ``clk``, run the clock inside the simulator (tb/clock.py's ``hx_free``) for
    one cycle and then until ``done`` is high; return on the falling edge after, cocotb's clock running
    again in phase."""
    _CLOCK["clk"].stop()
    getattr(dut, FREE).value = 1
    await Timer(PERIOD_NS, "ns")  # the start cycle, to its falling edge
    if not done.value:
        await RisingEdge(done)  # a rising edge of the generated clock
        await Timer(PERIOD_NS // 2, "ns")
    getattr(dut, FREE).value = 0
    _CLOCK["clk"].start(start_high=False)


async def reset(dut, cycles: int = 2) -> None:
    await FallingEdge(dut.clk)
    dut.rst.value = 1
    for _ in range(cycles):
        await FallingEdge(dut.clk)
    dut.rst.value = 0


Pause = Callable[[random.Random], Iterator[bool]]
"""A pause generator: given the test's rng, an endless iterator of per-cycle pauses (True: pause)."""


def bernoulli(p_active: float) -> Pause:
    """Active (valid offered, ready high) with probability ``p_active`` each cycle, one draw per cycle."""

    def pauses(rng: random.Random) -> Iterator[bool]:
        while True:
            yield rng.random() >= p_active

    return pauses


def pattern(*bits: int) -> Pause:
    """A fixed cycle of pause bits (1: pause), as cocotbext-axi's ``itertools.cycle([1, 1, 0])``."""
    if not bits or not all(b in (0, 1) for b in bits) or all(bits):
        raise ValueError(f"pattern: {bits} not allowed; 0/1 bits with at least one 0 (an active cycle)")
    return lambda _rng: itertools.cycle(bool(b) for b in bits)


# Named (source, sink) pause generators a test selects (stream_tb's test_pause_patterns runs each): the
# random gaps of test_vectors, long bursts and long stalls, lock-step alternation (a sink ready exactly
# when the source idles), a starved source and a sink that takes one item in sixteen cycles.
PAUSES: dict[str, tuple[Pause, Pause]] = {
    "random": (bernoulli(0.8), bernoulli(0.7)),
    "bursts": (pattern(0, 0, 0, 0, 0, 1, 1, 1), pattern(0, 0, 0, 1, 1, 1, 1)),
    "alternating": (pattern(0, 1), pattern(1, 0)),
    "starved": (pattern(1, 1, 1, 1, 1, 1, 1, 0), bernoulli(1.0)),
    "trickle": (bernoulli(1.0), pattern(*[1] * 15, 0)),
}


def active_share(pause: Pause, cycles: int = 4096) -> float:
    """The share of cycles a pause generator leaves active (on a throwaway rng): for timeouts."""
    return 1 - sum(itertools.islice(pause(random.Random(0)), cycles)) / cycles


def _port(driver, dut, port: str) -> None:
    """Bind ``<port>__valid/__ready/__payload`` and the clock onto a driver."""
    driver.clk = dut.clk
    driver.valid, driver.ready = getattr(dut, f"{port}__valid"), getattr(dut, f"{port}__ready")
    driver.payload = getattr(dut, f"{port}__payload")


class StreamSource:
    """Drives ``<port>__valid/__payload``; before each item, idles while ``pause`` says so (default: each
    cycle with probability 1 - p_valid)."""

    def __init__(self, dut, port: str, rng: random.Random, p_valid: float = 1.0, pause: Pause | None = None):
        _port(self, dut, port)
        self.p_valid = p_valid if pause is None else active_share(pause)
        self.pauses = (bernoulli(p_valid) if pause is None else pause)(rng)
        self.accepted: list[int] = []  # rising-edge index of each transfer
        self.valid.value = 0

    async def send(self, items: Iterable[int]) -> None:
        for item in items:
            await FallingEdge(self.clk)
            while next(self.pauses):
                self.valid.value = 0
                await FallingEdge(self.clk)
            self.valid.value = 1
            self.payload.value = item
            await ReadOnly()
            while not self.ready.value:
                await FallingEdge(self.clk)
                await ReadOnly()
            self.accepted.append(cycle_now())
        await FallingEdge(self.clk)
        self.valid.value = 0


class StreamSink:
    """Drives ``<port>__ready`` high unless ``pause`` says so (default: each cycle with probability
    p_ready); records payloads."""

    def __init__(self, dut, port: str, rng: random.Random, p_ready: float = 1.0, pause: Pause | None = None):
        _port(self, dut, port)
        self.p_ready = p_ready if pause is None else active_share(pause)
        self.pauses = (bernoulli(p_ready) if pause is None else pause)(rng)
        self.items: list[int] = []
        self.cycles: list[int] = []
        self._want, self._event = 0, Event()
        self.ready.value = 0
        self.task = cocotb.start_soon(self._run())

    async def _run(self) -> None:
        while True:
            await FallingEdge(self.clk)
            self.ready.value = int(not next(self.pauses))
            await ReadOnly()
            if self.valid.value and self.ready.value:
                value = self.payload.value
                if not value.is_resolvable:
                    raise AssertionError(f"{self.payload._name}: X/Z bits in a valid payload: {value}")
                self.items.append(value.to_unsigned())
                self.cycles.append(cycle_now())
                if len(self.items) >= self._want:
                    self._event.set()

    async def wait_for(self, n: int, timeout_cycles: int) -> list[int]:
        """Wait until ``n`` items arrived; a hang fails the test after ``timeout_cycles``."""
        self._want = n
        if len(self.items) < n:
            self._event.clear()
            await with_timeout(self._event.wait(), timeout_cycles * PERIOD_NS, "ns")
        return self.items

    def stop(self) -> None:
        self.task.cancel()
        self.ready.value = 0


def protocol_step(held: bool, last: str | None, valid: bool, ready: bool, payload: str) -> tuple[str | None, bool, str]:
    """One cycle of the stream rule: (the violation this sample shows or None, whether a transfer is now
    pending, its payload). ``held``/``last``: the previous sample's pending transfer and payload."""
    what = None
    if held and not valid:
        what = "valid dropped before ready"
    elif held and payload != last:
        what = f"payload changed while waiting ({last} -> {payload})"
    return what, valid and not ready, payload


def _high(signal) -> bool:
    """A 1-bit signal is 1 (X or Z, before anything drives it, is not)."""
    v = signal.value
    return v.is_resolvable and bool(v)


class StreamMonitor:
    """A passive per-cycle check of ``<port>`` against ``amaranth.lib.stream``'s rule, whoever drives it:
    once valid is high it stays high, with the same payload, until ready (cocotbext-axi's monitors do the
    same for AXI). Samples once a cycle where the drivers do (after the falling edge, settled); cycles in
    reset are skipped. ``violations`` lists (rising-edge index, what) for :meth:`check`."""

    def __init__(self, dut, port: str):
        _port(self, dut, port)
        self.name, self.rst = port, dut.rst
        self.violations: list[tuple[int, str]] = []
        self.task = cocotb.start_soon(self._run())

    async def _run(self) -> None:
        held, last = False, None
        while True:
            await FallingEdge(self.clk)
            await ReadOnly()
            if self.rst.value:
                held = False
                continue
            what, held, last = protocol_step(held, last, _high(self.valid), _high(self.ready), str(self.payload.value))
            if what:
                self.violations.append((cycle_now(), what))

    def check(self) -> None:
        if self.violations:
            when, what = self.violations[0]
            raise AssertionError(
                f"{self.name}: stream protocol violated at cycle {when}: {what} ({len(self.violations)} violation(s))"
            )

    def stop(self) -> None:
        self.task.cancel()


class PortStreams:
    """Per-cycle streaming on several ports at once: a :class:`StreamSink` on every output from construction
    on, every input idle until :meth:`run` drives it. The sources stay in ``sources`` (their ``accepted``
    stamps) and the sinks in ``sinks``; a :class:`StreamMonitor` watches every port (``monitors``) and
    :meth:`run` fails on a protocol violation; :meth:`stop` cuts everything (a test that resets
    mid-stream: its sources abort, so the monitors stop too). ``pauses``: a pause generator per port, in
    place of the Bernoulli gaps at ``p_valid`` / ``p_ready``."""

    def __init__(
        self,
        dut,
        ins: Iterable[str],
        outs: Iterable[str],
        rng: random.Random,
        p_valid: float = 1.0,
        p_ready: float = 1.0,
        pauses: dict[str, Pause] | None = None,
    ):
        self.dut, self.rng, self.p_valid, self.ins = dut, rng, p_valid, tuple(ins)
        self.pauses = pauses or {}
        self.sinks = {p: StreamSink(dut, p, rng, p_ready, self.pauses.get(p)) for p in outs}
        self.monitors = [StreamMonitor(dut, p) for p in (*self.ins, *self.sinks)]
        self.sources: dict[str, StreamSource] = {}
        self.tasks: list = []
        for p in self.ins:
            getattr(dut, f"{p}__valid").value = 0

    async def send(self, port: str, items: Iterable[int]) -> StreamSource:
        """Send ``items`` on one input alone (e.g. programming a table before the data)."""
        src = StreamSource(self.dut, port, self.rng, self.p_valid, self.pauses.get(port))
        await src.send(items)
        return src

    async def run(
        self, inputs: dict[str, list[int]], expect: dict[str, int], timeout: int, linger: int
    ) -> dict[str, list[int]]:
        """Send every input's items at once; wait until each output of ``expect`` holds its count (a hang
        fails after ``timeout`` cycles) and every source is done; let ``linger`` cycles pass, so anything
        extra shows; stop the sinks and return each output's items."""
        self.sources = {p: StreamSource(self.dut, p, self.rng, self.p_valid, self.pauses.get(p)) for p in inputs}
        self.tasks = [cocotb.start_soon(self.sources[p].send(v)) for p, v in inputs.items() if v]
        for p, n in expect.items():
            await self.sinks[p].wait_for(n, timeout)
        for t in self.tasks:
            await t
        await ClockCycles(self.dut.clk, linger)
        for s in self.sinks.values():
            s.stop()
        for mon in self.monitors:
            mon.check()
        check_protocol(self.dut)
        return {p: list(s.items) for p, s in self.sinks.items()}

    def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
        for s in self.sinks.values():
            s.stop()
        for mon in self.monitors:
            mon.stop()
        for p in self.ins:
            getattr(self.dut, f"{p}__valid").value = 0


def check_protocol(dut) -> None:
    """Fail if a harness build's stream monitors (hw/harness.py :class:`StreamMonitor`, one per DUT stream
    port, inputs first) saw valid dropped or a payload changed while valid was high and ready low since the
    last reset or batch."""
    if hasattr(dut, "hx_violation") and (bits := dut.hx_violation.value.to_unsigned()):
        raise AssertionError(
            f"stream protocol violated (hx_violation {bits:#x}: one bit per DUT stream port, "
            "inputs first): valid dropped or payload changed while valid was high and ready low"
        )


def check_scoreboard(expected: Sequence[int], got: Sequence[int], describe: Callable[[int], str] = str) -> None:
    """Bit-exact, in order, same count; the message names the first mismatching vector."""
    bad = [i for i, (e, g) in enumerate(zip(expected, got, strict=False)) if e != g]
    if bad:
        i = bad[0]
        raise AssertionError(
            f"{len(bad)} mismatches of {len(expected)}; first at #{i}: "
            f"{describe(i)} expected {expected[i]:#x} got {got[i]:#x}"
        )
    if len(got) != len(expected):
        raise AssertionError(f"count: expected {len(expected)} items, got {len(got)}")
