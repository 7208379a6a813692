"""DECA compressed weight tiles: formats, compress/decompress, and the streams the DECA PE reads.

Paper: DECA (MICRO '25), §2.2 (quantization + bitmask sparsity, compression factor 16/(Q*d+1)), §2.3
(the AMX weight tile: 16 rows x 32 BF16 columns = 512 elements), §6.1 (LUT-array dequantization,
expansion, group scaling).

A compressed tile is three arrays, as in the paper: the quantized nonzeros stored contiguously (codes,
in row-major dense order), a 1-bit-per-element bitmask (absent for a dense tile) and per-group scale
factors (absent for unscaled formats). A format is *data*: a table mapping each Q-bit code to a BF16
value (Q <= 8), so a new <= 8-bit format is a new table, not new code. Q = 16 means raw BF16 values and
bypasses the LUT (the paper's Q16, sparsity only).

Decompression semantics (the PE implements exactly these):
  1. dequantize: value = table[code] (Q <= 8) or the code itself (Q = 16);
  2. expand: element i of the tile is the next stored value if mask bit i is 1, else +0 (0x0000);
  3. scale (scaled formats): element i = fp_mul_bf16(element i, scale[i // group]) — one BF16 product
     rounded to nearest even with gradual underflow (:func:`golden.arith.fp_mul`); the inserted zeros
     are scaled too (0 * s = ±0, or NaN when s is Inf/NaN), exactly as the hardware multiplies every lane.
Scales are fed to the PE as BF16. MXFP4 stores E8M0 scales (1 byte); the loader widens them to BF16
exactly (2**k is a BF16 normal for k >= -126, a BF16 subnormal for k = -127, NaN for 0xFF). MX blocks are
quantized by :func:`golden.fp.mx_quantize` (OCP MX: elements saturate; a block holding NaN or Inf gets
the NaN scale, so its whole group decompresses to NaN — the PE multiplies every lane by it).

The PE's LUT array is programmed with :func:`lut_image`: the 256-entry table repeated with period 2**Q,
so that each of the four 64-entry sub-LUTs (or each half) of a big LUT answers any code of a <= 6-bit
(7-bit) format — the paper's "redundant entries" (§6.1 item 6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from golden import arith
from golden.deca_spec import CODE_BITS, LINE_BITS, LUT_ENTRIES, MASK_BYTES, RAW_BITS, TILE, Err, TileCmd
from golden.fp import BF16, E2M1, E4M3, E5M2, E8M0, FloatFormat, decode, encode, mx_quantize


@dataclass(frozen=True)
class DecaFormat:
    """A compression scheme: ``bits`` per stored value, its BF16 ``table`` (None for Q16), the scale
    ``group`` size in elements (None: unscaled) and the bytes each stored scale takes in memory."""

    name: str
    bits: int
    table: tuple[int, ...] | None = None
    group: int | None = None
    scale_bytes: int = 2
    kind: str = "table"  # how compress() quantizes: 'bf16', 'fp' (via ``elem``), 'mx', 'int', 'table'
    elem: FloatFormat | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.bits not in CODE_BITS:
            raise ValueError(f"bits: {self.bits} not allowed; allowed 1..8, or {RAW_BITS} for raw BF16")
        if self.bits == RAW_BITS:
            if self.table is not None:
                raise ValueError("table: must be None for 16-bit (raw BF16) values")
        elif self.table is None or len(self.table) != 1 << self.bits:
            n = None if self.table is None else len(self.table)
            raise ValueError(f"table: {n} entries; a {self.bits}-bit format needs {1 << self.bits}")
        elif not all(0 <= v <= 0xFFFF for v in self.table):
            raise ValueError("table: entries must be 16-bit BF16 patterns (0..0xFFFF)")
        if self.group is not None and (self.group < 1 or self.group & (self.group - 1) or self.group > TILE):
            raise ValueError(f"group: {self.group} not allowed; a power of two from 1 to {TILE}")
        if self.scale_bytes not in (1, 2):
            raise ValueError(f"scale_bytes: {self.scale_bytes} not allowed; allowed 1 (E8M0) or 2 (BF16)")

    @property
    def n_scales(self) -> int:
        return 0 if self.group is None else TILE // self.group


def _fp_table(elem: FloatFormat) -> tuple[int, ...]:
    """BF16 image of every code of a small float format (exact: each is a subset of BF16)."""
    out = []
    for c in range(1 << elem.width):
        v = decode(c, elem)
        out.append(BF16.nan_bits if math.isnan(v) else encode(v, BF16))
    return tuple(out)


def int_table(bits: int) -> tuple[int, ...]:
    """Two's-complement INT``bits`` codes as BF16 (exact for bits <= 8)."""
    return tuple(encode(c - (1 << bits) if c >> (bits - 1) else c, BF16) for c in range(1 << bits))


