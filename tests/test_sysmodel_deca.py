"""The DECA system model reproduces the paper: Table 2 within 5% for every column, the paper's
MEM/VEC classification, the §8.2 design-space claims, and plausible Table 6 latencies."""

from dataclasses import replace

import pytest

from sysmodel.cost import characterization
from sysmodel.designs.deca import paper
from sysmodel.designs.deca import roof_surface as deca


@pytest.mark.parametrize("row", deca.table2(), ids=lambda r: r["kernel"])
def test_table2_bound_classification(row: dict) -> None:
    """Where the paper's R-S equals its R-L the kernel is MEM-bound (Table 2's text), otherwise VEC-bound: the
    model classifies every kernel so. (The values themselves are ledger rows: tests/test_ledger.py.)"""
    assert row["bound"] == ("MEM" if row["rs_paper"] == row["rl_paper"] else "VEC")


def test_libxsmm_counts_are_the_transcribed_sequences() -> None:
    """Per tile, from the generator loops: BF16-sparse 8 iterations x 21 instructions + 7 of call overhead;
    BF8-sparse 8 x 31 + 6 (each iteration: expand, extract, two 8-instruction table lookups); MXFP4 4 x 43
    plus scale preparation (11 per 1024 outputs)."""
    from sysmodel.designs.deca import libxsmm

    assert libxsmm.instructions_per_tile("q16_sparse") == {"all": 8 * 21 + 7, "vector": 32}
    assert libxsmm.instructions_per_tile("q8_sparse") == {"all": 8 * 31 + 6, "vector": 152}
    assert libxsmm.instructions_per_tile("q4_dense") == {"all": 4 * 43 + 5.5, "vector": 122}
    with pytest.raises(ValueError, match="family: no libxsmm sequence for 'q4_sparse'"):
        libxsmm.instructions_per_tile("q4_sparse")


def test_avx_scaling_rule_keeps_memory_operations() -> None:
    """§8.1's 4x AVX rule: per loop iteration, memory operations stay and the rest is divided by 4; the call's
    set-up stays. BF16-sparse: 10 of 21 are memory (2 mask loads, 4 prefetches, 2 expand-loads, 2 stores);
    BF8-sparse 6 of 31; MXFP4 8 of 43 (2 loads, 2 prefetches, 4 stores)."""
    from sysmodel.designs.deca import libxsmm

    assert libxsmm.instructions_per_tile("q16_sparse", 4)["all"] == 8 * (10 + 11 / 4) + 7
    assert libxsmm.instructions_per_tile("q8_sparse", 4)["all"] == 8 * (6 + 25 / 4) + 6
    assert libxsmm.instructions_per_tile("q4_dense", 4)["all"] == 4 * (8 + 35 / 4) + 5.5
    with pytest.raises(ValueError, match="vector_scale: 0 not allowed"):
        libxsmm.instructions_per_tile("q8_dense", 0)


def test_fig14_scaled_avx_lies_between_software_and_deca() -> None:
    """Fig. 14: the 4x AVX core is never slower than Software-only nor faster than DECA, equals DECA where it is
    memory-bound, and falls short of it on the most compressed kernel (the paper: "far below DECA's")."""
    rows = deca.vector_scaling_speedups()
    scaled = deca.FIG14_SYSTEMS[0]
    for r in rows:
        assert r["Software-only"] <= r[scaled] * (1 + 1e-12) and r[scaled] <= r["DECA"] * (1 + 1e-12)
    assert rows[0][scaled] == pytest.approx(rows[0]["DECA"])  # BF16_50%: memory-bound everywhere
    assert rows[-1]["kernel"] == "BF8_5%" and rows[-1]["DECA"] > 1.5 * rows[-1][scaled]


def test_derived_vo_predicts_bf16_sparse() -> None:
    """One constant fitted on BF8-sparse predicts BF16-sparse's VO (Table 2's 23.0 TFLOPS) within 3%."""
    k = deca.Kernel("q16", 0.2)
    assert deca.sw_vo_per_tile(k) == pytest.approx(deca.SW_VO_FITTED["q16_sparse"][1], rel=0.03)


def test_table4_cross_checks_the_inferred_sparse_constant() -> None:
    """Table 4's software utilisations imply the BF8-sparse VO/tile inferred from Table 2 within 3%."""
    for d in (0.5, 0.2, 0.05):
        mem, _tmul, avx = paper.TABLE4_SW[d]
        implied = deca._vo_from_util(avx, mem, deca.Kernel("q8", d).tile_bytes())
        assert implied == pytest.approx(deca.SW_VO_FITTED["q8_sparse"][1], rel=0.03)


