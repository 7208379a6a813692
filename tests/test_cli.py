"""What a new user hits first: every mistake is one line naming the field and exit status 2, never a traceback
and never a number; nothing half-written or empty is left behind; Ctrl-C and a closed pipe exit quietly."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sysmodel.cli import main

MEMBOUND = [sys.executable, "-m", "sysmodel.cli"]


def one_line(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, err
    return err


def test_no_arguments_prints_the_usage(capsys) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: membound") and "a command is required" in err


# --- sweep configs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "suffix", "needle"),
    [
        ('kind = "decode"\n[grid]\nmodel = ["llama2-7b"\n', ".toml", "not valid TOML"),
        ("kind: deca\ngrid:\n  density: [0.5\n", ".yaml", "not valid YAML at line"),
        ("kind: deca\ngrid:\n  density: [-0.3]\n", ".yaml", "grid.density: -0.3 not allowed; a number > 0 and <= 1"),
        ("kind: deca\ngrid:\n  density: [abc]\n", ".yaml", "grid.density: 'abc' not allowed"),
        ('kind = "decode"\n[grid]\ndevice = ["rtx4090"]\n', ".toml", "grid.model: missing"),
        (
            'kind = "decode"\n[grid]\nmodel = ["llama2-7b"]\ndevice = ["rtx4090"]\nbatch = [1.5]\n',
            ".toml",
            "grid.batch: 1.5 not allowed; a whole number >= 1",
        ),
        ("- just a list\n", ".yaml", "a table of settings"),
    ],
)
def test_sweep_config_mistakes(text, suffix, needle, tmp_path, capsys) -> None:
    cfg = tmp_path / f"cfg{suffix}"
    cfg.write_text(text)
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "o" / "x.csv")]) == 2
    one_line(capsys, needle)
    assert not (tmp_path / "o").exists()


def test_sweep_workers_and_scheduler_fail_fast(tmp_path, capsys) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kind: deca\ngrid:\n  density: [0.5]\n")
    assert main(["sweep", str(cfg), "--workers", "0"]) == 2
    one_line(capsys, "--workers: 0 not allowed")
    assert main(["sweep", str(cfg), "--scheduler", "not an address"]) == 2
    one_line(capsys, "--scheduler: 'not an address' is not a scheduler address")
    start = time.perf_counter()
    assert main(["sweep", str(cfg), "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path / "x.csv")]) == 2
    one_line(capsys, "no Dask scheduler answered at tcp://127.0.0.1:9")
    assert time.perf_counter() - start < 20 and not (tmp_path / "x.csv").exists()


# --- --out ---------------------------------------------------------------------------------------------------


def read_only_dir(tmp_path: Path) -> Path:
    """A directory this process cannot write into (root ignores permission bits: a sysfs directory then)."""
    if os.geteuid() == 0:
        return Path("/sys/kernel")
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    return d


COMMANDS = {
    "report": ["report", "--paper", "memory"],
    "serve": ["serve", "--model", "llama2-7b", "--requests", "2"],
    "compare": ["compare", "--model", "llama2-7b", "--systems", "gpu", "--requests", "2"],
    "flash-bench": ["flash-bench", "--size", "8", "--seconds", "0.01", "--threads", "1"],
}


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_out_must_be_a_writable_directory_under_an_existing_parent(cmd, tmp_path, capsys) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, needle in (
        (afile, "is a file, not a directory"),
        (tmp_path / "missing" / "out", f"{tmp_path / 'missing'} does not exist"),
        (read_only_dir(tmp_path) / "out", "is not writable"),
    ):
        assert main([*COMMANDS[cmd], "--out", str(out)]) == 2
        one_line(capsys, "--out: ", needle)
    assert afile.read_text() == "x" and not (tmp_path / "missing").exists()


def test_sweep_out_is_checked(tmp_path, capsys) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kind: deca\ngrid:\n  density: [0.5]\n")
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "missing" / "x.csv")]) == 2
    one_line(capsys, "--out: ", "does not exist")


def test_a_failed_run_leaves_no_empty_directory(tmp_path, capsys) -> None:
    out = tmp_path / "new"
    assert main(["serve", "--model", "gpt3-175b", "--devices", "1", "--out", str(out)]) == 2
    one_line(capsys, "no room for a KV cache")
    assert not out.exists()


# --- serve ---------------------------------------------------------------------------------------------------


def test_serve_trace_file_with_qps_and_more_requests_than_rows(tmp_path, capsys) -> None:
    trace = tmp_path / "t.csv"
    trace.write_bytes(b"arrival_s,prompt_tokens,output_tokens\r\n0,10,5\r\n0.5,20,6\r\n")  # CRLF loads
    assert (
        main(
            [
                "serve",
                "--model",
                "llama2-7b",
                "--trace",
                str(trace),
                "--requests",
                "5",
                "--qps",
                "2",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    cap = capsys.readouterr()
    assert "t.csv has 2 requests; running all of them, not --requests 5" in cap.err
    assert "--qps 2 replaces" in cap.err and "2 requests" in cap.out and "(Poisson at 2 QPS)" in cap.out
    assert main(["serve", "--model", "llama2-7b", "--qps", "2", "--concurrency", "3"]) == 2
    one_line(capsys, "--qps, --concurrency: choose one")


def test_serve_qps_sweep_labels_each_rate(tmp_path, capsys) -> None:
    assert main(["serve", "--model", "llama2-7b", "--requests", "20", "--qps", "1,50", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(Poisson at 1 QPS)" in out and "(Poisson at 50 QPS)" in out
    assert {p.name for p in tmp_path.iterdir()} == {
        ".membound-written.json",
        "run.json",
        "requests-qps1.csv",
        "requests-qps50.csv",
        "tbt_cdf.png",
        "kv_utilisation.png",
        "throughput_vs_qps.png",
    }


def test_tbt_cdf_of_a_long_run_is_bounded(tmp_path) -> None:
    """A run of over a million stages plots from at most CDF_POINTS points, its median where the run's is
    (the plot's time is a `make bench` target, not a timed test)."""
    from sysmodel import systems
    from sysmodel.engines import serving
    from sysmodel.report import plots

    res = serving.simulate(
        serving.make_trace("openr1", 1000), systems.build("gpu", "llama2-7b"), scheduler="reserve"
    )  # reserve: the most stages
    assert res.stages > 1_000_000
    assert plots.plot_tbt_cdf([res], tmp_path / "cdf.png").stat().st_size > 0
    t, cum = serving.tbt_cdf(res)
    assert len(t) <= serving.CDF_POINTS and cum[-1] == pytest.approx(1.0)
    assert res.tbt_percentiles((50,))[50] == pytest.approx(t[np.searchsorted(cum, 0.5)], rel=0.02)


# --- hermes and flash inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arrays", "needle"),
    [
        (
            {
                "prefill": 4,
                "layer0_attn": np.zeros((1, 8, 4096), np.float32),
                "layer0_mlp": np.zeros((1, 8, 11008), bool),
            },
            "layer0_attn is float32 (1, 8, 4096); bool (batch, tokens, neurons)",
        ),
        (
            {"prefill": 4, "layer0_attn": np.zeros((1, 8, 100), bool), "layer0_mlp": np.zeros((1, 8, 11008), bool)},
            "attn has 100 neurons; llama2-7b has 4096",
        ),
        (
            {
                "prefill": np.zeros(3),
                "layer0_attn": np.zeros((1, 8, 4096), bool),
                "layer0_mlp": np.zeros((1, 8, 11008), bool),
            },
            "prefill is float64 (3,); one integer",
        ),
        (
            {
                "prefill": 4,
                "layer0_attn": np.zeros((1, 8, 4096), bool),
                "layer0_mlp": np.zeros((1, 8, 11008), bool),
                "parents_layer0_attn": np.zeros(3),
            },
            "parents_layer0_attn not allowed",
        ),
        ({"prefill": 4, "layer0_attn": np.zeros((1, 8, 4096), bool)}, "block 'mlp' misses some of layers"),
    ],
)
def test_hermes_trace_mistakes(arrays, needle, tmp_path, capsys) -> None:
    np.savez(tmp_path / "t.npz", **arrays)
    assert main(["hermes", "--model", "llama2-7b", "--trace", str(tmp_path / "t.npz")]) == 2
    one_line(capsys, needle)


