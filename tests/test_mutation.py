"""The testbenches bite: against a golden model with the wrong rounding (toward zero) or with lost
subnormals (flush to zero), the unchanged RTL must fail."""

import pytest

from tb.arith.cases import SPECS
from tb.runner import run

TARGETS = [s for s in SPECS if s.tag in ("fpmul-fmt_inbf16", "fpadd-fmtfp32", "fpmac-fmt_accfp32-fmt_inbf16")]


def test_targets_exist() -> None:
    assert len(TARGETS) == 3


@pytest.mark.sim
@pytest.mark.parametrize("mutant", ["rtz", "ftz"])
@pytest.mark.parametrize("spec", TARGETS, ids=lambda s: s.tag)
def test_rtl_fails_against_mutant_golden(spec, mutant: str) -> None:
    with pytest.raises(AssertionError, match="cocotb tests failed: .*mismatches of"):
        run(spec, testcase="test_vectors",
            extra_env={"MEMBOUND_GOLDEN_MUTANT": mutant, "MEMBOUND_VECTORS": "2000"})