def test_dse_only_credits_what_the_rtl_runs() -> None:
    """{64,64}'s PE rejects MXFP4 (scale group 32 < W = 64, bad_cfg): no throughput, in the DSE, the
    Python API and sweeps; geomeans compare the kernels every point runs."""
    from golden.deca import Q4_MXFP4, format_cmd

    assert not format_cmd(Q4_MXFP4, False).valid(64) and format_cmd(Q4_MXFP4, False).valid(32)
    res = deca.dse()
    assert res["{64,64} over"]["unsupported"] == ["MXFP4"] and "MXFP4" not in res["{64,64} over"]["points"]
    assert res["{32,8} best"]["unsupported"] == [] and "MXFP4" not in res["{32,8} best"]["geomean_over"]
    with pytest.raises(deca.Infeasible, match="MXFP4 at W=64: the DECA PE rejects the format"):
        deca.deca_point(deca.SPR_HBM, deca.Kernel("q4"), w=64, lanes=64)
    from sysmodel import sweep

    row = sweep.run_point("deca", {"scheme": "q4", "w": 64, "lanes": 64})
    assert row["feasible"] is False and row["tflops"] is None


def test_dse_claims() -> None:
    res = deca.dse()
    under, best, over = (res[k] for k in deca.DSE_POINTS)
    assert len(under["vec_bound"]) >= 10  # under-provisioned leaves the kernels VEC-bound
    assert over["vec_bound"] == []
    assert under["geomean_tflops"] < best["geomean_tflops"] <= over["geomean_tflops"]  # the values: the ledger
    # best leaves no kernel VEC-bound (§8.2, "just enough"): the sparsest sits on the VEC|MTX edge (16 vOp-cycles
    # = 16 TMUL cycles), an exact tie, reported MTX (TIE_ORDER)
    assert best["vec_bound"] == [] and best["points"]["BF8_5%"][1] == "MTX"


def test_table6_structure() -> None:
    """Both models at N = 1, 16, 64; DECA never slower than software-only (at N=64 both can sit on the TMUL
    bound); the two Q16 Llama2-70B cells at N=1 and 16 share Table 1's calibration. (Paper values: the ledger.)"""
    rows = deca.table6()
    assert {(r["model"], r["n"]) for r in rows} == {(m, n) for m in ("llama2-70b", "opt-66b") for n in (1, 16, 64)}
    for r in rows:
        if r["deca_paper"]:
            assert r["deca_model"] < r["sw_model"] or (r["n"] == 64 and r["deca_model"] <= r["sw_model"])
    assert sum(r["calibrated"] for r in rows) == 2


def test_other_layers_grow_with_n_and_with_the_kv_cache() -> None:
    """What is not an FC GeMM grows with N, and OPT-66B (MHA: 9x Llama2-70B's KV per token) pays more."""
    assert (
        deca.other_seconds("llama2-70b", 64)
        > deca.other_seconds("llama2-70b", 16)
        > deca.other_seconds("llama2-70b", 1)
    )
    assert deca.attention_seconds("opt-66b", 16, deca.SPR_HBM) > 7 * deca.attention_seconds(
        "llama2-70b", 16, deca.SPR_HBM
    )


def test_bord_and_roof_surface_equations() -> None:
    m = deca.SPR_HBM
    f, bound = deca.roof_surface(m, 1e-9, m.vos_sw, 1.0)
    assert bound == "MEM" and f == pytest.approx(512 * 16 * m.mbw * 1e-9)
    f, bound = deca.roof_surface(m, 1.0, m.vos_sw, 1.0)
    assert bound == "MTX" and f == pytest.approx(512 * 16 * m.mos)
    assert deca.bord_lines(m, m.vos_deca)["MEM|MTX"].startswith("x = 0.01029")


def test_roof_surface_ties_go_to_mem_then_mtx_then_vec() -> None:
    """At an exact tie of Eq. 2's terms the bound is the first of TIE_ORDER (MEM, MTX, VEC): VEC only while vector
    throughput alone limits the kernel, as vec_margin's "above 1" reads it."""
    m = deca.SPR_HBM
    assert deca.TIE_ORDER == ("MEM", "MTX", "VEC")
    assert deca.roof_surface(m, 1.0, m.mos, 1.0) == (512 * 16 * m.mos, "MTX")  # VEC = MTX = MOS, MEM above
    assert deca.roof_surface(m, 1e-9, m.mbw * 1e-9, 1.0)[1] == "MEM"  # MEM = VEC, below MTX
    ridge = replace(m, mbw=m.mos)  # MEM = MTX at AI_XM = 1, VEC above
    assert deca.roof_surface(ridge, 1.0, m.mos, 2.0)[1] == "MEM"
    assert deca.roof_surface(ridge, 1.0, m.mos, 1.0)[1] == "MEM"  # all three equal


