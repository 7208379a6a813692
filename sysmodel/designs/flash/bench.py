"""`membound flash-bench`: this machine's random-read throughput against chunk size and threads (LLM in a
flash Fig. 2b), the flash model fitted to it, and a plot beside the paper's points.

Method: a scratch file of ``size`` bytes is written (incompressible data) and synced; for every (threads,
chunk) pair, ``threads`` workers issue positional reads of ``chunk`` bytes at seeded random chunk-aligned
offsets for ``seconds``; throughput = bytes / wall time. The page cache is bypassed with O_DIRECT where the
file system allows it, else the file's pages are dropped (``posix_fadvise``) before each pair; the result
names the mode and the file system. The fit is :class:`sysmodel.cost.devices.FlashModel`'s formula,
thr = min(peak, min(threads, queue) * c / (l0 + c / per_thread_bw)) (``queue``: the device's useful parallel
reads; a virtual or network disk often has few), least squares on log throughput over all pairs.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from sysmodel.cost.devices import FlashModel
from sysmodel.designs.flash import paper
from sysmodel.designs.flash.store import BLOCK, open_file
from sysmodel.outputs import write_text
from sysmodel.progress import progress as progress_bar
from sysmodel.report import plots

KIB = 1024
CHUNKS = tuple(KIB << k for k in range(2, 11))  # 4 KiB .. 1 MiB
THREADS = (1, 4, 16, 32)
OUT = Path("build/flash-bench")  # `membound flash-bench`'s default output, which the report overlays
# Left free beside the scratch file (not a calibration: a margin): the JSON and plot written after it, and
# whatever else writes to that disk meanwhile; a full disk fails late and others with it
FREE_RESERVE = 64 << 20


def filesystem(path: Path) -> str:
    """The file system type holding ``path`` (the longest mount point in /proc/mounts), or 'unknown'."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "unknown"
    p = str(Path(path).resolve())
    best = max(
        (m for m in mounts if len(m) > 2 and (p == m[1] or p.startswith(m[1].rstrip("/") + "/"))),
        key=lambda m: len(m[1]),
        default=None,
    )
    return best[2] if best else "unknown"


def write_scratch(path: Path, size: int) -> None:
    block = np.random.default_rng(0).integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())


def measure(fd: int, size: int, chunk: int, threads: int, seconds: float, mode: str, seed: int) -> float:
    """Bytes per second of ``threads`` workers reading ``chunk``-byte random aligned pieces for ``seconds``."""
    if mode != "direct" and hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    stop = time.perf_counter() + seconds
    slots = size // chunk

    def worker(k: int) -> int:
        rng = np.random.default_rng([seed, chunk, threads, k])
        buf = mmap.mmap(-1, chunk)  # page aligned, as O_DIRECT needs
        done = 0
        while time.perf_counter() < stop:
            done += os.preadv(fd, [buf], int(rng.integers(slots)) * chunk)
        return done

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(worker, range(threads)))
    return total / (time.perf_counter() - t0)


def fit(points: list[tuple[int, int, float]]) -> FlashModel:
    """FlashModel's (seq_peak, l0, per_thread_bw, queue) fitted to (chunk, threads, B/s) points (module
    docstring)."""
    c, n, y = (np.array(v, float) for v in zip(*points, strict=True))

    def resid(q: np.ndarray) -> np.ndarray:
        peak, l0, bw, queue = np.exp(q)
        return np.log(np.minimum(peak, np.minimum(n, queue) * c / (l0 + c / bw))) - np.log(y)

    bounds = np.log([1e6, 1e-7, 1e6, 0.5]), np.log([1e12, 1.0, 1e12, 4096])
    one = n == n.min()  # first guesses from the fewest-threads curve: latency from its smallest chunk
    l0 = c[one].min() / y[one][np.argmin(c[one])] / n.min()
    starts = [np.log([y.max(), l0, y.max(), q]) for q in (1, 2, 4, 8, 16, 32, 64)]  # min() has kinks: multistart
    best = min((least_squares(resid, np.clip(q0, *bounds), bounds=bounds) for q0 in starts), key=lambda r: r.cost)
    peak, l0, bw, queue = np.exp(best.x)
    return FlashModel(seq_peak=float(peak), l0=float(l0), per_thread_bw=float(bw), queue=float(queue))


