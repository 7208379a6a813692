"""Baselines built from the same parts (model zoo operators, roofline devices, links), for the papers'
comparisons: GPU-only, offloading over PCIe (FlexGen-like), CPU-only, and HBM-PIM attention
(AttAcc-like: decode attention runs in-HBM at the PIM internal bandwidth, the FC layers on the GPU).

Every baseline returns a :class:`TokenTime` for one decode step of a batch. Achieved-efficiency factors
follow AttAcc's simulator defaults, which L3 builds on (shared/notes §1: eta_c = 0.8, eta_m = 0.85).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sysmodel.devices import Device, get_device, get_link
from sysmodel.models import ModelConfig, Op, load_model, operators

ETA_COMPUTE, ETA_MEMORY = 0.8, 0.85  # AttAcc src/config.py defaults, used by L3's simulator (notes §1)
HBM_PIM_FACTOR = 16  # HBM-PIM internal / external bandwidth: 260.8 TB/s over 16.3 TB/s (L3 §6.1, notes §1)


@dataclass(frozen=True)
class TokenTime:
    system: str
    seconds: float  # one decode step
    batch: int

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.seconds


def _ops(cfg: ModelConfig, batch: int, kv_len: int, wbytes: float) -> list[Op]:
    return [op for layer in range(cfg.layers) for op in operators(cfg, "decode", batch, kv_len=kv_len,
                                                                    wbytes=wbytes, layer=layer)]


def _achieved(dev: Device) -> Device:
    return replace(dev, compute_eff=ETA_COMPUTE, mem_eff=ETA_MEMORY)


def footprint(cfg: ModelConfig, batch: int, kv_len: int, wbytes: float) -> float:
    return cfg.params() * wbytes + batch * kv_len * cfg.layers * 2 * cfg.kv_dim * 2  # FP16 KV


def gpu_only(model: str, device: str = "a100-80g-sxm", batch: int = 1, kv_len: int = 1024,
             wbytes: float = 2.0, gpus: int = 1) -> TokenTime:
    """Everything resident in ``gpus`` GPUs' memory (tensor parallel, bandwidth and FLOPs add up)."""
    cfg, dev = load_model(model), _achieved(get_device(device))
    need = footprint(cfg, batch, kv_len, wbytes)
    if need > gpus * dev.mem_bytes:
        raise ValueError(f"model: {model} with batch {batch} x {kv_len} tokens needs {need / 1e9:.1f} GB; "
                         f"{gpus} x {device} hold {gpus * dev.mem_bytes / 1e9:.0f} GB")
    t = sum(dev.time(op.flops, op.weight_bytes + op.kv_bytes) for op in _ops(cfg, batch, kv_len, wbytes))
    return TokenTime(f"GPU-only ({gpus}x {device})", t / gpus, batch)


def offload_pcie(model: str, device: str = "rtx4090", link: str = "pcie4x16", batch: int = 1,
                 kv_len: int = 1024, wbytes: float = 2.0) -> TokenTime:
    """FlexGen-like: weights that do not fit in GPU memory (after the KV cache and a 10% reserve) stream
    over ``link`` every step, overlapped with GPU compute layer by layer."""
    cfg, dev, lk = load_model(model), _achieved(get_device(device)), get_link(link)
    kv = batch * kv_len * cfg.layers * 2 * cfg.kv_dim * 2
    resident = max(0.0, 0.9 * dev.mem_bytes - kv) / (cfg.params() * wbytes)
    t = 0.0
    for layer in range(cfg.layers):
        ops = operators(cfg, "decode", batch, kv_len=kv_len, wbytes=wbytes, layer=layer)
        gpu = sum(dev.time(op.flops, op.weight_bytes + op.kv_bytes) for op in ops)
        moved = (1 - min(1.0, resident)) * sum(op.weight_bytes for op in ops)
        t += max(gpu, lk.time(moved))
    return TokenTime(f"offload ({device} + {link})", t, batch)


def cpu_only(model: str, device: str = "spr-ddr5", batch: int = 1, kv_len: int = 1024,
             wbytes: float = 2.0) -> TokenTime:
    cfg, dev = load_model(model), _achieved(get_device(device))
    t = sum(dev.time(op.flops, op.weight_bytes + op.kv_bytes) for op in _ops(cfg, batch, kv_len, wbytes))
    return TokenTime(f"CPU-only ({device})", t, batch)


def hbm_pim_attention(model: str, device: str = "a100-80g-sxm", batch: int = 1, kv_len: int = 1024,
                      wbytes: float = 2.0, gpus: int = 1, factor: float = HBM_PIM_FACTOR) -> TokenTime:
    """AttAcc-like: decode attention reads the KV cache inside HBM at ``factor`` x the external bandwidth;
    the FC layers run on the GPU; the two serialise per layer (attention depends on QKV)."""
    cfg, dev = load_model(model), _achieved(get_device(device))
    pim = replace(dev, mem_bw=dev.mem_bw * factor)
    t = 0.0
    for op in _ops(cfg, batch, kv_len, wbytes):
        t += (pim if op.kind == "attention" else dev).time(op.flops, op.weight_bytes + op.kv_bytes)
    return TokenTime(f"HBM-PIM attention ({gpus}x {device})", t / gpus, batch)


def report_lines() -> list[str]:
    rows = [gpu_only("llama2-7b", batch=16, kv_len=4096), hbm_pim_attention("llama2-7b", batch=16, kv_len=4096),
            offload_pcie("opt-30b", batch=1), cpu_only("llama2-70b"), gpu_only("llama2-70b", gpus=2)]
    lines = [f"Efficiency factors: compute {ETA_COMPUTE}, memory {ETA_MEMORY} (AttAcc defaults); HBM-PIM "
             f"internal bandwidth {HBM_PIM_FACTOR}x external (L3 §6.1).", "",
             "| system | model | batch | step ms | tokens/s |", "| --- | --- | ---: | ---: | ---: |"]
    models = ["llama2-7b (4K ctx)", "llama2-7b (4K ctx)", "opt-30b", "llama2-70b", "llama2-70b"]
    for r, m in zip(rows, models, strict=True):
        lines.append(f"| {r.system} | {m} | {r.batch} | {r.seconds * 1e3:.2f} | {r.tokens_per_s:.1f} |")
    return lines
