"""Writing characterization records: what a testbench measured, as the system model reads it
(:class:`sysmodel.cost.characterization.Record`), one JSON file per (unit, parameters, simulator) under
``build/characterization/``.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from hw.cycles import CycleModel
from sysmodel.cost.characterization import Record


def record_path(tag: str, sim: str, root: Path | None = None) -> Path:
    root = root or Path(os.environ.get("MEMBOUND_CHARZ_DIR", "build/characterization"))
    return root / f"{tag}.{sim}.json"


def write_record(
    unit: str,
    params: dict,
    tag: str,
    model: CycleModel,
    *,
    latency: int,
    ii: float,
    cycles_per_transaction: float,
    vectors: int,
    sim_cycles: int,
    wall_s: float,
    extra: dict | None = None,
) -> Path:
    sim = os.environ.get("MEMBOUND_SIM", "unknown")
    rec = Record(
        unit=unit,
        params=params,
        latency=latency,
        ii=ii,
        cycles_per_transaction=cycles_per_transaction,
        vectors=vectors,
        simulator=sim,
        date=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        model=model.as_dict(),
        sim_cycles=sim_cycles,
        wall_s=round(wall_s, 3),
        extra=extra or {},
    )
    return rec.write(record_path(tag, sim))
