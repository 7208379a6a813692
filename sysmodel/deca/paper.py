"""DECA (MICRO '25) published numbers the model is checked against, each with its table or section.
Data only: the model (sysmodel.deca.model) and the report (sysmodel.deca.report) import it; the functions at the
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
DSE_CLAIMS = {"best/under": 2.0, "over/best max": 1.03}  # §8.2: "2x faster", "less than 3% faster"
FC_SHARE = {1: 0.895, 16: 0.859}  # Table 1: FC-GeMM share of next-token time, HBM, 128 input tokens (Q16)
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
SPEEDUP_RANGE = (1.6, 1.9)  # abstract: DECA cuts the next-token time of Llama2-70B and OPT-66B by 1.6x-1.9x


def table2(kernel: str, column: int) -> Claim:
    """Table 2's roofline (column 0) or Roof-Surface (1) limit of a kernel, TFLOPS, N=16, SPR-HBM."""
    return Claim(
        TABLE2[kernel][column],
        "deca",
        "Table 2",
        f"{kernel} {('R-L', 'R-S')[column]} (TFLOPS)",
        "SPR-HBM, N=16, software-only",
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
    "DECA over Software-only, BF8_5% (the largest)",
    "FC GeMM cascade, SPR-DDR5, N=1",
    ratio=True,
)
FIG12_SPEEDUP = Claim(
    4.0,
    "deca",
    "§8.1, Fig. 12",
    "DECA over Software-only, BF8_5% (the largest)",
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
