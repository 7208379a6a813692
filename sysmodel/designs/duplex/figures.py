"""Duplex's figures as data: the serving grids read once per report (:func:`grids`) and the numbers the paper
states computed from them and from the cost model (§IV-E Fig. 8, §VI peaks, §VII-A-D Figs. 11-15, §VII-E area),
each as (claim, model value) pairs in the order of its constant tuple (:data:`FIG12`, ...). Plain values, no
Markdown: ``sysmodel.designs.duplex.claims`` turns them into ledger rows, ``sysmodel.designs.duplex.report`` into
tables."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from golden.duplex_spec import FULL, MODULES_PER_STACK, SOFTMAX_LANES
from sysmodel.cost import characterization
from sysmodel.designs.duplex import paper
from sysmodel.designs.duplex.grids import fig11, fig12, fig13, fig14, fig14_lanes, fig14_models
from sysmodel.designs.duplex.model import PIMS, DuplexSystem, gemm_edap, logic_pim_peaks
from sysmodel.ledger import Claim
from sysmodel.report.results import area_extrapolate, area_slope

if TYPE_CHECKING:
    from sysmodel.report import Context

Pairs = list[tuple[Claim, float]]

_D11, _D13 = paper.FIG11_DIRECTIONS, paper.FIG13_DIRECTIONS
PEAKS = (paper.PEAK_TFLOPS, paper.PEAK_TBS)
FIG11_HEADLINE = (paper.DUPLEX_MAX, paper.PE_OVER_DUPLEX, paper.ET_MAX_OVER_GPU, paper.AVG_OVER_GPU)
FIG11_STATEMENTS = (
    paper.ET_OVER_DUPLEX_MAX,
    *(_D11[k] for k in ("lowest", "median 2x", "max 2x", "grok", "mixtral best")),
)
FIG12 = (paper.TBT_P50_VS_GPU, paper.E2E_VS_GPU, paper.E2E_VS_2GPU, paper.TBT_P50_OVER_2GPU, paper.E2E_MAX_OVER_GPU)
FIG13 = (paper.GPU_SAT_QPS, paper.DUPLEX_SAT_QPS, paper.SAT_OVER_2GPU)
FIG13_DIRECTIONS = tuple(_D13[k] for k in ("p50 2x", "p90 low", "p90 high", "p50 gpu"))
FIG14 = (
    paper.BANK_PIM_MAX,
    paper.BANK_PIM_AVG,
    *paper.BANK_PIM_OTHER.values(),
    paper.BANK_PIM_OVER_GPU,
    paper.OUT_OF_TARGET_OVER_GPU,
)
FIG15 = (*paper.ENERGY.values(), paper.ENERGY_AVG)
FIG15_TRENDS = (paper.ENERGY_LONG_OVER_SHORT, *paper.ENERGY_BATCH_VS_GLAM.values())
FIG8 = (paper.BANKGROUP_WORSE, paper.EDAP_CROSSOVER)
FIG8_OPS = (1, 2, 4, 8, 16, 32, 64)  # Fig. 8's Op/B axis: tokens sharing each weight
# The paper names no refresh scheme for Logic-PIM's banks (§IV-C, §VI): the kit runs the engine's default
# (on-time, memory.DEFAULT_REFRESH) and bands Fig. 11's headlines by per-bank refresh (HBM3's REFpb), which
# raises the bank-bundle efficiency from 0.858 to 0.973 and so Duplex over GPU, max, by 6.8% (measured on
# Fig. 11's cells; Fig. 12's claims move 3% at most, Fig. 13's saturation loads not at all, its unnumbered
# directions 7% at most, none turning). Postpone's efficiency (0.863) is within 1% of on-time's,
# and "none" is no HBM3 policy (its banks must refresh): neither gets a grid of its own.
REFRESH_BAND = "per-bank"


@dataclass(frozen=True)
class Grids:
    """Duplex's serving grids (``sysmodel/designs/duplex/grids.py``) at the report's request count."""

    fig11: list[dict]
    reserve: list[dict]  # Fig. 11 under the reserve KV policy: the paper states none, so each headline's band
    refresh: list[dict]  # Fig. 11 with Logic-PIM refreshed under :data:`REFRESH_BAND`: the paper names no scheme
    fig12: list[dict]
    fig13: list[dict]
    fig14: list[dict]
    lanes: list[dict]  # Fig. 14 per softmax width (grids.SOFTMAX_SWEEP)
    models: dict[str, float]  # §VII-C's out-of-target models over Bank-PIM


@cache
def grids(ctx: Context) -> Grids:
    """The grids, read (or run) once per report context: the claims and the tables both take them from here."""
    n = ctx.requests
    return Grids(
        ctx.grid("duplex-fig11", fig11, n),
        ctx.grid("duplex-fig11-reserve", fig11, n, "reserve"),
        ctx.grid("duplex-fig11-refresh", fig11, n, "vllm", REFRESH_BAND),
        ctx.grid("duplex-fig12", fig12, n),
        ctx.grid("duplex-fig13", fig13, n),
        ctx.grid("duplex-fig14", fig14, n),
        ctx.grid("duplex-fig14-lanes", fig14_lanes, n),
        ctx.grid("duplex-fig14-models", fig14_models, n),
    )


def over(a: float | None, b: float | None) -> float:
    """a / b, NaN where a system did not fit (None)."""
    return float("nan") if a is None or b is None else a / b


def peaks() -> Pairs:
    """§VI's Logic-PIM peaks per stack, derived from the units and the memory engine (inputs the paper states)."""
    p = logic_pim_peaks()
    return list(zip(PEAKS, (p["flops"] / 1e12, p["bandwidth"] / 1e12), strict=True))


