"""Formal proofs (`make formal`, marker ``formal``): every property module passes, the 8-bit FP units equal
their golden rounding on every input, and every RTL and golden mutant fails at least one of them. `make test`
runs the ones not marked ``formal_slow`` (well under a minute)."""

from __future__ import annotations

import dataclasses

import pytest

from tb.arith.cases import SPECS as ARITH_SPECS
from tb.cli import formal_cell
from tb.formal import abc, sby
from tb.formal.abstract import elaborate, free_arithmetic
from tb.formal.equiv import EQUIVS, mismatches
from tb.formal.mutate import mutated
from tb.formal.registry import all_props
from tb.l3.cases import SPECS as L3_SPECS
from tb.mutants import MUTANTS
from tb.rtl_mutants import RTL_MUTANTS, RtlMutant

PROPS = {p.name: p for p in all_props()}
FAST_EQUIV = "equiv-fprecip-e5m2"  # 256 inputs: under a second
# which property module is to catch each RTL mutant (tb/rtl_mutants.py)
CATCHES = {
    "deca-prefix-sum": "expand-equiv-w8",
    "hermes-gemv-lane-count": "dot-path-data",
    "l3-softmax-chunk": "collector-data-chunk4",
    "duplex-gemm-input": "gemm-routing",
}
# a stream-protocol bug the random testbenches meet only under backpressure: the stream contract must catch it
PIPELINE_MUTANT = RtlMutant(
    "pipeline-ignores-ready",
    "arith",
    next(t for t in ARITH_SPECS if t.tag == "fpmul-fmt_inbf16"),
    "self.en.eq(~o_stream.valid | o_stream.ready)",
    "self.en.eq(1)",
    "stall-all pipelines advance under backpressure (hw/pipeline.py): a held output changes before ready",
    module="hw.pipeline",
)
CATCHES[PIPELINE_MUTANT.name] = "contract-fpmul-fmt_inbf16"


def _marks(slow: bool) -> list:
    return [pytest.mark.formal, *([pytest.mark.formal_slow] if slow else [])]


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(p.slow)) for n, p in PROPS.items()])
def test_property(name: str) -> None:
    result = sby.run(PROPS[name])
    print(f"{name}: {result.summary}; cover {result.cover}")
    assert result.passed, f"{name}: {result.summary}; counterexample {result.trace}"
    assert result.cover != "unreachable", f"{name}: no output beat is reachable: the assumptions are vacuous"


@pytest.mark.parametrize("spec", [pytest.param(e, marks=_marks(e.name != FAST_EQUIV), id=e.name) for e in EQUIVS])
def test_fp_equivalence(spec) -> None:
    assert mismatches(spec) == [], f"{spec.name}: (input, unit, golden) pairs that differ"


@pytest.mark.formal
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_golden_mutant_fails_equivalence(name: str, monkeypatch) -> None:
    """A golden rounding mutant (tb/mutants.py) must disagree with the unit somewhere."""
    import golden.arith

    monkeypatch.setattr(golden.arith, "round_pack", MUTANTS[name])
    assert mismatches(next(e for e in EQUIVS if e.name == FAST_EQUIV)), f"golden mutant {name} not caught"


@pytest.mark.parametrize(
    "mutant",
    [pytest.param(m, marks=_marks(PROPS[CATCHES[m.name]].slow)) for m in (*RTL_MUTANTS, PIPELINE_MUTANT)],
    ids=lambda m: m.name,
)
def test_rtl_mutant_fails_a_proof(mutant) -> None:
    """The counterexample is kept under build/formal/<property>-mutant-<name>/ (reported as unit "mutants")."""
    spec = PROPS[CATCHES[mutant.name]]
    with mutated(mutant):
        result = sby.run(dataclasses.replace(spec, name=f"{spec.name}-mutant-{mutant.name}", unit="mutants"))
    assert not result.passed, f"mutant {mutant.name} passed {spec.name} ({result.summary})"
    assert result.trace is not None and result.trace.exists(), f"mutant {mutant.name}: no counterexample trace"
    print(f"mutant {mutant.name} fails {spec.name}: counterexample {result.trace}")


