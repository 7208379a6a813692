"""The serving engine: closed forms with a constant stage time, Little's law, token and memory accounting,
determinism, the vectorised decode stretches against step-by-step pricing, trace generators and loaders,
and `membound serve`."""

import json
import math

import numpy as np
import pytest
from constant_system import ConstantSystem

from sysmodel.cli import main
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.baselines import GpuOnly
from sysmodel.engines import engine, serving, workload
from sysmodel.engines.metrics import STAGE_COLUMNS

TAU = 0.01


def fixed(n: int, prompt: int = 64, output: int = 10) -> serving.Trace:
    return serving.make_trace("fixed", n, prompt=prompt, output=output)


def test_constant_stage_time_one_wave() -> None:
    """All N requests fit: one mixed stage then O-1 decode stages; every metric is a multiple of tau."""
    n, o = 20, 10
    r = serving.simulate(fixed(n, output=o), ConstantSystem(TAU), max_batch=n, stages=True)
    assert np.allclose(r.t2ft, TAU) and np.allclose(r.e2e, o * TAU)
    assert r.throughput == pytest.approx(n * o / (o * TAU))
    assert r.tbt_percentiles() == pytest.approx({50: TAU, 90: TAU, 99: TAU})
    assert len(r.iter_time) == o


def test_constant_stage_time_waves() -> None:
    """max_batch B < N = kB: wave j (0-based) is admitted when wave j-1 ends and finishes at (j+1) O tau."""
    n, b, o = 12, 4, 5
    r = serving.simulate(fixed(n, output=o), ConstantSystem(TAU), max_batch=b)
    wave = np.arange(n) // b
    assert np.allclose(r.finish, (wave + 1) * o * TAU)
    assert np.allclose(r.t2ft, (wave * o + 1) * TAU)
    assert r.throughput == pytest.approx(b / TAU)


def test_chunked_prefill_stages() -> None:
    """A 100-token prompt under a 32-token budget needs ceil(100/32) = 4 stages before its first token."""
    r = serving.simulate(fixed(1, prompt=100, output=3), ConstantSystem(TAU), prefill_budget=32, scheduler="reserve")
    assert r.t2ft[0] == pytest.approx(4 * TAU) and r.e2e[0] == pytest.approx(6 * TAU)


def test_tokens_never_exceed_the_request() -> None:
    tr = serving.make_trace("gaussian", 300, seed=3, qps=50, prompt=200, output=60)
    r = serving.simulate(tr, GpuOnly("llama2-7b"), max_batch=32, prefill_budget=512, scheduler="reserve", stages=True)
    # each request: its first token (prefill) plus one per decode stage it took part in
    assert r.iter_decode.sum() + len(tr) == tr.output.sum()
    spans = r.req_iters[:, 1] - r.req_iters[:, 0]
    assert np.array_equal(np.maximum(spans, 0), tr.output - 1)
    assert (r.first_token <= r.finish).all() and (r.admitted >= r.arrival).all()


def test_kv_never_exceeds_capacity_and_requests_wait() -> None:
    sys_ = ConstantSystem(TAU, capacity=3 * (64 + 10), kv_bytes_per_token=1.0)
    r = serving.simulate(fixed(10), sys_, max_batch=100)
    assert r.kv_peak <= r.kv_capacity
    assert (r.admitted > r.arrival).sum() == 7  # three fit at once; the rest wait their turn


def test_a_request_that_can_never_fit_is_infeasible() -> None:
    sys_ = ConstantSystem(TAU, capacity=50, kv_bytes_per_token=1.0)
    with pytest.raises(Infeasible, match=r"request 0 \(64 \+ 10 tokens\) needs"):
        serving.simulate(fixed(2), sys_)
    with pytest.raises(Infeasible):  # rejecting every request leaves nothing to serve
        serving.simulate(fixed(2), sys_, oversize="reject")
    with pytest.raises(ValueError, match="oversize: 'drop' not allowed"):
        serving.simulate(fixed(2), sys_, oversize="drop")


