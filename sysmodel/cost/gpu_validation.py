"""The calibrated GPU (:mod:`sysmodel.cost.gpu`) against the public measurements it was fitted to and held out of.

Two views, both computed here and rendered by :mod:`sysmodel.report.gpu`:

* per kernel class: every measured kernel of ``sysmodel/data/gpu_*.csv`` against its law, the rows held out
  of the fit apart (:func:`class_errors`);
* per iteration (:func:`iterations`): one transformer layer of a decode, prefill or mixed iteration through
  membound's own cost function (:func:`sysmodel.cost.stage.stage_time` on the ``calibrated`` profile) against the
  sum of the measured kernels of the same layer: norms, residual adds, QKV with rotary embedding, attention,
  output projection, FFN and, at tensor-parallel width > 1, two all-reduces of the layer's output (measured
  times interpolated in log-log between the table's sizes). Attention was measured for one shape only (64
  query / 8 KV heads at width 2 on the A100: CodeLlama-34B, Llama-2-70B and Meta-Llama-3-70B); every other
  row's layer is the rest of the iteration, attention left out of both sides (``attention`` False in the row).
"""

from __future__ import annotations

from itertools import pairwise, product

import numpy as np

from sysmodel.cost import gpu
from sysmodel.cost.devices import DEVICES
from sysmodel.cost.models import ModelConfig, StageShape
from sysmodel.cost.stage import ACT_BYTES, ALLREDUCES_PER_LAYER, ATTACC, CALIBRATED, Engine, stage_time, tp_allreduce

LAYER_KERNELS = ("norm_attn", "qkv", "rope", "o_proj", "norm_ffn", "ffn_up", "act", "ffn_down")
ADDS_PER_LAYER = 2  # a residual add after attention and after the FFN
DECODE_MAX = 128  # iterations of up to this many tokens are decode; the mixed ones are MIXED_CHUNK + requests
MIXED_CHUNK = 768


def class_errors(by_kernel: str | None = None) -> list[dict]:
    """Per GPU family and kernel class (``by_kernel``: per kernel of that class): rows, and the median and
    largest |modelled / measured - 1| of the rows fitted and of the rows held out."""
    out = []
    for fam, cls in product(gpu.FAMILY_DEVICE, gpu.CLASS_FIELDS if by_kernel is None else (by_kernel,)):
        s = gpu.samples(fam, cls)
        if not s.meta:
            continue
        err = np.abs(s.predict(DEVICES[gpu.FAMILY_DEVICE[fam]], gpu.kernel_fit(fam), cls) / s.measured - 1)
        held = np.array([m["held_out"] for m in s.meta])
        kernels = np.array([m["kernel"] if by_kernel else cls for m in s.meta])
        for name in dict.fromkeys(kernels):
            part = kernels == name
            row = {"gpu": fam, "class": name, "rows": int(part.sum()), "held_out": int((held & part).sum())}
            for label, mask in (("fit", ~held & part), ("held", held & part)):
                row[f"{label}_median"] = float(np.median(err[mask])) if mask.any() else float("nan")
                row[f"{label}_max"] = float(err[mask].max()) if mask.any() else float("nan")
            out.append(row)
    return out


def _config(r: dict) -> ModelConfig:
    """One layer of the profiled model (every model Vidur profiled is a gated, Llama-style decoder)."""
    return ModelConfig(
        r["model"], int(r["hidden"]), int(r["ffn"]), 1, int(r["heads"]), int(r["kv_heads"]), 32000, "silu", False, 3
    )


def _allreduce(fam: str, tp: int, nbytes: float) -> float:
    """Measured seconds of one all-reduce of ``nbytes`` over ``tp`` GPUs, log-log between table sizes."""
    rows = [r for r in gpu.read_table("allreduce") if r["gpu"] == fam and r["workers"] == tp]
    sizes, ms = np.log([r["bytes"] for r in rows]), np.log([r["ms"] for r in rows])
    return float(np.exp(np.interp(np.log(nbytes), sizes, ms))) * 1e-3


