"""Duplex's evaluation setup and the results membound reproduces, each with its source (shared/notes §2.6-2.7).
[S] marks a membound choice where the paper is silent."""

from __future__ import annotations

from sysmodel.ledger import Claim, claims

XPU = "h100-sxm"  # "equivalent to H100" (§VI); specs from the AttAcc simulator's H100 (notes §2.8.1)
DEVICE_BYTES = 80e9  # 80 GB per device, equal across systems (§VI)
# §VI: nodes "interconnected via a system with a 400GB/s Infiniband", taken as stated (GB/s) per node and
# direction: an HGX/DGX H100 node's eight 400 Gb/s ConnectX-7 ports give 8 x 50 = 400 GB/s (NVIDIA DGX H100
# User Guide §1.2.3), where one 400 Gb/s port per node (notes §2.8.5's reading, 50 GB/s) would starve 8 GPUs
IB_BW = 400e9
MEMORY_SPACES = 4  # device memory split by bank-bundle index; experts dealt one by one to the spaces (§V-C)
BANK_PIM_FACTOR = 16  # Bank-PIM: 16x HBM bandwidth at 1 Op/B (§VI)
# Table I and §VI: model -> (nodes, devices per node)
SYSTEMS = {"mixtral-8x7b": (1, 4), "glam-143b": (1, 8), "grok-1": (2, 8), "opt-66b": (1, 4), "llama3-70b": (1, 4)}
LENGTHS = ((256, 256), (4096, 4096))  # the ends of Fig. 11's (L_in, L_out) range
BATCHES = (32, 128)  # Fig. 11's batch range
BANK_PIM_BATCHES = (32, 64)  # Fig. 14's batches (§VII-C: batch 32 at (4096, 4096), batch 64 at (256, 256))

