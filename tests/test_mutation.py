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
        run(spec, testcase="test_vectors", extra_env={"MEMBOUND_GOLDEN_MUTANT": mutant, "MEMBOUND_VECTORS": "2000"})


@pytest.mark.sim
@pytest.mark.full
@pytest.mark.parametrize(
    "mutant", __import__("tb.rtl_mutants", fromlist=["RTL_MUTANTS"]).RTL_MUTANTS, ids=lambda m: m.name
)
def test_paper_testbench_catches_its_rtl_mutant(mutant) -> None:
    """One deliberately broken unit per paper with RTL (tb/rtl_mutants.py: a flipped comparison or an
    off-by-one in a counter): the unit's own testbench must fail on it (`make sim`)."""
    from tb.rtl_mutants import run_mutant

    with pytest.raises(AssertionError, match="cocotb tests failed"):
        run_mutant(mutant, extra_env={"MEMBOUND_VECTORS": "2000"})


def test_rtl_mutants_apply_to_the_current_sources() -> None:
    """Every mutant's text occurs once in its unit (a refactor that moves it must update the mutant), one
    mutant per paper with RTL, and the copies import one another, not the originals."""
    from tb.rtl_mutants import RTL_MUTANTS

    assert sorted(m.paper for m in RTL_MUTANTS) == ["deca", "duplex", "hermes", "l3"]
    for m in RTL_MUTANTS:
        spec = m.materialize()
        text = (
            __import__("tb.rtl_mutants", fromlist=["MUTANT_DIR"]).MUTANT_DIR / f"{spec.component.split(':')[0]}.py"
        ).read_text()
        assert "mutant_" in spec.component and (m.via == () or "from mutant_" in text)
