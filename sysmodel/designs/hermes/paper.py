"""Hermes's evaluation setup and the results membound reproduces, each with its source (shared/notes/hermes.md
§6-7). [S] marks a membound choice where the paper is silent, [D] a derivation from its numbers, [EXT] an
outside public source."""

from __future__ import annotations

from sysmodel.ledger import Claim, claims

GPU = "rtx4090-hermes"  # the paper's RTX 4090 figures (§IV-A1: 936 GB/s; §V-A: 330 tensor TFLOPS FP16)
GPU_WEIGHT_BYTES = 20e9  # [D] "80% of OPT-13B" and "15% of OPT-66B" fit GPU memory (§V-B1): ~20 GB each
PCIE = "pcie4x16"  # §V-A's "64 GB/s" is PCIe 4.0 x16 counted both ways; weights stream one way (notes A20)
DIMMS = 8  # NDP-DIMMs (Table II)
DIMM_BYTES = 32e9  # per DIMM (Table II)
AREA_PER_CORE_MM2 = 1.23  # one NDP core, 7 nm (§V-E, Table II note; notes §2)
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

# Results (§V), each a ledger claim (sysmodel.ledger): paper, where, what, on what workload
_e2e = claims("hermes", "§V-B1, Fig. 9", "OPT models, batch 1, 128 in / 128 out", ratio=True)
_b16 = claims("hermes", "§V-B2, Fig. 11", "averaged over the models and batches 1-16, 128 in / 128 out", ratio=True)
TOKENS_S = {
    "llama2-70b": Claim(
        13.75, "hermes", "Abstract", "LLaMA2-70B tokens/s, batch 1", "RTX 4090 + 8 NDP-DIMMs, 128 in / 128 out"
    ),
    "opt-66b": Claim(
        20.37, "hermes", "§V-B1, Fig. 9", "OPT-66B tokens/s, batch 1", "RTX 4090 + 8 NDP-DIMMs, 128 in / 128 out"
    ),
}
OVER_ACCELERATE_B1 = _e2e(578.42, "Hermes over Accelerate, OPT mean, batch 1")
OVER_FLEXGEN_B1 = _e2e(247.25, "Hermes over FlexGen, OPT mean, batch 1")
DEJAVU_OVER_FLEXGEN_B1 = _e2e(2.12, "Deja Vu over FlexGen, OPT mean, batch 1", where="§V-B1")
HOST_OVER_ACCELERATE = _e2e(  # the sentence pairs it with FlexGen's OPT-only mean; Figs. 9 and 10 both show it
    62.00,
    "Hermes-host over Accelerate, mean, batch 1",
    where="§V-B1",
    workload="all six models, batch 1 [S: the averaging set is not named]",
)
HOST_OVER_FLEXGEN = _e2e(44.96, "Hermes-host over FlexGen, OPT mean, batch 1", where="§V-B1")
BASE_OVER_ACCELERATE = _e2e(
    53.89, "Hermes-base over Accelerate, mean, batch 1", where="§V-B1, Fig. 10", workload="all six models, batch 1"
)
OVER_BASE = _e2e(5.17, "Hermes over Hermes-base, mean", where="§V-B1, Fig. 10", workload="all six models, batch 1")
OVER_HOST_B1 = (
    _e2e(
        4.79,
        "Hermes over Hermes-host, batch 1, lowest model",
        where="§V-B1, Figs. 9-10",
        workload="all six models, batch 1",
    ),
    _e2e(
        7.75,
        "Hermes over Hermes-host, batch 1, highest model",
        where="§V-B1, Figs. 9-10",
        workload="all six models, batch 1",
    ),
)
# Directions §V-B1 states in words over Figs. 9-10's batch-1 cells, each A over B (above 1 where it holds)
OPT66_GAINS_MORE = _e2e(
    float("nan"),
    "Hermes' speedup on OPT-66B over its speedup on OPT-13B, lowest of Accelerate, FlexGen and Deja Vu, batch 1",
    above=True,
)
OPT66_OVER_BEST = _e2e(
    float("nan"), "Hermes over the fastest offloading baseline, OPT-66B, batch 1 (substantially surpasses)", above=True
)
BASE_GAIN_LARGE = _e2e(
    float("nan"),
    "Hermes over Hermes-base on Falcon-40B and LLaMA2-70B (the lower) over the 13B models' (the higher), batch 1",
    where="§V-B1, Fig. 10",
    workload="all six models, batch 1",
    above=True,
)
OVER_DEJAVU = _b16(75.24, "Hermes over Deja Vu, batch 1-16", workload="OPT models, batches 1-16")
OVER_FLEXGEN = _b16(148.98, "Hermes over FlexGen, batch 1-16", workload="OPT models, batches 1-16")
OVER_HOST = _b16(7.17, "Hermes over Hermes-host, batch 1-16")
# §V-B2's batch trends, stated without numbers (Fig. 11's bars are lost in the text): each a direction, A over B
_trend = claims("hermes", "§V-B2, Fig. 11", "six models, batches 1-16, 128 in / 128 out", ratio=True)
BATCH_RISES = _trend(
    float("nan"), "Hermes tokens/s, each batch over the one before, lowest (consistent improvement 1-16)", above=True
)
HOST_GAP_GROWS = _trend(
    float("nan"), "Hermes over Hermes-host, each batch over the one before, lowest (the gap grows)", above=True
)
BASE_GAP_LEAST_AT_2 = _trend(
    float("nan"), "Hermes over Hermes-base, any other batch over batch 2, lowest (smallest at batch 2)", above=True
)
BASE_BEATEN = _trend(
    float("nan"), "Hermes over Hermes-base, lowest cell at batches other than 2 (a significant advantage)", above=True
)
DEJAVU_BEATEN = Claim(
    float("nan"),
    "hermes",
    "§V-D, Fig. 12a",
    "Hermes over Deja Vu, lowest cell (inferior even at large batches)",
    "OPT models, batches 1-16, 128 in / 128 out",
    ratio=True,
    above=True,
)
# §V-D's shares of Hermes' run time at batch 1 (Fig. 12b): the model is not named; the sentence before is about
# LLaMA2-70B [S]. The two do not add to 1 (66.40% + 33.01%), so each is its own claim
_share = claims("hermes", "§V-D, Fig. 12b", "LLaMA2-70B [S: the model is not named], batch 1, 128 in / 128 out")
DECODE_SHARE = _share(0.664, "token generation's share of Hermes' run time")
PROMPT_SHARE = _share(0.3301, "the prompting stage's share of Hermes' run time")
_abl = claims(
    "hermes", "§V-C, Fig. 13", "MLP-block latency, LLaMA2-70B, batch 1 [S: the model is not named]", ratio=True
)
ABLATION = {
    "partition": _abl(1.63, "partition over random"),
    "adjustment": _abl(1.33, "adjustment over partition"),
    "hermes": _abl(1.29, "window remap over adjustment"),
}
POLICIES = ("random", *ABLATION)  # §V-C's ablation steps, cumulative: random placement, then each step's gain
DSE_MODEL, DSE_MULTIPLIERS = "opt-13b", (32, 64, 128, 256, 512)  # §V-E3
# [S] the most GEMV multipliers per NDP core the model takes: the DSE's largest, which the RTL GEMV unit also
# builds (golden.hermes_spec.Gemv); the timing is linear in them, so larger ones would be extrapolation
MAX_MULTIPLIERS = DSE_MULTIPLIERS[-1]
DSE_SPEEDUP = Claim(
    3.86, "hermes", "§V-E3, Fig. 16", "multipliers 32 -> 512, batch 16", "OPT-13B, batch 16", ratio=True
)
DSE_LARGER_BATCH = Claim(
    float("nan"),
    "hermes",
    "§V-E3, Fig. 16",
    "the 32 -> 512 multipliers' speedup at batch 16 over that at batch 1 (especially with larger batches)",
    "OPT-13B, batches 1 and 16",
    ratio=True,
    above=True,
)
DSE_B16_RISES = Claim(
    float("nan"),
    "hermes",
    "§V-E3, Fig. 16",
    "batch 16 tokens/s, each multiplier count over the one before, lowest (continuously improves)",
    "OPT-13B, batch 16",
    ratio=True,
    above=True,
)
DSE_SATURATES = Claim(
    64, "hermes", "§V-E3, Fig. 16", "batch 1 saturates at (multipliers, within 2%)", "OPT-13B, batch 1"
)
TRT_GPU_SHARE = claims(
    "hermes", "§V-F, Fig. 17", "LLaMA2-70B, 128 in / 128 out; TensorRT-LLM on 5 x A100-40GB", ratio=True
)
TRT_SHARE = {
    1: TRT_GPU_SHARE(0.791, "TensorRT-LLM share, batch 1"),
    16: TRT_GPU_SHARE(0.244, "TensorRT-LLM share, batch 16"),
}
# §V-E1 (Fig. 14): the DIMM counts of the sweep are not given; §V-E1 names 8 and 16, read as powers of two [inferred]
DIMM_COUNTS = (1, 2, 4, 8, 16)
MIN_DIMMS = Claim(
    4,
    "hermes",
    "§V-E1, Fig. 14",
    "NDP-DIMMs Falcon-40B needs at least (of the sweep's counts)",
    "Falcon-40B, 32 GB per DIMM, counts 1-16 in powers of two [inferred]",
    note="capacity, not a paper input: the zoo's Falcon-40B weights (its config.json) against 32 GB DIMMs; "
    "with every count allowed the model's minimum would be 3",
)
_gpus = claims(
    "hermes", "§V-E2, Fig. 15", "OPT-13B and OPT-30B, mean, batch 1 [S: the batch is not stated]", ratio=True
)
GPU_SENSITIVITY = {"t4": _gpus(2.02, "RTX 4090 over Tesla T4"), "rtx3090": _gpus(1.34, "RTX 4090 over RTX 3090")}
GPU_SENSITIVITY_MODELS = ("opt-13b", "opt-30b")
_wl = claims("hermes", "§III-B", "the generated activations, LLaMA2-70B MLP block, one sequence", kind="input")
WORKLOAD = {  # the generator's statistics: inputs it is solved from, and what its structure then predicts
    "sparsity": _wl(0.8, "sparsity", where="§II-B: 70-90%, the midpoint [S]"),
    "hot_work": _wl(0.8, "work of the top 20% of neurons", where="§I, §III-A"),
    "adjacent": _wl(0.9, "adjacent-token similarity", where="§III-B1, Fig. 4a"),
    "distance10": _wl(0.70, "similarity at distance 10 (~70%)", where="§III-B1 (text)", kind="prediction"),
    "distance25": _wl(0.70, "similarity at distance 25 (flat beyond)", where="§III-B1 (text)", kind="prediction"),
    "flat": _wl(
        1.0,
        "similarity at distance 50 over distance 25 (almost no longer decreases beyond 25)",
        where="§III-B1 (text)",
        kind="prediction",
    ),
    "dynamic_hot": _wl(0.52, "profiled hot neurons leaving the sequence's hot set"),
}
PREDICTOR_ACCURACY = Claim(
    0.98,
    "hermes",
    "§IV-C1",
    "predictor accuracy",
    "the paper's profiling (binary accuracy, notes A8); the model: LLaMA2-70B MLP layer 1, batch 1",
)
# §V-B1: the shares of two models' parameters that GPU memory holds, the facts GPU_WEIGHT_BYTES is derived from
GPU_PARAM_SHARE = {
    m: Claim(v, "hermes", "§V-B1", f"share of {name}'s parameters GPU memory holds", "RTX 4090", kind="input")
    for m, name, v in (("opt-13b", "OPT-13B", 0.8), ("opt-66b", "OPT-66B", 0.15))
}
