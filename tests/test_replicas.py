"""Replicas behind a router (sysmodel/engines/replicas.py), worked by hand on 1 s stages."""

import numpy as np
import pytest
from constant_system import ConstantSystem

from sysmodel.engines import replicas
from sysmodel.engines.serving import Trace, simulate

# 0 decodes for 10 s on its replica; 1, 2 and 3 are one-token requests arriving while it runs
TRACE = Trace(np.array([0.0, 0.5, 2.5, 3.5]), np.array([1, 1, 1, 1]), np.array([10, 1, 1, 1]), "hand")


def test_least_outstanding_balances_by_what_is_still_running() -> None:
    """1 finds replica 0 busy (0 runs to t=10) and goes to 1; it is done at 1.5, so 2 (at 2.5) and 3 (at
    3.5, after 2 finished at 3.5) find replica 1 empty too. Round robin sends 2 to the busy replica 0, where
    it waits for the stage in progress (2..3) and finishes at 4."""
    sys_ = ConstantSystem(1.0)  # reserve: a prompt rides with the running decodes (vllm would stall them)
    lo = replicas.serve(TRACE, sys_, 2, "least-outstanding", scheduler="reserve", stages=True)
    np.testing.assert_array_equal(
        replicas.route(TRACE, sys_, 2, "least-outstanding", scheduler="reserve"), [0, 1, 1, 1]
    )
    np.testing.assert_array_equal(lo.finish, [10, 1.5, 3.5, 4.5])
    assert lo.meta["requests_per_replica"] == [1, 3] and lo.meta["router"] == "least-outstanding"
    pooled, each = replicas.run(
        TRACE, sys_, 2, "least-outstanding", scheduler="reserve", stages=True
    )  # KV plotted per replica
    assert [len(r.trace) for r in each] == [1, 3] and len(pooled.iter_kv) == sum(len(r.iter_kv) for r in each)
    rr = replicas.serve(TRACE, sys_, 2, "round-robin", scheduler="reserve")
    np.testing.assert_array_equal(rr.finish, [10, 1.5, 4, 4.5])
    assert rr.e2e.mean() > lo.e2e.mean()
    assert lo.trace.output.sum() == 13 and lo.makespan == 10 and lo.system == "constant x 2 (least-outstanding)"
    assert len(lo.iter_time) == sum(
        simulate(Trace(TRACE.arrival[i], TRACE.prompt[i], TRACE.output[i]), sys_, scheduler="reserve").stages
        for i in ([0], [1, 2, 3])
    )


def test_one_replica_is_the_engine_and_bad_options_are_named() -> None:
    sys_ = ConstantSystem(1.0)
    np.testing.assert_array_equal(replicas.serve(TRACE, sys_).finish, simulate(TRACE, sys_).finish)
    with pytest.raises(ValueError, match="replicas: 0 not allowed"):
        replicas.serve(TRACE, sys_, 0)
    with pytest.raises(ValueError, match="router: 'random' not allowed; allowed: round-robin, least-outstanding"):
        replicas.serve(TRACE, sys_, 2, "random")
    with pytest.raises(ValueError, match="concurrency: not allowed with replicas > 1"):
        replicas.serve(TRACE, sys_, 2, concurrency=2)


def test_paged_replicas_pool_their_metrics() -> None:
    tr = Trace(np.zeros(8), np.full(8, 64), np.full(8, 512), "kv-bound")
    sys_ = ConstantSystem(0.01, capacity=4 * 576)
    r = replicas.serve(tr, sys_, 2, "round-robin", scheduler="vllm", watermark=0.0)
    parts = [
        simulate(
            Trace(tr.arrival[i::2], tr.prompt[i::2], tr.output[i::2]),
            sys_,
            scheduler="vllm",
            watermark=0.0,
            stages=True,
        )
        for i in (0, 1)
    ]
    assert r.meta["preemptions"] == sum(p.meta["preemptions"] for p in parts)
    assert r.joules_per_token == pytest.approx(sum(p.iter_energy.sum() for p in parts) / tr.output.sum())
    assert r.tbt_percentiles()[99] == max(p.tbt_percentiles()[99] for p in parts)


