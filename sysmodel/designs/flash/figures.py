"""LLM in a flash's report figures as data (numbers, dicts, named tuples; no Markdown): the read model at the
paper's throughput points (§2.2, Fig. 2b, Table 2), Table 2's I/O, Table 3's rows with each part's mark, the
speedups and App. C's per-token figures derived from them, the DRAM budgets and sizes (App. B.3, C.1, C.2),
and the window's trends on the synthetic predictor's masks (§3.1). ``sysmodel.designs.flash.claims`` turns them into
ledger rows, which ``sysmodel.designs.flash.report`` prints; Table 3's rows and the grid read, which both use, are
computed once per report (``functools.cache``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from sysmodel.cost.devices import FlashModel
from sysmodel.cost.models import load_model
from sysmodel.designs.flash import grids, paper
from sysmodel.designs.flash import model as lat

if TYPE_CHECKING:
    from sysmodel.report import Context

KIB = paper.KIB
SEQUENTIAL = 1 << 30  # a chunk this large reads at the sequential cap
# the read model's l0 and B are fitted to the 8 and 16 KiB points (notes §3.1); the sequential cap is given
READ_KINDS = {8 * KIB: "fit", 16 * KIB: "fit", SEQUENTIAL: "input"}
Key = tuple[str, str, str]  # (model, backend, configuration) of a Table 3 row


def read_points() -> dict[int, float]:
    """chunk bytes -> the read model's throughput (GB/s) at the points the paper states (§2.2, Table 2, §4.2)."""
    m = FlashModel()
    return {c: m.throughput(c) / 1e9 for c in READ_KINDS}


def read_trends() -> dict[str, float]:
    """Fig. 2b's trends in the read model: 32 KiB over 8 KiB chunks, 32 over 16 threads (8 KiB chunks)."""
    m, small = FlashModel(), 8 * KIB
    return {
        "throughput by chunk": m.throughput(4 * small) / m.throughput(small),
        "throughput by threads": m.throughput(small) / m.throughput(small, 16),
    }


def table2_io() -> dict[str, tuple[float, float]]:
    """Table 2: configuration -> (the read model's throughput at its chunk in B/s, its I/O per token in ms)."""
    m = FlashModel()
    out = {}
    for name, (gb, chunk, _) in paper.TABLE2.items():
        thr = m.throughput(chunk)
        out[name] = (thr, gb * 1e9 / thr * 1e3)
    return out


def window_dram_gb() -> float:
    """Table 2's DRAM of +windowing: the App. C.1 budget (its [Q] shares) of OPT-6.7B's 13.4 GB."""
    return lat.dram_share(load_model("opt-6.7b")) * paper.NAIVE_BYTES / 1e9


class Table3Row(NamedTuple):
    model: str
    backend: str
    config: str
    want: tuple[float, ...]  # the paper's I/O, memory management, compute, total (ms)
    got: lat.Latency
    marks: tuple[str, ...]  # per part (I/O, mem, compute): fit, input, identity or pred


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


@cache
def table3() -> tuple[Table3Row, ...]:
    """Table 3's rows in the paper's order, the model's latency and each part's mark."""
    cal = lat.calibration()
    out = []
    for (model, backend), cells in paper.TABLE3.items():
        cfg = load_model(model)
        for config, want in cells.items():
            got = lat.latency(cfg, cal[backend], config)
            marks = tuple(_mark(backend, config, p, model) for p in range(3))
            out.append(Table3Row(model, backend, config, want, got, marks))
    return tuple(out)


def table3_index() -> dict[Key, Table3Row]:
    return {(r.model, r.backend, r.config): r for r in table3()}


def part_kind(mark: str) -> str:
    """A Table 3 part's ledger kind from its mark."""
    return {"pred": "prediction"}.get(mark, mark)


_KINDS = ("prediction", "input", "fit")  # weakest last: a value with a fitted part is a fit


def weakest(marks: Iterable[str]) -> str:
    """The kind of a value derived from parts so marked: the weakest of them (a zero by construction does not
    weaken it)."""
    return max(set(map(part_kind, marks)) - {"identity"} | {"prediction"}, key=_KINDS.index)


def kind_of(*keys: Key, parts: tuple[int, ...] = (0, 1, 2)) -> str:
    """The kind of a value derived from the ``parts`` of the Table 3 rows ``keys``."""
    rows = table3_index()
    return weakest(rows[k].marks[p] for k in keys for p in parts)


def speedups(over: str) -> dict[tuple[str, str], float]:
    """(model, backend) -> the model's total of ``over`` / its total of "all", for each row that has both."""
    rows = table3_index()
    return {
        (m, b): rows[(m, b, over)].got.total / rows[(m, b, "all")].got.total
        for (m, b, c) in rows
        if c == over and (m, b, "all") in rows
    }


