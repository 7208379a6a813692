"""DECA system model: the Roof-Surface (DECA §4, Eqs. 1-2), BORDs (§4.2), the W/L design-space
exploration (§6.2, §8.2) and Llama2-70B / OPT-66B next-token latency on SPR-HBM (§8.4, Table 6).

TPS = min(MBW * AI_XM, VOS * AI_XV, MOS)  [weight tiles/s];  FLOPS = 512 * N * TPS  (FMAs, N <= 16).

* AI_XM = 1 / bytes per compressed tile (golden.deca byte accounting: values + 64-byte bitmask when
  sparse + stored scales).
* DECA: VOS = cores * f (one vOp per cycle per PE, §6.2) and AI_XV = 1 / (vOp-cycles per tile):
  analytically #vOps * (1 + bpv) (hw.deca.cycles), or *measured* on the RTL (characterization
  records of tb/deca, committed in sysmodel/data/characterization.json).
* Software-only (libxsmm AVX decompression): VOS = cores * f * SIMD units, and AI_XV = 1 / VO per tile.
  VO per tile is *derived* from libxsmm's own instruction sequences (sysmodel.designs.deca.libxsmm: dynamic
  instructions per tile) with one constant, instructions per VO slot, fitted on BF8-sparse (Table 2);
  the per-format VOs the paper's data imply (SW_VO_FITTED) are kept beside them for comparison.
Every constant below names its source.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from golden import deca as gdeca
from golden.deca import format_cmd
from golden.deca_spec import DESIGN_POINTS, LANES, MASK_BYTES, TILE, TILE_COLS, TILE_ROWS, W
from hw.deca import cycles as dcycles
from hw.deca.cycles import UNIT_PE
from sysmodel.cost.devices import SPR_CLOCK_HZ, SPR_CORES, SPR_TMUL_CYCLES, get_device
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.deca import paper
from sysmodel.designs.deca.libxsmm import SEQUENCES, instructions_per_tile
from sysmodel.designs.deca.paper import AVX_SCALE, N_TABLE2, TABLE6_CTX, TABLE6_MODELS, TABLE6_N

TB = 1e12


@dataclass(frozen=True)
class Machine:
    """An SPR-like server (DECA §7.1)."""

    name: str
    mbw: float  # achievable memory bandwidth, B/s
    cores: int = SPR_CORES  # §7.1
    freq: float = SPR_CLOCK_HZ  # §7.1: cores and DECA PEs at 2.5 GHz
    simd_units: int = 2  # AVX-512 FMA ports per SPR core (VOS = f*c*units, §4.1); our reading
    tmul_cycles: int = SPR_TMUL_CYCLES  # one TMUL tile op per 16 cycles (§2.3)

    @property
    def mos(self) -> float:
        return self.freq * self.cores / self.tmul_cycles

    @property
    def vos_sw(self) -> float:
        return self.freq * self.cores * self.simd_units

    @property
    def vos_deca(self) -> float:
        return self.freq * self.cores


SPR_HBM = Machine("SPR-HBM", get_device("spr-hbm").mem_bw)  # §7.1 "about 850GB/s achievable"
SPR_DDR = Machine("SPR-DDR5", get_device("spr-ddr5").mem_bw)  # §7.1 "about 260GB/s"


@dataclass(frozen=True)
class Kernel:
    """A compressed GeMM kernel: scheme (q16/q8/q4) and weight density."""

    scheme: str
    density: float = 1.0

    @property
    def label(self) -> str:
        name = {"q16": "BF16", "q8": "BF8", "q4": "MXFP4"}[self.scheme]
        return name if self.density == 1.0 else f"{name}_{round(self.density * 100)}%"

    @property
    def fmt(self) -> gdeca.DecaFormat:
        return gdeca.get_format(self.scheme)

    @property
    def sparse(self) -> bool:
        return self.density < 1.0

    def tile_bytes(self) -> float:
        """Expected bytes of one compressed tile (golden.deca.CompressedTile.nbytes, mean over d)."""
        f = self.fmt
        return TILE * self.density * f.bits / 8 + (MASK_BYTES if self.sparse else 0) + f.n_scales * f.scale_bytes

    @property
    def ai_xm(self) -> float:
        return 1 / self.tile_bytes()

    def family(self) -> str:
        return f"{self.scheme}_{'sparse' if self.sparse else 'dense'}"


# --- Software-only VO per tile, inferred from the paper's data ----------------------------------------


def _vo_from_rs(tflops: float, m: Machine = SPR_HBM, n: int = N_TABLE2) -> float:
    """VO/tile of a VEC-bound Table 2 column: R-S = 512*N*VOS/VO."""
    return TILE * n * m.vos_sw / (tflops * TB)


def _vo_from_util(avx: float, mem: float, tile_bytes: float, m: Machine = SPR_HBM) -> float:
    """VO/tile from Table 4 utilisations: tiles/s = mem*MBW/bytes and VO/s = avx*VOS."""
    return avx * m.vos_sw * tile_bytes / (mem * m.mbw)


SW_VO_FITTED = {  # VO per tile the paper's data imply, per family: shown beside the derived ones
    "q4_dense": ("Table 2, MXFP4 R-S = 11.5 TFLOPS (VEC-bound), N=16, HBM", _vo_from_rs(paper.TABLE2["MXFP4"][1])),
    "q8_sparse": (
        "Table 2, BF8_50%..5% R-S = 16.1 TFLOPS (VEC-bound), N=16, HBM",
        _vo_from_rs(paper.TABLE2["BF8_50%"][1]),
    ),
    "q16_sparse": (
        "Table 2, BF16_20%..5% R-S = 23.0 TFLOPS (VEC-bound), N=16, HBM",
        _vo_from_rs(paper.TABLE2["BF16_20%"][1]),
    ),
    "q8_dense": (
        "Table 4, Q8 100%: AVX 50%, MEM 74% utilisation (N=1, HBM)",
        _vo_from_util(paper.TABLE4_SW[1.0][2], paper.TABLE4_SW[1.0][0], Kernel("q8").tile_bytes()),
    ),
}


CALIBRATION_FAMILY = "q8_sparse"  # the one family whose Table 2 cells fit INSTR_PER_VO
INSTR_PER_VO = instructions_per_tile(CALIBRATION_FAMILY)["all"] / SW_VO_FITTED[CALIBRATION_FAMILY][1]
# ~1.78 dynamic instructions per VO slot: the VO the Roof-Surface counts includes the core's bubbles (DECA
# §4 footnote 1), so one scale from instructions to VO is fitted, on BF8-sparse (5 VEC-bound cells).


def sw_vo_per_tile(k: Kernel, vector_scale: int = 1) -> float:
    """VO per tile of the software-only kernel: libxsmm's dynamic instructions per tile / INSTR_PER_VO.
    ``vector_scale`` = 4: on a core with 4x more or 4x wider AVX units by §8.1's rule (libxsmm module
    docstring); INSTR_PER_VO stays, as the core's issue width and L1 ports are not scaled (§8.1)."""
    fam = k.family()
    try:
        return instructions_per_tile(fam, vector_scale)["all"] / INSTR_PER_VO
    except ValueError:
        raise ValueError(f"kernel: no software VO/tile source for {fam}; known: {sorted(SEQUENCES)}") from None


