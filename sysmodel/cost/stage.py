"""The system model's one cost function: a stage's operators on engines -> time.

Every timing in membound that is not a measured RTL cycle count goes through :func:`stage_time`: the
sweep, the baselines, the serving engine and the papers' systems. An :class:`Engine` is a device at an
explicit achieved :class:`Efficiency` (never implicit), times ``count`` devices in tensor parallel; an
operator takes the roofline time max(FLOPs / achieved FLOP/s, bytes / achieved B/s) on the engine it is
placed on, and a layer's operators run one after another (each depends on the previous one's output).
Tensor parallelism adds two all-reduces of the layer's output per layer (after the attention projection
and after the FFN) on the device's link (:meth:`sysmodel.cost.devices.Link.allreduce_time`).

The GPU profile (:data:`ATTACC`) is AttAcc's calibrated GPU model (scale-snu/attacc_simulator, src/config.py
and src/devices.py): compute and memory derated to 0.8 and 0.85; a fixed time per norm (6.87 us) and per
activation (8.29 us) kernel, fitted there to A100 measurements; and decode attention spread one thread
block per (request, head) over the SMs, so few blocks leave SMs idle (wave quantization). AttAcc further
models GEMM tiling over SMs; membound does not (a few percent at decode, named in the AttAcc comparison).

The ``calibrated`` profile (:data:`CALIBRATED`, never a default) hands a GPU's operators and NVLink
all-reduces to :mod:`sysmodel.cost.gpu`: a cost law per kernel class, fitted to public A100/H100 measurements.

Feasibility is checked once, here: :func:`require_fit` raises :class:`Infeasible` naming the point when
weights plus KV cache exceed the memory that must hold them; sweeps report the same reason in a column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from sysmodel.cost import gpu
from sysmodel.cost.devices import Device, get_link
from sysmodel.cost.models import KV_BYTES, ModelConfig, Op, StageShape, layer_groups, layer_ops
from sysmodel.cost.num import Num


@dataclass(frozen=True)
class Efficiency:
    """How a device achieves its peak: fractions of peak compute and memory bandwidth, a fixed time per
    norm and per activation kernel, and whether decode attention is limited by SM occupancy; with where
    the numbers come from."""

    compute: float
    memory: float
    source: str
    norm_s: float = 0.0
    act_s: float = 0.0
    occupancy: bool = False
    calibrated: bool = False  # operators and collectives on sysmodel.cost.gpu's per-kernel laws (GPUs only)

    def __post_init__(self) -> None:
        for name in ("compute", "memory"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise ValueError(f"efficiency.{name}: {v} not allowed; a fraction in (0, 1]")


PEAK = Efficiency(1.0, 1.0, "peak rates, no derating")
ATTACC_ETA = Efficiency(
    0.8,
    0.85,
    "AttAcc simulator src/config.py SCALING_FACTOR (eta_c 0.8, eta_m 0.85), on "
    "which L3's simulator builds (shared/notes §1.5)",
)
ATTACC = Efficiency(
    0.8,
    0.85,
    "AttAcc simulator GPU model: SCALING_FACTOR (src/config.py); norm 6.87 us and "
    "activation 8.29 us per kernel, SM occupancy of attention (src/devices.py)",
    norm_s=6.87e-6,
    act_s=8.29e-6,
    occupancy=True,
)
A100_MEASURED = Efficiency(
    0.8,
    0.88,
    "memory: 1.80 of 2.04 TB/s read on an A100 80GB SXM, 88% of peak in Nsight "
    "Compute (NVIDIA developer forums, 'Trouble to reach peak bandwidth of A100', "
    "2025; the GTC talk it cites: about 90% at best); compute, kernel overheads and "
    "occupancy as ATTACC",
    norm_s=6.87e-6,
    act_s=8.29e-6,
    occupancy=True,
)
CALIBRATED = Efficiency(
    0.72,
    0.79,
    "per-kernel laws fitted to Vidur's A100/H100 profiling data (sysmodel/cost/gpu.py; its constants "
    "under 'gpu kernel'); roofline-only paths at the A100 GEMM fit's fractions (gemm_compute, gemm_memory)",
    calibrated=True,
)
# Named efficiency profiles: a system's achieved fractions of its device's peaks come from one of these, each
# number sourced; CLASS_PROFILE is the default per device class (``--set efficiency=NAME`` picks another).
PROFILES = {
    "attacc": ATTACC,
    "attacc-eta": ATTACC_ETA,
    "a100-measured": A100_MEASURED,
    "peak": PEAK,
    "calibrated": CALIBRATED,
}
CLASS_PROFILE = {"gpu": "attacc", "cpu": "attacc-eta"}


def device_class(device: Device) -> str:
    """``gpu`` for a device with streaming multiprocessors, ``cpu`` for the rest (CPUs, Apple SoCs)."""
    return "gpu" if device.sms else "cpu"


def efficiency(name: str | None, device: Device) -> Efficiency:
    """The profile ``name`` of :data:`PROFILES`, or with no name the device class's (:data:`CLASS_PROFILE`)."""
    name = name or CLASS_PROFILE[device_class(device)]
    if name not in PROFILES:
        raise ValueError(f"efficiency: unknown {name!r}; allowed: {', '.join(PROFILES)}")
    if PROFILES[name].calibrated and device_class(device) != "gpu":
        raise ValueError(f"efficiency: calibrated is fitted to GPU kernels; {device.name} is a {device_class(device)}")
    return PROFILES[name]


