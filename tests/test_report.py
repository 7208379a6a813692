"""`membound report` runs from the committed snapshots and writes Markdown, HTML and plots a reviewer can
paste from: numbered captions on every table and figure, no empty cells, a table of contents, no text that
collides in any plot; its long serving grids come from a committed cache that must be fresh, and its ledger is
the committed one. `make test-full` reruns every grid (`--full`) and checks it reproduces the cache."""

import json
import re

import pytest

from sysmodel import cache, ledger
from sysmodel.report import PAPERS, Context, plots, report


def test_report_all(tmp_path) -> None:
    """The default report, its serving grids read from the committed cache (stale entries fail here at once
    rather than rerun for minutes), reproduces the committed ledger row for row."""
    assert cache.stale() == [], "stale report cache: run `make report-full` and commit sysmodel/data/report_cache"
    plots.CHECK, plots.FOUND[:] = True, []
    try:
        report(list(PAPERS), Context(tmp_path, commit=False), echo=False)
    finally:
        plots.CHECK = False
    assert ledger.load(tmp_path / "ledger.csv") == ledger.load(), (
        "the committed ledger is stale: run `make report` and commit sysmodel/data/ledger.csv"
    )
    assert plots.FOUND == [], "text collides in the report's figures:\n" + "\n".join(plots.FOUND)
    md = (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    for title in PAPERS.values():
        assert f"## {title}" in md and f">{title}</h2>" in page
    assert "| Table 3" not in md and "| opt-6.7b | cpu | all | 105 / 110 pred" in md  # flash: Table 3 cells marked
    assert all((tmp_path / f"flash_{n}.png").exists() for n in ("latency", "throughput"))
    assert "| Logic-PIM TFLOPS per stack | 21.30 | 21.30 | 1.00 |" in md  # Duplex: derived, beside the paper's
    assert all((tmp_path / f"duplex_fig{n}.png").exists() for n in (8, 11, 12, 13, 14, 15))
    assert "| Duplex saturation QPS | 14.0 |" in md
    assert "| GEMM modules : softmax unit | 1.84 |" in md  # Duplex: Yosys cells from the area snapshot
    assert "| LLaMA2-70B tokens/s, batch 1 | 13.75 |" in md  # Hermes: paper value beside the model's
    assert all((tmp_path / f"hermes_{n}.png").exists() for n in ("tokens", "ablation", "multipliers"))
    assert "| speedup over GPU-only | 5.00 |" in md  # L3: paper value beside the model's
    assert "| fpmul | fmt_in=bf16 | 2 | 1 |" in md  # measured RTL cycles from the snapshot
    assert (tmp_path / "deca_bords.png").exists() and 'src="deca_bords.png"' in page
    assert "| hermes | " in md and "compare_llama2-70b_gaussian_energy.png" in md  # the cross-design section
    assert "## Validation ledger" in md and (tmp_path / "ledger.parquet").exists()
    assert page.count("<table>") == page.count("</table>") >= 8

    lines = md.splitlines()
    tables = [i for i, line in enumerate(lines) if line.startswith("|") and not lines[i - 1].startswith("|")]
    uncaptioned = [lines[i] for i in tables if not re.match(r"\*\*Table \d+:\*\* \S", lines[i - 1])]
    assert not uncaptioned, f"tables without a numbered caption: {uncaptioned[:5]}"
    assert [int(n) for n in re.findall(r"^\*\*Table (\d+):", md, re.M)] == list(range(1, len(tables) + 1))
    figures = re.findall(r"!\[([^\]]*)\]\(", md)
    assert figures and all(re.match(r"Figure \d+: \S", f) for f in figures)
    empty = [line for line in lines if line.startswith("|") and re.search(r"\|\s*\|", line)]
    assert not empty, f"rows with empty cells: {empty[:3]}"
    assert "<nav><h2>Contents</h2>" in page and 'href="#figure-1"' in page and "<code>" in page


def test_arith_section_covers_every_arith_testbench() -> None:
    from hw.arith.cycles import UNITS as ARITH_UNITS
    from tb.arith.cases import SPECS

    assert {s.unit for s in SPECS} == set(ARITH_UNITS)


def test_committed_report_cache_is_fresh() -> None:
    """The default report reads its serving grids from sysmodel/data/report_cache; an entry whose sources or
    inputs changed since it was written is stale (the report would rerun it)."""
    entries = sorted(p.stem for p in cache.COMMITTED.glob("*.json"))
    assert {"l3-fig8", "duplex-fig11", "hermes-runs", "compare-llama2-70b-gaussian"} <= set(entries)
    assert cache.stale() == [], "stale report cache: run `membound report --full` (or `make report-full`) and commit"


@pytest.mark.fullreport
def test_full_report_reproduces_the_cache(tmp_path) -> None:
    """`make test-full`: every serving grid rerun (`--full`, into a scratch cache) gives the committed values."""
    scratch = tmp_path / "cache"
    report(list(PAPERS), Context(tmp_path / "out", full=True, cache_dir=scratch, commit=False), echo=False)
    for path in sorted(cache.COMMITTED.glob("*.json")):
        assert json.loads((scratch / path.name).read_text())["value"] == json.loads(path.read_text())["value"], (
            path.name
        )
    assert ledger.load(tmp_path / "out" / "ledger.csv") == ledger.load()


def test_cache_key_follows_the_import_closure(tmp_path) -> None:
    files = {p.name for p in cache.closure(["sysmodel.designs.l3.report"])}
    assert {"report.py", "model.py", "cycles.py", "serving.py", "l3_spec.py"} <= files
    assert "deca" not in {p.parent.name for p in cache.closure(["sysmodel.designs.l3.report"])}
    calls = []
    value = cache.cached("t", [1], ["sysmodel.cost.energy"], lambda: calls.append(1) or {"a": (1, 2)}, where=tmp_path)
    again = cache.cached("t", [1], ["sysmodel.cost.energy"], lambda: calls.append(1) or {"a": (1, 2)}, where=tmp_path)
    assert value == again == {"a": [1, 2]} and calls == [1]
    cache.cached("t", [2], ["sysmodel.cost.energy"], lambda: calls.append(1) or {}, where=tmp_path)
    assert calls == [1, 1]  # other inputs: recomputed


def test_a_report_at_another_request_count_leaves_the_committed_cache(tmp_path, monkeypatch) -> None:
    """`membound report --paper compare --requests 7` rewrote sysmodel/data/report_cache/compare-*.json with its
    7-request grids (and a whole report at 7 the committed ledger): the next default report reran them."""
    monkeypatch.setattr(cache, "COMMITTED", tmp_path / "committed")
    ctx = Context(tmp_path, requests=7)
    assert ctx.grid("g", ledger.within_tolerance, 1.0) is True and not (tmp_path / "committed").exists()
    assert Context(tmp_path).grid("g", ledger.within_tolerance, 1.0) is True  # the default count: stored
    assert [p.name for p in (tmp_path / "committed").iterdir()] == ["g.json"]


def test_cache_key_covers_the_gpu_measurements() -> None:
    """The calibrated GPU's laws are fitted to sysmodel/data/gpu_*.csv at run time, so a grid on the calibrated
    profile moves with those tables: each is a cache input (it was not, so a changed table left stale grids
    marked fresh)."""
    from sysmodel.cost import gpu

    assert {gpu.DATA / f"gpu_{name}.csv" for name in gpu.SOURCES} <= set(cache.DATA)


def test_cache_key_ignores_comments_and_docstrings_not_code() -> None:
    src = 'def f(x):\n    """Doc."""\n    return x + 1  # why\n'
    assert cache.code(src) == cache.code('"""Module doc."""\n\n\ndef f(x):\n    return x + 1\n')
    assert cache.code(src) != cache.code("def f(x):\n    return x + 2\n")
    assert cache.code('def f():\n    """Only a doc."""\n') == cache.code("def f():\n    pass\n")
    assert cache.code("X = 'not a docstring'\n") != cache.code("X = 'other'\n")