def test_flash_predictor_refuses_nan_dumps(tmp_path, capsys) -> None:
    np.savez(tmp_path / "d.npz", x=np.full((100, 16), np.nan), pre=np.zeros((100, 32)))
    assert main(["flash-predictor", "--dump", str(tmp_path / "d.npz")]) == 2
    one_line(capsys, "x has non-finite or non-numeric values")
    np.savez(tmp_path / "e.npz", x=np.zeros((100, 16)), pre=np.full((100, 32), np.nan))
    assert main(["flash-predictor", "--dump", str(tmp_path / "e.npz")]) == 2
    one_line(capsys, "pre has non-finite values")


def test_flash_bench_threads_given_twice(tmp_path, capsys) -> None:
    assert main(["flash-bench", "--threads", "1,4,1", "--out", str(tmp_path / "fb")]) == 2
    one_line(capsys, "--threads: 1 given twice")  # it measured 1 thread twice, printing its row twice
    assert not (tmp_path / "fb").exists()


@pytest.mark.parametrize("seconds", ["0", "nan", "-1", "inf"])
def test_flash_bench_seconds_must_be_positive(seconds, tmp_path, capsys) -> None:
    assert main(["flash-bench", "--seconds", seconds, "--out", str(tmp_path / "fb")]) == 2
    one_line(capsys, f"--seconds: {seconds!r} is not a number > 0")
    assert not (tmp_path / "fb").exists()


