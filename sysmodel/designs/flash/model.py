"""LLM in a flash's per-token latency model: I/O + memory management + compute (§2-4; notes §3.1, §3.5).

- **I/O** = flash->DRAM bytes / throughput(chunk) (:class:`sysmodel.cost.devices.FlashModel`). Naive loads every
  weight a token reads, i.e. all but an untied input embedding table (a lookup), in fp16 bytes also for
  float32 runs (the paper's "best theoretical numbers", notes §3.5 #3): Llama 2's 2166 ms is exactly that;
  hybrid loads the part not resident; "all" loads the window's increment of FFN bundles, each bundle
  ``ffn_matrices * d_model`` values (row-column bundling).
- **Memory management** = (bundles inserted + rows moved on delete) bytes / memcpy bandwidth. In steady
  state a window evicts what it loads, so the bytes are 2 x the loaded bytes (§3.3, notes §3.2(e)).
- **Compute** = weight bytes read per token / an effective bandwidth (decode is memory bound): naive and
  hybrid read every weight; "all" reads the DRAM-resident part, i.e. attention, the head, the predictors and
  the window's FFN rows (it computes from ``matrix[:num_used]``). The input embedding table is a lookup,
  never read whole.

Calibration (:func:`calibration`), each constant computed from one named Table 3 cell, so that cell is a
**fit** and is labelled so in the report: the effective compute bandwidth per backend (from OPT-6.7B's naive
compute), memcpy bandwidth per backend (OPT's "all" memory-management cell), the flash throughput of the
M2 Ultra and of the Linux RTX 4090 machine (the paper gives no curve for them), and a sparse-kernel factor for
Metal and the GPU (their "all" compute is far above bytes / bandwidth: the paper reports MPS "performance
cliffs" under shape dynamism, App. A). Everything else is predicted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from sysmodel.cost.devices import FlashModel
from sysmodel.cost.models import ModelConfig, StageShape, load_model
from sysmodel.designs.flash import paper

MS = 1e-3


def weights(cfg: ModelConfig) -> dict[str, float]:
    """Parameter counts: ``total``, ``ffn``, ``lookup`` (an untied input embedding, never read whole),
    ``predictor`` (the low-rank predictors' weights, from the paper's ranks)."""
    ranks = paper.PREDICTOR_RANKS.get(cfg.name, [])
    return {
        "total": cfg.params(),
        "ffn": cfg.layers * cfg.ffn_params(),
        "lookup": 0 if cfg.tied_embeddings else cfg.vocab * cfg.hidden,
        "predictor": sum(ranks) * (cfg.hidden + cfg.intermediate),
    }


def window_share(cfg: ModelConfig) -> tuple[float, str]:
    """The share of the FFN the window keeps in DRAM, and where it comes from."""
    if cfg.name in paper.WINDOW_FFN:
        return paper.WINDOW_FFN[cfg.name], "[Q] §3.1"
    if cfg.name in paper.FFN_LIMIT:
        return paper.FFN_LIMIT[cfg.name], "[Q] App. C memory limit"
    w = weights(cfg)
    rest = (w["total"] - w["ffn"] + w["predictor"]) / w["total"]
    if cfg.name in paper.RESIDENT:
        return (paper.RESIDENT[cfg.name] - rest) * w["total"] / w["ffn"], "[D] the model's DRAM limit (App. C)"
    return max(paper.DEFAULT_RESIDENT - rest, 0.0) * w["total"] / w["ffn"], "[S] half the model in DRAM (§6)"


def dram_share(cfg: ModelConfig) -> float:
    """Resident share of the model in the "all" configuration: all but the FFN, the predictors, the window."""
    w = weights(cfg)
    return (w["total"] - w["ffn"] + w["predictor"] + window_share(cfg)[0] * w["ffn"]) / w["total"]


def bundle_bytes(cfg: ModelConfig, value_bytes: int) -> int:
    return cfg.ffn_matrices * cfg.hidden * value_bytes


@dataclass(frozen=True)
class Backend:
    """A Table 3 backend: its flash, weight precision and calibrated rates (B/s)."""

    name: str
    value_bytes: int
    flash: FlashModel  # random bundle reads
    naive_bw: float  # the sequential whole-model read of naive and hybrid
    compute_bw: float
    memcpy_bw: float
    sparse_factor: float = 1.0  # "all" compute time over bytes / compute_bw (1: same kernels' efficiency)


@dataclass(frozen=True)
class Latency:
    io: float
    mem: float
    compute: float

    @property
    def total(self) -> float:
        return self.io + self.mem + self.compute


def increment(cfg: ModelConfig, backend: Backend) -> tuple[float, str]:
    """The FFN share loaded per token in "all": stated [Q], or implied by the paper's I/O cell [D, fit]."""
    if cfg.name in paper.INCREMENT:
        return paper.INCREMENT[cfg.name], "[Q] §3.1"
    if (cfg.name, "cpu") not in paper.TABLE3:
        inc = paper.FAMILY_INCREMENT.get(cfg.name.split("-")[0], paper.DEFAULT_INCREMENT)
        return inc, "[S] the family's increment (OPT's for native ReLU, Falcon's otherwise)"
    io = paper.TABLE3[(cfg.name, "cpu")]["all"][0] * MS
    ffn_bytes = weights(cfg)["ffn"] * backend.value_bytes
    return io * backend.flash.throughput(
        bundle_bytes(cfg, backend.value_bytes)
    ) / ffn_bytes, "[D] implied by the paper's I/O cell (a fit)"


