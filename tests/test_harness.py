"""The transaction-level harness (hw/harness.py, tb/txn.py, tb/harness_main.py): its Python side rejects
bad batches by name, and the no-Python C++ main (Verilator) reproduces transaction-level cocotb (Icarus)
exactly — the same payloads (golden's, bit for bit) and the same cycle stamps — on FpMul under random gaps
and backpressure."""

import ctypes
import dataclasses
import json
import random
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from golden import arith
from golden.fp import get_format
from hw.deca.cycles import UNIT_PE
from hw.harness import port_seed, xorshift32
from tb import harness_main
from tb.arith.cases import SPECS, case
from tb.runner import run
from tb.streams import pack
from tb.txn import Batch, HarnessLayout, batch_ops

SPEC = dataclasses.replace(SPECS[0], sim="verilator")  # fpmul bf16


def test_xorshift_twin_is_marsaglias_generator() -> None:
    x, seen = port_seed(1, 0), set()
    for _ in range(1000):
        x = xorshift32(x)
        assert x != 0
        seen.add(x)
    assert len(seen) == 1000
    assert xorshift32(1) == 270369  # 1 ^ 1<<13 = 8193; ^ >>17 = 8193; ^ <<5 = 8193 ^ 262176


def test_bad_batches_name_the_field() -> None:
    lay = HarnessLayout.of(SPEC.build_component("verilator"))
    with pytest.raises(ValueError, match="p_valid"):
        batch_ops(lay, Batch({"i": [1]}, {"o": 1}, p_valid=0.0))
    with pytest.raises(ValueError, match=r"inputs\['i'\].*holds"):
        batch_ops(lay, Batch({"i": [0] * (lay.depth + 1)}, {"o": 1}))
    with pytest.raises(ValueError, match="no input stream 'x'"):
        batch_ops(lay, Batch({"x": [1]}, {"o": 1}))
    with pytest.raises(ValueError, match=r"expect\['o'\]"):
        batch_ops(lay, Batch({"i": [1]}, {"o": lay.depth}))


@pytest.mark.sim
def test_cxx_main_matches_cocotb_and_golden(tmp_path) -> None:
    rng = random.Random(3)
    c, layout = case(SPEC), SPEC.build_unit().i.payload.shape()
    vecs = [[c.random(rng) for _ in range(300)] for _ in range(3)]
    handshakes = zip(vecs, (1.0, 0.8, 0.5), (1.0, 0.7, 0.3), strict=True)
    batches = [
        Batch({"i": [pack(layout, v) for v in vs]}, {"o": len(vs)}, p, q, seed=11 + i, linger=8, timeout=50_000)
        for i, (vs, p, q) in enumerate(handshakes)
    ]
    path, out = tmp_path / "batches.json", tmp_path / "txn.json"
    path.write_text(json.dumps([dataclasses.asdict(b) for b in batches]))
    # cocotb on the unit's own simulator (Icarus: the build test_tb_arith shares), so two simulators must agree
    run(
        dataclasses.replace(SPECS[0], test_module="tb.bench_tb"),
        extra_env={"MEMBOUND_BENCH_BATCHES": str(path), "MEMBOUND_BENCH_MODE": "txn", "MEMBOUND_BENCH_OUT": str(out)},
    )
    txn = json.loads(out.read_text())
    caps, _, _ = harness_main.run(SPEC, batches)
    bf16 = get_format("bf16")
    for cap, vs, items, stamps in zip(caps, vecs, txn["items"], txn["stamps"], strict=True):
        assert cap.items == items and cap.cycles == stamps  # JSON keys: the port names
        assert cap.items["o"] == [arith.fp_mul(v["a"], v["b"], bf16, bf16) for v in vs]
        assert all(b > a for a, b in zip(cap.cycles["o"], cap.cycles["o"][1:], strict=False))
    # random handshakes stretch a batch: ready at 0.3 takes over 3x the cycles of the ready-always batch
    assert caps[2].cycles_run > 3 * caps[0].cycles_run