@pytest.mark.formal
@pytest.mark.formal_slow
def test_abc_engine_fails_a_mutant_with_a_trace() -> None:
    """ABC's bmc3 through tb/formal/abc.py: the L3 chunk mutant's counterexample, as a VCD, like smtbmc's."""
    mutant = next(m for m in RTL_MUTANTS if m.name == "l3-softmax-chunk")
    spec = dataclasses.replace(PROPS[CATCHES[mutant.name]], name="abc-mutant-l3-softmax-chunk", unit="mutants")
    with mutated(mutant):
        result = sby.run(dataclasses.replace(spec, engine="abc"))
    assert not result.passed and result.summary == "FAIL", result.summary
    assert result.trace is not None and result.trace.exists(), "bmc3: no counterexample trace"


def test_abc_verdicts(tmp_path) -> None:
    """ABC's status file read as SymbiYosys's verdict lines, and a time-limited bmc3 as the frames it cleared."""
    assert abc.verdict("snl_SAT 5 bmc3", 20) == "Output 0 of miter design_aiger was asserted in frame 5."
    assert abc.verdict("snl_UNK 19 bmc3", 20) == "No output asserted in 20 frames."
    stopped = abc.verdict("snl_UNK 11 bmc3", 20)
    assert abc.TIME_LIMIT in stopped and abc.verdict("", 20).startswith("Error")
    (tmp_path / "logfile.txt").write_text(f"SBY engine_0: {stopped}\n")
    assert sby.reached_depth(tmp_path) == 12
    with pytest.raises(ValueError, match="engine"):
        dataclasses.replace(PROPS["gemm-routing"], engine="abc", mode="prove")
    with pytest.raises(ValueError, match="rewrite"):
        dataclasses.replace(PROPS["gemm-routing"], rewrite=True)


@pytest.mark.parametrize("functional", [True, False])
def test_free_arithmetic_replaces_the_operators_while_active(functional: bool) -> None:
    """Every FP operator a unit elaborates becomes one free input (the chunk-4 softmax unit: 3 comparators,
    4 subtracts, 4 exps and 3 adds of ChunkStats, 8 of the running fold, 4 of Normalize, the reciprocal);
    the originals are back afterwards, also where a unit imported one by name."""
    from hw.arith import fpadd
    from hw.l3 import softmax_unit

    before = (fpadd.fp_add, softmax_unit.fp_max)
    with free_arithmetic(functional) as free:
        assert fpadd.fp_add is not before[0] and softmax_unit.fp_max is not before[1]
        elaborate(softmax_unit.SoftmaxUnit(chunk=4, max_tokens=64))
    assert len(free) == 3 + 4 + 4 + 3 + 8 + 4 + 1
    assert (fpadd.fp_add, softmax_unit.fp_max) == before


def test_formal_column_names_abstract_contracts() -> None:
    spec = next(s for s in L3_SPECS if s.unit == "l3_rank")
    bounded = {"unit": spec.unit, "passed": True, "cover": "timeout", "summary": "bounded at depth 6 (40 s budget)"}
    assert formal_cell([{"name": f"contract-{spec.tag}-abstract", **bounded}], spec) == "bounded d=6 abstract"
    assert formal_cell([{"name": f"contract-{spec.tag}", **bounded}], spec) == "bounded d=6"
    assert formal_cell([], spec) == "not covered"
    sized = {**bounded, "name": f"contract-{spec.tag}-abstract", "size": "max_tokens=4"}
    assert formal_cell([sized], spec) == "bounded d=6 abstract at max_tokens=4"
    composed = {**sized, "name": f"contract-{spec.tag}-composed", "size": "max_tokens=4,fp_latency=1"}
    composed["summary"] = "bounded at depth 100 (420 s budget)"
    assert formal_cell([composed, sized], spec) == (
        "bounded d=6 abstract at max_tokens=4; bounded d=100 composed at max_tokens=4,fp_latency=1"
    )


def test_core_contract_replaces_its_gemv_unit_by_the_gemv_contract() -> None:
    """The core's composed check (tb/hermes/hermes_props.py) builds no GEMV unit: the stand-in's ready, valid
    and payload are free inputs of the model checker (under the GEMV contract's assumptions)."""
    from hw.hermes import gemv
    from tb.hermes.hermes_props import FORMAL_GEMV

    spec = next(p for n, p in PROPS.items() if n.startswith("contract-hermes_core"))
    _top, port_values = spec.build()
    free = [len(v) for v in port_values if getattr(v, "name", "") == "guaranteed_free"]
    assert free == [1, gemv.out_layout(FORMAL_GEMV).size, 1]  # i.ready, o.payload, o.valid


