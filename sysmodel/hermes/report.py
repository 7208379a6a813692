"""The Hermes section of `membound report`: derived inputs, the workload's statistics against the paper's,
the predictor, the ILP against its decomposition and a greedy split, tokens/s per model and batch against
the baselines, the ablation, the multiplier sweep and TensorRT-LLM, each result with the paper's value,
the model's and their ratio."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np

from golden import hermes_spec as hs
from sysmodel import characterization, results
from sysmodel.cost import Infeasible
from sysmodel.hermes import model as hm
from sysmodel.hermes import paper
from sysmodel.hermes import scheduler as sch
from sysmodel.hermes import workload as wl
from sysmodel.hermes.grids import ablation, dse, gpus, runs, trace
from sysmodel.models import load_model
from sysmodel.plots import pyplot, save
from sysmodel.report import caption
from sysmodel.results import area_extrapolate, head

_PROMPT = (
    "the prompt streams the 118 GB not resident on the GPU over PCIe at 32 GB/s per direction (notes A20): 3.7 s, "
    "against the 3.07 s the paper's 33% implies (~38 GB/s effective)"
)
# The named modelling difference behind each result more than 10% off the paper's
GAPS = {
    "OPT-66B tokens/s, batch 1": "the prompt (3.5 s of PCIe streaming at 32 GB/s per direction, A20) is 40% of "
    "the model's run; at the paper's 64 GB/s it would be 1.7 s (OPT-66B's share of "
    "prefill time is not given; the 66.4% decode share is quoted for one model)",
    "over Deja Vu, batch 1-16": "the model's Deja Vu moves only predicted-active offloaded neurons at the full "
    "PCIe rate; the paper measured the real system, whose communication is 89% of "
    "its time (§V-D); the ratio implies its effective PCIe bandwidth (row below)",
    "over FlexGen, batch 1-16": "the model's FlexGen streams offloaded weights at the full PCIe rate, overlapped; "
    "the paper measured the real system; the ratio implies its effective bandwidth",
    "over Hermes-host, batch 1-16": "the host's cold part is memory-bound at 89.6 GB/s and at batch 16 compute-bound "
    "at the [EXT] AVX2 peak; PowerInfer's real kernels are slower than both",
    "over Hermes-host, batch 1, lowest model": "same as over Hermes-host, batch 1-16: the host's cold part at "
    "89.6 GB/s is only 2-4x slower than 8 DIMMs' in the model",
    "over Hermes-host, batch 1, highest model": "same as over Hermes-host, batch 1-16",
    "token generation's share of the run, LLaMA2-70B batch 1": _PROMPT,
    "prompting's share of the run, LLaMA2-70B batch 1": _PROMPT,
    "RTX 4090 over RTX 3090": "the two GPUs as the paper prints them have the same 936 GB/s; the model's decode is "
    "bandwidth-bound on the GPU part and the DIMMs, and the prompt is bound by the PCIe "
    "weight stream, so the 3090's 142 vs 330 tensor TOPS do not show",
    "over Hermes-base, mean": "Hermes-base runs whole layers dense at the roofline; the paper's 5.17x also "
    "includes its measured GPU kernels",
    "partition over random": "the generator's layers are statistically alike and a random mapping already "
    "spreads cold neurons evenly; only the GPU slots' choice differs",
    "adjustment over partition": "the generator's drift (52% of the hot set, A7 oracle states) is uniform "
    "over neurons; the paper's gain depends on how real hot sets move",
    "window remap over adjustment": "LPT on the profile already balances the DIMMs within a few percent "
    "(the paper reports 1.2-2.5x imbalance of a fixed mapping, §III-C)",
    "TensorRT-LLM share, batch 1": "TensorRT-LLM is a tensor-parallel roofline over 5 A100s (AttAcc "
    "efficiency); LLaMA2-70B's 64 heads do not split 5 ways, so the real run "
    "used another partition, which the paper does not give",
    "TensorRT-LLM share, batch 16": "same; and the model's Hermes at batch 16 is compute-bound on the GEMV "
    "unit (c_mul measured 12)",
    "multipliers 32 -> 512, batch 16": "OPT-13B keeps 80% of its weights on the GPU; the DIMMs' share of the "
    "token is small, so the GEMV rate moves little",
    "batch 16 rises with every multiplier step": "the offline partition is re-solved at each multiplier count: "
    "as a DIMM's GEMV gets faster it moves more neurons onto the DIMMs, but it weighs them by the profile's "
    "per-sequence frequencies (Eqs. 1-5) while at batch 16 a DIMM computes the batch's union of active neurons, "
    "so one count's split can be slower than the smaller count's (the batch-16 curve in the table above)",
    "batch 1 saturates at (multipliers, within 2%)": "64 multipliers at the measured c_mul 12 give 42.7 GMAC/s, "
    "under a DIMM's 48.9 G weights/s; saturating at 64 needs "
    "c_mul <= 10.5 (notes §3.1)",
    "predictor accuracy": "the generator's tokens change 10% of their active neurons (adjacent similarity "
    "0.9), which bounds any history-based predictor; the literal rule (row below) "
    "never predicts a neuron whose two correlated neurons are idle (notes A4)",
}


def self_row(gaps: dict[str, str]):
    """A row maker over ``gaps`` (the module's GAPS plus causes computed at report time)."""
    return lambda name, want, got, fmt=".2f": results.row(gaps, name, want, got, fmt)


_row = self_row(GAPS)


def setup_lines() -> list[str]:
    hw = hm.Hardware()
    lines = [
        "Derived inputs (not assumed): one NDP-DIMM's bandwidth from the memory engine (rank-level mode, "
        "Hermes DDR4 preset, streaming with refresh); the GEMV rate from the bit-serial multiplier's "
        "measured initiation interval.",
        "",
        caption("Hermes' derived inputs: what the model computes from the memory engine and the measured RTL"),
        "| input | value | source |",
        "| --- | ---: | --- |",
        f"| NDP-DIMM internal bandwidth | {hw.dimm_bw / 1e9:.1f} GB/s | sysmodel.memory, 4 ranks x 25.6 GB/s "
        "peak (notes §2.3) |",
        f"| c_mul (cycles per GEMV operation: 8 products per multiplier) | {hm.c_mul():g} | measured, "
        "hermes_gemv at 256 x 8 |",
        f"| softmax over 4096 scores | {hm.softmax_cycles(4096):.0f} cycles | the activation unit's cycle model "
        "at 256 lanes, asserted by its testbenches at 4 and 256 lanes |",
        f"| GEMV rate per DIMM | {hw.dimm_macs / 1e9:.1f} GMAC/s | {hw.multipliers} multipliers x 8 / c_mul at 1 GHz |",
        f"| GPU | {hw.gpu} | sysmodel.devices |",
        f"| PCIe | {hw.pcie.bw / 1e9:.0f} GB/s per direction | notes A20 |",
        f"| T_sync | {hw.sync_s * 1e6:.0f} us | [S] notes A13 |",
    ]
    for m in paper.MODELS:
        cfg = load_model(m)
        lines.append(
            f"| {m}: weights / GPU hot-neuron budget | {cfg.weight_bytes() / 1e9:.0f} / "
            f"{hm.hot_budget(cfg, hw) / 1e9:.1f} GB | budget = 20 GB - W_O - LM head (A16) |"
        )
    return lines


def min_dimms(model: str, counts: tuple[int, ...] = paper.DIMM_COUNTS) -> int:
    """The fewest NDP-DIMMs of ``counts`` that hold ``model``'s weights (the model's own check, require_dimms)."""
    cfg, hw = load_model(model), hm.Hardware()
    for k in counts:
        try:
            hm.require_dimms(cfg, replace(hw, dimms=k))
        except Infeasible:
            continue
        return k
    raise ValueError(f"counts: {model} fits none of {counts} NDP-DIMMs")


def capacity_lines() -> list[str]:
    """What fits where: the shares of OPT-13B and OPT-66B the GPU's weight budget holds (§V-B1, the facts the
    budget is derived from: inputs) and the fewest DIMMs Falcon-40B needs (§V-E1)."""
    return [
        *head("Capacity statements, paper vs model: the GPU's share of each model, the DIMMs a model needs"),
        *[
            _row(c.quantity, c, paper.GPU_WEIGHT_BYTES / load_model(m).weight_bytes())
            for m, c in paper.GPU_PARAM_SHARE.items()
        ],
        _row("NDP-DIMMs Falcon-40B needs at least", paper.MIN_DIMMS, min_dimms("falcon-40b"), ".0f"),
    ]


def workload_lines() -> list[str]:
    st, tr, w = wl.stats_for("llama2-70b"), trace("llama2-70b", 1), paper.WORKLOAD
    a = tr.acts[(1, "mlp")][0]
    f = np.sort(a.mean(axis=0))[::-1]

    def sim(k: int) -> float:
        return float(((a[k:] & a[:-k]).sum(1) / np.maximum(a[k:].sum(1), 1)).mean())

    top = set(np.argsort(-tr.freq[(1, "mlp")])[: len(f) // 5])
    seq = set(np.argsort(-a.mean(axis=0))[: len(f) // 5])
    s = wl.solve(st)
    return [
        "Generated activations (LLaMA2-70B shapes, MLP block, one sequence): the generator's parameters "
        f"are solved from the paper's statistics (mu {s.mu:.2f}, sigma {s.sigma:.2f}, drift {s.drift:.2f}, "
        f"AR {s.ar:.3f}, layer coupling {s.coupling} [S]; sysmodel/hermes/workload.py).",
        "",
        *head(
            "The generated activations' statistics against the paper's (LLaMA2-70B MLP block, one sequence; "
            "inputs of the generator, shown as a check, not a prediction)"
        ),
        _row("sparsity", w["sparsity"], 1 - float(a.mean())),
        _row("work of the top 20% of neurons", w["hot_work"], float(f[: len(f) // 5].sum() / f.sum())),
        _row("adjacent-token similarity", w["adjacent"], sim(1)),
        _row("similarity at distance 10 (~70%)", w["distance10"], sim(10)),
        _row("similarity at distance 25 (flat beyond)", w["distance25"], sim(25)),
        _row("similarity at distance 50 over distance 25", w["flat"], sim(50) / sim(25)),
        _row("profiled hot neurons leaving the sequence's hot set", w["dynamic_hot"], 1 - len(top & seq) / len(top)),
    ]


def predictor_lines() -> list[str]:
    tr = trace("llama2-70b", 1)
    rows = {
        r: sch.predictor_accuracy(tr.acts[(0, "mlp")], tr.acts[(1, "mlp")], tr.parents[(1, "mlp")], tr.prefill, r)
        for r in sch.RULES
    }
    best = rows["state-or-correlation"]
    lines = [
        "Predictor (state table + top-2 correlation, golden.hermes), LLaMA2-70B MLP layer 1, batch 1. "
        "Timing uses `state-or-correlation` [S].",
        "",
        *head("The activation predictor's accuracy, paper vs model (LLaMA2-70B MLP layer 1, batch 1)"),
        _row("predictor accuracy", paper.PREDICTOR_ACCURACY, best.accuracy, ".3f"),
        "",
        caption("Each prediction rule's accuracy, recall and precision on the same tokens"),
        "| rule | accuracy | recall | precision |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [f"| {r} | {a.accuracy:.3f} | {a.recall:.3f} | {a.precision:.3f} |" for r, a in rows.items()]
    return lines


def _proven(result: tuple[list[sch.Placement], bool]) -> list[sch.Placement]:
    maps, optimal = result
    if not optimal:
        raise RuntimeError("exact ILP: HiGHS hit its time limit on the toy; shrink it")
    return maps


def ilp_lines() -> list[str]:
    """The exact ILP against its decomposition and the greedy split: a toy model (exact is feasible) and
    LLaMA2-70B's two simulated layers (decomposed vs greedy), objective = Eq. 1 on the profile."""
    cfg, hw = load_model("llama2-70b"), hm.Hardware()
    rng = np.random.default_rng(3)
    toy_f = [wl.profile_freq(rng.standard_normal(16), wl.solve(wl.ActivationStats())) for _ in range(4)]
    toy_c = [sch.Costs(1.0, 8.0, 1.0, 0.5) for _ in toy_f]
    lines = [
        "Offline partition (Eqs. 1-7 with the assignment constraint, HiGHS via scipy.optimize.milp). Objective: "
        "sum over (layer, block) of max(T_GPU, slowest DIMM) on the profile frequencies.",
        "",
        caption(
            "The offline partition's objective and solve time: exact ILP, its decomposition and a greedy "
            "split, on a toy and on LLaMA2-70B's simulated layers"
        ),
        "| case | method | objective | vs exact / decomposed | solve s |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    ref = None
    for name, fn in (
        ("exact", lambda: _proven(sch.exact_ilp(toy_f, toy_c, 20.0, 1e9, 2))),
        ("decomposed", lambda: sch.decomposed_ilp(toy_f, toy_c, 20.0, 2)),
        ("greedy", lambda: sch.greedy(toy_f, toy_c, 20.0, 2)),
    ):
        t = time.perf_counter()
        maps = fn()
        secs = time.perf_counter() - t
        obj = sum(sch.layer_time(c, f, p, 2) for f, c, p in zip(toy_f, toy_c, maps, strict=True))
        ref = ref or obj
        lines.append(
            f"| toy: 4 x 16 neurons, 2 DIMMs, GPU 20 neurons | {name} | {obj:.3f} | {obj / ref:.3f} | {secs:.2f} |"
        )
    tr = trace("llama2-70b", 1)
    keys = sorted(tr.freq)
    fs = [tr.freq[k] for k in keys]
    cs = [hm.costs(cfg, hw, 1, k[1]) for k in keys]
    budget = hm.hot_budget(cfg, hw) * tr.sim_layers / cfg.layers
    ref = None
    solvers: dict[str, Callable[..., list[sch.Placement]]] = {"decomposed": sch.decomposed_ilp, "greedy": sch.greedy}
    for name, fn in solvers.items():
        t = time.perf_counter()
        maps = fn(fs, cs, budget, hw.dimms)
        secs = time.perf_counter() - t
        obj = sum(sch.layer_time(c, f, p, hw.dimms) for f, c, p in zip(fs, cs, maps, strict=True)) * 1e3
        ref = ref or obj
        lines.append(
            f"| LLaMA2-70B, {tr.sim_layers} layers x (8192 + 28672) neurons, 8 DIMMs | {name} | "
            f"{obj:.3f} ms | {obj / ref:.3f} | {secs:.2f} |"
        )
    return lines


def _mean(
    rows: list[dict],
    other: str,
    models: tuple[str, ...] = paper.MODELS,
    of: str = "Hermes",
    batches: tuple[int, ...] | None = None,
) -> float:
    """Mean over the rows (models, batches) of ``of``'s tokens/s over ``other``'s."""
    return float(
        np.mean(
            [
                r[of] / r[other]
                for r in rows
                if r["model"] in models and other in r and of in r and (batches is None or r["batch"] in batches)
            ]
        )
    )


def implied_bw(rows: list[dict], name: str, ratio: float) -> float:
    """The PCIe bandwidth at which the model's baseline would give the paper's average speedup: its
    transfer time scaled by (model ratio / paper ratio), everything else kept."""
    return hm.Hardware().pcie.bw * _mean(rows, name, paper.OPT_MODELS) / ratio


def _tokens_table(rows: list[dict], names: list[str]) -> list[str]:
    """The tokens/s table: one row per model and batch, one column per system."""
    lines = [
        f"End-to-end tokens/s (B x {paper.L_OUT} / (prompt + decode), {paper.L_IN} in / {paper.L_OUT} out, "
        "§V-A4); FlexGen and Deja Vu on the OPT models only, as in the paper.",
        "",
        caption(f"Tokens/s of Hermes and its baselines per model and batch, {paper.L_IN} in / {paper.L_OUT} out"),
        "| model | batch | " + " | ".join(names) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in names) + " |",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['batch']} | " + " | ".join(f"{r[n]:.2f}" if n in r else "-" for n in names) + " |"
        )
    return lines


def _headline_row(rows: list[dict]) -> Callable:
    """:func:`self_row` with the reasons of the baselines' gaps: the effective PCIe bandwidth the
    paper's measured speedups imply."""
    opt, one = paper.OPT_MODELS, (1,)
    pcie = hm.Hardware().pcie.bw / 1e9
    acc_bw = pcie * _mean(rows, "Accelerate", opt, batches=one) / paper.OVER_ACCELERATE_B1
    flex_bw = pcie * _mean(rows, "FlexGen", opt, batches=one) / paper.OVER_FLEXGEN_B1
    accelerate = (
        f"the model's Accelerate streams the offloaded weights at the full {pcie:.0f} GB/s of PCIe; the "
        f"paper's measured speedup implies about {acc_bw:.1f} GB/s effective (pageable copies, no overlap), "
        "so the model's Accelerate is several times too fast"
    )
    flexgen = (
        f"the model's FlexGen streams at the full {pcie:.0f} GB/s, overlapped; the paper's measured speedup "
        f"implies about {flex_bw:.1f} GB/s effective"
    )
    return self_row(
        {
            **GAPS,
            "over Accelerate, OPT, batch 1": accelerate,
            "over FlexGen, OPT, batch 1": flexgen,
            "Deja Vu over FlexGen, OPT, batch 1": "the model's Deja Vu moves only predicted-active neurons at "
            "the full PCIe rate (the paper's spends 89% of its time communicating, §V-D); with FlexGen also "
            "at the full rate the ratio is the sparse share of the bytes, twice the paper's",
            "Hermes-host over Accelerate, batch 1": accelerate,
            "Hermes-host over FlexGen, OPT, batch 1": flexgen,
            "Hermes-base over Accelerate, batch 1": accelerate,
        }
    )


def _headline_lines(rows: list[dict]) -> list[str]:
    """Hermes' headline tokens/s and its average speedups over the baselines, paper vs model."""
    b1 = {r["model"]: r for r in rows if r["batch"] == 1}
    opt, one = paper.OPT_MODELS, (1,)
    _row = _headline_row(rows)
    host_b1 = [b1[m]["Hermes"] / b1[m]["Hermes-host"] for m in b1]
    return [
        "",
        *head("Hermes' headline tokens/s and its average speedups over the baselines, paper vs model"),
        _row("LLaMA2-70B tokens/s, batch 1", paper.TOKENS_S["llama2-70b"], b1["llama2-70b"]["Hermes"]),
        _row("OPT-66B tokens/s, batch 1", paper.TOKENS_S["opt-66b"], b1["opt-66b"]["Hermes"]),
        _row("over Accelerate, OPT, batch 1", paper.OVER_ACCELERATE_B1, _mean(rows, "Accelerate", opt, batches=one)),
        _row("over FlexGen, OPT, batch 1", paper.OVER_FLEXGEN_B1, _mean(rows, "FlexGen", opt, batches=one)),
        _row(
            "Deja Vu over FlexGen, OPT, batch 1",
            paper.DEJAVU_OVER_FLEXGEN_B1,
            _mean(rows, "FlexGen", opt, "Deja Vu", one),
        ),
        _row(
            "Hermes-host over Accelerate, batch 1",
            paper.HOST_OVER_ACCELERATE,
            _mean(rows, "Accelerate", of="Hermes-host", batches=one),
        ),
        _row(
            "Hermes-host over FlexGen, OPT, batch 1",
            paper.HOST_OVER_FLEXGEN,
            _mean(rows, "FlexGen", opt, "Hermes-host", one),
        ),
        _row(
            "Hermes-base over Accelerate, batch 1",
            paper.BASE_OVER_ACCELERATE,
            _mean(rows, "Accelerate", of="Hermes-base", batches=one),
        ),
        _row("over Hermes-base, mean", paper.OVER_BASE, _mean(rows, "Hermes-base", batches=one)),
        _row("over Hermes-host, batch 1, lowest model", paper.OVER_HOST_B1[0], min(host_b1)),
        _row("over Hermes-host, batch 1, highest model", paper.OVER_HOST_B1[1], max(host_b1)),
        _row("over Deja Vu, batch 1-16", paper.OVER_DEJAVU, _mean(rows, "Deja Vu", opt)),
        _row("over FlexGen, batch 1-16", paper.OVER_FLEXGEN, _mean(rows, "FlexGen", opt)),
        _row("over Hermes-host, batch 1-16", paper.OVER_HOST, _mean(rows, "Hermes-host")),
        "",
        f"Implied effective PCIe bandwidth of the paper's measured baselines [D]: FlexGen "
        f"{implied_bw(rows, 'FlexGen', paper.OVER_FLEXGEN) / 1e9:.1f} GB/s, Deja Vu "
        f"{implied_bw(rows, 'Deja Vu', paper.OVER_DEJAVU) / 1e9:.1f} GB/s (model: 32 GB/s); an upper "
        "bound, as the baselines' compute is kept.",
    ]


def throughput_lines(rows: list[dict], out: Path) -> list[str]:
    names = ["Hermes", "Hermes-host", *hm.BASELINES]
    lines = [*_tokens_table(rows, names), *_headline_lines(rows)]
    plot_throughput(rows, names, out / "hermes_tokens.png")
    return lines + ["", "![Hermes tokens/s](hermes_tokens.png)", "", *trend_lines(rows), "", *cell_lines(rows)]


def trend_lines(rows: list[dict]) -> list[str]:
    """§V-B2's batch trends, directions the paper states without numbers: Hermes' tokens/s rising with every
    batch, its gap over Hermes-host growing, its gap over Hermes-base smallest at batch 2. Each is the lowest
    ratio of its kind over the grid, above 1 when the paper's statement holds everywhere."""
    by = {(r["model"], r["batch"]): r for r in rows}
    models = list(dict.fromkeys(r["model"] for r in rows))
    batches = sorted({r["batch"] for r in rows})

    def lowest_step(f: Callable[[dict], float]) -> float:  # f at each batch over f at the batch before
        return min(f(by[m, b]) / f(by[m, a]) for m in models for a, b in pairwise(batches))

    base = {b: float(np.mean([by[m, b]["Hermes"] / by[m, b]["Hermes-base"] for m in models])) for b in batches}
    hw, big = hm.Hardware(), "llama2-70b"
    knee = 2 * hw.dimm_macs / hw.dimm_bw  # batch past which one DIMM's GEMV unit is compute-bound
    cold = ", ".join(f"{by[big, b]['cold GB/step']:.0f} GB at batch {b}" for b in batches)
    step = ", ".join(f"{by[big, b]['Hermes']:.1f}" for b in batches)
    cause = (
        f"the batch's union of active cold neurons grows toward dense (the generator's sequences share each "
        f"neuron's propensity but draw their tokens' activations independently; LLaMA2-70B's cold weights per "
        f"decode step: {cold}), and past batch {knee:.1f} each "
        f"DIMM is compute-bound ({hw.dimm_macs / 1e9:.1f} G MAC/s: {hw.multipliers} bit-serial multipliers x "
        f"{hs.MUL_LANES} lanes at the RTL's measured {hm.c_mul():.0f} cycles per product, against "
        f"{hw.dimm_bw / 1e9:.1f} GB/s of streaming), so a step's cold work grows with the batch "
        f"(LLaMA2-70B tokens/s {step})"
    )
    gaps = {
        "tokens/s rises with every batch": cause,
        "gap over Hermes-host grows with the batch": f"{cause}; the host's cold part turns compute-bound too, at "
        f"the [EXT] AVX2 peak ({paper.HOST_FLOPS / 1e12:.2f} TFLOPS), so at batch 16 the gap is the two compute "
        "rates' ratio",
        "gap over Hermes-base least at batch 2": f"{cause}: Hermes' sparse work approaches Hermes-base's dense "
        "work as the batch grows, so the gap narrows at every batch",
    }
    _row = self_row(gaps)
    return [
        *head("§V-B2's batch trends (Fig. 11), directions the paper states in words: lowest ratio over the grid"),
        _row("tokens/s rises with every batch", paper.BATCH_RISES, lowest_step(lambda r: r["Hermes"])),
        _row(
            "gap over Hermes-host grows with the batch",
            paper.HOST_GAP_GROWS,
            lowest_step(lambda r: r["Hermes"] / r["Hermes-host"]),
        ),
        _row(
            "gap over Hermes-base least at batch 2",
            paper.BASE_GAP_LEAST_AT_2,
            min(base[b] for b in batches if b != 2) / base[2],
        ),
    ]


_LARGE, _SMALL = ("falcon-40b", "llama2-70b"), ("opt-13b", "llama2-13b")  # §V-B1's large models; the 13B ones


def base_size_cause(by: dict[tuple[str, int], dict]) -> str:
    """Why the model's gap over Hermes-base is not larger on the large models: the two systems' shared prompt
    and, in decode alone, the generator's sparsity per family (both from the batch-1 cells)."""

    def decode_over_base(m: str) -> float:  # Hermes-base's decode time over Hermes', the same prompt removed
        r = by[m, 1]
        t = paper.L_OUT / r["Hermes"]
        prompt = (1 - r["decode share"]) * t
        return (paper.L_OUT / r["Hermes-base"] - prompt) / (t - prompt)

    prompt = ", ".join(f"{m} {1 - by[m, 1]['decode share']:.0%}" for m in (*_LARGE, *_SMALL))
    decode = ", ".join(f"{m} {decode_over_base(m):.2f}" for m in (*_LARGE, *_SMALL))
    return (
        "both systems run the same prompt (the non-resident weights streamed over PCIe, model.prefill_time), a "
        f"larger share of a large model's run (Hermes' prompt share at batch 1: {prompt}), which pulls the "
        f"large models' end-to-end ratio toward 1; in decode alone the ratios are {decode}, where the generator "
        "gives OPT's native ReLU 90% sparsity against 80% for the ReLU-fied models [S] (workload.FAMILY_STATS), "
        "which favours OPT-13B"
    )


def cell_lines(rows: list[dict]) -> list[str]:
    """§V-B1's and §V-D's statements over single cells of Figs. 9-12: directions stated in words (each A over B,
    the least favourable cell of the set the sentence names) and Fig. 12's shares of the run at batch 1."""
    by = {(r["model"], r["batch"]): r for r in rows}
    offload = ("Accelerate", "FlexGen", "Deja Vu")

    def over(m: str, other: str, b: int = 1) -> float:
        return by[m, b]["Hermes"] / by[m, b][other]

    base_large = min(over(m, "Hermes-base") for m in _LARGE)
    base_small = max(over(m, "Hermes-base") for m in _SMALL)
    decode = by["llama2-70b", 1]["decode share"]
    _row = self_row({**GAPS, "Hermes-base gap, large models over 13B models": base_size_cause(by)})
    return [
        *head("Statements over single cells of Figs. 9-12, paper vs model: directions stated in words, and shares"),
        _row(
            "OPT-66B's gain over OPT-13B's, lowest baseline",
            paper.OPT66_GAINS_MORE,
            min(over("opt-66b", x) / over("opt-13b", x) for x in offload),
        ),
        _row(
            "over the fastest baseline, OPT-66B, batch 1",
            paper.OPT66_OVER_BEST,
            by["opt-66b", 1]["Hermes"] / max(by["opt-66b", 1][x] for x in offload),
        ),
        _row("Hermes-base gap, large models over 13B models", paper.BASE_GAIN_LARGE, base_large / base_small),
        _row(
            "over Hermes-base, lowest cell off batch 2",
            paper.BASE_BEATEN,
            min(r["Hermes"] / r["Hermes-base"] for r in rows if r["batch"] != 2),
        ),
        _row(
            "over Deja Vu, lowest cell",
            paper.DEJAVU_BEATEN,
            min(r["Hermes"] / r["Deja Vu"] for r in rows if "Deja Vu" in r),
        ),
        _row("token generation's share of the run, LLaMA2-70B batch 1", paper.DECODE_SHARE, decode, ".3f"),
        _row("prompting's share of the run, LLaMA2-70B batch 1", paper.PROMPT_SHARE, 1 - decode, ".3f"),
    ]


def plot_throughput(rows: list[dict], names: list[str], path: Path) -> Path:
    """§V-B (Figs. 9-10 style): tokens/s against batch, one panel per model, a line per system."""
    plt = pyplot()
    models = list(dict.fromkeys(r["model"] for r in rows))
    cols = min(3, len(models))
    fig, axes = plt.subplots(
        -(-len(models) // cols), cols, figsize=(4.4 * cols, 3.4 * -(-len(models) // cols)), squeeze=False, sharey=True
    )
    for ax, model in zip(axes.flat, models, strict=False):
        pts = [r for r in rows if r["model"] == model]
        for i, n in enumerate(names):
            xs = [r["batch"] for r in pts if n in r]
            if xs:
                ax.plot(xs, [r[n] for r in pts if n in r], marker="os^v<>D"[i % 7], label=n, color=f"C{i}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(model, fontsize=10)
        ax.set_xlabel("batch (sequences)")
        ax.grid(True, which="both", lw=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("output tokens/s")
    for ax in axes.flat[len(models) :]:
        ax.set_visible(False)
    seen: dict = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, h)
    fig.legend(
        list(seen.values()), list(seen), loc="lower center", ncol=len(seen), fontsize=8, bbox_to_anchor=(0.5, -0.02)
    )
    fig.suptitle(f"Hermes §V-B (model): end-to-end tokens/s, {paper.L_IN} in / {paper.L_OUT} out")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return save(fig, plt, path)


def ablation_lines(mlp: dict[str, float], out: Path) -> list[str]:
    names = {
        "partition": "partition over random",
        "adjustment": "adjustment over partition",
        "hermes": "window remap over adjustment",
    }
    lines = [
        "Ablation (§V-C): MLP-block latency per step, LLaMA2-70B batch 1 [S: the paper's model for Fig. 13 is "
        "not named].",
        "",
        *head("The ablation's step-over-step MLP-block speedups, paper vs model (LLaMA2-70B, batch 1)"),
    ]
    for prev, cur in zip(hm.POLICIES, hm.POLICIES[1:], strict=False):
        lines.append(_row(names[cur], paper.ABLATION[cur], mlp[prev] / mlp[cur]))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.bar(list(mlp), [mlp["random"] / v for v in mlp.values()], color="tab:blue", label="model")
    cum = np.cumprod([1.0, *paper.ABLATION.values()])
    ax.plot(list(mlp), cum, "ko--", label="paper")
    ax.set_xlabel("mapping policy (cumulative)")
    ax.set_ylabel("MLP-block speedup over random")
    ax.set_title("Hermes Fig. 13 (model): ablation, LLaMA2-70B batch 1", fontsize=9)
    ax.legend()
    save(fig, plt, out / "hermes_ablation.png")
    return lines + ["", "![Hermes ablation](hermes_ablation.png)"]


def dse_lines(tokens: list[list[float]], out: Path, mults: tuple[int, ...] = paper.DSE_MULTIPLIERS) -> list[str]:
    m = paper.DSE_MODEL
    curves = dict(zip((1, 16), tokens, strict=True))
    lines = [
        f"Multiplier sweep (§V-E3), {m}: tokens/s over {mults[0]} multipliers.",
        "",
        caption(f"{m}'s tokens/s over {mults[0]} multipliers' at each GEMV multiplier count, batches 1 and 16"),
        "| batch | " + " | ".join(str(k) for k in mults) + " |",
        "| ---: | " + " | ".join("---:" for _ in mults) + " |",
    ]
    lines += [f"| {b} | " + " | ".join(f"{v / c[0]:.2f}" for v in c) + " |" for b, c in curves.items()]
    c1 = curves[1]
    sat = next(k for k, v in zip(mults, c1, strict=True) if v >= 0.98 * c1[-1])
    lines += [
        "",
        *head(f"The multiplier sweep's claims, paper vs model ({m})"),
        _row("multipliers 32 -> 512, batch 16", paper.DSE_SPEEDUP, max(curves[16]) / curves[16][0]),
        _row(
            "more multipliers help batch 16 more than batch 1",
            paper.DSE_LARGER_BATCH,
            curves[16][-1] / curves[16][0] / (c1[-1] / c1[0]),
        ),
        _row(
            "batch 16 rises with every multiplier step",
            paper.DSE_B16_RISES,
            min(b / a for a, b in pairwise(curves[16])),
        ),
        _row("batch 1 saturates at (multipliers, within 2%)", paper.DSE_SATURATES, sat, ".0f"),
    ]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for b, c in curves.items():
        ax.plot(mults, [v / c[0] for v in c], "o-", label=f"batch {b}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("multipliers per GEMV unit")
    ax.set_ylabel(f"tokens/s over {mults[0]} multipliers'")
    ax.set_title(f"Hermes §V-E3 (model): multiplier sweep, {m}", fontsize=9)
    ax.legend()
    save(fig, plt, out / "hermes_multipliers.png")
    return lines + ["", "![Hermes multiplier sweep](hermes_multipliers.png)"]


def gpu_lines(tokens: dict[str, float]) -> list[str]:
    """§V-E2: the RTX 4090's throughput over the T4's and the 3090's (each as Hermes prints it)."""
    base = tokens["rtx4090-hermes"]
    return [
        "GPU sensitivity (§V-E2): Hermes' tokens/s at batch 1, mean of OPT-13B and OPT-30B, on each GPU as the "
        "paper describes it (sysmodel/devices.py); the GPU's weight budget scales with its memory [S].",
        "",
        *head("The RTX 4090's throughput over other GPUs', paper vs model (OPT-13B and OPT-30B, batch 1)"),
        _row("RTX 4090 over Tesla T4", paper.GPU_SENSITIVITY["t4"], base / tokens["t4-hermes"]),
        _row("RTX 4090 over RTX 3090", paper.GPU_SENSITIVITY["rtx3090"], base / tokens["rtx3090-hermes"]),
    ]


def trt_lines(rows: list[dict]) -> list[str]:
    got = {r["batch"]: r["Hermes"] / r["TensorRT-LLM"] for r in rows if r["model"] == "llama2-70b"}
    return [
        "Hermes against TensorRT-LLM on 5 x A100-40GB, LLaMA2-70B (§V-F).",
        "",
        *head("Hermes' throughput as a share of TensorRT-LLM's on 5 x A100-40GB, paper vs model (LLaMA2-70B)"),
        *[_row(f"TensorRT-LLM share, batch {b}", want, got[b]) for b, want in paper.TRT_SHARE.items()],
    ]


def report_lines(ctx) -> list[str]:
    """The section: every model, batch and multiplier count of the paper's grids."""
    out = ctx.out
    rows = ctx.grid("hermes-runs", runs, paper.MODELS, paper.BATCHES)
    mlp = ctx.grid("hermes-ablation", ablation)
    tokens = ctx.grid("hermes-dse", dse, paper.DSE_MULTIPLIERS)
    return [
        "### Setup",
        "",
        *setup_lines(),
        "",
        *capacity_lines(),
        "",
        "### Workload",
        "",
        *workload_lines(),
        "",
        "### Predictor",
        "",
        *predictor_lines(),
        "",
        "### Offline partition",
        "",
        *ilp_lines(),
        "",
        "### Throughput",
        "",
        *throughput_lines(rows, out),
        "",
        "### Ablation",
        "",
        *ablation_lines(mlp, out),
        "",
        "### Multipliers",
        "",
        *dse_lines(tokens, out, paper.DSE_MULTIPLIERS),
        "",
        "### GPUs",
        "",
        *gpu_lines(ctx.grid("hermes-gpus", gpus)),
        "",
        "### TensorRT-LLM",
        "",
        *trt_lines(rows),
        "",
        "### NDP core area",
        "",
        *area_lines(),
    ]


def area_lines(mults: tuple[int, ...] = paper.DSE_MULTIPLIERS) -> list[str]:
    """Yosys cells of the NDP core (`make area`) for the DSE's multiplier counts, bit-serial against
    parallel multipliers at equal throughput."""
    area = characterization.load_area("hermes")
    if not area:
        return ["Not synthesized yet (`make area`)."]
    size = {d: p["params"].get("multipliers", p["params"].get("lanes", 1)) for d, p in area.items()}
    serial, par = (area[d]["cells"]["total"] for d in ("bitserial_mul", "parallel_mul"))
    rate = hs.MUL_LANES / hm.c_mul()  # products per cycle of one bit-serial multiplier
    act = area_extrapolate(area, "activation_l4", "activation_l8", size, hs.ACT_LANES)
    synth = ", ".join(f"{d} {p['cells']['total']}" for d, p in area.items())
    lines = [
        f"Yosys generic cells (tb/area.py; no technology mapping): {synth}. "
        f"One bit-serial multiplier ({hs.MUL_LANES} lanes, a shared packer) gives {rate:.2f} products per "
        f"cycle in {serial} cells: {serial / rate:.0f} cells per product per cycle, against {par} for a "
        f"parallel FP16 x FP16 -> FP32 multiplier. GEMV cells extrapolate along the line through gemv_m4 "
        f"and gemv_m8; the parallel column swaps the bit-serial multipliers for M x {rate:.2f} parallel "
        f"ones (equal throughput); the activation unit ({act:.3g} cells at {hs.ACT_LANES} lanes, "
        "extrapolated the same way) is the same in every row.",
        "",
        caption(
            "The NDP core's area proxy per multiplier count: bit-serial against parallel multipliers at "
            "equal throughput (Yosys generic cells)"
        ),
        "| multipliers | bit-serial GEMV + activation | parallel at equal throughput | parallel / bit-serial |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for m in mults:
        bs = area_extrapolate(area, "gemv_m4", "gemv_m8", size, m) + act
        pl = bs - m * serial + m * rate * par
        lines.append(f"| {m} | {bs:.3g} | {pl:.3g} | {pl / bs:.2f} |")
    verdict = "smaller" if par < serial / rate else "larger"
    return lines + [
        "",
        f"In generic cells the parallel multipliers are {verdict} at equal throughput: the bit-serial "
        "lane keeps 22-bit shift, accumulator and hold registers, and a flip-flop counts as one cell "
        "like a gate. The paper's case for bit-serial (§IV-A1) is not borne out by this proxy; "
        "what it buys is rate matched to the DIMM: 256 multipliers give "
        f"{hs.MULTIPLIERS * rate:.0f} products per cycle against ~49 FP16 weights per cycle from a "
        "DIMM's ranks, so the core is not the bottleneck at batch 1.",
    ]
