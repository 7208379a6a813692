"""`membound hermes` as a user meets it (issue 50): memory that does not grow with a deep trace's layers
beyond the trace's own arrays, one set of limits shared with the `hermes` system, one line and exit 2 for
every malformed trace file, and progress from the start."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sysmodel import systems
from sysmodel.cli import main
from sysmodel.cost.models import load_model
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.hermes import workload as wl

ROOT = Path(__file__).resolve().parents[1]
DEEP = load_model("llama2-13b")  # the narrowest zoo model with 40 layers
TOKENS, PREFILL = 12, 8


def deep_trace(path: Path, layers: int) -> Path:
    """A generated trace of ``layers`` layers of DEEP's widths without parents, so loading it computes
    every layer's correlation table (the path that kept ~1 GB per layer)."""
    tr = wl.generate({"attn": DEEP.hidden, "mlp": DEEP.intermediate}, layers, TOKENS, PREFILL, seed=1)
    return tr.save(path, parents=False)


def peak_bytes(trace: Path) -> int:
    """Peak bytes allocated (Python and NumPy, tracemalloc) while `membound hermes` runs ``trace``."""
    tracemalloc.start()
    try:
        assert main(["hermes", "--model", DEEP.name, "--trace", str(trace)]) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_deep_trace_memory_does_not_grow_per_layer_beyond_its_arrays(tmp_path):
    shallow, deep = peak_bytes(deep_trace(tmp_path / "l4.npz", 4)), peak_bytes(deep_trace(tmp_path / "l40.npz", 40))
    # one layer's own arrays (TOKENS bools per neuron) and its per-neuron tables (profile, predictor state,
    # placement, correlation parents, activity: 64 bytes at most), twice over: the bug kept ~1 GB per layer
    per_layer = 2 * (TOKENS + 64) * (DEEP.hidden + DEEP.intermediate)
    assert deep - shallow < 36 * per_layer, f"{(deep - shallow) / 36 / 1e6:.2f} MB per layer"


def test_a_trace_deeper_than_the_model_is_refused(tmp_path, capsys):
    cfg = load_model("llama2-7b")
    arrays = {f"layer{layer}_{b}": np.zeros((1, 4, 2), bool) for layer in range(cfg.layers + 1) for b in wl.BLOCKS}
    np.savez(tmp_path / "t.npz", prefill=2, **arrays)
    assert main(["hermes", "--model", "llama2-7b", "--trace", str(tmp_path / "t.npz")]) == 2
    assert capsys.readouterr().err == "membound hermes: trace: 33 layers; llama2-7b has 32\n"


