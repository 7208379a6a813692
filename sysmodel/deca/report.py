"""DECA report rendering: the Markdown section of `membound report --paper deca` and its plots
(Roof-Surface, BORDs). Numbers come from sysmodel.deca.model; paper values from sysmodel.deca.paper."""

from __future__ import annotations

import math
from pathlib import Path

from golden import deca as gdeca
from golden.deca_spec import TILE
from hw.deca import cycles as dcycles
from sysmodel.deca import paper
from sysmodel.deca.model import (
    DSE_POINTS,
    N_TABLE2,
    SPR_HBM,
    SW_VO_SOURCES,
    TABLE2_KERNELS,
    TB,
    Kernel,
    Machine,
    _vo_from_util,
    bord_lines,
    cycles_source,
    deca_cycles_per_tile,
    dse,
    measured_cycles,
    sw_point,
    sw_vo_per_tile,
    table2,
    table6,
)

AREA_SNAPSHOT = Path(__file__).parents[1] / "data" / "area.json"  # written by `make area` (tb/area.py)


# --- plots ---------------------------------------------------------------------------------------------

def plot_roof_surface(path: Path, m: Machine = SPR_HBM, n: int = N_TABLE2) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.logspace(-3.2, -1.3, 60)  # AI_XM, tiles/B
    y = np.logspace(-3.0, -0.8, 60)  # AI_XV, tiles/vOp
    xx, yy = np.meshgrid(x, y)
    z = TILE * n * np.minimum(np.minimum(m.mbw * xx, m.vos_sw * yy), m.mos) / TB
    fig = plt.figure(figsize=(7, 5.5))
    ax = fig.add_subplot(projection="3d")
    ax.plot_surface(np.log10(xx), np.log10(yy), z, cmap="viridis", alpha=0.8)
    for k in TABLE2_KERNELS:
        f, _ = sw_point(m, k, n)
        ax.scatter(math.log10(k.ai_xm), math.log10(1 / sw_vo_per_tile(k)), f / TB, color="red", s=12)
    ax.set_xlabel("log10 AI_XM (tiles/B)")
    ax.set_ylabel("log10 AI_XV (tiles/vop)")
    ax.set_zlabel("TFLOPS")
    ax.set_title(f"Roof-Surface, {m.name}, N={n} (software-only kernels in red)")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def plot_bords(path: Path, m: Machine = SPR_HBM, n: int = N_TABLE2) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    panels = [("software-only", m.vos_sw, None)] + [(name, m.vos_deca, wl) for name, wl in DSE_POINTS.items()]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4))
    x = np.logspace(-3.2, -1.0, 300)
    y = np.logspace(-3.2, 0.0, 300)
    xx, yy = np.meshgrid(x, y)
    for ax, (title, vos, wl) in zip(axes, panels, strict=True):
        rates = np.stack([m.mbw * xx, vos * yy, np.full_like(xx, m.mos)])
        ax.contourf(xx, yy, np.argmin(rates, axis=0), levels=[-0.5, 0.5, 1.5, 2.5],
                    colors=["#8fd18f", "#f5b971", "#8fb8f5"])
        for k in TABLE2_KERNELS:
            ai_xv = 1 / sw_vo_per_tile(k) if wl is None else 1 / deca_cycles_per_tile(k, *wl)
            ax.scatter(k.ai_xm, ai_xv, s=10, color="black")
            ax.annotate(k.label, (k.ai_xm, ai_xv), fontsize=5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("AI_XM (tiles/B)")
        ax.set_ylabel("AI_XV (tiles/vop)")
        ax.set_title(f"BORD {title}\ngreen MEM, orange VEC, blue MTX", fontsize=8)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def load_area(path: Path = AREA_SNAPSHOT) -> dict[str, dict]:
    import json

    if not path.exists():
        return {}
    return {p["design"]: p for p in json.loads(path.read_text())["points"]}


# --- report ---------------------------------------------------------------------------------------------

def _ratio(model: float, paper: float | None) -> str:
    return "-" if not paper else f"{model / paper:.3f}"


def report_lines(out: Path) -> list[str]:
    m = SPR_HBM
    lines = [f"Machine: {m.name}, {m.cores} cores at {m.freq / 1e9} GHz, MBW {m.mbw / 1e9:.0f} GB/s, "
             f"MOS {m.mos / 1e9:.2f} G tile-ops/s, VOS software {m.vos_sw / 1e9:.0f} G/s "
             f"({m.simd_units} SIMD units/core), VOS DECA {m.vos_deca / 1e9:.0f} G vOps/s; N = {N_TABLE2}.", "",
             "### Table 2: roofline (R-L) and Roof-Surface (R-S) limits, TFLOPS", "",
             "| kernel | R-L paper | R-L model | ratio | R-S paper | R-S model | ratio | bound | measured (paper) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in table2(m):
        fit = " (fitted)" if r["fitted"] else ""
        lines.append(f"| {r['kernel']} | {r['rl_paper']} | {r['rl_model']:.2f} | {_ratio(r['rl_model'], r['rl_paper'])}"
                     f" | {r['rs_paper']} | {r['rs_model']:.2f} | {_ratio(r['rs_model'], r['rs_paper'])} | "
                     f"{r['bound']}{fit} | {r['real']} |")
    lines += ["", "Software-only vector ops per tile, inferred from the paper (VEC-bound columns above are fits "
              "of these constants; MEM-bound columns and the MEM/VEC classification are predictions):", ""]
    lines += [f"- `{k}`: {v:.1f} VO/tile — {src}" for k, (src, v) in SW_VO_SOURCES.items()]
    lines += ["", "Cross-check against Table 4 (Q8, N=1, HBM, software-only utilisations):", "",
              "| density | MEM | AVX | implied VO/tile | constant used |", "| ---: | ---: | ---: | ---: | ---: |"]
    for d, (mem, avx) in paper.TABLE4_SW.items():
        k = Kernel("q8", d)
        lines.append(f"| {d} | {mem:.0%} | {avx:.0%} | {_vo_from_util(avx, mem, k.tile_bytes()):.1f} | "
                     f"{sw_vo_per_tile(k):.1f} |")
    lines += ["", "BORD boundaries (AI_XM x in tiles/B, AI_XV y in tiles/vector-op):", ""]
    lines += [f"- software-only {name}: {eq}" for name, eq in bord_lines(m, m.vos_sw).items()]
    lines += [f"- DECA {name}: {eq}" for name, eq in bord_lines(m, m.vos_deca).items()]

    from sysmodel import characterization

    meas = measured_cycles()
    stressed = {(r.params["w"], r.params["lanes"], r.params["fmt"], r.params["density"]):
                r.extra.get("cycles_per_tile_p_valid0.8_p_ready0.7") for r in characterization.load()
                if r.unit == "deca_pe" and "fmt" in r.params}
    lines += ["", "### DECA PE cycles per tile: measured RTL vs analytical #vOps*(1+bpv)", "",
              "Measured with ready ports; the last column with random input gaps (valid 0.8) and output "
              "backpressure (ready 0.7).", "",
              "| W,L | format | density | measured (RTL) | analytical | ratio | with stalls |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for (w, lanes, fmt, d), cyc in sorted(meas.items()):
        ana = dcycles.expected_tile_cycles(w, dcycles.lq(gdeca.get_format(fmt).bits, lanes, w), d)
        st = stressed.get((w, lanes, fmt, d))
        lines.append(f"| {w},{lanes} | {fmt} | {d} | {cyc:.2f} | {ana:.2f} | {cyc / ana:.3f} | "
                     f"{'-' if st is None else st} |")
    if not meas:
        lines.append("| - | no DECA characterization in the snapshot yet (`make characterize`) | | | | |")

    lines += ["", "### W/L design-space exploration (§8.2), HBM, N=16, Table 2 kernels", "",
              "Area: Yosys generic cells of the whole PE (`make area`). Caveat: the L big LUTs receive identical "
              "writes, so Yosys merges their storage into one copy read through L x 4 mux trees; the flip-flop "
              "column counts LUT storage once (the paper's design replicates it for read ports), so the proxy "
              "understates L's cost.", "",
              "| design | DECA cycles/tile | geomean TFLOPS | VEC-bound kernels | cells | flip-flops "
              "| TFLOPS per Mcell |",
              "| --- | --- | ---: | --- | ---: | ---: | ---: |"]
    res = dse(m)
    area = load_area()
    for name, r in res.items():
        cells = area.get(name, {}).get("cells", {})
        total = cells.get("total")
        ffs = sum(v for k, v in cells.items() if "DFF" in k)
        eff = f"{r['geomean_tflops'] / (total / 1e6):.1f}" if total else "-"
        lines.append(f"| {name} | {cycles_source(r['w'], r['lanes'])} | {r['geomean_tflops']:.2f} | "
                     f"{', '.join(r['vec_bound']) or 'none'} | {total or 'not synthesized'} | {ffs or '-'} | {eff} |")
    under, best, over = (res[k]["geomean_tflops"] for k in DSE_POINTS)
    lines += ["", f"- best/under: paper {paper.DSE_CLAIMS['best/under']}x, model {best / under:.2f}x, "
              f"ratio {best / under / paper.DSE_CLAIMS['best/under']:.3f}",
              f"- over/best: paper < {paper.DSE_CLAIMS['over/best max']}x, model {over / best:.3f}x",
              "", "### Table 6: Llama2-70B next-token latency on SPR-HBM (ms)", "",
              "Other layers' time is calibrated per N from Table 1's FC-GeMM share (89.5% at N=1, 85.9% at "
              "N=16, 128 tokens); N=64 is not modelled (Table 1 gives no share for it).", "",
              "| N | scheme | SW paper | SW model | ratio | DECA paper | DECA model | ratio |",
              "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in table6(m):
        dm = "-" if r["deca_model"] is None else f"{r['deca_model']:.1f}"
        dr = "-" if r["deca_model"] is None else _ratio(r["deca_model"], r["deca_paper"])
        lines.append(f"| {r['n']} | {r['scheme']} | {r['sw_paper']} | {r['sw_model']:.1f} | "
                     f"{_ratio(r['sw_model'], r['sw_paper'])} | {r['deca_paper'] or '-'} | {dm} | {dr} |")
    out.mkdir(parents=True, exist_ok=True)
    p1, p2 = plot_roof_surface(out / "deca_roof_surface.png"), plot_bords(out / "deca_bords.png")
    lines += ["", f"Plots: ![Roof-Surface]({p1.name}) ![BORDs]({p2.name})"]
    return lines