Q16 = DecaFormat("q16", 16, kind="bf16")
Q8_E5M2 = DecaFormat("q8", 8, _fp_table(E5M2), kind="fp", elem=E5M2)  # the paper's BF8
Q8_E4M3 = DecaFormat("q8_e4m3", 8, _fp_table(E4M3), kind="fp", elem=E4M3)
Q4_MXFP4 = DecaFormat("q4", 4, _fp_table(E2M1), group=32, scale_bytes=1, kind="mx", elem=E2M1)
INT8 = DecaFormat("int8", 8, int_table(8), group=128, kind="int")
INT4 = DecaFormat("int4", 4, int_table(4), group=32, kind="int")
FORMATS = {f.name: f for f in (Q16, Q8_E5M2, Q8_E4M3, Q4_MXFP4, INT8, INT4)}


def get_format(name: str) -> DecaFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"format: unknown {name!r}; allowed: {sorted(FORMATS)}") from None


@dataclass
class CompressedTile:
    fmt: DecaFormat
    codes: np.ndarray  # uint16: one code per stored value, dense order
    mask: np.ndarray | None  # bool[512]; None for a dense tile
    scales: np.ndarray | None  # uint16 BF16 scale per group, as the PE's scale queue receives them

    @property
    def nnz(self) -> int:
        return len(self.codes)

    @property
    def density(self) -> float:
        return self.nnz / TILE

    def check(self) -> None:
        """Raise ValueError naming the field when the three arrays disagree."""
        f = self.fmt
        if self.mask is not None:
            if self.mask.shape != (TILE,):
                raise ValueError(f"mask: shape {self.mask.shape}; a tile's bitmask has {TILE} bits")
            ones = int(np.count_nonzero(self.mask))
            if ones != self.nnz:
                raise ValueError(f"codes: {self.nnz} values but the bitmask has {ones} ones")
        elif self.nnz != TILE:
            raise ValueError(f"codes: {self.nnz} values; a dense tile (no bitmask) needs {TILE}")
        if self.nnz and int(np.max(self.codes)) >> f.bits:
            raise ValueError(f"codes: {int(np.max(self.codes)):#x} does not fit in {f.bits} bits")
        n = 0 if self.scales is None else len(self.scales)
        if n != f.n_scales:
            raise ValueError(f"scales: {n} given; format {f.name} needs {f.n_scales} per tile")

    def nbytes(self) -> int:
        """Bytes in memory: packed values + bitmask (sparse only) + stored scales."""
        return (
            math.ceil(self.nnz * self.fmt.bits / 8)
            + (MASK_BYTES if self.mask is not None else 0)
            + self.fmt.n_scales * self.fmt.scale_bytes
        )


def compression_factor(tile: CompressedTile) -> float:
    """Dense BF16 bytes (1 KiB) over the tile's bytes; 16/(Q*d + 1) for a sparse unscaled tile."""
    return 2 * TILE / tile.nbytes()


def paper_compression_factor(bits: int, density: float) -> float:
    """DECA §2.2: 16 / (Q*d + 1) (values + 1-bit bitmask, scales not counted)."""
    return 16 / (bits * density + 1)


# --- compression (offline, §2.2) ---------------------------------------------------------------------


def _nearest(values: np.ndarray, table: tuple[int, ...]) -> np.ndarray:
    t = np.array([decode(v, BF16) for v in table])
    t = np.where(np.isnan(t), np.inf, t)
    return np.argmin(np.abs(values[:, None] - t[None, :]), axis=1).astype(np.uint16)


def e8m0_to_bf16(bits: int) -> int:
    """An E8M0 scale as the loader widens it: 2**k exactly (a BF16 subnormal for k = -127), NaN for 0xFF."""
    return BF16.nan_bits if bits == E8M0.nan_bits else encode(decode(bits, E8M0), BF16)


