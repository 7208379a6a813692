"""LLM in a flash's evaluation setup and the numbers membound reproduces, each with its source
(shared/notes/l3_duplex_flash.md §3). [Q] stated in the paper, [D] derived from its numbers, [S] a membound
choice where the paper is silent."""

from __future__ import annotations

from sysmodel.ledger import Claim, claims

GB = 1e9
KIB = 1024

# Flash reads on the M1 Max 1 TB SSD, 32 threads, F_NOCACHE (§2.2, §4.1). Points for the throughput plot.
FLASH_POINTS = {  # chunk bytes -> GB/s
    8 * KIB: 1.25,  # [Q] Table 2: predictor, unbundled fp16 OPT rows (d_model x 2 bytes)
    16 * KIB: 2.25,  # [Q] Table 2: bundled fp16 (2 d_model x 2 bytes)
    32 * KIB: 4.0,  # [D] OPT CPU fp32 bundled reads 0.41 GB in 105 ms (§4.2, Table 3)
    1 << 30: 6.1,  # [Q] naive: sequential 13.4 GB at 6.1 GB/s (Table 2)
}
NAIVE_BYTES = 13.4 * GB  # [Q] Table 2: OPT-6.7B fp16, loaded whole per token (also for fp32 runs: notes §3.5 #3)

# Table 2 (OPT-6.7B fp16, M1 Max, half the memory): flash->DRAM bytes per token and I/O latency [Q]
TABLE2 = {  # config -> (GB loaded per token, chunk bytes, I/O ms)
    "naive": (13.4, 1 << 30, 2196),
    "hybrid": (6.7, 1 << 30, 1090),
    "+predictor": (0.9, 8 * KIB, 738),
    "+windowing": (0.2, 8 * KIB, 164),
    "+bundling": (0.2, 16 * KIB, 87),
}

# Windowing (§3.1, App. C): per token, the loaded increment and the window held in DRAM, fractions of the FFN [Q]
INCREMENT = {"opt-6.7b": 0.024, "falcon-7b": 0.031}
WINDOW_FFN = {"opt-6.7b": 0.24, "falcon-7b": 0.33}
# Predictor ranks per layer (§3.1, App. B) [Q]; a predictor has rank * (d_model + d_ff) weights
PREDICTOR_RANKS = {
    "opt-6.7b": [128] * 28 + [1024] * 4,
    "falcon-7b": [256] * 28 + [1152] * 4,
    "persimmon-8b": [256] * 32 + [1152] * 4,
    "phi-2": [r for r in (160, 160, 480, 800, 800, 480, 160, 0) for _ in range(4)],  # 8 groups of 4; none last
    "llama2-7b": [256] * 14 + [1024] * 4 + [256] * 14,  # "1024 in 4 middle layers"
}
# FFN share held by the window where the paper states no share but a memory limit (App. C) [Q]
FFN_LIMIT = {"persimmon-8b": 0.25}  # "FFN memory exceeds 25% of FFN size"
WINDOW_TOKENS = 5  # [S] OPT: "k = 4" past tokens plus the current one (notes §3.5 #1; Fig. 4 says k = 5)

# DRAM budget per model, share of the model [Q]: App. C.1 and C.2 sum the resident parts; App. C.3 states
# Persimmon's ("the 25% limit in the FFN which will be 50% of the total model size")
DRAM_SHARE = {"opt-6.7b": 0.521, "falcon-7b": 0.5293, "persimmon-8b": 0.50}
# Memory limits stated per model (App. C): the hybrid baseline keeps this share resident [Q]
RESIDENT = {"opt-6.7b": 0.5, "falcon-7b": 0.5, "persimmon-8b": 0.5, "phi-2": 0.65, "llama2-7b": 0.55}
DEFAULT_RESIDENT = 0.5  # [Q] §4.1: the method assumes "memory availability being half the size of the model" (§6)
# [S] the loaded FFN share per token of a model the paper did not run: OPT's for native-ReLU models, Falcon's
# (ReLU-fied) for the others
FAMILY_INCREMENT = {"opt": INCREMENT["opt-6.7b"]}
DEFAULT_INCREMENT = INCREMENT["falcon-7b"]
# Backend -> device (§4.1): the M1 Max runs the CPU and Metal backends, the M2 Ultra Metal, the Linux box an RTX 4090
BACKEND_DEVICE = {"cpu": "m1-max", "metal-m1": "m1-max", "metal-m2": "m2-ultra", "gpu": "rtx4090"}

