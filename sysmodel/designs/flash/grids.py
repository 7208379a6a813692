"""LLM in a flash's slow report grid (cached by ``sysmodel.report.Context.grid``): the low-rank predictor
trained on synthetic activations, and the neuron cache's traffic on its masks."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from sysmodel.designs.flash import paper
from sysmodel.designs.flash import predictor as pr
from sysmodel.designs.flash.cache import NeuronCache
from sysmodel.designs.flash.store import FFN


def predictor() -> dict:
    """The predictor's error rates at two ranks, and per window size the cache's loaded and held shares."""
    p = pr.Synthetic()
    data = pr.synthetic(10000, p, seed=1)
    n = int(data.x.shape[0] * 0.8)
    train, test = pr.Activations(data.x[:n], data.active[:n]), pr.Activations(data.x[n:], data.active[n:])
    rates = []
    for rank in (p.rank // 2, 2 * p.rank):
        model = pr.train(train, rank, epochs=20)
        q = pr.evaluate(model, test)
        rates.append({"rank": rank, "fnr": q.fnr, "fpr": q.fpr, "predicted": q.predicted, "active": q.active})
    ffn, window = FFN.random(p.d_model, p.d_ff, seed=2), []
    for k in (1, 2, paper.WINDOW_TOKENS, 8):
        cache = NeuronCache(ffn, ffn.bias, p.d_ff, k)
        stats = [cache.step(a) for a in model.predict(test.x)]
        loaded, used = (float(np.mean([getattr(s, f) for s in stats[k:]])) / p.d_ff for f in ("loaded", "used"))
        window.append({"k": k, "loaded": loaded, "used": used, "max": max(s.used for s in stats) / p.d_ff})
    return {"synthetic": asdict(p), "train": n, "test": data.x.shape[0] - n, "rates": rates, "window": window}
