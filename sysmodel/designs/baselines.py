"""Baselines built from the same parts (model zoo operators, roofline devices, links), for the papers'
comparisons: GPU-only (tensor parallel), offloading over PCIe (FlexGen-like), CPU-only, and HBM-PIM
attention (AttAcc-like: decode attention runs in-HBM at the PIM internal bandwidth, the FC layers on the GPU).

Each baseline is a *system* (:class:`sysmodel.systems.System`): it prices any stage — prefill chunks and
decode requests, one stage or a vector of them — through the one cost function (``sysmodel.cost.stage``) at an
explicit efficiency (by default AttAcc's GPU profile, on which L3 builds), says how many bytes of KV
cache it can hold, and what a stage costs in energy (``sysmodel.cost.energy``: every operator's bytes from its
device's memory, its FLOPs, the tensor-parallel all-reduces over the link, static power). The serving
engine runs request traces on them; :func:`gpu_only` and friends price one decode step of a batch. A
configuration whose resident bytes do not fit raises ``sysmodel.cost.stage.Infeasible`` naming the point.

The four register themselves as `gpu`, `hbm-pim`, `cpu` and `offload` (bottom of this file).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from sysmodel.cost import gpu
from sysmodel.cost.devices import BANK_PIM_MM2_PER_TBPS, get_device, get_link
from sysmodel.cost.energy import Usage, device_static_w, joules
from sysmodel.cost.models import KV_BYTES, ModelConfig, StageShape, layer_groups, layer_ops, load_model
from sysmodel.cost.num import Num
from sysmodel.cost.stage import (
    ACT_BYTES,
    ATTACC,
    ATTACC_ETA,
    PEAK,
    PROFILES,
    Efficiency,
    Engine,
    Infeasible,
    require_fit,
    stage_time,
    tp_allreduce,
    tp_allreduce_bytes,
)
from sysmodel.cost.stage import efficiency as efficiency_profile
from sysmodel.systems import Area, Param, Provenance, register

HBM_PIM_FACTOR = 16  # HBM-PIM internal / external bandwidth: 260.8 TB/s over 16.3 TB/s (L3 §6.1, notes §1)
ATTACC_BANK_FACTOR = 9  # AttAcc_bank under the HBM power budget: src/config.py BW_SCALE[True][PIMType.BA]
OFFLOAD_RESERVE = 0.1  # GPU memory kept free by the offloading runtime (activations, workspace); our choice
OFFLOAD_HOST_MEMORY = "ddr5"  # [S] the offloading host's DRAM (a current server)


def profile_provenance(p: Provenance, engine: Engine) -> None:
    """Add which efficiency profile ``engine`` runs on to ``p``; on the calibrated GPU, every kernel
    constant with its source, the fitted ones also listed as fits."""
    e = engine.eff
    profile = next((name for name, prof in PROFILES.items() if prof == e), "custom")
    p.constant("efficiency", {"profile": profile, "compute": e.compute, "memory": e.memory}, e.source)
    if e.calibrated and engine.device.sms:
        for c in gpu.provenance(engine.device):
            p.constant(c["name"], c["value"], c["source"])
            p.fits += [f"{c['name']} = {c['value']:.4g} ({c['source'].split(';')[0]})"] if c["fit"] else []


def profile_of(p: Provenance) -> str | None:
    """The efficiency profile :func:`profile_provenance` recorded in ``p`` (None: no profiled device)."""
    return next((c["value"]["profile"] for c in p.constants if c["name"] == "efficiency"), None)


@dataclass(frozen=True)
class TokenTime:
    system: str
    seconds: float  # one decode step
    batch: int

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.seconds


class Baseline:
    """A roofline system: ``cfg`` on ``engine``; subclasses place operators and say what must fit."""

    name = "baseline"
    pure_stage_times = True  # a stage's time is a function of its shape alone: the serving engine memoizes it

    def __init__(
        self, model: str | ModelConfig, device: str, count: int = 1, wbytes: float = 2.0, eff: Efficiency = ATTACC
    ):
        self.cfg = model if isinstance(model, ModelConfig) else load_model(model)
        self.device, self.wbytes = get_device(device), wbytes
        self.engine = Engine(self.device, eff, count)

    @property
    def kv_bytes_per_token(self) -> float:
        return self.cfg.kv_bytes_per_token(KV_BYTES)

    def kv_capacity(self) -> float:
        """Bytes of KV cache the system can hold next to its resident weights."""
        return self.engine.count * self.device.mem_bytes - self.cfg.weight_bytes(self.wbytes)

    @property
    def resident_weight_bytes(self) -> float | None:
        """Weight bytes held in the memory the KV cache shares (what pipeline stages split)."""
        return self.cfg.weight_bytes(self.wbytes)

    def where(self) -> str:
        return f"{self.engine.count} x {self.device.name}"

    def hardware(self) -> str:
        d = self.device
        return f"{self.engine.count} x {d.name} ({d.mem_bytes / 1e9:.0f} GB {d.memory.upper()} each)"

    def usage(self, shape: StageShape) -> Usage:
        """Every operator's bytes from the device memory, its FLOPs, the all-reduces, the devices' static power."""
        u = Usage(static_w=device_static_w(self.device.tdp_w, self.engine.count))
        for moe, count in layer_groups(self.cfg):
            for op in layer_ops(self.cfg, shape, moe, self.wbytes):
                u.read(self.device.memory, np.multiply(count, op.bytes))
                u.flops = np.add(u.flops, np.multiply(count, op.flops))
            if self.engine.count > 1:
                u.move(self.device.interconnect, count * tp_allreduce_bytes(self.cfg, shape, self.engine.count))
        return u

    def energy(self, shape: StageShape, seconds: ArrayLike | None = None) -> np.ndarray:
        return joules(self.usage(shape), self.stage_times(shape) if seconds is None else seconds)

    def area(self) -> Area:
        return Area(0.0, "a baseline: nothing added to the stock parts")

    def provenance(self) -> Provenance:
        p = Provenance()
        p.constant(
            f"device {self.device.name}",
            {"flops": self.device.peak_flops, "mem_bw": self.device.mem_bw, "mem_bytes": self.device.mem_bytes},
            self.device.source,
        )
        profile_provenance(p, self.engine)
        return p

    def require_fit(self, batch: int, ctx: int) -> None:
        require_fit(
            self.cfg, self.kv_capacity() + self.cfg.weight_bytes(self.wbytes), self.where(), batch, ctx, self.wbytes
        )

    def stage_times(self, shape: StageShape) -> Num:
        return stage_time(self.cfg, shape, self.engine, self.wbytes)

    def decode(self, batch: int, kv_len: ArrayLike) -> TokenTime:
        """One decode step of ``batch`` requests at ``kv_len`` cached tokens (mean over a vector of lengths)."""
        self.require_fit(batch, int(np.max(kv_len)))
        return TokenTime(self.name, float(np.mean(self.stage_times(StageShape.decode(batch, kv_len)))), batch)


class GpuOnly(Baseline):
    """Everything resident in ``gpus`` GPUs' memory, tensor parallel."""

    def __init__(
        self, model, device: str = "a100-80g-sxm", gpus: int = 1, wbytes: float = 2.0, eff: Efficiency = ATTACC
    ):
        super().__init__(model, device, gpus, wbytes, eff)
        self.name = f"GPU-only ({gpus}x {device})"


