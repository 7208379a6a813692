"""What a new user hits in the second hour (issue 50): a scheduler address where something else listens, the
modes of written files, a benchmark file larger than the disk, Ctrl-C while numba compiles, unreadable
characterization records, and warnings on stderr. Every case runs the real command."""

import contextlib
import csv
import http.server
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import dask.distributed  # noqa: F401  imported before the scheduler tests' clocks start (2 s on a busy machine)
import numpy as np
import pytest
from test_cli import one_line

from hw.hermes.cycles import UNIT_GEMV
from sysmodel import cluster
from sysmodel.cli import main
from sysmodel.cost import characterization

# --- sweep --scheduler at an address where no Dask scheduler listens ----------------------------------------


@contextlib.contextmanager
def _closed() -> Iterator[int]:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    yield port


@contextlib.contextmanager
def _silent() -> Iterator[int]:
    """A port whose connections the kernel accepts (the listen backlog) and nobody ever answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test's stderr is the command's
        pass


@contextlib.contextmanager
def _http() -> Iterator[int]:
    """An HTTP server (Python's), as Dask's dashboard on 8787."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _replying(reply: bytes) -> Iterator[int]:
    """A listener that sends ``reply`` to each connection and closes it, for at most 30 s."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        deadline = time.monotonic() + 30
        while not stop.is_set() and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                conn, _ = srv.accept()
                with conn:
                    conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        srv.close()


@pytest.mark.parametrize(
    ("listener", "needle"),
    [
        (_silent, "accepted the connection but sent no Dask handshake within 1 s"),
        (_http, "such as the dashboard (8787) instead of the scheduler (8786)?"),
        # tornado's answer to a non-HTTP request (the dashboard's server): read as a 3 EiB frame length
        (lambda: _replying(b"HTTP/1.1 400 Bad Request\r\n\r\n"), "answered, but not as a Dask scheduler"),
        (lambda: _replying(b"\x07\x00\x00\x00\x00\x00\x00\x00garbage\xff\xfe" * 4), "answered, but not as a Dask"),
        (lambda: _replying(b""), "answered, but not as a Dask scheduler"),  # closes at once
        (_closed, "no Dask scheduler answered at {addr} within 1 s (connection refused)"),
    ],
    ids=["silent", "http", "http-400", "garbage", "closes", "closed-port"],
)
def test_scheduler_address_of_something_else(listener, needle, tmp_path, capsys, monkeypatch) -> None:
    """The timeout bounds the whole handshake, not only the TCP connect (1 s here to keep the test quick)."""
    monkeypatch.setattr(cluster, "SCHEDULER_TIMEOUT_S", 1)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kind: deca\ngrid:\n  density: [0.5]\n")
    with listener() as port:
        start = time.monotonic()
        code = main(["sweep", str(cfg), "--scheduler", f"tcp://127.0.0.1:{port}", "--out", str(tmp_path / "x.csv")])
        elapsed = time.monotonic() - start
    assert code == 2 and elapsed < 1 + 4, elapsed  # bounded: it used to hang, or take a traceback
    one_line(capsys, "--scheduler: ", f"tcp://127.0.0.1:{port}", needle.format(addr=f"tcp://127.0.0.1:{port}"))
    assert not (tmp_path / "x.csv").exists()


# --- modes of written files ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _deca_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kind: deca\ngrid:\n  density: [0.5]\n")
    return cfg


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_get_the_umask_mode(mask, mode, tmp_path, capsys) -> None:
    out = tmp_path / "x.csv"
    with _umask(mask):
        assert main(["sweep", str(_deca_config(tmp_path)), "--out", str(out), "--workers", "1"]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert sorted(os.listdir(tmp_path)) == ["c.yaml", "x.csv"]  # no temporary left


def test_a_rewrite_keeps_the_mode_of_a_tracked_file(tmp_path, capsys, monkeypatch) -> None:
    """`characterize` rewrites the committed snapshot (a 0664 checkout here) under a strict umask: it stays
    0664, as `git checkout` made it."""
    snap = tmp_path / "characterization.json"
    snap.write_text(characterization.SNAPSHOT.read_text())
    snap.chmod(0o664)
    monkeypatch.setattr(characterization, "SNAPSHOT", snap)
    records = tmp_path / "records"
    records.mkdir()
    rec = characterization.lookup(UNIT_GEMV, snap)
    (records / "a.json").write_text(json.dumps({**rec.to_dict(), "date": "2099-01-01"}))
    with _umask(0o077):
        assert main(["characterize", "--records", str(records)]) == 0
    assert characterization.lookup(UNIT_GEMV, snap).date == "2099-01-01"
    assert stat.S_IMODE(snap.stat().st_mode) == 0o664


# --- characterize: unreadable records ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"unit": "u", ', "not a characterization record (Expecting"),
        (b"[1, 2]", "a JSON object of fields expected, not a list"),
        (b'{"unit": "u"}', "missing fields ['cycles_per_transaction', 'date'"),
        (b"\xff\xfe\x00garbage", "not a characterization record"),
    ],
    ids=["truncated", "list", "missing", "binary"],
)
def test_characterize_names_the_bad_record_file(content, needle, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(characterization, "SNAPSHOT", tmp_path / "snap.json")
    records = tmp_path / "records"
    records.mkdir()
    (records / "bad.json").write_bytes(content)
    assert main(["characterize", "--records", str(records)]) == 2
    one_line(capsys, f"{records / 'bad.json'}: ", needle)
    assert not (tmp_path / "snap.json").exists()


def test_characterize_names_a_field_of_the_wrong_type(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(characterization, "SNAPSHOT", tmp_path / "snap.json")
    records = tmp_path / "records"
    records.mkdir()
    rec = characterization.load()[0].to_dict()
    (records / "r.json").write_text(json.dumps({**rec, "latency": "12"}))
    assert main(["characterize", "--records", str(records)]) == 2
    one_line(capsys, f"{records / 'r.json'}: ", "latency is '12'; a whole number expected")


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_characterize_records_directory_missing_or_a_file(kind, tmp_path, capsys) -> None:
    records = tmp_path / "records"
    if kind == "file":
        records.write_text("")
    assert main(["characterize", "--records", str(records)]) == 2
    one_line(capsys, f"--records: {records} {'does not exist' if kind == 'missing' else 'is not a directory'}")


def test_a_corrupt_snapshot_is_named(tmp_path, capsys, monkeypatch) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text('{"records": [')
    monkeypatch.setattr(characterization, "SNAPSHOT", snap)
    records = tmp_path / "records"
    records.mkdir()
    (records / "r.json").write_text(json.dumps(characterization.load()[0].to_dict()))
    assert main(["characterize", "--records", str(records)]) == 2
    one_line(capsys, f"{snap}: not a characterization snapshot (JSONDecodeError")


# --- flash-bench --size larger than the disk -------------------------------------------------------------------


def test_flash_bench_refuses_a_size_over_the_free_space(tmp_path, capsys, monkeypatch) -> None:
    """Refused before a byte is written (the scratch file used to fill the disk for minutes first)."""
    from sysmodel.designs.flash import bench

    def must_not_write(path, size) -> None:  # were the check gone, this test must not fill the disk
        raise AssertionError("flash-bench started writing its scratch file")

    monkeypatch.setattr(bench, "write_scratch", must_not_write)
    size_mib = (shutil.disk_usage(tmp_path).free >> 20) + 1024
    assert main(["flash-bench", "--out", str(tmp_path / "fb"), "--size", str(size_mib)]) == 2
    one_line(capsys, f"--size: {size_mib} MiB does not fit on the disk of {tmp_path / 'fb'}", "MiB free")
    assert not (tmp_path / "fb").exists()  # the --out it created is removed again


# --- Ctrl-C while numba compiles ---------------------------------------------------------------------------------

# The real command, with SIGINT sent from inside the ctypes callback LLVM calls when it has compiled a module
# (numba's object-cache hook): the window where a KeyboardInterrupt used to be swallowed ("Exception ignored on
# calling ctypes callback function", then exit 0)
_INTERRUPT_MID_COMPILE = """
import os, signal, sys
from numba.core import codegen
hook = codegen.JITCodeLibrary._object_compiled_hook.__func__
def kick(cls, ll_module, buf):
    os.kill(os.getpid(), signal.SIGINT)
    hook(cls, ll_module, buf)
codegen.JITCodeLibrary._object_compiled_hook = classmethod(kick)
from sysmodel.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_during_the_first_numba_compile(tmp_path) -> None:
    """The interrupt waits for the compile to finish (the engine lands in the empty cache whole), then exits 130
    with one line."""
    cache = tmp_path / "numba"
    cache.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(Path(__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_MID_COMPILE, "dram", "--requests", "1000"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 130 and proc.stderr == "membound dram: interrupted\n", proc.stderr
    assert proc.stdout == "" and list(cache.rglob("memory._channel-*.nbi"))


# --- warnings on stderr -------------------------------------------------------------------------------------


def _one_token_trace(tmp_path: Path) -> Path:
    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,prompt_tokens,output_tokens\n0,100,1\n0.5,50,1\n")
    return trace


def _dump(tmp_path: Path, active: bool) -> Path:
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", x=rng.standard_normal((50, 64)), active=np.full((50, 256), active))
    return tmp_path / "d.npz"


@pytest.mark.filterwarnings("error")  # any warning fails the test, naming its cause
@pytest.mark.parametrize(
    "args",
    [
        ["systems"],
        ["serve", "--model", "llama2-7b", "--requests", "20", "--out", "{tmp}/s"],
        ["dram", "--requests", "2000", "--pattern", "random", "--writes", "0.5"],
        ["flash-predictor", "--tokens", "100"],
        ["flash-predictor", "--dump", "{all_active}"],  # used to divide by zero: a log-odds bias of 1 / 0
        ["sweep", "{deca}", "--out", "{tmp}/x.csv", "--workers", "1"],
        ["serve", "--model", "llama2-7b", "--trace", "{one_token}", "--out", "{tmp}/s"],  # no TBT gap: no legend
    ],
    ids=["systems", "serve", "dram", "flash-predictor", "flash-predictor-all-active", "sweep", "serve-one-token"],
)
def test_commands_warn_nothing(args, tmp_path, capsys) -> None:
    paths = {
        "tmp": tmp_path,
        "deca": _deca_config(tmp_path),
        "one_token": _one_token_trace(tmp_path),
        "all_active": _dump(tmp_path, True),
    }
    assert main([a.format(**paths) for a in args]) == 0
    assert capsys.readouterr().err == ""


def test_a_library_warning_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    """Rendered as one line naming the command, whatever its source (here one a plot helper is made to raise,
    as matplotlib's "No artists with labels" did before the TBT CDF skipped an empty legend)."""
    from sysmodel.report import plots

    trace = _one_token_trace(tmp_path)
    monkeypatch.setattr(plots, "legend_outside", lambda ax: warnings.warn("No artists with labels", stacklevel=1))
    with warnings.catch_warnings():  # Python's own route to stderr, in place of pytest's recorder
        warnings.showwarning = lambda message, category, filename, lineno, *_, **__: sys.stderr.write(
            warnings.formatwarning(message, category, filename, lineno)
        )
        assert main(["serve", "--model", "llama2-7b", "--trace", str(trace), "--out", str(tmp_path)]) == 0
    err = one_line(capsys, "membound serve: warning: No artists with labels")
    assert err.endswith("(UserWarning)\n")


# --- a new user's afternoon (session s10): mistakes that used to give a library's words, or none ------------

_BINARY = b"\xff\xfe\x00garbage"


@pytest.mark.parametrize(
    ("name", "content", "option", "needle"),
    [
        ("t.csv", _BINARY, "--trace", "trace: {path}: not UTF-8 text"),  # was only the codec's message
        ("p.csv", _BINARY, "--profile", "profile: {path}: not UTF-8 text"),
        # a row longer than its header: the extra field used to be dropped unread
        ("t.csv", b"arrival_s,prompt_tokens,output_tokens\n0,10,5,7\n", "--trace", "t.csv line 2: 4 fields"),
        ("b.csv", b"Timestamp,Model,Request tokens,Response tokens\n0,x,10,5,9\n", "--trace", "b.csv line 2: 5 fields"),
        # a misspelt arrival_s went unread: every request at t = 0, silently
        ("t.csv", b"arrival,prompt_tokens,output_tokens\n0,10,5\n", "--trace", "no arrival_s, and ['arrival'] not"),
        ("t.jsonl", b'{"t": 1, "prompt_tokens": 10, "output_tokens": 5}\n', "--trace", "no arrival_s, and ['t'] not"),
        # an unclosed quote running into csv's field size limit was a traceback (csv.Error is no ValueError)
        (
            "t.csv",
            b'arrival_s,prompt_tokens,output_tokens\n0,"10,5\n' + b"1,10,5\n" * 30000,
            "--trace",
            "{path}: not readable as CSV",
        ),
        (
            "p.csv",
            b'decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,"' + b"1" * 200000,
            "--profile",
            "{path}: not readable as CSV",
        ),
        # an existing file of another kind was told it could be "a file"
        ("t.txt", b"prompt_tokens,output_tokens\n10,5\n", "--trace", "or a .csv or .jsonl file"),
    ],
    ids=[
        "trace-binary",
        "profile-binary",
        "trace-long-row",
        "burstgpt-long-row",
        "arrival-misspelt",
        "jsonl-arrival-misspelt",
        "trace-unclosed-quote",
        "profile-huge-field",
        "trace-suffix",
    ],
)
def test_a_bad_user_file_is_named(name, content, option, needle, tmp_path, capsys) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    args = ["serve", "--model", "llama2-7b", "--requests", "2", option, str(path), "--out", str(tmp_path / "o")]
    assert main(args) == 2
    one_line(capsys, needle.format(path=path))


@pytest.mark.parametrize("system", ["hermes", "duplex"])
def test_a_negative_seed_is_refused_by_name(system, tmp_path, capsys) -> None:
    """numpy's generators refuse seeds < 0 with "expected non-negative integer", naming nothing."""
    args = ["serve", "--system", system, "--model", "mixtral-8x7b" if system == "duplex" else "llama2-7b"]
    assert main([*args, "--set", "seed=-1", "--requests", "2", "--out", str(tmp_path)]) == 2
    one_line(capsys, "seed: '-1' not allowed; allowed: >= 0")


def _npy(path: Path) -> None:
    with path.open("wb") as f:  # through a handle: np.save would append .npy to the name
        np.save(f, np.zeros((4, 4)))


@pytest.mark.parametrize(
    ("write", "needle"),
    [
        (_npy, "one .npy array, not an .npz archive"),  # was a traceback (an ndarray has no .files)
        (lambda p: np.savez(p, x=np.zeros((4, 4)), pre=np.full((4, 8), "a")), "pre is <U1; finite floats"),  # too
        (lambda p: p.write_text("x,active\n1,2\n"), "not an .npz archive (numpy.savez writes one)"),  # "pickled"
    ],
    ids=["npy", "text-pre", "csv"],
)
def test_flash_predictor_dump_mistakes(write, needle, tmp_path, capsys) -> None:
    """The same .npz reader as Hermes' traces (sysmodel/designs/npz.py), each mistake in its own words."""
    path = tmp_path / "d.npz"
    write(path)
    assert main(["flash-predictor", "--dump", str(path)]) == 2
    one_line(capsys, f"activation dump {path}: {needle}")


@pytest.mark.parametrize(
    ("system", "setting", "needle"),
    [
        ("deca", "capacity_gb=0.5", "do not fit SPR-HBM's 0.5 GB"),  # was "0 GB"
        ("flash", "dram_gb=0.5", "do not fit 0.5 GB of DRAM (--set dram_gb=0.5)"),  # was "0 GB ... half its memory"
    ],
)
def test_a_capacity_too_small_is_said_as_set(system, setting, needle, tmp_path, capsys) -> None:
    args = ["serve", "--system", system, "--model", "llama2-7b", "--set", setting, "--out", str(tmp_path)]
    assert main(args) == 2
    one_line(capsys, needle)


def test_a_request_the_watermark_refuses_says_so(tmp_path, capsys) -> None:
    """It used to say the system holds 0.1 GB next to its weights (66.5 GB: the rest kept free)."""
    assert main(["serve", "--model", "llama2-7b", "--watermark", "0.999", "--out", str(tmp_path)]) == 2
    one_line(capsys, "the system holds 66.5 GB next to its weights, 0.1 GB of it above the watermark (0.999 kept")


def test_a_default_that_does_not_fit_the_model_is_one_compare_row(tmp_path, capsys) -> None:
    """L3's 8 GPUs cannot split Falcon-7B's 71 heads: that used to refuse the whole comparison (exit 2). Nor can
    Duplex's 4 xPUs of a node (it ran them at 17.75 heads each)."""
    args = ["compare", "--model", "falcon-7b", "--systems", "gpu,l3,duplex", "--requests", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    rows = {r["system"]: r for r in csv.DictReader((tmp_path / "compare.csv").open())}
    assert rows["gpu"]["feasible"] == "True" and rows["l3"]["feasible"] == "False"
    assert rows["l3"]["reason"].startswith("tp: 8 does not divide falcon-7b's 71 attention heads")
    assert rows["duplex"]["reason"].startswith("devices: 4 does not divide falcon-7b's 71 attention heads")
    assert rows["l3"]["throughput_tok_s"] == ""


def test_a_trace_file_without_arrival_times_says_all_at_zero(tmp_path, capsys) -> None:
    """``arrival_s`` is optional (every request at t = 0); the headline used to say "the file's arrival times"."""
    path = tmp_path / "t.csv"
    path.write_text("prompt_tokens,output_tokens\n10,5\n20,5\n")
    assert main(["serve", "--model", "llama2-7b", "--trace", str(path), "--out", str(tmp_path / "o")]) == 0
    assert "| t (all at t=0) |" in capsys.readouterr().out


_BOM = b"\xef\xbb\xbf"  # Excel's "CSV UTF-8" and some editors start a file with it


def test_a_byte_order_mark_is_dropped(tmp_path) -> None:
    """Read as plain UTF-8 the mark renamed the first column: a trace's arrival_s went unread (every request at
    t = 0, silently), a profile's header, a sweep config and a model's config.json were refused."""
    from sysmodel import sweep
    from sysmodel.cost.models import load_model
    from sysmodel.engines import profile, traces

    (tmp_path / "t.csv").write_bytes(_BOM + b"arrival_s,prompt_tokens,output_tokens\r\n0,100,50\r\n1.5,20,5\r\n")
    assert list(traces.load(tmp_path / "t.csv")[0].arrival) == [0.0, 1.5]
    (tmp_path / "b.csv").write_bytes(_BOM + b"Timestamp,Model,Request tokens,Response tokens\n2,x,10,5\n4,x,10,5\n")
    assert list(traces.load(tmp_path / "b.csv")[0].arrival) == [0.0, 2.0]
    (tmp_path / "p.csv").write_bytes(_BOM + b"decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,1\n0,0,1,1\n")
    assert profile.load(tmp_path / "p.csv")[0][0] == "decode_reqs"
    (tmp_path / "c.toml").write_bytes(_BOM + b'kind = "decode"\n[grid]\nmodel = ["llama2-7b"]\ndevice = ["rtx4090"]\n')
    assert sweep.load_config(tmp_path / "c.toml")["kind"] == "decode"
    (tmp_path / "config.json").write_bytes(_BOM + Path("sysmodel/data/models/llama2-7b.json").read_bytes())
    assert load_model(tmp_path / "config.json").params() == load_model("llama2-7b").params()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["hermes", "--model", "llama2-13b", "--host", "--multipliers", "64"], "--multipliers: Hermes-host computes"),
        (["serve", "--system", "hermes", "--model", "llama2-13b", "--set", "host=true", "--set", "dimms=4"], "dimms=4"),
    ],
)
def test_hermes_host_refuses_ndp_settings(args, needle, tmp_path, capsys) -> None:
    """Hermes-host runs the cold neurons on the CPU: NDP multipliers and DIMMs changed nothing, silently."""
    assert main([*args, *(["--out", str(tmp_path)] if args[0] == "serve" else [])]) == 2
    one_line(capsys, needle, "Hermes-host computes the cold neurons on the CPU")


@pytest.mark.parametrize(
    ("settings", "needle"),
    [
        (["mode=gpu", "pim=bank"], "pim=bank: unused with mode gpu"),  # was named "GPU (Bank-PIM)", numbers as GPU
        (["mode=gpu", "softmax_lanes=8"], "softmax_lanes=8: unused with mode gpu"),
        (["seed=5", "routing={routing}"], "seed=5: unused with mode duplex+pe+et and a routing file"),
    ],
)
def test_duplex_refuses_settings_that_change_nothing(settings, needle, tmp_path, capsys) -> None:
    routing = tmp_path / "r.npy"
    np.save(routing, np.tile([0, 1], (16, 1)))
    sets = [x for s in settings for x in ("--set", s.format(routing=routing))]
    assert main(["serve", "--system", "duplex", "--model", "mixtral-8x7b", *sets, "--out", str(tmp_path / "o")]) == 2
    one_line(capsys, needle)


def test_the_fewest_devices_that_fit_must_split_the_heads(tmp_path, capsys) -> None:
    """Falcon-7B (71 heads) needs 2 T4s by memory: it ran on them with 35.5 heads each, silently."""
    assert main(["serve", "--model", "falcon-7b", "--device", "t4-hermes", "--out", str(tmp_path)]) == 2
    one_line(capsys, "devices=0 (the fewest that fit): 2 does not divide falcon-7b's 71 attention heads")


def test_a_missing_pipeline_link_lists_the_links(tmp_path, capsys) -> None:
    """It pointed at `devices.LINKS`, a name in the code, not the names --pp-link takes."""
    assert main(["serve", "--model", "llama2-7b", "--system", "cpu", "--pp", "2", "--out", str(tmp_path)]) == 2
    one_line(capsys, "give one: --pp-link pcie4x16 | pcie5x16")


def test_replicas_of_a_pipeline_are_named_with_it(tmp_path, capsys) -> None:
    """Two replicas of a 2-stage pipeline were headed "GPU-only (1x a100-80g-sxm) x 2", the PP 2 dropped."""
    args = ["serve", "--model", "llama2-7b", "--requests", "8", "--replicas", "2", "--pp", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("GPU-only (1x a100-80g-sxm), PP 2 x 2 (round-robin) |")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["dram", "--requests", "1e12"], "--requests: 1000000000000 not allowed; 1 to 10,000,000 bursts"),
        (["flash-predictor", "--tokens", "1e10"], "--tokens: 10000000000 not allowed; 2 to 100,000 synthetic tokens"),
    ],
    ids=["dram-requests", "predictor-tokens"],
)
def test_a_size_beyond_memory_is_refused_by_name(args, needle, capsys) -> None:
    """Both were MemoryError tracebacks (a MemoryError is no ValueError); a size just short of that swapped."""
    assert main(args) == 2
    one_line(capsys, f"membound {args[0]}: {needle}")


