"""The LLM-in-a-flash section of `membound report`: the flash read model against the paper's points, Table 2
(I/O per configuration), Table 3 (I/O / memory management / compute / total per model and backend, every
cell marked as a fit or a prediction), the headline speedups, the DRAM budgets, the low-rank predictor on
synthetic activations, and the real neuron cache and window on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sysmodel import ledger, results
from sysmodel.devices import FlashModel
from sysmodel.flash import bench, grids, paper
from sysmodel.flash import latency as lat
from sysmodel.flash import predictor as pr
from sysmodel.models import load_model
from sysmodel.plots import pyplot, save
from sysmodel.report import caption
from sysmodel.results import head

GAPS = {
    "falcon-7b cpu naive": "Falcon-7B's dense compute is 22% faster per weight byte than OPT's on the same CPU "
    "(800 vs 986 ms for 4% more weights); the model uses one CPU bandwidth, fitted on OPT",
    "persimmon-8b cpu all": "memory management: the model moves 2 x the loaded bytes (149 ms); the paper's "
    "Table 5 rerun of the same row reports 155.8 ms, Table 3 98 ms; its window shrinks "
    "dynamically (App. C), which the model does not follow; its compute part (1.11) carries "
    "a per-byte compute difference like Falcon-7B's",
    "falcon-7b cpu all": "compute: the same 22% per-byte difference as the naive row",
    "falcon-7b cpu hybrid": "the naive row's compute difference",
    "llama2-7b cpu all": "memory management: the model moves 2 x the loaded bytes (189 ms); the paper runs Llama 2 "
    "with window 2 and stops caching past 55% of the model (App. C), which the model does not "
    "follow",
    "persimmon-8b cpu all, Table 5": "compute: the per-byte compute difference of Table 3's row (1.11 there; "
    "Table 5's rerun reports 623.74 ms compute against Table 3's 660, and 310.52 ms I/O against 283)",
}


def flash_lines() -> list[str]:
    m = FlashModel()
    lines = [
        "Flash reads (M1 Max SSD, 32 threads): thr(c) = min(6.1 GB/s, 32 c / (l0 + c / B)), l0 = "
        f"{m.l0 * 1e6:.0f} µs and B = {m.per_thread_bw / 1e6:.0f} MB/s fitted to the 8 and 16 KiB points "
        "(notes §3.1): those two cells are fits, the sequential cap the stated 6.1 GB/s (an input). The 32 KiB "
        f"point, {paper.FLASH_POINTS[32 * 1024]} GB/s, is derived from OPT's 0.41 GB in 105 ms (Table 3), not a number "
        f"the paper states, so it is not compared: the model reads 32 KiB at {m.throughput(32 * 1024) / 1e9:.2f} GB/s.",
        "",
        *head("Flash read throughput by chunk size on the M1 Max SSD, paper vs the read model"),
    ]
    names = {
        8 * 1024: "8 KiB unbundled fp16",
        16 * 1024: "16 KiB bundled fp16",
        1 << 30: "sequential (the cap)",
    }
    kinds = {8 * 1024: "fit", 16 * 1024: "fit", 1 << 30: "input"}  # l0 and B fitted to two points; the cap given
    for c in names:
        lines.append(results.row(GAPS, names[c], paper.flash_point(c), m.throughput(c) / 1e9, kind=kinds.get(c)))
    small = 8 * 1024  # Fig. 2b: throughput grows with the chunk and with the threads (by the form of thr(c))
    by_chunk, by_threads = m.throughput(4 * small) / m.throughput(small), m.throughput(small) / m.throughput(small, 16)
    lines.append(results.row(GAPS, "32 KiB over 8 KiB", paper.TEXT["throughput by chunk"], by_chunk))
    lines.append(results.row(GAPS, "32 over 16 threads", paper.TEXT["throughput by threads"], by_threads))
    return lines


def table2_lines() -> list[str]:
    m = FlashModel()
    lines = [
        "Table 2 (OPT-6.7B fp16, M1 Max, half the memory): I/O = the paper's bytes per token / the read model's "
        "throughput at the configuration's chunk (unbundled rows of d_model x 2 B = 8 KiB; bundles 16 KiB). "
        "The predictor and windowing rows read at the 8 KiB fit point, bundling at the 16 KiB one: this "
        "table checks the paper's arithmetic, it is not a prediction.",
        "",
        caption("LLM in a flash Table 2: I/O per token of OPT-6.7B (fp16, M1 Max) per configuration, paper vs model"),
        "| configuration | GB per token | chunk | throughput (GB/s) | I/O paper (ms) | I/O model (ms) "
        "| model / paper |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    io = {}
    for name, (gb, chunk, want) in paper.TABLE2.items():
        thr = m.throughput(chunk)
        got = gb * 1e9 / thr * 1e3
        size = "sequential" if chunk >= 1 << 30 else f"{chunk // 1024} KiB"
        lines.append(f"| {name} | {gb:g} | {size} | {thr / 1e9:.2f} | {want} | {got:.0f} | {got / want:.2f} |")
        ledger.record(paper.table2(name), got, kind="input" if chunk >= 1 << 30 else "fit")
        io[name] = got
    opt = load_model("opt-6.7b")  # the window's DRAM: the App. C.1 budget (its [Q] shares) of the 13.4 GB model
    return [
        *lines,
        "",
        *head("Table 2's caption and DRAM column, OPT-6.7B fp16 on the M1 Max, paper vs model"),
        results.row(
            GAPS, "+windowing over +bundling", paper.TEXT["bundling halves"], io["+windowing"] / io["+bundling"]
        ),
        results.row(
            GAPS, "DRAM, +windowing (GB)", paper.TEXT["window DRAM"], lat.dram_share(opt) * paper.NAIVE_BYTES / 1e9
        ),
    ]


def _mark(backend: str, config: str, part: int, cfg_name: str) -> str:
    if part == 1 and config in ("naive", "hybrid"):
        return "identity"  # no neuron cache without windowing: zero memory management by construction
    if cfg_name == "opt-6.7b" and (backend, config, part) in lat.FITTED:
        return "fit"
    if cfg_name == "opt-6.7b" and part == 0 and config == "naive":
        return "input"  # OPT's bytes at 6.1 GB/s, the rate Table 2 states as 13.4 GB in this very 2196 ms
    if part == 0 and config == "all" and cfg_name not in paper.INCREMENT:
        return "input"
    return "pred"


def table3() -> list[tuple[str, str, str, tuple, lat.Latency, list[str]]]:
    cal = lat.calibration()
    out = []
    for (model, backend), cells in paper.TABLE3.items():
        cfg = load_model(model)
        for config, want in cells.items():
            got = lat.latency(cfg, cal[backend], config)
            marks = [_mark(backend, config, p, model) for p in range(3)]
            out.append((model, backend, config, want, got, marks))
    return out


def _record_table3(model: str, backend: str, config: str, got: list[float], marks: list[str], status: str) -> None:
    """A Table 3 row's cells into the ledger, each part with its mark's kind, the total by the row's status."""
    cause = GAPS.get(f"{model} {backend} {config}", "")
    total = "prediction" if status == "predicted" else ("fit" if "fit" in marks else "input")
    for part, kind in enumerate([*({"pred": "prediction"}.get(m, m) for m in marks), total]):
        ledger.record(paper.table3(model, backend, config, part), got[part] * 1e3, cause, kind)


