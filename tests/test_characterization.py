"""The committed characterization snapshot is fresh: every testbench has a record, and each record's
measured latency/II equals the unit's documented cycle model (rerun `make characterize` when not)."""

import importlib
import json

import pytest

from hw.arith.cycles import UNIT_FPMUL
from hw.hermes.cycles import UNIT_GEMV
from sysmodel.cost import characterization
from sysmodel.systems import required_records
from tb.case import load_case
from tb.registry import all_specs


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.tag)
def test_snapshot_matches_cycle_model(spec) -> None:
    measured = characterization.lookup(spec.unit, **spec.all_params)
    assert measured.params == spec.all_params
    model = importlib.import_module(spec.component.split(":")[0]).cycle_model(**spec.all_params)
    assert (measured.latency, measured.ii) == (model.latency, model.ii), (
        f"{spec.tag}: snapshot {measured.latency}/{measured.ii} vs cycle model {model.latency}/{model.ii}"
    )
    cap = load_case(spec).max_items if spec.test_module == "tb.stream_tb" else None
    assert measured.vectors >= min(10000, cap or 10000)  # a wide unit's cap counts beats of many values


def test_collect_rejects_empty_dir(tmp_path) -> None:
    with pytest.raises(ValueError, match="--records: no characterization records"):
        characterization.collect(tmp_path, required_records(), tmp_path / "snap.json")


def test_collect_keeps_newest(tmp_path) -> None:
    base = {
        "unit": "u",
        "params": {"n": 1},
        "latency": 2,
        "ii": 1,
        "cycles_per_transaction": 1,
        "vectors": 5,
        "simulator": "icarus",
        "model": {"latency": 2, "ii": 1},
    }
    (tmp_path / "a.json").write_text(json.dumps({**base, "date": "2026-01-01", "latency": 9}))
    (tmp_path / "b.json").write_text(json.dumps({**base, "date": "2026-02-01"}))
    added, replaced, kept = characterization.collect(tmp_path, {}, tmp_path / "snap.json")
    assert [r.latency for r in added] == [2] and not replaced and not kept


def _record(unit: str, params: dict, date: str, latency: int = 2) -> dict:
    return {
        "unit": unit,
        "params": params,
        "latency": latency,
        "ii": 1,
        "cycles_per_transaction": 1,
        "vectors": 5,
        "simulator": "icarus",
        "date": date,
        "model": {"latency": latency, "ii": 1},
    }


def test_characterize_merges_a_partial_record_set(tmp_path, capsys) -> None:
    """A partial `make sim` adds and replaces records; every other record of the snapshot stays."""

    snap = tmp_path / "snap.json"
    snap.write_text(characterization.SNAPSHOT.read_text())
    before = characterization.load(snap)
    records = tmp_path / "records"
    records.mkdir()
    old = characterization.lookup(UNIT_GEMV, snap)
    (records / "a.json").write_text(json.dumps({**old.to_dict(), "date": "2099-01-01", "latency": old.latency}))
    (records / "b.json").write_text(json.dumps(_record("new_unit", {"n": 3}, "2099-01-01")))
    added, replaced, kept = characterization.collect(records, required_records(), snap)
    after = characterization.load(snap)
    assert [r.unit for r in added] == ["new_unit"] and [r.unit for r in replaced] == [UNIT_GEMV]
    assert len(after) == len(before) + 1 and len(kept) == len(before) - 1
    assert characterization.lookup(UNIT_GEMV, snap).date == "2099-01-01"
    assert {(r.unit, json.dumps(r.params, sort_keys=True)) for r in before} <= {
        (r.unit, json.dumps(r.params, sort_keys=True)) for r in after
    }
    assert not list(tmp_path.glob(".snap.*"))  # no temporary left beside it


def test_characterize_refuses_a_snapshot_that_drops_what_systems_read(tmp_path, capsys) -> None:
    """Starting from nothing, one unit's records would leave the systems without theirs: refused, by name,
    and nothing is written."""
    from sysmodel.cli import main

    records = tmp_path / "records"
    records.mkdir()
    (records / "a.json").write_text(json.dumps(_record(UNIT_FPMUL, {"fmt_in": "bf16"}, "2099-01-01")))
    snap = tmp_path / "snap.json"
    with pytest.raises(ValueError, match="hermes_gemv .*system hermes.*l3_rank"):
        characterization.collect(records, required_records(), snap)
    assert not snap.exists()
    assert main(["characterize", "--records", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert f"--records: {tmp_path / 'none'} does not exist" in err and err.count("\n") == 1


def test_record_units_are_the_cycle_models_constants() -> None:
    """Each record's ``unit`` key is one constant of its unit's plain cycle model (tb writes it, sysmodel
    reads it), and every such constant names a committed record: no key is spelled twice."""
    modules = [importlib.import_module(f"hw.{p}.cycles") for p in ("arith", "deca", "duplex", "hermes", "l3")]
    keys = [u for m in modules for u in m.UNITS]
    assert len(keys) == len(set(keys))
    assert all(getattr(m, n) in m.UNITS for m in modules for n in dir(m) if n.startswith("UNIT_"))
    assert {r.unit for r in characterization.load()} == set(keys)
    assert {s.unit for s in all_specs()} <= set(keys)


@pytest.mark.parametrize("paper", ["duplex", "hermes", "l3"])
def test_paper_records_are_one_key_for_tb_system_and_snapshot(paper: str) -> None:
    """A paper's ``PAPER_RECORDS`` are what its System requires, what a paper-size testbench measures (same
    unit and params) and what the committed snapshot holds."""
    records = importlib.import_module(f"hw.{paper}.cycles").PAPER_RECORDS
    assert required_records()[paper] == list(records.items())
    specs = {(s.unit, tuple(sorted(s.all_params.items()))) for s in all_specs()}
    for unit, params in records.items():
        assert (unit, tuple(sorted(params.items()))) in specs
        assert characterization.lookup(unit, **params).params == params


def test_every_required_record_is_in_the_snapshot() -> None:
    """What each System's ``records=`` names (built from the cycle models' keys) the committed snapshot holds."""
    for unit, params in {(u, tuple(p.items())) for recs in required_records().values() for u, p in recs}:
        assert characterization.lookup(unit, **dict(params)).params == dict(params)


def test_lookup_reads_the_snapshot_once_until_it_changes(tmp_path, monkeypatch) -> None:
    """Repeated lookups read the file once; a rewrite (new mtime) or reload() makes the next lookup reread it."""
    snap = tmp_path / "snap.json"
    snap.write_text(characterization.SNAPSHOT.read_text())
    reads: list[object] = []
    real = characterization.load
    monkeypatch.setattr(characterization, "load", lambda p: reads.append(p) or real(p))
    first = characterization.lookup(UNIT_GEMV, snap)
    for _ in range(5):
        assert characterization.lookup(UNIT_GEMV, snap) == first
    assert len(reads) == 1
    data = json.loads(snap.read_text())
    for r in data["records"]:
        r["date"] = "2099-01-01" if r["unit"] == UNIT_GEMV else r["date"]
    snap.write_text(json.dumps(data))
    assert characterization.lookup(UNIT_GEMV, snap).date == "2099-01-01" and len(reads) == 2
    characterization.reload(snap)
    characterization.lookup(UNIT_GEMV, snap)
    assert len(reads) == 3
