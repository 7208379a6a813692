"""Hermes' simulation grids (the report's slow part, cached by ``sysmodel.report.Context.grid``): tokens/s per
model and batch against the baselines, the ablation and the multiplier sweep."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from sysmodel.cost.models import load_model
from sysmodel.designs.baselines import device_profile
from sysmodel.designs.hermes import model as hm
from sysmodel.designs.hermes import paper
from sysmodel.designs.hermes import workload as wl
from sysmodel.progress import progress


@lru_cache(maxsize=4)
def trace(model: str, batch: int, seed: int = 1) -> wl.Trace:
    return hm.paper_trace(load_model(model), batch, seed)


def runs(models: tuple[str, ...], batches: tuple[int, ...], efficiency: str = "attacc") -> list[dict]:
    """Tokens/s of Hermes and its baselines per model and batch, every GPU (Hermes' and the baselines') at the
    ``efficiency`` profile (sysmodel.cost.stage.PROFILES)."""
    hw, rows = replace(hm.Hardware(), eff=device_profile(efficiency, paper.GPU)), []
    bar = progress(len(models) * len(batches), "hermes")
    for m in models:
        for b in batches:
            tr = trace(m, b)
            run = hm.simulate(m, tr, hw)
            row = {
                "model": m,
                "batch": b,
                "Hermes": run.tokens_per_s,
                "decode share": sum(run.token_s) / (run.prefill_s + sum(run.token_s)),
                "cold GB/step": run.dimm_bytes / len(run.token_s) / 1e9,  # the batch's active cold weights
                "Hermes-host": hm.simulate(m, tr, hw, host=True).tokens_per_s,
            }
            for name in hm.BASELINES:
                if name in ("FlexGen", "Deja Vu") and m not in paper.OPT_MODELS:
                    continue
                row[name] = hm.baseline(name, m, hw, b, tr).tokens_per_s
            rows.append(row)
            bar.update()
    bar.close()
    return rows


def gpus(
    devices: tuple[str, ...] = ("rtx4090-hermes", "t4-hermes", "rtx3090-hermes"),
) -> dict[str, dict[str, float]]:
    """§V-E2: Hermes' tokens/s at batch 1 per GPU and per model of the sensitivity study, kept per model so the
    claim can average the per-model ratios as the paper does (:func:`sysmodel.designs.hermes.figures.gpus`); the GPU's
    weight budget scales with its memory (20 GB of 24 on the RTX 4090) [S]."""
    out = {}
    for d in devices:
        hw = hm.on_gpu(hm.Hardware(), d)
        out[d] = {m: float(hm.simulate(m, trace(m, 1), hw).tokens_per_s) for m in paper.GPU_SENSITIVITY_MODELS}
    return out


def ablation() -> dict[str, float]:
    """MLP-block seconds per step of LLaMA2-70B at batch 1 under each of the ablation's policies."""
    tr, hw = trace("llama2-70b", 1), hm.Hardware()
    return {p: hm.simulate("llama2-70b", tr, hw, p).mlp_s for p in hm.POLICIES}


def dse(mults: tuple[int, ...] = paper.DSE_MULTIPLIERS, efficiency: str = "attacc") -> list[list[float]]:
    """tokens/s of the DSE model at batches 1 and 16 for each multiplier count, the GPU at the ``efficiency``
    profile."""
    m, hw = paper.DSE_MODEL, replace(hm.Hardware(), eff=device_profile(efficiency, paper.GPU))
    return [[hm.simulate(m, trace(m, b), hm.with_multipliers(hw, k)).tokens_per_s for k in mults] for b in (1, 16)]