@dataclass(frozen=True)
class Engine:
    """``count`` devices in tensor parallel (each holds 1/count of every operator: FLOPs and bandwidth
    add up, and :func:`stage_time` adds the all-reduces) at an achieved efficiency."""

    device: Device
    eff: Efficiency = ATTACC
    count: int = 1

    @cached_property  # read by every operator of every stage: computed once per engine (same product)
    def flops(self) -> float:
        return self.device.peak_flops * self.eff.compute * self.count

    @cached_property
    def bandwidth(self) -> float:
        return self.device.mem_bw * self.eff.memory * self.count

    def time(self, flops: ArrayLike, nbytes: ArrayLike) -> Num:
        return np.maximum(np.divide(flops, self.flops), np.divide(nbytes, self.bandwidth))

    def occupancy(self, blocks: ArrayLike) -> Num:
        """Busy fraction of the SMs for ``blocks`` thread blocks per device (1 when not modelled)."""
        if not (self.eff.occupancy and self.device.sms):
            return np.ones_like(np.asarray(blocks, float))
        per_dev = np.ceil(np.divide(blocks, self.count))
        waves = np.maximum(np.ceil(per_dev / self.device.sms), 1)
        return np.where(per_dev > 0, per_dev / (waves * self.device.sms), 1.0)

    def op_time(self, op: Op, shape: StageShape | None = None) -> Num:
        """Seconds of ``op``; ``shape``, the stage it belongs to, splits a calibrated GPU's prefill
        attention into causal and prefix pairs (:func:`sysmodel.cost.gpu.causal_share`)."""
        if self.eff.calibrated and self.device.sms:
            return gpu.op_time(self.device, self.count, op, shape)
        t = self.time(op.flops, op.bytes)
        if op.kind == "attention" and np.any(op.blocks):
            t = t / self.occupancy(op.blocks)
        if op.kind == "norm":
            t = t + self.eff.norm_s
        elif op.kind == "act":
            t = t + self.eff.act_s
        return t

    def allreduce_time(self, nbytes: ArrayLike) -> Num:
        """One tensor-parallel all-reduce of a ``nbytes`` vector per device (0 for a single device)."""
        if self.count == 1:
            return np.zeros_like(np.asarray(nbytes, float))
        if self.eff.calibrated and self.device.link in gpu.LINK_FAMILY:
            return gpu.allreduce_time(gpu.kernel_fit(gpu.LINK_FAMILY[self.device.link]), self.count, nbytes)
        return get_link(self.device.interconnect).allreduce_time(nbytes, self.count)


Placement = Engine | Callable[[Op], Engine]  # one engine for everything, or an engine per operator


ALLREDUCES_PER_LAYER = 2  # Megatron tensor parallelism: after the attention projection and after the FFN
ACT_BYTES = 2.0  # FP16 activations


