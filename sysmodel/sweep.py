"""`membound sweep CONFIG`: a parameter grid run in a process pool, written as CSV (or Parquet when the
output path ends in .parquet).

A config (TOML or YAML) names a sweep ``kind`` and a ``grid`` of lists; every combination is a point:

    kind = "decode"                       # roofline next-token latency of a model on a device
    out = "build/sweeps/decode.csv"
    [grid]
    model = ["llama2-7b", "opt-6.7b"]
    device = ["rtx4090", "a100-80g-sxm"]
    batch = [1, 16]
    kv_len = [1024]
    wbytes = [2.0, 0.5]

    kind = "deca"                         # Roof-Surface point of a compressed GeMM (sysmodel.deca)
    [grid]
    machine = ["SPR-HBM", "SPR-DDR5"]; scheme = ["q8"]; density = [1.0, 0.3]; n = [1, 16]
    w = [32]; lanes = [8]; system = ["deca", "sw"]

Configs are validated before anything runs: unknown kinds, keys, models or devices, empty grids, a
model that does not fit in the device's memory, a bandwidth of zero — each a ValueError naming the field.
"""

from __future__ import annotations

import csv
import itertools
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

KINDS = {
    "decode": {"model", "device", "batch", "kv_len", "wbytes", "mem_bw"},
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

        cfg, dev = load_model(p["model"]), get_device(p["device"])
        bw = p.get("mem_bw", dev.mem_bw)
        if bw <= 0:
            raise ValueError(f"grid.mem_bw: {bw} not allowed; a bandwidth must be > 0")
        need = cfg.params() * p.get("wbytes", 2.0)
        if need > dev.mem_bytes:
            raise ValueError(f"model: {p['model']} needs {need / 1e9:.1f} GB at {p.get('wbytes', 2.0)} B/weight; "
                             f"{p['device']} holds {dev.mem_bytes / 1e9:.0f} GB")
    else:
        from golden.deca import get_format
        from sysmodel import deca

        get_format(p.get("scheme", "q8"))
        if p.get("machine", "SPR-HBM") not in {m.name for m in (deca.SPR_HBM, deca.SPR_DDR)}:
            raise ValueError(f"grid.machine: {p['machine']!r} not allowed; allowed: SPR-HBM, SPR-DDR5")
        if p.get("system", "deca") not in ("deca", "sw"):
            raise ValueError(f"grid.system: {p['system']!r} not allowed; allowed: deca, sw")


def run_point(kind: str, p: dict) -> dict:
    if kind == "decode":
        from dataclasses import replace

        from sysmodel.devices import get_device
        from sysmodel.models import load_model, operators

        cfg = load_model(p["model"])
        dev = get_device(p["device"])
        if "mem_bw" in p:
            dev = replace(dev, mem_bw=p["mem_bw"])
        t = 0.0
        for layer in range(cfg.layers):
            for op in operators(cfg, "decode", p.get("batch", 1), kv_len=p.get("kv_len", 1024),
                                wbytes=p.get("wbytes", 2.0), layer=layer):
                t += dev.time(op.flops, op.weight_bytes + op.kv_bytes)
        return {**p, "latency_ms": t * 1e3, "tokens_per_s": p.get("batch", 1) / t}
    from sysmodel import deca

    m = deca.SPR_HBM if p.get("machine", "SPR-HBM") == "SPR-HBM" else deca.SPR_DDR
    k = deca.Kernel(p.get("scheme", "q8"), p.get("density", 1.0))
    n = p.get("n", 16)
    if p.get("system", "deca") == "sw":
        flops, bound = deca.sw_point(m, k, n)
    else:
        flops, bound = deca.deca_point(m, k, n, p.get("w", 32), p.get("lanes", 8))
    return {**p, "tflops": flops / 1e12, "bound": bound}


def _run(args: tuple[str, dict]) -> dict:
    return run_point(*args)


def sweep(cfg: dict, out: Path | None = None, workers: int | None = None) -> Path:
    pts = points(cfg)
    out = Path(out or cfg.get("out", f"build/sweeps/{cfg['kind']}.csv"))
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for i, row in enumerate(pool.map(_run, [(cfg["kind"], p) for p in pts]), 1):
            rows.append(row)
            print(f"\rsweep {cfg['kind']}: {i}/{len(pts)} points", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if out.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), out)
    else:
        with out.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    print(f"wrote {out} ({len(rows)} points)")
    return out