def test_unknown_scheme_family() -> None:
    with pytest.raises(ValueError, match="kernel: no software VO/tile source for q4_sparse"):
        deca.sw_vo_per_tile(deca.Kernel("q4", 0.5))


def test_area_counts_every_lut_copy() -> None:
    """The L big LUTs get identical writes; tb/area.py keeps Yosys from merging them, so each design point's
    flip-flops include L x 4 sub-LUTs x 64 entries x 16 bits of LUT storage (before: one copy)."""
    from golden.deca_spec import SUB_LUT_DEPTH, SUB_LUTS, VALUE_BITS
    from tb.area import SCRIPT

    assert "setattr -set keep 1" in SCRIPT and "n:*lut*" in SCRIPT
    area = characterization.load_area("deca")
    for name, (_, lanes) in deca.DSE_POINTS.items():
        ffs = sum(v for k, v in area[name]["cells"].items() if "DFF" in k)
        assert ffs >= lanes * SUB_LUTS * SUB_LUT_DEPTH * VALUE_BITS, name


def test_area_snapshot_orders_the_design_points() -> None:
    """`make area` synthesized the three §8.2 points; best costs less than over and more than under."""
    area = characterization.load_area("deca")
    cells = [area[name]["cells"]["total"] for name in deca.DSE_POINTS]
    assert cells[0] < cells[1] < cells[2]
    assert cells[2] / cells[1] > 2  # the paper: best is much cheaper (8x fewer LUTs, half the W)


def test_fitted_columns_are_the_calibration_family() -> None:
    """Only BF8-sparse's VEC-bound cells calibrate INSTR_PER_VO; every other R-S cell is a prediction."""
    fitted = {r["kernel"] for r in deca.table2() if r["fitted"]}
    assert fitted == {"BF8_50%", "BF8_30%", "BF8_20%", "BF8_10%", "BF8_5%"}


@pytest.mark.parametrize("name", __import__("sysmodel.cost.models", fromlist=["available"]).available())
def test_fc_tiles_follow_the_zoo(name: str) -> None:
    """Tile count x tile size = the FC weight bytes the zoo's operators read (2 matrices non-gated, 3 gated,
    routed experts for MoE); only a router with fewer than 16 experts pads its last tile row."""
    from golden.deca_spec import TILE, TILE_ROWS
    from sysmodel.cost.models import StageShape, layer_groups, layer_ops, load_model

    cfg = load_model(name)
    for n in (1, 16):
        fc = sum(
            count * float(op.weight_bytes)
            for moe, count in layer_groups(cfg)
            for op in layer_ops(cfg, StageShape.decode(n, 0), moe)
            if op.kind == "gemm"
        )
        pad = (
            0
            if cfg.experts % TILE_ROWS == 0 or cfg.experts == 1
            else sum(c for moe, c in layer_groups(cfg) if moe) * (cfg.hidden // 32) * TILE * 2 * (1 - cfg.experts / 16)
        )
        assert deca.fc_weight_tiles(name, n) * TILE * 2 == pytest.approx(fc + pad, rel=1e-12)


def test_fc_tiles_count_each_ffn_matrix() -> None:
    """Gated Llama2-70B: QKV 8192x10240, O 8192^2, gate/up/down 8192x28672, 80 layers; OPT-66B: 2 FFN matrices."""
    assert deca.fc_weight_tiles("llama2-70b") == 80 * (8192 * 10240 + 8192**2 + 3 * 8192 * 28672) // 512
    assert deca.fc_weight_tiles("opt-66b") == 64 * (9216 * 3 * 9216 + 9216**2 + 2 * 9216 * 36864) // 512
    assert deca.fc_weight_tiles("mixtral-8x7b", 16) > deca.fc_weight_tiles("mixtral-8x7b", 1)  # more experts


def test_compressed_gemm_speedups_and_cores_sweep() -> None:
    """Figs. 11-13: Optimal bounds DECA, DECA is never slower than Software-only, dense BF16 is the unit,
    the kernels come in increasing compression, and software-only TFLOPS grow with cores while DECA's
    saturate at the memory bound."""
    from sysmodel.designs.deca import roof_surface as dm

    for m in (dm.SPR_DDR, dm.SPR_HBM):
        rows = dm.gemm_speedups(m)
        assert [r["compression"] for r in rows] == sorted(r["compression"] for r in rows)
        for r in rows:
            assert r["Software-only"] <= r["DECA"] * (1 + 1e-12) and r["DECA"] <= r["Optimal"] * (1 + 1e-12)
            assert r["Optimal"] == pytest.approx(r["compression"], rel=1e-9) or r["Optimal"] < r["compression"]
    sweep = dm.cores_sweep()
    sw = [r["Software-only"] for r in sweep]
    assert sw == sorted(sw) and sweep[-1]["DECA"] == pytest.approx(sweep[-2]["DECA"])