def test_fastest_simulator_comes_from_the_bench_measurements(tmp_path) -> None:
    """tb.runner.FASTEST is derived from `make bench`'s RTL measurements in tb/bench.json (build + run per
    unit, or the run alone for `make sim`; Verilator only when 10% faster), not hand-listed."""
    import json

    from tb import runner

    def row(tb: str, sim: str, build: float, run: float | None, stopped: float | None = None) -> dict:
        timing = {"run_s": run} if stopped is None else {"stopped_s": stopped}
        return {"testbench": tb, "simulator": sim, "build_s": build, **timing}

    rows = [
        *(row(f"big-{x}", s, b, r) for x in "ab" for s, b, r in (("icarus", 1, 99), ("verilator", 10, 20))),
        row("close", "icarus", 1, 9),
        row("close", "verilator", 5, 4.5),
        row("small", "icarus", 1, 1),
        row("small", "verilator", 9, 1),
        row("slow", "icarus", 1, None, 90.5),
        row("slow", "verilator", 10, 20),
        row("alone", "icarus", 1, 1),
    ]
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"rtl": {"machine": "today", "results": rows}, "sysmodel": {"results": []}}))
    assert runner.fastest(path) == {"big": "verilator", "slow": "verilator"}
    # make sim's pick (builds cached): the runs alone, a stopped run's lower bound less its build
    assert runner.fastest(path, pick="run") == {"big": "verilator", "close": "verilator", "slow": "verilator"}
    with pytest.raises(ValueError, match="MEMBOUND_PICK: 'warm' not allowed; allowed: build\\+run, run"):
        runner.fastest(path, pick="warm")
    assert runner.fastest(tmp_path / "missing.json") == {}
    assert runner.fastest() == runner.FASTEST
    assert runner.FASTEST[UNIT_PE] == "verilator"  # 62 s vs over 185 s (stopped) in the committed measurements


def _monitor_trace(steps: list[tuple[int, int, int, int]]) -> list[int]:
    """Drive a StreamMonitor with (valid, ready, payload, clear) per cycle in Amaranth's own simulator;
    the violation flag after each edge."""
    from amaranth.sim import Simulator

    from hw.harness import StreamMonitor

    dut, seen = StreamMonitor(8), []

    async def bench(ctx):
        for valid, ready, payload, clear in steps:
            ctx.set(dut.valid, valid)
            ctx.set(dut.ready, ready)
            ctx.set(dut.payload, payload)
            ctx.set(dut.clear, clear)
            await ctx.tick()
            seen.append(ctx.get(dut.violation))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return seen


MONITOR_CASES = [
    (
        "held until the transfer",
        [(1, 0, 5, 0), (1, 0, 5, 0), (1, 1, 5, 0), (0, 0, 9, 0), (1, 1, 7, 0)],
        [0, 0, 0, 0, 0],
    ),
    ("valid dropped before ready", [(1, 0, 5, 0), (0, 0, 5, 0), (0, 0, 5, 0)], [0, 1, 1]),
    ("payload changed while waiting", [(1, 0, 5, 0), (1, 0, 6, 0), (1, 1, 6, 0)], [0, 1, 1]),
    ("a payload may change after a transfer", [(1, 1, 5, 0), (1, 0, 6, 0), (1, 1, 6, 0)], [0, 0, 0]),
    ("clear forgets", [(1, 0, 5, 0), (0, 0, 5, 0), (0, 0, 0, 1), (0, 0, 0, 0)], [0, 1, 0, 0]),
]


@pytest.mark.parametrize("name, steps, want", MONITOR_CASES)
def test_stream_monitor_flags_exactly_the_protocol_breaks(name, steps, want) -> None:
    """hw/harness.py's StreamMonitor, in process: the amaranth.lib.stream rule (valid and payload held from
    valid until ready), sticky until cleared."""
    assert _monitor_trace(steps) == want, name