def _fig11_cells(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["model"] in paper.FIG11_MODELS]


def fig11_headline(rows: list[dict]) -> Pairs:
    """§VII-A: Fig. 11's headline ratios over the figure's three models (its caption)."""
    fig = _fig11_cells(rows)
    et = [over(r["Duplex+PE+ET"], r["GPU"]) for r in fig]
    values = (
        float(np.nanmax([over(r["Duplex"], r["GPU"]) for r in fig])),
        float(np.nanmean([over(r["Duplex+PE"], r["Duplex"]) for r in fig])),
        float(np.nanmax(et)),
        float(np.nanmean(et)),
    )
    return list(zip(FIG11_HEADLINE, values, strict=True))


def fig11_statements(rows: list[dict]) -> Pairs:
    """§VII-A's other statements over Fig. 11's cells (its three models): co-processing's largest gain, and
    the directions the text states against GPU and 2xGPU."""
    fig = _fig11_cells(rows)
    et = [over(r["Duplex+PE+ET"], r["GPU"]) for r in fig]
    grok = [x for x, r in zip(et, fig, strict=True) if r["model"] == "grok-1"]
    rest = [x for x, r in zip(et, fig, strict=True) if r["model"] != "grok-1"]
    mixtral = [r["model"] == "mixtral-8x7b" and tuple(r["lengths"]) == paper.LENGTHS[-1] for r in fig]
    duplex = [over(r["Duplex"], r["GPU"]) for r in fig]
    values = (
        float(np.nanmax([over(r["Duplex+PE+ET"], r["Duplex"]) for r in fig])),
        float(np.nanmin(et)),
        float(np.nanmedian([over(r["Duplex+PE+ET"], r["2xGPU"]) for r in fig])),
        float(np.nanmax([over(r["Duplex"], r["2xGPU"]) for r in fig])),
        float(np.nanmean(grok) / np.nanmean(rest)),
        float(
            np.nanmax([x for x, m in zip(duplex, mixtral, strict=True) if m])
            / np.nanmax([x for x, m in zip(duplex, mixtral, strict=True) if not m])
        ),
    )
    return list(zip(FIG11_STATEMENTS, values, strict=True))


def fig12_reductions(rows: list[dict]) -> dict[str, list[float]]:
    """§VII-B, Fig. 12 per lengths: Duplex+PE+ET's reduction of median TBT against GPU and of mean E2E against
    GPU and 2xGPU."""
    out: dict[str, list[float]] = {"tbt": [], "e2e": [], "e2e2": []}
    for r in rows:
        d, g, g2 = r["Duplex+PE+ET"], r["GPU"], r["2xGPU"]
        out["tbt"].append(1 - d[0] / g[0])
        out["e2e"].append(1 - d[1] / g[1])
        out["e2e2"].append(1 - d[1] / g2[1])
    return out