def test_rank_contract_replaces_its_softmax_unit_by_its_guarantees() -> None:
    """The rank's composed check (tb/l3/rank_props.py) builds no softmax unit: the stand-in's ready, payload
    and valid are free inputs (under what ``su-in-rank`` asserts), and the FP operators left are the adder
    unit's 7; the softmax unit's own check runs at the rank's instance."""
    from hw.l3 import softmax_unit
    from tb.l3.rank_props import FP_LATENCY, SU_PARAMS

    spec = next(p for n, p in PROPS.items() if n.startswith("contract-l3_rank") and n.endswith("-composed"))
    _top, port_values = spec.build()
    free = [len(v) for v in port_values if getattr(v, "name", "") == "guaranteed_free"]
    assert free == [1, softmax_unit.PROB.size, 1]
    assert sum(getattr(v, "name", "").startswith("au") for v in port_values) == 7
    # the rank's chunk: the testbench's; both checks at the instance's FP latency
    assert PROPS["su-in-rank"].size == f"max_tokens={SU_PARAMS['max_tokens']},fp_latency={FP_LATENCY}"
    assert spec.size.endswith(f",fp_latency={FP_LATENCY}")


def _rank_head_cycles(latency: int | None, n: int) -> int:
    """A head of ``n`` tokens through the rank at the composed check's size with free FP values of ``latency``
    stages (Amaranth's simulator; the free values read 0): first K beat accepted to last output accepted."""
    import numpy as np
    from amaranth.sim import Simulator

    from golden import l3
    from hw.l3.rank import Rank
    from tb.l3.rank_props import GEOMETRY, RANK_SIZE

    items = l3.rank_items(*l3.random_head(np.random.default_rng(n), n, GEOMETRY))
    with free_arithmetic(False, latency):
        dut = Rank(GEOMETRY.banks, GEOMETRY.d_head, **RANK_SIZE)
        sim = Simulator(elaborate(dut))
    sim.add_clock(1e-8)
    took: list[int] = []

    async def bench(ctx) -> None:
        ctx.set(dut.o.ready, 1)
        cycle = 0
        for op, data, last in items:
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload, {"op": int(op), "data": data, "last": last})
            while not ctx.get(dut.i.ready):
                await ctx.tick()
                cycle += 1
            took.append(cycle)
            await ctx.tick()
            cycle += 1
        ctx.set(dut.i.valid, 0)
        while not (ctx.get(dut.o.valid) and ctx.get(dut.o.payload.last)):
            await ctx.tick()
            cycle += 1
        took.append(cycle)
        assert ctx.get(dut.o.payload.error.as_value()) == 0, "the head ran (no error item)"

    sim.add_testbench(bench)
    sim.run()
    return took[-1] - took[0]


@pytest.mark.parametrize("latency", [None, 1])
def test_fp_latency_moves_the_rank_and_its_cycle_model_together(latency: int | None) -> None:
    """tb.formal.abstract.fp_latency: the rank built with FP pipelines of ``latency`` stages runs a head in the
    cycles its cycle model (hw.l3.cycles.head_cycles) counts for that instance (119 / 95 for one token), so the
    composed check's depths (tb/l3/rank_props.py) are the instance's; the latencies are back afterwards."""
    from hw.arith import cycles, fpadd
    from hw.l3.cycles import head_cycles
    from tb.formal.abstract import fp_latency
    from tb.l3.rank_props import GEOMETRY, MAX_TOKENS

    with fp_latency(latency):
        want = {n: head_cycles(n, GEOMETRY, MAX_TOKENS) for n in (1, MAX_TOKENS)}
    assert want[1] == {None: 119, 1: 95}[latency]
    assert {n: _rank_head_cycles(latency, n) for n in want} == want
    assert (cycles.FPADD, fpadd.LATENCY) == (2, 2)
    with pytest.raises(ValueError, match="latency"), fp_latency(0):
        pass