def test_reject_drops_only_the_requests_that_never_fit() -> None:
    tr = serving.Trace(np.zeros(4), [64, 10, 64, 10], [10, 10, 10, 10])
    sys_ = ConstantSystem(TAU, capacity=50, kv_bytes_per_token=1.0)
    r = serving.simulate(tr, sys_, oversize="reject")
    assert r.meta["rejected"] == 2 and len(r.trace) == 2 and (r.trace.prompt == 10).all()


def test_littles_law_in_qps_mode() -> None:
    """Time-averaged requests in the system (sampled per stage) = arrival rate x mean E2E."""
    tr = serving.make_trace("gaussian", 2000, seed=5, qps=8, prompt=512, output=128)
    r = serving.simulate(tr, GpuOnly("llama2-7b"), max_batch=64, stages=True)
    span = r.finish.max()
    busy = float((r.iter_in_system * r.iter_time).sum())
    assert busy / span == pytest.approx(len(tr) / span * r.e2e.mean(), rel=0.03)


def test_closed_loop_keeps_concurrency() -> None:
    r = serving.simulate(fixed(50), ConstantSystem(TAU), concurrency=5, stages=True)
    assert r.iter_in_system.max() == 5
    assert np.isclose(np.sort(r.arrival)[5:], np.sort(r.finish)[:45]).all()  # each arrival is a finish


def test_same_seed_same_result_and_vector_stretches_match_steps(monkeypatch) -> None:
    tr = serving.make_trace("dolphin", 60, seed=7, qps=0.5)
    sys_ = GpuOnly("llama2-13b", gpus=2)
    a = serving.simulate(tr, sys_, max_batch=16, stages=True)
    b = serving.simulate(serving.make_trace("dolphin", 60, seed=7, qps=0.5), sys_, max_batch=16)
    assert np.array_equal(a.finish, b.finish) and a.summary() == b.summary()
    monkeypatch.setattr(engine, "MAX_STRETCH", 1)  # price every decode stage on its own
    c = serving.simulate(tr, sys_, max_batch=16, stages=True)
    assert np.allclose(a.finish, c.finish, rtol=1e-9) and np.allclose(a.iter_time, c.iter_time, rtol=1e-12)
    other = serving.make_trace("dolphin", 60, seed=8, qps=0.5)
    assert not np.array_equal(other.output, tr.output)


@pytest.mark.parametrize("name", list(serving.L3_TRACES))
def test_l3_traces_match_table4_moments(name: str) -> None:
    """The truncated log-normal has Table 4's moments exactly; 100K samples match the means within 2% and
    the standard deviations within 10% (LongBench's outputs, CV 2.4, converge slowly)."""
    from scipy.stats import norm

    mi, si, mo, so = serving.L3_TRACES[name]
    for mean, std in ((mi, si), (mo, so)):
        mu, sigma = workload._truncated_lognormal(mean, std, serving.TRACE_CAP)
        x = np.exp(
            mu
            + sigma
            * norm.ppf(np.linspace(1e-7, 1 - 1e-7, 2_000_001) * norm.cdf((math.log(serving.TRACE_CAP) - mu) / sigma))
        )
        assert x.mean() == pytest.approx(mean, rel=2e-3) and x.std() == pytest.approx(std, rel=1e-2)
    tr = serving.make_trace(name, 100_000, seed=11)
    assert tr.prompt.mean() == pytest.approx(mi, rel=0.02) and tr.prompt.std() == pytest.approx(si, rel=0.1)
    assert tr.output.mean() == pytest.approx(mo, rel=0.02) and tr.output.std() == pytest.approx(so, rel=0.1)
    assert tr.prompt.min() >= 1 and max(tr.prompt.max(), tr.output.max()) <= serving.TRACE_CAP