@pytest.mark.parametrize("name, steps, want", MONITOR_CASES)
def test_per_cycle_monitor_rule_is_the_harness_monitors(name, steps, want) -> None:
    """tb/streams.py's StreamMonitor applies the same rule, sample by sample, as hw/harness.py's (the
    cases above): :func:`tb.streams.protocol_step` over the same (valid, ready, payload) sequences."""
    from tb.streams import protocol_step

    held, last, seen, bad = False, None, [], False
    for valid, ready, payload, clear in steps:
        what, held, last = protocol_step(held, last, bool(valid), bool(ready), str(payload))
        bad = (bad or what is not None) and not clear
        seen.append(int(bad))
    assert seen == want, name


def test_free_clock_wrapper_keeps_every_port_and_adds_hx_free() -> None:
    """tb/clock.py renames Amaranth's top to hx_core and wraps it: the same ports (widths as declared) plus
    hx_free, the core clocked from the generator while hx_free is high — in delta cycles until hx_done on
    Verilator, with delays on Icarus; a design it cannot wrap is named."""
    from tb.clock import DELTA, wrap

    core = (
        "module top(clk, rst, a, y, hx_done);\n  input clk;\n  wire clk;\n  input rst;\n  input [7:0] a;\n"
        "  output [-1:0] y;\n  output hx_done;\n  assign y = a;\nendmodule\n"
    )
    for sim in ("icarus", "verilator"):
        out = wrap(core, sim, 5)
        assert "module hx_core(clk, rst, a, y, hx_done);" in out
        assert "module top(clk, rst, a, y, hx_done, hx_free);" in out
        assert "  input [7:0] a;\n  output [-1:0] y;\n  output hx_done;\n  input hx_free;" in out
        assert ("\n".join(DELTA) in out) == (sim == "verilator")
        assert ("#5 gen = 1'b1; #5 gen = 1'b0;" in out) == (sim == "icarus")
        assert "hx_core core(.clk(hx_free ? gen : clk), .rst(rst), .a(a), .y(y), .hx_done(hx_done));" in out
    with pytest.raises(ValueError, match="no `module top"):
        wrap(core.replace("module top", "module other"), "icarus", 5)
    with pytest.raises(ValueError, match="no hx_free"):
        bad = core.replace("hx_done)", "hx_done, hx_free)").replace("  input rst;", "  input rst;\n  input hx_free;")
        wrap(bad, "icarus", 5)
    with pytest.raises(ValueError, match="needs the harness's hx_done"):
        wrap(core.replace(", hx_done)", ")").replace("  output hx_done;\n", ""), "verilator", 5)


def _register_chains():
    """Three equal pairs of equal +1 registers (4 bits) in a chain and one wider pair (5 bits): 13 modules."""
    from amaranth.hdl import Module
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    class Reg(wiring.Component):
        def __init__(self, width: int) -> None:
            super().__init__({"d": In(width), "q": Out(width)})

        def elaborate(self, platform) -> Module:
            m = Module()
            m.d.sync += self.q.eq(self.d + 1)
            return m

    class Pair(Reg):
        def elaborate(self, platform) -> Module:
            m = Module()
            m.submodules.a, m.submodules.b = a, b = Reg(len(self.d)), Reg(len(self.d))
            m.d.comb += [a.d.eq(self.d), b.d.eq(a.q), self.q.eq(b.q)]
            return m

    class Top(wiring.Component):
        d: In(4)
        q: Out(4)
        d5: In(5)
        q5: Out(5)

        def elaborate(self, platform) -> Module:
            m = Module()
            pairs = [Pair(4), Pair(4), Pair(4), Pair(5)]
            for i, p in enumerate(pairs):
                m.submodules[f"p{i}"] = p
            m.d.comb += [pairs[0].d.eq(self.d), pairs[1].d.eq(pairs[0].q), pairs[2].d.eq(pairs[1].q)]
            m.d.comb += [self.q.eq(pairs[2].q), pairs[3].d.eq(self.d5), self.q5.eq(pairs[3].q)]
            return m

    return Top()


