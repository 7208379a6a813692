"""The DECA PE testbench configurations: the paper's {W, L} design points (DECA §8.2)."""

from tb.runner import TbSpec

PE = "hw.deca.pe:DecaPE"
TEST = "tb.deca.pe_tb"
SPECS = [
    TbSpec("deca_pe", PE, {"w": 32, "lanes": 8}, TEST, harness=True),  # the paper's design (best)
    TbSpec("deca_pe", PE, {"w": 8, "lanes": 4}, TEST, harness=True),  # under-provisioned
]