# Table 3: per-token latency in ms, (I/O, memory management, compute, total) [Q]
TABLE3 = {
    ("opt-6.7b", "cpu"): {"naive": (2196, 0, 986, 3182), "all": (105, 58, 506, 669)},
    ("opt-6.7b", "metal-m1"): {"naive": (2196, 0, 193, 2389), "all": (92, 35, 438, 565)},
    ("opt-6.7b", "metal-m2"): {"naive": (2145, 0, 125, 2270), "all": (26, 8, 271, 305)},
    ("opt-6.7b", "gpu"): {"naive": (2196, 0, 22, 2218), "all": (30, 34, 20, 84)},
    ("falcon-7b", "cpu"): {"naive": (2295, 0, 800, 3095), "hybrid": (1147, 0, 800, 1947), "all": (161, 92, 453, 706)},
    ("persimmon-8b", "cpu"): {
        "naive": (2622, 0, 1184, 3806),
        "hybrid": (1311, 0, 1184, 2495),
        "all": (283, 98, 660, 1041),
    },
    ("phi-2", "cpu"): {"naive": (885, 0, 402, 1287), "hybrid": (309, 0, 402, 711), "all": (211, 76, 259, 546)},
    ("llama2-7b", "cpu"): {"naive": (2166, 0, 929, 3095), "hybrid": (974, 0, 929, 1903), "all": (279, 152, 563, 994)},
}
# Backends (§4.1): weight bytes per value in compute and in the "all" loads
BACKEND_BYTES = {"cpu": 4, "metal-m1": 2, "metal-m2": 2, "gpu": 2}  # CPU float32; Metal float16; GPU bfloat16

# Predictor quality, OPT-6.7B (§3.1, App. B) [Q]
PREDICTOR_FNR, PREDICTOR_FPR = 0.05, 0.07
OPT_ACTIVE = 0.033  # average share of FFN neurons active per token (Table 6: 3.30%)
PREDICTOR_THRESHOLD = 0.5  # [S] sigmoid threshold (0.7 only for Persimmon)

# The tables above as ledger claims (sysmodel.ledger): where each number stands and what it measures. Their kind
# (fit, input, prediction) is the model's business: the report records it with each.
PARTS = ("I/O", "memory management", "compute", "total")


# where each throughput is stated: 1.25 and 6.1 in Table 2 and §4.2 ("1.25 GiB/s sparse vs 6.1 GiB/s dense"),
# 6 GiB/s also in §2.2; 2.25 in Table 2 only
POINT_WHERE = {8 * KIB: "Table 2; §4.2", 16 * KIB: "Table 2", 1 << 30: "§2.2; Table 2; §4.2"}


def flash_point(chunk: int) -> Claim | float:
    """A throughput point as the paper states it; the 32 KiB point is derived [D] from Table 3, not a number
    the paper states, so it stays a plain float and enters no ledger."""
    if chunk == 32 * KIB:
        return FLASH_POINTS[chunk]
    size = "sequential" if chunk >= 1 << 30 else f"{chunk // KIB} KiB"
    return Claim(
        FLASH_POINTS[chunk],
        "flash",
        POINT_WHERE[chunk],
        f"read throughput, {size} chunks (GB/s)",
        "M1 Max SSD, 32 threads",
    )


def table2(config: str) -> Claim:
    return Claim(
        TABLE2[config][2], "flash", "Table 2", f"I/O per token, {config} (ms)", "OPT-6.7B fp16, M1 Max, half the memory"
    )


# Predictions that land on the paper's value to 4 significant digits, with why they are still predictions
EXACT = {
    ("llama2-7b", "cpu", "naive", 0): "the whole model's bytes at the read model's sequential rate: nothing of "
    "Llama 2 is fitted (the fits are OPT-6.7B cells), so the 0.02% agreement is a coincidence of the byte count",
}


