"""The System registry: every design registered, served on the one engine, compared on one cost basis."""

import ast
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hw.hermes.cycles import UNIT_GEMV
from sysmodel import systems
from sysmodel.cli import main
from sysmodel.cost import energy
from sysmodel.cost.models import StageShape, layer_groups, layer_ops, load_model
from sysmodel.cost.stage import Infeasible

NINE = ["gpu", "hbm-pim", "cpu", "offload", "deca", "duplex", "flash", "hermes", "l3"]
ROOT = Path(__file__).resolve().parent.parent


def test_the_nine_systems_are_registered_and_listed(capsys) -> None:
    assert list(systems.entries()) == NINE
    assert main(["systems"]) == 0
    out = capsys.readouterr().out
    for name in NINE:
        assert f"\n{name}: " in f"\n{out}"
    assert "    dimms = 8: NDP-DIMMs (32 GB each); allowed: >= 1 and <= 64" in out


def test_serving_imports_no_design() -> None:
    """serving.py names no design in its imports, and importing it loads none."""
    designs = {"baselines", *(p.name for p in (ROOT / "sysmodel" / "designs").iterdir() if (p / "system.py").exists())}
    tree = ast.parse((ROOT / "sysmodel" / "engines" / "serving.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | {
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
    }
    assert not {m for m in imported if m.split(".")[1:2] and m.split(".")[1] in designs}
    code = (
        "import sys, sysmodel.engines.serving; print(sorted(m for m in sys.modules if m.startswith('sysmodel.') and "
        f"m.split('.')[1] in {sorted(designs)!r}))"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@pytest.mark.parametrize("name", NINE)
def test_serve_runs_a_50_request_trace_on_every_system(name, tmp_path, capsys) -> None:
    assert main(["serve", "--system", name, "--model", "llama2-7b", "--requests", "50", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "50 requests" in out and "tokens/s" in out and "J/token" in out
    rows = list(csv.DictReader((tmp_path / "requests.csv").open()))
    assert len(rows) == 50 and all(float(r["finish_s"]) > float(r["arrival_s"]) for r in rows)


def test_set_is_validated(capsys) -> None:
    for argv, msg in (
        (["--set", "dimms=0"], "dimms: '0' not allowed; allowed: >= 1 and <= 64"),
        (["--set", "wings=2"], "--set wings: system hermes has no such parameter; its parameters: dimms, multipliers"),
        (["--set", "dimms"], "--set: 'dimms' is not key=value"),
        (["--set", "host=maybe"], "host: 'maybe' is not true or false"),
        (["--devices", "2"], "--devices: system hermes has no devices parameter"),
    ):
        assert main(["serve", "--system", "hermes", "--model", "llama2-7b", *argv]) == 2
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("name", "model", "settings", "reason"),
    [
        ("gpu", "llama2-70b", ["devices=1"], "no room for a KV cache"),
        ("hermes", "falcon-40b", ["dimms=2"], "83 GB of weights do not fit 2 NDP-DIMMs"),
        ("hermes", "mixtral-8x7b", [], "MoE experts are outside its model"),
        ("deca", "llama2-70b", ["scheme=q16", "density=1"], "do not fit SPR-HBM's 64 GB"),
        ("flash", "llama2-70b", [], "do not fit 32 GB of DRAM"),
        ("duplex", "grok-1", ["nodes=1", "devices=4"], "do not fit"),
        ("l3", "phi-2", [], "head dimension 80"),
    ],
)
def test_infeasible_configurations_are_refused_with_the_reason(name, model, settings, reason) -> None:
    from sysmodel.engines.serving import make_trace, simulate

    with pytest.raises(Infeasible, match=reason):
        simulate(make_trace("fixed", 2), systems.build(name, model, settings))


def test_compare_llama2_70b_on_every_system(tmp_path, capsys) -> None:
    assert (
        main(
            [
                "compare",
                "--model",
                "llama2-70b",
                "--systems",
                "all",
                "--requests",
                "8",
                "--out",
                str(tmp_path),
                "--provenance",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    rows = {r["system"]: r for r in csv.DictReader((tmp_path / "compare.csv").open())}
    assert list(rows) == NINE
    for name, r in rows.items():
        if r["feasible"] == "True":
            assert float(r["joules_per_token"]) > 0 and float(r["throughput_tok_s"]) > 0 and r["area_mm2"] != ""
        else:
            assert r["reason"] and r["throughput_tok_s"] == "" and r["joules_per_token"] == "", name
    assert rows["flash"]["feasible"] == "False" and rows["deca"]["feasible"] == "True"
    assert float(rows["deca"]["area_mm2"]) == pytest.approx(2.51) and float(rows["gpu"]["area_mm2"]) == 0
    prov = json.loads((tmp_path / "compare_provenance.json").read_text())
    assert prov["run"]["requests"] == 8 and prov["run"]["replicas"] == 1
    prov = prov["systems"]
    assert prov["flash"] == {"system": "flash", "settings": [], "feasible": False, "reason": rows["flash"]["reason"]}
    gemv = prov["hermes"]["records"][0]
    assert gemv["unit"] == UNIT_GEMV and len(gemv["hw_sha256"]) == 16
    assert any("fitted" in f for f in prov["deca"]["fits"])
    assert all((tmp_path / f).exists() for f in ("compare.md", "compare_energy.png", "compare_latency.png"))
    assert "no: llama2-70b: the resident" in out and "Provenance" in out


def test_compare_mistakes_are_one_line(tmp_path, capsys) -> None:
    for argv, msg in (
        (["--systems", "gpu,tpu"], "system: unknown 'tpu'"),
        (["--set", "hermes.dimms=0"], "dimms: '0' not allowed"),
        (["--set", "l3.tp=4", "--systems", "gpu"], "system 'l3' is not compared"),
        (["--set", "dimms=4"], "is not system.key=value"),
    ):
        assert main(["compare", "--model", "llama2-7b", "--out", str(tmp_path / "x"), *argv]) == 2
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, err
        assert not (tmp_path / "x").exists()


# --- energy: each system's joules on one stage, by hand --------------------------------------------------

PJ = 1e-12
HBM_HOST = 0.11 + 0.44 + 1.01 + 1.23 + 0.5 + 0.3  # AttAcc's FGDRAM chain, pJ/bit
FLOP = 0.64  # pJ per FP16 FLOP


def layer_bytes_flops(model: str, shape: StageShape, skip=()) -> tuple[float, float]:
    """Bytes and FLOPs of every layer operator of a stage (the model zoo's operators), all layers."""
    cfg, nbytes, flops = load_model(model), 0.0, 0.0
    for moe, count in layer_groups(cfg):
        for op in layer_ops(cfg, shape, moe):
            if op.name not in skip:
                nbytes += count * float(op.bytes)
            flops += count * float(op.flops)
    return nbytes, flops


def test_gpu_energy_by_hand() -> None:
    s = systems.build("gpu", "llama2-7b", ["devices=1"])
    shape, t = StageShape.decode(4, 1000), 0.02
    nbytes, flops = layer_bytes_flops("llama2-7b", shape)
    # weights dominate: one decode step reads every layer weight once
    cfg = load_model("llama2-7b")
    assert nbytes > cfg.layers * cfg.layer_params(False) * 2
    want = nbytes * 8 * HBM_HOST * PJ + flops * FLOP * PJ + 0.3 * 400 * t
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-12)


def test_duplex_energy_by_hand() -> None:
    """Decode attention and MoE experts read on Logic-PIM's path (no global IO, no interposer); the rest on the
    xPU's; four H100s' static power; the MoE dispatch and all-reduces over NVLink at 1.3 pJ/bit."""
    s = systems.build("duplex", "mixtral-8x7b")
    shape, t = StageShape.decode(8, 2048), 0.01
    cfg = load_model("mixtral-8x7b")
    pim, host, flops = 0.0, 0.0, 0.0
    for moe, count in layer_groups(cfg):
        for op in layer_ops(cfg, shape, moe):
            flops += count * float(op.flops)
            if op.name == "attn_decode" or (moe and op.name.startswith("ffn_")):
                pim += count * float(op.bytes)
            else:
                host += count * float(op.bytes)
    vec = 8 * cfg.hidden * 2
    link = cfg.layers * (vec * 2 + 2 * 2 * 3 * vec)  # dispatch in and out; two ring all-reduces over 4 devices
    want = (
        pim * 8 * (0.11 + 0.44 + 1.01 + 0.5) + host * 8 * HBM_HOST + flops * FLOP + link * 8 * 1.3
    ) * PJ + 0.3 * 700 * 4 * t
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-12)


def test_deca_energy_by_hand() -> None:
    """Compressed FC tiles (a BF8 tile at 30% density: 153.6 value bytes + a 64-byte mask) and the KV cache
    from HBM, the PE's measured cycles per tile as vOps at 22.1 pJ, FLOPs, SPR's static power."""
    from sysmodel.designs.deca import roof_surface as dm

    s = systems.build("deca", "llama2-7b")
    shape, t = StageShape.decode(1, 500), 0.01
    tiles = dm.fc_weight_tiles("llama2-7b", 1)
    _, flops = layer_bytes_flops("llama2-7b", shape)
    other, _ = layer_bytes_flops("llama2-7b", shape, skip=("qkv", "o_proj", "ffn_gate", "ffn_up", "ffn_down"))
    vops = tiles * dm.measured_cycles()[(32, 8, "q8", 0.3)]
    want = (
        (tiles * (512 * 0.3 + 64) + other) * 8 * HBM_HOST + flops * FLOP + vops * 3.1 / (56 * 2.5e9) / PJ
    ) * PJ + 0.3 * 350 * t
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-9)


def test_l3_energy_by_hand() -> None:
    """Decode attention's KV read in-bank (ACT/PRE and the read burst, no I/O) on DDR4; the rest on the A100s'
    HBM; q, k, v and outputs over PCIe at 5 pJ/bit; eight A100s and 1863 DIMM chips of static power."""
    s = systems.build("l3", "llama2-70b")
    shape, t = StageShape.decode(16, 4000), 0.02
    cfg = load_model("llama2-70b")
    kv = cfg.layers * 16 * 4000 * 2 * cfg.kv_dim * 2
    nbytes, flops = layer_bytes_flops("llama2-70b", shape)
    ddr_bank = energy.MEMORIES["ddr4"].parts["act"] + energy.MEMORIES["ddr4"].parts["read"]
    pcie = cfg.layers * 16 * (2 * cfg.hidden + 2 * cfg.kv_dim) * 2
    allreduce = cfg.layers * 2 * 2 * 7 * 16 * cfg.hidden * 2
    chips = 2e12 * 8 / (8 << 30)
    want = (
        (nbytes - kv) * 8 * HBM_HOST + kv * 8 * ddr_bank + flops * FLOP + pcie * 8 * 5.0 + allreduce * 8 * 1.3
    ) * PJ + (0.3 * 400 * 8 + chips * 1.2 * 0.055) * t
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-9)


def test_energy_basis_constants() -> None:
    """The DDR4 parts follow from the IDD currents by TN-40-07's method; DECA's vOp from its 3.1 W."""
    ddr = energy.MEMORIES["ddr4"].parts
    assert ddr["read"] == pytest.approx(1.2 * 0.090 * 4 * 0.625e-9 / 64 / PJ)
    assert ddr["act"] == pytest.approx((1.2 * 0.005 * 32.5e-9 + 1.2 * 0.010 * 13.75e-9) / 8192 / PJ)
    assert pytest.approx(22.14, abs=0.01) == energy.VOP_PJ
    assert energy.MEMORIES["hbm3"].pj_per_bit("logic") < energy.MEMORIES["hbm3"].pj_per_bit("host")
    with pytest.raises(ValueError, match="path: 'bank' not allowed for gddr6x"):
        energy.MEMORIES["gddr6x"].pj_per_bit("bank")


def test_hbm_pim_energy_by_hand() -> None:
    """Decode attention's KV read in-bank (ACT and cell read only), the rest through the A100's HBM; q, k, v and
    the outputs over NVLink at 1.3 pJ/bit; one A100's static power."""
    s = systems.build("hbm-pim", "llama2-7b")
    shape, t = StageShape.decode(8, 3000), 0.01
    cfg = load_model("llama2-7b")
    nbytes, flops = layer_bytes_flops("llama2-7b", shape)
    kv = cfg.layers * 8 * 3000 * 2 * cfg.kv_dim * 2
    link = cfg.layers * 8 * (2 * cfg.hidden + 2 * cfg.kv_dim) * 2
    want = ((nbytes - kv) * 8 * HBM_HOST + kv * 8 * (0.11 + 0.44) + flops * FLOP + link * 8 * 1.3) * PJ + 0.3 * 400 * t
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-12)


def test_cpu_energy_by_hand() -> None:
    """Everything through DDR5 to the host (ACT/PRE, read burst, DQ and channel I/O), SPR's static power."""
    s = systems.build("cpu", "llama2-7b")
    shape, t = StageShape.decode(2, 1000), 0.1
    nbytes, flops = layer_bytes_flops("llama2-7b", shape)
    ddr = sum(energy.MEMORIES["ddr5"].parts.values())
    assert ddr == pytest.approx(
        1.2 * 0.005 * 32.5e-9 / 8192 / PJ + 1.2 * 0.010 * 13.75e-9 / 8192 / PJ + 1.2 * 0.090 * 2.5e-9 / 64 / PJ + 4.0
    )
    want = (nbytes * 8 * ddr + flops * FLOP) * PJ + 0.3 * 350 * t
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-12)


