"""Duplex's evaluation setup and the results membound reproduces, each with its source (shared/notes §2.6-2.7).
[S] marks a membound choice where the paper is silent."""

from __future__ import annotations

XPU = "h100-sxm"  # "equivalent to H100" (§VI); specs from the AttAcc simulator's H100 (notes §2.8.1)
DEVICE_BYTES = 80e9  # 80 GB per device, equal across systems (§VI)
IB_BW = 50e9  # [S] "400 GB/s Infiniband" read as 400 Gb/s per node pair per direction (notes §2.8.5)
MEMORY_SPACES = 4  # device memory split by bank-bundle index; experts dealt one by one to the spaces (§V-C)
BANK_PIM_FACTOR = 16  # Bank-PIM: 16x HBM bandwidth at 1 Op/B (§VI)
# Table I and §VI: model -> (nodes, devices per node)
SYSTEMS = {"mixtral-8x7b": (1, 4), "glam-143b": (1, 8), "grok-1": (2, 8), "opt-66b": (1, 4), "llama3-70b": (1, 4)}
LENGTHS = ((256, 256), (4096, 4096))  # the ends of Fig. 11's (L_in, L_out) range
BATCHES = (32, 128)  # Fig. 11's batch range

# Fig. 11 throughput over GPU
DUPLEX_MAX = 2.51  # best case: Mixtral (4096, 4096)
PE_OVER_DUPLEX = 1.04  # average
ET_MAX_OVER_GPU = 2.67
AVG_OVER_GPU = 2.07  # Duplex+PE+ET, average (conclusion)
# Fig. 12: GLaM, batch 64, (L_in, L_out) 512-2048: reductions vs GPU and 2xGPU
GLAM_BATCH, GLAM_LENGTHS = 64, ((512, 512), (2048, 2048))
TBT_P50_VS_GPU = 0.583
E2E_VS_GPU, E2E_VS_2GPU = 0.6020, 0.3538
# Fig. 14: Duplex over Bank-PIM on Mixtral
BANK_PIM_MAX, BANK_PIM_AVG = 1.80, 1.49
# Fig. 15: energy reductions vs GPU
ENERGY = {"mixtral-8x7b": 0.3328, "glam-143b": 0.4203, "grok-1": 0.3459}
ENERGY_AVG = 0.2819
# Fig. 13: Mixtral, Poisson arrivals at 4-16 QPS, (L_in, L_out) = (4096, 512), max batch 128: the GPU saturates
# above 9 requests/s, Duplex at about 14 (§VII-B)
QPS_MODEL, QPS_LENGTHS, QPS_MAX_BATCH = "mixtral-8x7b", (4096, 512), 128
QPS_VALUES = tuple(range(4, 17))
GPU_SAT_QPS, DUPLEX_SAT_QPS = 9, 14
# [S] a system "handles" a QPS while its median T2FT stays within this factor of its median T2FT at 4 QPS
# (the paper: T2FT "skyrockets due to the queuing delay" past saturation)
T2FT_BLOWUP = 3.0
# Logic-die area per stack, 7 nm (§IV-C): extra TSVs, 32 GEMM modules (with their 8 KB buffers), the two 1 MB
# buffers, the softmax unit (with its 128 KB of buffers); 17.80 mm2 = 14.71% of the 121 mm2 HBM3 logic die
AREA_MM2 = {"tsv": 10.89, "gemm": 3.02, "buffers": 2.26, "softmax": 1.64}
LOGIC_DIE_MM2, AREA_SHARE = 121.0, 0.1471
DRAM_AREA_FACTOR = 10  # "the DRAM process 10x larger than logic" for DRAM-die PIM area (§VI)
# Fig. 8: EDAP of a 16384 x 4096 FP16 GEMM by Op/B: Logic-PIM best above 8 Op/B, Bank-PIM below
EDAP_SHAPE, EDAP_CROSSOVER = (16384, 4096), 8
