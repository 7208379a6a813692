"""L3's evaluation setup and the results membound reproduces, each with its source (shared/notes §1.6-1.7).
[S] marks a membound choice where the paper is silent."""

from __future__ import annotations

GPUS = 8  # DGX-A100: 8 x A100-80GB (L3 §6.1)
GPU = "a100-80g-sxm"
HOST_BYTES = 2e12  # 16 channels x 2 DIMMs, 2 TB (Table 2)
CHANNELS = 16  # one rank per channel forms a rankset (§5.1)
RANKSETS = 4  # 4 ranks per channel (§5.1: "DGX-A100 with four ranks per channel")
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
HEADLINE = {"HBM-PIM": 6.1, "GPU-only": 5.0, "R-PIM": 9.2}
BATCH_RATIO = 14.3  # L3's batch size over GPU-only's, at most
# Fig. 9 scalability, GPT-175B on OpenR1, over the base (512 GB, 2 ranksets)
SCALABILITY = {"Cap-only (4 TB)": 1.6, "Bw-only (16 ranksets)": 1.1, "Bw-Cap": 5.1}
SCALE_BASE = {"capacity": 512e9, "ranksets": 2}
SCALE_POINTS = {"Cap-only (4 TB)": (4e12, 2), "Bw-only (16 ranksets)": (512e9, 16), "Bw-Cap": (4e12, 16)}
# Fig. 10(a) ablation, GPT-175B on OpenR1: naive -> + scheduler -> + communication overlap (cumulative)
ABLATION = {"+ scheduler": 1.3, "+ overlap": 1.3 * 1.7}
TBT_16_RANKSETS = (0.29, 0.53)  # Fig. 11: TBT at 16 ranksets over GPU-only's, GPT-89B, 6K-token decodes
TBT_CONTEXT = 6144
# Table 5 (28 nm): area in um^2
AREA_UM2 = {"l3_relayout": 948, "l3_adder_unit": 3446, "l3_softmax_unit": 18506, "l3_bank_pu": 3323}
DRAM_AREA_FACTOR = 10  # Table 5's footnote: "Implementation with DRAM process would lead to 10x area overhead"
CHIP_BITS = 8 << 30  # [S] 8 Gb DDR4 chips fill the 2 TB host (for the DIMMs' background power)
HOST_LINK = "pcie4x16"  # the GPUs' links to the host (energy of the transfers)