def tp_allreduce(cfg: ModelConfig, shape: StageShape, engine: Engine) -> Num:
    """A layer's tensor-parallel collectives: its output vectors (tokens x hidden) all-reduced twice."""
    return ALLREDUCES_PER_LAYER * engine.allreduce_time(np.multiply(shape.tokens, cfg.hidden * ACT_BYTES))


def tp_allreduce_bytes(cfg: ModelConfig, shape: StageShape, devices: int) -> Num:
    """Bytes a layer's tensor-parallel all-reduces put on the links, all devices together: a ring all-reduce
    of an n-byte vector sends 2 (d - 1) / d x n from each of d devices."""
    vector = np.multiply(shape.tokens, cfg.hidden * ACT_BYTES)
    return ALLREDUCES_PER_LAYER * 2 * (devices - 1) * vector


def stage_time(
    cfg: ModelConfig, shape: StageShape, placement: Placement, wbytes: float = 2.0, kv_bytes: float = KV_BYTES
) -> Num:
    """Seconds for one stage: every layer's operators, each on the engine ``placement`` gives it, plus
    the tensor-parallel all-reduces of the engine that runs the layer's projection."""
    engine_of = placement if callable(placement) else (lambda _op: placement)
    total: Num = 0.0
    for moe, count in layer_groups(cfg):
        ops = layer_ops(cfg, shape, moe, wbytes, kv_bytes)
        proj = next(op for op in ops if op.name == "o_proj")
        layer = sum(engine_of(op).op_time(op, shape) for op in ops) + tp_allreduce(cfg, shape, engine_of(proj))
        total = total + count * layer
    return total


def decode_step(
    cfg: ModelConfig,
    placement: Placement,
    batch: ArrayLike = 1,
    kv_len: ArrayLike = 1024,
    wbytes: float = 2.0,
    kv_bytes: float = KV_BYTES,
) -> Num:
    """Seconds for one decode step of ``batch`` requests at ``kv_len`` cached tokens each."""
    return stage_time(cfg, StageShape.decode(batch, kv_len), placement, wbytes, kv_bytes)


def decode_tokens(
    cfg: ModelConfig,
    placement: Placement,
    batch: int,
    start: int,
    tokens: int,
    wbytes: float = 2.0,
    kv_bytes: float = KV_BYTES,
) -> np.ndarray:
    """Seconds of each of ``tokens`` consecutive decode steps of ``batch`` requests, the first at ``start``
    cached tokens, each one more: one array evaluation of the cost function (the KV length is the only thing
    that changes step to step), equal to calling :func:`decode_step` per token."""
    ctx = np.arange(start, start + tokens)
    return np.broadcast_to(np.asarray(decode_step(cfg, placement, batch, ctx, wbytes, kv_bytes), float), ctx.shape)


class Infeasible(ValueError):
    """A configuration that cannot run; the message names the point and what does not fit."""


def footprint(
    cfg: ModelConfig, batch: int, ctx: int, wbytes: float = 2.0, kv_bytes: float = KV_BYTES, weights: bool = True
) -> float:
    """Bytes that must be resident: the weights (unless streamed) plus ``batch`` x ``ctx`` tokens of KV."""
    return (cfg.weight_bytes(wbytes) if weights else 0.0) + batch * ctx * cfg.kv_bytes_per_token(kv_bytes)


def require_fit(
    cfg: ModelConfig,
    capacity: float,
    where: str,
    batch: int,
    ctx: int,
    wbytes: float = 2.0,
    kv_bytes: float = KV_BYTES,
    weights: bool = True,
) -> None:
    """Raise :class:`Infeasible` unless the footprint fits ``capacity`` bytes of ``where``."""
    need = footprint(cfg, batch, ctx, wbytes, kv_bytes, weights)
    if need > capacity:
        what = "weights + KV cache" if weights else "KV cache"
        raise Infeasible(
            f"{cfg.name} at batch {batch} x {ctx} tokens: {what} need {need / 1e9:.1f} GB; "
            f"{where} holds {capacity / 1e9:.0f} GB"
        )
