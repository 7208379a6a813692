"""Characterization intake: the measured cycle numbers the system model uses.

Testbenches write records to build/characterization/ (tb/charz.py). `membound characterize` folds them
into the committed snapshot sysmodel/data/characterization.json, so reports run without simulating
first; tests/test_characterization.py fails when the snapshot disagrees with a unit's documented
cycle model (a stale snapshot).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

SNAPSHOT = Path(__file__).parent / "data" / "characterization.json"
KEEP = ("unit", "params", "latency", "ii", "cycles_per_transaction", "vectors", "simulator", "date", "model",
        "extra")


@dataclass(frozen=True)
class Measured:
    unit: str
    params: dict
    latency: int
    ii: float
    cycles_per_transaction: float
    vectors: int
    simulator: str
    date: str
    extra: dict = field(default_factory=dict)


def collect(records_dir: Path, out: Path = SNAPSHOT) -> list[dict]:
    """Fold every record in ``records_dir`` into ``out`` (one entry per unit+params, newest wins)."""
    entries: dict[str, dict] = {}
    for path in sorted(records_dir.glob("*.json")):
        rec = json.loads(path.read_text())
        key = json.dumps([rec["unit"], rec["params"]], sort_keys=True)
        if key not in entries or rec["date"] >= entries[key]["date"]:
            entries[key] = {k: rec[k] for k in KEEP if k in rec}
    if not entries:
        raise ValueError(f"records_dir: no characterization records in {records_dir}; run `make sim` first")
    data = sorted(entries.values(), key=lambda r: (r["unit"], json.dumps(r["params"], sort_keys=True)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"records": data}, indent=1, sort_keys=True) + "\n")
    return data


def load(path: Path = SNAPSHOT) -> list[Measured]:
    if not path.exists():
        return []
    return [Measured(**{k: r[k] for k in Measured.__dataclass_fields__ if k in r})
            for r in json.loads(path.read_text())["records"]]


def lookup(unit: str, path: Path = SNAPSHOT, **params) -> Measured:
    for m in load(path):
        if m.unit == unit and m.params == params:
            return m
    raise KeyError(f"no characterization of {unit} with {params} in {path}; run `make characterize`")