def test_a_memory_error_is_one_line(capsys, monkeypatch) -> None:
    """What no bound foresees: one line naming the command, not a traceback."""
    from sysmodel.engines import memory

    def fail(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(memory, "pattern_addrs", fail)
    assert main(["dram", "--requests", "10"]) == 2
    one_line(capsys, "membound dram: out of memory: ask for fewer")


def test_flash_predictor_refuses_tokens_beside_a_dump(tmp_path, capsys) -> None:
    """--tokens sizes the synthetic set only: beside --dump it was silently ignored."""
    path = tmp_path / "d.npz"
    np.savez(path, x=np.zeros((10, 4)), active=np.zeros((10, 8), bool))
    assert main(["flash-predictor", "--dump", str(path), "--rank", "2", "--tokens", "5"]) == 2
    one_line(capsys, "--tokens: only for synthetic tokens; a --dump's tokens are its rows")


def test_a_pipeline_deeper_than_the_layers_is_refused(tmp_path, capsys) -> None:
    """Llama-2-7B (32 layers) ran on 64 pipeline stages, half of them with no layer."""
    assert main(["serve", "--model", "llama2-7b", "--pp", "33", "--requests", "2", "--out", str(tmp_path)]) == 2
    one_line(capsys, "pp: 33 not allowed; at most the model's 32 layers (one a stage)")


def test_dram_counts_in_words(capsys) -> None:
    """'1 requests', '1 refreshes': the counts of the one-line result agree with their nouns."""
    assert main(["dram", "--requests", "1"]) == 0
    out = capsys.readouterr().out
    assert "| 1 request (0% writes) |" in out and " GB/s of 25.60 GB/s peak (" in out  # the peak's unit said too
    assert main(["dram", "--requests", "5000", "--mode", "rank_level"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("cycles | 1 refresh")


def test_report_requests_for_a_section_without_serving(tmp_path, capsys) -> None:
    """--requests sizes the compare, duplex and l3 serving runs: --paper flash --requests 7 ran as 1000, unsaid."""
    assert main(["report", "--paper", "flash", "--requests", "7", "--out", str(tmp_path)]) == 2
    one_line(capsys, "--requests: --paper flash runs no serving requests (only compare, duplex, l3 do)")
    assert not any(tmp_path.iterdir())


def _legacy_profile(path: Path) -> Path:
    path.write_text("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,128,0,0.01\n8,8192,0,0.02\n0,0,128,0.03\n")
    return path


def test_a_profile_refuses_an_efficiency_it_would_replace(tmp_path, capsys) -> None:
    """--set efficiency=peak beside --profile ran, its numbers the profile's whatever the efficiency."""
    prof = _legacy_profile(tmp_path / "p.csv")
    args = ["serve", "--model", "llama2-7b", "--profile", str(prof), "--set", "efficiency=peak"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    one_line(capsys, "--set efficiency: --profile's measured times replace the stage times it would set")


def test_a_profile_that_is_a_directory_is_called_one(tmp_path, capsys) -> None:
    """It was said not to exist."""
    assert main(["serve", "--model", "llama2-7b", "--profile", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    one_line(capsys, f"profile: {tmp_path} is a directory; name a CSV file")


def test_hermes_says_what_it_counts(capsys) -> None:
    """'reloads 5316 | remaps 1563' gave no unit: both count neurons, moved over different links."""
    assert main(["hermes", "--model", "phi-2"]) == 0
    out = capsys.readouterr().out
    assert " neurons reloaded onto the GPU (PCIe) | " in out and " neurons remapped across DIMMs (DIMM-link)" in out
    assert main(["hermes", "--model", "phi-2", "--host"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("reloaded onto the GPU (PCIe)")  # no DIMMs to remap across


def test_a_max_batch_above_the_hardware_is_said_and_recorded_as_run(tmp_path, capsys) -> None:
    """Hermes batches at most 16 requests: --max-batch 64 ran at 16 while the run block said 64."""
    argv = ["serve", "--system", "hermes", "--model", "llama2-7b", "--requests", "4", "--max-batch", "64"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    assert "--max-batch 64: Hermes batches at most 16 requests" in capsys.readouterr().err
    assert json.loads((tmp_path / "run.json").read_text())[0]["run"]["max_batch"] == 16
