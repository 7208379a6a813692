"""What serve's and compare's outputs say about how they were made, and how the commands behave in pipes,
on terminals and in reused output directories (issue 50). Each test runs the real command."""

import csv
import json
import subprocess
import sys

import pytest

from sysmodel.cli import main

MEMBOUND = [sys.executable, "-m", "sysmodel.cli"]
COMPARE = ["compare", "--model", "llama2-7b", "--systems", "gpu,flash", "--requests", "4"]


def test_compare_outputs_carry_the_run_block(tmp_path, capsys) -> None:
    """Replicas, pp, scheduler, rate and seed in the table, the CSV, the Markdown and the provenance; an
    infeasible system (flash holds one request: PP refused) in the provenance with its reason."""
    argv = [*COMPARE, "--replicas", "2", "--scheduler", "sarathi", "--qps", "3", "--seed", "7", "--out", str(tmp_path)]
    assert main([*argv, "--pp", "2"]) == 0
    out = capsys.readouterr().out
    assert "(4 requests, 2 replicas, 2 pipeline stages)" in out
    assert "replicas 2" in out and "pp 2" in out and "scheduler sarathi" in out and "seed 7" in out
    rows = list(csv.DictReader((tmp_path / "compare.csv").open()))
    assert [(r["replicas"], r["pp"], r["scheduler"], r["qps"], r["seed"]) for r in rows] == [
        ("2", "2", "sarathi", "3.0", "7")
    ] * 2
    assert rows[0]["arrivals"] == "Poisson at 3 QPS" and len(rows[0]["trace_sha256"]) == 16 and rows[0]["commit"]
    md = (tmp_path / "compare.md").read_text()
    assert "replicas 2" in md and "pp 2" in md and "watermark 0.01" in md
    prov = json.loads((tmp_path / "compare_provenance.json").read_text())
    assert prov["run"]["replicas"] == 2 and prov["run"]["pp"] == 2 and prov["run"]["model"] == "llama2-7b"
    assert prov["systems"]["gpu"]["feasible"] is True
    assert prov["systems"]["flash"]["feasible"] is False and "pp" in prov["systems"]["flash"]["reason"]


def test_serve_outputs_carry_the_run_block_and_say_how_requests_arrive(tmp_path, capsys) -> None:
    """A trace file's own arrival times are said as such, not "all at t=0"; run.json holds the run block."""
    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n0,10,5\n0.5,20,6\n")
    assert main(["serve", "--model", "llama2-7b", "--trace", str(trace), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "(the file's arrival times)" in out and "all at t=0" not in out
    (run,) = json.loads((tmp_path / "o" / "run.json").read_text())
    assert run["run"]["trace"] == str(trace) and run["run"]["arrivals"] == "the file's arrival times"
    assert run["run"]["requests"] == 2 and run["summary"]["requests"] == 2 and "prompt" not in run["run"]
    assert main(["serve", "--model", "llama2-7b", "--requests", "3", "--out", str(tmp_path / "g")]) == 0
    assert "(all at t=0)" in capsys.readouterr().out


def test_infeasible_everywhere_is_in_the_provenance(tmp_path, capsys) -> None:
    assert main([*COMPARE, "--systems", "flash", "--pp", "2", "--out", str(tmp_path), "--provenance"]) == 0
    assert "- flash: not run: pp" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        [*COMPARE, "--out"],
        ["serve", "--model", "llama2-7b", "--requests", "4", "--qps", "1,2", "--out"],
    ],
)
def test_a_closed_pipe_still_writes_every_file(argv, tmp_path) -> None:
    """`compare ... | head` and a multi-rate `serve ... | head`: the files first, then a quiet exit."""
    proc = subprocess.Popen([*MEMBOUND, *argv, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert proc.returncode == 141 and "Traceback" not in err and "Exception" not in err, err
    names = {p.name for p in tmp_path.iterdir()}
    assert {"compare.csv", "compare_provenance.json"} <= names or {"run.json", "throughput_vs_qps.png"} <= names


def test_systems_lists_without_scipy() -> None:
    """`membound systems` loads no scipy.stats (1.5 s of import): the DECA cycle model imports it when used."""
    code = "import sys; from sysmodel.cli import main; main(['systems']); print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "False" and "deca:" in out


def test_report_has_no_slower_quick_mode(capsys) -> None:
    """`report --quick` bypassed the committed cache for every grid and shrank only three (418 s against the
    default's 25 s): it is gone, and saying it is one line naming it."""
    assert main(["report", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --quick" in err and err.count("\n") == 1
