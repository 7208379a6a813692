"""The serving engine's stage-cost memo (engine.StageCosts): each system that declares its stage time a pure
function of the shape gets back the very numbers it computes, and a memoized run is the unmemoized one."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sysmodel import systems
from sysmodel.cost.models import StageShape
from sysmodel.engines import engine
from sysmodel.engines.workload import make_trace

PURE = [name for name in systems.entries() if getattr(systems.build(name, "llama2-7b"), "pure_stage_times", False)]


def test_the_baselines_and_four_papers_declare_pure_stage_times() -> None:
    assert {"gpu", "cpu", "l3", "deca", "hermes", "flash"} <= set(PURE)
    assert "duplex" not in PURE  # it draws expert routing per stage


@pytest.mark.parametrize("name", PURE)
def test_memo_returns_the_systems_own_stage_times(name: str) -> None:
    """Decode stages priced in a batch, then again (from the memo), equal each stage priced alone: the cost
    functions are elementwise, so an entry does not depend on what it was priced with."""
    system = systems.build(name, "llama2-7b")
    reqs = min(4, getattr(system, "max_batch", 4))
    ctx = np.array([100, 7_000, 7_004, 12_345]) * reqs
    costs = engine.StageCosts(system)
    alone = [float(np.asarray(system.stage_times(StageShape(reqs, reqs, int(c)))).reshape(-1)[0]) for c in ctx]
    assert costs.decode(reqs, ctx[:2]).tolist() == alone[:2]
    assert costs.decode(reqs, ctx).tolist() == alone  # two from the memo, two priced now
    mixed = StageShape(
        tokens=reqs + 300, decode_reqs=reqs, decode_ctx=int(ctx[1]), prefill_pairs=45150.0, prefill_kv=300
    )
    first = float(np.asarray(system.stage_times(mixed)).reshape(-1)[0])
    assert costs.stage(mixed) == first and costs.stage(mixed) == first
    assert len(costs.singles) == 1


def test_a_memoized_run_is_the_unmemoized_one(monkeypatch) -> None:
    trace = make_trace("gaussian", 400, 1, qps=20.0, prompt=512, output=64)
    system = systems.build("gpu", "llama2-7b")
    memo = engine.simulate(trace, system)
    monkeypatch.setattr(type(system), "pure_stage_times", False)
    plain = engine.simulate(trace, system)
    for f in dataclasses.fields(memo):
        a, b = getattr(memo, f.name), getattr(plain, f.name)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=f.name)
    assert memo.summary() == plain.summary()


def test_the_memo_starts_over_past_its_size(monkeypatch) -> None:
    monkeypatch.setattr(engine, "MEMO_CELLS", 64)
    system = systems.build("gpu", "llama2-7b")
    costs = engine.StageCosts(system)
    before = costs.decode(2, np.array([10, 12]))
    costs.decode(2, np.array([1_000]))  # a table of 1,001+ cells: over the bound, everything else dropped
    assert costs.cells <= 2 * 1_001 and list(costs.decodes) == [2]
    assert costs.decode(2, np.array([10, 12])).tolist() == before.tolist()