def test_gaussian_trace() -> None:
    tr = serving.make_trace("gaussian", 50_000, seed=2, prompt=4096, output=512)
    assert tr.output.mean() == pytest.approx(512, rel=0.01)
    assert tr.output.std() == pytest.approx(serving.GAUSSIAN_STD * 512, rel=0.03)


def test_load_trace_csv_jsonl_and_errors(tmp_path) -> None:
    good = tmp_path / "t.csv"
    good.write_text("arrival_s,prompt_tokens,output_tokens\n0.5,10,3\n0,20,4\n")
    tr = serving.load_trace(good)
    assert list(tr.prompt) == [20, 10] and list(tr.arrival) == [0, 0.5]  # sorted by arrival
    jl = tmp_path / "t.jsonl"
    jl.write_text(json.dumps({"prompt_tokens": 5, "output_tokens": 2}) + "\n")
    assert serving.load_trace(jl).output[0] == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("arrival_s,prompt_tokens,output_tokens\n0,10,3\n0,ten,3\n")
    with pytest.raises(ValueError, match=r"bad.csv line 3: prompt_tokens: 'ten' is not a whole number >= 1"):
        serving.load_trace(bad)
    bad.write_text("arrival_s,prompt_tokens,output_tokens\n-1,10,3\n")
    with pytest.raises(ValueError, match=r"line 2: arrival_s: '-1' is not a time >= 0"):
        serving.load_trace(bad)
    bad.write_text("arrival_s,prompt_tokens\n0,10\n")
    with pytest.raises(ValueError, match=r"line 1: missing columns \['output_tokens'\]"):
        serving.load_trace(bad)
    with pytest.raises(ValueError, match="does not exist"):
        serving.load_trace(tmp_path / "none.csv")


