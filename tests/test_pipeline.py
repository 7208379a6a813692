"""Pipeline parallelism (sysmodel/engines/pipeline.py, run through sysmodel/engines/replicas.py), worked by hand."""

import numpy as np
import pytest
from constant_system import ConstantSystem

from sysmodel.cost.devices import get_link
from sysmodel.cost.energy import LINK_PJ, PJ
from sysmodel.designs.baselines import GpuOnly, Offload
from sysmodel.engines import replicas
from sysmodel.engines.pipeline import Pipelined, PipelineUnsupported
from sysmodel.engines.serving import Trace, simulate

HIDDEN, WEIGHTS = 4096, 1000.0


def test_pipeline_latency_of_a_constant_system() -> None:
    """1 s stages on 4 pipeline stages over PCIe 4: each iteration adds 3 hops of tokens x 4096 x 2 bytes
    (1 us + bytes / 32 GB/s each): the 8-token prompt's stage, then two one-token decodes."""
    base = ConstantSystem(1.0, capacity=3000.0, joules=0.5)
    p = Pipelined(base, 4, "pcie4x16", weight_bytes=WEIGHTS, hidden=HIDDEN)
    link = get_link("pcie4x16")

    def hop(tokens: int) -> float:
        return link.latency_s + tokens * HIDDEN * 2 / link.bw

    r = simulate(Trace(np.zeros(1), np.array([8]), np.array([3]), "hand"), p, scheduler="vllm", stages=True)
    first = 1 + 3 * hop(8)
    assert r.first_token[0] == pytest.approx(first, rel=1e-12)
    assert r.finish[0] == pytest.approx(first + 2 * (1 + 3 * hop(1)), rel=1e-12)
    assert p.kv_capacity() == (4 * (3000 + WEIGHTS) - WEIGHTS) / 4  # 4 copies hold the weights once, 1/4 each
    hop_joules = 3 * np.array([8, 1, 1]) * HIDDEN * 2 * 8 * LINK_PJ["pcie4x16"] * PJ
    np.testing.assert_allclose(r.iter_energy, 0.5 + hop_joules, rtol=1e-12)
    assert Pipelined(base, 1, "pcie4x16", weight_bytes=WEIGHTS, hidden=HIDDEN).kv_capacity() == 3000


def test_virtual_engines_share_the_requests_and_the_cache() -> None:
    gpu = GpuOnly("llama2-70b", "a100-80g-sxm", 2)
    tr = Trace(np.zeros(8), np.full(8, 512), np.full(8, 64), "even")
    r, each = replicas.run(tr, gpu, pp=4, scheduler="vllm", stages=True)
    assert r.meta["pp"] == 4 and r.meta["virtual_engines"] == 4 and r.meta["pp_link"] == "nvlink-a100"
    assert r.meta["requests_per_virtual_engine"] == [2, 2, 2, 2] and len(each) == 4
    assert r.system == f"{gpu.name}, PP 4"
    p = Pipelined(gpu, 4)
    assert r.kv_capacity == p.kv_capacity() == (4 * gpu.kv_capacity() + 3 * gpu.cfg.weight_bytes()) / 4
    alone = simulate(Trace(np.zeros(2), np.full(2, 512), np.full(2, 64), "even"), p, scheduler="vllm")
    np.testing.assert_array_equal(r.finish, np.tile(alone.finish, 4))  # four identical engines side by side
    assert (
        each[0].iter_time[-1]
        > simulate(Trace(np.zeros(2), np.full(2, 512), np.full(2, 64)), gpu, scheduler="vllm", stages=True).iter_time[
            -1
        ]
    )  # the hops


def test_pp_one_is_the_engine_and_unsupported_systems_are_named() -> None:
    sys_ = ConstantSystem(1.0)
    tr = Trace(np.zeros(2), np.array([1, 2]), np.array([3, 1]), "hand")
    np.testing.assert_array_equal(replicas.serve(tr, sys_, pp=1).finish, simulate(tr, sys_).finish)
    with pytest.raises(PipelineUnsupported, match="pp: system constant does not say which weights"):
        replicas.serve(tr, sys_, pp=2)
    with pytest.raises(PipelineUnsupported, match="pp: system offload"):
        Pipelined(Offload("llama2-7b"), 2, "pcie4x16")
    with pytest.raises(ValueError, match="pp: 0 not allowed"):
        Pipelined(GpuOnly("llama2-7b"), 0)
    with pytest.raises(ValueError, match="concurrency: not allowed with pp > 1"):
        replicas.serve(tr, GpuOnly("llama2-7b"), pp=2, concurrency=1)


def test_pp_cli(tmp_path, capsys) -> None:
    from sysmodel.cli import main

    serve = "serve --model llama2-70b --devices 2 --trace dolphin --requests 16 --scheduler vllm --pp 2 --out"
    assert main([*serve.split(), str(tmp_path / "s")]) == 0
    assert "GPU-only (2x a100-80g-sxm), PP 2 | dolphin" in capsys.readouterr().out
    assert (tmp_path / "s" / "kv_utilisation.png").exists()
    compare = "compare --model llama2-7b --systems gpu,offload --requests 8 --pp 2 --replicas 2 --out"
    assert main([*compare.split(), str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "no: pp: system offload" in out and "4 copies x (a baseline" in (tmp_path / "c" / "compare.csv").read_text()
    bad_link = "serve --model llama2-7b --requests 4 --pp 2 --pp-link nvlink-x --out"
    assert main([*bad_link.split(), str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--pp-link: unknown 'nvlink-x'" in err
