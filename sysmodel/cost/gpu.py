"""A calibrated GPU: each kernel class with its own cost law, its constants fitted to public per-kernel
measurements of A100 and H100 inference (Vidur's profiling data, reduced to ``sysmodel/data/gpu_*.csv``).

The roofline at AttAcc's factors (``cost.ATTACC``) misses what dominates a real iteration: kernels that
cannot fill the GPU (a decode GEMM streams weights below peak bandwidth and pays a launch), collectives
with a per-call latency, and attention kernels far from GEMM efficiency. Here each kernel class has a law:

* **GEMM** (``qkv``, ``o_proj``, ``ffn_*``): max(tiled compute, bytes / (bandwidth x ``gemm_memory``, or
  ``gemm_memory_wide`` past SKINNY_M rows)) + ``gemm_launch_s``. The output is cut into tiles of one of
  TILE_SHAPES; a tile's time per unit of K is the longer of its FLOPs at one SM's share of peak x
  ``gemm_compute`` and its operands ((rows + columns) x 2 bytes, read from L2 into shared memory) at one SM's
  share of ``gemm_operand_bw``, so small tiles, which reuse each operand less, run below peak. Tiles run in
  waves of one per SM (a partly empty wave costs a whole one; when the tiles leave SMs idle, K is split across
  them), or, for STREAM_K_TILE, as stream-K: the tiles' K iterations dealt evenly to the SMs, no wave
  quantization. The fastest shape and schedule is taken, as a library's heuristics pick among its kernels
  (the CUTLASS docs, "Efficient GEMM in CUDA": tiling and split-K; NVIDIA/cutlass discussion #396: larger tiles
  reuse more, smaller ones fill the waves, so sweep every shape; LLMCompass, Zhang et al., ISCA 2024, §III-B
  and software_model/matmul.py@2e015fd ``compile_and_simulate``: the fastest of every tile mapping, a tile the
  longer of its compute and its operand reads; Osama et al., "Stream-K", PPoPP 2023, in CUTLASS as
  examples/47_ampere_gemm_universal_streamk). Without the operand term the H100's mixed batches (776-848
  rows, just past a multiple of 128) were 12-20% under, and without stream-K the A100's. The earlier law's
  16- and 32-row tiles are gone: with their operand reads they never won on any measured row. A GEMM of at
  most GEMV_MAX_ROWS rows may also run as a matrix-vector kernel (llama.cpp's mul_mat_vec_q; cuBLAS has gemv
  kernels too): each weight read once and multiplied with every row on the CUDA cores at ``vector_flops``, no
  row padded to a tile. On the measured FP16 rows it changes nothing (no GEMM of at most 64 rows is
  compute-bound there); with 4-bit weights the weights stream 3.8x faster and the tile law, padding one row to
  64, would be what binds: an extrapolation outside its data (DECA Table 7's A100 was 54 ms for it, 31 without).
  The longer of compute and memory assumes they overlap fully; near the ridge (the terms within 0.8-1.6 of each
  other: 256-512 rows) measured GEMMs run a median 10% slower than that on both GPUs, 2% elsewhere
  (:func:`sysmodel.cost.gpu_validation.gemm_balance_errors`); a fitted smooth roofline fixed one GPU only, and
  LLMCompass's L2-tile pipeline fixed both but, refitted, put other held-out rows past 10% (tests/test_gpu.py).
* **Element-wise**: the residual add (PyTorch's vectorized add over the flat tensor): bytes / (bandwidth x
  ``elem_memory``) + ``elem_launch_s``. The norms, the gated activation and the rotary embedding are vLLM's
  row kernels (csrc/layernorm_kernels.cu, activation_kernels.cu, pos_encoding_kernels.cu: one thread block
  per token, ROW_THREADS threads striding along the row): a block walks its row in ceil(row / threads)
  dependent steps, THREADS_PER_SM / threads blocks share an SM, so the time is the longer of waves x steps x
  ``<kernel>_step_s`` and bytes / (bandwidth x ``<kernel>_memory``), + ``elem_launch_s``. Per-row errors of the old
  single bytes law followed the kernel (adds 2x over, norms 20% under at decode) and, for the activation and
  rotary kernels, the width per device (the row's steps), which this law carries.
* **Prefill attention** (FlashAttention): a chunk's own query-key pairs (causal) and its pairs against the
  cached prefix run at different fractions of peak (``prefill_causal``, ``prefill_prefix``), + a launch.
* **Decode attention** (paged attention, one thread block per request and query head, DECODE_SLOTS_PER_SM
  at once per SM): the longer of KV bytes / (bandwidth x ``decode_memory``) and a time per wave of blocks
  (a block's KV bytes at ``decode_block_share`` of one SM's share of the bandwidth: what one block streams
  alone), + a launch.
* **All-reduce** (NCCL inside one NVLink/NVSwitch node, ring): ``ar_alpha_s`` + ``ar_alpha_step_s`` per
  device beyond two + 2 (d - 1) / d x bytes / ``ar_busbw``. Its per-call latency is measured (45-60 us at 2
  A100s), not NCCL's own model (src/graph/tuning.cc: 4-10 us, growing with the ranks). Vidur's small
  all-reduces switch between a fast and a slow mode over runs of consecutive sizes (it swept them in order, 3
  timed steps each), so the committed table's thinned sizes at 4 A100s (16-26 us) caught the fast mode while
  all 63 rows from 16 kB to 1 MB have a median (42 us) like 2 and 8 workers' (47, 46): the width-4 rows' gap
  is that sampling, a named strict xfail in tests/test_gpu.py.

Every constant but the inputs below is a fit (:func:`kernel_fit`, scipy least squares on relative error)
to the committed tables, per GPU family. Held out of every fit: the model CodeLlama-34B and tensor-parallel
width 4 (the GEMM and element-wise fits see Llama-2-7B, InternLM-20B, Llama-2-70B and Qwen-72B at widths 1,
2 and 8; the all-reduce fits 2 and 8 workers), and the A100's Meta-Llama-3-8B and -70B (VALIDATION_ONLY).
The one public attention table (A100, 64 query / 8 KV heads, width 2) is split by rows: even rows fit, odd
rows check. H100 has no public attention table: its attention uses the A100's fractions of peak (labelled so
in :func:`provenance`); GPUs other than A100 and H100 use the A100's fractions of their own peaks (an
extrapolation, labelled too).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import least_squares

from sysmodel.cost.devices import DEVICES, Device
from sysmodel.cost.models import Op, StageShape
from sysmodel.cost.num import Num

DATA = Path(__file__).parent.parent / "data"
VIDUR = "github.com/microsoft/vidur"
SOURCES = {
    "kernels": f"{VIDUR}@7d47513:data/profiling/compute/<gpu>/<model>/mlp.csv as sysmodel/data/gpu_kernels.csv",
    "allreduce": f"{VIDUR}@7d47513:data/profiling/network/<gpu>_dgx/all_reduce.csv as sysmodel/data/gpu_allreduce.csv",
    "attention": f"{VIDUR}@e2d00e9:data/profiling/a100/attention.csv as sysmodel/data/gpu_attention.csv",
}
HELD_OUT_MODEL = "codellama-34b"
HELD_OUT_TP = 4
# Meta-Llama-3-8B and -70B (A100 only in Vidur's tables) were added after the fits were made: validation rows,
# never fitted, so adding them moved no constant
VALIDATION_ONLY = ("llama3-8b", "llama3-70b")

# Inputs, not fitted
# Tile shapes (rows x columns of the output) the GEMM may use, the fastest taken: CUTLASS's SM80 FP16
# tensor-core threadblock tiles pair 64, 128 and 256 (python/cutlass_library/generator.py,
# GenerateSM80_TensorOp_16816: every pair but 256 x 256); 256 x 256 is in for Hopper's two-tile thread-block
# clusters (observed: without it 11 of 32 H100 mixed rows are over 10%, with it none)
TILE_SIDES = (64, 128, 256)
TILE_SHAPES = tuple((m, n) for m in TILE_SIDES for n in TILE_SIDES)
STREAM_K_TILE = (128, 128)  # CUTLASS examples/47_ampere_gemm_universal_streamk: stream-K on 128x128x32 tiles
# Matrix-vector kernels serve GEMMs of at most this many rows: llama.cpp's mul_mat_vec_q (ggml/src/ggml-cuda/
# mmvq.cuh, MMVQ_MAX_BATCH_SIZE), the kernel of the W4A16 GPU latencies DECA's Table 7 cites
GEMV_MAX_ROWS = 8
SKINNY_M = 64  # observed: every profiled GEMM slows by ~20% from M = 64 to 72 (the library switches kernels)
SPLIT_K_MIN = 256  # CUTLASS docs, "Efficient GEMM in CUDA", split-K: K cut into slices of at least this depth
THREADS_PER_SM = 2048  # CUDA C++ Programming Guide, compute capabilities 8.0 and 9.0: resident threads per SM
ROW_THREADS = {"norm": 1024, "act": 1024, "rope": 512}  # vLLM csrc: block(min(row, 1024)), rope min(row, 512)
DECODE_SLOTS_PER_SM = 16  # observed: decode attention steps at 54 -> 55 requests x 32 heads = 1728 = 16 x 108 SMs
ROW_PARALLEL = ("o_proj", "ffn_down")  # Megatron: these split K across devices, the other GEMMs split N
LINK_FAMILY = {"nvlink-a100": "a100", "nvlink-h100": "h100"}  # NVSwitch nodes Vidur measured; PCIe keeps its Link
FAMILY_DEVICE = {"a100": "a100-80g-sxm", "h100": "h100-sxm"}  # the parts Vidur profiled (80 GB SXM boards)


@dataclass(frozen=True)
class KernelFit:
    """One GPU family's fitted constants (fractions of the device's peaks, seconds, bytes per second)."""

    gemm_compute: float
    gemm_memory: float
    gemm_memory_wide: float
    gemm_launch_s: float
    gemm_operand_bw: float
    elem_memory: float
    elem_launch_s: float
    norm_memory: float
    act_memory: float
    rope_memory: float
    norm_step_s: float
    act_step_s: float
    rope_step_s: float
    prefill_causal: float
    prefill_prefix: float
    prefill_launch_s: float
    decode_memory: float
    decode_block_share: float
    decode_launch_s: float
    ar_alpha_s: float
    ar_alpha_step_s: float
    ar_busbw: float


@cache
def read_table(name: str) -> tuple[dict, ...]:
    """Rows of ``sysmodel/data/gpu_<name>.csv`` (its first line, the source, skipped), numbers as floats
    (read once: callers do not change them)."""
    with open(DATA / f"gpu_{name}.csv") as f:
        next(f)
        rows = list(csv.DictReader(f))
    return tuple({k: v if k in ("gpu", "model", "phase") else float(v) for k, v in r.items()} for r in rows)


def family(device: Device) -> str:
    """``a100`` or ``h100`` for the parts the fits cover; other GPUs take the A100's fractions."""
    return next((f for f in FAMILY_DEVICE if device.name.startswith(f)), "a100")


