"""Roofline devices, links and the flash read model the system model composes.

Peak numbers carry their source. Achieved rates are the cost model's (``sysmodel.cost.stage.Efficiency``),
never folded into a device.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from sysmodel.cost.num import Num


@dataclass(frozen=True)
class Device:
    """``sms``: streaming multiprocessors (GPUs; 0 elsewhere): the cost model's occupancy of decode
    attention. ``link``: the interconnect tensor-parallel devices of this kind use for collectives.
    ``memory``: its memory technology (a key of ``sysmodel.cost.energy.MEMORIES``); ``tdp_w``: its board or
    package power from the vendor's datasheet (``sysmodel.cost.energy`` takes a share of it as static power)."""

    name: str
    peak_flops: float  # dense FP16/BF16 FLOP/s (2 per FMA)
    mem_bw: float  # B/s
    mem_bytes: float
    source: str
    sms: int = 0
    link: str | None = None
    memory: str = "hbm2e"
    tdp_w: float = 0.0
    vector_flops: float = 0.0  # FP32 FLOP/s of the CUDA cores (non-tensor): matrix-vector kernels run there

    @property
    def interconnect(self) -> str:
        """``link``, for a system that moves data between devices of this kind (an error naming the device
        when it has none)."""
        if self.link is None:
            raise ValueError(f"device: {self.name} has no interconnect for multi-device systems")
        return self.link

    def time(self, flops: float, nbytes: float) -> float:
        """Roofline time at peak rates: the slower of compute and memory."""
        if flops < 0 or nbytes < 0:
            raise ValueError("flops, nbytes: must be >= 0")
        return max(flops / self.peak_flops, nbytes / self.mem_bw)


GIB = 1 << 30

# The Sapphire Rapids server of DECA §7.1 (its cores, clock and AMX rate; sysmodel/designs/deca builds on them)
SPR_CORES = 56
SPR_CLOCK_HZ = 2.5e9
SPR_TMUL_CYCLES = 16  # cycles per TMUL tile op (DECA §2.3)
SPR_TILE_FMAS = 16 * 16 * 32  # BF16 FMAs of one tile op
SPR_PEAK_FLOPS = 2 * SPR_CORES * SPR_CLOCK_HZ * SPR_TILE_FMAS / SPR_TMUL_CYCLES
SPR_TDP_W = 350  # DECA §7

# Bank-PIM silicon per TB/s of PIM bandwidth, mm2 [D] Duplex §VII-E (logic-die area breakdown) and §VI (Bank-PIM:
# MACs at 1 Op/B and 16x the stack's bandwidth, in the DRAM process at 10x logic area): 16.85 mm2 per stack at
# 10.73 TB/s. The basis every bank-level PIM's area is priced on (the hbm-pim baseline's); Duplex's model derives
# it (sysmodel.designs.duplex.model.pim_area_mm2("bank") / bank_pim_stack_bw()) and tests/test_sysmodel_duplex.py holds
# the two equal.
BANK_PIM_MM2_PER_TBPS = 1.5707874245570954