def test_a_shallower_trace_stands_for_every_layer_and_says_so(tmp_path, capsys):
    path = deep_trace(tmp_path / "l2.npz", 2)
    assert main(["hermes", "--model", DEEP.name, "--trace", str(path)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith(f"Hermes | {DEEP.name} | batch 1 |")
    assert out.err == f"membound hermes: the trace's 2 layers stand for all 40 of {DEEP.name}\n"


def _one_line(capsys, needle: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith("membound hermes: ") and needle in err and err.count("\n") == 1, err
    return err


def test_generator_options_with_a_trace_file_are_refused(tmp_path, capsys):
    path = deep_trace(tmp_path / "l2.npz", 2)
    assert main(["hermes", "--model", DEEP.name, "--trace", str(path), "--batch", "4"]) == 2
    _one_line(capsys, "--batch, --seed: for generated traces; a trace file has its own sequences")


def test_a_moe_model_is_refused_by_both(capsys):
    assert main(["hermes", "--model", "mixtral-8x7b"]) == 2
    _one_line(capsys, "mixtral-8x7b: Hermes splits dense FFN neurons")
    with pytest.raises(Infeasible, match="Hermes splits dense FFN neurons"):
        systems.build("hermes", "mixtral-8x7b")


def test_batch_limit_is_the_systems(capsys):
    limit = systems.build("hermes", "llama2-7b").max_batch  # what serving caps the system's batch at
    assert main(["hermes", "--model", "llama2-7b", "--batch", str(limit + 1)]) == 2
    _one_line(capsys, f"batch: {limit + 1} not allowed; 1 to {limit} sequences")


def test_multipliers_limit_is_the_systems(capsys):
    top = int(systems.get("hermes").param("multipliers").maximum)
    assert main(["hermes", "--model", "llama2-7b", "--multipliers", str(top + 1)]) == 2
    _one_line(capsys, f"multipliers: {top + 1} not allowed; 1 to {top} per NDP core")
    with pytest.raises(ValueError, match=f"multipliers: '{top + 1}' not allowed"):
        systems.build("hermes", "llama2-7b", [f"multipliers={top + 1}"])


def test_progress_shows_from_the_start_on_a_terminal():
    """Every slow step before the first token (imports, solving the statistics, generating, the ILP) is
    named on the bar, the first before the imports."""
    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # a terminal's size: tqdm fits it
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "sysmodel.cli", "hermes", "--model", "llama2-7b"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=child, env=env, cwd=ROOT)
    os.close(child)
    err = b""
    while True:
        try:
            chunk = os.read(parent, 1 << 16)
        except OSError:  # EIO: the command closed its terminal
            break
        if not chunk:
            break
        err += chunk
    os.close(parent)
    assert proc.wait() == 0 and proc.stdout is not None and proc.stdout.read().startswith(b"Hermes | llama2-7b")
    stages = ["hermes: loading the model", "solving the activation statistics", "generating activations"]
    stages += ["placing neurons (ILP): ", "Hermes: "]
    at = [err.find(s.encode()) for s in stages]
    assert -1 not in at and at == sorted(at) and at[0] < err.find(b"\r", 1), (stages, at)


def _write_npz(path: Path, **arrays) -> None:
    np.savez(path, **arrays)


def _write_text(path: Path) -> None:
    path.write_text("layer0_attn,layer0_mlp\n1,0\n")


def _write_npy(path: Path) -> None:
    with path.open("wb") as f:
        np.save(f, np.zeros((1, 4, 4096), bool))


def _write_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("prefill.npy", "not an array")


ATTN, MLP = np.zeros((1, 8, 4096), bool), np.zeros((1, 8, 11008), bool)  # llama2-7b's widths


@pytest.mark.parametrize(
    "write, needle",
    [
        (
            lambda p: _write_npz(p, prefill=4, layer0_attn=ATTN[:0], layer0_mlp=MLP[:0]),
            "layer0_attn is bool (0, 8, 4096); bool (batch, tokens, neurons), batch >= 1",
        ),
        (
            lambda p: _write_npz(p, prefill=4, layer0_attn=ATTN, layer0_mlp=MLP, parents_layerX_mlp=np.zeros((2, 2))),
            "key 'parents_layerX_mlp' not allowed; prefill, layer<l>_<block>, parents_layer<l>_<block>",
        ),
        (
            lambda p: _write_npz(p, prefill=4, layer0_attn=np.array([[[None]]]), layer0_mlp=MLP),
            "layer0_attn is not an array of numbers or bools",
        ),
        (
            lambda p: _write_npz(p, prefill=4, layer0_attn=ATTN, layer0_mlp=MLP, notes=np.zeros(1)),
            "key 'notes' not allowed",
        ),
        (lambda p: _write_npz(p, prefill=4, layer01_attn=ATTN, layer0_mlp=MLP), "key 'layer01_attn' not allowed"),
        (
            lambda p: _write_npz(p, prefill=4, layer0_attn=ATTN.repeat(17, 0), layer0_mlp=MLP.repeat(17, 0)),
            "trace: batch: 17 not allowed; 1 to 16 sequences",
        ),
        (_write_text, "not an .npz archive (numpy.savez writes one)"),
        (lambda p: p.write_bytes(b""), "not an .npz archive"),
        (_write_npy, "one .npy array, not an .npz archive"),
        (_write_zip, "prefill is not an array of numbers or bools"),
    ],
    ids=["batch0", "parents-key", "objects", "unknown-key", "leading-0", "batch17", "text", "empty", "npy", "zip"],
)
def test_malformed_trace_files_are_one_line_naming_the_key_or_file(write, needle, tmp_path, capsys):
    path = tmp_path / "t.npz"
    write(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy or scipy warning on the way
        assert main(["hermes", "--model", "llama2-7b", "--trace", str(path)]) == 2
    err = _one_line(capsys, needle)
    assert "pickle" not in err  # never a hint at an unsafe load
    assert f"trace {path}: " in err or needle.startswith("trace: ")  # the file, or what the model refuses


def test_a_missing_trace_file_is_named(tmp_path, capsys):
    assert main(["hermes", "--model", "llama2-7b", "--trace", str(tmp_path / "none.npz")]) == 2
    _one_line(capsys, f"trace: cannot read {tmp_path / 'none.npz'}: No such file or directory")
