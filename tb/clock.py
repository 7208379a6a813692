"""The testbenches' clock: its period, and the clock a harness batch runs on inside the simulator.

Every testbench clocks its design at :data:`PERIOD_NS` (cocotb's :class:`cocotb.clock.Clock`, started by
tb.streams.start_clock).

A transaction-level batch (tb/txn.py) runs thousands of cycles with nothing for Python to do. :func:`wrap`
renames the Amaranth design's ``top`` to ``hx_core`` and puts a ``top`` around it with the same ports plus
``hx_free`` (in): while it is high, the design's clock is a generator in the wrapper instead of the ``clk``
port, so the simulator runs on its own between the few moments Python sets or reads a port
(tb.streams.run_free raises it for a batch's run phase). With ``hx_free`` low the wrapper is a wire: every
per-cycle test sees the design exactly as before. Two generators, by simulator:

* Verilator: a clock in delta cycles (:data:`DELTA`). Every edge is a nonblocking assignment, so a rising
  edge sees the previous cycle's logic settled, as with a delayed clock: one cycle unconditionally (the
  batch's start), then cycles until the harness's ``hx_done`` register is high — the whole run phase in
  the time step ``hx_free`` rises in, never returning to cocotb's main loop, which costs about as much per
  time slot as the design's own evaluation (two slots per cycle with a delayed clock: the FpMul harness
  ran its batches at 0.9M cycles/s against 2.1M for the C++ main of tb/harness_main.py; in delta cycles
  1.4 ms per 3,200-cycle batch, the C++ main's rate; `make bench`, 2026-11-27). :data:`VERILATOR_ARGS`
  lifts Verilator's convergence limit (100 iterations) above any batch: a batch ends at ``hx_timeout``
  cycles (hw/harness.py), and one past the limit would stop the simulation with Verilator's convergence
  error, never hang.
* Icarus: ``#`` delays, whole periods, high half first, starting half a period after ``hx_free`` rises
  (under Icarus the delta clock did not finish a batch; not investigated further).

run_free raises ``hx_free`` on a falling edge of ``clk`` with cocotb's clock stopped, waits a period (and, on
Icarus, until ``hx_done`` and half a period more) and drops it on a falling edge, so the rising edges keep
cocotb's phase.
"""

from __future__ import annotations

import re

PERIOD_NS = 10
FREE = "hx_free"
DONE = "hx_done"  # the harness's register that ends a batch (hw/harness.py)
DELTA = (
    "  reg gen, started;",
    "  initial begin gen = 1'b0; started = 1'b0; end",
    f"  always @(gen or {FREE}) if (!{FREE}) started <= 1'b0; else if (gen) gen <= 1'b0;",
    f"    else if (!started || !{DONE}) begin gen <= 1'b1; started <= 1'b1; end",
)
VERILATOR_ARGS = ("--converge-limit", "2000000000")  # a harness build's delta-cycle clock: any batch
_HEADER = re.compile(r"^module top\((?P<ports>[^)]*)\);", re.M)
_DECL = re.compile(r"^  (?P<dir>input|output) (?P<range>\[[-\d]+:\d+\] )?(?P<name>[\w$]+);$", re.M)


def wrap(verilog: str, sim: str | None, half_period_ns: int = PERIOD_NS // 2) -> str:
    """``verilog`` (Amaranth's output, top module ``top``, clock ``clk``) with ``top`` renamed ``hx_core``
    and the free-clock wrapper ``top`` appended: the delta-cycle clock for Verilator, a delayed one (half
    period ``half_period_ns``) for any other simulator."""
    header = _HEADER.search(verilog)
    if header is None:
        raise ValueError("verilog: no `module top(...)` to wrap")
    body = verilog[header.end() : verilog.index("endmodule", header.end())]
    decls = {m["name"]: m for m in _DECL.finditer(body)}
    ports = [p.strip() for p in header["ports"].split(",")]
    if "clk" not in decls or FREE in decls or set(ports) != set(decls):
        raise ValueError("verilog: the top module must declare every port, clk among them, and no hx_free")
    if sim == "verilator" and (DONE not in decls or decls[DONE]["dir"] != "output"):
        raise ValueError(f"verilog: the delta-cycle clock needs the harness's {DONE} output")
    lines = [f"module top({', '.join([*ports, FREE])});"]
    for p in ports:
        d = decls[p]
        lines.append(f"  {d['dir']} {d['range'] or ''}{p};")
    lines.append(f"  input {FREE};")
    if sim == "verilator":
        lines += DELTA
    else:
        lines += [
            "  reg gen;",
            "  initial gen = 1'b0;",
            f"  always begin wait ({FREE}); #{half_period_ns} gen = 1'b1; #{half_period_ns} gen = 1'b0; end",
        ]
    lines += [
        f"  hx_core core({', '.join(f'.{p}({p})' if p != 'clk' else f'.clk({FREE} ? gen : clk)' for p in ports)});",
        "endmodule",
    ]
    return (
        verilog[: header.start()]
        + "module hx_core("
        + verilog[header.start() + len("module top(") :]
        + ("\n".join(lines) + "\n")
    )