def table3(model: str, backend: str, config: str, part: int) -> Claim:
    return Claim(
        TABLE3[(model, backend)][config][part],
        "flash",
        "Table 3",
        f"{model} {backend} {config}: {PARTS[part]} (ms)",
        f"{model}, the {backend} backend, per token",
        note=EXACT.get((model, backend, config, part), ""),
    )


# "up to 4x, 7x, and 20x compared to naive implementation in CPU, Metal and NVIDIA GPU backends" (abstract: CPU
# and GPU; §1: all three) [Q]: "up to" is the best of the backend's Table 3 rows (Metal: the M1 and M2 rows).
SPEEDUP = {"cpu": (4.0, "abstract, §1"), "metal-m2": (7.0, "§1"), "gpu": (20.0, "abstract, §1")}


def speedup(backend: str) -> Claim:
    value, where = SPEEDUP[backend]
    workload = "the best of the backend's Table 3 rows"
    family = backend.split("-")[0]  # Metal: the M1 and M2 rows
    return Claim(value, "flash", where, f"{family} speedup over naive, up to", workload, ratio=True)


# §7 (and App. E's summary) restate CPU and GPU as ranges on OPT [Q]; a range is compared at its midpoint
SPEEDUP_RANGE = {"cpu": (4.0, 5.0), "gpu": (20.0, 25.0)}


def speedup_range(backend: str) -> Claim:
    lo, hi = SPEEDUP_RANGE[backend]
    quantity = f"opt-6.7b {backend} speedup over naive, {lo:g}-{hi:g}x (the range's midpoint)"
    return Claim((lo + hi) / 2, "flash", "§7; App. E", quantity, "OPT-6.7B", ratio=True)


# Table 5 (App. C.1): the "All" rows rerun with standard deviations, (I/O, memory management, compute, total) in
# ms [Q]; its speculative-decoding row is not modelled
TABLE5 = {
    ("opt-6.7b", "cpu"): (104.90, 57.79, 506.50, 669.20),
    ("opt-6.7b", "gpu"): (30.55, 34.11, 19.97, 84.64),
    ("persimmon-8b", "cpu"): (310.52, 155.80, 623.74, 1090.08),
    ("phi-2", "cpu"): (211.08, 76.87, 258.74, 546.69),
}


def table5(model: str, backend: str, part: int) -> Claim:
    quantity = f"{model} {backend} all: {PARTS[part]} (ms), Table 5 rerun"
    workload = f"{model}, the {backend} backend, per token"
    return Claim(TABLE5[(model, backend)][part], "flash", "Table 5 (App. C.1)", quantity, workload)


# App. C.1 (OPT-6.7B) and C.2 (Falcon-7B): the parts of the DRAM budget, % of the model [Q]. Arithmetic of the
# model's dimensions and of the stated predictor ranks and window shares: identities of the kit's bookkeeping.
SHARES = {
    "opt-6.7b": ("App. C.1", {"embeddings": 3.0, "attention": 32.3, "predictors": 1.25, "FFN": 64.62, "window": 15.5}),
    "falcon-7b": ("App. C.2", {"embeddings": 4.2, "attention": 19.4, "predictors": 4.0, "FFN": 76.8, "window": 25.3}),
}


def share(model: str, part: str) -> Claim:
    where, values = SHARES[model]
    name = "FFN held by the window" if part == "window" else part
    return Claim(values[part], "flash", where, f"{model} {name} (% of the model)", model, "identity")


# the DRAM budgets are stated with each model's setup (App. C.1, C.2), as the sum of the parts in SHARES
DRAM_SHARE_WHERE = {"opt-6.7b": "App. C.1", "falcon-7b": "App. C.2", "persimmon-8b": "App. C.3"}


def dram_share_claim(model: str) -> Claim:
    quantity = f"{model} DRAM budget (% of the model)"
    return Claim(DRAM_SHARE[model] * 100, "flash", DRAM_SHARE_WHERE[model], quantity, model)


