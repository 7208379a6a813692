"""L3 system model: a DGX-A100 holding the weights (FC layers and prefill attention, tensor parallel) and
host DIMM-PIM holding the whole KV cache (decode attention), as a serving system
(:class:`sysmodel.engines.serving.System`); the baselines built from the same parts.

* **One head on one rank** takes :func:`head_cycles` PU cycles: the rank's cycle model
  (``hw.l3.cycles.run_cycles``, asserted cycle-exact against the RTL by tb/l3 and recorded in the
  characterization snapshot) — affine in the tokens: 4 cycles per token (K and V, 512 B, at 128 B per
  cycle) plus the softmax tail and readout. The PU clock is tCK and the rank issues one all-bank RD per
  tCCD_L (``golden.l3_spec.RD_INTERVAL``).
* **DRAM overheads** (ACT/PRE at row switches, postponed refresh) derate that by :func:`dram_efficiency`,
  measured by running an all-bank stream through the memory engine (``sysmodel.engines.memory``, DDR4-3200).
* **Ranks**: ranksets x 16 channels, heads spread evenly over them (head-level load balance, §5.1). The
  host link carries a layer's transfers X (q, k, v and outputs of the decode requests, the prefill KV) one
  rankset at a time. Without communication overlap the PIM waits for them: A + X for attention A on all
  ranks. With it (§5.1) a rankset receives its 1/ranksets share while the others compute, in steady state
  max(X, A + X / ranksets): the link is busy X, each rankset X / ranksets receiving plus A computing.
* **R-PIM** (§6.1: "GPU with rank-level DIMM-PIM (R-PIM), which represents Hermes [70]. It leverages
  prefilling-prioritized scheduling and single-batch methods. CPU-GPU communication (e.g., KV transfer) is
  hidden by concurrent computation"): rank PUs at 1/8 of the bank PUs' peak (``R_PIM_FACTOR``: one rank's bus),
  derated by :func:`rank_level_efficiency` (ordinary reads, not the all-bank stream's); single
  batch, so per layer the GPU's work and the PIM's add up (``scheduler`` off); no rankset extension (§5.1's
  is L3's), so with ``overlap`` the transfers run beside the layer's computation, max(T_GPU + A, X), and are
  charged only where they outlast it. Prefill-prioritized is the serving policy's (Fig. 8: vLLM's).
* **Scheduler** (§5.2-5.3): two sub-batches interleaved across the devices, so per layer the GPU's work and
  the PIM's overlap: max(T_GPU, T_PIM) instead of their sum (naive); prefill chunks (multiples of 16) sized
  by :meth:`L3System.prefill_budget` so T_GPU ~ T_PIM (the engine's ``interleave`` policy applies them).
  When the decodes' own GPU time already exceeds their PIM time, step 3's stop condition (T_GPU > T_PIM) holds
  before any prompt is added and the paper does not say what follows: ``gpu_bound`` (:data:`GPU_BOUND`) is
  that unstated setting. ``whole`` (the default) runs prompts whole then, as with no decode waiting: §5.2 adds
  prefill to fill the GPU's bubbles and chunks "to avoid excessive execution latency on the GPU side", neither
  of which a GPU-bound stage has, and says "in most cases, this request will be chunked only once". ``chunk``
  (steps 3-4 to the letter) still chunks the first prompt to the T_GPU nearest T_PIM, one multiple of 16, so a
  trace of long prompts and few decodes (LongBench) runs each prompt in many small chunks, each stage
  re-reading the FC weights.
  :func:`train_predictors` fits the paper's runtime predictors (linear for the PIM, random forest for the
  GPU) on profiles the model generates and reports their relative error; the budget itself is solved on the
  model (named difference: the paper uses the predictors at run time).
* **Data parallelism** (Table 3): each of DP replicas serves 1/DP of the requests on 1/DP of the host.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from golden.l3_spec import BANKS, CHIPS, FULL, MAX_TOKENS
from hw.l3.cycles import PAPER_RECORDS, UNIT_ADDER, UNIT_BANK_PU, UNIT_RANK, UNIT_RELAYOUT, UNIT_SOFTMAX, run_cycles
from sysmodel.cost.devices import get_device
from sysmodel.cost.energy import DDR4_CHIP_STATIC_W, Usage, device_static_w, joules
from sysmodel.cost.models import KV_BYTES, StageShape, layer_groups, layer_ops, load_model
from sysmodel.cost.num import Num
from sysmodel.cost.stage import ACT_BYTES, ATTACC, Efficiency, Engine, Infeasible, tp_allreduce, tp_allreduce_bytes
from sysmodel.designs.baselines import profile_provenance
from sysmodel.designs.l3 import paper
from sysmodel.engines import memory
from sysmodel.systems import Area, Provenance

TCK_S = memory.DDR4_3200.timing.tck_ns * 1e-9
RANK_BW = memory.pim_view(memory.DDR4_3200, "all_bank").peak_bw() / memory.DDR4_3200.org.ranks  # 204.8 GB/s
ATTENTION = ("l3", "r-pim", "cpu")
GPU_BOUND = ("whole", "chunk")  # prefill when the decodes alone are GPU-bound, default first (module docstring)


@lru_cache
def head_cycles() -> tuple[float, float]:
    """(cycles per token, fixed cycles) of one head of the paper's geometry on one rank, from the rank's
    cycle model at whole chunks; affinity checked on three lengths."""
    n = (256, 512, 1024)
    c = [run_cycles(k, FULL, MAX_TOKENS) for k in n]
    slope = (c[1] - c[0]) / (n[1] - n[0])
    if c[2] - c[1] != slope * (n[2] - n[1]):
        raise AssertionError(f"rank cycles not affine in tokens: {c}")
    return slope, c[0] - slope * n[0]


@lru_cache
def dram_efficiency(tfaw: bool = False, nbytes: int = 32 << 20) -> float:
    """Achieved / peak bandwidth of an all-bank stream on DDR4-3200 (ACT/PRE, refresh) from the engine;
    ``tfaw`` enforces tFAW on the all-bank ACT (:func:`sysmodel.engines.memory.pim_view`). Refresh is postponed
    (up to 8 REFs) as L3's rank-PU refresh manager does, issuing REFs between heads (§4.4)."""
    view = memory.pim_view(memory.DDR4_3200, "all_bank", tfaw)
    return memory.simulate(view, memory.streaming_trace(view, nbytes), refresh="postpone").bandwidth / view.peak_bw()


