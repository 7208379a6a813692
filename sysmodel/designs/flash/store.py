"""An FFN's weights in a flash file, and the parallel reader that loads the active neurons' bundles
(LLM in a flash §3.2, Fig. 5).

File format (one FFN layer per file):

- bytes 0..4095: the header, ``MBFFN1`` then a NUL-padded JSON object ``{"layout", "d_model", "d_ff",
  "dtype"}``; the data start at 4096 so direct-I/O reads stay block aligned;
- ``bundled`` layout: neuron i's bundle at 4096 + i * 2 * d_model * b bytes (b bytes per value): column i of
  the up projection (d_model values) then row i of the down projection (d_model values), one contiguous read;
- ``unbundled`` layout (the comparison): every up-projection column, then every down-projection row; neuron
  i is two reads of d_model * b bytes, at 4096 + i * d_model * b and 4096 + (d_ff + i) * d_model * b.

Reads are positional (``os.preadv``) from a thread pool, each request split into pieces of at most
``chunk`` bytes. The page cache is bypassed with ``O_DIRECT`` where the file system allows it (reads
widened to 4 KiB blocks); otherwise the file's cached pages are dropped with ``posix_fadvise(DONTNEED)``
before each batch of reads; :attr:`FlashReader.cache_mode` says which.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

MAGIC = b"MBFFN1"
HEADER = 4096  # header bytes; also the direct-I/O alignment
BLOCK = 4096
LAYOUTS = ("bundled", "unbundled")
DTYPES = {"float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}
MAX_CHUNK = 64 << 20


@dataclass(frozen=True)
class FFN:
    """One ReLU FFN layer: ``up`` (d_model, d_ff), ``bias`` (d_ff,) kept in DRAM, ``down`` (d_ff, d_model)."""

    up: np.ndarray
    bias: np.ndarray
    down: np.ndarray

    @property
    def d_model(self) -> int:
        return self.up.shape[0]

    @property
    def d_ff(self) -> int:
        return self.up.shape[1]

    def load(self, neurons: np.ndarray) -> np.ndarray:
        """Rows [up[:, i], down[i, :]] of the given neurons, (n, 2 d_model): what a file read returns."""
        return np.concatenate([self.up[:, neurons].T, self.down[neurons]], axis=1)

    @classmethod
    def random(cls, d_model: int, d_ff: int, seed: int = 0, dtype: str = "float32") -> FFN:
        """A seeded FFN with N(0, 1/d_model) weights and a negative bias (sparse ReLU outputs)."""
        rng = np.random.default_rng(seed)
        t = DTYPES[dtype]
        up = (rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model)).astype(t)
        down = (rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff)).astype(t)
        return cls(up, np.full(d_ff, -1.0, t), down)


def zoo_ffn(model: str, scale: int = 1, seed: int = 0, dtype: str = "float32") -> FFN:
    """A seeded FFN layer shaped like a zoo model's (sysmodel/data/models), d_model and d_ff divided by
    ``scale`` so that a scaled-down one fits a small disk (weights cannot be downloaded here)."""
    from sysmodel.cost.models import load_model

    cfg = load_model(model)
    if scale < 1 or cfg.hidden % scale or cfg.intermediate % scale:
        raise ValueError(f"scale: {scale} not allowed; a divisor of d_model {cfg.hidden} and d_ff {cfg.intermediate}")
    return FFN.random(cfg.hidden // scale, cfg.intermediate // scale, seed, dtype)


def layout_bytes(d_model: int, d_ff: int, dtype: str) -> int:
    return 2 * d_model * d_ff * np.dtype(DTYPES[dtype]).itemsize


def write(path: Path, ffn: FFN, layout: str = "bundled") -> Path:
    """Write ``ffn``'s up and down projections to ``path`` in ``layout`` (module docstring)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout: {layout!r} not allowed; one of {LAYOUTS}")
    dtype = next((k for k, t in DTYPES.items() if ffn.up.dtype == t), None)
    if dtype is None or ffn.down.dtype != ffn.up.dtype:
        raise ValueError(
            f"dtype: {ffn.up.dtype}/{ffn.down.dtype} not allowed; one of {sorted(DTYPES)}, the same for up and down"
        )
    meta = json.dumps({"layout": layout, "d_model": ffn.d_model, "d_ff": ffn.d_ff, "dtype": dtype}).encode()
    head = (MAGIC + meta).ljust(HEADER, b"\0")
    body = ffn.load(np.arange(ffn.d_ff)) if layout == "bundled" else np.concatenate([ffn.up.T, ffn.down])
    with open(path, "wb") as f:
        f.write(head)
        f.write(np.ascontiguousarray(body).tobytes())
    return Path(path)


def open_file(path: Path, direct: bool) -> tuple[int, str]:
    """The file opened for direct I/O when asked and the file system takes it, else buffered; and the mode."""
    flag = getattr(os, "O_DIRECT", 0) if direct else 0
    if flag:
        try:
            fd = os.open(path, os.O_RDONLY | flag)
        except OSError:
            fd = -1
        if fd >= 0:
            try:
                os.preadv(fd, [mmap.mmap(-1, BLOCK)], 0)  # some file systems take the flag but fail the read
                return fd, "direct"
            except OSError:
                os.close(fd)
    return os.open(path, os.O_RDONLY), "fadvise-dontneed" if hasattr(os, "posix_fadvise") else "cached"


