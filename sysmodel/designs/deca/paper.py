"""DECA (MICRO '25) published numbers the model is checked against, each with its table or section.
Data only: the model (sysmodel.designs.deca.roof_surface) and the report (sysmodel.designs.deca.report) import it; the
functions at the
end give each number as a ledger claim (sysmodel.ledger) with where it stands."""

from sysmodel.ledger import Claim

TABLE2 = {  # kernel: (R-L, R-S, measured) TFLOPS, N=16, SPR-HBM — DECA Table 2
    "MXFP4": (25.2, 11.5, 10.6),
    "BF8": (13.3, 13.3, 10.0),
    "BF8_50%": (21.2, 16.1, 13.0),
    "BF8_30%": (31.2, 16.1, 13.5),
    "BF8_20%": (40.8, 16.1, 13.6),
    "BF8_10%": (59.2, 16.1, 13.5),
    "BF8_5%": (70.0, 16.1, 13.7),
    "BF16_50%": (11.8, 11.8, 9.2),
    "BF16_30%": (18.4, 18.4, 12.3),
    "BF16_20%": (25.2, 23.0, 15.4),
    "BF16_10%": (40.8, 23.0, 16.3),
    "BF16_5%": (59.2, 23.0, 16.75),
}
TABLE4_SW = {  # density: (MEM, TMUL, AVX) utilisation of the software-only Q8 kernel, N=1, HBM — DECA Table 4
    1.0: (0.74, 0.14, 0.50),
    0.5: (0.66, 0.20, 0.88),
    0.2: (0.35, 0.20, 0.89),
    0.05: (0.19, 0.20, 0.89),
}
N_TABLE2 = 16  # Table 2 is N=16: Fig. 4 caption, and only N=16 keeps its 23.0 TFLOPS below MOS
DSE_CLAIMS = {"best/under": 2.0, "over/best max": 1.03}  # §8.2: "2x faster", "less than 3% faster"
TABLE1 = {  # (memory, input tokens, N): FC-GeMM share of Llama2-70B's BF16 next-token time — DECA Table 1
    **{("DDR", 32, n): v for n, v in ((1, 0.974), (4, 0.973), (16, 0.966))},
    **{("DDR", 128, n): v for n, v in ((1, 0.975), (4, 0.971), (16, 0.955))},
    **{("HBM", 32, n): v for n, v in ((1, 0.898), (4, 0.894), (16, 0.883))},
    **{("HBM", 128, n): v for n, v in ((1, 0.895), (4, 0.889), (16, 0.859))},
}
# the two cells the model's non-FC time is fitted to (model._overhead_line): HBM, 128 input tokens (Table 6's)
FC_SHARE = {n: TABLE1["HBM", 128, n] for n in (1, 16)}


def table1(n: int) -> Claim:
    """Table 1's HBM cell at 128 input tokens (the setting of Table 6, which the model runs) for batch ``n``."""
    return Claim(
        TABLE1["HBM", 128, n],
        "deca",
        "§3.1, Table 1",
        f"FC GeMM share of next-token time, N={n}",
        "Llama2-70B, BF16, SPR-HBM, 128 input tokens",
        kind="fit" if n in FC_SHARE else "prediction",
    )


TABLE4_DECA = {  # density: (MEM, TMUL, DECA) utilisation with DECA, Q8, N=1, HBM — DECA Table 4
    1.0: (0.93, 0.18, 0.75),
    0.5: (0.92, 0.28, 0.71),
    0.2: (0.91, 0.53, 0.63),
    0.05: (0.73, 0.79, 0.87),
}
TABLE4_COLUMNS = {"software-only": ("MEM", "TMUL", "AVX"), "DECA": ("MEM", "TMUL", "DECA")}
# the two cells the model takes as its achieved fractions (model.ETA_MEM, model.ETA_AVX): inputs, not predictions
TABLE4_INPUTS = {("DECA", 1.0, "MEM"), ("software-only", 0.5, "AVX")}