def tile_s_per_k(dev: Device, fit: KernelFit, tile: tuple[ArrayLike, ArrayLike]) -> Num:
    """Seconds per unit of K of one output tile (rows, columns) on one SM: its FLOPs or its operand reads,
    the longer."""
    tm, tn = tile
    flops = np.multiply(tm, tn) * 2.0 / (dev.peak_flops * fit.gemm_compute)
    return dev.sms * np.maximum(flops, np.add(tm, tn) * 2.0 / fit.gemm_operand_bw)


def tile_compute(
    dev: Device, fit: KernelFit, m: np.ndarray, n: float, k: float, tile: tuple[ArrayLike, ArrayLike]
) -> np.ndarray:
    """Seconds of a GEMM's tiles of shape ``tile`` (or of each of several, broadcast) in waves of one tile
    per SM (split-K when the tiles leave SMs idle)."""
    tiles = np.ceil(m / tile[0]) * np.ceil(n / tile[1])
    splits = np.clip(np.floor(dev.sms / tiles), 1, np.maximum(1.0, np.floor_divide(k, SPLIT_K_MIN)))
    return np.ceil(tiles * splits / dev.sms) * (k / splits) * tile_s_per_k(dev, fit, tile)


def stream_k_time(dev: Device, fit: KernelFit, m: np.ndarray, n: float, k: float) -> np.ndarray:
    """Seconds of a GEMM's STREAM_K_TILE tiles with their K iterations dealt evenly to every SM."""
    tiles = np.ceil(m / STREAM_K_TILE[0]) * np.ceil(n / STREAM_K_TILE[1])
    return tiles * k / dev.sms * tile_s_per_k(dev, fit, STREAM_K_TILE)