def latency(cfg: ModelConfig, backend: Backend, config: str) -> Latency:
    """Per-token latency (s) of ``config`` in naive, hybrid, all (module docstring)."""
    w, b = weights(cfg), backend.value_bytes
    dense = (w["total"] - w["lookup"]) * b / backend.compute_bw
    naive_io = (w["total"] - w["lookup"]) * 2 / backend.naive_bw
    if config == "naive":
        return Latency(naive_io, 0.0, dense)
    if config == "hybrid":
        return Latency(naive_io * (1 - paper.RESIDENT.get(cfg.name, paper.DEFAULT_RESIDENT)), 0.0, dense)
    if config != "all":
        raise ValueError(f"config: {config!r} not allowed; naive, hybrid, all")
    loaded = increment(cfg, backend)[0] * w["ffn"] * b
    io = loaded / backend.flash.throughput(bundle_bytes(cfg, b))
    resident = dram_share(cfg) * w["total"] - w["lookup"]
    return Latency(io, 2 * loaded / backend.memcpy_bw, resident * b / backend.compute_bw * backend.sparse_factor)


def _cell(backend: str, config: str, part: int) -> float:
    return paper.TABLE3[("opt-6.7b", backend)][config][part] * MS


@cache
def calibration() -> dict[str, Backend]:
    """The four Table 3 backends, each constant computed from one OPT-6.7B cell (module docstring)."""
    opt = load_model("opt-6.7b")
    w = weights(opt)
    m1 = FlashModel()  # M1 Max SSD: the paper's throughput points (devices.FlashModel)
    out = {}
    for name, b in paper.BACKEND_BYTES.items():
        compute_bw = (w["total"] - w["lookup"]) * b / _cell(name, "naive", 2)
        loaded = paper.INCREMENT[opt.name] * w["ffn"] * b
        flash, naive_bw = m1, m1.seq_peak  # the GPU machine's naive row uses the same 6.1 GB/s (Table 3)
        if name == "metal-m2":  # M2 Ultra: its naive rate from its naive cell
            naive_bw = (w["total"] - w["lookup"]) * 2 / _cell(name, "naive", 0)
        if name in ("metal-m2", "gpu"):  # bundled reads: the M1 curve scaled to the "all" I/O cell
            scale = loaded / _cell(name, "all", 0) / m1.throughput(bundle_bytes(opt, b))
            flash = FlashModel(seq_peak=float("inf"), per_thread_bw=m1.per_thread_bw * scale, l0=m1.l0 / scale)
        be = Backend(name, b, flash, naive_bw, compute_bw, 2 * loaded / _cell(name, "all", 1))
        if name != "cpu":  # CPU sparse compute is predicted with the dense efficiency; the others are fitted
            be = replace(be, sparse_factor=_cell(name, "all", 2) / latency(opt, be, "all").compute)
        out[name] = be
    return out


# which Table 3 parts each calibration constant was computed from: (backend, config, part index)
FITTED = (
    {("cpu", "naive", 2), ("cpu", "all", 1)}
    | {(b, c, p) for b in ("metal-m1", "metal-m2", "gpu") for c, p in (("naive", 2), ("all", 1), ("all", 2))}
    | {("metal-m2", "naive", 0), ("metal-m2", "all", 0), ("gpu", "all", 0)}
)


# --- LLM in a flash as a serving system --------------------------------------------------------------------


