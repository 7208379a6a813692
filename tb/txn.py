"""Transaction-level stimulus: the Python side of hw/harness.py's :class:`StreamHarness`.

A :class:`Batch` (input items per port, output counts expected, handshake probabilities, seed) becomes a list of
harness operations (:func:`batch_ops`): load words, start, run to ``hx_done``, read the counters, drain the captures
(every capture and stamp memory in one pass). :func:`run_batch` executes them under cocotb, touching the simulator
once per load or drain word (wide words in the VPI's vector format, tb/vpi.py) and once for the whole run, instead
of every cycle; tb/harness_main.py executes the same list from a C++ main with no Python at all. Both return a
:class:`Capture`: payloads with their cycle stamps, every input item's acceptance cycle, the batch's cycles.

Which to use: transaction-level (this module) for every test that streams data and checks it against
golden or measures cycles — random gaps and backpressure are drawn inside the harness from the seed; the
per-cycle drivers of tb/streams.py for tests that need cycle-by-cycle control of the ports: reset in the
middle of a stream, aborting a source. Both run on the same build (the harness passes the top-level ports
through while ``hx_go`` is low).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hw.harness import PROB_ONE, StreamHarness
from tb.vpi import WidePort

Op = tuple  # ("set", name, int) | ("step", n) | ("run",) | ("get", name) | ("drain", words)


@dataclass
class Batch:
    """``inputs``: packed items per input port (absent ports send nothing); ``expect``: items per output
    port the batch must produce; ``linger``: cycles to keep running after that (an extra output is
    caught); ``timeout``: cycles after which the harness gives up (``Capture.status`` bit 0)."""

    inputs: dict[str, list[int]]
    expect: dict[str, int]
    p_valid: float = 1.0
    p_ready: float = 1.0
    seed: int = 1
    linger: int = 8
    timeout: int = 1_000_000
    stamps: list[str] | None = None  # input ports whose acceptance cycles to drain (None: all)


@dataclass
class Capture:
    """What a batch produced: ``items`` and ``cycles`` (acceptance stamps) per output port, ``accepted``
    (acceptance stamps) per input port (those the batch stamps), ``played`` (items accepted) per input
    port, ``cycles_run`` (the batch's cycles, linger included) and
    ``status`` (bit 0 timed out, bit 1 a capture memory filled up, bit 2 a stream protocol violation on
    the ``violations`` ports)."""

    items: dict[str, list[int]] = field(default_factory=dict)
    cycles: dict[str, list[int]] = field(default_factory=dict)
    accepted: dict[str, list[int]] = field(default_factory=dict)
    played: dict[str, int] = field(default_factory=dict)
    cycles_run: int = 0
    status: int = 0
    violations: list[str] = field(default_factory=list)  # ports whose stream protocol was broken

    def check(self, batch: Batch) -> None:
        """Fails unless the batch ran to completion: no timeout, no overflow, no stream protocol violation
        (hw/harness.py's monitors), every item played."""
        if self.status & 4:
            raise AssertionError(
                f"stream protocol violated on {', '.join(self.violations)}: valid dropped or "
                "payload changed while valid was high and ready low"
            )
        if self.status & 1:
            raise AssertionError(
                f"harness: timed out after {self.cycles_run} cycles (a hang); inputs accepted "
                f"{self.played} of "
                f"{ {p: len(v) for p, v in batch.inputs.items()} }, outputs "
                f"{ {p: len(v) for p, v in self.items.items()} } of {batch.expect}"
            )
        extra = any(len(self.items[p]) > n for p, n in batch.expect.items())
        if self.status & 2 and not extra:  # an extra output is the scoreboard's to name
            raise AssertionError("harness: a capture memory filled up (more outputs than its depth)")
        for port, items in batch.inputs.items():  # every port, stamped or not
            assert self.played[port] == len(items), f"{port}: {self.played[port]} of {len(items)} items accepted"


@dataclass(frozen=True)
class HarnessLayout:
    """The harness's ports and sizes, as the Python side needs them."""

    ins: tuple[str, ...]
    outs: tuple[str, ...]
    widths: dict
    k: int
    depth: int
    sections: tuple[tuple[str, int], ...]  # hx_drain_data's, from bit 0 (StreamHarness.drain_sections)

    @classmethod
    def of(cls, h: StreamHarness) -> HarnessLayout:
        h._MustUse__silence = h.dut._MustUse__silence = True  # read for its sizes, not elaborated here
        return cls(tuple(h.ins), tuple(h.outs), dict(h.widths), h.k, h.depth, tuple(h.drain_sections()))

    @property
    def drain_width(self) -> int:
        return sum(self.k * bits for _, bits in self.sections)

    @property
    def count_bits(self) -> int:
        return self.depth.bit_length()


def _threshold(p: float, what: str) -> int:
    if not 0.0 < p <= 1.0:
        raise ValueError(f"{what}: {p} not allowed; allowed: 0 < p <= 1")
    return round(p * PROB_ONE)


def _packed(values: list[int], bits: int) -> int:
    return sum(v << (i * bits) for i, v in enumerate(values))


def _load_words(port: str, items: list[int], bits: int, k: int) -> list[int]:
    """``items`` (``bits`` each) as load words of ``k`` side by side, item 0 in the low bits: the items' bytes
    made once (one numpy conversion up to 64 bits), then each word read from them (a shifted sum per word
    cost O(k^2) word operations, a sixth of a FpMac batch's Python time); whole bytes per item are sliced,
    other widths go through numpy's bit (un)packing."""
    nbytes = -(-bits // 8)
    try:
        if items and max(items) >> bits:
            raise OverflowError
        if bits <= 64:
            raw = np.array(items, "<u8").reshape(-1, 1).view(np.uint8)[:, :nbytes].tobytes()
        else:
            raw = b"".join(v.to_bytes(nbytes, "little") for v in items)
    except OverflowError:  # negative or too wide: it would spill into its neighbour
        raise ValueError(f"inputs[{port!r}]: an item is not a {bits}-bit unsigned value") from None
    if bits == 8 * nbytes:
        step = k * nbytes
        return [int.from_bytes(raw[i : i + step], "little") for i in range(0, len(raw), step)]
    fields = np.unpackbits(np.frombuffer(raw, np.uint8).reshape(len(items), nbytes), axis=1, bitorder="little")
    return [
        int.from_bytes(np.packbits(fields[i : i + k, :bits].ravel(), bitorder="little").tobytes(), "little")
        for i in range(0, len(items), k)
    ]


def batch_ops(lay: HarnessLayout, b: Batch) -> list[Op]:
    """The operations that load, run and drain ``b``; results come back in :func:`decode`'s order."""
    for port in b.inputs:
        if port not in lay.ins:
            raise ValueError(f"inputs: no input stream {port!r}; the unit has {list(lay.ins)}")
        if len(b.inputs[port]) > lay.depth:
            raise ValueError(f"inputs[{port!r}]: {len(b.inputs[port])} items, the harness holds {lay.depth}")
    for port, n in b.expect.items():
        if port not in lay.outs or not 0 <= n < lay.depth:  # one slot left to catch an extra output
            raise ValueError(f"expect[{port!r}]: allowed ports {list(lay.outs)}, counts 0..{lay.depth - 1}")
    # the pass-through ports idle (Icarus would feed X to the DUT between batches otherwise)
    ops: list[Op] = [("set", f"{p}__valid", 0) for p in lay.ins] + [("set", f"{p}__ready", 0) for p in lay.outs]
    ops.append(("set", "hx_load_en", 1))
    for sel, port in enumerate(lay.ins):
        items, w = b.inputs.get(port, []), lay.widths[port]
        ops.append(("set", "hx_load_sel", sel))
        for addr, word in enumerate(_load_words(port, items, w, lay.k)):
            ops += [("set", "hx_load_addr", addr), ("set", "hx_load_data", word), ("step", 1)]
    cb = lay.count_bits
    ops += [
        ("set", "hx_load_en", 0),
        ("set", "hx_seed", b.seed & 0xFFFFFFFF),
        ("set", "hx_p_valid", _threshold(b.p_valid, "p_valid")),
        ("set", "hx_p_ready", _threshold(b.p_ready, "p_ready")),
        ("set", "hx_counts", _packed([len(b.inputs.get(p, [])) for p in lay.ins], cb)),
        ("set", "hx_expect", _packed([b.expect.get(p, 0) for p in lay.outs], cb)),
        ("set", "hx_linger", b.linger),
        ("set", "hx_timeout", b.timeout),
        ("set", "hx_go", 1),
        ("run",),
        ("set", "hx_go", 0),
        ("get", "hx_cycles"),
        ("get", "hx_status"),
        ("get", "hx_played"),
        ("get", "hx_captured"),
        ("get", "hx_violation"),
    ]

    def words(n: int) -> int:
        return min(-(-n // lay.k), lay.depth // lay.k)

    needed = [words(b.expect.get(p, 0) + 1) for p in lay.outs] + [
        words(len(b.inputs.get(p, [])) if b.stamps is None or p in b.stamps else 0) for p in lay.ins
    ]
    ops.append(("drain", max(needed)))  # one pass reads every memory, side by side
    return ops


def drain_bits(raw: bytes, words: int, width: int) -> np.ndarray:
    """The drain words as one (words, width) array of 0/1, bit 0 first, from their little-endian bytes side
    by side (each word padded to the same length, as tb.vpi.WidePort.read returns them)."""
    if words == 0:
        return np.zeros((0, width), np.uint8)
    rows = np.frombuffer(raw, np.uint8).reshape(words, -1)
    return np.unpackbits(rows, axis=1, bitorder="little")[:, :width]


def _entries(bits: np.ndarray, n: int) -> list[int]:
    """The first ``n`` rows of ``bits`` (entries, one 0/1 per column, bit 0 first) as ints."""
    rows = np.packbits(bits[:n], axis=1, bitorder="little")
    if bits.shape[1] > 64:
        return [int.from_bytes(r.tobytes(), "little") for r in rows]
    packed = np.zeros((len(rows), 8), np.uint8)
    packed[:, : rows.shape[1]] = rows
    return packed.view("<u8").ravel().tolist()


def decode(lay: HarnessLayout, b: Batch, results: list) -> Capture:
    """A :class:`Capture` from the values :func:`batch_ops`' gets (ints) and drain (a :func:`drain_bits`
    array) returned, in order (an input left out of ``b.stamps`` has no acceptance cycles)."""
    cycles_run, status, played, captured, violation, drained = results
    drains, offset = [], 0  # each section's entries, (words * k, bits), in lay.sections' order
    for _, bits in lay.sections:
        drains.append(drained[:, offset : offset + lay.k * bits].reshape(-1, bits))
        offset += lay.k * bits
    cb, cmask = lay.count_bits, (1 << lay.count_bits) - 1
    cap = Capture(
        cycles_run=cycles_run,
        status=status,
        violations=[p for i, p in enumerate(lay.ins + lay.outs) if violation >> i & 1],
    )
    for j, port in enumerate(lay.outs):
        n = min((captured >> (j * cb)) & cmask, b.expect.get(port, 0) + 1)  # one extra shows as a mismatch
        w = lay.widths[port]  # each entry: payload, then its stamp
        cap.items[port], cap.cycles[port] = _entries(drains[j][:, :w], n), _entries(drains[j][:, w:], n)
    for i, port in enumerate(lay.ins):
        cap.played[port] = (played >> (i * cb)) & cmask
        n = cap.played[port] if b.stamps is None or port in b.stamps else 0
        cap.accepted[port] = _entries(drains[len(lay.outs) + i], n)
    return cap


def _read(handle) -> int:
    """A narrow port's bits as an int, straight from the simulator's binary string (cocotb's LogicArray
    path is per-character Python). X or Z bits raise."""
    bits = handle._handle.get_signal_val_binstr()
    try:
        return int(bits, 2)
    except ValueError:
        raise AssertionError(f"{handle._name}: X/Z bits in a harness output: {bits[:80]}") from None


def _write(handle, value: int) -> None:
    """Deposit a narrow port's value now, not at cocotb's next ReadWrite phase: every write here happens on
    a falling edge, half a period before the rising edge that samples it, so the scheduling cocotb adds (a
    ReadWrite round trip per load word, a fifth of a FpMac batch) buys nothing."""
    handle._handle.set_signal_val_int(0, value)  # 0: a deposit, as cocotb's ``.value =``


async def run_ops(dut, ops: list[Op]) -> list:
    """Execute harness operations under cocotb, from a falling edge; returns the gets and drains (drains as
    :func:`drain_bits` arrays)."""
    from cocotb.triggers import FallingEdge

    from tb.streams import run_free

    out: list = []
    handles: dict = {}

    def h(name: str):
        """cocotb's handle for a port up to 32 bits, a tb.vpi.WidePort above."""
        if name not in handles:
            handle = getattr(dut, name)
            handles[name] = handle if len(handle) <= 32 else WidePort(f"{dut._path}.{name}", len(handle))
        return handles[name]

    for op in ops:
        if op[0] == "set":
            port = h(op[1])
            port.write(op[2]) if isinstance(port, WidePort) else _write(port, op[2])
        elif op[0] == "step":
            for _ in range(op[1]):
                await FallingEdge(dut.clk)
        elif op[0] == "run":
            await run_free(dut, dut.hx_done)
        elif op[0] == "get":
            port = h(op[1])
            out.append(port.value() if isinstance(port, WidePort) else _read(port))
        else:
            addr, data, words = h("hx_drain_addr"), h("hx_drain_data"), []
            for a in range(op[1]):
                _write(addr, a)
                await FallingEdge(dut.clk)
                words.append(data.read())
            out.append(drain_bits(data.avals(words).tobytes(), op[1], data.width))
    return out


async def run_batch(dut, lay: HarnessLayout, b: Batch, check: bool = True) -> Capture:
    """Load, run and drain one batch under cocotb; ``check``: fail on a timeout, overflow or unplayed item."""
    cap = decode(lay, b, await run_ops(dut, batch_ops(lay, b)))
    if check:
        cap.check(b)
    return cap