class FlashReader:
    """Parallel positional reads of a layout file (module docstring).

    ``threads``: reads in flight; ``chunk``: the largest single read in bytes, a multiple of 4096 up to
    64 MiB (None: one read per bundle or row); ``direct``: try O_DIRECT (False: buffered, the page cache
    dropped before each :meth:`load`); ``expect``: header fields that must match (``d_model``, ``d_ff``,
    ``dtype``, ``layout``).
    """

    def __init__(
        self, path: Path, threads: int = 32, chunk: int | None = None, direct: bool = True, expect: dict | None = None
    ):
        if not 1 <= threads <= 1024:
            raise ValueError(f"threads: {threads} not allowed; 1 to 1024")
        if chunk is not None and not (chunk % BLOCK == 0 and BLOCK <= chunk <= MAX_CHUNK):
            raise ValueError(f"chunk: {chunk} bytes not allowed; a multiple of {BLOCK} from {BLOCK} to {MAX_CHUNK}")
        self.path, self.threads, self.chunk = Path(path), threads, chunk
        try:
            size = self.path.stat().st_size
            with open(self.path, "rb") as f:
                head = f.read(HEADER)
        except OSError as e:
            raise ValueError(f"flash file: cannot read {path}: {e.strerror}") from None
        if not head.startswith(MAGIC):
            raise ValueError(f"flash file {path}: not a membound FFN file (no {MAGIC.decode()} header)")
        try:
            self.meta = json.loads(head[len(MAGIC) :].rstrip(b"\0"))
        except ValueError:
            raise ValueError(f"flash file {path}: header is not valid JSON") from None
        for key, want in (expect or {}).items():
            if self.meta.get(key) != want:
                raise ValueError(f"flash file {path}: {key} is {self.meta.get(key)!r}, expected {want!r}")
        if self.meta.get("layout") not in LAYOUTS or self.meta.get("dtype") not in DTYPES:
            raise ValueError(
                f"flash file {path}: layout/dtype {self.meta.get('layout')!r}/"
                f"{self.meta.get('dtype')!r} not allowed; {LAYOUTS} / {sorted(DTYPES)}"
            )
        self.d_model, self.d_ff = int(self.meta["d_model"]), int(self.meta["d_ff"])
        self.dtype = np.dtype(DTYPES[self.meta["dtype"]])
        need = HEADER + layout_bytes(self.d_model, self.d_ff, self.meta["dtype"])
        if size < need:
            raise ValueError(
                f"flash file {path}: {size} bytes, shorter than its layout ({self.meta['layout']}, "
                f"d_model {self.d_model}, d_ff {self.d_ff}, {self.meta['dtype']}) needs {need}"
            )
        self.fd, self.cache_mode = open_file(self.path, direct)
        self.pool = ThreadPoolExecutor(threads)
        self.local = threading.local()
        self.bytes_read = 0
        self.reads = 0

    def close(self) -> None:
        self.pool.shutdown()
        os.close(self.fd)

    def __enter__(self) -> FlashReader:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def requests(self, neurons: np.ndarray) -> list[tuple[int, int, int]]:
        """(file offset, bytes, offset in the result) of every read for ``neurons``, each at most ``chunk``."""
        row = self.d_model * self.dtype.itemsize
        out = []
        for k, i in enumerate(neurons.tolist()):
            if self.meta["layout"] == "bundled":
                spans = [(HEADER + 2 * i * row, 2 * row, 2 * k * row)]
            else:
                spans = [(HEADER + i * row, row, 2 * k * row), (HEADER + (self.d_ff + i) * row, row, (2 * k + 1) * row)]
            for off, n, dst in spans:
                step = self.chunk or n
                out += [(off + s, min(step, n - s), dst + s) for s in range(0, n, step)]
        return out

    def _read(self, buf: memoryview, off: int, n: int, dst: int) -> None:
        if self.cache_mode != "direct":
            got = os.preadv(self.fd, [buf[dst : dst + n]], off)
        else:  # widen to whole blocks through an aligned per-thread scratch buffer
            lo, hi = off - off % BLOCK, -(-(off + n) // BLOCK) * BLOCK
            scratch = getattr(self.local, "buf", None)
            if scratch is None or len(scratch) < hi - lo:
                scratch = self.local.buf = mmap.mmap(-1, max(hi - lo, 1 << 20))
            got = os.preadv(self.fd, [memoryview(scratch)[: hi - lo]], lo) - (off - lo)
            buf[dst : dst + n] = memoryview(scratch)[off - lo : off - lo + n]
        if got < n:
            raise ValueError(f"flash file {self.path}: short read at offset {off} ({got} of {n} bytes)")

    def load(self, neurons: np.ndarray) -> np.ndarray:
        """The bundles [up[:, i], down[i, :]] of ``neurons`` (distinct indices in [0, d_ff)), read from the file
        in parallel: an array (len(neurons), 2 d_model) of the file's dtype."""
        neurons = np.asarray(neurons, dtype=np.int64)
        if neurons.ndim != 1 or (neurons.size and (neurons.min() < 0 or neurons.max() >= self.d_ff)):
            span = f"{neurons.min()}..{neurons.max()}" if neurons.size else "-"
            raise ValueError(
                f"neurons: indices must be a vector in [0, {self.d_ff}), got shape {neurons.shape} range {span}"
            )
        if np.unique(neurons).size != neurons.size:
            raise ValueError("neurons: indices repeat; each neuron is loaded once")
        out = np.empty((neurons.size, 2 * self.d_model), self.dtype)
        if self.cache_mode == "fadvise-dontneed":
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_DONTNEED)
        view = out.view(np.uint8).reshape(-1).data
        reqs = self.requests(neurons)
        list(self.pool.map(lambda r: self._read(view, *r), reqs))
        self.reads += len(reqs)
        self.bytes_read += sum(n for _, n, _ in reqs)
        return out
