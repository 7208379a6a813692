"""`membound report` runs from the committed snapshot and writes Markdown, HTML and plots."""

from sysmodel.cli import PAPERS, main


def test_report_all(tmp_path) -> None:
    assert main(["report", "--paper", "all", "--out", str(tmp_path), "--requests", "40", "--quick"]) == 0
    md = (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    for title in PAPERS.values():
        assert f"## {title}" in md and f"<h2>{title}</h2>" in page
    assert "| Table 3" not in md and "| opt-6.7b | cpu | all | 105 / 110 pred" in md  # flash: Table 3 cells marked
    assert all((tmp_path / f"flash_{n}.png").exists() for n in ("latency", "throughput"))
    assert "| Logic-PIM TFLOPS per stack | 21.30 | 21.30 | 1.00 |" in md  # Duplex: derived, beside the paper's
    assert all((tmp_path / f"duplex_fig{n}.png").exists() for n in (8, 11, 12, 13, 14, 15))
    assert "| Duplex saturation QPS | 14.0 |" in md
    assert "| GEMM modules : softmax unit | 1.84 |" in md  # Duplex: Yosys cells from the area snapshot
    assert "| LLaMA2-70B tokens/s, batch 1 | 13.75 |" in md  # Hermes: paper value beside the model's
    assert all((tmp_path / f"hermes_{n}.png").exists() for n in ("tokens", "ablation", "multipliers"))
    assert "| speedup over GPU-only | 5.0 |" in md  # L3: paper value beside the model's
    assert "| fpmul | fmt_in=bf16 | 2 | 1 |" in md  # measured RTL cycles from the snapshot
    assert (tmp_path / "deca_bords.png").exists() and '<img src="deca_bords.png"' in page
    assert page.count("<table>") == page.count("</table>") >= 8


def test_arith_section_covers_every_arith_testbench() -> None:
    from sysmodel.cli import ARITH_UNITS
    from tb.arith.cases import SPECS

    assert {s.unit for s in SPECS} == set(ARITH_UNITS)
