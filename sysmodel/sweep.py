"""`membound sweep CONFIG`: a parameter grid run in a process pool (or on a Dask cluster), written as CSV
(or Parquet when the output path ends in .parquet).

A config (TOML or YAML) names a sweep ``kind`` and a ``grid`` of lists; every combination is a point:

    kind = "decode"                       # next-token latency of a model on a device (sysmodel.cost.stage)
    out = "build/sweeps/decode.csv"
    [grid]
    model = ["llama2-7b", "opt-6.7b"]
    device = ["rtx4090", "a100-80g-sxm"]
    batch = [1, 16]
    kv_len = [1024]
    wbytes = [2.0, 0.5]
    # optional: gpus (tensor parallel), mem_bw (B/s), eta_compute, eta_memory (default AttAcc's 0.8, 0.85)

    kind = "deca"                         # Roof-Surface point of a compressed GeMM (sysmodel.designs.deca)
    [grid]
    machine = ["SPR-HBM", "SPR-DDR5"]; scheme = ["q8"]; density = [1.0, 0.3]; n = [1, 16]
    w = [32]; lanes = [8]; system = ["deca", "sw"]

Configs are validated before anything runs: unknown kinds, keys, models or devices, empty grids, a
bandwidth of zero — each a ValueError naming the field. A point that is valid but cannot run is kept in the
output with ``feasible`` false, the ``reason``, and no latency or throughput: weights plus KV cache over the
devices' memory (the reason the Python API raises as ``sysmodel.cost.stage.Infeasible``), or a ``kv_len``
past the model's context (``serve`` refuses such lengths too).

Executors: a local process pool by default (``--workers N``), or an existing Dask cluster
(``--scheduler tcp://HOST:PORT``, ``dask.distributed``). A progress bar shows on a terminal only.
"""

from __future__ import annotations

import csv
import itertools
import math
import pickle
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from golden.deca_spec import LANES, W
from sysmodel.cluster import client
from sysmodel.engines.workload import USER_ENCODING, text_file
from sysmodel.progress import progress
from sysmodel.systems import Param


def _models() -> list[str]:
    from sysmodel.cost.models import available

    return available()


def _devices() -> list[str]:
    from sysmodel.cost.devices import DEVICES

    return list(DEVICES)


def _grid(*params: Param) -> dict[str, Param]:
    return {p.name: p for p in params}


# kind -> key -> Param: a key a grid leaves out runs at its Param's default (None: the engine's own — the
# device's bandwidth, AttAcc's efficiency); tests/test_sweep.py holds each default equal to the engine's
SCHEMA = {
    "decode": _grid(
        Param("model", None, "a zoo model or a config.json", _models, required=True, config_path=True, kind=str),
        Param("device", None, "a device of sysmodel.cost.devices", _devices, required=True, kind=str),
        Param("batch", 1, "sequences per decode step", minimum=1, kind=int),
        Param("kv_len", 1024, "context tokens", minimum=0, kind=int),
        Param("wbytes", 2.0, "bytes per weight", minimum=0, maximum=8, open_minimum=True, kind=float),
        Param("mem_bw", None, "the device's memory bandwidth, B/s", minimum=0, open_minimum=True, kind=float),
        Param("gpus", 1, "tensor-parallel devices", minimum=1, maximum=1024, kind=int),
        Param("eta_compute", None, "compute efficiency", minimum=0, maximum=1, open_minimum=True, kind=float),
        Param("eta_memory", None, "memory efficiency", minimum=0, maximum=1, open_minimum=True, kind=float),
    ),
    "deca": _grid(
        Param("machine", "SPR-HBM", "the Sapphire Rapids machine", ("SPR-HBM", "SPR-DDR5"), kind=str),
        Param("scheme", "q8", "a compression scheme sysmodel.designs.deca models", ("q16", "q8", "q4"), kind=str),
        Param("density", 1.0, "share of nonzero weights", minimum=0, maximum=1, open_minimum=True, kind=float),
        Param("n", 16, "the GeMM's N (tokens); DECA Table 2's", minimum=1, kind=int),
        Param("w", W, "the PE's W", minimum=1, maximum=1024, kind=int),
        Param("lanes", LANES, "the PE's lanes", minimum=1, maximum=1024, kind=int),
        Param("system", "deca", "DECA or software decompression", ("deca", "sw"), kind=str),
    ),
}
KINDS = {k: set(v) for k, v in SCHEMA.items()}


