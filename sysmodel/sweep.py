"""`membound sweep CONFIG`: a parameter grid run in a process pool (or on a Dask cluster), written as CSV
(or Parquet when the output path ends in .parquet).

A config (TOML or YAML) names a sweep ``kind`` and a ``grid`` of lists; every combination is a point:

    kind = "decode"                       # next-token latency of a model on a device (sysmodel.cost)
    out = "build/sweeps/decode.csv"
    [grid]
    model = ["llama2-7b", "opt-6.7b"]
    device = ["rtx4090", "a100-80g-sxm"]
    batch = [1, 16]
    kv_len = [1024]
    wbytes = [2.0, 0.5]
    # optional: gpus (tensor parallel), mem_bw (B/s), eta_compute, eta_memory (default AttAcc's 0.8, 0.85)

    kind = "deca"                         # Roof-Surface point of a compressed GeMM (sysmodel.deca)
    [grid]
    machine = ["SPR-HBM", "SPR-DDR5"]; scheme = ["q8"]; density = [1.0, 0.3]; n = [1, 16]
    w = [32]; lanes = [8]; system = ["deca", "sw"]

Configs are validated before anything runs: unknown kinds, keys, models or devices, empty grids, a
bandwidth of zero — each a ValueError naming the field. A point that is valid but cannot run (weights plus
KV cache over the devices' memory) is kept in the output with ``feasible`` false, the ``reason``, and no
latency or throughput — the same reason the Python API raises as ``sysmodel.cost.Infeasible``.

Executors: a local process pool by default (``--workers N``), or an existing Dask cluster
(``--scheduler tcp://HOST:PORT``, ``dask.distributed``). A progress bar shows on a terminal only.
"""

from __future__ import annotations

import csv
import itertools
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from sysmodel.progress import progress

KINDS = {
    "decode": {"model", "device", "batch", "kv_len", "wbytes", "mem_bw", "gpus", "eta_compute", "eta_memory"},
    "deca": {"machine", "scheme", "density", "n", "w", "lanes", "system"},
}


def load_config(path: Path) -> dict:
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        import yaml

        cfg = yaml.safe_load(text)
    elif path.suffix == ".toml":
        cfg = tomllib.loads(text)
    else:
        raise ValueError(f"config: {path.name} not allowed; a .toml, .yaml or .yml file")
    validate(cfg)
    return cfg


def validate(cfg: dict) -> None:
    kind = cfg.get("kind")
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} not allowed; allowed: {sorted(KINDS)}")
    grid = cfg.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise ValueError("grid: missing or empty; a table of parameter lists")
    for key, values in grid.items():
        if key not in KINDS[kind]:
            raise ValueError(f"grid.{key}: unknown for kind {kind}; allowed: {sorted(KINDS[kind])}")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid.{key}: must be a non-empty list")
    for point in points(cfg):
        check_point(kind, point)


def points(cfg: dict) -> list[dict]:
    grid = cfg["grid"]
    keys = sorted(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))]


def check_point(kind: str, p: dict) -> None:
    if kind == "decode":
        from sysmodel.devices import get_device
        from sysmodel.models import load_model

        load_model(p["model"])
        dev = get_device(p["device"])
        bw = p.get("mem_bw", dev.mem_bw)
        if bw <= 0:
            raise ValueError(f"grid.mem_bw: {bw} not allowed; a bandwidth must be > 0")
        if p.get("gpus", 1) < 1 or p.get("batch", 1) < 1:
            raise ValueError(f"grid.gpus, grid.batch: must be >= 1 (point {p})")
        _efficiency(p)
    else:
        from golden.deca import get_format
        from sysmodel.deca import model as deca

        get_format(p.get("scheme", "q8"))
        if p.get("machine", "SPR-HBM") not in {m.name for m in (deca.SPR_HBM, deca.SPR_DDR)}:
            raise ValueError(f"grid.machine: {p['machine']!r} not allowed; allowed: SPR-HBM, SPR-DDR5")
        if p.get("system", "deca") not in ("deca", "sw"):
            raise ValueError(f"grid.system: {p['system']!r} not allowed; allowed: deca, sw")


