"""What serve's and compare's outputs say about how they were made, and how the commands behave in pipes,
on terminals and in reused output directories (issue 50). Each test runs the real command."""

import argparse
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
    from PIL import Image

    for png in ("compare_energy.png", "compare_latency.png"):  # the plots say it too
        assert "replicas 2, router round-robin, pp 2" in Image.open(tmp_path / png).text["Description"]


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
    from PIL import Image

    assert "arrivals the file's arrival times" in Image.open(tmp_path / "o" / "tbt_cdf.png").text["Description"]
    assert main(["serve", "--model", "llama2-7b", "--requests", "3", "--out", str(tmp_path / "g")]) == 0
    assert "(all at t=0)" in capsys.readouterr().out


def test_compare_says_which_efficiency_profile_each_system_ran_on(tmp_path, capsys) -> None:
    """The terminal, Markdown, CSV and provenance name each system's profile (issue 54); a system without a
    profiled device (flash: its own flash-and-DRAM model) is left out."""
    argv = [*COMPARE, "--systems", "gpu,hbm-pim,flash", "--set", "hbm-pim.efficiency=calibrated"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    line = "efficiency profile: gpu attacc, hbm-pim calibrated"
    assert line in capsys.readouterr().out and line in (tmp_path / "compare.md").read_text()
    rows = {r["system"]: r["efficiency_profile"] for r in csv.DictReader((tmp_path / "compare.csv").open())}
    assert rows == {"gpu": "attacc", "hbm-pim": "calibrated", "flash": ""}
    prov = json.loads((tmp_path / "compare_provenance.json").read_text())["systems"]
    assert [prov[n]["efficiency_profile"] for n in ("gpu", "hbm-pim", "flash")] == ["attacc", "calibrated", None]


@pytest.mark.parametrize(("settings", "profile"), [([], "attacc"), (["--set", "efficiency=peak"], "peak")])
def test_serve_says_which_efficiency_profile_it_ran_on(tmp_path, capsys, settings, profile) -> None:
    """The run line and run.json carry the GPU's profile (iteration times from --profile: none, test_profile)."""
    argv = ["serve", "--model", "llama2-7b", "--requests", "3", *settings, "--out", str(tmp_path / profile)]
    assert main(argv) == 0
    assert f"efficiency_profile {profile}," in capsys.readouterr().out
    (run,) = json.loads((tmp_path / profile / "run.json").read_text())
    assert run["run"]["efficiency_profile"] == profile


def test_infeasible_everywhere_is_in_the_provenance(tmp_path, capsys) -> None:
    assert main([*COMPARE, "--systems", "flash", "--pp", "2", "--out", str(tmp_path), "--provenance"]) == 0
    assert "- flash: not run: pp" in capsys.readouterr().out
    assert main([*COMPARE, "--systems", "duplex", "--out", str(tmp_path), "--provenance"]) == 0
    out = capsys.readouterr().out
    assert "duplex_gemm_module [buffer_bytes=8192, lanes=8, rows=64] (" in out and "{" not in out  # no Python dict


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


def test_systems_lists_fast_and_plainly() -> None:
    """`membound systems` loads no scipy.stats (1.5 s of import): the DECA cycle model imports it when used."""
    code = "import sys; from sysmodel.cli import main; main(['systems']); print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "False" and "deca:" in out
    # defaults as --set takes them, not Python reprs
    assert "    host = false: " in out and '    routing = "": ' in out and "    device = a100-80g-sxm: " in out


def test_report_has_no_slower_quick_mode(capsys) -> None:
    """`report --quick` bypassed the committed cache for every grid and shrank only three (418 s against the
    default's 25 s): it is gone, and saying it is one line naming it."""
    assert main(["report", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --quick" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "bars"),
    [
        (
            ["serve", "--model", "llama2-7b", "--requests", "6", "--replicas", "2", "--router", "least-outstanding"],
            ("serve GPU-only (1x a100-80g-sxm) x 2",),
        ),
        (
            ["serve", "--model", "llama2-7b", "--requests", "6", "--pp", "2"],
            ("serve GPU-only (1x a100-80g-sxm), PP 2",),
        ),
        ([*COMPARE, "--systems", "gpu,cpu"], ("compare", "serve GPU-only", "serve CPU-only")),
    ],
)
def test_progress_on_a_terminal(argv, bars, tmp_path, capsys, monkeypatch) -> None:
    """Replicas and pipeline stages show one bar over the requests the event loop routes and serves;
    compare's bar over the systems has each system's run advancing below it."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main([*argv, "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    for bar in bars:
        assert bar in err, err


def _figures(monkeypatch, *modules: str) -> dict:
    """Every figure the command saves, by file name, checked for colliding text, missing titles and
    legends over data (sysmodel.report.plots.CHECK)."""
    import importlib

    from sysmodel.report import plots

    seen: dict = {}

    def keep(fig, plt, path):
        seen[path.name] = fig
        return plots_save(fig, plt, path)

    plots_save = plots.save
    monkeypatch.setattr(plots, "CHECK", True)
    monkeypatch.setattr(plots, "FOUND", [])
    for m in modules:
        monkeypatch.setattr(importlib.import_module(m), "save", keep)
    return seen


def test_serve_plots_are_readable(tmp_path, capsys, monkeypatch) -> None:
    """The TBT CDF on a log time axis with each run's longest gap stated; legends beside the data."""
    from sysmodel.report import plots

    figs = _figures(monkeypatch, "sysmodel.report.plots")
    argv = ["serve", "--model", "llama2-7b", "--requests", "30", "--qps", "1,50", "--out", str(tmp_path)]
    assert main(argv) == 0
    ax = figs["tbt_cdf.png"].axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text().endswith(" ms)") and "longest" in t.get_text() for t in ax.get_legend().get_texts()] == [
        True
    ] * 2
    assert {line.get_linestyle() for line in ax.lines} == {"-", "--"}  # one run drawn over another still shows
    assert plots.FOUND == []


def test_a_system_keeps_its_colour_in_every_plot(tmp_path, capsys, monkeypatch) -> None:
    """Colours come from the registry, not from a system's place among the feasible rows of one run."""
    from sysmodel.report import plots

    figs = _figures(monkeypatch, "sysmodel.report.compare")
    colours = {}
    for i, systems in enumerate(("gpu,cpu,hbm-pim", "cpu,hbm-pim")):
        argv = [
            "compare",
            "--model",
            "llama2-7b",
            "--systems",
            systems,
            "--requests",
            "4",
            "--out",
            str(tmp_path / str(i)),
        ]
        assert main(argv) == 0
        for coll in figs["compare_energy.png"].axes[0].collections:
            colours.setdefault(coll.get_label(), set()).add(tuple(coll.get_edgecolor()[0][:3]))
    assert set(colours) == {"gpu", "cpu", "hbm-pim"} and all(len(c) == 1 for c in colours.values())
    assert len({next(iter(c)) for c in colours.values()}) == 3
    assert plots.FOUND == []


def test_a_legend_over_data_is_found() -> None:
    """The check the report's figure test runs: a legend placed over a bar is named."""
    from sysmodel.report import plots

    plt = plots.pyplot()
    fig, ax = plt.subplots()
    ax.bar([0, 1], [10, 1], label="bars")
    ax.legend(loc="upper left")
    assert plots.hidden(fig) == ["panel '': the legend covers data"]
    plots.legend_outside(ax)
    assert plots.hidden(fig) == []
    plt.close(fig)


# --- what a new user meets: the command list, help, wording, questionable input, reused directories --------


def test_no_arguments_lists_the_commands(capsys) -> None:
    from sysmodel.cli import COMMANDS

    assert main([]) == 2
    err = capsys.readouterr().err
    assert all(f"\n    {name}" in err for name in COMMANDS) and "a command is required" in err


def test_every_option_has_help_and_shows_its_default(capsys) -> None:
    """Each command's --help: every option explained, every default that is a value shown (never None)."""
    from sysmodel.cli import COMMANDS, parser

    subs = next(a for a in parser()._actions if a.dest == "cmd").choices
    for name in COMMANDS:
        assert main([name, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        for action in subs[name]._actions:
            assert action.help, (name, action.dest)
            if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
                assert f"(default: {action.default})" in text, (name, action.dest)
        assert "None" not in text, name


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["serve", "--model", "llama2-7b", "--set", "devices=2.5"], "devices: '2.5' is not a whole number"),
        (["serve", "--model", "llama2-7b", "--set", "wbytes=x"], "wbytes: 'x' is not a number"),
        (["serve", "--model", "llama2-7b", "--seed", "-1"], "--seed: '-1' is not a whole number >= 0"),
        # an option that would do nothing: the fixed trace at t = 0 draws nothing (the seed was ignored)
        (["serve", "--model", "llama2-7b", "--seed", "5"], "--seed: nothing random to seed (trace fixed, no --qps)"),
        (["compare", "--model", "llama2-7b", "--seed", "5"], "--seed: nothing random to seed"),
        (["serve", "--model", "llama2-7b", "--prompt", "5000"], "5000 + 128 tokens exceed llama2-7b's context of 4096"),
        (["compare", "--model", "llama2-7b", "--output", "4000"], "128 + 4000 tokens exceed llama2-7b's context"),
        (
            ["serve", "--model", "llama2-70b", "--devices", "3"],
            "devices: 3 does not divide llama2-70b's 64 attention heads",
        ),
        (["serve", "--model", "llama2-7b", "--qps", "1,2,1"], "--qps: 1 given twice"),
        (["compare", "--model", "llama2-7b", "--systems", "gpu,cpu,gpu"], "--systems: gpu given twice"),
        (["serve", "--model", "llama2-7b", "--set", "devices=2", "--devices", "4"], "--set devices: given twice"),
        (["compare", "--model", "llama2-7b", "--set", "gpu.wbytes=1", "--set", "gpu.wbytes=2"], "(wbytes=1, wbytes=2)"),
        (["serve", "--model", "llama2-7b", "--router", "least-outstanding"], "--router: least-outstanding has nothing"),
        (["serve", "--model", "llama2-7b", "--trace", "openr1", "--prompt", "64"], "--prompt: trace openr1 sets every"),
        (["compare", "--model", "llama2-7b", "--pp-link", "pcie4x16"], "--pp-link: no pipeline stages to link"),
        (
            ["serve", "--model", "llama2-7b", "--scheduler", "reserve", "--preempt", "swap", "--block-size", "32"],
            "--block-size, --preempt: scheduler reserve reserves each request's whole KV cache",
        ),
    ],
)
def test_questionable_input_is_refused_by_name(argv, needle, tmp_path, capsys) -> None:
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "None" not in err, err
    assert not (tmp_path / "o").exists()


