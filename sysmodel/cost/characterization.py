"""Characterization: the measured cycle numbers the system model uses, and the one record type that
carries them from a testbench (tb/charz.py writes it) to the system model (this module reads it).

Testbenches write one :class:`Record` per (unit, parameters, simulator) to build/characterization/.
`membound characterize` merges them into the committed snapshot sysmodel/data/characterization.json (newer
records replace older ones, nothing else is dropped), so reports run without simulating first; :func:`lookup`
reads the snapshot once per process, again only when the file changed or after :func:`reload`;
tests/test_characterization.py fails when the snapshot disagrees with a unit's documented cycle model (a stale
snapshot).
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path

from sysmodel.outputs import write_text

SNAPSHOT = Path(__file__).parent.parent / "data" / "characterization.json"
AREA_SNAPSHOT = Path(__file__).parent.parent / "data" / "area.json"  # Yosys cell counts: `make area` (tb/area.py)
MACHINE_FIELDS = ("sim_cycles", "wall_s")  # how fast this machine simulated: not part of the snapshot


# A record field's annotation -> the JSON values it accepts and their name in an error (bools are refused)
_FIELD_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "str": (str, "a string"),
    "dict": (dict, "an object"),
    "int": (int, "a whole number"),
    "float": ((int, float), "a number"),
}


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
        if not isinstance(d, dict):
            raise ValueError(f"record: a JSON object of fields expected, not a {type(d).__name__}")
        required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        if required - set(d):
            raise ValueError(f"record: missing fields {sorted(required - set(d))}")
        for f in fields(cls):
            want = _FIELD_TYPES[str(f.type)]
            if f.name in d and (isinstance(d[f.name], bool) or not isinstance(d[f.name], want[0])):
                raise ValueError(f"record: {f.name} is {d[f.name]!r}; {want[1]} expected")
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self, snapshot: bool = False) -> dict:
        d = asdict(self)
        return {k: v for k, v in d.items() if not (snapshot and k in MACHINE_FIELDS)}

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_text(path, json.dumps(self.to_dict(), indent=1, sort_keys=True))


def read(path: Path) -> Record:
    """The record in ``path``; a ValueError naming the file when it is not one."""
    try:
        return Record.from_dict(json.loads(path.read_bytes()))
    except (ValueError, UnicodeDecodeError) as e:  # json.JSONDecodeError is a ValueError
        raise ValueError(f"{path}: not a characterization record ({e})") from None


def _key(rec: Record) -> str:
    return json.dumps([rec.unit, rec.params], sort_keys=True)


def collect(
    records_dir: Path, required: dict[str, list[tuple[str, dict]]], out: Path = SNAPSHOT
) -> tuple[list[Record], ...]:
    """Merge every record in ``records_dir`` into the snapshot ``out``: a record replaces the snapshot's entry
    for the same unit and parameters when it is as new or newer, every other entry is kept. Refuses (a
    ValueError naming them) to write a snapshot that lacks a record some system reads (``required``: system
    -> [(unit, params)]; :func:`sysmodel.systems.required_records` for the registered ones). Written
    atomically. Returns (added, replaced, kept)."""
    if not records_dir.is_dir():
        what = "is not a directory" if records_dir.exists() else "does not exist"
        raise ValueError(f"--records: {records_dir} {what} (`make sim` writes the records to build/characterization)")
    fresh: dict[str, Record] = {}
    for path in sorted(records_dir.glob("*.json")):
        rec = read(path)
        if _key(rec) not in fresh or rec.date >= fresh[_key(rec)].date:
            fresh[_key(rec)] = rec
    if not fresh:
        raise ValueError(f"--records: no characterization records in {records_dir}; run `make sim` first")
    entries = {_key(r): r for r in load(out)}
    added = [r for k, r in fresh.items() if k not in entries]
    replaced = [r for k, r in fresh.items() if k in entries and r.date >= entries[k].date]
    kept = [r for k, r in entries.items() if k not in {_key(x) for x in replaced}]
    entries.update({_key(r): r for r in added + replaced})
    have = set(entries)
    missing = sorted(
        {
            f"{unit} {params} (system {name})"
            for name, needs in required.items()
            for unit, params in needs
            if json.dumps([unit, params], sort_keys=True) not in have
        }
    )
    if missing:
        raise ValueError(
            f"characterize: refusing to write {out}: it would lack records systems read: {'; '.join(missing)}"
        )
    data = sorted(entries.values(), key=lambda r: (r.unit, json.dumps(r.params, sort_keys=True)))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, json.dumps({"records": [r.to_dict(snapshot=True) for r in data]}, indent=1, sort_keys=True) + "\n")
    reload(out)
    return added, replaced, kept


def load(path: Path = SNAPSHOT) -> list[Record]:
    """The snapshot's records (none when it does not exist); a ValueError naming the file when unreadable."""
    if not path.exists():
        return []
    try:
        return [Record.from_dict(r) for r in json.loads(path.read_bytes())["records"]]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a characterization snapshot ({type(e).__name__}: {e})") from None


# path -> (its (mtime_ns, size) when read, its records): lookup reads a snapshot once per process
_LOADED: dict[Path, tuple[tuple[int, int] | None, list[Record]]] = {}


def reload(path: Path = SNAPSHOT) -> None:
    """Forget ``path``'s cached records, so the next :func:`lookup` rereads it (``collect`` calls this after
    writing, for a change the file's mtime and size may not show within the filesystem's time resolution)."""
    _LOADED.pop(path, None)


def _records(path: Path) -> list[Record]:
    """``path``'s records, read once and again only when its mtime or size changed (or after :func:`reload`)."""
    st = path.stat() if path.exists() else None
    stamp = (st.st_mtime_ns, st.st_size) if st else None
    if path not in _LOADED or _LOADED[path][0] != stamp:
        _LOADED[path] = (stamp, load(path))
    return _LOADED[path][1]


def lookup(unit: str, path: Path = SNAPSHOT, **params) -> Record:
    for m in _records(path):
        if m.unit == unit and m.params == params:
            return m
    raise KeyError(f"no characterization of {unit} with {params} in {path}; run `make characterize`")


def load_area(paper: str, path: Path = AREA_SNAPSHOT) -> dict[str, dict]:
    """{design: point} of ``paper``'s units in the area snapshot; empty before `make area` ran."""
    if not path.exists():
        return {}
    return {p["design"]: p for p in json.loads(path.read_text())["points"] if p["paper"] == paper}
