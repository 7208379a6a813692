"""Characterization: the measured cycle numbers the system model uses, and the one record type that
carries them from a testbench (tb/charz.py writes it) to the system model (this module reads it).

Testbenches write one :class:`Record` per (unit, parameters, simulator) to build/characterization/.
`membound characterize` folds them into the committed snapshot sysmodel/data/characterization.json, so
reports run without simulating first; tests/test_characterization.py fails when the snapshot disagrees
with a unit's documented cycle model (a stale snapshot).
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path

SNAPSHOT = Path(__file__).parent / "data" / "characterization.json"
AREA_SNAPSHOT = Path(__file__).parent / "data" / "area.json"  # Yosys cell counts: `make area` (tb/area.py)
MACHINE_FIELDS = ("sim_cycles", "wall_s")  # how fast this machine simulated: not part of the snapshot


@dataclass(frozen=True)
class Record:
    """What a testbench measured. ``latency``/``ii`` in cycles (``ii`` may be a mean, e.g. DECA cycles per
    tile); ``model`` the unit's documented cycle model {latency, ii} the measurement was asserted
    against; ``vectors`` items checked bit-exactly; ``sim_cycles``/``wall_s`` simulated cycles and wall
    time of the vector test; ``extra`` unit-specific figures."""

    unit: str
    params: dict
    latency: int
    ii: float
    cycles_per_transaction: float
    vectors: int
    simulator: str
    date: str
    model: dict = field(default_factory=dict)
    sim_cycles: int = 0
    wall_s: float = 0.0
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict) -> Record:
        required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        if required - set(d):
            raise ValueError(f"record: missing fields {sorted(required - set(d))}")
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self, snapshot: bool = False) -> dict:
        d = asdict(self)
        return {k: v for k, v in d.items() if not (snapshot and k in MACHINE_FIELDS)}

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{id(self)}")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True))
        tmp.replace(path)
        return path


def read(path: Path) -> Record:
    return Record.from_dict(json.loads(path.read_text()))


def collect(records_dir: Path, out: Path = SNAPSHOT) -> list[Record]:
    """Fold every record in ``records_dir`` into ``out`` (one entry per unit+params, newest wins)."""
    entries: dict[str, Record] = {}
    for path in sorted(records_dir.glob("*.json")):
        rec = read(path)
        key = json.dumps([rec.unit, rec.params], sort_keys=True)
        if key not in entries or rec.date >= entries[key].date:
            entries[key] = rec
    if not entries:
        raise ValueError(f"records_dir: no characterization records in {records_dir}; run `make sim` first")
    data = sorted(entries.values(), key=lambda r: (r.unit, json.dumps(r.params, sort_keys=True)))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"records": [r.to_dict(snapshot=True) for r in data]}, indent=1, sort_keys=True)
                   + "\n")
    return data


def load(path: Path = SNAPSHOT) -> list[Record]:
    if not path.exists():
        return []
    return [Record.from_dict(r) for r in json.loads(path.read_text())["records"]]


def lookup(unit: str, path: Path = SNAPSHOT, **params) -> Record:
    for m in load(path):
        if m.unit == unit and m.params == params:
            return m
    raise KeyError(f"no characterization of {unit} with {params} in {path}; run `make characterize`")


def load_area(paper: str, path: Path = AREA_SNAPSHOT) -> dict[str, dict]:
    """{design: point} of ``paper``'s units in the area snapshot; empty before `make area` ran."""
    if not path.exists():
        return {}
    return {p["design"]: p for p in json.loads(path.read_text())["points"] if p["paper"] == paper}