def fig12_claims(rows: list[dict]) -> Pairs:
    """Fig. 12's mean reductions over the lengths, 2xGPU's median TBT over Duplex's at the lowest, and §I's
    2.57x read as the largest E2E ratio over GPU."""
    red = fig12_reductions(rows)
    values = (
        *(float(np.mean(red[k])) for k in ("tbt", "e2e", "e2e2")),
        min(r["2xGPU"][0] / r["Duplex+PE+ET"][0] for r in rows),
        max(1 / (1 - x) for x in red["e2e"]),
    )
    return list(zip(FIG12, values, strict=True))


def saturation_qps(rows: list[dict], system: str) -> float:
    """The highest QPS before the system's median T2FT leaves paper.T2FT_BLOWUP x its value at the lowest."""
    pts = [r for r in rows if r["system"] == system]
    base, last = pts[0]["t2ft50"], pts[0]["qps"]
    for r in pts:
        if r["t2ft50"] > paper.T2FT_BLOWUP * base:
            break
        last = r["qps"]
    return float(last)


def fig13_claims(rows: list[dict]) -> Pairs:
    """§VII-B, Fig. 13's saturation loads: GPU's, Duplex+PE+ET's and Duplex's over 2xGPU's."""
    gpu, dup, two = (saturation_qps(rows, s) for s in ("GPU", "Duplex+PE+ET", "2xGPU"))
    return list(zip(FIG13, (gpu, dup, dup / two), strict=True))


def fig13_directions(rows: list[dict]) -> Pairs:
    """§VII-B's directions on Fig. 13: Duplex+PE+ET against 2xGPU and GPU in median and p90 TBT per QPS."""
    by = {(r["system"], r["qps"]): r for r in rows}
    lo, hi = paper.QPS_VALUES[0], paper.QPS_VALUES[-1]

    def ratio(base: str, key: str, q: int) -> float:
        return by[base, q][key] / by["Duplex+PE+ET", q][key]

    values = (
        min(ratio("2xGPU", "tbt50", q) for q in paper.QPS_VALUES),
        ratio("2xGPU", "tbt90", lo),
        ratio("2xGPU", "tbt90", hi),
        min(ratio("GPU", "tbt50", q) for q in paper.QPS_VALUES),
    )
    return list(zip(FIG13_DIRECTIONS, values, strict=True))


def bank_pim_over_gpu(rows14: list[dict], rows11: list[dict]) -> float:
    """Bank-PIM over GPU at §VII-C's cell: Fig. 11's Duplex over GPU there over Fig. 14's Duplex over Bank-PIM
    (both grids run the same Duplex system — plain Duplex, Logic-PIM, the default softmax width — on the same
    trace, so its throughput cancels)."""
    model, lengths, batch = paper.BANK_PIM_CELL
    (c11,) = (r for r in rows11 if r["model"] == model and tuple(r["lengths"]) == lengths and r["batch"] == batch)
    (c14,) = (r for r in rows14 if tuple(r["lengths"]) == lengths and r["batch"] == batch)
    return over(c11["Duplex"], c11["GPU"]) / c14["ratio"]


def fig14_claims(g: Grids) -> Pairs:
    """§VII-C, Fig. 14: Duplex over Bank-PIM (max, mean, the out-of-target models), Bank-PIM over GPU, and plain
    Duplex over GPU on the out-of-target models (the lower of their means over Fig. 11's cells)."""
    ratios = [r["ratio"] for r in g.fig14]
    out_of_target = min(
        float(np.nanmean([over(r["Duplex"], r["GPU"]) for r in g.fig11 if r["model"] == m]))
        for m in paper.OUT_OF_TARGET
    )
    values = (
        max(ratios),
        float(np.mean(ratios)),
        *(g.models[m] for m in paper.BANK_PIM_OTHER),
        bank_pim_over_gpu(g.fig14, g.fig11),
        out_of_target,
    )
    return list(zip(FIG14, values, strict=True))