def test_offload_energy_by_hand() -> None:
    """The RTX 4090 reads every operator's bytes from GDDR6X (7.25 pJ/bit); the streamed share of the weights is
    read from the host's DDR5 and crosses PCIe at 5 pJ/bit; the 4090's static power."""
    s = systems.build("offload", "opt-30b")
    shape, t = StageShape.decode(1, 500), 1.0
    cfg = load_model("opt-30b")
    nbytes, flops = layer_bytes_flops("opt-30b", shape)
    weights = sum(
        count * float(op.weight_bytes) for moe, count in layer_groups(cfg) for op in layer_ops(cfg, shape, moe)
    )
    streamed = s.streamed * weights
    ddr = sum(energy.MEMORIES["ddr5"].parts.values())
    want = (nbytes * 8 * 7.25 + streamed * 8 * (ddr + 5.0) + flops * FLOP) * PJ + 0.3 * 450 * t
    assert 0.5 < s.streamed < 1  # OPT-30B's 60 GB: most of it streams past the 4090's 24 GB
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-12)


def test_flash_energy_by_hand() -> None:
    """A decode token: the window's increment of FFN bundles from NAND (107 pJ/bit), the resident part read and
    the increment copied in and out of LPDDR5 (4 pJ/bit), the KV cache, the resident FLOPs, the M1 Max's
    static power."""
    from sysmodel.designs.flash import model as lat

    s = systems.build("flash", "opt-6.7b")
    cfg = load_model("opt-6.7b")
    shape, t = StageShape.decode(1, 700), 0.7
    w = lat.weights(cfg)
    loaded = lat.increment(cfg, lat.calibration()["cpu"])[0] * w["ffn"] * 4  # fp32 on the CPU backend
    resident = lat.dram_share(cfg) * w["total"] * 4
    kv = 700 * cfg.kv_bytes_per_token()
    want = (
        loaded * 8 * 107 + (resident + 4 * loaded + kv) * 8 * 4.0 + 2 * lat.dram_share(cfg) * w["total"] * FLOP
    ) * PJ + 0.3 * 60 * t
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-12)


