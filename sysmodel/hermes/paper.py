"""Hermes's evaluation setup and the results membound reproduces, each with its source (shared/notes/hermes.md
§6-7). [S] marks a membound choice where the paper is silent, [D] a derivation from its numbers, [EXT] an
outside public source."""

from __future__ import annotations

GPU = "rtx4090-hermes"  # the paper's RTX 4090 figures (§IV-A1: 936 GB/s; §V-A: 330 tensor TFLOPS FP16)
GPU_WEIGHT_BYTES = 20e9  # [D] "80% of OPT-13B" and "15% of OPT-66B" fit GPU memory (§V-B1): ~20 GB each
PCIE = "pcie4x16"  # §V-A's "64 GB/s" is PCIe 4.0 x16 counted both ways; weights stream one way (notes A20)
DIMMS = 8  # NDP-DIMMs (Table II)
DIMM_BYTES = 32e9  # per DIMM (Table II)
T_SYNC = 10e-6  # [S] one GPU<->DIMM synchronisation: launch, PCIe round trip, barrier (notes A13)
WINDOW = 5  # tokens per remapping window (§IV-D)
HOST_BW = 89.6e9  # Hermes-host: i9-13900K DRAM bandwidth (§III-A)
HOST_BYTES = 192e9  # [EXT] i9-13900K: at most 192 GB of DDR5 (Intel ARK)
HOST_FLOPS = 1.38e12  # [EXT] i9-13900K: 8 P-cores x 2 AVX2 FMA x 8 FP32 x 2 FLOP x 5.4 GHz (Intel ARK turbo)
DEJAVU_PREDICTOR = 0.181  # Deja Vu's MLP predictor: 18.1% of computation time (§V-D)
TRT_GPU, TRT_GPUS = "a100-40g-sxm", 5  # TensorRT-LLM on 5 x A100-40GB (§V-F)
L_IN, L_OUT = 128, 128  # input and output tokens (§V-A4)
BATCHES = (1, 2, 4, 8, 16)  # §V-B2 "batch 1-16" [inferred powers of two, notes A22]
MODELS = ("opt-13b", "opt-30b", "opt-66b", "llama2-13b", "llama2-70b", "falcon-40b")  # §V-A3
OPT_MODELS = ("opt-13b", "opt-30b", "opt-66b")  # FlexGen and Deja Vu support OPT only (§V-B)
SIM_LAYERS = 2  # [S] layers simulated per model (the generator's layers are statistically identical)

# Results (§V)
TOKENS_S = {"llama2-70b": 13.75, "opt-66b": 20.37}  # batch 1 (abstract, §V-B1)
OVER_DEJAVU, OVER_FLEXGEN = 75.24, 148.98  # average speedups over batch 1-16 (§V-B2)
OVER_HOST = 7.17  # Hermes over Hermes-host, batch 1-16 average (§V-B2)
OVER_BASE = 5.17  # Hermes over Hermes-base, average (§V-B1)
ABLATION = {"partition": 1.63, "adjustment": 1.33, "hermes": 1.29}  # MLP-block latency, step over step (§V-C)
DSE_MODEL, DSE_MULTIPLIERS, DSE_SPEEDUP = "opt-13b", (32, 64, 128, 256, 512), 3.86  # batch 16, 32 -> 512 (§V-E3)
DSE_SATURATES = 64  # batch 1 saturates at 64 multipliers
TRT_SHARE = {1: 0.791, 16: 0.244}  # Hermes's throughput over TensorRT-LLM's, LLaMA2-70B (§V-F)
PREDICTOR_ACCURACY = 0.98  # §IV-C1