class CpuOnly(Baseline):
    def __init__(self, model, device: str = "spr-ddr5", wbytes: float = 2.0, eff: Efficiency = ATTACC_ETA):
        super().__init__(model, device, 1, wbytes, eff)
        self.name = f"CPU-only ({device})"


class Offload(Baseline):
    """Weight offloading: the GPU keeps ``kv_budget`` bytes of KV cache and as many weights as fit in the rest
    (after a reserve), or ``resident_bytes`` of them; the other weights stream over ``link`` every step. The
    offloading runtimes the papers compare against are policies of this one system:

    * FlexGen (``overlap``, the default): layer i+1's weights load while layer i computes;
    * HF Accelerate (``overlap=False``): each layer's weights load, then it computes;
    * Deja Vu (``active``: the share of each sparse block's weights a step needs — ``{"attn": a, "mlp": m}``,
      the QKV input neurons and the FFN neurons its predictor marks — plus ``compute_overhead``, its MLP
      predictor's share of compute): only the predicted-active neurons of the offloaded weights cross the link.
    """

    def __init__(
        self,
        model,
        device: str = "rtx4090",
        link: str = "pcie4x16",
        kv_budget: float | None = None,
        wbytes: float = 2.0,
        eff: Efficiency = ATTACC,
        overlap: bool = True,
        resident_bytes: float | None = None,
        active: dict[str, float] | None = None,
        compute_overhead: float = 0.0,
    ):
        super().__init__(model, device, 1, wbytes, eff)
        self.link = get_link(link)
        self.usable = (1 - OFFLOAD_RESERVE) * self.device.mem_bytes
        self.kv_budget = self.usable / 2 if kv_budget is None else kv_budget
        if not 0 <= self.kv_budget <= self.usable:
            raise Infeasible(
                f"kv_budget: {self.kv_budget / 1e9:.1f} GB not allowed; {device} has "
                f"{self.usable / 1e9:.1f} GB after a {OFFLOAD_RESERVE:.0%} reserve"
            )
        resident = self.usable - self.kv_budget if resident_bytes is None else resident_bytes
        self.streamed = 1 - min(1.0, resident / self.cfg.weight_bytes(wbytes))
        self.overlap, self.active, self.compute_overhead = overlap, active or {}, compute_overhead
        self.name = f"offload ({device} + {link})"

    def _moved(self, ops) -> Num:
        """Weight bytes a layer's step streams: the offloaded share, of the active neurons only (``active``)."""
        share = {"qkv": self.active.get("attn", 1.0), "ffn": self.active.get("mlp", 1.0)}
        return self.streamed * sum(np.multiply(op.weight_bytes, share.get(op.name.split("_")[0], 1.0)) for op in ops)

    def kv_capacity(self) -> float:
        return self.kv_budget

    @property
    def resident_weight_bytes(self) -> None:
        """None: offloaded weights stream from the host, so pipeline stages have no resident split to share."""
        return None

    def where(self) -> str:
        return f"{self.device.name} (KV budget)"

    def require_fit(self, batch: int, ctx: int) -> None:
        require_fit(self.cfg, self.kv_budget, self.where(), batch, ctx, self.wbytes, weights=False)

    def hardware(self) -> str:
        return f"{super().hardware()} + host DRAM over {self.link.name}, {self.streamed:.0%} of weights streamed"

    def usage(self, shape: StageShape) -> Usage:
        """The GPU's usage, plus the streamed weights read from the host's DRAM and moved over the link."""
        u = super().usage(shape)
        moved = sum(
            count * self._moved(layer_ops(self.cfg, shape, moe, self.wbytes)) for moe, count in layer_groups(self.cfg)
        )
        u.read(OFFLOAD_HOST_MEMORY, moved)
        u.move(self.link.name, moved)
        return u

    def stage_times(self, shape: StageShape) -> Num:
        t: Num = 0.0
        for moe, count in layer_groups(self.cfg):
            ops = layer_ops(self.cfg, shape, moe, self.wbytes)
            compute = sum(self.engine.op_time(op, shape) for op in ops) * (1 + self.compute_overhead)
            load = np.divide(self._moved(ops), self.link.bw) + self.link.latency_s
            t = t + count * (np.maximum(compute, load) if self.overlap else compute + load)
        return t


