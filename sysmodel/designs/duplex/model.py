"""Duplex system model (Duplex §IV-§VI; shared/notes §2.4-2.5): devices of an H100-class xPU plus Logic-PIM
on the HBM3 logic die, as a serving system (:class:`sysmodel.engines.serving.System`) under continuous batching.

* **Logic-PIM per stack**: 32 GEMM modules at 650 MHz, each fed by one pseudo-channel's bank bundles.
  Peak FLOP/s and bandwidth are derived (:func:`logic_pim_peaks`), not typed in: 32 x 512 MACs x 2 x 650 MHz
  and 32 x the bank-bundle bandwidth of ``sysmodel.engines.memory.pim_view(HBM3, "bank_bundle")``.
* **A GEMM on Logic-PIM** (:func:`pim_gemm_cycles`) is the module's cycle model
  (``hw.duplex.cycles.gemm_txn_cycles``, asserted cycle-exact against the RTL by tb/duplex): the weight rows
  split over every module of the device, K tiled to what the 8 KB input buffer holds for the tokens, tokens
  beyond the buffer in further passes; derated by the bank bundle's DRAM efficiency (ACT/PRE, refresh)
  measured with the memory engine (:func:`dram_efficiency`).
* **Decode attention on Logic-PIM**: per request and KV group, the score GEMM (K rows as weights, the g
  query heads as tokens) and the context GEMM (V^T rows as weights), both by the module's cycle model,
  spread over all modules (request and head parallelism, §V-A). The softmax unit (one of 64 lanes per
  stack, deferred normalization: :func:`softmax_cycles` from its cycle model) works alongside on the
  previous rows [S]; the slower of the two counts.
* **Placement** (§IV, §V-B): the xPU runs QKV, projection, router, dense FFNs, norms and prefill attention
  (tensor parallel within a node, data parallel across nodes). ``duplex``: MoE experts on Logic-PIM in
  decode-only stages, on the xPU in mixed stages; decode attention on Logic-PIM, after prefill attention.
  ``duplex+pe``: expert co-processing (:func:`coprocess_experts` over :func:`space_times`: a device's
  experts sit in 4 bank-bundle memory spaces and one engine runs a whole space, so the k spaces with the
  fewest tokens go to Logic-PIM, k = argmin max(T_xPU, T_PIM)) in every stage and attention co-processing
  (prefill attention on the xPU while decode attention runs on Logic-PIM). ``duplex+pe+et``: experts
  tensor-parallel over the node's devices. ``gpu``: everything on the xPU. Experts are expert-parallel over
  the devices (an expert spans devices / experts devices when there are more devices than experts).
* **Routing** (:mod:`sysmodel.designs.duplex.routing`): each token's top-k distinct experts drawn uniformly
  (seeded), or a user's routing trace file.
* **Energy** (``sysmodel.cost.energy``, the one basis): DRAM bits on the xPU path pay ACT, cell read,
  column-to-bank-group mux, bank-group-to-global IO, TSV and interposer IO; Logic-PIM reads skip the
  interposer and the global IO [S]; Bank-PIM reads only ACT and the cell read; ALU energy per FLOP is the
  same everywhere. Fig. 15 (:meth:`DuplexSystem.decode_energy_per_token`) counts these dynamic parts only, as
  the paper's breakdown does; ``energy(shape)`` adds static power and the links.
* **Baselines** (§VI): GPU, 2xGPU (twice the devices), Bank-PIM (16x HBM bandwidth at 1 Op/B: roofline,
  derated by the same measured DRAM efficiency as Logic-PIM),
  BankGroup-PIM (Logic-PIM's bandwidth and compute in the DRAM die: Logic-PIM's timing, Bank-PIM's
  energy path plus the bank-group IO).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from golden.duplex_spec import CLOCK_HZ, FULL, MODULES_PER_STACK, SOFTMAX_LANES, STACKS, Geometry
from hw.duplex.cycles import PAPER_RECORDS, UNIT_GEMM_MODULE, UNIT_SOFTMAX, gemm_txn_cycles, softmax_row_cycles
from sysmodel.cost.devices import Device, get_device, get_link
from sysmodel.cost.energy import FLOP_PJ, MEMORIES, PJ, Usage, device_static_w, joules
from sysmodel.cost.models import KV_BYTES, ModelConfig, StageShape, layer_groups, layer_ops, load_model
from sysmodel.cost.stage import (
    ACT_BYTES,
    ATTACC,
    PEAK,
    Efficiency,
    Engine,
    Infeasible,
    tp_allreduce,
    tp_allreduce_bytes,
)
from sysmodel.designs.baselines import profile_provenance
from sysmodel.designs.duplex import paper
from sysmodel.designs.duplex.routing import TableRouting, UniformRouting, load_routing
from sysmodel.engines import memory
from sysmodel.systems import Area, Provenance

MODES = ("gpu", "duplex", "duplex+pe", "duplex+pe+et")
PIMS = ("logic", "bank", "bankgroup")
MODULES = STACKS * MODULES_PER_STACK  # GEMM modules per device


@lru_cache
def dram_efficiency(nbytes: int = 8 << 20, refresh: str = memory.DEFAULT_REFRESH) -> float:
    """Achieved / peak bandwidth of a bank-bundle stream on one HBM3 pseudo-channel (ACT/PRE, and refresh under
    ``refresh``, a policy of ``memory.REFRESH``: the paper names no refresh scheme, so the engine's default),
    from the engine; 8 MiB is ~30 tREFI, long enough for the steady state (every pseudo-channel streams alike)."""
    view = memory.pim_view(memory.HBM3, "bank_bundle")
    view = replace(view, org=replace(view.org, channels=1))
    return memory.simulate(view, memory.streaming_trace(view, nbytes), refresh=refresh).bandwidth / view.peak_bw()


def logic_pim_peaks(g: Geometry = FULL) -> dict:
    """Per stack: FLOP/s of 32 modules of rows x lanes MACs at 650 MHz and the bank bundles' bandwidth."""
    flops = MODULES_PER_STACK * g.macs * 2 * CLOCK_HZ
    bw = memory.pim_view(memory.HBM3, "bank_bundle").peak_bw()
    return {"flops": flops, "bandwidth": bw, "op_per_byte": flops / bw}


def pim_gemm_cycles(m: int, k: int, n: int, modules: int = MODULES, g: Geometry = FULL) -> int:
    """Module cycles for an m x k FP16 weight matrix times n tokens on ``modules`` modules. The work units
    are (row block, K tile) pairs — a K tile is what the input buffer holds for the tokens, its partials
    accumulate in the results buffer — dealt evenly to the modules; a module runs its units of one K tile
    as one transaction (one input load). Tokens beyond the buffer take further passes. A stack's modules run
    in lockstep under one controller (hw/duplex/stack.py, whose measured cycles equal one module's)."""
    if min(m, k, n) < 1:
        raise ValueError(f"m, k, n: {m}, {k}, {n}; each must be >= 1")
    blocks = math.ceil(m / g.rows)
    per_pass = g.lanes * g.lane_words  # tokens the buffer holds at one beat per vector
    total = 0
    for start in range(0, n, per_pass):
        nc = min(per_pass, n - start)
        tiles = math.ceil(k / (g.rows * (g.lane_words // g.groups(nc))))
        kt = g.rows * math.ceil(k / (tiles * g.rows))  # K split evenly into whole beats
        units = math.ceil(blocks * tiles / modules)  # units per module
        per_txn = min(units, blocks)
        txns, rest = divmod(units, per_txn)
        total += txns * gemm_txn_cycles(g.rows * per_txn, kt, nc, g)
        total += gemm_txn_cycles(g.rows * rest, kt, nc, g) if rest else 0
    return total


@lru_cache
def attention_cycles(g_heads: int, d: int) -> tuple[float, float]:
    """(module cycles per cached token, fixed cycles) of one request's KV group: score + context GEMMs on
    one module, affine in the context length (checked on three lengths)."""

    def one(length: int) -> int:
        return pim_gemm_cycles(length, d, g_heads, modules=1) + pim_gemm_cycles(d, length, g_heads, modules=1)

    pts = (1024, 2048, 4096)
    c = [one(x) for x in pts]
    slope = (c[1] - c[0]) / (pts[1] - pts[0])
    if not math.isclose(c[2] - c[1], slope * (pts[2] - pts[1]), rel_tol=1e-9):
        raise AssertionError(f"attention cycles not affine in length: {c}")
    return slope, c[0] - slope * pts[0]


def softmax_cycles(reqs, ctx, heads: int, lanes: int = SOFTMAX_LANES):
    """Softmax-unit cycles per stack-set of one device for ``reqs`` requests holding ``ctx`` cached tokens in
    all: one row of L scores per request and query head, each row on one of the STACKS units by the unit's
    cycle model with deferred normalization (``hw.duplex.cycles.softmax_row_cycles``: 2 cycles per beat of
    ``lanes`` scores plus a fixed drain), a request's last beat half full on average. The paper gives no lane
    count: SOFTMAX_LANES (64) is the RTL's default, and the report sweeps it."""
    per_beat = softmax_row_cycles(2, normalize=False) - softmax_row_cycles(1, normalize=False)
    fixed = softmax_row_cycles(1, normalize=False) - per_beat
    beats = np.asarray(ctx, float) / lanes + 0.5 * np.asarray(reqs, float)
    return heads * (per_beat * beats + fixed * np.asarray(reqs, float)) / STACKS


HBM3 = MEMORIES["hbm3"]  # the energy basis's HBM3 (AttAcc's FGDRAM-derived table, notes §2.3)
PIM_PATH = {"logic": "logic", "bank": "bank", "bankgroup": "bankgroup"}  # each PIM's read path in HBM3


def _check_inside(c: ModelConfig, mode: str) -> None:
    """``c`` has nothing outside Duplex's model (the paper's models have none of these)."""
    outside = {
        "multi-head latent attention": c.mla,  # Logic-PIM: GQA groups on their K, V (notes §2.4a)
        "shared experts": c.shared_intermediate > 0,  # expert co-processing places routed experts only
        "sliding-window layers": bool(c.sliding_layers) and mode != "gpu",  # PIM attention reads every token
    }
    for what, present in outside.items():
        if present:
            raise Infeasible(f"{c.name}: {what}; outside Duplex's model (the paper's models have none)")


def _routing(c: ModelConfig, routing: Path | np.ndarray | None, seed: int) -> UniformRouting | TableRouting:
    """The experts' routing: uniform (seeded) by default, else the given table or trace file."""
    if routing is not None and c.experts <= 1:
        raise ValueError(f"routing: {c.name} has no experts to route to")
    if routing is None:
        return UniformRouting(max(c.experts, 1), c.top_k, seed)
    if isinstance(routing, np.ndarray):
        return TableRouting(routing, c.experts, c.top_k, c.name)
    return load_routing(routing, c.experts, c.top_k, c.name)


def _pim_engine(xpu: Device, pim: str, refresh: str) -> Engine:
    """The PIM of kind ``pim`` in the xPU's HBM3 stacks, as an engine at its peaks."""
    eff = dram_efficiency(refresh=refresh)
    if pim == "bank":  # 1 Op/B; it streams the same banks under the same refresh as Logic-PIM
        bw = xpu.mem_bw * paper.BANK_PIM_FACTOR * eff
        return Engine(replace(xpu, peak_flops=bw, mem_bw=bw), PEAK, 1)
    peaks = logic_pim_peaks()
    return Engine(
        replace(xpu, peak_flops=STACKS * peaks["flops"], mem_bw=STACKS * peaks["bandwidth"] * eff),
        PEAK,
        1,
    )


class DuplexSystem:
    """``model`` on ``nodes`` x ``devices`` (the paper's counts by default) in ``mode`` (:data:`MODES`)
    with PIM of kind ``pim`` (:data:`PIMS`), its banks refreshed under ``refresh`` (``memory.REFRESH``)."""

    def __init__(
        self,
        model: str | ModelConfig,
        mode: str = "duplex+pe+et",
        pim: str = "logic",
        nodes: int | None = None,
        devices: int | None = None,
        seed: int = 1,
        routing: Path | np.ndarray | None = None,
        softmax_lanes: int = SOFTMAX_LANES,
        eff: Efficiency = ATTACC,
        refresh: str = memory.DEFAULT_REFRESH,
    ):
        if mode not in MODES:
            raise ValueError(f"mode: {mode!r} not allowed; allowed: {', '.join(MODES)}")
        if pim not in PIMS:
            raise ValueError(f"pim: {pim!r} not allowed; allowed: {', '.join(PIMS)}")
        self.cfg = model if isinstance(model, ModelConfig) else load_model(model)
        dn, dd = paper.SYSTEMS.get(self.cfg.name, (1, 4))
        self.nodes, self.devices = nodes or dn, devices or dd
        if self.nodes < 1 or self.devices < 1 or self.devices > 8:
            raise ValueError(f"nodes, devices: {self.nodes}, {self.devices}; nodes >= 1, 1-8 devices per node")
        self.mode, self.pim = mode, pim
        if softmax_lanes < 1:
            raise ValueError(f"softmax_lanes: {softmax_lanes} not allowed; must be >= 1")
        self.softmax_lanes = softmax_lanes
        memory.policy_index(memory.HBM3, refresh)  # a clear error for a policy the engine does not know
        self.refresh = refresh
        _check_inside(self.cfg, mode)
        self.routing = _routing(self.cfg, routing, seed)
        xpu = get_device(paper.XPU)
        self.xpu = Engine(xpu, eff, self.devices)
        self.xpu1 = Engine(xpu, eff, 1)
        self.pim_engine = _pim_engine(xpu, pim, refresh)
        self.nvlink, self.ib = get_link(xpu.interconnect), paper.IB_BW
        names = {"gpu": "GPU", "duplex": "Duplex", "duplex+pe": "Duplex+PE", "duplex+pe+et": "Duplex+PE+ET"}
        kind = {"logic": "", "bank": " (Bank-PIM)", "bankgroup": " (BankGroup-PIM)"}[pim]
        self.name = f"{names[mode]}{kind} {self.nodes}x{self.devices}"
        if self.kv_capacity() <= 0:
            raise Infeasible(
                f"{self.cfg.name}: weights {self.cfg.weight_bytes() / 1e9:.0f} GB do not fit "
                f"{self.total_devices} x {paper.DEVICE_BYTES / 1e9:.0f} GB"
            )

    @property
    def total_devices(self) -> int:
        return self.nodes * self.devices

    @property
    def kv_bytes_per_token(self) -> float:
        return self.cfg.kv_bytes_per_token(KV_BYTES)

    def kv_capacity(self) -> float:
        return self.total_devices * paper.DEVICE_BYTES - self.cfg.weight_bytes()

    @property
    def resident_weight_bytes(self) -> float:
        """Weight bytes the devices' HBM holds beside the KV cache (what pipeline stages split)."""
        return self.cfg.weight_bytes()

    # --- per-expert times (one expert's share on one device) ---------------------------------------------

    def expert_xpu(self, n: np.ndarray, frac: float) -> np.ndarray:
        c = self.cfg
        w = c.ffn_matrices * c.hidden * c.intermediate * frac
        return np.where(n > 0, self.xpu1.time(2.0 * n * w, w * 2.0), 0.0)

    def expert_pim(self, n: np.ndarray, frac: float) -> np.ndarray:
        c = self.cfg
        if self.pim == "bank":
            w = c.ffn_matrices * c.hidden * c.intermediate * frac
            return np.where(n > 0, self.pim_engine.time(2.0 * n * w, w * 2.0), 0.0)
        ff = max(1, round(c.intermediate * frac))
        out = np.zeros(len(n))
        for i, x in enumerate(n):
            if x > 0:
                cyc = (c.ffn_matrices - 1) * pim_gemm_cycles(ff, c.hidden, int(x)) + pim_gemm_cycles(
                    c.hidden, ff, int(x)
                )
                out[i] = cyc / CLOCK_HZ / dram_efficiency(refresh=self.refresh)
        return out

    def moe_time(self, tokens: int, mixed: bool) -> float:
        """One MoE layer's expert FFNs for a stage of ``tokens`` (all nodes), by mode."""
        c = self.cfg
        if tokens == 0:
            return 0.0
        counts = self.routing.counts(tokens)
        per_expert = max(1, self.total_devices // c.experts)  # devices one expert spans
        if self.mode == "duplex+pe+et":
            per_expert = max(per_expert, self.devices)
        frac = 1 / per_expert
        on_pim = self.mode != "gpu" and (self.mode != "duplex" or not mixed)
        groups = max(1, self.total_devices // per_expert)  # device groups sharing the experts
        worst = 0.0
        for grp in np.array_split(counts, groups):  # experts keep their devices in every mode
            tx = self.expert_xpu(grp, frac)
            if self.mode in ("duplex+pe", "duplex+pe+et"):
                worst = max(worst, coprocess_experts(*space_times(grp, tx, self.expert_pim(grp, frac)))[0])
            elif on_pim:
                worst = max(worst, float(self.expert_pim(grp, frac).sum()))
            else:
                worst = max(worst, float(tx.sum()))
        dispatch = tokens * c.hidden * ACT_BYTES * 2 / self.nvlink.bw / self.devices  # scatter + gather
        if self.nodes > 1:
            dispatch += tokens / self.nodes * c.hidden * ACT_BYTES * 2 * (self.nodes - 1) / self.nodes / self.ib
        return worst + dispatch

    def attention_pim(self, reqs: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        """Decode attention of a layer on one node's PIM: requests and KV heads over all its modules."""
        c = self.cfg
        g = c.heads // c.kv_heads
        if self.pim == "bank":
            kv = ctx * 2 * c.kv_dim * KV_BYTES
            gemm = self.pim_engine.time(kv * g, kv) / self.devices
        else:
            slope, fixed = attention_cycles(g, c.head_dim)
            eff = dram_efficiency(refresh=self.refresh)
            gemm = (slope * ctx + fixed * reqs) * c.kv_heads / (MODULES * self.devices) / CLOCK_HZ / eff
        # every PIM kind sends its scores to the same logic-die softmax unit (§VI), which reads no DRAM
        return np.maximum(gemm, softmax_cycles(reqs, ctx, c.heads, self.softmax_lanes) / self.devices / CLOCK_HZ)

    # --- a stage --------------------------------------------------------------------------------------

    def stage_times(self, shape: StageShape) -> np.ndarray:
        fields = [
            np.atleast_1d(np.asarray(getattr(shape, f), float))
            for f in ("tokens", "decode_reqs", "decode_ctx", "prefill_pairs", "prefill_kv")
        ]
        n = max(len(f) for f in fields)
        fields = [np.broadcast_to(f, (n,)) for f in fields]
        node = StageShape(*(f / self.nodes for f in fields))  # data parallel across nodes
        c, total = self.cfg, np.zeros(n)
        mixed = fields[3] > 0
        for moe, count in layer_groups(c):
            ops = {op.name: op for op in layer_ops(c, node, moe)}
            xpu = sum(self.xpu.op_time(ops[k]) for k in ("qkv", "o_proj", "norm_attn", "norm_ffn"))
            xpu = xpu + tp_allreduce(c, node, self.xpu)
            pre = self.xpu.op_time(ops["attn_prefill"], node)
            if self.mode == "gpu":
                attn = self.xpu.op_time(ops["attn_decode"]) + pre
            else:
                dec = self.attention_pim(np.asarray(node.decode_reqs), np.asarray(node.decode_ctx))
                attn = np.maximum(pre, dec) if self.mode != "duplex" else pre + dec
            if moe:
                ffn = self.xpu.op_time(ops["router"]) + np.array(
                    [self.moe_time(int(round(t)), bool(mx)) for t, mx in zip(fields[0], mixed, strict=True)]
                )
            else:
                ffn = sum(self.xpu.op_time(ops[k]) for k in ops if k.startswith("ffn_") or k == "act")
            total = total + count * (xpu + attn + ffn)
        return total

    # --- energy ---------------------------------------------------------------------------------------

    def usage(self, shape: StageShape, static: bool = True) -> Usage:
        """Bytes each engine reads on its HBM3 path (decode attention and MoE experts on the PIM unless
        ``gpu``), FLOPs, the MoE dispatch and all-reduces over NVLink, and the devices' static power."""
        c = self.cfg
        xpu = get_device(paper.XPU)
        u = Usage(static_w=device_static_w(xpu.tdp_w, self.total_devices) if static else 0.0)
        for moe, count in layer_groups(c):
            for op in layer_ops(c, shape, moe):
                u.flops = np.add(u.flops, np.multiply(count, op.flops))
                pim_op = self.mode != "gpu" and (op.name == "attn_decode" or (moe and op.name.startswith("ffn_")))
                u.read("hbm3", np.multiply(count, op.bytes), PIM_PATH[self.pim] if pim_op else "host")
            if static:
                if moe:
                    u.move(xpu.interconnect, count * np.multiply(shape.tokens, c.hidden * ACT_BYTES * 2))
                if self.devices > 1:
                    u.move(xpu.interconnect, count * tp_allreduce_bytes(c, shape, self.devices) * self.nodes)
        return u

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        return joules(self.usage(shape), self.stage_times(shape) if seconds is None else seconds)

    def decode_energy_per_token(self, batch: int, ctx: int) -> float:
        """Joules per generated token of a steady decode stage (``batch`` requests at ``ctx`` tokens): the
        bytes each engine reads times its path energy plus FLOPs times the ALU energy (Fig. 15's parts)."""
        shape = StageShape.decode(batch, ctx)
        return float(joules(self.usage(shape, static=False), 0.0)) / batch

    def hardware(self) -> str:
        pim = {"logic": "Logic-PIM", "bank": "Bank-PIM", "bankgroup": "BankGroup-PIM"}[self.pim]
        return f"{self.nodes} x {self.devices} {paper.XPU}-class xPUs, {paper.DEVICE_BYTES / 1e9:.0f} GB HBM3 each" + (
            "" if self.mode == "gpu" else f", {pim} in {STACKS} stacks each"
        )

    def area(self) -> Area:
        if self.mode == "gpu":
            return Area(0.0, "the GPU baseline: nothing added")
        return Area(
            pim_area_mm2(self.pim) * STACKS * self.total_devices,
            "[Q] Duplex §VII-E logic-die breakdown per stack (Logic-PIM); Bank-/BankGroup-PIM scaled from "
            "it (pim_area_mm2) x stacks x devices",
        )

    def provenance(self) -> Provenance:
        p = Provenance()
        if self.mode != "gpu" and self.pim != "bank":
            p.record(
                UNIT_GEMM_MODULE,
                "hw/duplex/gemm_module.py",
                "golden/duplex.py",
                **PAPER_RECORDS[UNIT_GEMM_MODULE],
            )
            p.record(
                UNIT_SOFTMAX,
                "hw/duplex/softmax_unit.py",
                "golden/softmax.py",
                **PAPER_RECORDS[UNIT_SOFTMAX],
            )
            p.cycle_model(
                "gemm_txn_cycles, softmax_row_cycles",
                "hw/duplex/gemm_module.py",
                "GEMM and softmax cycles from the units' cycle models, asserted cycle-exact by the records",
            )
            p.constant(
                "bank-bundle DRAM efficiency",
                dram_efficiency(refresh=self.refresh),
                f"sysmodel.engines.memory engine on HBM3, {self.refresh} refresh",
            )
        p.constant("xPU", paper.XPU, get_device(paper.XPU).source)
        p.constant("IB_BW", paper.IB_BW, "Duplex §VI: 400 GB/s InfiniBand per node (sysmodel/designs/duplex/paper.py)")
        profile_provenance(p, self.xpu)
        return p


def pim_area_mm2(pim: str) -> float:
    """PIM area per stack (mm2) from the paper's logic-die breakdown (§VII-E; :data:`paper.AREA_MM2`).
    Logic-PIM: TSVs + GEMM modules + buffers + softmax. BankGroup-PIM: the same GEMM modules and buffers on
    the DRAM die at the DRAM process's area factor, softmax on the logic die, no extra TSVs [S]. Bank-PIM:
    GEMM logic scaled to its FLOP/s (1 Op/B at 16x the stack's bandwidth) on the DRAM die, no large buffers,
    softmax on the logic die [S]."""
    a, f = paper.AREA_MM2, paper.DRAM_AREA_FACTOR
    if pim == "logic":
        return sum(a.values())
    if pim == "bankgroup":
        return (a["gemm"] + a["buffers"]) * f + a["softmax"]
    if pim == "bank":
        return a["gemm"] * bank_pim_stack_bw() / logic_pim_peaks()["flops"] * f + a["softmax"]
    raise ValueError(f"pim: {pim!r} not allowed; allowed: {', '.join(PIMS)}")


def bank_pim_stack_bw() -> float:
    """Bank-PIM's bandwidth per stack: 16x the stack's external bandwidth (§VI), the xPU's over its stacks."""
    return get_device(paper.XPU).mem_bw / STACKS * paper.BANK_PIM_FACTOR


def gemm_edap(pim: str, n: int, shape: tuple[int, int] = paper.EDAP_SHAPE) -> dict:
    """Fig. 8: one stack running an m x k FP16 GEMM for ``n`` tokens (Op/B = n): delay (s), energy (J: weight
    bits on the PIM's path plus ALU energy per FLOP), area (mm2, :func:`pim_area_mm2`) and their product.
    Logic- and BankGroup-PIM take the GEMM module's cycle model over the stack's 32 modules; Bank-PIM is a
    roofline at 1 Op/B and 16x bandwidth."""
    m, k = shape
    nbytes, flops = 2.0 * m * k, 2.0 * m * k * n
    if pim == "bank":
        delay = max(flops, nbytes) / bank_pim_stack_bw()
    else:
        delay = pim_gemm_cycles(m, k, n, modules=MODULES_PER_STACK) / CLOCK_HZ
    delay /= dram_efficiency()  # every PIM streams its banks under the same ACT/PRE and refresh
    energy = (nbytes * 8 * HBM3.pj_per_bit(PIM_PATH[pim]) + flops * FLOP_PJ) * PJ
    area = pim_area_mm2(pim)
    return {"delay": delay, "energy": energy, "area": area, "edap": delay * energy * area}


def space_times(counts: np.ndarray, t_xpu: np.ndarray, t_pim: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A device's experts dealt one by one to the bank-bundle memory spaces (§V-C); one engine runs
    all of a space's experts, so co-processing splits by space: (xPU, PIM) time per space, the spaces in
    ascending order of their tokens."""
    spaces = [np.arange(s, len(counts), paper.MEMORY_SPACES) for s in range(min(paper.MEMORY_SPACES, len(counts)))]
    order = np.argsort([counts[e].sum() for e in spaces], kind="stable")
    return (np.array([t_xpu[spaces[s]].sum() for s in order]), np.array([t_pim[spaces[s]].sum() for s in order]))


def coprocess_experts(t_xpu: np.ndarray, t_pim: np.ndarray) -> tuple[float, int]:
    """§V-B: experts sorted by token count (ascending: ``t_xpu``/``t_pim`` in that order); the k smallest
    go to Logic-PIM; returns (min over k of max(sum xPU, sum PIM), that k)."""
    pim = np.concatenate([[0.0], np.cumsum(t_pim)])
    xpu = np.concatenate([np.cumsum(t_xpu[::-1])[::-1], [0.0]])
    t = np.maximum(pim, xpu)
    k = int(np.argmin(t))
    return float(t[k]), k
