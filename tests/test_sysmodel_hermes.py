"""Hermes's system model: the workload generator's statistics, trace files, the ILP and its decomposition,
the online adjustment, the window remap, the predictor and the token timing (sysmodel/designs/hermes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hw.hermes.cycles import UNIT_ACTIVATION
from sysmodel.cost.models import ModelConfig
from sysmodel.designs.hermes import model as hm
from sysmodel.designs.hermes import paper
from sysmodel.designs.hermes import scheduler as sch
from sysmodel.designs.hermes import workload as wl

TINY = ModelConfig(
    "tiny",
    hidden=256,
    intermediate=1024,
    layers=8,
    heads=4,
    kv_heads=4,
    vocab=1000,
    activation="relu",
    tied_embeddings=True,
    ffn_matrices=2,
)


@pytest.fixture(scope="module")
def trace() -> wl.Trace:
    return wl.generate({"attn": TINY.hidden, "mlp": 4096}, 2, 192, 64, 2, seed=5)


def test_generated_statistics_match_the_paper(trace):
    st_ = wl.ActivationStats()
    a = trace.acts[(1, "mlp")][0]  # one sequence: its own hot set does the work (workload docstring)
    assert abs(a.mean() - (1 - st_.sparsity)) < 0.02
    f = np.sort(a.mean(axis=0))[::-1]
    assert abs(f[: len(f) // 5].sum() / f.sum() - st_.hot_work) < 0.03
    seq = trace.acts[(1, "mlp")][0]
    sim = ((seq[1:] & seq[:-1]).sum(1) / seq[1:].sum(1)).mean()
    assert abs(sim - st_.adjacent_similarity) < 0.02


def test_generator_is_seeded():
    a = wl.generate({"attn": 16, "mlp": 32}, 2, 10, 4, 1, seed=3)
    b = wl.generate({"attn": 16, "mlp": 32}, 2, 10, 4, 1, seed=3)
    assert all(np.array_equal(a.acts[k], b.acts[k]) for k in a.acts)


@pytest.mark.parametrize("field, value", [("sparsity", 1.0), ("hot_neurons", 0.0), ("layer_coupling", -0.1)])
def test_stats_out_of_range_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        wl.ActivationStats(**{field: value})


def test_trace_file_round_trip(tmp_path, trace):
    back = wl.load_trace(trace.save(tmp_path / "t.npz"))
    assert back.prefill == trace.prefill and set(back.acts) == set(trace.acts)
    assert all(np.array_equal(back.acts[k], trace.acts[k]) for k in trace.acts)
    assert all(np.array_equal(back.parents[k], trace.parents[k]) for k in trace.parents)


def test_trace_file_without_parents_profiles_them(tmp_path):
    prev = np.random.default_rng(0).random((1, 40, 12)) < 0.3
    cur = np.zeros((1, 40, 12), bool)
    cur[..., 5] = prev[..., 2]  # neuron 5 fires exactly when neuron 2 of the layer below did
    np.savez(tmp_path / "t.npz", prefill=30, layer0_attn=prev, layer1_attn=cur, layer0_mlp=prev, layer1_mlp=cur)
    tr = wl.load_trace(tmp_path / "t.npz")
    assert tr.parents[(1, "mlp")][5, 0] == 2


@pytest.mark.parametrize(
    "arrays, match",
    [
        ({"prefill": 3}, "no layer"),
        ({"layer0_attn": np.zeros((1, 8, 4), bool), "layer0_mlp": np.zeros((1, 8, 4), bool)}, "prefill"),
        ({"prefill": 3, "layer0_attn": np.zeros((1, 8, 4)), "layer0_mlp": np.zeros((1, 8, 4), bool)}, "layer0_attn"),
        ({"prefill": 3, "layer0_attn": np.zeros((1, 8, 4), bool), "layer0_mlp": np.zeros((1, 9, 4), bool)}, "differ"),
        (
            {"prefill": 8, "layer0_attn": np.zeros((1, 8, 4), bool), "layer0_mlp": np.zeros((1, 8, 4), bool)},
            "prefill 8",
        ),
        (
            {
                "prefill": 3,
                "layer0_attn": np.zeros((1, 8, 4), bool),
                "layer0_mlp": np.zeros((1, 8, 4), bool),
                "layer1_mlp": np.zeros((1, 8, 4), bool),
            },
            "attn",
        ),
    ],
)
def test_bad_trace_files_name_the_field(tmp_path, arrays, match):
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=match):
        wl.load_trace(tmp_path / "bad.npz")


def test_missing_trace_file_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        wl.load_trace(tmp_path / "none.npz")


def _toy(seed: int, layers: int = 3, n: int = 10):
    rng = np.random.default_rng(seed)
    f = [rng.random(n) for _ in range(layers)]
    c = [sch.Costs(1.0, 6.0, 1.0, 0.4) for _ in f]
    return f, c


def _objective(f, c, maps, dimms):
    return sum(sch.layer_time(cc, ff, p, dimms) for ff, cc, p in zip(f, c, maps, strict=True))


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_exact_ilp_is_no_worse_than_decomposed_or_greedy(seed):
    f, c = _toy(seed)
    exact, optimal = sch.exact_ilp(f, c, 9.0, 1e9, 2)
    assert optimal
    assert all(p.on_gpu.sum() <= 9 for p in exact[:1])
    e = _objective(f, c, exact, 2)
    assert e <= _objective(f, c, sch.decomposed_ilp(f, c, 9.0, 2), 2) + 1e-9
    assert e <= _objective(f, c, sch.greedy(f, c, 9.0, 2), 2) + 1e-9


def test_ilp_places_every_neuron_once_within_capacity():
    f, c = _toy(1)
    maps, _ = sch.exact_ilp(f, c, 10.0, 12.0, 2)  # 30 neurons: 10 + 2 x 12 places
    assert sum(int(p.on_gpu.sum()) for p in maps) <= 10
    for j in range(2):
        assert sum(int(((p.dimm == j) & ~p.on_gpu).sum()) for p in maps) <= 12


def test_infeasible_ilp_names_the_capacities():
    f, c = _toy(2)
    with pytest.raises(sch.InfeasibleMapping, match="GPU"):
        sch.exact_ilp(f, c, 1.0, 2.0, 2)  # 30 neurons, room for 1 + 2 x 2


def test_decomposed_keeps_the_most_frequent_on_the_gpu():
    f, c = _toy(3)
    for ff, p in zip(f, sch.decomposed_ilp(f, c, 9.0, 2), strict=True):
        if p.on_gpu.any() and (~p.on_gpu).any():
            assert ff[p.on_gpu].min() >= ff[~p.on_gpu].max()


def test_adjust_swaps_hot_in_and_coldest_out_within_budget():
    p = sch.Placement(np.array([True, True, False, False, False]), np.zeros(5, np.int64))
    state = np.array([3, 12, 15, 11, 2], np.uint8)
    assert sch.adjust(p, state, budget=1) == 1
    assert p.on_gpu.tolist() == [False, True, True, False, False]  # 15 replaced 3
    assert sch.adjust(p, state, budget=5) == 0  # 11 does not replace 12: the victim is not lower


def test_window_remap_narrows_the_gap_and_respects_the_cap():
    p = sch.Placement(np.zeros(6, bool), np.array([0, 0, 0, 0, 1, 1]))
    act = np.array([5, 4, 3, 2, 1, 0], float)
    before = np.bincount(p.dimm, weights=act, minlength=2)
    moved = sch.window_remap(p, act, 2)
    after = np.bincount(p.dimm, weights=act, minlength=2)
    assert moved >= 1 and abs(after[0] - after[1]) < abs(before[0] - before[1])
    assert sorted(after) == sorted([7.0, 8.0])
    q = sch.Placement(np.zeros(6, bool), np.array([0, 0, 0, 0, 1, 1]))
    assert sch.window_remap(q, act, 2, max_moves=0) == 0


def test_predictor_rules(trace):
    prev, cur = trace.acts[(0, "mlp")][:1], trace.acts[(1, "mlp")][:1]  # one sequence: its own states
    lit = sch.predictor_accuracy(prev, cur, trace.parents[(1, "mlp")], trace.prefill, "literal")
    both = sch.predictor_accuracy(prev, cur, trace.parents[(1, "mlp")], trace.prefill)
    assert both.recall > 2 * lit.recall and both.accuracy > 0.9
    with pytest.raises(ValueError, match="rule"):
        sch.predicted(np.zeros(4, np.uint8), None, None, "oracle")


def test_derived_inputs():
    hw = hm.Hardware()
    assert 90e9 < hw.dimm_bw <= 102.4e9  # rank-level streaming under the 4 x 25.6 GB/s peak
    assert hw.dimm_macs == pytest.approx(256 * 8 / hm.c_mul() * 1e9)


def test_unit_cycles_come_from_the_paper_size_records():
    from golden.hermes_spec import ACT_LANES, FULL, ActOp
    from hw.hermes import activation, gemv
    from sysmodel.cost import characterization

    assert hm.c_mul() == gemv.ii(FULL)  # the record's measured operation rate is the unit's cycle model
    rec = characterization.lookup(UNIT_ACTIVATION)  # the paper's 256 lanes, measured by `make sim`
    lanes = ACT_LANES
    assert rec.extra["probe_cycles"] == activation.txn_cycles(ActOp.SOFTMAX, rec.extra["probe_beats"] * lanes)
    assert rec.ii - 1 == activation.txn_cycles(ActOp.SOFTMAX, rec.extra["timing_beats"] * lanes)
    assert hm.softmax_cycles(4096) == activation.txn_cycles(ActOp.SOFTMAX, 4096, lanes=lanes)


def test_area_sweep_lines():
    from sysmodel.designs.hermes import report

    lines = report.area_lines()
    assert any(line.startswith("| 512 |") for line in lines) and "bitserial_mul" in lines[0]


def test_more_multipliers_never_slow_hermes(trace):
    cfg = ModelConfig("tiny4k", 256, 4096, 8, 4, 4, 1000, "relu", True)
    hw = hm.Hardware(gpu_weight_bytes=cfg.layers * 256 * 256 * 2 + 1000 * 256 * 2 + 4e6)
    t = [hm.simulate(cfg, trace, hm.with_multipliers(hw, m)).tokens_per_s for m in (32, 256)]
    assert t[1] >= t[0]


def test_ablation_steps_are_cumulative_improvements(trace):
    cfg = ModelConfig("tiny4k", 256, 4096, 8, 4, 4, 1000, "relu", True)
    hw = hm.Hardware(gpu_weight_bytes=cfg.layers * 256 * 256 * 2 + 1000 * 256 * 2 + 4e6)
    mlp = {p: hm.simulate(cfg, trace, hw, p).mlp_s for p in hm.POLICIES}
    assert mlp["random"] > mlp["partition"] >= mlp["adjustment"] * 0.99
    run = hm.simulate(cfg, trace, hw)
    assert len(run.token_s) == paper.L_OUT and run.tokens_per_s > 0


def test_trace_shape_must_match_the_model(trace):
    with pytest.raises(ValueError, match="mlp has 4096 neurons"):
        hm.simulate(TINY, trace)


def test_gpu_budget_too_small_is_infeasible(trace):
    cfg = ModelConfig("tiny4k", 256, 4096, 8, 4, 4, 1000, "relu", True)
    with pytest.raises(sch.InfeasibleMapping, match="weight budget"):
        hm.simulate(cfg, trace, hm.Hardware(gpu_weight_bytes=1e5))


def test_baselines_order(trace):
    cfg = ModelConfig("tiny4k", 256, 4096, 8, 4, 4, 1000, "relu", True)
    hw = hm.Hardware(gpu_weight_bytes=1e6)
    t = {b: hm.baseline(b, cfg, hw, 2, trace).tokens_per_s for b in hm.BASELINES}
    assert t["FlexGen"] >= t["Accelerate"]  # overlap never hurts
    assert t["Deja Vu"] > t["Accelerate"]  # sparse loads move fewer bytes
    with pytest.raises(ValueError, match="baseline"):
        hm.baseline("vLLM", cfg, hw, 1, trace)


def test_cli_runs_a_user_trace_and_refuses_a_mismatched_one(tmp_path, trace, capsys):
    from sysmodel.cli import main

    path = trace.save(tmp_path / "mine.npz")
    assert main(["hermes", "--model", "opt-13b", "--trace", str(path)]) == 2  # 256/4096 neurons, not OPT-13B's
    assert "membound hermes: trace: attn has 256 neurons; opt-13b has 5120" in capsys.readouterr().err
    assert main(["hermes", "--model", "opt-13b", "--trace", str(tmp_path / "none.npz")]) == 2
    assert main(["hermes", "--model", "opt-13b", "--multipliers", "64"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Hermes | opt-13b | batch 1 |") and "tokens/s" in out