def load_config(path: Path) -> dict:
    """A TOML or YAML config, parsed (a syntax error names its line) and validated (:func:`validate`)."""
    if path.suffix not in (".yaml", ".yml", ".toml"):
        raise ValueError(f"config: {path.name} not allowed; a .toml, .yaml or .yml file")
    if not path.is_file():
        raise ValueError(f"config: {path} {'is not a file' if path.exists() else 'does not exist'}")
    with text_file("config", path):
        text = path.read_text(USER_ENCODING)
    if path.suffix == ".toml":
        try:
            cfg = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"config: {path.name}: not valid TOML: {e}") from None
    else:
        import yaml

        try:
            cfg = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise ValueError(f"config: {path.name}: not valid YAML{where}: {getattr(e, 'problem', e)}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"config: {path.name}: a table of settings (kind, grid) expected")
    validate(cfg)
    return cfg


def validate(cfg: dict) -> None:
    """Every key and value of every grid point against :data:`SCHEMA`, then what only a point can say (a
    format the PE's W rejects runs as infeasible, so it passes here)."""
    kind = cfg.get("kind")
    if not isinstance(kind, str) or kind not in SCHEMA:  # a YAML list or table is unhashable: a TypeError
        raise ValueError(f"kind: {kind!r} not allowed; allowed: {sorted(SCHEMA)}")
    grid = cfg.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise ValueError("grid: missing or empty; a table of parameter lists")
    for key, values in grid.items():
        if key not in SCHEMA[kind]:
            raise ValueError(f"grid.{key}: unknown for kind {kind}; allowed: {sorted(SCHEMA[kind])}")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid.{key}: must be a non-empty list")
        for v in values:
            SCHEMA[kind][key].check(v, f"grid.{key}")
    for key, f in SCHEMA[kind].items():
        if f.required and key not in grid:
            raise ValueError(f"grid.{key}: missing; kind {kind} needs it ({f.describe()})")
    if cfg.get("out") is not None and not isinstance(cfg["out"], str):
        raise ValueError(f"out: {cfg['out']!r} not allowed; a file path")


def points(cfg: dict) -> list[dict]:
    grid = cfg["grid"]
    keys = sorted(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))]


def _efficiency(p: dict):
    from sysmodel.cost.stage import ATTACC, Efficiency

    if "eta_compute" not in p and "eta_memory" not in p:
        return ATTACC
    return Efficiency(p.get("eta_compute", ATTACC.compute), p.get("eta_memory", ATTACC.memory), "sweep grid")


def defaults(kind: str) -> dict:
    """The values a ``kind`` point runs at for the keys its grid leaves out (the engine's own when None)."""
    return {k: f.default for k, f in SCHEMA[kind].items() if f.default is not None}


def run_point(kind: str, p: dict) -> dict:
    """One grid point's row: ``p`` as given, then the results of running it with :func:`defaults` filled in."""
    q = {**defaults(kind), **p}
    if kind == "decode":
        from dataclasses import replace

        from sysmodel.cost.devices import get_device
        from sysmodel.cost.models import load_model
        from sysmodel.cost.stage import Engine, Infeasible, decode_step, require_fit

        cfg, dev = load_model(q["model"]), get_device(q["device"])
        if "mem_bw" in q:
            dev = replace(dev, mem_bw=q["mem_bw"])
        batch, kv_len, wbytes, gpus = q["batch"], q["kv_len"], q["wbytes"], q["gpus"]
        try:
            if cfg.context and kv_len + 1 > cfg.context:  # the token decoded sits at position kv_len
                raise Infeasible(f"{cfg.name}: {kv_len} + 1 tokens exceed its context of {cfg.context} tokens")
            require_fit(cfg, gpus * dev.mem_bytes, f"{gpus} x {q['device']}", batch, kv_len, wbytes)
        except Infeasible as e:
            return {**p, "feasible": False, "reason": str(e), "latency_ms": None, "tokens_per_s": None}
        t = float(decode_step(cfg, Engine(dev, _efficiency(q), gpus), batch, kv_len, wbytes))
        return {**p, "feasible": True, "reason": "", "latency_ms": t * 1e3, "tokens_per_s": batch / t}
    from sysmodel.designs.deca import roof_surface as deca

    m = deca.SPR_HBM if q["machine"] == "SPR-HBM" else deca.SPR_DDR
    k = deca.Kernel(q["scheme"], q["density"])
    from sysmodel.cost.stage import Infeasible

    try:
        if q["system"] == "sw":
            flops, bound = deca.sw_point(m, k, q["n"])
        else:
            flops, bound = deca.deca_point(m, k, q["n"], q["w"], q["lanes"])
    except Infeasible as e:  # a format the PE rejects at this design point
        return {**p, "feasible": False, "reason": str(e), "tflops": None, "bound": None}
    return {**p, "feasible": True, "reason": "", "tflops": flops / 1e12, "bound": bound}