def energy_reductions(model: str) -> list[float]:
    """Duplex+PE+ET's energy reduction per token against GPU on Fig. 15's grid (§VII-D): a steady decode stage
    at each end of the (L_in, L_out) range and of the batch range, at the mean context of the decode
    (L_in + L_out / 2)."""
    out = []
    for l_in, l_out in paper.LENGTHS:
        for batch in paper.BATCHES:
            e = {
                m: DuplexSystem(model, m).decode_energy_per_token(batch, l_in + l_out // 2)
                for m in ("gpu", "duplex+pe+et")
            }
            out.append(1 - e["duplex+pe+et"] / e["gpu"])
    return out


def energy_trends(grid: dict[str, list[float]]) -> Pairs:
    """§VII-D's trends on the grid of :func:`energy_reductions` (rows: lengths outer, batch inner): the long
    lengths' reduction over the short's, and each model's batch-128 over batch-32 reduction against GLaM's."""
    n = len(paper.BATCHES)
    short = np.mean([g[:n] for g in grid.values()])
    long = np.mean([g[-n:] for g in grid.values()])

    def batch_trend(m: str) -> float:  # reduction at the largest batch over at the smallest, mean over lengths
        g = np.reshape(grid[m], (len(paper.LENGTHS), n))
        return float(np.mean(g[:, -1]) / np.mean(g[:, 0]))

    glam = batch_trend("glam-143b")
    values = (float(long / short), *(batch_trend(m) / glam for m in paper.ENERGY_BATCH_VS_GLAM))
    return list(zip(FIG15_TRENDS, values, strict=True))


def fig15_claims() -> Pairs:
    """§VII-D, Fig. 15: "up to" as each model's maximum over the grid, the mean over the figure's three models'
    grid (§X), then the trends."""
    grid = {model: energy_reductions(model) for model in paper.FIG11_MODELS}
    values = (*(max(grid[m]) for m in paper.ENERGY), float(np.mean([x for g in grid.values() for x in g])))
    return [*zip(FIG15, values, strict=True), *energy_trends(grid)]


@cache
def fig8_edap() -> dict[str, list[float]]:
    """§IV-E, Fig. 8: EDAP of the 16384 x 4096 GEMM per stack at each Op/B of :data:`FIG8_OPS`, per PIM."""
    return {p: [gemm_edap(p, n)["edap"] for n in FIG8_OPS] for p in PIMS}


def fig8_claims() -> Pairs:
    """Fig. 8: BankGroup-PIM's lowest EDAP over Logic-PIM's, and the Op/B where Bank-PIM's EDAP crosses
    Logic-PIM's (log-interpolated between the grid's points)."""
    edap, ops = fig8_edap(), FIG8_OPS
    rel = np.log(np.array(edap["bank"]) / np.array(edap["logic"]))
    i = int(np.argmax(rel > 0))  # first Op/B where Logic-PIM beats Bank-PIM
    cross = ops[i - 1] * (ops[i] / ops[i - 1]) ** (-rel[i - 1] / (rel[i] - rel[i - 1])) if i > 0 else float("nan")
    lowest = min(b / lg for b, lg in zip(edap["bankgroup"], edap["logic"], strict=True))
    return list(zip(FIG8, (lowest, float(cross)), strict=True))


@dataclass(frozen=True)
class AreaSplit:
    """§VII-E's GEMM : softmax split on Yosys generic cells (``make area``): the synthesized snapshot, the cells
    extrapolated to the paper's 32 modules of 512 MACs and to the softmax unit's width, and cells per lane."""

    area: dict
    gemm: float
    softmax: float
    per_lane: float


def area_split() -> AreaSplit | None:
    """The split from the committed area snapshot, None where it is not synthesized yet."""
    area = characterization.load_area("duplex")
    if not area:
        return None
    size = {d: int(np.prod([p["params"].get(f, 1) for f in ("rows", "lanes")])) for d, p in area.items()}
    return AreaSplit(
        area,
        MODULES_PER_STACK * area_extrapolate(area, "gemm_4x2", "gemm_8x2", size, FULL.macs),
        area_extrapolate(area, "softmax_4", "softmax_8", size, SOFTMAX_LANES),
        area_slope(area, "softmax_4", "softmax_8", size),
    )


def area_claims(split: AreaSplit | None) -> Pairs:
    """§VII-E's GEMM modules : softmax unit area, where the cells are synthesized."""
    return [] if split is None else [(paper.GEMM_OVER_SOFTMAX, split.gemm / split.softmax)]