def gemv_compute(dev: Device, m: np.ndarray, n: float, k: float) -> np.ndarray:
    """Seconds of a matrix-vector kernel's multiply-adds: each of ``m`` <= GEMV_MAX_ROWS rows against every
    weight on the CUDA cores at their peak, no row padded to a tile (infinite past GEMV_MAX_ROWS, or on a
    device without a vector peak)."""
    flops = np.where(m <= GEMV_MAX_ROWS, 2.0 * m * n * k, np.inf)
    return flops / dev.vector_flops if dev.vector_flops else np.full_like(m, np.inf)


def gemm_terms(dev: Device, fit: KernelFit, m: ArrayLike, n: float, k: float, weight_bytes: ArrayLike) -> tuple:
    """(compute, memory) seconds of one GEMM [m, k] x [k, n] on one device: its fastest schedule (every tile
    shape in waves, stream-K and, for a few rows, a matrix-vector kernel) and its bytes moved."""
    m = np.asarray(m, float)
    col = (-1,) + (1,) * m.ndim  # the tile shapes along a new first axis, broadcast against m
    shapes = tuple(np.reshape(side, col) for side in zip(*TILE_SHAPES, strict=True))
    waves = tile_compute(dev, fit, m, n, k, shapes).min(axis=0)
    compute = np.minimum(np.minimum(waves, stream_k_time(dev, fit, m, n, k)), gemv_compute(dev, m, n, k))
    eff = np.where(m <= SKINNY_M, fit.gemm_memory, fit.gemm_memory_wide)
    return compute, (np.asarray(weight_bytes) + 2.0 * m * (k + n)) / (dev.mem_bw * eff)


