"""The report's "GPU model" section: the calibrated GPU (:mod:`sysmodel.cost.gpu`) against the public kernel
measurements (:mod:`sysmodel.cost.gpu_validation` computes; this module renders): the per-class error table, the
per-iteration summary, modelled against measured iteration time on log-log axes with the 10% band, and what
the profile changes on a GPU-only decode step beside the default (AttAcc's) profile."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from sysmodel.cost import gpu, gpu_validation
from sysmodel.cost.devices import get_device
from sysmodel.cost.models import load_model
from sysmodel.cost.stage import ATTACC, CALIBRATED, Engine, decode_step
from sysmodel.report.plots import log_axis, pyplot, save

BAND = 0.10
EXAMPLES = (("llama2-70b", "a100-80g-sxm", 8, 32, 2048), ("llama2-13b", "h100-sxm", 2, 64, 1024))


def plot(rows: list[dict], path: Path) -> Path:
    """Modelled against measured seconds per layer iteration, one point per shape, the 10% band shaded."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 5.0))
    lo = min(min(r["measured_s"], r["modelled_s"]) for r in rows) * 1e3 / 1.3
    hi = max(max(r["measured_s"], r["modelled_s"]) for r in rows) * 1e3 * 1.3
    xs = np.geomspace(lo, hi, 50)
    ax.fill_between(xs, xs * (1 - BAND), xs * (1 + BAND), color="0.85", label="within 10%", zorder=1)
    ax.plot(xs, xs, "k-", lw=0.6, zorder=2)
    for i, phase in enumerate(("decode", "prefill", "mixed")):
        for held, marker in ((False, "o"), (True, "x")):
            sel = [r for r in rows if r["phase"] == phase and r["held_out"] == held]
            label = f"{phase}, {'held out' if held else 'fitted model and width'}"
            ax.scatter(
                [r["measured_s"] * 1e3 for r in sel],
                [r["modelled_s"] * 1e3 for r in sel],
                s=12,
                marker=marker,
                color=f"C{i}",
                label=label,
                zorder=3,
            )
    log_axis(ax.xaxis)
    log_axis(ax.yaxis)
    ax.set_xlabel("measured layer iteration (ms, Vidur A100/H100 kernels)")
    ax.set_ylabel("modelled layer iteration (ms, calibrated profile)")
    ax.set_title("Calibrated GPU: modelled vs measured iteration time", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, which="both", lw=0.3)
    return save(fig, plt, path)