def test_hermes_energy_by_hand() -> None:
    """Hot neurons and W_O with the LM head from GDDR6X; cold neurons and the KV cache from the DIMMs' buffer
    chips (ACT/PRE, read burst, DQ: no channel I/O); the block partials over PCIe and, reduce-scattered, over
    DIMM-link (1.17 pJ/bit); the 4090's and 8 DIMMs' static power. Weight bytes per token: the per-token model's
    own count at that batch."""
    s = systems.build("hermes", "llama2-7b")
    cfg = load_model("llama2-7b")
    run = s.run(1)
    gpu_b, dimm_b = run.gpu_bytes / len(run.token_s), run.dimm_bytes / len(run.token_s)
    shape, t = StageShape.decode(1, 300), 0.05
    dense = cfg.layers * cfg.hidden * cfg.hidden * 2 + cfg.vocab * cfg.hidden * 2
    kv = 300 * cfg.kv_bytes_per_token()
    buffer = sum(energy.MEMORIES["ddr4"].parts[p] for p in ("act", "read", "dq"))
    vec = 2 * (2 * cfg.hidden + 2 * cfg.kv_dim) * cfg.layers
    flops = gpu_b + dimm_b + dense + 4.0 * cfg.heads * cfg.head_dim * 300 * cfg.layers
    chips = 8 * 32e9 * 8 / (8 << 30)
    want = (
        (gpu_b + dense) * 8 * 7.25 + (dimm_b + kv) * 8 * buffer + flops * FLOP + vec * 8 * 5.0 + vec * 7 / 8 * 8 * 1.17
    ) * PJ + (0.3 * 450 + chips * 1.2 * 0.055) * t
    assert gpu_b > 0 and dimm_b > 0
    assert float(s.energy(shape, np.array([t]))[0]) == pytest.approx(want, rel=1e-12)