def _run_chunk(args: tuple[str, list[dict]]) -> list[dict]:
    kind, pts = args
    return [run_point(kind, p) for p in pts]


def _run_chunk_packed(args: tuple[str, list[dict]]) -> bytes:
    """:func:`_run_chunk` with its rows pickled: Dask sends bytes as they are, where a list of row dicts goes
    through its generic serialization (measured: 10,000 points 0.75 s that way, 0.50 s as bytes; the local
    pool 0.45 s)."""
    return pickle.dumps(_run_chunk(args), protocol=pickle.HIGHEST_PROTOCOL)


def chunk_size(points: int, workers: int) -> int:
    """Points per task: about four tasks per worker (load balance), at most 500 points each and at least
    one — a task per point costs the executor more than the point (Dask: ~6 ms a task)."""
    return max(1, min(500, math.ceil(points / (4 * max(workers, 1)))))


def _chunks(kind: str, pts: list[dict], size: int) -> list[tuple[str, list[dict]]]:
    return [(kind, pts[i : i + size]) for i in range(0, len(pts), size)]


def _map_local(kind: str, pts: list[dict], workers: int | None, bar) -> list[dict]:
    import os

    rows = []
    n = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=n) as pool:
        for chunk in pool.map(_run_chunk, _chunks(kind, pts, chunk_size(len(pts), n))):
            rows += chunk
            bar.update(len(chunk))
    return rows


def _map_dask(kind: str, pts: list[dict], scheduler: str, bar) -> list[dict]:
    from dask.distributed import as_completed

    with client(scheduler) as c:
        workers = sum(c.nthreads().values())
        chunks = _chunks(kind, pts, chunk_size(len(pts), workers))
        futures = c.map(_run_chunk_packed, chunks, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        out: list[list[dict] | None] = [None] * len(chunks)
        for fut in as_completed(futures):
            rows = pickle.loads(fut.result())
            out[index[fut.key]] = rows
            bar.update(len(rows))
    return [row for chunk in out if chunk is not None for row in chunk]


def sweep(cfg: dict, out: Path | None = None, workers: int | None = None, scheduler: str | None = None) -> Path:
    """Run every point of ``cfg`` in a local process pool (``workers``) or on the Dask cluster at
    ``scheduler`` (``tcp://host:port``), in chunks of points (:func:`chunk_size`); rows keep grid order; the
    output is written atomically (CSV, or Parquet for a .parquet path)."""
    from sysmodel.outputs import atomic, check_dir

    pts = points(cfg)
    if out is not None and not Path(out).parent.is_dir():  # a user's --out needs its directory
        check_dir(Path(out).parent, "--out")
        raise ValueError(f"--out: {Path(out).parent} does not exist (create it, or choose another directory)")
    option = "--out" if out is not None else "out"  # the command line's, or the config's
    out = Path(out or cfg.get("out", f"build/sweeps/{cfg['kind']}.csv"))
    if out.is_dir() or out.suffix not in (".csv", ".parquet"):  # a directory was Python's rename error
        raise ValueError(f"{option}: {out} not allowed; a .csv or .parquet file")
    check_dir(out.parent, "--out", parents=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with progress(len(pts), f"sweep {cfg['kind']}") as bar:
        rows = _map_dask(cfg["kind"], pts, scheduler, bar) if scheduler else _map_local(cfg["kind"], pts, workers, bar)
    with atomic(out) as tmp:
        if out.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), tmp)
        else:
            with tmp.open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    infeasible = sum(1 for r in rows if r.get("feasible") is False)
    print(
        f"wrote {out} ({len(rows)} points"
        + (f", {infeasible} infeasible: see the reason column)" if infeasible else ")")
    )
    return out
