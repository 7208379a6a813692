"""L3's evaluation setup and the results membound reproduces, each with its source (shared/notes §1.6-1.7).
[S] marks a membound choice where the paper is silent."""

from __future__ import annotations

import math

from hw.l3.cycles import UNIT_ADDER, UNIT_BANK_PU, UNIT_RELAYOUT, UNIT_SOFTMAX
from sysmodel.ledger import Claim, claims

GPUS = 8  # DGX-A100: 8 x A100-80GB (L3 §6.1)
GPU = "a100-80g-sxm"
HOST_BYTES = 2e12  # 16 channels x 2 DIMMs, 2 TB (Table 2)
CHANNELS = 16  # one rank per channel forms a rankset (§5.1)
RANKSETS = 4  # 4 ranks per channel (§5.1: "DGX-A100 with four ranks per channel")
DIMMS_PER_CHANNEL = 2  # Table 2: "16 Channels x 2 DIMM", so 2 ranks per DIMM
CPU_BW = 406e9  # NEO-style CPU offloading baseline: host memory bandwidth (§6.1)
R_PIM_FACTOR = 1 / 8  # rank-level PUs see one rank's 25.6 GB/s bus, L3's bank PUs 204.8 GB/s (notes §1.2)
PCIE_EFFECTIVE = 25e9  # [S] PCIe 4.0 x16 per GPU, effective per direction (notes §1.8.3)
HOST_LINK_CAP = 409.6e9  # [S] what one rankset's 16 channels accept (notes §1.5, t_overlap)
REQUESTS = 1000  # requests per run (§6.1)
CHUNK_MULTIPLE = 16  # prefill chunks are multiples of 16 tokens (§5.3)

# Table 3: model -> (TP, DP) on the 8 GPUs
MODELS = {"opt-66b": (2, 4), "gpt-89b": (4, 2), "gpt3-175b": (8, 1)}
TRACES = ("openr1", "dolphin", "openthoughts", "longbench")  # Table 4

