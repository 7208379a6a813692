"""Characterization records: what a testbench measured, in the format the system model reads.

One JSON file per (unit, parameters, simulator) under ``build/characterization/``:
``{"unit", "params", "latency", "ii", "cycles_per_transaction", "vectors", "simulator", "date",
"model": {"latency", "ii"}, "sim_cycles", "wall_s", "extra": {...}}``. ``model`` is the unit's documented
cycle model, which the testbench asserted the measurement against.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

from hw.cycles import CycleModel


def record_path(tag: str, sim: str, root: Path | None = None) -> Path:
    root = root or Path(os.environ.get("MEMBOUND_CHARZ_DIR", "build/characterization"))
    return root / f"{tag}.{sim}.json"


def write_record(unit: str, params: dict, tag: str, model: CycleModel, *, latency: int, ii: float,
                 cycles_per_transaction: float, vectors: int, sim_cycles: int, wall_s: float,
                 extra: dict | None = None) -> Path:
    sim = os.environ.get("MEMBOUND_SIM", "unknown")
    rec = {
        "unit": unit, "params": params, "latency": latency, "ii": ii,
        "cycles_per_transaction": cycles_per_transaction, "vectors": vectors, "simulator": sim,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "model": model.as_dict(), "sim_cycles": sim_cycles, "wall_s": round(wall_s, 3),
        "extra": extra or {},
    }
    path = record_path(tag, sim)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(rec, indent=1, sort_keys=True))
    tmp.replace(path)
    return path

