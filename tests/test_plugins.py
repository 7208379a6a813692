"""Out-of-tree systems: the guide's example (examples/hbm_gemv.py) plugs in through MEMBOUND_SYSTEMS or an
entry point, serves and compares as the guide says; a plug-in's mistakes are one line naming them."""

import csv
import json
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from constant_system import ConstantSystem

from sysmodel import cache, systems
from sysmodel.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def registry(monkeypatch):
    """A registry of the in-tree systems that rediscovers plug-ins, restored afterwards: a plug-in registered
    here leaves no trace in other tests."""
    monkeypatch.setattr(systems, "_REGISTRY", dict(systems.entries()))
    monkeypatch.setattr(systems, "_DISCOVERED", False)
    monkeypatch.delenv(systems.PLUGIN_ENV, raising=False)
    monkeypatch.delitem(sys.modules, "hbm_gemv", raising=False)
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    return monkeypatch


def guide_block() -> tuple[dict[str, str], list[list[str]]]:
    """The guide's plug-in block: its `export` settings and its membound commands."""
    text = (ROOT / "docs" / "guide.md").read_text().split("## Adding a design")[1].split("```sh")[1].split("```")[0]
    lines = [shlex.split(line) for line in text.strip().splitlines()]
    env = dict(w.split("=", 1) for w in lines[0][1:]) if lines[0][0] == "export" else {}
    return env, [line[1:] for line in lines if line[0] == "membound"]


def test_the_guide_example_plugs_in_serves_and_compares(registry, tmp_path, capsys) -> None:
    env, commands = guide_block()
    assert env == {"PYTHONPATH": "examples", "MEMBOUND_SYSTEMS": "hbm_gemv"}
    registry.setenv(systems.PLUGIN_ENV, env["MEMBOUND_SYSTEMS"])
    outs = []
    for i, argv in enumerate(commands):
        out = [] if argv[0] == "systems" else ["--out", str(tmp_path / str(i))]
        assert main([*argv, *out]) == 0, argv
        outs.append(capsys.readouterr().out)
    assert list(systems.entries())[-1] == "hbm-gemv"
    assert "\nhbm-gemv: HBM-side GEMV engines" in outs[0] and "    bw_tbps = 8.0: " in outs[0]
    assert "hbm-gemv | fixed (all at t=0) | 8 requests" in outs[1] and "settings bw_tbps=4" in outs[1]
    assert "- hbm-gemv: records none (analytical model); 4 constants; fits: none" in outs[2]
    assert "efficiency profile: gpu attacc, hbm-gemv attacc" in outs[2]
    rows = {r["system"]: r for r in csv.DictReader((tmp_path / "3" / "compare.csv").open())}
    assert rows["gpu"]["feasible"] == "True" and rows["hbm-gemv"]["feasible"] == "False"
    assert rows["hbm-gemv"]["reason"] == "llama2-70b: 138 GB of weights do not fit 64 GB of HBM"
    prov = json.loads((tmp_path / "2" / "compare_provenance.json").read_text())["systems"]["hbm-gemv"]
    assert {c["name"] for c in prov["constants"]} >= {"bw_tbps", "engine_tflops", "capacity_gb", "efficiency"}


def test_a_plugin_is_refused_by_name_where_it_cannot_run(registry, tmp_path, capsys) -> None:
    registry.setenv(systems.PLUGIN_ENV, "hbm_gemv")
    argv = ["serve", "--system", "hbm-gemv", "--model", "llama2-7b", "--out", str(tmp_path)]
    for extra, msg in (
        (["--set", "capacity_gb=8"], "membound serve: llama2-7b: 13 GB of weights do not fit 8 GB of HBM\n"),
        (["--set", "bw_tbps=0"], "membound serve: bw_tbps: '0' not allowed; allowed: > 0\n"),
        (["--pp", "2"], "pp: system hbm-gemv does not say which weights share its KV memory"),
    ):
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, err


def test_an_installed_package_plugs_in_by_entry_point(registry, tmp_path) -> None:
    dist = tmp_path / "hbm_gemv_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hbm-gemv-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{systems.PLUGIN_GROUP}]\nhbm-gemv = hbm_gemv\n")
    registry.syspath_prepend(str(tmp_path))
    assert "hbm-gemv" in systems.entries()
    assert systems.build("hbm-gemv", "llama2-7b", ["bw_tbps=2"]).bw == 2e12