def test_gaussian_draws_past_the_context_are_skipped_and_counted(tmp_path, capsys) -> None:
    """Drawn lengths past the context were served silently (22 of 50 here): they are skipped and said, as a
    trace file's are; the others run."""
    argv = ["serve", "--model", "llama2-7b", "--trace", "gaussian", "--prompt", "3800", "--output", "200"]
    assert main([*argv, "--requests", "50", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "22 of the 50 gaussian requests (std 25% of the means) exceed llama2-7b's context of 4096 tokens: " in err
    with (tmp_path / "requests.csv").open() as f:
        assert sum(1 for _ in f) == 1 + 28


def test_a_reused_out_keeps_no_stale_file_of_the_same_command(tmp_path, capsys) -> None:
    """A rate no longer swept leaves no CSV or plot behind; a file the command never wrote is kept."""
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["serve", "--model", "llama2-7b", "--requests", "3", "--qps", "1,2", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "requests-qps2.csv").exists() and (tmp_path / "throughput_vs_qps.png").exists()
    assert main(["serve", "--model", "llama2-7b", "--requests", "3", "--qps", "1", "--out", str(tmp_path)]) == 0
    assert main([*COMPARE, "--out", str(tmp_path)]) == 0  # another command's files beside serve's
    names = {p.name for p in tmp_path.iterdir()}
    assert "requests-qps2.csv" not in names and "throughput_vs_qps.png" not in names
    assert {"notes.txt", "requests-qps1.csv", "tbt_cdf.png", "run.json", "compare.csv"} <= names
    capsys.readouterr()


def test_a_log_axis_over_many_decades_stays_readable() -> None:
    """A 9,500 s stall beside 8 ms gaps (issue 50's TBT CDF): decade labels only, none colliding."""
    from sysmodel.report import plots

    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.step([8, 9, 40, 9.5e6], [0.5, 0.9, 0.99, 1.0], where="post")
    plots.log_axis(ax.xaxis)
    assert plots.overlaps(fig) == []
    shown = [t.get_text() for t in ax.xaxis.get_ticklabels() if t.get_text()]
    assert "10" in shown and "1e+06" in shown and "20" not in shown
    plt.close(fig)


def test_a_reused_report_directory_keeps_no_stale_file(tmp_path, capsys) -> None:
    """A section's ledger from an earlier report into the same --out goes once the next report has none."""
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["report", "--paper", "memory", "--brief", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "ledger.csv").exists()
    assert main(["report", "--paper", "arith", "--brief", "--out", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == {"notes.txt", "report.md", "report.html", ".membound-written.json"}
    capsys.readouterr()


def test_single_token_requests_have_no_tbt_and_still_plot(tmp_path, capsys) -> None:
    """No request with a second token: serve says there is no TBT (not "nan ms"); compare's log-axis plot
    says no system has a value instead of failing."""
    assert (
        main(["serve", "--model", "llama2-7b", "--requests", "1", "--output", "1", "--out", str(tmp_path / "s")]) == 0
    )
    out = capsys.readouterr().out
    assert "1 request, 1 output token |" in out and "TBT   none: no request has a second output token" in out
    assert "nan" not in out
    assert main([*COMPARE, "--output", "1", "--out", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "compare_latency.png").exists()
    capsys.readouterr()


def test_a_pareto_front_of_one_system_is_marked(tmp_path, monkeypatch) -> None:
    """When one system beats all on tokens/s and J/token its front is one point: a dashed line through it drew
    nothing, the legend naming a front the plot did not show. Each front point is ringed."""
    from sysmodel.report import compare as compare_report

    figures = []
    monkeypatch.setattr(compare_report, "save", lambda fig, plt, path: figures.append(fig) or path)
    rows = [
        {"system": s, "feasible": True, "joules_per_token": j, "throughput_tok_s": t, "tbt_p99_ms": 10.0}
        for s, j, t in (("gpu", 1.0, 100.0), ("duplex", 0.5, 300.0), ("cpu", 3.0, 10.0))
    ]
    compare_report.plot(rows, "t", tmp_path)
    (front,) = [ln for ln in figures[0].axes[0].get_lines() if ln.get_label() == "Pareto front"]
    assert list(front.get_xdata()) == [0.5] and front.get_marker() == "o"