DEVICES = {
    d.name: d
    for d in (
        Device(
            "rtx4090",
            165.2e12,
            1008e9,
            24e9,
            "NVIDIA Ada (AD102) whitepaper: FP16 tensor 165.2 TFLOPS dense "
            "(FP32 accumulate), 1008 GB/s GDDR6X, 24 GB, 128 SMs, 450 W; Hermes §VI"
            "; FP32 82.6 TFLOPS non-tensor (Ada whitepaper)",
            sms=128,
            link="pcie4x16",
            memory="gddr6x",
            tdp_w=450,
            vector_flops=82.6e12,
        ),
        Device(
            "rtx4090-hermes",
            330e12,
            936e9,
            24e9,
            "the RTX 4090 as Hermes prints it: 936 GB/s (§IV-A1), 330 "
            "tensor TFLOPS FP16 (§V-A); the real part: rtx4090"
            "; FP32 82.6 TFLOPS non-tensor (the real part's, Ada whitepaper)",
            sms=128,
            link="pcie4x16",
            memory="gddr6x",
            tdp_w=450,
            vector_flops=82.6e12,
        ),
        Device(
            "t4-hermes",
            65e12,
            320e9,
            16e9,
            "Tesla T4 as Hermes §V-E2 prints it: 16 GB, 320 GB/s, 65 tensor TOPS FP16; 70 W (NVIDIA datasheet)"
            "; FP32 8.1 TFLOPS (T4 datasheet)",
            sms=40,
            link="pcie4x16",
            memory="gddr6",
            tdp_w=70,
            vector_flops=8.1e12,
        ),
        Device(
            "rtx3090-hermes",
            142e12,
            936e9,
            24e9,
            "RTX 3090 as Hermes §V-E2 prints it: 'almost the same graphic memory "
            "and bandwidth as RTX 4090' (24 GB, 936 GB/s), 142 tensor TOPS FP16; 350 W (NVIDIA datasheet)"
            "; FP32 35.6 TFLOPS non-tensor (Ampere GA102 whitepaper)",
            sms=82,
            link="pcie4x16",
            memory="gddr6x",
            tdp_w=350,
            vector_flops=35.6e12,
        ),
        Device(
            "rtx6000-ada",
            364e12,
            960e9,
            48e9,
            "DECA Table 7 (960 GB/s, 364 TFLOPS); NVIDIA datasheet 300 W; FP32 91.1 TFLOPS (datasheet)",
            sms=142,
            link="pcie4x16",
            memory="gddr6",
            tdp_w=300,
            vector_flops=91.1e12,
        ),
        Device(
            "a100-80g-pcie",
            312e12,
            1935e9,
            80e9,
            "DECA Table 7 (1935 GB/s, 312 TFLOPS); NVIDIA A100 datasheet (300 W); FP32 19.5 TFLOPS (datasheet)",
            sms=108,
            link="pcie4x16",
            tdp_w=300,
            vector_flops=19.5e12,
        ),
        Device(
            "a100-40g-sxm",
            312e12,
            1555e9,
            40e9,
            "NVIDIA A100 datasheet (40 GB HBM2, 1555 GB/s, 400 W); Hermes §V-F; FP32 19.5 TFLOPS",
            sms=108,
            link="nvlink-a100",
            tdp_w=400,
            vector_flops=19.5e12,
        ),
        Device(
            "a100-80g-sxm",
            312e12,
            2039e9,
            80e9,
            "NVIDIA A100 datasheet (2039 GB/s HBM2e, 108 SMs, 400 W); L3 §6.1; FP32 19.5 TFLOPS",
            sms=108,
            link="nvlink-a100",
            tdp_w=400,
            vector_flops=19.5e12,
        ),
        Device(
            "a100-hbm3",
            312e12,
            3352e9,
            80 * GIB,
            "AttAcc simulator src/config.py 'A100a' (A100 with HBM3): 312 "
            "TFLOPS, 3352 GB/s, 80 GiB, 108 SMs, NVLink3; 400 W as the A100 SXM; FP32 19.5 TFLOPS as the A100",
            sms=108,
            link="nvlink-a100",
            memory="hbm3",
            tdp_w=400,
            vector_flops=19.5e12,
        ),
        Device(
            "h100-sxm",
            989.4e12,
            3352e9,
            80 * GIB,
            "AttAcc simulator src/config.py 'H100' (DGX-H100 whitepaper): "
            "989.4 TFLOPS, 3352 GB/s, 80 GiB, 132 SMs, NVLink4, 700 W; Duplex's xPU (notes §2.8)"
            "; FP32 67 TFLOPS (H100 datasheet, SXM)",
            sms=132,
            link="nvlink-h100",
            memory="hbm3",
            tdp_w=700,
            vector_flops=67e12,
        ),
        Device(
            "h100-pcie",
            989e12,
            2000e9,
            80e9,
            "DECA Table 7 (2000 GB/s, 989 TFLOPS); NVIDIA datasheet 350 W; FP32 51 TFLOPS (H100 datasheet, PCIe)",
            sms=114,
            link="pcie5x16",
            tdp_w=350,
            vector_flops=51e12,
        ),
        Device(
            "spr-ddr5",
            SPR_PEAK_FLOPS,
            260e9,
            512e9,
            "DECA §7.1: 56 cores x 2.5 GHz, one 16x16x32 TMUL tile op "
            "(8192 FMA) per 16 cycles: 71.68 T FMA/s; ~260 GB/s achievable; TDP 350 W (§7)",
            memory="ddr5",
            tdp_w=SPR_TDP_W,
        ),
        Device(
            "spr-hbm",
            SPR_PEAK_FLOPS,
            850e9,
            64e9,
            "DECA §7.1 (~850 GB/s achievable, 64 GB HBM); TDP 350 W (§7)",
            tdp_w=SPR_TDP_W,
        ),
        Device(
            "m2-ultra",
            27.2e12,
            800e9,
            192e9,
            "Apple M2 Ultra: 27.2 TFLOPS FP32 GPU, 800 GB/s LPDDR5, up to 192 GB; "
            "LLM in a flash §4; ~300 W (Mac Studio) [S: Apple gives no TDP]",
            memory="lpddr5",
            tdp_w=300,
        ),
        Device(
            "m1-max",
            10.4e12,
            400e9,
            64e9,
            "Apple M1 Max: 10.4 TFLOPS FP32 GPU, 400 GB/s LPDDR5; LLM in a flash §4; "
            "~60 W package under load [S: Apple gives no TDP]",
            memory="lpddr5",
            tdp_w=60,
        ),
    )
}