# --- signals and pipes ---------------------------------------------------------------------------------------


def test_ctrl_c_exits_130_and_removes_the_scratch_file(tmp_path) -> None:
    out = tmp_path / "fb"
    proc = subprocess.Popen(
        [*MEMBOUND, "flash-bench", "--out", str(out), "--size", "64", "--seconds", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while not (out / "flash_bench.scratch").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err and "interrupted" in err
    assert not (out / "flash_bench.scratch").exists() and not list(out.glob(".*"))


def test_a_closed_pipe_exits_quietly() -> None:
    proc = subprocess.Popen([*MEMBOUND, "systems"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert proc.returncode == 141 and err == ""


def test_readme_examples_run(tmp_path, capsys) -> None:
    """The guide's one-example-per-system block: every registered system, every command exits 0."""
    from sysmodel import systems

    readme = (Path(__file__).parent.parent / "docs" / "guide.md").read_text()
    block = readme.split("### One example per system")[1].split("```sh")[1].split("```")[0]
    commands = [line.split()[1:] for line in block.strip().splitlines()]
    assert sorted(c[c.index("--system") + 1] for c in commands) == sorted(systems.entries())
    for i, argv in enumerate(commands):
        assert main([*argv, "--out", str(tmp_path / str(i))]) == 0, argv
    assert capsys.readouterr().out.count("tokens/s") == len(commands)


def test_dram_log_is_legal_and_readable(tmp_path, capsys) -> None:
    """membound dram --log: the command log as CSV, replayed by the timing checker before it is written."""
    log = tmp_path / "cmds.csv"
    assert (
        main(
            [
                "dram",
                "--preset",
                "hbm3",
                "--mode",
                "bank_bundle",
                "--requests",
                "3000",
                "--writes",
                "0.2",
                "--log",
                str(log),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "hbm3/bank-bundle | streaming | 3000 requests (20% writes) | refresh on-time" in out
    assert "(timing checker: legal)" in out
    lines = log.read_text().splitlines()
    assert lines[0] == "cycle,channel,rank,bankgroup,bank,row,command"
    assert sum(ln.endswith((",RD", ",WR")) for ln in lines) == 3000


def test_dram_checks_the_log_under_its_policy(tmp_path, capsys) -> None:
    """--refresh postpone with reads and writes on two ranks and an age cap: the log replayed under
    postpone's own refresh rule (at most 8 REFs owed), not on-time's."""
    log = tmp_path / "cmds.csv"
    args = ["--pattern", "random", "--requests", "60000", "--writes", "0.3", "--refresh", "postpone"]
    assert main(["dram", *args, "--age-cap", "2000", "--log", str(log)]) == 0
    assert "(timing checker: legal)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--age-cap", "0"], "--age-cap: '0' is not a whole number >= 1"),
        (["--refresh", "per-bank"], "refresh: per-bank not allowed for ddr4-3200"),
        (["--refresh", "often"], "refresh: 'often' not allowed; allowed: on-time, postpone, per-bank, none"),
        (["--writes", "1.5"], "--writes: 1.5 not allowed; a share in [0, 1]"),
        (["--preset", "ddr3"], "preset: unknown 'ddr3'"),
        (["--pattern", "zigzag"], "pattern: unknown 'zigzag'"),
        (["--log", "/nonexistent-dir/x.csv"], "--log: /nonexistent-dir does not exist"),
        # options that would do nothing (they were silently ignored)
        (["--stride", "4"], "--stride: only for --pattern strided, not streaming"),
        (["--pattern", "strided", "--seed", "3"], "--seed: nothing random to seed (--pattern strided, no --writes)"),
    ],
)
def test_dram_mistakes(args, needle, capsys) -> None:
    assert main(["dram", "--requests", "10", *args]) == 2
    one_line(capsys, needle)
