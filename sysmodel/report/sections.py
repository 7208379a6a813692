"""The report's sections on the shared engines: the arithmetic library's measured cycle models, the baselines,
the energy basis (and, with the memory engine's tables, in :mod:`sysmodel.report.memory`). The engines compute and
return data; these functions only render it."""

from __future__ import annotations

from hw.arith.cycles import UNITS as ARITH_UNITS
from sysmodel.cost import characterization
from sysmodel.cost.devices import SPR_CLOCK_HZ, SPR_CORES
from sysmodel.cost.energy import DECA_PES_W, FLOP_PJ, LINK_PJ, MEMORIES, STATIC_SHARE, VOP_PJ
from sysmodel.cost.stage import ATTACC
from sysmodel.designs.baselines import (
    ATTACC_DIFFERENCES,
    ATTACC_LIN,
    ATTACC_LOUT,
    HBM_PIM_FACTOR,
    attacc_anchor,
    cpu_only,
    gpu_only,
    hbm_pim_attention,
    offload_pcie,
)
from sysmodel.report import caption


def arith_lines(ctx=None) -> list[str]:
    """The arithmetic library's measured RTL cycle models, from the snapshot."""
    recs = [m for m in characterization.load() if m.unit in ARITH_UNITS]
    if not recs:
        return ["No characterization snapshot yet: run `make characterize`."]
    lines = [
        caption(
            "The arithmetic units' measured latency and initiation interval (RTL testbenches, bit-exact "
            "against golden on the vectors counted)"
        ),
        "| unit | parameters | latency (cycles) | II | vectors checked | simulator | date |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for m in recs:
        params = ", ".join(f"{k}={v}" for k, v in m.params.items())
        lines.append(f"| {m.unit} | {params} | {m.latency} | {m.ii:g} | {m.vectors} | {m.simulator} | {m.date} |")
    return lines


def baselines_lines(ctx=None) -> list[str]:
    rows = [
        gpu_only("llama2-7b", batch=16, kv_len=4096),
        hbm_pim_attention("llama2-7b", batch=16, kv_len=4096),
        offload_pcie("opt-30b", batch=1),
        cpu_only("llama2-70b"),
        gpu_only("llama2-70b", gpus=2),
    ]
    lines = [
        f"GPU profile: {ATTACC.source}; compute {ATTACC.compute}, memory {ATTACC.memory}. HBM-PIM "
        f"internal bandwidth {HBM_PIM_FACTOR}x external (L3 §6.1).",
        "",
        caption("One decode step of each baseline on a representative model and batch"),
        "| system | model | batch | step ms | tokens/s |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    models = ["llama2-7b (4K ctx)", "llama2-7b (4K ctx)", "opt-30b", "llama2-70b", "llama2-70b"]
    for r, m in zip(rows, models, strict=True):
        lines.append(f"| {r.system} | {m} | {r.batch} | {r.seconds * 1e3:.2f} | {r.tokens_per_s:.1f} |")
    lines += [
        "",
        "### External anchor: the AttAcc simulator (scale-snu/attacc_simulator)",
        "",
        f"GPT-175B on 8x A100 with HBM3 ('A100a'), {ATTACC_LIN} input / {ATTACC_LOUT} output tokens, "
        "decode throughput as AttAcc reports it (prefill excluded). AttAcc values are its main.py outputs.",
        "",
        caption(
            "membound's GPU-only and HBM-PIM baselines against the AttAcc simulator's outputs, "
            f"GPT-175B on 8 x A100-HBM3, {ATTACC_LIN}/{ATTACC_LOUT} tokens"
        ),
        "| system | batch | AttAcc tokens/s | membound tokens/s | ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['system']} | {r['batch']} | {r['attacc']} | {r['model']:.2f} | {r['ratio']:.3f} |"
        for r in attacc_anchor()
    ]
    lines += ["", "Modelling differences that remain:", ""] + [f"- {d}" for d in ATTACC_DIFFERENCES]
    return lines


def energy_lines() -> list[str]:
    """The basis as Markdown: every constant with its source."""
    lines = [
        caption("The energy basis every system's J/token is priced on, with sources"),
        "| item | pJ | source |",
        "| --- | ---: | --- |",
    ]
    for m in MEMORIES.values():
        for path in m.paths:
            lines.append(f"| {m.name} read, {path} path (per bit) | {m.pj_per_bit(path):.3g} | {m.source} |")
    lines += [
        f"| FP16 FLOP (any MAC array) | {FLOP_PJ:.3g} | [EXT] AttAcc ALU energy |",
        f"| decompression vector op (32 elements) | {VOP_PJ:.3g} | [D] DECA §7: {DECA_PES_W} W / "
        f"({SPR_CORES} PEs x {SPR_CLOCK_HZ / 1e9:g} GHz) |",
    ]
    lines += [f"| {k} (per bit) | {v:.3g} | see sysmodel/cost/energy.py |" for k, v in LINK_PJ.items()]
    lines.append(f"| static power | {STATIC_SHARE:.0%} of TDP | [S] every device alike |")
    return lines