@lru_cache
def rank_level_efficiency(nbytes: int = 32 << 20) -> float:
    """Achieved / peak bandwidth of R-PIM's reads on DDR4-3200 from the engine: its rank PUs on the buffer chip
    read their rank over its own bus as ordinary bank-interleaved bursts (the engine's ``rank_level`` mode, as
    Hermes' NDP-DIMM), which hide row switches behind other banks' reads where the all-bank stream cannot;
    standard refresh (the postponing refresh manager is L3's rank PU, §4.4)."""
    view = memory.pim_view(memory.DDR4_3200, "rank_level")
    return memory.simulate(view, memory.streaming_trace(view, nbytes)).bandwidth / view.peak_bw()


@dataclass(frozen=True)
class HostConfig:
    """The host side: ``ranksets`` x 16 ranks, ``capacity`` bytes (both for all DP replicas together)."""

    ranksets: int = paper.RANKSETS
    capacity: float = paper.HOST_BYTES

    def __post_init__(self) -> None:
        if self.ranksets < 1:
            raise ValueError(f"ranksets: {self.ranksets} not allowed; must be >= 1")
        if self.capacity <= 0:
            raise ValueError(f"capacity: {self.capacity} not allowed; bytes > 0")


class L3System:
    """GPU + host attention for one DP replica. ``attention``: "l3" (bank-level PIM, the RTL's cycles),
    "r-pim" (rank-level PUs, Hermes-style: 1/8 of the bandwidth), "cpu" (NEO-style offloading at 406 GB/s);
    ``scheduler``: sub-batch interleaving; ``overlap``: communication overlap (L3, CPU: across ranksets;
    R-PIM: behind the layer's computation, §6.1); ``tfaw``:
    the all-bank ACT obeys tFAW (default off, notes §1.8.4); ``gpu_bound``: prefill in a stage whose decodes
    are GPU-bound (:data:`GPU_BOUND`, module docstring)."""

    pure_stage_times = True  # a stage's time is a function of its shape alone: the serving engine memoizes it

    def __init__(
        self,
        model: str,
        tp: int,
        dp: int = 1,
        host: HostConfig | None = None,
        attention: str = "l3",
        scheduler: bool = True,
        overlap: bool = True,
        tfaw: bool = False,
        eff: Efficiency = ATTACC,
        gpu_bound: str = GPU_BOUND[0],
    ):
        host = host or HostConfig()
        if attention not in ATTENTION:
            raise ValueError(f"attention: {attention!r} not allowed; allowed: {', '.join(ATTENTION)}")
        if gpu_bound not in GPU_BOUND:
            raise ValueError(f"gpu_bound: {gpu_bound!r} not allowed; allowed: {', '.join(GPU_BOUND)}")
        if tp < 1 or dp < 1:
            raise ValueError(f"tp, dp: {tp}, {dp} not allowed; both >= 1")
        self.cfg, self.tp, self.dp, self.host = load_model(model), tp, dp, host
        self.attention, self.scheduler, self.overlap, self.tfaw = attention, scheduler, overlap, tfaw
        self.gpu_bound = gpu_bound
        self._budget_gpu: dict[tuple[int, int], float] = {}  # prefill_budget's GPU seconds by (decodes, tokens)
        self.gpu = Engine(get_device(paper.GPU), eff, tp)
        if self.cfg.weight_bytes() > tp * self.gpu.device.mem_bytes:
            raise Infeasible(
                f"{model}: {self.cfg.weight_bytes() / 1e9:.0f} GB of weights do not fit {tp} x {paper.GPU}"
            )
        if attention == "l3" and self.cfg.mla:
            raise Infeasible(
                f"{model}: multi-head latent attention (one latent shared by every head); the L3 rank maps "
                f"each head's own K and V of d_head {FULL.d_head}"
            )
        if self.cfg.sliding_layers:
            raise Infeasible(f"{model}: sliding-window layers; L3's host attention reads every cached token")
        if attention == "l3" and self.cfg.head_dim != FULL.d_head:
            raise Infeasible(f"{model}: head dimension {self.cfg.head_dim}; the L3 rank maps d_head {FULL.d_head}")
        self.ranks = host.ranksets * paper.CHANNELS / dp
        self.name = {"l3": "L3", "r-pim": "R-PIM", "cpu": "CPU offload"}[attention]

    @property
    def kv_bytes_per_token(self) -> float:
        return self.cfg.kv_bytes_per_token(KV_BYTES)

    def kv_capacity(self) -> float:
        return self.host.capacity / self.dp

    def attention_seconds(self, decode_reqs, decode_ctx) -> np.ndarray:
        """One layer's decode attention on the host side."""
        cfg = self.cfg
        kv_bytes = np.multiply(decode_ctx, 2 * cfg.kv_dim * KV_BYTES)
        if self.attention == "cpu":
            return kv_bytes / (paper.CPU_BW / self.dp * ATTACC.memory)
        if self.attention == "r-pim":
            return kv_bytes / (self.ranks * RANK_BW * paper.R_PIM_FACTOR * rank_level_efficiency())
        eff = dram_efficiency(self.tfaw)
        slope, fixed = head_cycles()
        heads = cfg.kv_heads
        cycles = heads * (slope * np.asarray(decode_ctx, float) + fixed * np.asarray(decode_reqs, float))
        return cycles * TCK_S / eff / self.ranks

    def gpu_seconds(self, shape: StageShape, moe: int) -> Num:
        """One layer's GPU work: every operator but decode attention, and the TP all-reduce; a function of the
        stage's tokens and prefill alone (the decode context is the host's)."""
        ops = [op for op in layer_ops(self.cfg, shape, moe) if op.name != "attn_decode"]
        return sum(self.gpu.op_time(op, shape) for op in ops) + tp_allreduce(self.cfg, shape, self.gpu)

    def layer_parts(self, shape: StageShape, moe: int, gpu: Num | None = None) -> tuple[Num, Num]:
        """(GPU seconds, host-attention seconds with its critical transfers) of one layer; ``gpu``: the GPU
        seconds where already known (:meth:`prefill_budget`'s memo)."""
        cfg = self.cfg
        gpu = self.gpu_seconds(shape, moe) if gpu is None else gpu
        # q, k, v of each decode request to the host and its output back, over the TP GPUs' PCIe links
        comm = np.multiply(shape.decode_reqs, (2 * cfg.hidden + 2 * cfg.kv_dim) * ACT_BYTES) / (
            paper.PCIE_EFFECTIVE * self.tp
        )
        prefill = np.subtract(shape.tokens, shape.decode_reqs)
        offload = np.multiply(prefill, 2 * cfg.kv_dim * KV_BYTES) / min(
            paper.PCIE_EFFECTIVE * self.tp, paper.HOST_LINK_CAP
        )
        attn, xfer = self.attention_seconds(shape.decode_reqs, shape.decode_ctx), comm + offload
        if not self.overlap:
            return gpu, attn + xfer
        if self.attention == "r-pim":  # no ranksets: the transfer beside the layer's computation (docstring)
            return gpu, np.maximum(attn, xfer - (0 if self.scheduler else gpu))
        return gpu, np.maximum(xfer, attn + xfer / self.host.ranksets)

    def stage_times(self, shape: StageShape) -> Num:
        total: Num = 0.0
        for moe, count in layer_groups(self.cfg):
            gpu, host = self.layer_parts(shape, moe)
            total = total + count * (np.maximum(gpu, host) if self.scheduler else gpu + host)
        return total

    # --- what a comparison needs (sysmodel.systems.System) ---------------------------------------------

    def hardware(self) -> str:
        host = f"{self.host.capacity / self.dp / 1e12:.2g} TB DDR4 DIMM-PIM ({self.ranks:g} ranks)"
        return f"{self.tp} x {paper.GPU} + {host}" + (f" (one of {self.dp} DP replicas)" if self.dp > 1 else "")

    def usage(self, shape: StageShape) -> Usage:
        """GPU operators on HBM; decode attention's KV from the DIMMs on the path its PUs sit on (L3: in-bank,
        R-PIM: the buffer chip, CPU offload: over the channel); q, k, v, outputs and prefill KV over PCIe;
        static: the GPUs and the DIMMs' background power."""
        cfg, gpu = self.cfg, self.gpu.device
        chips = self.host.capacity / self.dp * 8 / paper.CHIP_BITS
        u = Usage(static_w=device_static_w(gpu.tdp_w, self.tp) + chips * DDR4_CHIP_STATIC_W)
        path = {"l3": "bank", "r-pim": "buffer", "cpu": "host"}[self.attention]
        for moe, count in layer_groups(cfg):
            for op in layer_ops(cfg, shape, moe):
                u.flops = np.add(u.flops, np.multiply(count, op.flops))
                if op.name == "attn_decode":
                    u.read("ddr4", np.multiply(count, op.bytes), path)
                else:
                    u.read(gpu.memory, np.multiply(count, op.bytes))
            moved = np.multiply(shape.decode_reqs, (2 * cfg.hidden + 2 * cfg.kv_dim) * ACT_BYTES) + np.multiply(
                np.subtract(shape.tokens, shape.decode_reqs), 2 * cfg.kv_dim * KV_BYTES
            )
            u.move(paper.HOST_LINK, np.multiply(count, moved))
            if self.tp > 1:
                u.move(gpu.interconnect, count * tp_allreduce_bytes(cfg, shape, self.tp))
        return u

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        return joules(self.usage(shape), self.stage_times(shape) if seconds is None else seconds)

    def area(self) -> Area:
        """Table 5 (28 nm): a rank PU (re-layout, adder and softmax units) per rank, and a bank PU per bank of
        every chip, at 10x in the DRAM process (Table 5's footnote); R-PIM: rank PUs only."""
        a = paper.AREA_UM2
        rank_pu = a[UNIT_RELAYOUT] + a[UNIT_ADDER] + a[UNIT_SOFTMAX]
        bank_pus = 0 if self.attention == "r-pim" else CHIPS * BANKS * a[UNIT_BANK_PU] * paper.DRAM_AREA_FACTOR
        if self.attention == "cpu":
            return Area(0.0, "CPU offload: nothing added")
        return Area(
            self.ranks * (rank_pu + bank_pus) * 1e-6,
            "[D] L3 Table 5 areas x units per rank x ranks (bank PUs at 10x, DRAM process)",
        )

    def provenance(self) -> Provenance:
        p = Provenance()
        if self.attention == "l3":
            p.record(UNIT_RANK, "hw/l3/rank.py", "golden/l3.py", **PAPER_RECORDS[UNIT_RANK])
            p.cycle_model(
                "l3_rank run_cycles",
                "hw/l3/rank.py",
                "head cycles from the rank's cycle model, which the record above asserts cycle-exact",
            )
        if self.attention == "r-pim":
            p.constant("DDR4-3200 rank-level efficiency", rank_level_efficiency(), "sysmodel.engines.memory engine")
        else:
            p.constant("DDR4-3200 all-bank efficiency", dram_efficiency(self.tfaw), "sysmodel.engines.memory engine")
        for name in ("PCIE_EFFECTIVE", "HOST_LINK_CAP", "CPU_BW", "R_PIM_FACTOR"):
            p.constant(name, getattr(paper, name), "sysmodel/designs/l3/paper.py")
        profile_provenance(p, self.gpu)
        return p

    def prefill_budget(self, decode_reqs: int, decode_ctx: int) -> float:
        """Prompt tokens for this stage (a multiple of 16): the most whose GPU time stays within the PIM's
        time for the decode batch, at least one multiple; unbounded without decodes (nothing to hide), and
        under ``gpu_bound="whole"`` when the decodes' GPU time alone exceeds their PIM time."""
        if not self.scheduler or decode_reqs == 0:
            return math.inf
        step = paper.CHUNK_MULTIPLE
        lo, hi = 1, 1 << 12
        base = StageShape(tokens=decode_reqs, decode_reqs=decode_reqs, decode_ctx=decode_ctx)
        moe = layer_groups(self.cfg)[0][0]

        def fits(shape: StageShape) -> bool:
            key = (decode_reqs, int(shape.tokens))  # the GPU's seconds do not depend on the decode context
            if key not in self._budget_gpu:
                self._budget_gpu[key] = float(np.asarray(self.gpu_seconds(shape, moe)).reshape(-1)[0])
            gpu, host = self.layer_parts(shape, moe, self._budget_gpu[key])
            return gpu <= float(np.asarray(host).reshape(-1)[0])

        if self.gpu_bound == "whole" and not fits(base):
            return math.inf
        while lo < hi:  # the largest k with fits(k chunks), GPU time growing with k
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if fits(base + StageShape.prefill(1, mid * step)) else (lo, mid - 1)
        return lo * step