def table4(system: str, density: float, column: int) -> Claim:
    """Table 4's utilisation of one resource (``TABLE4_COLUMNS[system][column]``) at ``density``."""
    name = TABLE4_COLUMNS[system][column]
    values = TABLE4_SW if system == "software-only" else TABLE4_DECA
    return Claim(
        values[density][column],
        "deca",
        "Table 4",
        f"{system} {name} utilisation, density {density:.0%}",
        "Q8, N=1, SPR-HBM",
        kind="input" if (system, density, name) in TABLE4_INPUTS else "prediction",
    )


TABLE6 = {  # (model, N, scheme): (SW-only, DECA) ms, SPR-HBM, 128 in / 128 out — DECA Table 6
    ("llama2-70b", 1, "Q16"): (192.3, None),
    ("llama2-70b", 1, "Q4"): (124.6, 68.3),
    ("llama2-70b", 1, "Q8 30%"): (98.2, 59.6),
    ("llama2-70b", 16, "Q16"): (211.2, None),
    ("llama2-70b", 16, "Q4"): (139.1, 82.7),
    ("llama2-70b", 16, "Q8 30%"): (116.6, 75.7),
    ("llama2-70b", 64, "Q16"): (452.5, None),
    ("llama2-70b", 64, "Q4"): (441.6, 277.1),
    ("llama2-70b", 64, "Q8 30%"): (423.4, 259.8),
    ("opt-66b", 1, "Q16"): (178.5, None),
    ("opt-66b", 1, "Q4"): (117.0, 60.8),
    ("opt-66b", 1, "Q8 30%"): (91.3, 53.9),
    ("opt-66b", 16, "Q16"): (203.9, None),
    ("opt-66b", 16, "Q4"): (132.3, 81.8),
    ("opt-66b", 16, "Q8 30%"): (111.7, 75.5),
    ("opt-66b", 64, "Q16"): (470.0, None),
    ("opt-66b", 64, "Q4"): (436.4, 236.5),
    ("opt-66b", 64, "Q8 30%"): (407.3, 230.6),
}
TABLE6_MODELS = tuple(dict.fromkeys(m for m, _, _ in TABLE6))  # llama2-70b, opt-66b
TABLE6_N = tuple(dict.fromkeys(n for _, n, _ in TABLE6))  # 1, 16, 64
TABLE6_CTX = 128 + 64  # mean cached tokens over 128 generated after a 128-token prompt (§8.4)
AVX_SCALE = 4  # Fig. 14: 4x more (More AVX Units) or 4x wider (AVX2048, Wider AVX Units) vector units, §8.1
AREA_MM2 = 2.51  # 56 DECA PEs at W=32, L=8, 7 nm (DECA §7 "Area and Power")
SPEEDUP_RANGE = (1.6, 1.9)  # abstract: DECA cuts the next-token time of Llama2-70B and OPT-66B by 1.6x-1.9x


def table2(kernel: str, column: int) -> Claim:
    """Table 2's roofline (column 0) or Roof-Surface (1) limit of a kernel, TFLOPS, N=16, SPR-HBM. The roofline
    is 512 x N x min(MBW / bytes per tile, MOS): arithmetic of the stated bandwidth, format and TMUL rate, so an
    identity; the Roof-Surface's VEC term and which term binds are the model's (predictions)."""
    return Claim(
        TABLE2[kernel][column],
        "deca",
        "Table 2",
        f"{kernel} {('R-L', 'R-S')[column]} (TFLOPS)",
        "SPR-HBM, N=16, software-only",
        kind=("identity", "prediction")[column],
    )


def table6(model: str, n: int, scheme: str, deca: bool) -> Claim:
    """Table 6's next-token latency, software-only or with DECA, ms."""
    value = TABLE6[model, n, scheme][deca]
    if value is None:
        raise KeyError(f"DECA Table 6 has no DECA cell for {model} N={n} {scheme}")
    return Claim(
        value,
        "deca",
        "Table 6",
        f"{model} N={n} {scheme} {'DECA' if deca else 'software-only'} (ms)",
        "SPR-HBM, 128 in / 128 out",
    )