def _efficiency(p: dict):
    from sysmodel.cost import ATTACC, Efficiency

    if "eta_compute" not in p and "eta_memory" not in p:
        return ATTACC
    return Efficiency(p.get("eta_compute", ATTACC.compute), p.get("eta_memory", ATTACC.memory), "sweep grid")


def run_point(kind: str, p: dict) -> dict:
    if kind == "decode":
        from dataclasses import replace

        from sysmodel.cost import Engine, Infeasible, decode_step, require_fit
        from sysmodel.devices import get_device
        from sysmodel.models import load_model

        cfg, dev = load_model(p["model"]), get_device(p["device"])
        if "mem_bw" in p:
            dev = replace(dev, mem_bw=p["mem_bw"])
        batch, kv_len, wbytes, gpus = p.get("batch", 1), p.get("kv_len", 1024), p.get("wbytes", 2.0), p.get("gpus", 1)
        try:
            require_fit(cfg, gpus * dev.mem_bytes, f"{gpus} x {p['device']}", batch, kv_len, wbytes)
        except Infeasible as e:
            return {**p, "feasible": False, "reason": str(e), "latency_ms": None, "tokens_per_s": None}
        t = float(decode_step(cfg, Engine(dev, _efficiency(p), gpus), batch, kv_len, wbytes))
        return {**p, "feasible": True, "reason": "", "latency_ms": t * 1e3, "tokens_per_s": batch / t}
    from sysmodel.deca import model as deca

    m = deca.SPR_HBM if p.get("machine", "SPR-HBM") == "SPR-HBM" else deca.SPR_DDR
    k = deca.Kernel(p.get("scheme", "q8"), p.get("density", 1.0))
    n = p.get("n", 16)
    from sysmodel.cost import Infeasible

    try:
        if p.get("system", "deca") == "sw":
            flops, bound = deca.sw_point(m, k, n)
        else:
            flops, bound = deca.deca_point(m, k, n, p.get("w", 32), p.get("lanes", 8))
    except Infeasible as e:  # a format the PE rejects at this design point
        return {**p, "feasible": False, "reason": str(e), "tflops": None, "bound": None}
    return {**p, "feasible": True, "reason": "", "tflops": flops / 1e12, "bound": bound}


def _run(args: tuple[str, dict]) -> dict:
    return run_point(*args)


def _map_local(jobs: list, workers: int | None, bar) -> list[dict]:
    rows = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for row in pool.map(_run, jobs):
            rows.append(row)
            bar.update()
    return rows


def _map_dask(jobs: list, scheduler: str, bar) -> list[dict]:
    from dask.distributed import Client, as_completed

    with Client(scheduler) as client:
        futures = client.map(_run, jobs, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        rows: list[dict | None] = [None] * len(jobs)
        for fut in as_completed(futures):
            rows[index[fut.key]] = fut.result()
            bar.update()
    return rows


def sweep(cfg: dict, out: Path | None = None, workers: int | None = None, scheduler: str | None = None) -> Path:
    """Run every point of ``cfg`` in a local process pool (``workers``) or on the Dask cluster at
    ``scheduler`` (``tcp://host:port``, or a ``dask.distributed`` object address); rows keep grid order."""
    pts = points(cfg)
    out = Path(out or cfg.get("out", f"build/sweeps/{cfg['kind']}.csv"))
    out.parent.mkdir(parents=True, exist_ok=True)
    jobs = [(cfg["kind"], p) for p in pts]
    with progress(len(jobs), f"sweep {cfg['kind']}") as bar:
        rows = _map_dask(jobs, scheduler, bar) if scheduler else _map_local(jobs, workers, bar)
    if out.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), out)
    else:
        with out.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    infeasible = sum(1 for r in rows if r.get("feasible") is False)
    print(f"wrote {out} ({len(rows)} points" + (f", {infeasible} infeasible: see the reason column)" if infeasible
                                                 else ")"))
    return out