def gemm_time(dev: Device, fit: KernelFit, m: ArrayLike, n: float, k: float, weight_bytes: ArrayLike) -> Num:
    """One GEMM on one device: the longer of its :func:`gemm_terms`, plus a launch."""
    compute, memory = gemm_terms(dev, fit, m, n, k, weight_bytes)
    return np.where(np.asarray(m) > 0, fit.gemm_launch_s + np.maximum(compute, memory), 0.0)


def elementwise_time(dev: Device, fit: KernelFit, nbytes: ArrayLike) -> Num:
    """A flat element-wise kernel (the residual add) moving ``nbytes``."""
    nbytes = np.asarray(nbytes, float)
    return np.where(nbytes > 0, fit.elem_launch_s + nbytes / (dev.mem_bw * fit.elem_memory), 0.0)


def row_steps(kernel: str, row: ArrayLike, second: ArrayLike = 0.0) -> tuple[Num, Num]:
    """(steps, threads) of one block of vLLM row kernel ``kernel`` over ``row`` elements; rope walks the
    query's pairs (``row``, which sizes the block) and then the key's (``second``)."""
    row = np.asarray(row, float)
    threads = np.clip(row, 1, ROW_THREADS[kernel])
    return np.ceil(row / threads) + np.ceil(np.asarray(second, float) / threads), threads


ROW_KERNELS = ("add", "norm", "act", "rope")  # index 0: the flat add; the others vLLM row kernels


def row_kernel_time(
    dev: Device,
    fit: KernelFit,
    kind: ArrayLike,
    tokens: ArrayLike,
    steps: ArrayLike,
    threads: ArrayLike,
    nbytes: ArrayLike,
) -> Num:
    """A vLLM row kernel (``kind`` indexes ROW_KERNELS): one block of ``threads`` per token taking
    ``steps`` strided steps, in waves of THREADS_PER_SM / threads blocks per SM, or its bytes at the
    kernel's fraction of the bandwidth, + a launch. Kind 0, the add, is a flat kernel (:func:`elementwise_time`)."""
    kind, tokens, nbytes = np.asarray(kind, int), np.asarray(tokens, float), np.asarray(nbytes, float)
    step_s = np.choose(kind, [0.0, fit.norm_step_s, fit.act_step_s, fit.rope_step_s])
    memory = np.choose(kind, [fit.elem_memory, fit.norm_memory, fit.act_memory, fit.rope_memory])
    waves = np.ceil(tokens / (dev.sms * np.floor(THREADS_PER_SM / np.asarray(threads, float))))
    t = fit.elem_launch_s + np.maximum(waves * np.asarray(steps) * step_s, nbytes / (dev.mem_bw * memory))
    return np.where(kind == 0, elementwise_time(dev, fit, nbytes), np.where(nbytes > 0, t, 0.0))