# Fig. 8 headline: the largest speedups over the traces and models
_f8 = claims("l3", "§6.2, Fig. 8", "the largest over OPT-66B, GPT-89B, GPT-175B x the four Table 4 traces", ratio=True)
HEADLINE = {
    "HBM-PIM": _f8(6.1, "speedup over HBM-PIM"),
    "GPU-only": _f8(5.0, "speedup over GPU-only"),
    "R-PIM": _f8(9.2, "speedup over R-PIM"),
}
# L3's batch size over GPU-only's, at most: stated in the introduction only ("up to 14.3x on DGX-A100")
BATCH_RATIO = _f8(14.3, "batch size over GPU-only", where="§1")
# "L3 achieves the highest throughput over all baselines with various settings": its smallest speedup over each
_every = "the smallest over the Fig. 8 cells where the baseline runs (not OOM)"
LOWEST = {
    b: _f8(math.nan, f"smallest speedup over {b}", workload=_every, above=True) for b in (*HEADLINE, "CPU offload")
}
# "L3 achieves much larger batch sizes compared to the HBM-based baselines"
BATCH_LOWEST = {
    b: _f8(math.nan, f"smallest batch size over {b}", workload=_every, above=True) for b in ("GPU-only", "HBM-PIM")
}
# "... when processing Dolphin trace on OPT-66B ... performance below conventional GPU-only implementations"
HBM_PIM_DOLPHIN = _f8(
    math.nan, "HBM-PIM over GPU-only, OPT-66B on Dolphin", workload="OPT-66B, Dolphin-r1", above=False
)
# Fig. 8's caption: "For the OPT-66B model, GPU out-of-memory (OOM) errors occurred in two traces"
OOM_TRACES = _f8(2, "GPU-only OOM traces, OPT-66B", workload="OPT-66B on the four Table 4 traces", ratio=False)
# "GPUs have only about 310 GB of memory in total after deploying the model" (GPT-175B on the 8 A100s)
GPU_KV_GB = _f8(
    310, "GPU memory left for KV after GPT-175B's weights (GB)", workload="8 x A100-80GB", ratio=False, kind="identity"
)
# §1: "2.28 requests of GPT-175B with 8k token length could consume the entire memory of one A100 (80GB)"
INTRO_TOKENS = 8000  # "8k", read as 8,000
REQUESTS_PER_A100 = Claim(
    2.28,
    "l3",
    "§1",
    "GPT-175B 8K-token requests filling one A100",
    "the KV cache of 8,000 tokens against the A100's 80 GB (the kit's device preset)",
    "identity",
)
# Fig. 9 scalability, GPT-175B on OpenR1, over the base (512 GB, 2 ranksets)
_f9 = claims("l3", "§6.2, Fig. 9", "GPT-175B on OpenR1, over the base (512 GB, 2 ranksets)", ratio=True)
SCALABILITY = {
    "Cap-only (4 TB)": _f9(1.6, "Cap-only (4 TB)"),
    "Bw-only (16 ranksets)": _f9(1.1, "Bw-only (16 ranksets)"),
    "Bw-Cap": _f9(5.1, "Bw-Cap"),
}
SCALE_BASE = {"capacity": 512e9, "ranksets": 2}
SCALE_POINTS = {"Cap-only (4 TB)": (4e12, 2), "Bw-only (16 ranksets)": (512e9, 16), "Bw-Cap": (4e12, 16)}
# Fig. 10(a) ablation, GPT-175B on OpenR1: naive -> + scheduler -> + communication overlap (cumulative)
_f10 = claims("l3", "§6.2, Fig. 10(a)", "GPT-175B on OpenR1, over the naive design", ratio=True)
ABLATION = {
    "+ scheduler": _f10(1.3, "+ scheduler"),
    "+ overlap": _f10(1.3 * 1.7, "+ overlap", where="§6.2, Fig. 10(a): 1.3 x 1.7"),
}
_f11 = claims("l3", "§6.3, Fig. 11", "GPT-89B decoding 6K-token requests, 16 ranksets, batches 16-64")
TBT_16_RANKSETS = (
    _f11(0.29, "TBT over GPU-only's at 16 ranksets, lowest"),
    _f11(0.53, "TBT over GPU-only's at 16 ranksets, highest"),
)
TBT_CONTEXT = 6144
# "L3's TBT is comparable to the GPU-only baseline even with the smallest number of ranksets" (§6.3) and "without
# sacrificing latencies (time-between-tokens)" (§1): at the fewest ranksets TBT over GPU-only's is not above 1
TBT_FEWEST = _f11(
    math.nan,
    "TBT over GPU-only's at the fewest ranksets, highest",
    workload="GPT-89B, 6K tokens, batches 16-64",
    ratio=True,
    above=False,
)
# "L3's TBT can be further reduced by increasing the number of ranksets": the most over the fewest, below 1
TBT_SCALING = _f11(
    math.nan,
    "TBT at 16 ranksets over TBT at the fewest, highest",
    workload="GPT-89B, 6K tokens, batches 16-64",
    ratio=True,
    above=False,
)
# §4.3: "Quantitative analysis of the pipeline execution proves it is bubble-free": softmax-unit stalls in score
SU_STALL = Claim(
    0.0,
    "l3",
    "§4.3",
    "softmax-unit stall fraction of score cycles",
    "one head on the rank, 16 logic banks (§6.4)",
    note="measured on the RTL rank (tb/, cocotb): the stall count comes from simulation, no input sets it",
)
# Table 5 (28 nm): area in um^2
PIM_BANDWIDTH = Claim(
    13.0,
    "l3",
    "§6.1, Table 2",
    "all-bank PIM aggregate bandwidth (TB/s)",
    "16 channels x 4 ranks of DDR4-3200 x8",
    kind="identity",
)  # the memory engine's all-bank peak: arithmetic of the stated organisation, not a prediction
AREA_UM2 = {UNIT_RELAYOUT: 948, UNIT_ADDER: 3446, UNIT_SOFTMAX: 18506, UNIT_BANK_PU: 3323}
POWER_MW = {UNIT_RELAYOUT: 0.245, UNIT_ADDER: 1.812, UNIT_SOFTMAX: 4.345, UNIT_BANK_PU: 1.129}  # Table 5
FLOPS_PER_CYCLE = {UNIT_ADDER: 8, UNIT_BANK_PU: 8}  # 8 FP16 adders; 4 multipliers + 4 adders (§6.4)
POWER = {
    u: Claim(
        POWER_MW[u],
        "l3",
        "§6.4, Table 5",
        f"{u} power (mW)",
        "28 nm synthesis; the model: the energy basis at the unit's full rate, one operation per lane per tCK",
    )
    for u in FLOPS_PER_CYCLE
}
# the same as ledger claims: each unit's area over the bank PU's (Yosys generic cells are only comparable as ratios)
AREA_RATIO = {
    u: Claim(
        a / AREA_UM2[UNIT_BANK_PU],
        "l3",
        "§6.4, Table 5",
        f"{u} area / bank PU area",
        "28 nm synthesis (paper) vs Yosys generic cells (model)",
    )
    for u, a in AREA_UM2.items()
    if u != UNIT_BANK_PU
}
DRAM_AREA_FACTOR = 10  # Table 5's footnote: "Implementation with DRAM process would lead to 10x area overhead"
CHIP_BITS = 8 << 30  # [S] 8 Gb DDR4 chips fill the 2 TB host (for the DIMMs' background power)
HOST_LINK = "pcie4x16"  # the GPUs' links to the host (energy of the transfers)