# --- DECA vOp-cycles per tile -----------------------------------------------------------------------------


def analytical_cycles_per_tile(k: Kernel, w: int = W, lanes: int = LANES) -> float:
    """#vOps * (1 + bpv(W, Lq, d)) (DECA §6.2)."""
    return dcycles.expected_tile_cycles(w, dcycles.lq(k.fmt.bits, lanes, w), k.density)


def deca_cycles_per_tile(k: Kernel, w: int = W, lanes: int = LANES) -> float:
    """The DECA PE's vOp-cycles per tile: measured on the RTL (characterization snapshot) where the
    testbench ran this design, format and density; the analytical formula otherwise."""
    return measured_cycles().get((w, lanes, k.scheme, k.density)) or analytical_cycles_per_tile(k, w, lanes)


def cycles_source(w: int, lanes: int) -> str:
    have = {(mw, ml) for mw, ml, _, _ in measured_cycles()}
    return "measured RTL" if (w, lanes) in have else "analytical (not simulated)"


# --- Roof-Surface ---------------------------------------------------------------------------------------

# Where two of Eq. 2's terms are equal, the bound reported is the first of these [S]: a kernel is VEC-bound only
# while vector throughput alone limits it (§8.2: the best {W, L} pushes kernels "just enough so that they are
# out of the VEC-bound region", so its boundary is outside); MEM before MTX at the ridge point, as a roofline's
TIE_ORDER = ("MEM", "MTX", "VEC")