def row_op_time(
    dev: Device, fit: KernelFit, kernel: str, tokens: ArrayLike, row: float, nbytes: ArrayLike, second: float = 0.0
) -> Num:
    """Row kernel ``kernel`` over ``row`` (and, for rope, ``second``) elements of each of ``tokens`` tokens."""
    steps, threads = row_steps(kernel, row, second)
    return row_kernel_time(dev, fit, ROW_KERNELS.index(kernel), tokens, steps, threads, nbytes)


def prefill_attention_time(dev: Device, fit: KernelFit, causal_flops: ArrayLike, prefix_flops: ArrayLike) -> Num:
    causal, prefix = np.asarray(causal_flops, float), np.asarray(prefix_flops, float)
    t = causal / (dev.peak_flops * fit.prefill_causal) + prefix / (dev.peak_flops * fit.prefill_prefix)
    return np.where(causal + prefix > 0, fit.prefill_launch_s + t, 0.0)


def decode_attention_time(dev: Device, fit: KernelFit, kv_bytes: ArrayLike, blocks: ArrayLike) -> Num:
    """``blocks`` thread blocks (request x query head) on one device reading ``kv_bytes`` of KV cache."""
    kv_bytes, blocks = np.asarray(kv_bytes, float), np.asarray(blocks, float)
    waves = np.ceil(blocks / (DECODE_SLOTS_PER_SM * dev.sms))
    per_block = np.divide(kv_bytes, blocks, out=np.zeros_like(kv_bytes * blocks), where=blocks > 0)
    t = np.maximum(
        kv_bytes / (dev.mem_bw * fit.decode_memory), waves * per_block * dev.sms / (dev.mem_bw * fit.decode_block_share)
    )
    return np.where(kv_bytes > 0, fit.decode_launch_s + t, 0.0)


def allreduce_time(fit: KernelFit, devices: ArrayLike, nbytes: ArrayLike) -> Num:
    """One ring all-reduce of ``nbytes`` per device over ``devices`` GPUs of one node (0 for one device)."""
    d, nbytes = np.asarray(devices, float), np.asarray(nbytes, float)
    t = fit.ar_alpha_s + fit.ar_alpha_step_s * (d - 2) + 2 * (d - 1) / d * nbytes / fit.ar_busbw
    return np.where((d > 1) & (nbytes > 0), t, 0.0)


def causal_share(shape: StageShape | None) -> Num:
    """The share of a stage's prefill query-key pairs that are the chunks' own (causal) pairs, exact for
    equal chunks after equal prefixes: kv / tokens gives prefix over chunk, pairs / tokens then the chunk.
    Without a stage: 1 (a whole prompt, nothing cached before it)."""
    if shape is None:
        return np.float64(1.0)
    tokens = np.maximum(np.subtract(shape.tokens, shape.decode_reqs), 1)
    pairs = np.maximum(np.asarray(shape.prefill_pairs, float), 1)
    chunk = (pairs / tokens - 0.5) / (np.divide(shape.prefill_kv, tokens) - 0.5)
    return np.clip(tokens * (chunk + 1) / 2 / pairs, 0.0, 1.0)


def op_time(device: Device, devices: int, op: Op, shape: StageShape | None = None) -> Num:
    """One operator (its whole-model shape, as :func:`sysmodel.cost.models.layer_ops` lists it) on each of
    ``devices`` tensor-parallel GPUs; norms are replicated, everything else split."""
    fit = kernel_fit(family(device))
    m = np.divide(op.flops, 2.0 * op.k * op.n) if op.kind == "gemm" else op.tokens
    if op.kind == "gemm":
        k, n = (op.k / devices, op.n) if op.name in ROW_PARALLEL else (op.k, op.n / devices)
        w = np.divide(op.weight_bytes, devices)
        if op.name == "ffn_gate":  # one GEMM with ffn_up in vLLM (gate_up_proj): the width it adds to it
            return gemm_time(device, fit, m, 2 * n, k, 2 * w) - gemm_time(device, fit, m, n, k, w)
        t = gemm_time(device, fit, m, n, k, w)
        if op.name == "qkv":  # rotary embedding on the query (k / devices wide) and key (half the rest)
            q, kv = k / devices, (n - k / devices) / 2
            t = t + row_op_time(device, fit, "rope", m, q / 2, np.multiply(m, 4.0 * (q + kv)), kv / 2)
        return t
    if op.kind == "norm":  # the residual add before it reads two vectors and writes one
        norm = row_op_time(device, fit, "norm", m, op.k, op.act_bytes)
        return norm + elementwise_time(device, fit, np.multiply(m, 6.0 * op.k))
    if op.kind == "act":
        return row_op_time(device, fit, "act", m, op.k / devices, np.divide(op.act_bytes, devices))
    if op.name == "attn_decode":
        return decode_attention_time(device, fit, np.divide(op.kv_bytes, devices), np.divide(op.blocks, devices))
    flops, share = np.divide(op.flops, devices), causal_share(shape)
    return prefill_attention_time(device, fit, flops * share, flops * (1 - share))


