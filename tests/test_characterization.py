"""The committed characterization snapshot is fresh: every testbench has a record, and each record's
measured latency/II equals the unit's documented cycle model (rerun `make characterize` when not)."""

import importlib
import json

import pytest

from sysmodel import characterization
from tb.case import load_case
from tb.registry import all_specs


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: s.tag)
def test_snapshot_matches_cycle_model(spec) -> None:
    measured = characterization.lookup(spec.unit, **spec.all_params)
    assert measured.params == spec.all_params
    model = importlib.import_module(spec.component.split(":")[0]).cycle_model(**spec.all_params)
    assert (measured.latency, measured.ii) == (model.latency, model.ii), \
        f"{spec.tag}: snapshot {measured.latency}/{measured.ii} vs cycle model {model.latency}/{model.ii}"
    cap = load_case(spec).max_items if spec.test_module == "tb.stream_tb" else None
    assert measured.vectors >= min(10000, cap or 10000)  # a wide unit's cap counts beats of many values


def test_collect_rejects_empty_dir(tmp_path) -> None:
    with pytest.raises(ValueError, match="records_dir: no characterization records"):
        characterization.collect(tmp_path, tmp_path / "snap.json")


def test_collect_keeps_newest(tmp_path) -> None:
    base = {"unit": "u", "params": {"n": 1}, "latency": 2, "ii": 1, "cycles_per_transaction": 1,
            "vectors": 5, "simulator": "icarus", "model": {"latency": 2, "ii": 1}}
    (tmp_path / "a.json").write_text(json.dumps({**base, "date": "2026-01-01", "latency": 9}))
    (tmp_path / "b.json").write_text(json.dumps({**base, "date": "2026-02-01"}))
    (out,) = characterization.collect(tmp_path, tmp_path / "snap.json")
    assert out.latency == 2
