"""The testbenches' clock: its period, and a generator inside the simulator for harness builds.

Every testbench clocks its design at :data:`PERIOD_NS` (cocotb's :class:`cocotb.clock.Clock`, started by
tb.streams.start_clock).

A transaction-level batch (tb/txn.py) runs thousands of cycles with nothing for Python to do. Driven
from cocotb's :class:`cocotb.clock.Clock`, every half period still wakes Python and, on Verilator, goes
through cocotb's main loop with its value-change settling (the FpMul harness ran 7.9x slower than the C++
main of tb/harness_main.py for that reason, `make bench` on 2026-11-26). :func:`wrap` renames the
Amaranth design's ``top`` to ``hx_core`` and puts a ``top`` around it with the same ports plus ``hx_free``
(in): while it is high, the design's clock is a generator in the wrapper (``#`` delays: Verilator builds
with ``--timing``) instead of the ``clk`` port, so the simulator runs on its own between the few
moments Python sets or reads a port; tb.streams.run_free raises it for a batch's run phase
(tb.txn.run_ops; with it raised for the loads and drains too, `make bench` measured FpMul slower, 119-202k
against 288-350k cycles/s). With ``hx_free`` low the wrapper is a wire: every per-cycle test sees the
design exactly as before.

The generator always completes whole periods, high half first, starting half a period after ``hx_free``
rises; run_free raises it on a falling edge of ``clk`` with cocotb's clock stopped and drops it on the
falling edge after the batch is done, so the rising edges keep cocotb's phase.
"""

from __future__ import annotations

import re

PERIOD_NS = 10
FREE = "hx_free"
_HEADER = re.compile(r"^module top\((?P<ports>[^)]*)\);", re.M)
_DECL = re.compile(r"^  (?P<dir>input|output) (?P<range>\[[-\d]+:\d+\] )?(?P<name>[\w$]+);$", re.M)


def wrap(verilog: str, half_period_ns: int = PERIOD_NS // 2) -> str:
    """``verilog`` (Amaranth's output, top module ``top``, clock ``clk``) with ``top`` renamed ``hx_core``
    and the free-clock wrapper ``top`` appended."""
    header = _HEADER.search(verilog)
    if header is None:
        raise ValueError("verilog: no `module top(...)` to wrap")
    body = verilog[header.end() : verilog.index("endmodule", header.end())]
    decls = {m["name"]: m for m in _DECL.finditer(body)}
    ports = [p.strip() for p in header["ports"].split(",")]
    if "clk" not in decls or FREE in decls or set(ports) != set(decls):
        raise ValueError("verilog: the top module must declare every port, clk among them, and no hx_free")
    lines = [f"module top({', '.join([*ports, FREE])});"]
    for p in ports:
        d = decls[p]
        lines.append(f"  {d['dir']} {d['range'] or ''}{p};")
    lines += [
        f"  input {FREE};",
        "  reg gen;",
        "  initial gen = 1'b0;",
        f"  always begin wait ({FREE}); #{half_period_ns} gen = 1'b1; #{half_period_ns} gen = 1'b0; end",
        f"  hx_core core({', '.join(f'.{p}({p})' if p != 'clk' else f'.clk({FREE} ? gen : clk)' for p in ports)});",
        "endmodule",
    ]
    return (
        verilog[: header.start()]
        + "module hx_core("
        + verilog[header.start() + len("module top(") :]
        + ("\n".join(lines) + "\n")
    )