def roof_surface(m: Machine, ai_xm: float, vos: float, ai_xv: float, n: int = N_TABLE2) -> tuple[float, str]:
    """(FLOPS, bound) by Eq. 2, ties going to the first of :data:`TIE_ORDER`; for N > 16 a weight tile feeds
    ceil(N/16) TMUL operations."""
    rates = {"MEM": m.mbw * ai_xm, "VEC": vos * ai_xv, "MTX": m.mos / math.ceil(n / TILE_ROWS)}
    bound = min(TIE_ORDER, key=rates.__getitem__)  # min keeps the first of equal keys
    return TILE * n * rates[bound], bound


def roofline(m: Machine, k: Kernel, n: int = N_TABLE2) -> float:
    return TILE * n * min(m.mbw * k.ai_xm, m.mos / math.ceil(n / TILE_ROWS))


def uncompressed(m: Machine, k: Kernel, n: int) -> tuple[float, str]:
    """Dense BF16 needs no decompression: tiles load straight into the TMUL (MEM- or MTX-bound)."""
    return roof_surface(m, k.ai_xm, m.vos_sw, math.inf, n)


def sw_point(m: Machine, k: Kernel, n: int = N_TABLE2) -> tuple[float, str]:
    if k.scheme == "q16" and not k.sparse:
        return uncompressed(m, k, n)
    return roof_surface(m, k.ai_xm, m.vos_sw, 1 / sw_vo_per_tile(k), n)


def supported(k: Kernel, w: int) -> bool:
    """The DECA PE at W lanes runs this kernel's tiles: its descriptor is one the RTL accepts
    (golden.deca_spec.TileCmd.valid — a scale group narrower than W is ``bad_cfg``)."""
    return format_cmd(k.fmt, k.sparse).valid(w)


def deca_point(
    m: Machine, k: Kernel, n: int = N_TABLE2, w: int = W, lanes: int = LANES, cycles_per_tile: float | None = None
) -> tuple[float, str]:
    """(FLOPS, bound) of the kernel with DECA at {W, L}; ``Infeasible`` when the PE rejects its format."""
    if k.scheme == "q16" and not k.sparse:
        return uncompressed(m, k, n)
    if not supported(k, w):
        raise Infeasible(
            f"{k.label} at W={w}: the DECA PE rejects the format (scale group {k.fmt.group} < W; "
            "bad_cfg), so it has no throughput there"
        )
    cpt = cycles_per_tile if cycles_per_tile is not None else deca_cycles_per_tile(k, w, lanes)
    return roof_surface(m, k.ai_xm, m.vos_deca, 1 / cpt, n)


def bord_lines(m: Machine, vos: float) -> dict[str, str]:
    """The three BORD boundaries (§4.2): y = (MBW/VOS) x, x = MOS/MBW, y = MOS/VOS."""
    return {
        "MEM|VEC": f"y = {m.mbw / vos:.4g} x",
        "MEM|MTX": f"x = {m.mos / m.mbw:.4g} tiles/B",
        "VEC|MTX": f"y = {m.mos / vos:.4g} tiles/vOp",
    }


# --- Table 2 -------------------------------------------------------------------------------------------

TABLE2_KERNELS = (
    [Kernel("q4"), Kernel("q8")]
    + [Kernel("q8", d) for d in (0.5, 0.3, 0.2, 0.1, 0.05)]
    + [Kernel("q16", d) for d in (0.5, 0.3, 0.2, 0.1, 0.05)]
)