def test_serve_replicas_cli(tmp_path, capsys) -> None:
    from sysmodel.cli import main

    assert (
        main(
            [
                "serve",
                "--model",
                "llama2-7b",
                "--trace",
                "gaussian",
                "--qps",
                "20",
                "--requests",
                "60",
                "--replicas",
                "3",
                "--router",
                "least-outstanding",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    assert "x 3 (least-outstanding) | gaussian" in capsys.readouterr().out
    assert (
        main(
            [
                "serve",
                "--model",
                "llama2-7b",
                "--requests",
                "4",
                "--replicas",
                "2",
                "--concurrency",
                "2",
                "--out",
                str(tmp_path / "p"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "concurrency: not allowed with replicas > 1" in err


def _outstanding_by_resimulation(trace: Trace, system, replicas_: int, **kw) -> np.ndarray:
    """The least-outstanding router the slow way (the pre-event-loop algorithm): at each arrival, every
    replica re-simulated on the requests it holds, outstanding = held - finished by the arrival."""
    where = np.full(len(trace), -1)
    for i, t in enumerate(trace.arrival):
        counts = []
        for j in range(replicas_):
            idx = np.flatnonzero(where == j)
            if not len(idx):
                counts.append(0)
                continue
            sub = Trace(trace.arrival[idx], trace.prompt[idx], trace.output[idx])
            counts.append(int((simulate(sub, system, **kw).finish > t).sum()))
        where[i] = int(np.argmin(counts))
    return where


@pytest.mark.parametrize("scheduler", ["vllm", "reserve"])
def test_event_loop_routes_as_re_simulation_does(scheduler: str) -> None:
    """The one event loop sees each replica's true outstanding work at every arrival: its routing equals
    re-simulating every replica at every arrival, and each replica's times equal simulating its requests
    alone."""
    from sysmodel.designs.baselines import GpuOnly
    from sysmodel.engines.serving import make_trace

    gpu = GpuOnly("llama2-7b")
    tr = make_trace("gaussian", 40, seed=4, qps=30, prompt=256, output=64)
    where = replicas.route(tr, gpu, 3, "least-outstanding", scheduler=scheduler)
    np.testing.assert_array_equal(where, _outstanding_by_resimulation(tr, gpu, 3, scheduler=scheduler))
    assert len(set(where.tolist())) == 3
    res = replicas.serve(tr, gpu, 3, "least-outstanding", scheduler=scheduler)
    for j in range(3):
        idx = np.flatnonzero(where == j)
        alone = simulate(Trace(tr.arrival[idx], tr.prompt[idx], tr.output[idx]), gpu, scheduler=scheduler)
        np.testing.assert_array_equal(res.finish[idx], alone.finish)


def test_kv_aware_routes_by_kv_held() -> None:
    """0 reserves 110 tokens of KV on replica 0 (it runs to t=10); 1 (at 0.5) goes to the empty replica 1
    under both routers; at 0.6 each replica has one request outstanding, so least-outstanding sends 2 to
    replica 0 (the lower index) and kv-aware to replica 1, which holds 6 tokens' KV against 110."""
    tr = Trace(np.array([0.0, 0.5, 0.6]), np.array([100, 1, 1]), np.array([10, 5, 1]), "hand")
    sys_ = ConstantSystem(1.0)
    np.testing.assert_array_equal(replicas.route(tr, sys_, 2, "least-outstanding", scheduler="reserve"), [0, 1, 0])
    np.testing.assert_array_equal(replicas.route(tr, sys_, 2, "kv-aware", scheduler="reserve"), [0, 1, 1])


def test_serve_qps_grid_on_two_dask_workers_matches_the_local_run(tmp_path, capsys) -> None:
    """`serve --qps a,b --dask ADDRESS` runs each rate as a task on the cluster (two worker processes here):
    the per-request CSVs and the printed summaries are the local run's, byte for byte."""
    from dask.distributed import LocalCluster

    from sysmodel.cli import main

    args = ["serve", "--model", "llama2-7b", "--trace", "gaussian", "--qps", "10,40", "--requests", "40"]
    args += ["--replicas", "2", "--router", "least-outstanding"]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    local = capsys.readouterr().out
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        assert main([*args, "--dask", cluster.scheduler_address, "--out", str(tmp_path / "dask")]) == 0
    remote = capsys.readouterr().out
    assert remote.replace(str(tmp_path / "dask"), "OUT") == local.replace(str(tmp_path / "local"), "OUT")
    for name in ("requests-qps10.csv", "requests-qps40.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert main([*args, "--dask", "nowhere", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dask: 'nowhere' is not a scheduler address" in err