# Fig. 11 throughput over GPU: the figure, and so its max and mean, covers three models (its caption, §VII-A);
# the kit runs OPT-66B and Llama3-70B too (Fig. 14's out-of-target models) but they enter no Fig. 11 number
FIG11_MODELS = ("mixtral-8x7b", "glam-143b", "grok-1")
_f11 = claims("duplex", "§VII-A, Fig. 11", "Mixtral, GLaM, Grok1; (L_in, L_out) 256-4096, batch 32-128", ratio=True)
DUPLEX_MAX = _f11(2.51, "Duplex over GPU, max")  # best case: Mixtral (4096, 4096)
PE_OVER_DUPLEX = _f11(1.04, "Duplex+PE over Duplex, mean")
ET_MAX_OVER_GPU = _f11(2.67, "Duplex+PE+ET over GPU, max", where="Abstract, §VII-A, Fig. 11")
AVG_OVER_GPU = _f11(2.07, "Duplex+PE+ET over GPU, mean", where="§X, Fig. 11")
# §VII-A's other Fig. 11 statements: directions over the figure's cells, and co-processing's largest gain
_NAN = float("nan")
ET_OVER_DUPLEX_MAX = _f11(1.36, "Duplex+PE+ET over Duplex, max")
FIG11_DIRECTIONS = {
    # §I/§VII-A "Duplex shows higher throughput than GPU systems": on every cell of the figure
    "lowest": _f11(_NAN, "Duplex+PE+ET over GPU, lowest over the figure's cells", above=True),
    # §VII-A "with even 2xGPU in most cases": the median cell beats 2xGPU
    "median 2x": _f11(_NAN, "Duplex+PE+ET over 2xGPU, median over the figure's cells", above=True),
    # §VII-A "There exist cases that Duplex outperforms the throughput of 2xGPU" (plain Duplex)
    "max 2x": _f11(_NAN, "Duplex over 2xGPU, max over the figure's cells", above=True),
    # §VII-A: Duplex's "up to 2.51x", "showing the best performance for the (4096, 4096) case of Mixtral": that
    # case's better batch over the best of every other cell of the figure
    "mixtral best": _f11(
        _NAN, "Duplex over GPU, Mixtral (4096, 4096) over the best other cell of the figure", above=True
    ),
    # §VII-A "Grok1 exhibits smaller performance improvements compared to the other models"
    "grok": _f11(_NAN, "Duplex+PE+ET over GPU, Grok1's mean over Mixtral's and GLaM's", above=False),
}
# Fig. 12: GLaM, batch 64, (L_in, L_out) 512-2048: reductions vs GPU and 2xGPU
GLAM_BATCH, GLAM_LENGTHS = 64, ((512, 512), (2048, 2048))
_f12 = claims("duplex", "§VII-B, Fig. 12", "GLaM, batch 64, (L_in, L_out) 512-2048")
TBT_P50_VS_GPU = _f12(0.583, "median TBT reduction vs GPU")
E2E_VS_GPU, E2E_VS_2GPU = _f12(0.6020, "E2E reduction vs GPU"), _f12(0.3538, "E2E reduction vs 2xGPU")
# §VII-B "Duplex achieves even lower median TBT latency than 2xGPU" (GLaM, Fig. 12's lengths)
TBT_P50_OVER_2GPU = _f12(_NAN, "2xGPU median TBT over Duplex+PE+ET's, lowest over the lengths", ratio=True, above=True)
# §I: "2.57x lower end-to-end latency" — the paper names no figure; read as Fig. 12's largest E2E
# ratio over GPU (its mean reduction there, 60.20%, is a 2.51x ratio: the only latency figure near 2.57x)
E2E_MAX_OVER_GPU = _f12(
    2.57, "GPU E2E over Duplex+PE+ET's, max over the lengths", where="§I (read as Fig. 12)", ratio=True
)
# Fig. 14: Duplex over Bank-PIM on Mixtral
_f14 = claims("duplex", "§VII-C, Fig. 14", "Mixtral, (L_in, L_out) 256-4096, batch 32-64", ratio=True)
BANK_PIM_MAX, BANK_PIM_AVG = _f14(1.80, "Duplex over Bank-PIM, max"), _f14(1.49, "Duplex over Bank-PIM, mean")
# §VII-C, out-of-target models: "In Llama3 [...] Duplex performs better than Bank-PIM"; "In the case of OPT [...]
# Bank-PIM performs better than Duplex" — directions without numbers, on Fig. 14's grid
_f14x = claims("duplex", "§VII-C, Fig. 14", "(L_in, L_out) 256-4096, batch 32-64", ratio=True)
BANK_PIM_OTHER = {
    "llama3-70b": _f14x(float("nan"), "Duplex over Bank-PIM, Llama3-70B (GQA), mean", above=True),
    "opt-66b": _f14x(float("nan"), "Duplex over Bank-PIM, OPT-66B (MHA), mean", above=False),
}
# §VII-C "Bank-PIM shows up to 2.17x higher throughput than GPU in the batch size of 32 when (L_in, L_out) is
# 4096": Fig. 11's Duplex over GPU at that Mixtral cell divided by Fig. 14's Duplex over Bank-PIM there
BANK_PIM_OVER_GPU = Claim(
    2.17, "duplex", "§VII-C, Fig. 14", "Bank-PIM over GPU", "Mixtral, (4096, 4096), batch 32", ratio=True
)
BANK_PIM_CELL = ("mixtral-8x7b", (4096, 4096), 32)
# §VII-C "Duplex still achieves acceptable speedups compared to GPU in out-of-target models" (OPT, Llama3): a
# statement per model, so plain Duplex over GPU as each model's mean over its cells of Fig. 11's grid (GPU runs
# exist at batch 32 and 128 only), the lower of the two
OUT_OF_TARGET = ("opt-66b", "llama3-70b")
OUT_OF_TARGET_OVER_GPU = Claim(
    float("nan"),
    "duplex",
    "§VII-C",
    "Duplex over GPU, lower of OPT-66B's and Llama3-70B's means over their cells",
    "(L_in, L_out) 256-4096, batch 32-128 (Fig. 11's grid)",
    ratio=True,
    above=True,
)
# Fig. 15: energy reductions vs GPU, "up to" per model (the maximum over the figure's grid: the ends of its
# (L_in, L_out) range at each end of its batch range) and the mean over the three models' grid (§X)
_f15 = claims("duplex", "§VII-D, Fig. 15", "energy per token, (L_in, L_out) 256-4096, batch 32-128")
ENERGY = {
    "mixtral-8x7b": _f15(0.3328, "energy reduction, mixtral-8x7b, up to"),
    "glam-143b": _f15(0.4203, "energy reduction, glam-143b, up to"),
    "grok-1": _f15(0.3459, "energy reduction, grok-1, up to"),
}
ENERGY_AVG = _f15(0.2819, "energy reduction, mean of Mixtral, GLaM, Grok1", where="§X, Fig. 15")
# §VII-D's trends: "Duplex shows better energy efficiency in the long sequence lengths"; "energy efficiency
# deteriorates in Mixtral and Grok1 compared to GLaM as the batch size increases" (each model's reduction at
# batch 128 over its reduction at batch 32, over GLaM's, both at the mean over the lengths)
ENERGY_LONG_OVER_SHORT = _f15(
    _NAN, "energy reduction at (4096, 4096) over at (256, 256), mean over batches and models", ratio=True, above=True
)
ENERGY_BATCH_VS_GLAM = {
    m: _f15(_NAN, f"energy reduction batch 128 over 32, {m} over glam-143b", ratio=True, above=False)
    for m in ("mixtral-8x7b", "grok-1")
}
# Fig. 13: Mixtral, Poisson arrivals at 4-16 QPS, (L_in, L_out) = (4096, 512), max batch 128: the GPU saturates
# above 9 requests/s, Duplex at about 14 (§VII-B)
QPS_MODEL, QPS_LENGTHS, QPS_MAX_BATCH = "mixtral-8x7b", (4096, 512), 128
QPS_VALUES = tuple(range(4, 17))
_f13 = claims("duplex", "§VII-B, Fig. 13", "Mixtral under Poisson arrivals, (4096, 512), max batch 128")
GPU_SAT_QPS, DUPLEX_SAT_QPS = _f13(9, "GPU saturation QPS"), _f13(14, "Duplex saturation QPS")
# §VII-B's Fig. 13 statements: "Duplex always exhibits better median TBT latency than 2xGPU"; "At low QPS,
# Duplex outperforms 2xGPU in the 90th percentile of TBT latency. However, as QPS increases, Duplex shows higher
# latency"; 14 QPS "nearly equivalent to the capability of 2xGPU"; "Duplex always outperforms GPU"
FIG13_DIRECTIONS = {
    "p50 2x": _f13(_NAN, "2xGPU median TBT over Duplex+PE+ET's, lowest over QPS", ratio=True, above=True),
    "p90 low": _f13(_NAN, "2xGPU p90 TBT over Duplex+PE+ET's at the lowest QPS", ratio=True, above=True),
    "p90 high": _f13(_NAN, "2xGPU p90 TBT over Duplex+PE+ET's at the highest QPS", ratio=True, above=False),
    "p50 gpu": _f13(_NAN, "GPU median TBT over Duplex+PE+ET's, lowest over QPS", ratio=True, above=True),
}
SAT_OVER_2GPU = _f13(
    1.0,
    "Duplex saturation QPS over 2xGPU's (the paper: nearly equivalent)",
    note="both loads are whole steps of the simulated QPS sweep, each from its own system's serving runs: the two "
    "landing on the same step is a result, not the paper's 1 entered",
)
# [S] a system "handles" a QPS while its median T2FT stays within this factor of its median T2FT at 4 QPS
# (the paper: T2FT "skyrockets due to the queuing delay" past saturation)
T2FT_BLOWUP = 3.0
# Logic-die area per stack, 7 nm (§VII-E; §IV-C gives the microarchitecture only): extra TSVs, 32 GEMM
# modules (with their 8 KB buffers), the two 1 MB buffers, the softmax unit (with its 128 KB of buffers);
# 17.80 mm2 = 14.71% of the 121 mm2 HBM3 logic die
AREA_MM2 = {"tsv": 10.89, "gemm": 3.02, "buffers": 2.26, "softmax": 1.64}
LOGIC_DIE_MM2, AREA_SHARE = 121.0, 0.1471
DRAM_AREA_FACTOR = 10  # "the DRAM process 10x larger than logic" for DRAM-die PIM area (§VI)
# Fig. 8: EDAP of a 16384 x 4096 FP16 GEMM by Op/B: Logic-PIM best above 8 Op/B, Bank-PIM below
EDAP_SHAPE = (16384, 4096)
EDAP_CROSSOVER = Claim(
    8, "duplex", "§IV-E, Fig. 8", "Bank-PIM / Logic-PIM EDAP crossover, Op/B", "a 16384 x 4096 FP16 GEMM on one stack"
)
PC_BANDWIDTH = Claim(
    83.2,
    "duplex",
    "§IV-C (4x of 20.8 GB/s)",
    "bank-bundle bandwidth per pseudo-channel (GB/s)",
    "HBM3 (AttAcc's preset), one pseudo-channel",
    kind="identity",
)  # the memory engine's bank-bundle peak: arithmetic of the stated organisation, not a prediction
BANKGROUP_WORSE = Claim(
    float("nan"),
    "duplex",
    "§IV-E, Fig. 8",
    "BankGroup-PIM EDAP over Logic-PIM's, lowest over Op/B (the paper: worse at every Op/B)",
    "a 16384 x 4096 FP16 GEMM on one stack, 1-64 Op/B",
    ratio=True,
    above=True,
)
# Logic-PIM's peaks are stated in §VI ("peak FLOPS for 8 Op/B (21.3 TFLOPS per Logic-PIM stack)", so 2.66 TB/s
# at 8 Op/B; 4x HBM3's bandwidth) and fixed by its composition (§VII-E: 32 modules of 512 MACs at 650 MHz):
# inputs, shown beside the model's derivation
PEAK_TFLOPS = Claim(
    21.3, "duplex", "§VI", "Logic-PIM TFLOPS per stack", "32 modules x 512 MACs at 650 MHz", kind="input"
)
PEAK_TBS = Claim(
    2.66,
    "duplex",
    "§VI (21.3 TFLOPS at 8 Op/B)",
    "Logic-PIM TB/s per stack",
    "32 pseudo-channels of bank bundles",
    kind="input",
)
GEMM_OVER_SOFTMAX = Claim(
    AREA_MM2["gemm"] / AREA_MM2["softmax"],
    "duplex",
    "§VII-E",
    "GEMM modules : softmax unit",
    "logic-die area per stack, 7 nm (paper) vs Yosys generic cells (model)",
)