GEMMS = ("qkv", "o_proj", "ffn_up", "ffn_down")
ELEMENTWISE = ("norm_attn", "norm_ffn", "act", "rope", "add")
CLASS_FIELDS = {
    "gemm": ("gemm_compute", "gemm_memory", "gemm_memory_wide", "gemm_launch_s", "gemm_operand_bw"),
    "elementwise": (
        "elem_memory",
        "elem_launch_s",
        "norm_memory",
        "act_memory",
        "rope_memory",
        "norm_step_s",
        "act_step_s",
        "rope_step_s",
    ),
    "prefill attention": ("prefill_causal", "prefill_prefix", "prefill_launch_s"),
    "decode attention": ("decode_memory", "decode_block_share", "decode_launch_s"),
    "all-reduce": ("ar_alpha_s", "ar_alpha_step_s", "ar_busbw"),
}
# the least-squares starting point and scale of every constant (not a result: kernel_fit moves each)
START = KernelFit(
    *(0.7, 0.8, 0.7, 5e-6, 5e12),  # gemm
    *(0.8, 2e-6, 0.5, 0.5, 0.5, 5e-7, 5e-7, 5e-7),  # element-wise
    *(0.3, 0.5, 2e-5),  # prefill attention
    *(0.8, 0.1, 1e-5),  # decode attention
    *(2e-5, 1e-6, 2e11),  # all-reduce
)


@dataclass(frozen=True)
class Samples:
    """One kernel class's measured rows: what each row is (``meta``: kernel, model, tp, tokens; whether
    held out), the law's arguments as arrays and the measured seconds."""

    meta: list[dict]
    args: tuple
    measured: np.ndarray

    def predict(self, dev: Device, fit: KernelFit, cls: str) -> Num:
        return LAWS[cls](dev, fit, *self.args)


def _gemm_shape(r: dict, kernel: str) -> tuple[float, float]:
    """(n, k) per device of a Vidur GEMM row (every profiled model is gated: up and gate in one GEMM)."""
    hd, tp = r["hidden"] / r["heads"], r["tp"]
    return {
        "qkv": ((r["heads"] + 2 * r["kv_heads"]) * hd / tp, r["hidden"]),
        "o_proj": (r["hidden"], r["hidden"] / tp),
        "ffn_up": (2 * r["ffn"] / tp, r["hidden"]),
        "ffn_down": (r["hidden"], r["ffn"] / tp),
    }[kernel]


def _elem_args(r: dict, kernel: str) -> tuple[float, ...]:
    """(kind, tokens, steps, threads, bytes) of an element-wise kernel of a Vidur row, as :func:`op_time`
    counts them for membound's operators."""
    t, h, tp = r["tokens"], r["hidden"], r["tp"]
    kind = {"add": "add", "norm_attn": "norm", "norm_ffn": "norm", "act": "act", "rope": "rope"}[kernel]
    q, kv = h / tp, r["kv_heads"] * h / r["heads"] / tp
    row, second, nbytes = {
        "add": (h, 0.0, 6 * t * h),
        "norm": (h, 0.0, 6 * t * h),
        "act": (r["ffn"] / tp, 0.0, 6 * t * r["ffn"] / tp),
        "rope": (q / 2, kv / 2, 4 * t * (q + kv)),
    }[kind]
    steps, threads = row_steps(kind, row, second) if kind != "add" else (0.0, 1.0)
    return float(ROW_KERNELS.index(kind)), t, float(steps), float(threads), nbytes