def class_error_lines(rows: list[dict] | None = None) -> list[str]:
    """The per-class error table (Markdown, no caption) of ``rows`` (default: computed now,
    :func:`sysmodel.cost.gpu_validation.class_errors`): the report's and `make bench`'s."""
    lines = [
        "| GPU | class | rows | held out | fitted median | fitted max | held-out median | held-out max |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in gpu_validation.class_errors() if rows is None else rows:
        lines.append(
            f"| {r['gpu']} | {r['class']} | {r['rows']} | {r['held_out']} | {r['fit_median']:.1%} | "
            f"{r['fit_max']:.1%} | {r['held_median']:.1%} | {r['held_max']:.1%} |"
        )
    return lines


def _iteration_table(rows: list[dict]) -> list[str]:
    from sysmodel.report import caption

    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        key = (r["gpu"], "whole layer" if r["attention"] else "layer without attention", r["phase"], r["held_out"])
        groups[key].append(abs(r["modelled_s"] / r["measured_s"] - 1))
    lines = [
        caption("Calibrated GPU per layer iteration: |modelled / measured - 1| by phase"),
        "| GPU | iteration | phase | held out | rows | median | max | rows over 10% |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for (fam, what, phase, held), errs in sorted(groups.items()):
        e = np.array(errs)
        lines.append(
            f"| {fam} | {what} | {phase} | {'yes' if held else 'no'} | {len(e)} | {np.median(e):.1%} | "
            f"{e.max():.1%} | {(e > BAND).sum()} |"
        )
    return lines


def balance_lines(rows: list[dict] | None = None) -> list[str]:
    """The GEMM law's error by its compute / memory ratio (Markdown, no caption) of ``rows`` (default: computed
    now, :func:`sysmodel.cost.gpu_validation.gemm_balance_errors`): the report's and `make bench`'s."""
    lines = ["| GPU | compute / memory | rows | median | lowest |", "| --- | --- | ---: | ---: | ---: |"]
    for r in gpu_validation.gemm_balance_errors() if rows is None else rows:
        if r["rows"]:
            lines.append(
                f"| {r['gpu']} | {r['low']:g}-{r['high']:g} | {r['rows']} | {r['median']:+.1%} | {r['min']:+.1%} |"
            )
    return lines


def _against_default(rows: list[dict]) -> list[str]:
    from sysmodel.report import caption

    lines = [
        caption("Whole layer iterations (A100, width 2): modelled / measured time on each profile"),
        "| phase | rows | attacc median | attacc range | calibrated median | calibrated range |",
        "| --- | ---: | ---: | --- | ---: | --- |",
    ]
    for phase in ("decode", "prefill", "mixed"):
        sel = [r for r in rows if r["attention"] and r["phase"] == phase]
        att = np.array([r["attacc_s"] / r["measured_s"] for r in sel])
        cal = np.array([r["modelled_s"] / r["measured_s"] for r in sel])
        lines.append(
            f"| {phase} | {len(sel)} | {np.median(att):.2f} | {att.min():.2f}-{att.max():.2f} | "
            f"{np.median(cal):.2f} | {cal.min():.2f}-{cal.max():.2f} |"
        )
    return lines


def _examples() -> list[str]:
    from sysmodel.report import caption

    lines = [
        caption("One decode step on the GPU-only system: the default (AttAcc's) profile against the calibrated one"),
        "| model | GPUs | batch x context | attacc ms | calibrated ms | calibrated / attacc |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for model, device, count, batch, ctx in EXAMPLES:
        cfg, dev = load_model(model), get_device(device)
        att = float(decode_step(cfg, Engine(dev, ATTACC, count), batch, ctx))
        cal = float(decode_step(cfg, Engine(dev, CALIBRATED, count), batch, ctx))
        lines.append(
            f"| {model} | {count} x {device} | {batch} x {ctx} | {att * 1e3:.2f} | {cal * 1e3:.2f} | {cal / att:.2f} |"
        )
    return lines


def report_lines(ctx) -> list[str]:
    from sysmodel.report import caption

    rows = gpu_validation.iterations()
    path = plot(rows, Path(ctx.out) / "gpu_model.png")
    fit = gpu.kernel_fit("a100")
    return [
        "`--set efficiency=calibrated` (never a default: every paper section keeps its own method) runs a GPU's "
        "operators on per-kernel cost laws (sysmodel/cost/gpu.py): GEMMs as the fastest of CUTLASS's tile shapes, each "
        "tile "
        "bound by its FLOPs or its operand reads, run in waves (split-K when SMs idle) or as stream-K (up to "
        f"{gpu.GEMV_MAX_ROWS} rows also as a matrix-vector kernel on the CUDA cores), FlashAttention "
        "prefill, paged decode attention, vLLM's row kernels (norms, activation, rotary: a thread block per token) and "
        "the flat residual add, NCCL all-reduces. The tile shapes, stream-K tile and split-K depth are inputs (the "
        "CUTLASS docs and generator, the stream-K example), the decode attention blocks per SM and the "
        "skinny-GEMM bound read off the "
        "measurements' steps; every other constant is a fit to Vidur's "
        f"public profiling data ({gpu.SOURCES['kernels']}; {gpu.SOURCES['attention']}; {gpu.SOURCES['allreduce']}), "
        f"held out of every fit: {gpu.HELD_OUT_MODEL}, tensor-parallel width {gpu.HELD_OUT_TP} and the A100's "
        f"{' and '.join(gpu.VALIDATION_ONLY)} (validation only). A100 fit: GEMM "
        f"{fit.gemm_compute:.2f} of peak FLOP/s, {fit.gemm_memory:.2f} of peak bandwidth up to {gpu.SKINNY_M} rows "
        f"({fit.gemm_memory_wide:.2f} beyond), operands at {fit.gemm_operand_bw / 1e12:.1f} TB/s; prefill attention "
        f"{fit.prefill_causal:.2f} of peak on causal pairs, "
        f"{fit.prefill_prefix:.2f} on prefix pairs; all-reduce {fit.ar_alpha_s * 1e6:.0f} us per call, "
        f"{fit.ar_busbw / 1e9:.0f} GB/s bus bandwidth. The H100 has no public attention table: it takes the A100's "
        "attention fractions. Energy follows: the static term runs for the calibrated time.",
        "",
        caption("Calibrated GPU per kernel class: |modelled / measured - 1| on the rows fitted and held out"),
        *class_error_lines(),
        "",
        caption("The element-wise class by kernel (the residual add a flat kernel, the others vLLM row kernels)"),
        *class_error_lines(gpu_validation.class_errors("elementwise")),
        "",
        caption("GEMMs by the law's compute / memory ratio: modelled / measured - 1 (the law takes the longer term)"),
        *balance_lines(),
        "",
        "A layer iteration is measured as the sum of its measured kernels (two all-reduces at width > 1). Attention "
        "was measured for one shape (64 query / 8 KV heads, width 2, A100: CodeLlama-34B, Llama-2-70B and "
        "Meta-Llama-3-70B), so only those rows are whole layers; the rest leave attention out of both sides. Small "
        "all-reduces switch between a fast (15-35 us) and a slow (~60 us) mode over runs of consecutive sizes in "
        "the measurements (Vidur swept the sizes in order, 3 timed steps each); the table's thinned sizes caught "
        "mostly the fast runs at the A100's held-out 4 workers (median 22 us) while all its 63 rows from 16 kB to "
        "1 MB have a median of 42 us, as 2 and 8 workers' (47, 46): that sampling sets the spread of the decode "
        "rows with all-reduces in. NCCL's own latency model (src/graph/tuning.cc) stays under 11 us, below both.",
        "",
        *_iteration_table(rows),
        "",
        *_against_default(rows),
        "",
        f"![Calibrated GPU: modelled against measured layer iteration time, 10% band]({path.name})",
        "",
        *_examples(),
    ]