DSE_CLAIM = {
    "best/under": Claim(
        DSE_CLAIMS["best/under"],
        "deca",
        "§8.2",
        "DSE geomean, {32,8} over {8,4}",
        "SPR-HBM, N=16, Table 2 kernels",
        ratio=True,
    ),
    # "less than 3% faster": a bound, compared as the value it does not exceed
    "over/best max": Claim(
        DSE_CLAIMS["over/best max"],
        "deca",
        "§8.2",
        "DSE geomean, {64,64} over {32,8} (at most)",
        "SPR-HBM, N=16, Table 2 kernels",
    ),
}
# §8.1: compressed GeMMs, N=1, DECA over Software-only at its best scheme (BF8 at 5% density)
FIG11_SPEEDUP = Claim(
    1.7,
    "deca",
    "§8.1, Fig. 11",
    "DECA over Software-only on DDR, BF8_5% (the largest)",
    "FC GeMM cascade, SPR-DDR5, N=1",
    ratio=True,
)
FIG12_SPEEDUP = Claim(
    4.0,
    "deca",
    "§8.1, Fig. 12",
    "DECA over Software-only on HBM, BF8_5% (the largest)",
    "FC GeMM cascade, SPR-HBM, N=1",
    ratio=True,
)
FIG13_CORES = Claim(
    float("nan"),
    "deca",
    "§8.1, Fig. 13",
    "16 DECA cores over 56 Software-only cores (TFLOPS)",
    "mean over the compression schemes, SPR-DDR5, N=4",
    ratio=True,
    above=True,
)
FIG14_SCALING = Claim(
    float("nan"),
    "deca",
    "§8.1, Fig. 14",
    "DECA over 4x More / 4x Wider AVX Units, geomean speedup over Baseline across the schemes",
    "FC GeMM cascade, SPR-HBM, N=1",
    ratio=True,
    above=True,  # "the performance of conventional vector scaling methods is far below DECA's"
)
SPEEDUP = tuple(
    Claim(
        v,
        "deca",
        "abstract",
        f"DECA over software-only next-token time, {end} of Table 6's compressed cells",
        "Llama2-70B and OPT-66B, SPR-HBM, N=1-64",
        ratio=True,
    )
    for end, v in zip(("lowest", "highest"), SPEEDUP_RANGE, strict=True)
)

# Table 7 (§8.4): W4A16 Llama2-70B at N=1 — bandwidth and peak compute (inputs: devices.py holds them) and
# next-token latency; the GPU latencies are from the repository the paper cites ([11]); its SPR rows are
# Table 6's Q4 N=1 cells, rounded, and are not repeated here.
TABLE7_GPUS = {"rtx6000-ada": (960, 364, 58), "a100-80g-pcie": (1935, 312, 40), "h100-pcie": (2000, 989, 38)}
# [11] itself (github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference, README before commit 75fee52, its LLaMA 2
# table, llama.cpp built with LLAMA_CUBLAS, Dec 2023): eval tokens/s of REF11_MODELS (name, size in GiB from its
# "NVIDIA GPUs (snapshots in Dec 2023)" table, layers) per Table 7 GPU. Table 7's latencies are its 70B q4_0
# column (17.02, 25.68, 25.88 tokens/s: 58.8, 38.9, 38.6 ms), so the kernels are llama.cpp's, at 4.5 bits a weight
REF11_MODELS = (("7b-q4_0", 3.82, 32), ("7b-f16", 12.63, 32), ("70b-q4_0", 36.37, 80))
REF11_TOKENS_PER_S = {
    "rtx6000-ada": (127.45, 50.56, 17.02),
    "a100-80g-pcie": (136.24, 73.83, 25.68),
    "h100-pcie": (133.77, 83.32, 25.88),
}