def held_out(r: dict) -> bool:
    """Whether a table row is kept out of every fit: the held-out model or width, or a validation-only model."""
    model, width = r.get("model"), r.get("tp", r.get("workers"))
    return model == HELD_OUT_MODEL or model in VALIDATION_ONLY or width == HELD_OUT_TP


def _compute_samples(fam: str, cls: str) -> Samples:
    rows = [r for r in read_table("kernels") if r["gpu"] == fam]
    meta: list[dict] = []
    cols: list[tuple] = []
    ms: list[float] = []
    for r in rows:
        for kernel in GEMMS if cls == "gemm" else ELEMENTWISE:
            held = held_out(r)
            meta.append(
                {
                    "kernel": kernel,
                    "model": r["model"],
                    "tp": int(r["tp"]),
                    "tokens": int(r["tokens"]),
                    "held_out": held,
                }
            )
            if cls == "gemm":
                n, k = _gemm_shape(r, kernel)
                cols.append((r["tokens"], n, k, 2.0 * n * k))
            else:
                cols.append(_elem_args(r, kernel))
            ms.append(r[kernel] * 1e-3)
    return Samples(meta, tuple(np.array(c) for c in zip(*cols, strict=True)), np.array(ms))


def _attention_samples(cls: str) -> Samples:
    phase = "decode" if cls == "decode attention" else "prefill"
    rows = [r for r in read_table("attention") if r["phase"] == phase]
    meta, cols, ms = [], [], []
    for i, r in enumerate(rows):
        hd, tp, b, c, kv = r["hidden"] / r["heads"], r["tp"], r["batch"], r["chunk"], r["kv"]
        meta.append(
            {
                "kernel": f"attn_{phase}",
                "model": "8192/64/8",
                "tp": int(tp),
                "batch": int(b),
                "chunk": int(c),
                "kv": int(kv),
                "held_out": i % 2 == 1,
            }
        )
        if phase == "decode":
            cols.append((b * kv * 4 * r["kv_heads"] / tp * hd, b * r["heads"] / tp))
        else:
            per_pair = 4 * hd * r["heads"] / tp
            cols.append((per_pair * c * (c + 1) / 2, per_pair * c * kv))
        ms.append(r["ms"] * 1e-3)
    return Samples(meta, tuple(np.array(c) for c in zip(*cols, strict=True)), np.array(ms))


def _allreduce_samples(fam: str) -> Samples:
    rows = [r for r in read_table("allreduce") if r["gpu"] == fam]
    meta = [
        {"kernel": "all_reduce", "workers": int(r["workers"]), "bytes": int(r["bytes"]), "held_out": held_out(r)}
        for r in rows
    ]
    args = (np.array([r["workers"] for r in rows]), np.array([r["bytes"] for r in rows]))
    return Samples(meta, args, np.array([r["ms"] * 1e-3 for r in rows]))


@cache
def samples(fam: str, cls: str) -> Samples:
    """The measured rows of kernel class ``cls`` on GPU family ``fam`` (attention: A100 only)."""
    if cls in ("gemm", "elementwise"):
        return _compute_samples(fam, cls)
    if cls == "all-reduce":
        return _allreduce_samples(fam)
    return _attention_samples(cls) if fam == "a100" else Samples([], (), np.zeros(0))


LAWS: dict[str, Callable[..., Num]] = {
    "gemm": gemm_time,
    "elementwise": row_kernel_time,
    "prefill attention": prefill_attention_time,
    "decode attention": decode_attention_time,
    "all-reduce": lambda _dev, fit, workers, nbytes: allreduce_time(fit, workers, nbytes),
}


