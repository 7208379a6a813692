"""Per-stage records only when asked for: a run streams TBT samples, energy, each request's longest stage and
a bounded KV series from its stages as they end; the streamed statistics are those the per-stage arrays give
(percentiles exactly, J/token to the exactly rounded sum), and `compare --trace-stages` writes the stages."""

import math

import numpy as np
import pytest

from sysmodel.cli import main
from sysmodel.designs.baselines import GpuOnly
from sysmodel.engines import engine, metrics, replicas, serving
from sysmodel.engines.metrics import ITER_FIELDS, STAGE_COLUMNS, weighted_percentiles


@pytest.fixture(scope="module")
def runs() -> tuple[serving.Result, serving.Result]:
    """One vllm run (prompts pause decodes: stalls) without and with its stages kept."""
    tr = serving.make_trace("gaussian", 300, seed=3, qps=30, prompt=400, output=80)
    gpu = GpuOnly("llama2-7b")
    return serving.simulate(tr, gpu), serving.simulate(tr, gpu, stages=True)


def test_without_the_flag_no_stage_arrays_are_kept(runs) -> None:
    bare, kept = runs
    assert all(getattr(bare, k) is None for k in ITER_FIELDS)
    assert all(len(getattr(kept, k)) == kept.stages == bare.stages > 300 for k in ITER_FIELDS)
    assert bare.summary() == kept.summary()


def test_streamed_statistics_equal_the_array_based_ones(runs) -> None:
    bare, r = runs
    values = np.concatenate([r.iter_time, r.stall_gaps])  # the samples as the arrays give them
    weights = np.concatenate([r.iter_decode - r.iter_stalled, r.stall_counts])
    qs = (1, 10, 50, 90, 99, 99.9)
    assert len(r.stall_gaps) > 10 and bare.tbt_percentiles(qs) == weighted_percentiles(values, weights, qs)
    assert bare.joules_per_token == math.fsum(r.iter_energy.tolist()) / r.trace.output.sum()
    assert bare.joules_per_token == pytest.approx(r.iter_energy.sum() / r.trace.output.sum(), rel=1e-12)
    longest = metrics.range_max(r.iter_time, r.req_iters[:, 0], r.req_iters[:, 1])  # every request decodes
    np.testing.assert_array_equal(bare.stage_max, longest)
    times, cum = serving.tbt_cdf(bare)
    assert len(times) > 100 and cum[-1] == 1.0
    starts = np.concatenate([[0.0], np.cumsum(r.iter_time)[:-1]])  # fewer stages than KV_POINTS: every one
    np.testing.assert_array_equal(bare.kv_series.start, starts)
    np.testing.assert_array_equal(bare.kv_series.kv, r.iter_kv)


def test_the_sketch_decision_counts_stages_not_distinct_values(runs, monkeypatch) -> None:
    """Percentiles change from exact to the DDSketch at the same run size as when they were computed from
    the arrays: the samples are the stages (and distinct stall gaps), not the distinct values kept."""
    bare, r = runs
    monkeypatch.setattr(metrics, "EXACT_SAMPLES", bare.tbt_count - 1)
    values = np.concatenate([r.iter_time, r.stall_gaps])
    weights = np.concatenate([r.iter_decode - r.iter_stalled, r.stall_counts])
    assert bare.tbt_count == len(values) > len(bare.tbt_samples()[0])
    assert bare.tbt_percentiles() == weighted_percentiles(values, weights)


def test_chunked_streaming_and_a_bounded_kv_series(runs, monkeypatch) -> None:
    """Streamed in many chunks (a chunk per few stages) the statistics are the same; the KV series holds
    at most KV_POINTS of the stages' starts, every stride-th one."""
    bare, r = runs
    monkeypatch.setattr(engine, "MAX_STRETCH", 64)
    monkeypatch.setattr(metrics, "KV_POINTS", 100)
    small = serving.simulate(r.trace, GpuOnly("llama2-7b"))
    assert small.summary() == bare.summary()
    np.testing.assert_array_equal(small.stage_max, bare.stage_max)
    s = small.kv_series
    assert len(s.kv) <= 100 and s.stride > 1
    np.testing.assert_array_equal(s.kv, r.iter_kv[:: s.stride])


def test_pooled_replicas_stream_and_keep_stages_alike() -> None:
    tr = serving.make_trace("gaussian", 200, seed=4, qps=40, prompt=300, output=60)
    gpu = GpuOnly("llama2-7b")
    bare = replicas.serve(tr, gpu, 3, "least-outstanding")
    kept = replicas.serve(tr, gpu, 3, "least-outstanding", stages=True)
    assert bare.iter_time is None and len(kept.iter_time) == kept.stages == bare.stages
    assert bare.summary() == kept.summary()
    np.testing.assert_array_equal(bare.per_request_tbt()[1], kept.per_request_tbt()[1])


def test_compare_trace_stages_writes_a_stage_file_per_system(tmp_path, capsys) -> None:
    out = tmp_path / "c"
    args = ["compare", "--model", "llama2-7b", "--systems", "gpu,cpu", "--requests", "20", "--output", "16"]
    assert main([*args, "--out", str(tmp_path / "plain")]) == 0
    assert not list((tmp_path / "plain").glob("stages*"))
    assert main([*args, "--trace-stages", "--out", str(out)]) == 0
    assert "stages-gpu.csv" in capsys.readouterr().out
    for name in ("gpu", "cpu"):
        rows = (out / f"stages-{name}.csv").read_text().splitlines()
        assert rows[0].split(",") == list(STAGE_COLUMNS) and len(rows) > 16
    assert (out / "compare.csv").read_text() == (tmp_path / "plain" / "compare.csv").read_text()
