"""`membound sweep`: config validation with clear errors, and the example configs run."""

import csv
from pathlib import Path

import pytest

from sysmodel import sweep
from sysmodel.cli import main

EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize(
    ("cfg", "msg"),
    [
        ({"kind": "train", "grid": {"x": [1]}}, r"kind: 'train' not allowed"),
        ({"kind": ["decode"], "grid": {"x": [1]}}, r"kind: \['decode'\] not allowed"),  # was a TypeError
        ({"kind": {"a": 1}}, r"kind: \{'a': 1\} not allowed"),
        ({"kind": "decode"}, r"grid: missing or empty"),
        ({"kind": "decode", "grid": {"colour": [1]}}, r"grid.colour: unknown for kind decode"),
        ({"kind": "decode", "grid": {"model": []}}, r"grid.model: must be a non-empty list"),
        (
            {"kind": "decode", "grid": {"model": ["gpt-9"], "device": ["rtx4090"]}},
            r"grid.model: 'gpt-9' not allowed; one of",
        ),
        (
            {"kind": "decode", "grid": {"model": ["llama2-7b"], "device": ["a100-80g-sxm"], "mem_bw": [0]}},
            r"grid.mem_bw: 0 not allowed; a number > 0",
        ),
        ({"kind": "decode", "grid": {"device": ["a100-80g-sxm"]}}, r"grid.model: missing; kind decode needs it"),
        (
            {"kind": "decode", "grid": {"model": ["llama2-7b"], "device": ["rtx4090"], "kv_len": [-1]}},
            r"grid.kv_len: -1 not allowed; a whole number >= 0",
        ),
        (
            {"kind": "decode", "grid": {"model": ["llama2-7b"], "device": ["rtx4090"], "wbytes": [0]}},
            r"grid.wbytes: 0 not allowed; a number > 0 and <= 8",
        ),
        (
            {"kind": "decode", "grid": {"model": ["llama2-7b"], "device": ["rtx4090"], "batch": [1.5]}},
            r"grid.batch: 1.5 not allowed; a whole number >= 1",
        ),
        (
            {"kind": "decode", "grid": {"model": ["llama2-7b"], "device": ["rtx4090"], "batch": ["two"]}},
            r"grid.batch: 'two' not allowed; a whole number >= 1",
        ),
        (
            {"kind": "decode", "grid": {"model": ["llama2-7b"], "device": ["rtx4090"], "batch": [True]}},
            r"grid.batch: True not allowed",
        ),
        ({"kind": "deca", "grid": {"density": [-0.3]}}, r"grid.density: -0.3 not allowed; a number > 0 and <= 1"),
        ({"kind": "deca", "grid": {"lanes": [-2]}}, r"grid.lanes: -2 not allowed; a whole number >= 1 and <= 1024"),
        ({"kind": "deca", "grid": {"n": [0]}}, r"grid.n: 0 not allowed; a whole number >= 1"),
        ({"kind": "deca", "grid": {"w": [0]}}, r"grid.w: 0 not allowed"),
        ({"kind": "deca", "grid": {"lanes": [0]}}, r"grid.lanes: 0 not allowed"),
        ({"kind": "deca", "grid": {"density": [float("nan")]}}, r"grid.density: nan not allowed"),
        ({"kind": "deca", "grid": {"machine": ["TPU"]}}, r"grid.machine: 'TPU' not allowed"),
    ],
)
def test_validation_errors(cfg: dict, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        sweep.validate(cfg)


def test_bad_extension(tmp_path) -> None:
    p = tmp_path / "cfg.json"
    p.write_text("{}")
    with pytest.raises(ValueError, match=r"config: cfg.json not allowed"):
        sweep.load_config(p)
    assert main(["sweep", str(p)]) == 2


@pytest.mark.parametrize("name", ["decode.toml", "deca.yaml"])
def test_examples_run(name: str, tmp_path) -> None:
    cfg = sweep.load_config(EXAMPLES / name)
    out = sweep.sweep(cfg, tmp_path / "out.csv", workers=2)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == len(sweep.points(cfg))
    if cfg["kind"] == "decode":
        from sysmodel.designs.baselines import gpu_only

        for r in rows:  # every feasible point is the GPU-only baseline's step; the rest say why not
            p = (r["model"], r["device"], int(r["batch"]), int(r["kv_len"]), float(r["wbytes"]))
            if r["feasible"] == "True":
                ref = gpu_only(p[0], device=p[1], batch=p[2], kv_len=p[3], wbytes=p[4]).seconds * 1e3
                assert float(r["latency_ms"]) == pytest.approx(ref, rel=1e-9)
            else:
                assert r["reason"] and not r["latency_ms"]
        fast = {
            (r["device"], r["wbytes"]): float(r["latency_ms"])
            for r in rows
            if r["model"] == "llama2-7b" and r["batch"] == "1"
        }
        assert fast["a100-80g-sxm", "2.0"] < fast["rtx4090", "2.0"]  # bandwidth wins at batch 1
        assert fast["rtx4090", "0.5"] < 0.5 * fast["rtx4090", "2.0"]  # 4x fewer weight bytes
    else:
        assert {r["bound"] for r in rows} <= {"MEM", "VEC", "MTX"}


def test_parquet_output(tmp_path) -> None:
    import pyarrow.parquet as pq

    cfg = {"kind": "deca", "grid": {"scheme": ["q8"], "density": [1.0, 0.3], "system": ["deca", "sw"]}}
    sweep.validate(cfg)
    table = pq.read_table(sweep.sweep(cfg, tmp_path / "out.parquet", workers=1))
    assert table.num_rows == 4 and "tflops" in table.column_names


def test_dask_executor_matches_the_process_pool(tmp_path) -> None:
    """`--scheduler` submits the grid to a Dask cluster (here an in-process LocalCluster) in chunks of points:
    byte-identical output, rows in grid order."""
    from dask.distributed import LocalCluster

    cfg = {
        "kind": "decode",
        "grid": {
            "model": ["llama3.1-8b"],  # a 128K context: 64K tokens are within it
            "device": ["rtx4090", "a100-80g-sxm"],
            "batch": [1, 128, *range(2, 100)],
            "kv_len": [65536],
        },
    }
    sweep.validate(cfg)
    assert sweep.chunk_size(len(sweep.points(cfg)), 2) == 25  # 200 points, 2 workers: 8 tasks of 25
    local = sweep.sweep(cfg, tmp_path / "local.csv", workers=2).read_bytes()
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        remote = sweep.sweep(cfg, tmp_path / "dask.csv", scheduler=cluster.scheduler_address).read_bytes()
    assert remote == local
    rows = list(csv.DictReader((tmp_path / "local.csv").open()))
    # 64K tokens of KV (8.6 GB) beside 16 GB of weights overflow the 4090 at batch 1; at batch 128 (1.1 TB)
    # every device
    assert [r["feasible"] for r in rows if r["batch"] in ("1", "128")] == ["False", "True", "False", "False"]


def test_chunk_size() -> None:
    assert [sweep.chunk_size(n, w) for n, w in ((1, 2), (10, 2), (10_000, 2), (10_000, 64), (10**6, 2))] == [
        1,
        2,
        500,
        40,
        500,
    ]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "config: {path} does not exist"),  # was Python's "[Errno 2] No such file or directory"
        (b"\xff\xfe\x00", "config: {path}: not UTF-8 text"),  # was only the codec's message
    ],
    ids=["missing", "binary"],
)
def test_cli_errors_are_one_line(content, needle, tmp_path, capsys) -> None:
    path = tmp_path / "c.toml"
    if content is not None:
        path.write_bytes(content)
    assert main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle.format(path=path) in err and "Traceback" not in err