def table7(device: str, column: int) -> Claim:
    """Table 7's GPU column ``device``: bandwidth (GB/s, 0), max compute (TFLOPS, 1) — inputs — or
    next-token latency (ms, 2)."""
    quantity = ("BW (GB/s)", "max compute (TFLOPS)", "next-token latency (ms)")[column]
    return Claim(
        TABLE7_GPUS[device][column],
        "deca",
        "Table 7",
        f"{device} {quantity}",
        "Llama2-70B, W4A16, N=1",
        kind="prediction" if column == 2 else "input",
    )


H100_RATIO = Claim(
    1.8,
    "deca",
    "§8.4, Table 7",
    "SPR HBM + DECA over H100 80GB PCIe, next-token latency",
    "Llama2-70B, W4A16, N=1",
    ratio=True,
)

# --- statements the kit computes beyond the tables' cells (issue 53) ----------------------------------------
# "A over B" margins of the Roof-Surface (§4): min(MEM, MTX) tile rate over the VEC tile rate — above 1 the
# kernel is VEC-bound, the BORD's verdict (Figs. 5 and 15) as a number.
_MARGIN = "min(MEM, MTX) over VEC tile rate"
BORD_CLAIMS = {
    "5a": Claim(
        float("nan"),
        "deca",
        "§4.2, Fig. 5a",
        "VEC-bound Table 2 kernels over the others (the vast majority VEC-bound)",
        "software-only, SPR-HBM, N=16",
        ratio=True,
        above=True,
    ),
    "5b VEC": Claim(
        float("nan"),
        "deca",
        "§4.2, Fig. 5b",
        f"{_MARGIN}, lowest of BF8_10% and BF8_5% (both VEC-bound)",
        "software-only, SPR-DDR5, N=16",
        ratio=True,
        above=True,
    ),
    "5b MEM": Claim(
        float("nan"),
        "deca",
        "§4.2, Fig. 5b",
        f"{_MARGIN}, highest of the other Table 2 kernels (all MEM-bound)",
        "software-only, SPR-DDR5, N=16",
        ratio=True,
        above=False,
    ),
    "5c": Claim(
        float("nan"),
        "deca",
        "§4.2, Fig. 5c",
        f"{_MARGIN} with 4x VOS, highest of the Table 2 kernels (4x is not enough: some stay VEC-bound)",
        "software-only, SPR-HBM with 4x VOS, N=16",
        ratio=True,
        above=True,
    ),
}
# §8.2, Fig. 15: {8,4} leaves kernels VEC-bound; {32,8} pushes them "just enough" out; {64,64} "more than needed"
DSE_BOUND = {
    name: Claim(
        float("nan"),
        "deca",
        "§8.2, Fig. 15b",
        f"{_MARGIN}, highest of the Table 2 kernels, DECA {name}",
        "SPR-HBM, N=16",
        ratio=True,
        above=above,
    )
    for name, above in (("{8,4} under", True), ("{32,8} best", False), ("{64,64} over", False))
}
# §3.3: "at BF8_5%, the ratio between Optimal and Observed performance is 5.25x" (Fig. 3b: HBM, N=16)
FIG3_GAP = Claim(
    5.25,
    "deca",
    "§3.3, Fig. 3b",
    "Optimal over Observed (Software-only), BF8_5%",
    "FC GeMM, SPR-HBM, N=16",
    ratio=True,
)
# §8.1: DDR gains "only for high compression factors" (the two VEC-bound kernels of Fig. 5b); HBM "for almost all"
FIG11_ONLY_HIGH = Claim(
    float("nan"),
    "deca",
    "§8.1, Fig. 11",
    "DECA over Software-only, highest of the schemes other than BF8_10% and BF8_5% (gains only at high compression)",
    "FC GeMM cascade, SPR-DDR5, N=1",
    ratio=True,
    above=False,
)
FIG12_ALMOST_ALL = Claim(
    float("nan"),
    "deca",
    "§8.1, Fig. 12",
    "schemes where DECA beats Software-only over those where it does not (almost all)",
    "FC GeMM cascade, SPR-HBM, N=1",
    ratio=True,
    above=True,
)
# §8.1: "in both DDR and HBM, the performance of DECA is close to the Optimal one" — "close" read as 1 (within 10%)
CLOSE_TO_OPTIMAL = {
    fig: Claim(
        1.0,
        "deca",
        f"§8.1, Fig. {fig}",
        "DECA over Optimal, lowest of the schemes (close to Optimal)",
        f"FC GeMM cascade, {mem}, N=1",
        ratio=True,
        note="the Optimal system skips decompression; DECA meets it only where the PE's measured cycles keep the "
        "kernel off the VEC bound, which the model computes per scheme",
    )
    for fig, mem in (("11", "SPR-DDR5"), ("12", "SPR-HBM"))
}
# §8.1 on Table 4: with DECA memory is "much better utilized", performance (TMUL) "much higher", and the TMUL
# utilisation rises as sparsity increases
TABLE4_TRENDS = {
    key: Claim(float("nan"), "deca", "§8.1, Table 4", quantity, "Q8, N=1, SPR-HBM", ratio=True, above=True)
    for key, quantity in (
        ("MEM", "DECA over software-only MEM utilisation, lowest of the densities"),
        ("TMUL", "DECA over software-only TMUL utilisation, lowest of the densities"),
        ("TMUL trend", "DECA TMUL utilisation at 5% over 100% density"),
    )
}
# §6.1 item 7: "the probability that the Wnd of a vOp is larger than L decreases with sparsity" — fewer bubbles
PE_BUBBLES = Claim(
    float("nan"),
    "deca",
    "§6.1",
    "DECA PE cycles per tile, dense Q8 over Q8 at 5% density (fewer bubbles when sparser)",
    "W=32, L=8",
    ratio=True,
    above=True,
)
# §8.4 (and §1): over the uncompressed base model (Q16 software-only), at N=1 and 16 "2.5x-3.3x", "1.6x-3.3x"
# with N=64 — the low and high ends over Table 6's DECA cells and the same model and N's Q16 cell
OVER_Q16 = {
    (end, ns): Claim(
        v,
        "deca",
        "§8.4",
        f"DECA over uncompressed Q16 software-only next-token time, {end} of Table 6's cells at N={ns}",
        "Llama2-70B and OPT-66B, SPR-HBM",
        ratio=True,
    )
    for end, ns, v in (("lowest", "1,16", 2.5), ("highest", "1,16", 3.3), ("lowest", "1,16,64", 1.6))
}
# §8.4: "without DECA, MXFP4 is almost ineffective" at N=64 — Table 6's Q16 over Q4 software-only cells
MXFP4_N64 = {
    model: Claim(
        TABLE6[model, 64, "Q16"][0] / TABLE6[model, 64, "Q4"][0],
        "deca",
        "§8.4, Table 6",
        f"{model} N=64 Q16 over Q4 software-only next-token time (MXFP4 almost ineffective)",
        "SPR-HBM, 128 in / 128 out",
        ratio=True,
    )
    for model in ("llama2-70b", "opt-66b")
}
# Table 7's SPR HBM columns: bandwidth (the model's input, §7) and max compute — 56 cores x 2.5 GHz x 512 FMAs per
# cycle (§2.3: a 16x32x16 TMUL op every 16 cycles; FLOPs count FMAs), arithmetic of the stated organisation
TABLE7_SPR = {"BW (GB/s)": (850, "input"), "max compute (TFLOPS)": (72, "identity")}