@pytest.mark.parametrize(
    ("entry_point", "env", "msg"),
    [
        (None, "hbm_gemv, no_such_plugin", "MEMBOUND_SYSTEMS: no module 'no_such_plugin' on the path"),
        ("gone = no_such_plugin", "", "entry point gone = 'no_such_plugin' (membound.systems): no module"),
        (None, "needs_dep", "MEMBOUND_SYSTEMS: no module 'no_such_dep' (imported by needs_dep) installed"),
    ],
)
def test_a_plugin_that_cannot_be_found_is_one_line(registry, tmp_path, capsys, entry_point, env, msg) -> None:
    if entry_point:
        dist = tmp_path / "gone-0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: gone\nVersion: 0.1\n")
        (dist / "entry_points.txt").write_text(f"[{systems.PLUGIN_GROUP}]\n{entry_point}\n")
    (tmp_path / "needs_dep.py").write_text("import no_such_dep\n")
    registry.syspath_prepend(str(tmp_path))
    registry.setenv(systems.PLUGIN_ENV, env)
    assert main(["systems"]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1, err


def test_a_system_missing_members_is_refused_naming_them(registry, capsys) -> None:
    """The factory's mistake is named when the system is built, not met halfway through its run."""
    partial = SimpleNamespace(name="partial", kv_bytes_per_token=1.0, kv_capacity=lambda: 1e9, hardware=lambda: "")
    systems.register("partial", "a system missing members")(lambda model: partial)
    assert main(["serve", "--model", "llama2-7b", "--system", "partial", "--requests", "2"]) == 2
    assert capsys.readouterr().err == (
        "membound serve: system partial: its factory built a SimpleNamespace, which lacks stage_times, energy, "
        "area, provenance; a System has name, kv_bytes_per_token, kv_capacity, stage_times, energy, area, "
        "hardware, provenance (docs/guide.md, 'Adding a design')\n"
    )


def test_a_plugins_source_is_in_the_report_cache_key(registry, tmp_path) -> None:
    (tmp_path / "myplug.py").write_text("X = 1\n")
    registry.syspath_prepend(str(tmp_path))
    before = cache.key("compare", [], ("sysmodel.systems", "myplug"))
    (tmp_path / "myplug.py").write_text("X = 2\n")
    assert cache.key("compare", [], ("sysmodel.systems", "myplug")) != before


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan"), float("inf")])
def test_a_stage_time_that_is_not_a_positive_number_is_refused(registry, tmp_path, capsys, seconds) -> None:
    """Before: a negative latency printed as a result, NaN as 'cannot convert float NaN', inf a traceback."""
    systems.register("bad", "stage times that cannot be")(lambda model: ConstantSystem(seconds, name="bad"))
    assert main(["serve", "--model", "llama2-7b", "--system", "bad", "--requests", "2", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"membound serve: system bad: stage_times gave {seconds!r} s for a stage; a stage takes a positive, "
        "finite number of seconds\n"
    )


@pytest.mark.parametrize("joules", [-1.0, float("nan")])
def test_a_stage_energy_that_is_not_a_number_at_least_zero_is_refused(registry, tmp_path, capsys, joules) -> None:
    """Before: J/token printed as nan or a negative number."""
    systems.register("bad", "energies that cannot be")(lambda model: ConstantSystem(0.01, name="bad", joules=joules))
    assert main(["serve", "--model", "llama2-7b", "--system", "bad", "--requests", "2", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"membound serve: system bad: energy gave {joules!r} J for a stage; a stage's energy is a finite number >= 0\n"
    )


def test_a_plugin_taking_a_registered_name_is_one_line(registry, tmp_path, capsys) -> None:
    (tmp_path / "clash.py").write_text(
        "from sysmodel.systems import register\n\n\n@register('gpu', 'a second gpu')\ndef _gpu(model):\n    pass\n"
    )
    registry.syspath_prepend(str(tmp_path))
    registry.delitem(sys.modules, "clash", raising=False)
    registry.setenv(systems.PLUGIN_ENV, "clash")
    assert main(["systems"]) == 2
    assert capsys.readouterr().err == (
        "membound systems: system: 'gpu' registered twice (sysmodel.designs.baselines, then clash); rename one\n"
    )


def test_a_factory_not_taking_its_parameters_is_refused_where_registered() -> None:
    with pytest.raises(ValueError, match=r"^system sig: its factory \S*<lambda> must take \(model, bw\): .*'bw_tbps'"):
        systems.register("sig", "arguments not its parameters", (systems.Param("bw", 1.0, "bandwidth"),))(
            lambda model, bw_tbps: ConstantSystem(0.01)
        )
    assert "sig" not in systems.entries()


@pytest.mark.parametrize("per_token", [0.0, float("nan"), "64"])
def test_kv_bytes_per_token_must_be_a_positive_number(registry, per_token) -> None:
    """Before: a ZeroDivisionError traceback from the engine."""
    systems.register("kv", "KV bytes that cannot be")(lambda model: ConstantSystem(0.01, kv_bytes_per_token=per_token))
    with pytest.raises(ValueError, match=rf"^system kv: kv_bytes_per_token is {per_token!r}; a positive, finite"):
        systems.build("kv", "llama2-7b")