def table2(m: Machine = SPR_HBM) -> list[dict]:
    rows = []
    for k in TABLE2_KERNELS:
        rl_p, rs_p, real = paper.TABLE2[k.label]
        rs, bound = sw_point(m, k)
        rows.append(
            {
                "kernel": k.label,
                "rl_paper": rl_p,
                "rl_model": roofline(m, k) / TB,
                "rs_paper": rs_p,
                "rs_model": rs / TB,
                "bound": bound,
                "real": real,
                # a VEC-bound column whose VO/tile constant was inferred from Table 2 is a fit
                "fitted": bound == "VEC" and k.family() == CALIBRATION_FAMILY,
            }
        )
    return rows


# --- W/L design-space exploration (§8.2) -----------------------------------------------------------------

DSE_POINTS = DESIGN_POINTS  # golden/deca_spec.py: the RTL's area runs and testbenches use the same points


def dse(m: Machine = SPR_HBM, n: int = N_TABLE2) -> dict[str, dict]:
    """Each design point on the Table 2 kernels its PE can run; the geomean is over the kernels every
    design point runs, so the points compare like for like (``unsupported`` lists the others)."""
    common = [k for k in TABLE2_KERNELS if all(supported(k, w) for w, _ in DSE_POINTS.values())]
    out = {}
    for name, (w, lanes) in DSE_POINTS.items():
        pts = {k.label: deca_point(m, k, n, w, lanes) for k in TABLE2_KERNELS if supported(k, w)}
        geo = math.exp(sum(math.log(pts[k.label][0]) for k in common) / len(common))
        out[name] = {
            "w": w,
            "lanes": lanes,
            "points": pts,
            "geomean_tflops": geo / TB,
            "geomean_over": [k.label for k in common],
            "unsupported": [k.label for k in TABLE2_KERNELS if not supported(k, w)],
            "vec_bound": sorted(lbl for lbl, (_, b) in pts.items() if b == "VEC"),
        }
    return out


# --- next-token latency (Table 6) --------------------------------------------------------------------

TABLE6_KERNELS = {"Q16": Kernel("q16"), "Q4": Kernel("q4"), "Q8 30%": Kernel("q8", 0.3)}
# Achieved fractions of the Roof-Surface bounds, from Table 4 (N=1, HBM), not from Table 6:
ETA_MEM = paper.TABLE4_DECA[1.0][0]  # 0.93: the memory-bound dense BF8 DECA kernel uses 93% of MBW
ETA_AVX = paper.TABLE4_SW[0.5][2]  # 0.88: VEC-bound software kernels keep the AVX units 88-89% busy


def utilisation(m: Machine, k: Kernel, deca: bool, n: int = 1) -> tuple[float, float, float]:
    """(MEM, TMUL, vector unit) busy fractions of a kernel (DECA Table 4's columns): the achieved tile rate
    — the least of the memory rate at ETA_MEM, the vector rate (software: at ETA_AVX; DECA: at its RTL
    cycles per tile) and the TMUL rate — over each resource's own peak rate."""
    mem = m.mbw * k.ai_xm
    mtx = m.mos / math.ceil(n / TILE_ROWS)
    vec = m.vos_deca / deca_cycles_per_tile(k) if deca else m.vos_sw / sw_vo_per_tile(k)
    rate = min(mem * ETA_MEM, vec * (1.0 if deca else ETA_AVX), mtx)
    return rate / mem, rate / mtx, rate / vec


def fc_weight_tiles(model: str = "llama2-70b", n: int = 1) -> int:
    """Weight tiles (16 x 32 BF16) the FC layers stream for one decode step of ``n`` tokens: every GEMM
    operator of the model zoo (QKV, O, the router, the FFN's matrices — two non-gated, three gated —
    and in MoE layers the experts the n tokens route to), each k x n matrix padded to whole tiles."""
    from sysmodel.cost.models import StageShape, layer_groups, layer_ops, load_model

    cfg, total = load_model(model), 0
    for moe, count in layer_groups(cfg):
        for op in layer_ops(cfg, StageShape.decode(n, 0), moe):
            if op.kind == "gemm":
                copies = round(float(np.asarray(op.weight_bytes)) / (op.k * op.n * 2.0))
                total += count * copies * math.ceil(op.k / TILE_COLS) * math.ceil(op.n / TILE_ROWS)
    return total