def _attention_cases(r: dict, attn: list[dict]) -> list[tuple[StageShape, float, str]]:
    """(stage, measured attention seconds, phase) of every iteration the attention table covers for
    kernel row ``r``: decode at ``tokens`` requests, a prefill chunk of ``tokens``, or a MIXED_CHUNK chunk
    with ``tokens`` - MIXED_CHUNK decode requests."""
    t, out = int(r["tokens"]), []
    for a in attn:
        if a["phase"] == "decode" and a["batch"] == t:
            out.append((StageShape.decode(t, a["kv"]), a["ms"] * 1e-3, "decode"))
        if a["phase"] == "prefill" and a["chunk"] == t:
            out.append((StageShape.prefill(1, t, a["kv"]), a["ms"] * 1e-3, "prefill"))
    pre = [a for a in attn if a["phase"] == "prefill" and a["chunk"] == MIXED_CHUNK]
    dec = [a for a in attn if a["phase"] == "decode" and a["batch"] == t - MIXED_CHUNK]
    for p, d in product(pre, dec):
        shape = StageShape.prefill(1, MIXED_CHUNK, p["kv"]) + StageShape.decode(t - MIXED_CHUNK, d["kv"])
        out.append((shape, (p["ms"] + d["ms"]) * 1e-3, "mixed"))
    return out


def _phase(tokens: int) -> str:
    return "decode" if tokens <= DECODE_MAX else "mixed" if tokens - MIXED_CHUNK in range(1, DECODE_MAX) else "prefill"


def iterations() -> list[dict]:
    """Every layer iteration the tables cover: gpu, model, tp, tokens, phase, whether attention is in it,
    whether it is held out of every fit (its model or width), measured seconds, modelled seconds on the
    calibrated profile and on the default (AttAcc's), and the layer's two all-reduces measured and modelled
    (in both totals)."""
    attn_rows = gpu.read_table("attention")
    out = []
    for r in gpu.read_table("kernels"):
        fam, tp, cfg = r["gpu"], int(r["tp"]), _config(r)
        engine = Engine(DEVICES[gpu.FAMILY_DEVICE[fam]], CALIBRATED, tp)
        attacc = Engine(engine.device, ATTACC, tp)
        rest = (sum(r[k] for k in LAYER_KERNELS) + ADDS_PER_LAYER * r["add"]) * 1e-3
        ar = ALLREDUCES_PER_LAYER * _allreduce(fam, tp, r["tokens"] * r["hidden"] * ACT_BYTES) if tp > 1 else 0.0
        shape_of = {"gpu": "a100", "hidden": r["hidden"], "heads": r["heads"], "kv_heads": r["kv_heads"], "tp": tp}
        attn = [a for a in attn_rows if all(a[k] == v for k, v in shape_of.items()) and fam == "a100"]
        cases = [(StageShape(tokens=r["tokens"]), 0.0, _phase(int(r["tokens"])), False)]
        cases += [(s, ms, ph, True) for s, ms, ph in _attention_cases(r, attn)]
        for shape, attn_s, phase, with_attn in cases:
            out.append(
                {
                    "gpu": fam,
                    "model": r["model"],
                    "tp": tp,
                    "tokens": int(r["tokens"]),
                    "phase": phase,
                    "attention": with_attn,
                    "held_out": gpu.held_out(r),
                    "measured_s": rest + ar + attn_s,
                    "modelled_s": float(stage_time(cfg, shape, engine)),
                    "measured_allreduce_s": ar,
                    "modelled_allreduce_s": float(tp_allreduce(cfg, shape, engine)),
                    "attacc_s": float(stage_time(cfg, shape, attacc)),
                }
            )
    return out


# Bounds of the GEMM law's compute / memory ratio that :func:`gemm_balance_errors` groups rows by
BALANCE_BINS = (0.0, 0.8, 1.6, 2.5, np.inf)


def gemm_balance_errors() -> list[dict]:
    """Per GPU family and bin of the GEMM law's compute / memory ratio (:data:`BALANCE_BINS`): rows and the
    median and largest modelled / measured - 1 of every measured GEMM (fitted and held out)."""
    out = []
    for fam in gpu.FAMILY_DEVICE:
        s, dev, fit = gpu.samples(fam, "gemm"), DEVICES[gpu.FAMILY_DEVICE[fam]], gpu.kernel_fit(fam)
        compute, memory = gpu.gemm_terms(dev, fit, *s.args)
        err, ratio = s.predict(dev, fit, "gemm") / s.measured - 1, compute / memory
        for lo, hi in pairwise(BALANCE_BINS):
            part = (ratio >= lo) & (ratio < hi)
            row = {"gpu": fam, "low": lo, "high": hi, "rows": int(part.sum())}
            row |= {"median": float(np.median(err[part])), "min": float(err[part].min())} if part.any() else {}
            out.append(row)
    return out