@dataclass
class BenchResult:
    """A flash-bench run: ``points`` (chunk bytes, threads, B/s), the fitted model, and the conditions."""

    points: list[tuple[int, int, float]]
    fitted: dict
    mode: str
    filesystem: str
    size: int
    seconds: float

    def model(self) -> FlashModel:
        return FlashModel(**self.fitted)

    def save(self, path: Path) -> Path:
        write_text(path, json.dumps(asdict(self), indent=1))
        return path

    @classmethod
    def load(cls, path: Path) -> BenchResult:
        d = json.loads(path.read_text())
        return cls([tuple(p) for p in d["points"]], d["fitted"], d["mode"], d["filesystem"], d["size"], d["seconds"])


def run(
    out: Path,
    size: int = 512 << 20,
    chunks: tuple[int, ...] = CHUNKS,
    threads: tuple[int, ...] = THREADS,
    seconds: float = 0.6,
    seed: int = 1,
    progress: bool = False,
) -> BenchResult:
    """Measure, fit, write ``flash_bench.json`` and ``flash_bench.png`` to ``out``, remove the scratch file."""
    if size < max(chunks) or size % BLOCK:
        raise ValueError(f"size: {size} bytes not allowed; a multiple of {BLOCK}, at least the largest chunk")
    if any(c % BLOCK for c in chunks):
        raise ValueError(f"chunks: {chunks} not allowed; multiples of {BLOCK} bytes")
    out.mkdir(parents=True, exist_ok=True)
    scratch = out / "flash_bench.scratch"
    free = shutil.disk_usage(out).free + (scratch.stat().st_size if scratch.exists() else 0)
    if size + FREE_RESERVE > free:
        raise ValueError(
            f"--size: {size >> 20} MiB does not fit on the disk of {out}: {free >> 20} MiB free, "
            f"{FREE_RESERVE >> 20} MiB of it kept free"
        )
    pairs = [(c, n) for n in threads for c in chunks]
    try:  # the scratch file goes whatever happens, Ctrl-C included
        write_scratch(scratch, size)
        fd, mode = open_file(scratch, direct=True)
        try:
            with progress_bar(len(pairs), "flash-bench", progress) as bar:
                points = []
                for c, n in pairs:
                    points.append((c, n, measure(fd, size, c, n, seconds, mode, seed)))
                    bar.update()
        finally:
            os.close(fd)
    finally:
        scratch.unlink(missing_ok=True)
    res = BenchResult(points, asdict(fit(points)), mode, filesystem(out), size, seconds)
    res.save(out / "flash_bench.json")
    plot(res, out / "flash_bench.png")
    return res


def plot(res: BenchResult | None, path: Path) -> Path:
    """Throughput vs chunk size: the paper's points and its M1 Max model, with this machine's curves over them."""
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    grid = np.array([KIB << k for k in range(2, 11)], float)
    m1 = FlashModel()
    ax.plot(grid / KIB, [m1.throughput(c) / 1e9 for c in grid], "k--", label="paper M1 Max model, 32 threads")
    pts = [(c, v) for c, v in paper.FLASH_POINTS.items() if c <= grid[-1]]
    ax.plot([c / KIB for c, _ in pts], [v for _, v in pts], "k*", ms=11, label="paper points (M1 Max)")
    ax.axhline(paper.FLASH_POINTS[1 << 30], color="k", lw=0.6, ls=":", label="paper sequential 6.1 GB/s")
    if res is not None:
        model = res.model()
        for n in sorted({p[1] for p in res.points}):
            xs = [(c, v) for c, t, v in res.points if t == n]
            (line,) = ax.plot(
                [c / KIB for c, _ in xs], [v / 1e9 for _, v in xs], "o-", label=f"this machine, {n} threads"
            )
            ax.plot(grid / KIB, [model.throughput(c, n) / 1e9 for c in grid], ":", color=line.get_color())
        ax.set_title(
            f"LLM in a flash Fig. 2b beside this machine ({res.filesystem}, {res.mode} reads; dotted: the "
            "fitted model)",
            fontsize=9,
        )
    else:
        ax.set_title("LLM in a flash Fig. 2b: random-read throughput vs chunk size (M1 Max)", fontsize=9)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("chunk size (KiB)")
    ax.set_ylabel("random-read throughput (GB/s)")
    ax.legend(fontsize=7)
    return plots.save(fig, plt, path)