def fc_seconds(
    m: Machine, k: Kernel, n: int, deca: bool, tiles: int, optimal: bool = False, vector_scale: int = 1
) -> float:
    """FC GeMM time: per weight tile the slowest of memory (bytes / (ETA_MEM x MBW)), decompression
    (VO / (ETA_AVX x VOS) in software, measured PE cycles / VOS with DECA; a tile is decompressed once for
    every N) and the TMUL (ceil(N/16) operations / MOS). ``optimal``: no decompression cost (§7's Optimal:
    every VEC overhead hidden); ``vector_scale``: the software core's AVX units scaled (:func:`sw_vo_per_tile`)."""
    mem = k.tile_bytes() / (ETA_MEM * m.mbw)
    if optimal or (k.scheme == "q16" and not k.sparse):
        vec = 0.0
    elif deca:
        vec = deca_cycles_per_tile(k) / m.vos_deca
    else:
        vec = sw_vo_per_tile(k, vector_scale) / (ETA_AVX * m.vos_sw)
    return tiles * max(mem, vec, math.ceil(n / TILE_ROWS) / m.mos)


# --- compressed GeMMs (§8.1, Figs. 11-14) ---------------------------------------------------------------

GEMM_SYSTEMS = ("Software-only", "DECA", "Optimal")
BY_COMPRESSION = sorted(TABLE2_KERNELS, key=lambda k: -k.tile_bytes())  # Figs. 11-12 and 14's x axis


def gemm_speedups(m: Machine, n: int = 1) -> list[dict]:
    """Figs. 11-12: for Table 2's kernels in increasing compression factor, the FC GeMMs' speedup of
    Software-only, DECA and Optimal over Baseline (dense BF16, no decompression), per weight tile by
    :func:`fc_seconds` (Table 4's achieved fractions; the same tiles in every system)."""
    base = fc_seconds(m, Kernel("q16"), n, False, 1)
    return [
        {
            "kernel": k.label,
            "compression": Kernel("q16").tile_bytes() / k.tile_bytes(),
            "Software-only": base / fc_seconds(m, k, n, False, 1),
            "DECA": base / fc_seconds(m, k, n, True, 1),
            "Optimal": base / fc_seconds(m, k, n, False, 1, optimal=True),
        }
        for k in BY_COMPRESSION
    ]


FIG14_SYSTEMS = ("More / Wider AVX Units", "DECA")


def vector_scaling_speedups(m: Machine = SPR_HBM, n: int = 1) -> list[dict]:
    """Fig. 14: speedup over Baseline of Software-only, of a core with 4x more or 4x wider AVX units, and of
    DECA, per Table 2 kernel in increasing compression factor. §8.1 models both scaled cores by one rule
    (3 of 4 loop iterations' instructions removed, memory operations kept, issue width and L1 ports
    unchanged), so the bounds model gives them one column."""
    base = fc_seconds(m, Kernel("q16"), n, False, 1)
    return [
        {
            "kernel": k.label,
            "Software-only": base / fc_seconds(m, k, n, False, 1),
            FIG14_SYSTEMS[0]: base / fc_seconds(m, k, n, False, 1, vector_scale=AVX_SCALE),
            "DECA": base / fc_seconds(m, k, n, True, 1),
        }
        for k in BY_COMPRESSION
    ]


FIG13_CORES = (8, 16, 24, 32, 40, 48, 56)  # Fig. 13's axis [S: the paper's points are not in the text]


def cores_sweep(m: Machine = SPR_DDR, n: int = 4) -> list[dict]:
    """Fig. 13: TFLOPS of Software-only and DECA averaged over Table 2's kernels against the core count (each
    core with its TMUL, AVX units and DECA PE; the memory bandwidth stays the machine's)."""
    rows = []
    for cores in FIG13_CORES:
        mc = replace(m, cores=cores)
        tf = {
            name: sum(TILE * n / fc_seconds(mc, k, n, deca, 1) for k in TABLE2_KERNELS) / len(TABLE2_KERNELS) / TB
            for name, deca in (("Software-only", False), ("DECA", True))
        }
        rows.append({"cores": cores, **tf})
    return rows