def _instance_paths(v: str, module: str = "top", at: str = "") -> set[str]:
    """Every instance's hierarchical path in the Verilog ``v``, from ``module`` down."""
    body = v[v.index(f"module {module}") :]
    cells = re.findall(r"^\s+(\\\S+ ) +(\S+) \(", body[: body.index("endmodule")], re.M)
    return {p for kind, name in cells for p in (at + name, *_instance_paths(v, kind, at + name + "."))}


def test_identical_modules_merge_and_every_instance_stays(icarus_prints) -> None:
    """tb.runner.merge_identical_modules: three equal pairs of equal registers and one wider pair (13 modules)
    become five (top, a pair and a register of each width); every instance keeps its hierarchical path, and
    the merged Verilog still compiles and simulates the same chain of +1 registers."""
    from amaranth.back import verilog

    from tb.runner import merge_identical_modules

    text = verilog.convert(_register_chains(), name="top", emit_src=False)
    merged = merge_identical_modules(text)
    assert (text.count("\nmodule "), merged.count("\nmodule ")) == (13, 5)
    pairs = {f"p{i}" for i in range(4)}
    assert _instance_paths(merged) == _instance_paths(text) == pairs | {f"{p}.{r}" for p in pairs for r in "ab"}
    assert merge_identical_modules(merged) == merged
    bench = (
        "module bench; reg clk = 0, rst = 1; reg [3:0] d = 3; reg [4:0] d5 = 30; wire [3:0] q; wire [4:0] q5;\n"
        "top dut(.clk(clk), .rst(rst), .d(d), .q(q), .d5(d5), .q5(q5));\n"
        'initial begin #1 rst = 0; repeat (8) begin #1 clk = 1; #1 clk = 0; end $display("%0d %0d", q, q5); end\n'
        "endmodule\n"
    )
    outs = [icarus_prints(name, v + bench) for name, v in (("orig", text), ("merged", merged))]
    assert outs[0] == outs[1] and outs[0].split() == ["9", "0"]  # 3 + 6 registers; 30 + 2 wraps to 0