def table7_spr(quantity: str) -> Claim:
    value, kind = TABLE7_SPR[quantity]
    return Claim(value, "deca", "Table 7", f"spr-hbm {quantity}", "Llama2-70B, W4A16, N=1", kind=kind)


# §8.4: SPR HBM + DECA "very close to RTX6000 ADA's" (Table 7: 68 vs 58 ms); the H100's "2.4x higher bandwidth and
# 14x higher maximum computational throughput" are arithmetic of Table 7's inputs
RTX_RATIO = Claim(
    68 / 58,
    "deca",
    "§8.4, Table 7",
    "SPR HBM + DECA over RTX 6000 Ada, next-token latency (very close)",
    "Llama2-70B, W4A16, N=1",
    ratio=True,
)
H100_OVER_SPR = {
    col: Claim(
        v,
        "deca",
        "§8.4, Table 7",
        f"H100 80GB PCIe over SPR HBM, {name}",
        "Table 7's columns",
        kind="identity",
        ratio=True,
    )
    for col, name, v in ((0, "bandwidth", 2.4), (1, "max compute", 14.0))
}
# §3.2, Fig. 3: the dense BF16 baseline is memory-bandwidth bound on both memories (MEM over MTX tile rate below 1)
# — arithmetic of the stated bandwidths, the 1 KB BF16 tile and the TMUL rate: identities
FIG3_BF16 = {
    mem: Claim(
        float("nan"),
        "deca",
        f"§3.2, Fig. 3{panel}",
        "dense BF16 MEM over MTX tile rate (memory-bandwidth bound)",
        f"FC GeMM, {mem}, N=16",
        kind="identity",
        ratio=True,
        above=False,
    )
    for panel, mem in (("a", "SPR-DDR5"), ("b", "SPR-HBM"))
}
# §3.3: on DDR Observed and Optimal diverge only at BF8_5%; on HBM every compressed model is below Optimal
FIG3_DIVERGE = {
    "DDR": Claim(
        float("nan"),
        "deca",
        "§3.3, Fig. 3a",
        "Optimal over Observed (Software-only), highest of the schemes other than BF8_5% (no divergence)",
        "FC GeMM, SPR-DDR5, N=16",
        ratio=True,
        above=False,
    ),
    "HBM": Claim(
        float("nan"),
        "deca",
        "§3.3, Fig. 3b",
        "Optimal over Observed (Software-only), lowest of the compressed schemes (all below Optimal)",
        "FC GeMM, SPR-HBM, N=16",
        ratio=True,
        above=True,
    ),
}
# §4.1, Fig. 4 (HBM): MXFP4, BF8_5% and BF16_10% VEC-bound; BF16_30% memory-bound
FIG4_BOUNDS = {
    key: Claim(float("nan"), "deca", "§4.1, Fig. 4", f"{_MARGIN}, {quantity}", "SPR-HBM", ratio=True, above=a)
    for key, quantity, a in (
        ("VEC", "lowest of MXFP4, BF8_5% and BF16_10% (VEC-bound)", True),
        ("MEM", "BF16_30% (memory-bound)", False),
    )
}
# §8.1 on Table 4: "In the Software-only system, for almost all of the densities, the bottleneck is the AVX"
TABLE4_AVX_BOUND = Claim(
    float("nan"),
    "deca",
    "§8.1, Table 4",
    "densities where AVX is software-only's most utilised resource over the others (almost all)",
    "Q8, N=1, SPR-HBM",
    ratio=True,
    above=True,
)
# §8.4: "compressed models for this batch size [N=64] are less effective in comparison with N=1 and N=16"
N64_LESS_EFFECTIVE = Claim(
    float("nan"),
    "deca",
    "§8.4, Table 6",
    "software-only speedup of a compressed scheme over Q16 at N=64 over its lowest at N=1 and 16, highest of the "
    "models and schemes (less effective at N=64)",
    "Llama2-70B and OPT-66B, SPR-HBM",
    ratio=True,
    above=False,
)
# §12.2, Fig. 18: at N=64 "many kernels still remain VEC-bound" (a weight tile feeds 4 TMUL operations)
FIG18_N64 = Claim(
    float("nan"),
    "deca",
    "§12.2, Fig. 18",
    f"{_MARGIN} at N=64, highest of the Table 2 kernels (some still VEC-bound)",
    "software-only, SPR-HBM, N=64",
    ratio=True,
    above=True,
)
