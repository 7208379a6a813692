"""DECA (MICRO '25) published numbers the model is checked against, each with its table or section.
Data only: the model (sysmodel.deca.model) and the report (sysmodel.deca.report) import it."""

TABLE2 = {  # kernel: (R-L, R-S, measured) TFLOPS, N=16, SPR-HBM — DECA Table 2
    "MXFP4": (25.2, 11.5, 10.6), "BF8": (13.3, 13.3, 10.0), "BF8_50%": (21.2, 16.1, 13.0),
    "BF8_30%": (31.2, 16.1, 13.5), "BF8_20%": (40.8, 16.1, 13.6), "BF8_10%": (59.2, 16.1, 13.5),
    "BF8_5%": (70.0, 16.1, 13.7), "BF16_50%": (11.8, 11.8, 9.2), "BF16_30%": (18.4, 18.4, 12.3),
    "BF16_20%": (25.2, 23.0, 15.4), "BF16_10%": (40.8, 23.0, 16.3), "BF16_5%": (59.2, 23.0, 16.75),
}
TABLE4_SW = {  # density: (MEM, AVX) utilisation of the software-only BF8 kernel, N=1, HBM — DECA Table 4
    1.0: (0.74, 0.50), 0.5: (0.66, 0.88), 0.2: (0.35, 0.89), 0.05: (0.19, 0.89)}
DSE_CLAIMS = {"best/under": 2.0, "over/best max": 1.03}  # §8.2: "2x faster", "less than 3% faster"
FC_SHARE = {1: 0.895, 16: 0.859}  # Table 1: FC-GeMM share of next-token time, HBM, 128 input tokens (Q16)
TABLE4_DECA = {  # density: (MEM, TMUL, DECA) utilisation with DECA, Q8, N=1, HBM — DECA Table 4
    1.0: (0.93, 0.18, 0.75), 0.5: (0.92, 0.28, 0.71), 0.2: (0.91, 0.53, 0.63), 0.05: (0.73, 0.79, 0.87)}
TABLE6 = {  # (model, N, scheme): (SW-only, DECA) ms, SPR-HBM, 128 in / 128 out — DECA Table 6
    ("llama2-70b", 1, "Q16"): (192.3, None), ("llama2-70b", 1, "Q4"): (124.6, 68.3),
    ("llama2-70b", 1, "Q8 30%"): (98.2, 59.6), ("llama2-70b", 16, "Q16"): (211.2, None),
    ("llama2-70b", 16, "Q4"): (139.1, 82.7), ("llama2-70b", 16, "Q8 30%"): (116.6, 75.7),
    ("llama2-70b", 64, "Q16"): (452.5, None), ("llama2-70b", 64, "Q4"): (441.6, 277.1),
    ("llama2-70b", 64, "Q8 30%"): (423.4, 259.8),
    ("opt-66b", 1, "Q16"): (178.5, None), ("opt-66b", 1, "Q4"): (117.0, 60.8), ("opt-66b", 1, "Q8 30%"): (91.3, 53.9),
    ("opt-66b", 16, "Q16"): (203.9, None), ("opt-66b", 16, "Q4"): (132.3, 81.8),
    ("opt-66b", 16, "Q8 30%"): (111.7, 75.5), ("opt-66b", 64, "Q16"): (470.0, None),
    ("opt-66b", 64, "Q4"): (436.4, 236.5), ("opt-66b", 64, "Q8 30%"): (407.3, 230.6),
}