def test_a_context_past_the_models_is_infeasible(tmp_path) -> None:
    """A decode step past ``max_position_embeddings`` is flagged, not given a latency: Llama 2 (4096 tokens)
    at 8191 + 1 used to get one on 8 A100s, where ``serve`` refuses the same lengths."""
    cfg = {"kind": "decode", "grid": {"model": ["llama2-7b"], "device": ["a100-80g-sxm"], "gpus": [8]}}
    cfg["grid"]["kv_len"] = [4095, 4096, 8191]
    rows = list(csv.DictReader(sweep.sweep(cfg, tmp_path / "out.csv", workers=1).open()))
    assert [r["feasible"] for r in rows] == ["True", "False", "False"]
    assert rows[1]["reason"] == "llama2-7b: 4096 + 1 tokens exceed its context of 4096 tokens"
    assert rows[2]["latency_ms"] == rows[2]["tokens_per_s"] == ""


def test_a_model_may_be_a_config_path(tmp_path) -> None:
    """A grid's model is a zoo name or a Hugging Face config.json path (as --model elsewhere)."""
    from sysmodel.cost.models import MODELS_DIR

    path = str(MODELS_DIR / "llama2-7b.json")
    cfg = {"kind": "decode", "grid": {"model": [path], "device": ["a100-80g-sxm"], "batch": [1], "kv_len": [128]}}
    sweep.validate(cfg)
    rows = sweep.sweep(cfg, tmp_path / "out.csv", workers=1).read_text().splitlines()
    assert len(rows) == 2 and path in rows[1]
    with pytest.raises(ValueError, match="or the path of a config.json"):
        sweep.validate({**cfg, "grid": {**cfg["grid"], "model": [str(tmp_path / "missing.json")]}})