def speedups_stated() -> dict[tuple[str, str], tuple[float, str]]:
    """The speedups the paper states, each -> (model value, kind): ("up to", backend) of §1 (the best of the
    backend family's rows; Metal: M1 and M2), ("range", backend) of §7 on OPT-6.7B, and ("text", key) of
    ``paper.TEXT``: §4.2's "every row" (the worst row) and App. C.4-C.5's Phi-2 and Llama 2 rows."""
    naive, hybrid = speedups("naive"), speedups("hybrid")
    out = {}
    for backend in ("cpu", "metal-m2", "gpu"):
        family = {k: v for k, v in naive.items() if k[1].split("-")[0] == backend.split("-")[0]}
        best = max(family, key=family.get)
        out[("up to", backend)] = family[best], kind_of((*best, "naive"), (*best, "all"))
    for backend in paper.SPEEDUP_RANGE:
        key = ("opt-6.7b", backend)
        out[("range", backend)] = naive[key], kind_of((*key, "naive"), (*key, "all"))
    for over, ratios in (("naive", naive), ("hybrid", hybrid)):
        worst = min(ratios, key=ratios.get)
        out[("text", f"over {over}")] = ratios[worst], kind_of((*worst, over), (*worst, "all"))
    for model, tag in (("phi-2", "phi"), ("llama2-7b", "llama")):
        for over, ratios in (("naive", naive), ("hybrid", hybrid)):
            kind = kind_of((model, "cpu", over), (model, "cpu", "all"))
            out[("text", f"{tag} over {over}")] = ratios[(model, "cpu")], kind
    return out


def text_figures() -> dict[str, tuple[float, str]]:
    """App. C.1 and C.2's per-token figures in the text, from the model's Table 3 rows: the paper's claim key
    (``paper.TEXT``) -> (model value, kind)."""
    opt_all, gpu_naive = ("opt-6.7b", "cpu", "all"), ("opt-6.7b", "gpu", "naive")
    fal_all, fal_naive = ("falcon-7b", "cpu", "all"), ("falcon-7b", "cpu", "naive")
    rows = table3_index()
    opt, gpu, falcon = rows[opt_all].got, rows[gpu_naive].got, rows[fal_all].got
    io_mem = (0, 1)
    return {
        "opt memory-related": ((opt.io + opt.mem) * 1e3, kind_of(opt_all, parts=io_mem)),
        "gpu naive io": (gpu.io / 2.0, kind_of(gpu_naive, parts=(0,))),  # over 2000 ms
        "falcon mem": (falcon.mem * 1e3, kind_of(fal_all, parts=(1,))),
        "falcon memory-related": ((falcon.io + falcon.mem) * 1e3, kind_of(fal_all, parts=io_mem)),
        "falcon over naive": (
            rows[fal_naive].got.io / (falcon.io + falcon.mem),
            kind_of(fal_all, fal_naive, parts=io_mem),
        ),
    }


def shares(model: str) -> dict[str, float]:
    """The parts of the "all" DRAM budget, % of the model (App. C.1, C.2): the weights' split and the window's
    FFN rows."""
    cfg = load_model(model)
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


def dram_percent(model: str) -> float:
    """The "all" configuration's DRAM budget, % of the model (App. C.1-C.3)."""
    return lat.dram_share(load_model(model)) * 100


def bundle_kib(model: str) -> float:
    """An fp32 row-column bundle in KiB (App. C.1, C.2)."""
    return lat.bundle_bytes(load_model(model), 4) / 1024


def opt_sizes() -> dict[str, float]:
    """The other sizes of OPT-6.7B the text states, by their ``paper.TEXT`` key: the bundle over a row (§3.2),
    the predictors' mean rank and share of the non-embedding weights (App. B.3), the KV cache at 2048 tokens
    (App. C, fn. 2)."""
    opt = load_model("opt-6.7b")
    w, ranks = lat.weights(opt), paper.PREDICTOR_RANKS["opt-6.7b"]
    embeddings = shares("opt-6.7b")["embeddings"] / 100 * w["total"]
    return {
        "bundle doubles": lat.bundle_bytes(opt, 1) / opt.hidden,
        "predictor rank": sum(ranks) / len(ranks),
        "predictor weights": w["predictor"] / (w["total"] - embeddings) * 100,
        "kv share": opt.kv_bytes_per_token(1) * 2048 / w["total"] * 100,
    }


@cache
def predictor_stats(ctx: Context) -> dict:
    """The predictor's rates and the neuron cache's traffic on synthetic activations (the cached grid
    :func:`sysmodel.designs.flash.grids.predictor`), read once per report."""
    return ctx.grid("flash-predictor", grids.predictor)


def window_trends(stats: dict) -> dict[str, float]:
    """§3.1's window trends, the smallest k against the largest: a larger k loads less per token and holds
    more in DRAM (by construction of the neuron cache)."""
    first, last = stats["window"][0], stats["window"][-1]
    return {"window loads less": first["loaded"] / last["loaded"], "window holds more": last["used"] / first["used"]}