def test_serve_cli(tmp_path, capsys) -> None:
    out = tmp_path / "serve"
    assert (
        main(
            [
                "serve",
                "--model",
                "llama2-7b",
                "--system",
                "gpu",
                "--trace",
                "gaussian",
                "--requests",
                "50",
                "--qps",
                "2,6",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "throughput" in text and "TBT" in text and "p99" in text
    assert {p.name for p in out.iterdir()} == {
        ".membound-written.json",
        "run.json",
        "requests-qps2.csv",
        "requests-qps6.csv",
        "tbt_cdf.png",
        "kv_utilisation.png",
        "throughput_vs_qps.png",
    }
    header = (out / "requests-qps2.csv").read_text().splitlines()[0]
    assert header.startswith("id,arrival_s,prompt_tokens,output_tokens,admitted_s,first_token_s")


@pytest.mark.parametrize(
    ("argv", "msg"),
    [
        (["--model", "llama2-7b", "--requests", "0"], "--requests: '0' is not a whole number >= 1"),
        (["--model", "llama2-7b", "--trace", "nope.csv"], "nope.csv does not exist"),
        (["--model", "llama2-7b", "--system", "tpu"], "system: unknown 'tpu'"),
        (["--model", "llama2-7b", "--qps", "-3"], "--qps: '-3' is not a number > 0"),
        (["--model", "gpt-9"], "model: unknown 'gpt-9'"),
        (["--model", "llama2-7b", "--device", "tpu"], "device: 'tpu' not allowed; allowed: rtx4090"),
        # GPT-175B on 6 A100s leaves 129 GB of KV: OpenR1's long requests never fit
        (["--model", "gpt3-175b", "--devices", "6", "--trace", "openr1", "--requests", "100"], "request"),
        (["--model", "gpt3-175b", "--devices", "5"], "devices: 5 does not divide gpt3-175b's 96 attention heads"),
        (["--model", "gpt3-175b", "--system", "l3", "--set", "tp=5"], "allowed: 1, 2, 3, 4, 6, 8\n"),
    ],
)
def test_serve_cli_mistakes_are_one_line(argv, msg, capsys) -> None:
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and "Traceback" not in err


def test_ten_thousand_requests_are_quick() -> None:
    """Not a timing test (make bench records speed): a big trace completes and conserves tokens."""
    tr = serving.make_trace("openthoughts", 2000, seed=1)
    r = serving.simulate(
        tr, GpuOnly("llama2-7b", gpus=1), max_batch=128, scheduler="reserve", stages=True
    )  # no recompute
    assert r.iter_decode.sum() + len(tr) == tr.output.sum()
    assert math.isfinite(r.throughput) and r.throughput > 0


def test_engine_advanced_in_pieces_is_the_engine_run_at_once() -> None:
    """The event loop's contract: requests given in arrival-ordered pieces, the engine run up to each piece's
    first arrival before it is given (as the router does), is the engine given every request at once."""
    tr = serving.make_trace("gaussian", 120, seed=9, qps=40, prompt=300, output=40)
    gpu = GpuOnly("llama2-7b")
    whole = serving.simulate(tr, gpu, max_batch=16, stages=True)
    eng = engine.Engine(gpu, engine.get_scheduler("vllm"), 16, int(tr.output.max()), size=1, stages=True)
    cuts = [0, *sorted(np.random.default_rng(0).choice(np.arange(1, 120), 25, replace=False).tolist()), 120]
    for a, b in zip(cuts, cuts[1:], strict=False):
        eng.advance(float(tr.arrival[a]))
        eng.add(tr.prompt[a:b], tr.output[a:b], tr.arrival[a:b])
    eng.advance()
    pieces = eng.result(tr, whole.meta)
    for k in ("admitted", "first_token", "finish", "iter_time", "iter_energy", "stall_tbt"):
        np.testing.assert_array_equal(getattr(pieces, k), getattr(whole, k))


def test_tbt_percentiles_from_the_sketch_are_within_its_stated_error(monkeypatch) -> None:
    """Above EXACT_SAMPLES the TBT percentiles come from a DDSketch: each within SKETCH_ACCURACY (relative)
    of the exact one on a run with stalls (vllm pauses decodes for prompts)."""
    from sysmodel.engines import metrics

    r = serving.simulate(
        serving.make_trace("gaussian", 300, seed=3, qps=30, prompt=400, output=80), GpuOnly("llama2-7b")
    )
    qs = (1, 10, 50, 90, 99, 99.9)
    exact = r.tbt_percentiles(qs)
    values, _ = r.tbt_samples()
    monkeypatch.setattr(metrics, "EXACT_SAMPLES", len(values) - 1)
    sketched = r.tbt_percentiles(qs)
    assert sketched != exact and len(set(exact.values())) > 3 and len(r.stall_gaps) > 10  # the sketch answered
    for q in qs:
        assert abs(sketched[q] - exact[q]) <= metrics.SKETCH_ACCURACY * exact[q] * (1 + 1e-9), q


def test_serve_trace_stages_writes_every_engines_stages_beside_run_json(tmp_path, capsys) -> None:
    """Without --trace-stages no stage file is written (the file set above); with it, stages.csv holds each
    engine's stages: as many rows as the run's stages, per engine in order, their decode tokens the run's."""
    out = tmp_path / "o"
    args = ["serve", "--model", "llama2-7b", "--trace", "gaussian", "--requests", "60", "--qps", "8"]
    assert main([*args, "--replicas", "2", "--trace-stages", "--out", str(out)]) == 0
    capsys.readouterr()
    (run,) = json.loads((out / "run.json").read_text())
    rows = (out / "stages-qps8.csv").read_text().splitlines()
    assert rows[0].split(",") == list(STAGE_COLUMNS)
    table = np.array([[float(x) for x in r.split(",")] for r in rows[1:]])
    assert len(table) == run["summary"]["stages"]
    assert set(table[:, 0]) == {0.0, 1.0}
    for j in (0, 1):
        np.testing.assert_array_equal(table[table[:, 0] == j, 1], np.arange((table[:, 0] == j).sum()))
    assert run["summary"]["preemptions"] == 0  # so every token after a request's first is a decode token
    assert table[:, 3].sum() == run["summary"]["output_tokens"] - run["summary"]["requests"]