class FlashSystem:
    """LLM in a flash on the serving engine (`flash`): a device whose DRAM holds the non-FFN weights, the
    predictors and the window's FFN neurons; each decode token loads the window's increment of FFN bundles
    from flash, moves them into place and computes on the resident part (:func:`latency`, "all") — plus
    decode attention over the request's KV cache at the backend's compute bandwidth [S: the paper's
    latencies are for short contexts]. A prompt loads the FFN it does not hold once (as "hybrid" does) and
    computes densely over its tokens (max of the weight read and the device's FLOP/s) [S: prompt processing
    is outside the paper's scope, §6]. One request at a time (``max_batch`` 1: the paper is single-batch
    inference, §6). DRAM: ``dram_gb`` (default half the device's memory, §4.1 "nearly half of the total
    memory ... is allocated for model computations"); the resident part must fit it, the KV cache gets the
    rest."""

    pure_stage_times = True  # a stage's time is a function of its shape alone: the serving engine memoizes it

    max_batch = 1

    def __init__(self, model: str, backend: str = "cpu", dram_gb: float = 0.0):
        from sysmodel.cost.devices import get_device
        from sysmodel.cost.stage import Infeasible

        if backend not in paper.BACKEND_DEVICE:
            raise ValueError(f"backend: {backend!r} not allowed; allowed: {', '.join(paper.BACKEND_DEVICE)}")
        self.cfg, self.backend = load_model(model), calibration()[backend]
        if self.cfg.experts > 1:
            raise Infeasible(
                f"{model}: LLM in a flash loads dense FFN neurons by a predictor; MoE experts are "
                "outside its model (the paper runs dense models only)"
            )
        if self.cfg.sliding_layers:
            raise Infeasible(f"{model}: sliding-window layers; this latency model attends to every cached token")
        self.device = get_device(paper.BACKEND_DEVICE[backend])
        self.dram = dram_gb * 1e9 or self.device.mem_bytes / 2
        self.token = latency(self.cfg, self.backend, "all")
        self.name = f"LLM in a flash ({backend})"
        if self.kv_capacity() <= 0:
            raise Infeasible(
                f"{model}: the resident {self.resident_bytes / 1e9:.1f} GB (window, attention, head) do "
                f"not fit {self.dram / 1e9:.3g} GB of DRAM "
                f"({f'--set dram_gb={dram_gb:g}' if dram_gb else f'{self.device.name}, half its memory'})"
            )

    @property
    def resident_bytes(self) -> float:
        return dram_share(self.cfg) * weights(self.cfg)["total"] * self.backend.value_bytes

    @property
    def kv_bytes_per_token(self) -> float:
        from sysmodel.cost.models import KV_BYTES

        return self.cfg.kv_bytes_per_token(KV_BYTES)

    def kv_capacity(self) -> float:
        return self.dram - self.resident_bytes

    def hardware(self) -> str:
        return f"{self.device.name} ({self.dram / 1e9:.0f} GB DRAM for the model) + NVMe flash"

    def _prefill(self, tokens):
        import numpy as np

        w, b = weights(self.cfg), self.backend
        io = (1 - dram_share(self.cfg)) * (w["total"] - w["lookup"]) * 2 / b.naive_bw
        dense = (w["total"] - w["lookup"]) * b.value_bytes / b.compute_bw
        flops = 2.0 * np.asarray(tokens, float) * self.cfg.params() / self.device.peak_flops
        return np.where(np.asarray(tokens) > 0, io + np.maximum(dense, flops), 0.0)

    def stage_times(self, shape: StageShape):
        import numpy as np

        reqs = np.asarray(shape.decode_reqs, float)
        attn = np.multiply(shape.decode_ctx, self.kv_bytes_per_token) / self.backend.compute_bw
        return (
            np.where(reqs > 0, self.token.total, 0.0)
            + attn
            + self._prefill(np.subtract(shape.tokens, shape.decode_reqs))
        )

    def usage(self, shape: StageShape):
        import numpy as np

        from sysmodel.cost.energy import Usage, device_static_w

        w, b, mem = weights(self.cfg), self.backend, self.device.memory
        dec = np.asarray(shape.decode_reqs, float) > 0
        pre = np.asarray(np.subtract(shape.tokens, shape.decode_reqs), float) > 0
        loaded = increment(self.cfg, b)[0] * w["ffn"] * b.value_bytes
        u = Usage(static_w=device_static_w(self.device.tdp_w))
        u.read("nand", np.where(dec, loaded, 0.0) + np.where(pre, (1 - dram_share(self.cfg)) * w["total"] * 2, 0.0))
        u.read(mem, np.where(dec, self.resident_bytes + 4 * loaded, 0.0))  # resident reads + memcpy in and out
        u.read(mem, np.multiply(shape.decode_ctx, self.kv_bytes_per_token))
        u.read(mem, np.where(pre, w["total"] * b.value_bytes, 0.0))
        u.flops = (
            np.where(dec, 2.0 * dram_share(self.cfg) * w["total"], 0.0)
            + 2.0 * np.asarray(np.subtract(shape.tokens, shape.decode_reqs), float) * self.cfg.params()
        )
        return u

    def energy(self, shape: StageShape, seconds=None):
        from sysmodel.cost.energy import joules

        return joules(self.usage(shape), self.stage_times(shape) if seconds is None else seconds)

    def area(self):
        from sysmodel.systems import Area

        return Area(0.0, "a software technique: nothing added")

    def provenance(self):
        from sysmodel.systems import Provenance

        p = Provenance()
        b = self.backend
        p.constant(
            "backend",
            {
                "compute_bw": b.compute_bw,
                "memcpy_bw": b.memcpy_bw,
                "naive_bw": b.naive_bw,
                "sparse_factor": b.sparse_factor,
            },
            "sysmodel/designs/flash/model.py calibration()",
        )
        p.constant("increment", increment(self.cfg, b)[0], increment(self.cfg, b)[1])
        p.constant("window share", window_share(self.cfg)[0], window_share(self.cfg)[1])
        p.fits += [
            f"{self.backend.name}: compute and memcpy bandwidths fitted to Table 3's OPT-6.7B cells (calibration())"
        ]
        return p
