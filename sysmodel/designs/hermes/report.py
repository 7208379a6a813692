"""The Hermes section of `membound report`: derived inputs, the workload's statistics against the paper's,
the predictor, the ILP against its decomposition and a greedy split, tokens/s per model and batch against
the baselines, the ablation, the multiplier sweep and TensorRT-LLM, each result with the paper's value,
the model's and their ratio."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from golden import hermes_spec as hs
from sysmodel import ledger
from sysmodel.cost import characterization
from sysmodel.cost.models import load_model
from sysmodel.designs.hermes import claims, figures, paper
from sysmodel.designs.hermes import model as hm
from sysmodel.designs.hermes import scheduler as sch
from sysmodel.designs.hermes import workload as wl
from sysmodel.designs.hermes.grids import trace
from sysmodel.report import Context, caption, results
from sysmodel.report.plots import pyplot, save
from sysmodel.report.results import area_extrapolate, head

# A table row's number format where it is not .2f
_FMT = {
    "NDP-DIMMs Falcon-40B needs at least": ".0f",
    "predictor accuracy": ".3f",
    "token generation's share of the run, LLaMA2-70B batch 1": ".3f",
    "prompting's share of the run, LLaMA2-70B batch 1": ".3f",
    "batch 1 saturates at (multipliers, within 2%)": ".0f",
}


def claim_lines(rows: list[ledger.Row], table: figures.Table, named: dict[str, str]) -> list[str]:
    """A paper-vs-model table's rows: each of ``table``'s claims as ``rows`` (``claims.claims``) hold it, a
    missed one with its named cause (``named``: ``claims.gaps``)."""
    return [
        results.claim_row(named, name, ledger.find(rows, c.quantity), _FMT.get(name, ".2f"))
        for name, (c, _) in table.items()
    ]


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
        f"| NDP-DIMM internal bandwidth | {hw.dimm_bw / 1e9:.1f} GB/s | sysmodel.engines.memory, 4 ranks x 25.6 GB/s "
        "peak (notes §2.3) |",
        f"| c_mul (cycles per GEMV operation: 8 products per multiplier) | {hm.c_mul():g} | measured, "
        "hermes_gemv at 256 x 8 |",
        f"| softmax over 4096 scores | {hm.softmax_cycles(4096):.0f} cycles | the activation unit's cycle model "
        "at 256 lanes, asserted by its testbenches at 4 and 256 lanes |",
        f"| GEMV rate per DIMM | {hw.dimm_macs / 1e9:.1f} GMAC/s | {hw.multipliers} multipliers x 8 / c_mul at 1 GHz |",
        f"| GPU | {hw.gpu} | sysmodel.cost.devices |",
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


def capacity_lines(claimed: list[str]) -> list[str]:
    """What fits where (§V-B1, §V-E1): ``claimed``, the table's rows (:func:`claim_lines`)."""
    return [
        *head("Capacity statements, paper vs model: the GPU's share of each model, the DIMMs a model needs"),
        *claimed,
    ]


def workload_lines(claimed: list[str]) -> list[str]:
    """The generator's solved parameters and its activations' statistics against the paper's (§I-§III-B):
    ``claimed``, the table's rows (:func:`claim_lines`)."""
    s = wl.solve(wl.stats_for("llama2-70b"))
    return [
        "Generated activations (LLaMA2-70B shapes, MLP block, one sequence): the generator's parameters "
        f"are solved from the paper's statistics (mu {s.mu:.2f}, sigma {s.sigma:.2f}, drift {s.drift:.2f}, "
        f"AR {s.ar:.3f}, layer coupling {s.coupling} [S]; sysmodel/designs/hermes/workload.py).",
        "",
        *head(
            "The generated activations' statistics against the paper's (LLaMA2-70B MLP block, one sequence; "
            "inputs of the generator, shown as a check, not a prediction)"
        ),
        *claimed,
    ]


def predictor_lines(claimed: list[str]) -> list[str]:
    """§IV-C1's predictor: ``claimed``, its accuracy row (:func:`claim_lines`), then every rule's scores."""
    lines = [
        "Predictor (state table + top-2 correlation, golden.hermes), LLaMA2-70B MLP layer 1, batch 1. "
        "Timing uses `state-or-correlation` [S].",
        "",
        *head("The activation predictor's accuracy, paper vs model (LLaMA2-70B MLP layer 1, batch 1)"),
        *claimed,
        "",
        caption("Each prediction rule's accuracy, recall and precision on the same tokens"),
        "| rule | accuracy | recall | precision |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r} | {a.accuracy:.3f} | {a.recall:.3f} | {a.precision:.3f} |" for r, a in figures.predictor().items()
    ]
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