def table3_lines(rows: list) -> list[str]:
    cal = lat.calibration()
    lines = [
        "Table 3, per-token latency in ms, paper / model, each part marked: **fit** (a calibration constant "
        "was computed from this cell), **input** (the loaded share is implied by this cell: the paper does "
        "not state it; OPT's naive I/O: the stated 6.1 GB/s is Table 2's 13.4 GB in this very 2196 ms), "
        "**identity** (zero by construction: no memory management without windowing), **pred** "
        "(predicted). A row is a prediction only when no part is a fit or an "
        "input; only predictions count as reproduced, and only within 10%.",
        "",
        caption(
            "LLM in a flash Table 3: per-token latency (I/O, memory management, compute) per model, backend "
            "and configuration, paper vs model, each cell marked fit, input or prediction"
        ),
        "| model | backend | config | I/O | mem | compute | total paper | total model | model / paper | status |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    predicted = within = 0
    for model, backend, config, want, got, marks in rows:
        parts = [got.io, got.mem, got.compute]
        cells = [f"{w} / {g * 1e3:.0f} {m}" for w, g, m in zip(want[:3], parts, marks, strict=True)]
        ratio = got.total * 1e3 / want[3]
        fitted = [m for m in marks if m not in ("pred", "identity")]
        status = "fit" if all(m == "fit" for m in marks) else ("partly fitted" if fitted else "predicted")
        if status == "predicted":
            predicted += 1
            within += ledger.within_tolerance(ratio)
        _record_table3(model, backend, config, [*parts, got.total], marks, status)
        gap = results.gap(GAPS, f"{model} {backend} {config}", ratio)
        if not ledger.within_tolerance(ratio):
            gap = f"outside 10%: {gap}"
        lines.append(
            f"| {model} | {backend} | {config} | {' | '.join(cells)} | {want[3]} | {got.total * 1e3:.0f} "
            f"| {ratio:.2f} | {status}; {gap} |"
        )
    lines += [
        "",
        f"Predicted rows within 10% of the paper's total (reproduced): {within} of {predicted}.",
        "",
        caption("The calibration constants, each computed from the OPT-6.7B Table 3 cell named (fits)"),
        "| backend | compute bandwidth (GB/s) | memcpy (GB/s) | sparse-kernel factor | bundled read (GB/s) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    opt = load_model("opt-6.7b")
    for name, be in cal.items():
        thr = be.flash.throughput(lat.bundle_bytes(opt, be.value_bytes)) / 1e9
        lines.append(
            f"| {name} | {be.compute_bw / 1e9:.1f} (naive compute) | {be.memcpy_bw / 1e9:.1f} (all mem) | "
            f"{be.sparse_factor:.2f}{'' if name == 'cpu' else ' (all compute)'} | {thr:.2f}"
            f"{' (all I/O)' if name in ('metal-m2', 'gpu') else ' (read model)'} |"
        )
    return lines


_KINDS = ("prediction", "input", "fit")  # weakest last: a value with a fitted part is a fit


def _kind(rows: dict, *keys: tuple[str, str, str], parts: tuple[int, ...] = (0, 1, 2)) -> str:
    """The kind of a value derived from the ``parts`` (I/O, memory management, compute) of Table 3 rows: the
    weakest of them (a zero by construction does not weaken it)."""
    marks = {rows[k][-1][p] for k in keys for p in parts} - {"pred", "identity"}
    return max(marks | {"prediction"}, key=_KINDS.index)


def _speedups(rows: dict, over: str) -> dict[tuple[str, str], float]:
    """(model, backend) -> the model's total of ``over`` / its total of "all", for each row that has both."""
    return {
        (m, b): rows[(m, b, over)][-2].total / rows[(m, b, "all")][-2].total
        for (m, b, c) in rows
        if c == over and (m, b, "all") in rows
    }


def _stated(rows: dict, name: str, key: str, got: float, keys: tuple, parts: tuple[int, ...] = (0, 1, 2)) -> str:
    return results.row(GAPS, name, paper.TEXT[key], got, kind=_kind(rows, *keys, parts=parts))


def headline_lines(table: list) -> list[str]:
    rows = {(m, b, c): r for m, b, c, *r in table}
    naive, hybrid = _speedups(rows, "naive"), _speedups(rows, "hybrid")
    lines = [
        'Speedup over naive: the paper\'s "up to 4x, 7x and 20x" (abstract, §1) against the best of each '
        "backend's Table 3 rows in the model (Metal: M1 and M2), §7's ranges on OPT-6.7B at their midpoints, and "
        'the speedups App. C states per model. Fits: every OPT backend\'s naive compute and "all" memory '
        "management are calibration cells of these very ratios; Phi-2's and Llama 2's \"all\" I/O is an input.",
        "",
        *head("Speedups over naive and hybrid loading the paper states, paper vs model"),
    ]
    for label, backend in (("CPU", "cpu"), ("Metal", "metal-m2"), ("GPU", "gpu")):
        family = {k: v for k, v in naive.items() if k[1].split("-")[0] == backend.split("-")[0]}
        best = max(family, key=family.get)
        kind = _kind(rows, (*best, "naive"), (*best, "all"))
        lines.append(
            results.row(GAPS, f"{label} speedup over naive, up to", paper.speedup(backend), family[best], kind=kind)
        )
    for backend in paper.SPEEDUP_RANGE:
        key = ("opt-6.7b", backend)
        kind = _kind(rows, (*key, "naive"), (*key, "all"))
        lines.append(
            results.row(GAPS, f"OPT {backend} speedup (§7)", paper.speedup_range(backend), naive[key], kind=kind)
        )
    for name, key, ratios, over in (
        ("every row over naive (§4.2)", "over naive", naive, "naive"),
        ("every row over hybrid (§4.2)", "over hybrid", hybrid, "hybrid"),
    ):
        worst = min(ratios, key=ratios.get)
        lines.append(_stated(rows, name, key, ratios[worst], ((*worst, over), (*worst, "all"))))
    for model, tag in (("phi-2", "phi"), ("llama2-7b", "llama")):
        naive_all = ((model, "cpu", "naive"), (model, "cpu", "all"))
        lines.append(_stated(rows, f"{model} over naive", f"{tag} over naive", naive[(model, "cpu")], naive_all))
        hybrid_all = ((model, "cpu", "hybrid"), (model, "cpu", "all"))
        lines.append(_stated(rows, f"{model} over hybrid", f"{tag} over hybrid", hybrid[(model, "cpu")], hybrid_all))
    return [*lines, "", *text_lines(rows)]


def text_lines(rows: dict) -> list[str]:
    """App. C.1 and C.2's per-token figures in the text, from the model's Table 3 rows."""
    opt, gpu, falcon = (
        rows[k][-2] for k in (("opt-6.7b", "cpu", "all"), ("opt-6.7b", "gpu", "naive"), ("falcon-7b", "cpu", "all"))
    )
    fal_naive = rows[("falcon-7b", "cpu", "naive")][-2]
    opt_all, fal_all, fal_naive_key = (
        ("opt-6.7b", "cpu", "all"),
        ("falcon-7b", "cpu", "all"),
        ("falcon-7b", "cpu", "naive"),
    )
    io_mem = (0, 1)
    return [
        *head("The per-token latencies App. C.1 (OPT-6.7B) and C.2 (Falcon-7B) state in the text, paper vs model"),
        _stated(
            rows, "OPT CPU I/O + memory management", "opt memory-related", (opt.io + opt.mem) * 1e3, (opt_all,), io_mem
        ),
        _stated(
            rows, "OPT GPU naive I/O over 2000 ms", "gpu naive io", gpu.io / 2.0, (("opt-6.7b", "gpu", "naive"),), (0,)
        ),
        _stated(rows, "Falcon memory management", "falcon mem", falcon.mem * 1e3, (fal_all,), (1,)),
        _stated(
            rows,
            "Falcon I/O + memory management",
            "falcon memory-related",
            (falcon.io + falcon.mem) * 1e3,
            (fal_all,),
            io_mem,
        ),
        _stated(
            rows,
            "Falcon naive I/O over it",
            "falcon over naive",
            fal_naive.io / (falcon.io + falcon.mem),
            (fal_all, fal_naive_key),
            io_mem,
        ),
    ]


def budget_lines() -> list[str]:
    """The DRAM budgets (App. C.1, C.2) and their parts, the bundle sizes, the predictors' size, the KV share."""
    lines = [
        "DRAM budget, share of the model (embeddings + attention + predictors + the window's FFN rows; "
        "the predictor sizes from the paper's ranks, the window share [Q]), its parts, and the other sizes the "
        "text states: arithmetic of the models' dimensions and the stated ranks (identities) — they check the "
        "kit's bookkeeping, they predict nothing.",
        "",
        *head("DRAM budget and its parts as shares of the model, and the sizes the text states, paper vs model"),
    ]
    for model in paper.DRAM_SHARE:  # the same [Q] window and predictor shares the paper's budget sums: an input
        cfg = load_model(model)
        got = lat.dram_share(cfg) * 100
        lines.append(results.row(GAPS, f"{model} DRAM (%)", paper.dram_share_claim(model), got, kind="input"))
        if model not in paper.SHARES:  # Persimmon: the paper states the total only
            continue
        parts = _shares(cfg)
        lines += [results.row(GAPS, f"{model} {k} (%)", paper.share(model, k), v) for k, v in parts.items()]
        tag = model.split("-")[0]
        bundle = lat.bundle_bytes(cfg, 4) / 1024
        lines.append(results.row(GAPS, f"{model} fp32 bundle (KiB)", paper.TEXT[f"{tag} bundle"], bundle, ".1f"))
    opt = load_model("opt-6.7b")
    w, ranks = lat.weights(opt), paper.PREDICTOR_RANKS["opt-6.7b"]
    embeddings = _shares(opt)["embeddings"] / 100 * w["total"]
    lines += [
        results.row(GAPS, "bundle over a row", paper.TEXT["bundle doubles"], lat.bundle_bytes(opt, 1) / opt.hidden),
        results.row(GAPS, "OPT mean predictor rank", paper.TEXT["predictor rank"], sum(ranks) / len(ranks), ".0f"),
        results.row(
            GAPS,
            "OPT predictors (%)",
            paper.TEXT["predictor weights"],
            w["predictor"] / (w["total"] - embeddings) * 100,
        ),
        results.row(
            GAPS, "OPT KV at 2048 (%)", paper.TEXT["kv share"], opt.kv_bytes_per_token(1) * 2048 / w["total"] * 100
        ),
    ]
    return lines


def _shares(cfg) -> dict[str, float]:
    """The parts of the "all" DRAM budget, % of the model: the weights' split and the window's FFN rows."""
    w = lat.weights(cfg)
    attention = cfg.layers * (cfg.layer_params(False) - cfg.ffn_params())  # with the layers' norms
    ffn = w["ffn"] / w["total"] * 100
    return {
        "embeddings": (w["total"] - w["ffn"] - attention) / w["total"] * 100,  # all outside the layers
        "attention": attention / w["total"] * 100,
        "predictors": w["predictor"] / w["total"] * 100,
        "FFN": ffn,
        "window": lat.window_share(cfg)[0] * ffn,
    }


def predictor_lines(st: dict) -> list[str]:
    """The predictor's rates and the neuron cache's traffic (``st`` from :func:`sysmodel.flash.grids.predictor`)."""
    p = pr.Synthetic(**st["synthetic"])
    lines = [
        f"Low-rank predictor on synthetic activations (sysmodel/flash/predictor.py: latent rank {p.rank}, "
        f"noise {p.sigma}, d_model {p.d_model}, d_ff {p.d_ff}, {p.active:.1%} active; trained on {st['train']} "
        f"tokens, evaluated on {st['test']}). Not OPT-6.7B: the paper's rates are printed beside, not "
        "reproduced.",
        "",
        caption(
            "The low-rank predictor's error rates on synthetic activations beside the paper's on OPT-6.7B "
            "(illustration, not reproduction)"
        ),
        "| predictor rank | false negatives | false positives | predicted active | truly active |",
        "| ---: | ---: | ---: | ---: | ---: |",
        f"| paper, OPT-6.7B (r = 128 .. 1024) | {paper.PREDICTOR_FNR:.1%} | {paper.PREDICTOR_FPR:.1%} | "
        f"~3x active | {paper.OPT_ACTIVE:.1%} |",
    ]
    lines += [
        f"| {r['rank']} | {r['fnr']:.1%} | {r['fpr']:.1%} | {r['predicted']:.1%} | {r['active']:.1%} |"
        for r in st["rates"]
    ]
    lines += [
        "",
        f"The neuron cache and window on the rank-{st['rates'][-1]['rank']} predictor's masks for the same "
        "test tokens (the real mechanism, sysmodel/flash/cache.py, in-memory source; shares of the FFN):",
        "",
        caption("The neuron cache's traffic against the window size on the predictor's masks"),
        "| window k (tokens) | loaded per token | held in DRAM (mean) | held (max, the Req_i to preallocate) |",
        "| ---: | ---: | ---: | ---: |",
    ]
    lines += [f"| {w['k']} | {w['loaded']:.1%} | {w['used']:.1%} | {w['max']:.1%} |" for w in st["window"]]
    first, last = st["window"][0], st["window"][-1]  # §3.1: a larger k loads less and holds more (by construction)
    lines += [
        "",
        *head(f"The window's trends (§3.1), k = {first['k']} against k = {last['k']}, paper vs the neuron cache"),
        results.row(GAPS, "loaded per token", paper.TEXT["window loads less"], first["loaded"] / last["loaded"]),
        results.row(GAPS, "held in DRAM", paper.TEXT["window holds more"], last["used"] / first["used"]),
    ]
    lines.append(
        f"(paper, OPT-6.7B, k = {paper.WINDOW_TOKENS}: {paper.INCREMENT['opt-6.7b']:.1%} loaded per "
        f"token, {paper.WINDOW_FFN['opt-6.7b']:.0%} held; the synthetic tokens' correlation rho = {p.rho} "
        "is a [S] parameter, so these shares illustrate the mechanism, they do not reproduce OPT's)"
    )
    return lines


def table5_lines(rows: list) -> list[str]:
    """Table 5's rerun of four "all" rows against the same model rows as Table 3 (each part of the kind its
    Table 3 cell has: a constant fitted to Table 3's rounded cell is fitted to this one too)."""
    lines = [
        caption('LLM in a flash Table 5 (App. C.1): the "all" rows rerun with standard deviations, paper / model (ms)'),
        "| model | backend | I/O | mem | compute | total |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for model, backend, config, _, got, marks in rows:
        if config != "all" or (model, backend) not in paper.TABLE5:
            continue
        parts = [got.io, got.mem, got.compute, got.total]
        kinds = [{"pred": "prediction"}.get(m, m) for m in marks]
        kinds.append(max({*kinds, "prediction"} - {"identity"}, key=_KINDS.index))
        cause = GAPS.get(f"{model} {backend} {config}, Table 5", "")
        for part, kind in enumerate(kinds):
            ledger.record(paper.table5(model, backend, part), parts[part] * 1e3, cause, kind)
        cells = [f"{w:g} / {g * 1e3:.0f}" for w, g in zip(paper.TABLE5[(model, backend)], parts, strict=True)]
        lines.append(f"| {model} | {backend} | {' | '.join(cells)} |")
    return lines


def plot_latency(rows: list, path: Path) -> Path:
    """Stacked I/O, memory management and compute per configuration, paper (hatched) beside model; the
    baselines and "all" in two panels, each on a linear scale."""
    plt = pyplot()
    groups = [[r for r in rows if r[2] != "all"], [r for r in rows if r[2] == "all"]]
    fig, axes = plt.subplots(
        2, 1, figsize=(9, 0.42 * sum(map(len, groups)) + 2.5), gridspec_kw={"height_ratios": [len(g) for g in groups]}
    )
    for ax, mine, title in zip(axes, groups, ("naive and hybrid loading", 'the paper\'s method ("all")'), strict=True):
        for y, (_, _, _, want, got, _) in enumerate(mine):
            ours = (got.io * 1e3, got.mem * 1e3, got.compute * 1e3)
            for k, (vals, hatch) in enumerate(((want[:3], "//"), (ours, ""))):
                left = 0.0
                for v, color, name in zip(
                    vals, ("C0", "C1", "C2"), ("I/O", "memory management", "compute"), strict=True
                ):
                    ax.barh(
                        y + 0.4 * k,
                        v,
                        0.38,
                        left=left,
                        color=color,
                        hatch=hatch,
                        label=name if y == 0 and k == 1 else None,
                    )
                    left += v
        ax.set_yticks(np.arange(len(mine)) + 0.2, [f"{m}, {b}, {c}" for m, b, c, *_ in mine], fontsize=8)
        ax.invert_yaxis()
        ax.set_ylabel("model, backend, configuration")
        ax.set_xlabel("ms per token (hatched: paper, upper bar; plain: model, lower bar)")
        ax.set_title(f"LLM in a flash Table 3: latency per token, {title}", fontsize=10)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return save(fig, plt, path)


def report_lines(ctx) -> list[str]:
    out = ctx.out
    rows = table3()
    lines = [
        *flash_lines(),
        "",
        *table2_lines(),
        "",
        *table3_lines(rows),
        "",
        *table5_lines(rows),
        "",
        *headline_lines(rows),
        "",
        *budget_lines(),
        "",
        *predictor_lines(ctx.grid("flash-predictor", grids.predictor)),
        "",
    ]
    measured = bench.OUT / "flash_bench.json"
    res = bench.BenchResult.load(measured) if measured.exists() else None
    bench.plot(res, out / "flash_throughput.png")
    plot_latency(rows, out / "flash_latency.png")
    lines += [
        "This machine's flash (`membound flash-bench`): "
        + (
            f"{res.mode} reads on {res.filesystem}, fitted {res.model()}"
            if res
            else "not measured yet; run `membound flash-bench` and the plot overlays it"
        )
        + ".",
        "",
        "![latency per configuration](flash_latency.png) ![throughput vs chunk size](flash_throughput.png)",
    ]
    return lines