def pipelined(a: Num, b: Num, stages: int) -> Num:
    """Two dependent kinds of work overlapped over ``stages`` independent slices (head groups): all but
    one slice of the shorter hides under the longer."""
    return np.maximum(a, b) + np.minimum(a, b) / stages


def coprocess(a: Num, b: Num) -> Num:
    """Divisible work split between two engines so both finish together (times ``a`` and ``b`` alone)."""
    return a * b / (a + b)


class HbmPim(Baseline):
    """AttAcc-like: decode attention reads the KV cache inside HBM at ``factor`` x the external bandwidth
    (peak: in-bank reads are not derated); q, k, v go to the PIM and the output comes back over the
    device link; the FC layers and prefill attention run on the GPU. By default the two serialise per
    layer (attention depends on QKV). AttAcc's options: ``overlap`` (--pipeopt) overlaps attention of one
    head group with the QKV/projection of others (:func:`pipelined`, heads per GPU slices);
    ``ff_coprocess`` (--ffopt) splits the FFN weights between GPU and PIM so both finish together
    (:func:`coprocess`), the PIM reading every weight once per token (1 Op/B: no reuse across the batch)."""

    def __init__(
        self,
        model,
        device: str = "a100-80g-sxm",
        gpus: int = 1,
        factor: float = HBM_PIM_FACTOR,
        ff_coprocess: bool = False,
        overlap: bool = False,
        wbytes: float = 2.0,
        eff: Efficiency = ATTACC,
    ):
        super().__init__(model, device, gpus, wbytes, eff)
        if self.cfg.mla:  # its PIM engine computes at the GPU's peak: right only while attention is bandwidth-bound
            raise Infeasible(
                f"{self.cfg.name}: multi-head latent attention (one latent shared by every head, many FLOPs per "
                "byte); AttAcc's bank PIM serves each head's own K and V at about 1 FLOP per byte"
            )
        self.pim = Engine(replace(self.device, mem_bw=self.device.mem_bw * factor), PEAK, gpus)
        self.link = get_link(self.device.interconnect)
        self.ff_coprocess, self.overlap, self.factor = ff_coprocess, overlap, factor
        self.name = f"HBM-PIM attention ({gpus}x {device}, {factor:g}x)"

    def hardware(self) -> str:
        return f"{super().hardware()} + bank PIM at {self.factor:g}x bandwidth"

    def usage(self, shape: StageShape) -> Usage:
        """Decode attention reads the KV cache on the in-bank path and q, k, v and outputs cross the link;
        with FF co-processing the PIM's share of the FFN weights is read in-bank too (once per token)."""
        cfg, u = self.cfg, super().usage(shape)
        for moe, count in layer_groups(cfg):
            ops = {op.name: op for op in layer_ops(cfg, shape, moe, self.wbytes)}
            kv = np.multiply(count, ops["attn_decode"].bytes)
            u.read(self.device.memory, np.negative(kv))
            u.read(self.device.memory, kv, "bank")
            u.move(
                self.device.interconnect,
                count * np.multiply(shape.decode_reqs, (2 * cfg.hidden + 2 * cfg.kv_dim) * ACT_BYTES),
            )
            if self.ff_coprocess:
                names = [n for n in ops if n.startswith("ffn_") or n == "router"]
                gpu_t = sum(self.engine.op_time(ops[n]) for n in names)
                pim_bytes = sum(np.multiply(shape.tokens, ops[n].weight_bytes) for n in names)
                share = gpu_t / (gpu_t + pim_bytes / self.pim.bandwidth)  # the PIM's part of the split
                moved = sum(np.asarray(ops[n].weight_bytes, float) for n in names)
                u.read(self.device.memory, np.negative(np.multiply(count * share, moved)))
                u.read(self.device.memory, np.multiply(count * share, pim_bytes), "bank")
        return u

    def area(self) -> Area:
        """Bank-PIM MACs sized to 1 Op/B at the PIM bandwidth, in the DRAM process
        (:data:`sysmodel.cost.devices.BANK_PIM_MM2_PER_TBPS`) at this device's."""
        return Area(
            BANK_PIM_MM2_PER_TBPS / 1e12 * self.factor * self.device.mem_bw * self.engine.count,
            "[D] Duplex's Bank-PIM area per unit of PIM bandwidth (§VII-E, §VI) at this PIM's bandwidth",
        )

    def stage_times(self, shape: StageShape) -> Num:
        cfg, gpu, pim, gpus = self.cfg, self.engine, self.pim, self.engine.count
        t: Num = 0.0
        for moe, count in layer_groups(cfg):
            ops = {op.name: op for op in layer_ops(cfg, shape, moe, self.wbytes)}
            fc = gpu.op_time(ops["qkv"]) + gpu.op_time(ops["o_proj"]) + gpu.op_time(ops["attn_prefill"], shape)
            qkv_out = np.multiply(shape.decode_reqs, (2 * cfg.hidden + 2 * cfg.kv_dim) * ACT_BYTES / gpus)
            attn = pim.op_time(ops["attn_decode"]) + qkv_out / self.link.bw  # q, k, v out; the output back
            ffn_names = [n for n in ops if n.startswith("ffn_") or n == "router"]
            ffn = sum(gpu.op_time(ops[n]) for n in ffn_names)
            if self.ff_coprocess:
                pim_ffn = sum(np.multiply(shape.tokens, ops[n].weight_bytes) for n in ffn_names) / pim.bandwidth
                ffn = coprocess(ffn, pim_ffn)
            rest = sum(gpu.op_time(op) for op in ops.values() if op.kind in ("norm", "act"))
            front = pipelined(fc, attn, max(1, cfg.heads // gpus)) if self.overlap else fc + attn
            t = t + count * (front + ffn + rest + tp_allreduce(cfg, shape, gpu))
        return t


# --- one decode step, by name ------------------------------------------------------------------------------


def gpu_only(
    model: str,
    device: str = "a100-80g-sxm",
    batch: int = 1,
    kv_len: ArrayLike = 1024,
    wbytes: float = 2.0,
    gpus: int = 1,
    eff: Efficiency = ATTACC,
) -> TokenTime:
    return GpuOnly(model, device, gpus, wbytes, eff).decode(batch, kv_len)


def offload_pcie(
    model: str,
    device: str = "rtx4090",
    link: str = "pcie4x16",
    batch: int = 1,
    kv_len: int = 1024,
    wbytes: float = 2.0,
    eff: Efficiency = ATTACC,
) -> TokenTime:
    """The KV budget is exactly this batch's cache; every other byte of GPU memory holds weights."""
    cfg = load_model(model)
    kv = batch * kv_len * cfg.kv_bytes_per_token()
    usable = (1 - OFFLOAD_RESERVE) * get_device(device).mem_bytes
    if kv > usable:
        require_fit(
            cfg, usable, f"{device} (after a {OFFLOAD_RESERVE:.0%} reserve)", batch, kv_len, wbytes, weights=False
        )
    return Offload(cfg, device, link, kv, wbytes, eff).decode(batch, kv_len)


def cpu_only(
    model: str,
    device: str = "spr-ddr5",
    batch: int = 1,
    kv_len: int = 1024,
    wbytes: float = 2.0,
    eff: Efficiency = ATTACC_ETA,
) -> TokenTime:
    return CpuOnly(model, device, wbytes, eff).decode(batch, kv_len)


def hbm_pim_attention(
    model: str,
    device: str = "a100-80g-sxm",
    batch: int = 1,
    kv_len: ArrayLike = 1024,
    wbytes: float = 2.0,
    gpus: int = 1,
    factor: float = HBM_PIM_FACTOR,
    eff: Efficiency = ATTACC,
    ff_coprocess: bool = False,
    overlap: bool = False,
) -> TokenTime:
    return HbmPim(model, device, gpus, factor, ff_coprocess, overlap, wbytes, eff).decode(batch, kv_len)


# --- AttAcc anchor: the public AttAcc simulator's own outputs for the same configuration ----------------

ATTACC_RUNS = {  # (system, batch): tokens/s — scale-snu/attacc_simulator main.py, GPT-175B, 8x A100a
    ("DGX", 1): 32.22,
    ("DGX", 16): 441.03,  # --system dgx --gpu A100a --ngpu 8 --lin 2048 --lout 128
    ("DGX+AttAcc_bank", 1): 58.55,
    ("DGX+AttAcc_bank", 16): 661.84,  # + --pim bank --powerlimit --ffopt --pipeopt
}
ATTACC_LIN, ATTACC_LOUT = 2048, 128


def attacc_anchor() -> list[dict]:
    """membound's GPU-only and HBM-PIM baselines configured as the AttAcc runs: AttAcc's A100a device
    (312 TFLOPS, 3352 GB/s), 8 GPUs in tensor parallel over NVLink3, GPT-175B, decode throughput only
    (AttAcc reports batch / mean generation-step time; prefill excluded), steps at contexts
    2049..2175 (L_in + 1 .. L_in + L_out - 1), PIM at 9x internal bandwidth with FF co-processing and
    head-group pipelining."""
    ctx = np.arange(ATTACC_LIN + 1, ATTACC_LIN + ATTACC_LOUT)
    rows = []
    for (system, batch), paper in ATTACC_RUNS.items():
        if system == "DGX":
            t = gpu_only("gpt3-175b", "a100-hbm3", batch, ctx, gpus=8).seconds
        else:
            t = hbm_pim_attention(
                "gpt3-175b", "a100-hbm3", batch, ctx, gpus=8, factor=ATTACC_BANK_FACTOR, ff_coprocess=True, overlap=True
            ).seconds
        rows.append({"system": system, "batch": batch, "attacc": paper, "model": batch / t, "ratio": batch / t / paper})
    return rows


ATTACC_DIFFERENCES = (
    "AttAcc tiles every GEMM over the SMs and charges the wave-quantization loss (about 9% on GPT-175B's FC "
    "layers); membound charges SM occupancy only for decode attention.",
    "AttAcc times PIM attention with Ramulator2 command traces (incl. moving scores to the softmax buffer); "
    "membound reads the KV cache at the PIM's peak internal bandwidth.",
)


# --- the registry entries ------------------------------------------------------------------------------

WEIGHT_SHARE = 0.8  # [S] `devices=0` picks the fewest devices (a power of two) whose memory the weights fill at
# most this share of, leaving the rest for the KV cache


def fewest_devices(model: str, device: str, wbytes: float = 2.0) -> int:
    cfg, mem = load_model(model), get_device(device).mem_bytes
    n = 1
    while cfg.weight_bytes(wbytes) > WEIGHT_SHARE * n * mem and n < 64:
        n *= 2
    return n


def tp_devices(model: str, devices: int, option: str = "devices", most: int = 64) -> int:
    """A user's tensor-parallel device count, refused unless it splits the attention heads evenly: each device
    computes whole heads (vLLM refuses the same: ``ModelConfig.verify_with_parallel_config``). The papers'
    own settings (Hermes' TensorRT-LLM on 5 GPUs) build their systems directly, unchecked. Infeasible, not a
    plain ValueError: a default that does not fit the model (L3's 8 GPUs on Falcon-7B's 71 heads) is one
    ``compare`` row saying so, not the whole comparison refused."""
    heads = load_model(model).heads
    if heads % devices:
        ok = ", ".join(str(d) for d in range(1, min(heads, most) + 1) if heads % d == 0)
        raise Infeasible(
            f"{option}: {devices} does not divide {model}'s {heads} attention heads (tensor parallelism gives "
            f"each device whole heads); allowed: {ok}"
        )
    return devices


def _tensor_parallel(model: str, devices: int, fewest: int) -> int:
    """``devices``, or with 0 the ``fewest`` that fit: either checked against the heads (:func:`tp_devices`)."""
    return tp_devices(model, devices) if devices else tp_devices(model, fewest, "devices=0 (the fewest that fit)")


_DEVICES = (
    Param(
        "devices",
        0,
        "devices in tensor parallel (0: the fewest, a power of two, whose memory the "
        f"weights fill at most {WEIGHT_SHARE:.0%} of)",
        minimum=0,
        maximum=64,
    ),
)


EFFICIENCY = (  # the parameter every system with a profiled device takes (`--set efficiency=NAME`)
    Param(
        "efficiency",
        "class",
        "achieved fractions of peak: a profile of cost.PROFILES, or class (the "
        "device class's: GPU attacc, CPU attacc-eta)",
        choices=("class", *PROFILES),
    ),
)


def device_profile(name: str, device: str) -> Efficiency:
    """The profile an ``efficiency`` parameter names on ``device`` (``class``: its device class's)."""
    return efficiency_profile(None if name == "class" else name, get_device(device))


def _device(default: str) -> Param:
    from sysmodel.cost.devices import DEVICES

    return Param("device", default, "device (sysmodel/cost/devices.py)", choices=tuple(DEVICES))


@register(
    "gpu",
    "GPU-only: weights and KV cache in GPU memory, tensor parallel (AttAcc's GPU profile)",
    (_device("a100-80g-sxm"), *_DEVICES, Param("wbytes", 2.0, "bytes per weight", minimum=0.125), *EFFICIENCY),
)
def _gpu(model: str, device: str, devices: int, wbytes: float, efficiency: str) -> GpuOnly:
    n = _tensor_parallel(model, devices, fewest_devices(model, device, wbytes))
    return GpuOnly(model, device, n, wbytes, device_profile(efficiency, device))


@register(
    "hbm-pim",
    "GPU + HBM-PIM (AttAcc-like): decode attention in-bank at 16x bandwidth, FC on the GPU",
    (
        _device("a100-80g-sxm"),
        *_DEVICES,
        Param("factor", float(HBM_PIM_FACTOR), "PIM / external bandwidth", minimum=1),
        *EFFICIENCY,
    ),
)
def _hbm_pim(model: str, device: str, devices: int, factor: float, efficiency: str) -> HbmPim:
    n = _tensor_parallel(model, devices, fewest_devices(model, device))
    return HbmPim(model, device, n, factor, eff=device_profile(efficiency, device))


@register(
    "cpu",
    "CPU-only: a Sapphire Rapids-class server, weights and KV cache in DDR5, AMX",
    (_device("spr-ddr5"), Param("wbytes", 2.0, "bytes per weight", minimum=0.125), *EFFICIENCY),
)
def _cpu(model: str, device: str, wbytes: float, efficiency: str) -> CpuOnly:
    return CpuOnly(model, device, wbytes, device_profile(efficiency, device))


@register(
    "offload",
    "Weight offloading (FlexGen-like): a consumer GPU holds the KV cache and what weights fit, "
    "the rest stream over PCIe each step",
    (_device("rtx4090"), Param("link", "pcie4x16", "host link", choices=("pcie4x16", "pcie5x16")), *EFFICIENCY),
)
def _offload(model: str, device: str, link: str, efficiency: str) -> Offload:
    return Offload(model, device, link, eff=device_profile(efficiency, device))
