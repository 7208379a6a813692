"""The DECA system model reproduces the paper: Table 2 within 5% for every column, the paper's
MEM/VEC classification, the §8.2 design-space claims, and plausible Table 6 latencies."""

import pytest

from sysmodel.deca import model as deca
from sysmodel.deca import paper, report


@pytest.mark.parametrize("row", deca.table2(), ids=lambda r: r["kernel"])
def test_table2_within_5_percent(row: dict) -> None:
    assert row["rs_model"] == pytest.approx(row["rs_paper"], rel=0.05)
    assert row["rl_model"] == pytest.approx(row["rl_paper"], rel=0.05)
    # where the paper's R-S equals its R-L, the kernel is MEM-bound (Table 2 text); otherwise VEC
    assert row["bound"] == ("MEM" if row["rs_paper"] == row["rl_paper"] else "VEC")


def test_table4_cross_checks_the_inferred_sparse_constant() -> None:
    """Table 4's software utilisations imply the BF8-sparse VO/tile inferred from Table 2 within 3%."""
    for d in (0.5, 0.2, 0.05):
        mem, avx = paper.TABLE4_SW[d]
        implied = deca._vo_from_util(avx, mem, deca.Kernel("q8", d).tile_bytes())
        assert implied == pytest.approx(deca.SW_VO_SOURCES["q8_sparse"][1], rel=0.03)


def test_dse_claims() -> None:
    res = deca.dse()
    under, best, over = (res[k] for k in deca.DSE_POINTS)
    assert len(under["vec_bound"]) >= 10  # under-provisioned leaves the kernels VEC-bound
    assert over["vec_bound"] == []
    assert best["geomean_tflops"] / under["geomean_tflops"] == pytest.approx(2.0, rel=0.1)
    assert over["geomean_tflops"] / best["geomean_tflops"] <= 1.03
    # best leaves at most the sparsest kernel on the VEC|MTX edge (16 vOp-cycles = 16 TMUL cycles)
    assert set(best["vec_bound"]) <= {"BF8_5%"}


def test_table6_latencies_plausible() -> None:
    """A bounds model is optimistic: within 25% below the simulated latencies, never above by >5%."""
    for r in deca.table6():
        assert 0.75 <= r["sw_model"] / r["sw_paper"] <= 1.05
        if r["deca_paper"]:
            assert 0.75 <= r["deca_model"] / r["deca_paper"] <= 1.05
            assert r["deca_model"] < r["sw_model"]


def test_bord_and_roof_surface_equations() -> None:
    m = deca.SPR_HBM
    f, bound = deca.roof_surface(m, 1e-9, m.vos_sw, 1.0)
    assert bound == "MEM" and f == pytest.approx(512 * 16 * m.mbw * 1e-9)
    f, bound = deca.roof_surface(m, 1.0, m.vos_sw, 1.0)
    assert bound == "MTX" and f == pytest.approx(512 * 16 * m.mos)
    assert deca.bord_lines(m, m.vos_deca)["MEM|MTX"].startswith("x = 0.01029")


def test_unknown_scheme_family() -> None:
    with pytest.raises(ValueError, match="kernel: no software VO/tile source for q4_sparse"):
        deca.sw_vo_per_tile(deca.Kernel("q4", 0.5))


def test_report_writes_plots(tmp_path) -> None:
    lines = report.report_lines(tmp_path)
    assert (tmp_path / "deca_roof_surface.png").stat().st_size > 10000
    assert (tmp_path / "deca_bords.png").stat().st_size > 10000
    assert any("| BF8_30% | 31.2 |" in ln for ln in lines)


def test_area_snapshot_orders_the_design_points() -> None:
    """`make area` synthesized the three §8.2 points; best costs less than over and more than under."""
    area = report.load_area()
    cells = [area[name]["cells"]["total"] for name in deca.DSE_POINTS]
    assert cells[0] < cells[1] < cells[2]
    assert cells[2] / cells[1] > 2  # the paper: best is much cheaper (8x fewer LUTs, half the W)


def test_fitted_columns_are_the_vec_bound_table2_inferences() -> None:
    fitted = {r["kernel"] for r in deca.table2() if r["fitted"]}
    assert fitted == {"MXFP4", "BF8_50%", "BF8_30%", "BF8_20%", "BF8_10%", "BF8_5%", "BF16_20%", "BF16_10%",
                      "BF16_5%"}