def _scale_and_codes(vals: np.ndarray, fmt: DecaFormat) -> tuple[np.ndarray, np.ndarray | None]:
    """Codes for the dense tile ``vals`` (all 512, pruned ones already 0) and BF16 scales."""
    if fmt.kind == "bf16":
        return np.array([encode(v, BF16) for v in vals], np.uint16), None
    if fmt.kind == "fp":
        return np.array([encode(v, fmt.elem) for v in vals], np.uint16), None
    if fmt.group is None:
        return _nearest(vals, fmt.table), None
    groups = vals.reshape(-1, fmt.group)
    scales, codes = [], []
    for g in groups:
        if fmt.kind == "mx":  # OCP MX (golden.fp.mx_quantize): E8M0 scale, widened exactly to BF16
            bits, elems = mx_quantize(g, fmt.elem)
            scale = e8m0_to_bf16(bits)
            codes.append(list(elems))
        else:
            amax = float(np.max(np.abs(g)))
            qmax = (
                (1 << (fmt.bits - 1)) - 1
                if fmt.kind == "int"
                else max(abs(decode(v, BF16)) for v in fmt.table if not math.isnan(decode(v, BF16)))
            )
            scale = encode(amax / qmax, BF16) if amax else encode(1.0, BF16)
            s = decode(scale, BF16)
            if fmt.kind == "int":
                q = np.clip(np.round(g / s), -(1 << (fmt.bits - 1)), (1 << (fmt.bits - 1)) - 1).astype(int)
                codes.append(list(q & ((1 << fmt.bits) - 1)))
            else:
                codes.append(list(_nearest(g / s, fmt.table)))
        scales.append(scale)
    return np.array(codes, np.uint16).ravel(), np.array(scales, np.uint16)


def compress(dense: np.ndarray, fmt: DecaFormat, density: float = 1.0, sparse: bool | None = None) -> CompressedTile:
    """Prune to the ``round(density*512)`` largest magnitudes (ties: lower index first), quantize the
    kept values (scales from each group's kept values) and return the three arrays. ``sparse`` (default:
    density < 1) stores a bitmask; a dense tile needs density 1."""
    x = np.asarray(dense, np.float64).ravel()
    if x.shape != (TILE,):
        raise ValueError(f"dense: {np.asarray(dense).size} elements; a tile has {TILE}")
    if not 0.0 <= density <= 1.0:
        raise ValueError(f"density: {density} not allowed; allowed 0..1")
    sparse = density < 1.0 if sparse is None else sparse
    if fmt.kind in ("int", "table") and fmt.group is not None and not np.isfinite(x).all():
        raise ValueError(
            f"dense: Inf/NaN has no encoding in {fmt.name} (group scales would be Inf); allowed: finite values"
        )
    nnz = round(density * TILE)
    if not sparse and nnz != TILE:
        raise ValueError(f"density: {density} needs a bitmask; pass sparse=True or density=1")
    keep = np.zeros(TILE, bool)
    keep[np.argsort(-np.abs(x), kind="stable")[:nnz]] = True
    codes, scales = _scale_and_codes(np.where(keep, x, 0.0), fmt)
    tile = CompressedTile(fmt, codes[keep], keep if sparse else None, scales)
    tile.check()
    return tile