def _headline_lines(rows: list[dict], claimed: list[str]) -> list[str]:
    """Hermes' headline tokens/s and its average speedups over the baselines, paper vs model (``claimed``: the
    table's rows, :func:`claim_lines`), and the PCIe bandwidth the paper's measured baselines imply."""
    return [
        "",
        *results.gpu_profile_band(figures.GPU_DEFAULT, figures.GPU_PROFILES),
        *head("Hermes' headline tokens/s and its average speedups over the baselines, paper vs model"),
        *claimed,
        "",
        f"Implied effective PCIe bandwidth of the paper's measured baselines [D]: FlexGen "
        f"{figures.implied_bw(rows, 'FlexGen', paper.OVER_FLEXGEN) / 1e9:.1f} GB/s, Deja Vu "
        f"{figures.implied_bw(rows, 'Deja Vu', paper.OVER_DEJAVU) / 1e9:.1f} GB/s (model: 32 GB/s); an upper "
        "bound, as the baselines' compute is kept.",
    ]


def throughput_lines(
    rows: list[dict], out: Path, headline: list[str], trends: list[str], cells: list[str]
) -> list[str]:
    """§V-B and §V-D: the tokens/s table and plot, and the rows (:func:`claim_lines`) of the headline, the
    batch trends and the single cells."""
    names = ["Hermes", "Hermes-host", *hm.BASELINES]
    lines = [*_tokens_table(rows, names), *_headline_lines(rows, headline)]
    plot_throughput(rows, names, out / "hermes_tokens.png")
    return lines + [
        "",
        "![Hermes tokens/s](hermes_tokens.png)",
        "",
        *head("§V-B2's batch trends (Fig. 11), directions the paper states in words: lowest ratio over the grid"),
        *trends,
        "",
        *head("Statements over single cells of Figs. 9-12, paper vs model: directions stated in words, and shares"),
        *cells,
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


def ablation_lines(mlp: dict[str, float], claimed: list[str], out: Path) -> list[str]:
    """§V-C (Fig. 13): ``claimed``, the step-over-step speedups' rows (:func:`claim_lines`), and the plot."""
    lines = [
        "Ablation (§V-C): MLP-block latency per step, LLaMA2-70B batch 1 [S: the paper's model for Fig. 13 is "
        "not named].",
        "",
        *head("The ablation's step-over-step MLP-block speedups, paper vs model (LLaMA2-70B, batch 1)"),
        *claimed,
    ]
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


def dse_lines(
    tokens: list[list[float]], claimed: list[str], out: Path, mults: tuple[int, ...] = paper.DSE_MULTIPLIERS
) -> list[str]:
    """§V-E3 (Fig. 16): the sweep's table, ``claimed`` (its claims' rows, :func:`claim_lines`) and the plot."""
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
    lines += ["", *head(f"The multiplier sweep's claims, paper vs model ({m})"), *claimed]
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


def gpu_lines(claimed: list[str]) -> list[str]:
    """§V-E2: the RTX 4090's throughput over the T4's and the 3090's (``claimed``: the rows, :func:`claim_lines`)."""
    return [
        "GPU sensitivity (§V-E2): Hermes' tokens/s at batch 1 on each GPU as the paper describes it "
        "(sysmodel/cost/devices.py), each ratio the mean of OPT-13B's and OPT-30B's (a mean of ratios, as the paper's "
        "other averages); the GPU's weight budget scales with its memory [S].",
        "",
        *head("The RTX 4090's throughput over other GPUs', paper vs model (OPT-13B and OPT-30B, batch 1)"),
        *claimed,
    ]


def trt_lines(claimed: list[str]) -> list[str]:
    """§V-F: Hermes' share of TensorRT-LLM's throughput (``claimed``: the rows, :func:`claim_lines`)."""
    return [
        "Hermes against TensorRT-LLM on 5 x A100-40GB, LLaMA2-70B (§V-F).",
        "",
        *head("Hermes' throughput as a share of TensorRT-LLM's on 5 x A100-40GB, paper vs model (LLaMA2-70B)"),
        *claimed,
    ]


def report_lines(ctx: Context, rows: list[ledger.Row]) -> list[str]:
    """The section: every model, batch and multiplier count of the paper's grids; ``rows``: its claims
    (``sysmodel.designs.hermes.claims.claims``), each table row printed from them."""
    g, t, named = figures.grids(ctx), figures.tables(ctx), claims.gaps(ctx)

    def show(table: figures.Table) -> list[str]:
        return claim_lines(rows, table, named)

    return [
        "### Setup",
        "",
        *setup_lines(),
        "",
        *capacity_lines(show(t.capacity)),
        "",
        "### Workload",
        "",
        *workload_lines(show(t.workload)),
        "",
        "### Predictor",
        "",
        *predictor_lines(show(t.predictor)),
        "",
        "### Offline partition",
        "",
        *ilp_lines(),
        "",
        "### Throughput",
        "",
        *throughput_lines(g.runs, ctx.out, show(t.headline), show(t.trends), show(t.cells)),
        "",
        "### Ablation",
        "",
        *ablation_lines(g.ablation, show(t.ablation), ctx.out),
        "",
        "### Multipliers",
        "",
        *dse_lines(g.dse, show(t.dse), ctx.out, paper.DSE_MULTIPLIERS),
        "",
        "### GPUs",
        "",
        *gpu_lines(show(t.gpus)),
        "",
        "### TensorRT-LLM",
        "",
        *trt_lines(show(t.trt)),
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