def train_predictors(model: str = "gpt3-175b", tp: int = 8, samples: int = 1000, seed: int = 0) -> dict:
    """The paper's runtime predictors (§5.3) fitted to ``samples`` stage profiles of this model (80/20
    split): linear regression of T_PIM on (sum f_d, len f_d, sum c_p), random-forest regression of T_GPU on
    (sum c_p, prefill pairs, len f_d). Returns each one's relative error RE = mean |(Y - Y^) / Y| on the
    held-out 20%."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression

    sys = L3System(model, tp)
    rng = np.random.default_rng(seed)
    reqs = rng.integers(1, 256, samples)
    ctx = reqs * rng.integers(128, 16384, samples)
    chunk = rng.integers(0, 256, samples) * paper.CHUNK_MULTIPLE
    shape = StageShape(
        tokens=reqs + chunk, decode_reqs=reqs, decode_ctx=ctx, prefill_pairs=chunk * (chunk + 1) / 2, prefill_kv=chunk
    )
    gpu, host = (np.asarray(t) for t in sys.layer_parts(shape, False))
    x_pim, x_gpu = np.stack([ctx, reqs, chunk], 1), np.stack([chunk, shape.prefill_pairs, reqs], 1)
    cut = int(0.8 * samples)
    out = {}
    for name, reg, x, y in (
        ("PIM (linear)", LinearRegression(), x_pim, host),
        ("GPU (random forest)", RandomForestRegressor(50, random_state=seed), x_gpu, gpu),
    ):
        reg.fit(x[:cut], y[:cut])
        out[name] = float(np.mean(np.abs((y[cut:] - reg.predict(x[cut:])) / y[cut:])))
    return out