def decompress(tile: CompressedTile) -> np.ndarray:
    """The 512 BF16 bit patterns of the tile (row-major), per the module docstring."""
    tile.check()
    f = tile.fmt
    vals = tile.codes if f.table is None else np.array(f.table, np.uint16)[tile.codes]
    mask = np.ones(TILE, bool) if tile.mask is None else tile.mask
    out = np.zeros(TILE, np.uint16)
    out[mask] = vals
    if tile.scales is not None:
        scale = tile.scales[np.arange(TILE) // f.group]
        out = np.array([arith.fp_mul(int(v), int(s), BF16) for v, s in zip(out, scale, strict=True)], np.uint16)
    return out


# --- what the PE's queues receive ------------------------------------------------------------------------


def lut_image(fmt: DecaFormat) -> list[int]:
    """The 256 BF16 entries written to every big LUT: the table repeated with period 2**bits."""
    if fmt.table is None:
        raise ValueError(f"format {fmt.name}: 16-bit values bypass the LUT array")
    return [fmt.table[a % len(fmt.table)] for a in range(LUT_ENTRIES)]


def sqq_lines(tile: CompressedTile) -> list[int]:
    """The values packed LSB-first (value k at bits [k*Q, (k+1)*Q)) into 512-bit SQQ lines; a tile with
    no values still sends one (zero) line, so every tile's stream has a last entry."""
    q = tile.fmt.bits
    stream = 0
    for k, c in enumerate(tile.codes):
        stream |= int(c) << (k * q)
    n = max(1, math.ceil(tile.nnz * q / LINE_BITS))
    return [(stream >> (i * LINE_BITS)) & ((1 << LINE_BITS) - 1) for i in range(n)]


def mask_words(tile: CompressedTile, w: int) -> list[int]:
    """The bitmask as W-bit words, one per vOp; bit i of word v is element v*W + i."""
    if tile.mask is None:
        return []
    bits = tile.mask.reshape(-1, w)
    return [int(sum(int(b) << i for i, b in enumerate(row))) for row in bits]


def random_mask(rng: np.random.Generator, density: float) -> np.ndarray:
    """I.i.d. Bernoulli(density) bitmask: the paper's uniform-nonzeros assumption (§6.2)."""
    return rng.random(TILE) < density


def random_tile(
    rng: np.random.Generator, fmt: DecaFormat, density: float, sparse: bool | None = None
) -> CompressedTile:
    """Random codes (every code value, NaN/Inf codes included) behind an i.i.d. mask, random scales."""
    sparse = density < 1.0 if sparse is None else sparse
    mask = random_mask(rng, density) if sparse else None
    nnz = TILE if mask is None else int(np.count_nonzero(mask))
    codes = rng.integers(0, 1 << fmt.bits, nnz).astype(np.uint16)
    scales = None
    if fmt.group is not None:
        if fmt.kind == "mx":  # every E8M0 scale (NaN included), widened to BF16
            scales = np.array([e8m0_to_bf16(int(e)) for e in rng.integers(0, 256, fmt.n_scales)], np.uint16)
        else:
            scales = rng.integers(0, 1 << 16, fmt.n_scales).astype(np.uint16)
    tile = CompressedTile(fmt, codes, mask, scales)
    tile.check()
    return tile


# --- the PE's view: per-tile streams, possibly malformed ----------------------------------------------


def format_cmd(fmt: DecaFormat, sparse: bool) -> TileCmd:
    """The descriptor (golden.deca_spec.TileCmd) of ``fmt``'s tiles, sparse (with a bitmask) or dense."""
    g = fmt.group
    return TileCmd(fmt.bits, sparse, g is not None, g.bit_length() - 1 if g else 5)


def tile_cmd(tile: CompressedTile) -> TileCmd:
    return format_cmd(tile.fmt, tile.mask is not None)


@dataclass
class TileStreams:
    """What the loaders deliver for one tile: descriptor, SQQ lines, mask words, BF16 scales."""

    cmd: TileCmd
    lines: list[int]
    mask: list[int]
    scales: list[int]

    @classmethod
    def of(cls, tile: CompressedTile, w: int) -> TileStreams:
        scales = [] if tile.scales is None else [int(s) for s in tile.scales]
        return cls(tile_cmd(tile), sqq_lines(tile), mask_words(tile, w), scales)


def pe_decompress(ts: TileStreams, lut: list[int], w: int) -> tuple[np.ndarray, int]:
    """The DECA PE's output tile and error flags for one tile's streams (hw/deca/pe.py).

    Well-formed streams give :func:`decompress` of the tile (no flags). Otherwise, never hanging:
    a stream that ends early reads as zeros from there on (values, mask words, scales) and sets its
    ``*_short`` flag; a stream with entries left over when the tile ends (SQQ: more lines than
    max(1, ceil(consumed bits / 512))) sets ``*_long`` and the extra entries are dropped. A descriptor
    with bits not in 1..8/16, or a scale group outside W..512, sets ``bad_cfg``: every window is
    treated as empty and scaling is off (an all-zero tile); its streams are consumed as usual.
    The mask stream is read only for sparse tiles, the scale stream only for scaled ones; every stream
    a tile reads carries at least one entry (a zero-length stream cannot carry its end marker).
    """
    c, nv = ts.cmd, TILE // w
    bad = not c.valid(w)
    flags = Err.BAD_CFG if bad else Err(0)
    q = 8 if bad else c.bits
    stream = sum(line << (LINE_BITS * i) for i, line in enumerate(ts.lines))
    total_bits, pos = LINE_BITS * len(ts.lines), 0
    out = np.zeros(TILE, np.uint16)
    for v in range(nv):
        word = (1 << w) - 1
        if c.sparse:
            word = ts.mask[v] if v < len(ts.mask) else 0
            flags |= Err.MASK_SHORT if v >= len(ts.mask) else 0
        for i in range(w):
            if bad or not word >> i & 1:
                continue
            if pos + q <= total_bits:
                code = (stream >> pos) & ((1 << q) - 1)
                out[v * w + i] = code if q == RAW_BITS else lut[code]
                pos += q
            else:
                flags |= Err.SQQ_SHORT
                pos = total_bits
    if len(ts.lines) > max(1, math.ceil(pos / LINE_BITS)):
        flags |= Err.SQQ_LONG
    if c.sparse and len(ts.mask) > nv:
        flags |= Err.MASK_LONG
    if c.scaled:
        need = 0 if bad else TILE >> c.group_log2
        flags |= (Err.SCALE_SHORT if len(ts.scales) < need else Err(0)) | (
            Err.SCALE_LONG if len(ts.scales) > need else Err(0)
        )
        if not bad:
            g = 1 << c.group_log2
            sc = [ts.scales[i // g] if i // g < len(ts.scales) else 0 for i in range(TILE)]
            out = np.array([arith.fp_mul(int(x), s, BF16) for x, s in zip(out, sc, strict=True)], np.uint16)
    return out, int(flags)
