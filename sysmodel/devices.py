"""Roofline devices, links and the flash read model the system model composes.

Peak numbers carry their source. ``mem_eff`` and ``compute_eff`` are achieved-efficiency factors:
1.0 unless a paper states an achieved figure (each is named and sourced where it is not 1.0).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    name: str
    peak_flops: float  # dense FP16/BF16 FLOP/s (2 per FMA)
    mem_bw: float  # B/s
    mem_bytes: float
    source: str
    mem_eff: float = 1.0
    compute_eff: float = 1.0

    def time(self, flops: float, nbytes: float) -> float:
        """Roofline time: the slower of compute and memory at achieved rates."""
        if flops < 0 or nbytes < 0:
            raise ValueError("flops, nbytes: must be >= 0")
        return max(flops / (self.peak_flops * self.compute_eff), nbytes / (self.mem_bw * self.mem_eff))


DEVICES = {d.name: d for d in (
    Device("rtx4090", 165.2e12, 1008e9, 24e9, "NVIDIA Ada (AD102) whitepaper: FP16 tensor 165.2 TFLOPS dense "
           "(FP32 accumulate), 1008 GB/s GDDR6X, 24 GB; Hermes §VI"),
    Device("rtx6000-ada", 364e12, 960e9, 48e9, "DECA Table 7 (960 GB/s, 364 TFLOPS)"),
    Device("a100-80g-pcie", 312e12, 1935e9, 80e9, "DECA Table 7 (1935 GB/s, 312 TFLOPS); NVIDIA A100 datasheet"),
    Device("a100-80g-sxm", 312e12, 2039e9, 80e9, "NVIDIA A100 datasheet (2039 GB/s HBM2e); L3 §6.1"),
    Device("h100-pcie", 989e12, 2000e9, 80e9, "DECA Table 7 (2000 GB/s, 989 TFLOPS)"),
    Device("spr-ddr5", 2 * 71.68e12, 260e9, 512e9, "DECA §7.1: 56 cores x 2.5 GHz x 512 FMA/16 cycles per TMUL "
           "(71.68 T FMA/s), ~260 GB/s achievable"),
    Device("spr-hbm", 2 * 71.68e12, 850e9, 64e9, "DECA §7.1 (~850 GB/s achievable, 64 GB HBM)"),
    Device("m1-max", 10.4e12, 400e9, 64e9, "Apple M1 Max: 10.4 TFLOPS FP32 GPU, 400 GB/s LPDDR5; LLM in a flash §4"),
)}


def get_device(name: str) -> Device:
    try:
        return DEVICES[name]
    except KeyError:
        raise ValueError(f"device: unknown {name!r}; known: {sorted(DEVICES)}") from None


@dataclass(frozen=True)
class Link:
    name: str
    bw: float  # B/s per direction
    latency_s: float
    source: str

    def time(self, nbytes: float) -> float:
        if nbytes < 0:
            raise ValueError("nbytes: must be >= 0")
        return self.latency_s + nbytes / self.bw if nbytes else 0.0


LINKS = {link.name: link for link in (
    Link("pcie4x16", 32e9, 1e-6, "PCIe 4.0 x16: 16 GT/s x 16 lanes, 128b/130b ~ 31.5 GB/s per direction"),
    Link("pcie5x16", 64e9, 1e-6, "PCIe 5.0 x16: ~63 GB/s per direction"),
    Link("dimm-link", 25e9, 1e-6, "Hermes §IV: DIMM-link 25 GB/s between NDP-DIMMs"),
    Link("nvlink-a100", 300e9, 1e-6, "A100 NVLink3: 600 GB/s bidirectional"),
    Link("nvlink-h100", 450e9, 1e-6, "H100 NVLink4: 900 GB/s bidirectional"),
)}


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
    sequential -> 6.1 GB/s."""

    seq_peak: float = 6.1e9  # naive sequential baseline, §4 Table 2 (13.4 GB in 2197 ms)
    threads: int = 32  # §2.2 "32 threads"
    l0: float = 186e-6  # per-read latency, fitted
    per_thread_bw: float = 351e6  # fitted

    def throughput(self, chunk: float, threads: int | None = None) -> float:
        if chunk <= 0:
            raise ValueError(f"chunk: {chunk} not allowed; must be > 0 bytes")
        n = threads or self.threads
        return min(self.seq_peak, n * chunk / (self.l0 + chunk / self.per_thread_bw))

    def read_time(self, nbytes: float, chunk: float, threads: int | None = None) -> float:
        return nbytes / self.throughput(chunk, threads)