@given(st.integers(1, 600), st.sampled_from([1, 2, 8, 64]), st.integers(0, 200), st.randoms(use_true_random=False))
def test_drain_entries_split_like_the_shifts(bits, k, n, rng) -> None:
    """The drain's numpy path (tb.txn.drain_bits from the words' bytes, then _entries) gives
    entry i = bits i*w.. of word i // k; tb.txn._load_words (the load words) is the inverse."""
    from tb.txn import _entries, _load_words, drain_bits

    words = [rng.getrandbits(k * bits) for _ in range(-(-n // k))]
    mask = (1 << bits) - 1
    expected = [(words[i // k] >> ((i % k) * bits)) & mask for i in range(n)]
    nbytes = -(-k * bits // 32) * 4  # each word padded to 32-bit elements, as tb.vpi.WidePort reads it
    raw = b"".join(w.to_bytes(nbytes, "little") for w in words)
    matrix = drain_bits(raw, len(words), k * bits).reshape(-1, bits)
    assert _entries(matrix, n) == expected
    loaded = [sum(v << (j * bits) for j, v in enumerate(expected[i : i + k])) for i in range(0, n, k)]
    assert _load_words("i", expected, bits, k) == loaded  # the last word's unused entries zero
    with pytest.raises(ValueError, match=f"inputs\\['i'\\]: an item is not a {bits}-bit unsigned value"):
        _load_words("i", [*expected, 1 << bits], bits, k)
    with pytest.raises(ValueError, match=f"inputs\\['i'\\]: an item is not a {bits}-bit unsigned value"):
        _load_words("i", [*expected, -1], bits, k)


class _FakeVpi:
    """vpi_handle_by_name / vpi_get_value / vpi_put_value over one stored vector (aval, bval per 32 bits)."""

    def __init__(self, vector):
        self.vector = vector

    def vpi_handle_by_name(self, name, _scope):
        return 1 if name == b"top.wide" else None

    def vpi_get_value(self, handle, value):
        value._obj.vector = self.vector.ctypes.data

    def vpi_put_value(self, handle, value, time, flags):
        v = value._obj
        self.vector[:] = np.frombuffer(ctypes.string_at(v.vector, self.vector.nbytes), "<u4").reshape(-1, 2)
        assert (v.format, flags) == (9, 1)  # vpiVectorVal, vpiNoDelay


def test_wide_port_moves_vectors_and_refuses_x(monkeypatch) -> None:
    """tb.vpi.WidePort: a write puts the int's 32-bit words as avals (bvals 0) with vpiNoDelay; reads give
    the value back with the bits above the width cleared, many at once in order; an X/Z bit (a bval) or
    an unknown signal is an error naming it."""
    from tb import vpi

    fake = _FakeVpi(np.zeros((3, 2), "<u4"))
    monkeypatch.setattr(vpi, "_lib", lambda: fake)
    port = vpi.WidePort("top.wide", 70)
    value = (1 << 69) | 0xDEADBEEF_12345678
    port.write(value)
    assert fake.vector.tolist() == [[0x12345678, 0], [0xDEADBEEF, 0], [0x20, 0]]
    fake.vector[2, 0] |= 0xFFFFFF00  # bits above the width, as a simulator may leave them
    assert port.value() == value
    first = port.read()
    fake.vector[0, 0] = 7
    assert port.avals([first, port.read()])[:, 0].tolist() == [0x12345678, 7]
    fake.vector[1, 1] = 4
    with pytest.raises(AssertionError, match="top.wide: X/Z bits"):
        port.value()
    with pytest.raises(ValueError, match="top.narrow: no such signal"):
        vpi.WidePort("top.narrow", 40)


def test_build_key_follows_the_rewrites_and_flags(monkeypatch) -> None:
    """A Verilator flag (a spec's --flatten and big-design C++ optimisation too), the big-design threshold, a
    Verilog rewrite's code or its regular expression changes the build key (a stale model is never reused);
    Icarus's key ignores Verilator's flags. The spec's fields all reach the cocotb process."""
    from tb import runner

    spec = SPECS[0]
    ver, ica = runner.build_key(spec, "verilator"), runner.build_key(spec, "icarus")
    assert ver != ica
    flat = dataclasses.replace(spec, flatten=True)
    assert runner.build_key(flat, "verilator") != ver and runner.build_key(flat, "icarus") == ica
    assert "--flatten" in runner._verilator_args(flat) and "--flatten" not in runner._verilator_args(spec)
    opt = dataclasses.replace(spec, big_opt="-O1")
    assert runner.build_key(opt, "verilator") != ver and runner.build_key(opt, "icarus") == ica
    with pytest.raises(ValueError, match="big_opt: '-O3' not allowed; allowed: -O0, -O1"):
        dataclasses.replace(spec, big_opt="-O3")
    monkeypatch.setenv("MEMBOUND_TB_SPEC", flat.to_env())
    assert runner.TbSpec.from_env() == flat  # the cocotb process sees every field
    monkeypatch.setattr(runner, "VERILATOR_ARGS", [*runner.VERILATOR_ARGS, "-Wno-WIDTH"])
    assert runner.build_key(spec, "verilator") != ver
    assert runner.build_key(spec, "icarus") == ica
    monkeypatch.setattr(runner, "BIG_VERILOG_BYTES", 1)
    assert runner.build_key(spec, "verilator") != ver
    monkeypatch.setattr(runner.inspect, "getsource", lambda f: f"{f.__name__} changed")
    code_changed = runner.build_key(spec, "icarus")
    assert code_changed != ica
    monkeypatch.setattr(runner, "_YOSYS_TRIGGER", re.compile("changed"))  # a rewrite's pattern, code as it was
    assert runner.build_key(spec, "icarus") != code_changed


def test_bench_md_is_rendered_from_the_measurements() -> None:
    """BENCH.md is what tb/bench.py renders from the committed tb/bench.json: edit the data, not the page."""
    import json

    from tb import bench, runner

    assert (runner.ROOT / "BENCH.md").read_text() == bench.render(json.loads(bench.BENCH_JSON.read_text()))
