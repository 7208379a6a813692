"""The DECA PE testbench configurations: the paper's {W, L} design points (DECA §8.2)."""

from golden.deca_spec import DESIGN_POINTS
from hw.deca.cycles import UNIT_PE
from tb.runner import TbSpec

PE = "hw.deca.pe:DecaPE"
TEST = "tb.deca.pe_tb"
# the paper's design (best) and the under-provisioned one; the over-provisioned {64,64} is synthesized only
SPECS = [
    TbSpec(UNIT_PE, PE, {"w": w, "lanes": lanes}, TEST, harness=True)
    for w, lanes in (DESIGN_POINTS["{32,8} best"], DESIGN_POINTS["{8,4} under"])
]