_nan = float("nan")
_c1 = claims("flash", "App. C.1", "OPT-6.7B, per token")
_c2 = claims("flash", "App. C.2", "Falcon-7B, the cpu backend, per token")
_c4 = claims("flash", "App. C.4", "Phi-2, the cpu backend, per token", "input", ratio=True)
_c5 = claims("flash", "App. C.5", "Llama 2 7B, the cpu backend, per token", "input", ratio=True)
_synthetic = "the neuron cache on the synthetic predictor's masks"
# The other numbers the text states that the kit computes [Q], each where the paper states it. A direction the
# paper states without a number is a NaN-valued ratio claim (A over B above 1). Phi-2's and Llama 2's "all" rows
# take their I/O from the paper's cell (an input), so their speedups are inputs too.
TEXT = {
    "throughput by chunk": claims("flash", "§2.2, Fig. 2b", "M1 Max SSD, 32 threads", "identity", ratio=True)(
        _nan, "read throughput, 32 KiB over 8 KiB chunks", above=True
    ),
    "throughput by threads": claims("flash", "§2.2, Fig. 2b", "M1 Max SSD, 8 KiB chunks", "identity", ratio=True)(
        _nan, "read throughput, 32 over 16 threads", above=True
    ),
    "window loads less": claims("flash", "§3.1, Fig. 4a", _synthetic, "identity", ratio=True)(
        _nan, "FFN loaded per token, window k = 1 over k = 8", above=True
    ),
    "window holds more": claims("flash", "§3.1", _synthetic, "identity", ratio=True)(
        _nan, "FFN held in DRAM, window k = 8 over k = 1", above=True
    ),
    "bundle doubles": Claim(
        2.0, "flash", "§3.2, Fig. 5", "bundle over a single row, chunk size (x)", "OPT-6.7B", "identity"
    ),
    "bundling halves": Claim(
        2.0, "flash", "Table 2", "I/O per token, +windowing over +bundling", "OPT-6.7B fp16, M1 Max", "fit", ratio=True
    ),
    "window DRAM": Claim(6.5, "flash", "Table 2", "DRAM, +windowing and +bundling (GB)", "OPT-6.7B fp16", "input"),
    "over naive": claims("flash", "§4.2", "Table 3", ratio=True)(
        _nan, "speedup over naive, the worst Table 3 row", above=True
    ),
    "over hybrid": claims("flash", "§4.2", "Table 3", ratio=True)(
        _nan, "speedup over hybrid, the worst Table 3 row", above=True
    ),
    "predictor rank": Claim(240, "flash", "App. B.3", "opt-6.7b mean predictor rank", "OPT-6.7B", "identity"),
    "predictor weights": Claim(
        2.4, "flash", "App. B.3", "opt-6.7b predictors (% of non-embedding weights), less than", "OPT-6.7B", "identity"
    ),
    "opt bundle": _c1(32, "opt-6.7b bundle, fp32 (KiB)", kind="identity"),
    "opt memory-related": _c1(162, "opt-6.7b cpu all: I/O + memory management (ms), less than", kind="fit"),
    "gpu naive io": _c1(_nan, "opt-6.7b gpu naive: I/O over 2000 ms", ratio=True, above=True),
    "kv share": _c1(8.0, "opt-6.7b KV cache at 2048 tokens (% of the model)", where="App. C, fn. 2", kind="identity"),
    "falcon bundle": _c2(35.5, "falcon-7b bundle, fp32 (KiB)", kind="identity"),
    "falcon mem": _c2(90, "falcon-7b cpu all: memory management, in the text (ms)"),
    "falcon memory-related": _c2(250, "falcon-7b cpu all: I/O + memory management (ms)"),
    "falcon over naive": _c2(9.5, "falcon-7b naive I/O over all I/O + memory management, 9-10x (midpoint)", ratio=True),
    "phi over naive": _c4(2.35, "phi-2 cpu speedup over naive"),
    "phi over hybrid": _c4(_nan, "phi-2 cpu all over hybrid (speedup)", above=True),
    "llama over naive": _c5(3.0, "llama2-7b cpu speedup over naive"),
    "llama over hybrid": _c5(_nan, "llama2-7b cpu all over hybrid (speedup)", above=True),
}