def attention_seconds(model: str, n: int, m: Machine) -> float:
    """Decode attention of n requests at TABLE6_CTX cached tokens: the KV cache read (model zoo) at ETA_MEM."""
    from sysmodel.cost.models import load_model

    return n * TABLE6_CTX * load_model(model).kv_bytes_per_token() / (ETA_MEM * m.mbw)


@functools.cache
def _overhead_line(m: Machine) -> tuple[int, float, float]:
    """(N1, per-layer seconds at N1, seconds per extra token) of the non-FC, non-attention cost: Table 1's FC
    shares at N=1 and N=16 against this model's Q16 FC time on Llama2-70B (a fit to those two cells)."""
    from sysmodel.cost.models import load_model

    per_layer = {}
    base = load_model("llama2-70b")
    for nn, share in paper.FC_SHARE.items():
        fc = fc_seconds(m, TABLE6_KERNELS["Q16"], nn, False, fc_weight_tiles("llama2-70b", nn))
        per_layer[nn] = (fc * (1 - share) / share - attention_seconds("llama2-70b", nn, m)) / base.layers
    (n1, c1), (n2, c2) = sorted(per_layer.items())
    return n1, c1, (c2 - c1) / (n2 - n1)


def layer_overhead(n, m: Machine = SPR_HBM):
    """Per-layer seconds of norms, activations, residuals and kernel launches for ``n`` tokens (a + b*N,
    :func:`_overhead_line`; linear beyond 16). Vectorised over ``n``."""
    n1, c1, slope = _overhead_line(m)
    return c1 + slope * (np.asarray(n, float) - n1)


def other_seconds(model: str, n: int, m: Machine = SPR_HBM) -> float:
    """Everything outside the FC GeMMs: attention over the KV cache (model zoo, above) plus the per-layer
    cost :func:`layer_overhead` (calibrated on Llama2-70B from Table 1's FC shares at N=1 and N=16 against
    this model's Q16 FC time) scaled by layer count."""
    from sysmodel.cost.models import load_model

    return load_model(model).layers * float(layer_overhead(n, m)) + attention_seconds(model, n, m)


def table6(m: Machine = SPR_HBM) -> list[dict]:
    """Next-token latency = FC GeMMs (:func:`fc_seconds`) + everything else (:func:`other_seconds`, the
    same for every scheme and for DECA: decompression only touches the FC GeMMs). The Q16 cells of
    Llama2-70B at N=1 and 16 share Table 1's calibration; every other cell is a prediction."""
    rows = []
    for model in TABLE6_MODELS:
        for n in TABLE6_N:
            tiles, other = fc_weight_tiles(model, n), other_seconds(model, n, m)
            for scheme, k in TABLE6_KERNELS.items():
                sw_p, deca_p = paper.TABLE6[model, n, scheme]
                sw = (fc_seconds(m, k, n, False, tiles) + other) * 1e3
                dc = None if deca_p is None else (fc_seconds(m, k, n, True, tiles) + other) * 1e3
                rows.append(
                    {
                        "model": model,
                        "n": n,
                        "scheme": scheme,
                        "sw_paper": sw_p,
                        "sw_model": sw,
                        "deca_paper": deca_p,
                        "deca_model": dc,
                        "calibrated": model == "llama2-70b" and scheme == "Q16" and n in paper.FC_SHARE,
                    }
                )
    return rows


@functools.cache
def measured_cycles() -> dict[tuple[int, int, str, float], float]:
    """RTL cycles per tile from the characterization snapshot: (w, lanes, fmt, density) -> cycles."""
    from sysmodel.cost import characterization

    return {
        (m.params["w"], m.params["lanes"], m.params["fmt"], m.params["density"]): m.cycles_per_transaction
        for m in characterization.load()
        if m.unit == UNIT_PE and "fmt" in m.params
    }