def _fit_class(fam: str, cls: str, base: KernelFit) -> KernelFit:
    """``base`` with class ``cls``'s constants fitted (least squares on log(modelled / measured)) to the
    class's rows not held out."""
    s, names, dev = samples(fam, cls), CLASS_FIELDS[cls], DEVICES[FAMILY_DEVICE[fam]]
    train = np.array([not m["held_out"] for m in s.meta])
    part = Samples([], tuple(a[train] for a in s.args), s.measured[train])
    x0 = np.array([getattr(START, n) for n in names])

    def residual(x: np.ndarray) -> np.ndarray:
        fit = replace(base, **dict(zip(names, x * x0, strict=True)))
        return np.log(part.predict(dev, fit, cls) / part.measured)

    lo = [-5.0 if n == "ar_alpha_step_s" else 1e-3 if n.endswith(("_s", "bw")) else 0.02 for n in names]
    hi = [np.inf if n.endswith(("_s", "bw")) else 1.0 / x for n, x in zip(names, x0, strict=True)]
    x = least_squares(residual, np.ones(len(names)), bounds=(lo, hi), loss="soft_l1", f_scale=0.1).x
    return replace(base, **dict(zip(names, x * x0, strict=True)))


@cache
def kernel_fit(fam: str) -> KernelFit:
    """Family ``fam``'s constants: every class fitted to its rows not held out; attention from the A100's
    table for both families (the H100 has none public)."""
    fit = START
    for cls in CLASS_FIELDS:
        if samples(fam, cls).meta:
            fit = _fit_class(fam, cls, fit)
    if fam != "a100":
        a100 = kernel_fit("a100")
        attn = CLASS_FIELDS["prefill attention"] + CLASS_FIELDS["decode attention"]
        fit = replace(fit, **{n: getattr(a100, n) for n in attn})
    return fit


INPUTS = {
    "TILE_SHAPES": (
        TILE_SHAPES,
        "CUTLASS generator.py GenerateSM80_TensorOp_16816 threadblock tiles (64-256 a side; 256 x 256 for Hopper's "
        "clusters); every shape swept, the fastest taken (CUTLASS discussion #396; LLMCompass, ISCA 2024, §III-B)",
    ),
    "STREAM_K_TILE": (STREAM_K_TILE, "CUTLASS examples/47_ampere_gemm_universal_streamk (Osama et al., PPoPP 2023)"),
    "THREADS_PER_SM": (
        THREADS_PER_SM,
        "CUDA C++ Programming Guide: resident threads per SM, compute capability 8.0/9.0",
    ),
    "ROW_THREADS": (
        ROW_THREADS,
        "vLLM csrc/layernorm_kernels.cu, activation_kernels.cu, pos_encoding_kernels.cu: a block per token of "
        "min(row, 1024) threads (rotary: min(query pairs, 512))",
    ),
    "SPLIT_K_MIN": (SPLIT_K_MIN, "CUTLASS docs, split-K: the shallowest K slice"),
    "GEMV_MAX_ROWS": (GEMV_MAX_ROWS, "llama.cpp ggml-cuda/mmvq.cuh MMVQ_MAX_BATCH_SIZE: matrix-vector kernels"),
    "SKINNY_M": (SKINNY_M, f"observed in {SOURCES['kernels']}: every GEMM steps up from 64 to 72 rows"),
    "DECODE_SLOTS_PER_SM": (DECODE_SLOTS_PER_SM, f"observed in {SOURCES['attention']}: the step at 55 requests"),
}
CLASS_SOURCE = {
    "gemm": "kernels",
    "elementwise": "kernels",
    "prefill attention": "attention",
    "decode attention": "attention",
    "all-reduce": "allreduce",
}


def provenance(device: Device) -> list[dict]:
    """Every constant the calibrated GPU uses on ``device``: name, value, source, and whether it is a fit
    (with what it was fitted to and what was held out) or an input."""
    fam = family(device)
    fit = kernel_fit(fam)
    held = f"held out: {HELD_OUT_MODEL}, tensor-parallel width {HELD_OUT_TP} and {', '.join(VALIDATION_ONLY)}"
    out = [{"name": f"gpu.{n}", "value": v, "source": s, "fit": False} for n, (v, s) in INPUTS.items()]
    for cls, names in CLASS_FIELDS.items():
        src = SOURCES[CLASS_SOURCE[cls]]
        if cls.endswith("attention"):
            src += "; even rows fitted, odd rows checked" + ("" if fam == "a100" else "; the A100's (no H100 table)")
        else:
            src += f", {fam} rows; {held}"
        if not device.name.startswith(fam):
            src += f"; the {fam} fit applied to {device.name}'s peaks (an extrapolation)"
        out += [
            {"name": f"gpu.{n}", "value": float(getattr(fit, n)), "source": f"fit to {src}", "fit": True} for n in names
        ]
    return out