def test_grid_schema_is_the_systems_param() -> None:
    """The grid's keys are :class:`sysmodel.systems.Param` (one schema class): an open minimum and computed
    choices read the same from ``--set`` (parse) as from a grid (check)."""
    from sysmodel.systems import Param

    assert all(isinstance(p, Param) for grid in sweep.SCHEMA.values() for p in grid.values())
    rate = Param("rate", 1.0, "a rate", minimum=0, open_minimum=True)
    assert rate.parse("0.5") == 0.5
    with pytest.raises(ValueError, match=r"^rate: '0' not allowed; allowed: > 0$"):
        rate.parse("0")
    with pytest.raises(ValueError, match=r"^grid.rate: 0 not allowed; a number > 0$"):
        rate.check(0, "grid.rate")
    pick = Param("pick", "a", "a letter", lambda: ["a", "b"])
    assert pick.parse("b") == "b"
    with pytest.raises(ValueError, match=r"^pick: 'c' not allowed; allowed: a, b$"):
        pick.parse("c")
    with pytest.raises(ValueError, match=r"^grid.pick: 'c' not allowed; one of a, b$"):
        pick.check("c", "grid.pick")


def test_a_points_defaults_are_the_schemas_and_equal_the_engines() -> None:
    """A key a grid leaves out runs at its SCHEMA Param's default (the one place the sweep holds it), and those
    defaults are the engines' and the registered systems' own: decode_step's batch, context and weight bytes
    (the gpu system's too), Engine's device count, deca_point's N and {W, L}, Kernel's density, the deca
    system's scheme, machine and decompressor."""
    import inspect

    from sysmodel.cost.stage import Engine, decode_step
    from sysmodel.designs.deca import roof_surface as dm
    from sysmodel.systems import get

    step, point, deca = (
        inspect.signature(decode_step).parameters,
        inspect.signature(dm.deca_point).parameters,
        get("deca"),
    )
    assert sweep.defaults("decode") == {
        "batch": step["batch"].default,
        "kv_len": step["kv_len"].default,
        "wbytes": step["wbytes"].default,
        "gpus": Engine.count,
    }
    assert get("gpu").param("wbytes").default == step["wbytes"].default
    assert sweep.defaults("deca") == {
        "n": point["n"].default,
        "w": point["w"].default,
        "lanes": point["lanes"].default,
        "density": dm.Kernel("q8").density,
        **{k: deca.param(k).default for k in ("scheme", "machine")},
        "system": deca.param("decompressor").default,
    }
    given = {"model": "llama2-7b", "device": "rtx4090"}
    full = {**given, **sweep.defaults("decode")}
    assert sweep.run_point("decode", given)["latency_ms"] == sweep.run_point("decode", full)["latency_ms"]
    assert sweep.run_point("deca", {})["tflops"] == sweep.run_point("deca", sweep.defaults("deca"))["tflops"]


@pytest.mark.parametrize(
    ("name", "needle"), [("", "not allowed"), ("x.json", "x.json not allowed; a .csv or .parquet")]
)
def test_out_is_a_csv_or_parquet_file(name, needle, tmp_path, capsys) -> None:
    """A directory gave Python's rename error naming a temporary file; x.json got CSV text."""
    assert main(["sweep", str(EXAMPLES / "decode.toml"), "--out", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out: {tmp_path / name}" in err and needle in err
    assert list(tmp_path.iterdir()) == []