def get_device(name: str) -> Device:
    try:
        return DEVICES[name]
    except KeyError:
        raise ValueError(f"device: unknown {name!r}; known: {sorted(DEVICES)}") from None


@dataclass(frozen=True)
class Link:
    """A point-to-point interconnect. ``bw`` per direction; ``latency_s`` per transfer. Collectives:
    ``step_s`` fixed time of one all-reduce step and ``step_s_per_byte`` its size-dependent part."""

    name: str
    bw: float  # B/s per direction
    latency_s: float
    source: str
    step_s: float = 0.0
    step_s_per_byte: float = 0.0

    def time(self, nbytes: float) -> float:
        if nbytes < 0:
            raise ValueError("nbytes: must be >= 0")
        return self.latency_s + nbytes / self.bw if nbytes else 0.0

    def allreduce_time(self, nbytes: ArrayLike, devices: int) -> Num:
        """All-reduce of ``nbytes`` (each device's full vector) over ``devices``: devices - 1 steps, each
        moving nbytes/devices, taking max(step_s + step_s_per_byte * size, size / bw)."""
        if devices <= 1:
            return np.zeros_like(np.asarray(nbytes, float))
        size = np.divide(nbytes, devices)
        return (devices - 1) * np.maximum(self.step_s + self.step_s_per_byte * size, size / self.bw)


_NVLINK_STEP = (
    "all-reduce step: AttAcc simulator src/devices.py get_nvlink_time, an interpolation of measured "
    "A100 NVLink all-reduces (6.06 us + 0.009 ns/B at 600 GB/s, the per-byte term scaled by bandwidth)"
)
LINKS = {
    link.name: link
    for link in (
        Link("pcie4x16", 32e9, 1e-6, "PCIe 4.0 x16: 16 GT/s x 16 lanes, 128b/130b ~ 31.5 GB/s per direction"),
        Link("pcie5x16", 64e9, 1e-6, "PCIe 5.0 x16: ~63 GB/s per direction"),
        Link("dimm-link", 25e9, 1e-6, "Hermes §IV: DIMM-link 25 GB/s between NDP-DIMMs"),
        Link("nvlink-a100", 300e9, 1e-6, f"A100 NVLink3: 600 GB/s bidirectional; {_NVLINK_STEP}", 6.06e-6, 0.009e-9),
        Link(
            "nvlink-h100",
            450e9,
            1e-6,
            f"H100 NVLink4: 900 GB/s bidirectional; {_NVLINK_STEP}",
            6.06e-6,
            0.009e-9 * 600 / 900,
        ),
    )
}


def get_link(name: str) -> Link:
    try:
        return LINKS[name]
    except KeyError:
        raise ValueError(f"link: unknown {name!r}; known: {sorted(LINKS)}") from None


@dataclass(frozen=True)
class FlashModel:
    """LLM in a flash §2.2 (M1 Max SSD, 32 threads): throughput of random reads of ``chunk`` bytes,
    thr(c) = min(seq_peak, threads * c / (l0 + c / per_thread_bw)). Calibration (shared/notes §3.1, a
    fit of the paper's points): 8 KiB -> 1.25 GB/s, 16 KiB -> 2.25 GB/s, 32 KiB -> ~4 GB/s,
    sequential -> 6.1 GB/s. ``queue``: the device's useful parallel reads; threads past it add nothing (a
    membound extension for `membound flash-bench` fits; unbounded for the paper's SSD)."""

    seq_peak: float = 6.1e9  # naive sequential baseline, §4 Table 2: 13.4 GB in 2196 ms (6.10 GB/s)
    threads: int = 32  # §2.2 "32 threads"
    l0: float = 186e-6  # per-read latency, fitted
    per_thread_bw: float = 351e6  # fitted
    queue: float = float("inf")

    def throughput(self, chunk: float, threads: int | None = None) -> float:
        if chunk <= 0:
            raise ValueError(f"chunk: {chunk} not allowed; must be > 0 bytes")
        n = min(threads or self.threads, self.queue)
        return min(self.seq_peak, n * chunk / (self.l0 + chunk / self.per_thread_bw))

    def read_time(self, nbytes: float, chunk: float, threads: int | None = None) -> float:
        return nbytes / self.throughput(chunk, threads)
