"""hw/share.py: repeated datapaths built once per conversion and instanced; inline outside a library.

The instanced designs' outputs are checked bit for bit by every cocotb testbench (tb.runner converts
through a library); the Amaranth-simulator tests (tests/test_subcomponents.py) run the inline build.
"""

from __future__ import annotations

import re

import pytest
from amaranth.back import rtlil, verilog
from amaranth.hdl import Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw import share
from hw.arith.addtree import AddTree
from hw.arith.fpadd import FpAdd
from tb.runner import flat_bytes


def _modules(text: str) -> list[str]:
    return re.findall(r"^module \\(\S+)$", text, re.M)


def test_outside_a_library_datapaths_are_built_inline():
    text = rtlil.convert(AddTree("fp16", 4), name="top", emit_src=False)
    assert _modules(text) == ["top"]
    assert "shared" not in text


def test_a_tree_instances_one_adder_module():
    with share.library() as lib:
        design = rtlil.convert(AddTree("fp16", 8), name="top", emit_src=False)
    assert len(lib) == 1
    assert _modules(lib.rtlil()) == ["shared0_fp_add"]
    assert design.count("cell \\shared0_fp_add ") == 7  # one per adder of the 8-input tree
    assert "attribute \\top" not in lib.rtlil()  # only the design's top is marked top
    out = verilog._convert_rtlil_text(design + lib.rtlil())
    header = re.search(r"^module shared0_fp_add\((.*)\);", out, re.M)
    assert header is not None and set(header.group(1).split(", ")) == {"a", "b", "en", "clk", "rst", "y"}


def _shared_verilog(component: wiring.Component) -> str:
    with share.library() as lib:
        design = rtlil.convert(component, name="top", emit_src=False)
    return verilog._convert_rtlil_text(design + lib.rtlil())


def test_instanced_and_inline_builds_simulate_alike(icarus_prints):
    """An 8-input FP16 adder tree, inline and instanced, on Icarus: random operands (every class of FP16
    pattern turns up among 300 random words) under random output stalls, every output cycle compared."""
    inline = verilog.convert(AddTree("fp16", 8), name="top", emit_src=False)
    instanced = _shared_verilog(AddTree("fp16", 8))
    assert "shared0_fp_add" in instanced and "shared" not in inline
    bench = (
        "module bench; reg clk = 0, rst = 1, v = 0, r = 0; reg [127:0] x = 0; wire [15:0] y; wire ov, ir;\n"
        "integer seed = 7, i;\n"
        "top dut(.clk(clk), .rst(rst), .i__valid(v), .i__payload(x), .i__ready(ir), .o__valid(ov), "
        ".o__ready(r), .o__payload(y));\n"
        "initial begin #1 rst = 0; for (i = 0; i < 300; i = i + 1) begin\n"
        "  v = $random(seed); r = $random(seed); x = {$random(seed), $random(seed), $random(seed), $random(seed)};\n"
        '  #1 clk = 1; #1 clk = 0; $display("%b %b %h", ir, ov, y); end end\n'
        "endmodule\n"
    )
    outs = [icarus_prints(name, v + bench) for name, v in (("inline", inline), ("instanced", instanced))]
    assert outs[0] == outs[1]
    assert sum(line.split()[1] == "1" for line in outs[0].splitlines()) > 100  # the tree did produce results


def test_flat_size_counts_every_instance():
    """tb.runner.flat_bytes: what Verilator compiles is the design with each instance's module text."""
    text = _shared_verilog(AddTree("fp16", 8))
    chunks = re.split(r"(?<=^endmodule\n)", text, flags=re.M)
    adder = next(c for c in chunks if "\nmodule shared0_fp_add(" in c)
    assert flat_bytes(text) == len(text) + 6 * len(adder)  # the top's text once, the adder's 7 times


def test_distinct_formats_get_distinct_modules_and_components_share_too():
    with share.library() as lib:
        m = Module()
        m.submodules.a = share.shared(FpAdd, "fp32")
        m.submodules.b = share.shared(FpAdd, "fp32")
        m.submodules.c = share.shared(FpAdd, "fp16")
        design = rtlil.convert(m, name="top", ports=[], emit_src=False)
    # each FpAdd's adder is named after it and written before it (it was built while converting it)
    assert _modules(lib.rtlil()) == ["shared1_fp_add", "shared0_FpAdd", "shared3_fp_add", "shared2_FpAdd"]
    assert design.count("cell \\shared0_FpAdd ") == 2 and design.count("cell \\shared2_FpAdd ") == 1
    # a stand-in has the component's ports: {a, b} of the format in, the sum out
    assert [len(Value.cast(m.submodules[k].i.payload)) for k in "ac"] == [64, 32]
    assert [len(m.submodules[k].o.payload) for k in "ac"] == [32, 16]


class _TwoClocks(wiring.Component):
    def __init__(self):
        super().__init__({"x": In(4), "y": Out(4)})

    def elaborate(self, platform) -> Module:
        m = Module()
        r = Signal(4)
        m.d.fast += r.eq(self.x)
        m.d.comb += self.y.eq(r)
        return m


def test_a_datapath_outside_the_sync_domain_is_refused():
    with share.library(), pytest.raises(ValueError, match=r"_TwoClocks: .*sync domain only.*fast_clk"):
        share.shared(_TwoClocks)


def test_a_shared_op_must_take_a_name():
    def op(m, en, a):
        return a

    with pytest.raises(TypeError, match="takes `name`"):
        share.shared_op(op)
