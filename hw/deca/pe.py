"""The DECA processing element (DECA §6.1, Fig. 10): dequantize -> expand -> scale, W lanes per vOp.

Ports (all ``amaranth.lib.stream``):

* ``lut``   {addr, data}: programs every big LUT (``golden.deca.lut_image``), before the tiles using it.
* ``cmd``   one descriptor per tile {bits, sparse, scaled, group_log2} (``golden.deca.TileCmd``).
* ``sqq``   the tile's values as 64-byte lines {data, last}; ``mask`` its bitmask as W-bit words
  {data, last} (sparse tiles only); ``scale`` its BF16 group scales {data, last} (scaled tiles only).
  The loaders' memory side (L2, prefetcher) is the system model's; here it is these streams.
* ``o``     the decompressed tile, 512/W chunks of W BF16 values {data, last, error}; ``error`` holds
  the ``golden.deca.ERR_*`` flags of the tile (on every chunk, final on the ``last`` one).

Pipeline: the dequantization stage reads a vOp's window (W values dense, popcount(mask word) sparse)
from the SQQ window, Lq values per cycle through the LUT array (or raw for 16-bit values), into the SD
register; the expansion stage (prefix sum + triangular crossbar) fills DD; the scaling stage multiplies
every lane by the group scale with W BF16 multipliers (``hw.arith.fpmul``, 2 stages; bypassed when
unscaled) and writes chunk vop of a TOut buffer. The stage functions a format does not need are
bypassed (no LUT for 16-bit, identity expansion dense, no product unscaled); the registers stay, so
the latency does not depend on the format. Output semantics: :func:`golden.deca.pe_decompress`.

Cycle model (``hw.deca.cycles`` and :func:`cycle_model`): a vOp holds the dequantization stage
max(1, ceil(Wnd/Lq)) cycles, so with inputs ready and the output draining a tile occupies
sum(vop cycles) cycles (>= 512/W, the TOut drain time, which the double buffer hides). A tile's last
chunk leaves ``FILL_TO_OUT`` cycles after its last vOp's final dequantization cycle, plus the drain:
SD, DD, 2 multiplier stages, TOut write, then 512/W chunks.
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fp import BF16
from hw.arith.fpmul import fp_mul
from hw.cycles import CycleModel
from hw.deca.cycles import expected_tile_cycles, lq
from hw.deca.expand import Expand, popcount
from hw.deca.lut_array import LutArray
from hw.deca.queues import LINE_BITS, SqqAligner, TileQueue, tile_entry
from hw.deca.tout import ERR_BITS, TILE, TOut, chunk_in, chunk_out
from hw.pipeline import PipelineCtl, delay, stage

CMD = data.StructLayout({"bits": 5, "sparse": 1, "scaled": 1, "group_log2": 4})
PIPE_DEPTH = 4  # SD, DD, multiplier stage 1, multiplier stage 2
FILL_TO_OUT = PIPE_DEPTH + 1  # + the TOut write; the first chunk is offered the cycle after


def check_params(w: int, lanes: int) -> None:
    if w not in (8, 16, 32, 64):
        raise ValueError(f"w: {w} not allowed; allowed 8, 16, 32, 64")
    if lanes not in (1, 2, 4, 8, 16, 32, 64):
        raise ValueError(f"lanes: {lanes} not allowed; a power of two from 1 to 64")


def cycle_model(w: int = 32, lanes: int = 8, bits: int = 8, density: float = 1.0, **_params) -> CycleModel:
    """latency: from a tile's last dequantization cycle (its descriptor retires) to its last chunk's
    acceptance, FILL_TO_OUT + 512/W - 1; ii: cycles per tile, 512/W * (1 + bpv) — exact for dense
    tiles, the binomial expectation for sparse ones (each tile's exact count: ``tile_cycles``)."""
    check_params(w, lanes)
    return CycleModel(latency=FILL_TO_OUT + TILE // w - 1,
                      ii=expected_tile_cycles(w, lq(bits, lanes, w), density))


# the SD register and what travels with it, sized for the widest W (64); lanes beyond W stay 0
SD = data.StructLayout({"vals": data.ArrayLayout(16, 64), "mask": 64, "scale": 16, "scaled": 1,
                        "vop": range(64), "err": ERR_BITS})


class DecaPE(wiring.Component):
    """W output lanes per vOp, L big LUTs; queue depths default to Table 3 (SQQ 32 x 64 B, bitmask queue
    16 x 4 B, scale-factor queue 32 x 2 B)."""

    def __init__(self, w: int = 32, lanes: int = 8, sqq_depth: int = 32, mask_depth: int = 16,
                 scale_depth: int = 32):
        check_params(w, lanes)
        self.w, self.lanes, self.nv = w, lanes, TILE // w
        self.lookups = min(w, 4 * lanes)
        self.sqq_depth, self.mask_depth, self.scale_depth = sqq_depth, mask_depth, scale_depth
        super().__init__({
            "lut": In(stream.Signature(data.StructLayout({"addr": 8, "data": 16}))),
            "cmd": In(stream.Signature(CMD)),
            "sqq": In(stream.Signature(tile_entry(LINE_BITS))),
            "mask": In(stream.Signature(tile_entry(w))),
            "scale": In(stream.Signature(tile_entry(16))),
            "o": Out(stream.Signature(chunk_out(w))),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        w, nv, L, n_lk = self.w, self.nv, self.lanes, self.lookups
        log2w = w.bit_length() - 1
        m.submodules.sqq = sqq = SqqAligner(self.sqq_depth)
        m.submodules.maskq = maskq = TileQueue(w, self.mask_depth)
        m.submodules.scaleq = scaleq = TileQueue(16, self.scale_depth)
        m.submodules.luts = luts = LutArray(L, n_lk)
        m.submodules.expand = expand = Expand(w)
        m.submodules.tout = tout = TOut(w)
        wiring.connect(m, wiring.flipped(self.sqq), sqq.i)
        wiring.connect(m, wiring.flipped(self.mask), maskq.i)
        wiring.connect(m, wiring.flipped(self.scale), scaleq.i)
        wiring.connect(m, wiring.flipped(self.lut), luts.w)
        wiring.connect(m, tout.o, wiring.flipped(self.o))

        # --- descriptor ---------------------------------------------------------------------------
        cfg = self.cmd.payload
        bad = Signal()
        m.d.comb += bad.eq(~(((cfg.bits >= 1) & (cfg.bits <= 8)) | (cfg.bits == 16))
                           | (cfg.scaled & ((cfg.group_log2 < log2w) | (cfg.group_log2 > 9))))
        q = Signal(5)
        m.d.comb += q.eq(Mux(bad, 8, cfg.bits))
        lq_now = Signal(range(w + 1))
        m.d.comb += lq_now.eq(Mux(q == 16, lq(16, L, w), Mux(q == 8, lq(8, L, w),
                                                             Mux(q == 7, lq(7, L, w), lq(6, L, w)))))

        # --- dequantization stage state ---------------------------------------------------------
        vop = Signal(range(nv))
        done = Signal(range(w + 1))
        acc = Signal(data.ArrayLayout(16, w))
        err = Signal(ERR_BITS)
        cur_scale = Signal(16)

        word = Signal(w)
        m.d.comb += word.eq(Mux(bad, 0, Mux(cfg.sparse, maskq.data, (1 << w) - 1)))
        wnd = popcount(m, word, "wnd")
        remaining = Signal(range(w + 1))
        m.d.comb += remaining.eq(wnd - done)
        n = Signal(range(w + 1))
        m.d.comb += n.eq(Mux(remaining < lq_now, remaining, lq_now))
        need = Signal(range(LINE_BITS + 1))
        m.d.comb += need.eq(n * q)
        take = Signal(range(LINE_BITS + 1))
        m.d.comb += take.eq(Mux(sqq.avail < need, sqq.avail, need))
        finishing = (done + n) == wnd
        last_vop = vop == nv - 1
        groups_per = Signal(range(TILE + 1))  # vOps per scale group - 1, as a mask
        m.d.comb += groups_per.eq((Const(1, 10) << (cfg.group_log2 - log2w)[:4]) - 1)
        need_scale = cfg.scaled & ~bad & ((vop & groups_per) == 0)
        rem_after = sqq.avail - take
        tile_can_end = sqq.ended | (rem_after > LINE_BITS)
        d_out = stream.Signature(SD).create()
        go = Signal()
        m.d.comb += go.eq(self.cmd.valid & ~sqq.draining & ((sqq.avail >= need) | sqq.ended)
                          & (~cfg.sparse | maskq.avail) & (~need_scale | scaleq.avail)
                          & (~(finishing & last_vop) | tile_can_end) & (~finishing | d_out.ready))
        m.d.comb += sqq.take.eq(Mux(go, take, 0))

        # --- values: Lq codes from the window, through the LUT array --------------------------------
        m.d.comb += luts.bits.eq(q)
        vals = []
        for j in range(n_lk):
            code = Signal(16, name=f"code{j}")
            with m.Switch(q):
                for qq in (*range(1, 9), 16):
                    with m.Case(qq):
                        m.d.comb += code.eq(sqq.bits[j * qq:(j + 1) * qq])
            m.d.comb += luts.codes[j].eq(code[:8])
            ok = (j + 1) * q <= sqq.avail  # a value only partly present after the stream ended reads 0
            v = Signal(16, name=f"val{j}")
            m.d.comb += v.eq(Mux(ok, Mux(q == 16, code, luts.values[j]), 0))
            vals.append(v)
        merged = Signal(data.ArrayLayout(16, w))
        vals_arr = Array(vals)
        iw = max(1, (n_lk - 1).bit_length())
        for k in range(w):  # value j of this cycle lands in lane done + j of the SD register
            inside = (k >= done) & (k < done + n)
            m.d.comb += merged[k].eq(Mux(inside, vals_arr[(k - done)[:iw]], acc[k]))
        short_now = sqq.ended & (sqq.avail < need)
        flags = Signal(ERR_BITS)
        m.d.comb += flags.eq(err | short_now | (bad << 6))
        end_flags = Signal(ERR_BITS)
        m.d.comb += end_flags.eq(flags | (sqq.long << 1) | ((cfg.sparse & maskq.short) << 2)
                                 | ((cfg.sparse & maskq.long) << 3) | ((cfg.scaled & scaleq.short) << 4)
                                 | ((cfg.scaled & scaleq.long) << 5))

        sd_in = d_out.payload
        m.d.comb += [d_out.valid.eq(go & finishing), sd_in.mask.eq(word), sd_in.scaled.eq(cfg.scaled & ~bad),
                     sd_in.vop.eq(vop), sd_in.scale.eq(Mux(need_scale, scaleq.data, cur_scale)),
                     sd_in.err.eq(Mux(last_vop, end_flags, flags))]
        for k in range(w):
            m.d.comb += sd_in.vals[k].eq(merged[k])
        with m.If(go):
            with m.If(finishing):
                m.d.comb += [maskq.pop.eq(cfg.sparse), scaleq.pop.eq(need_scale)]
                m.d.sync += [done.eq(0), vop.eq(vop + 1), err.eq(flags)]
                with m.If(need_scale):
                    m.d.sync += cur_scale.eq(scaleq.data)
                with m.If(last_vop):
                    m.d.comb += [self.cmd.ready.eq(1), sqq.end_tile.eq(1),
                                 maskq.end_tile.eq(cfg.sparse), scaleq.end_tile.eq(cfg.scaled)]
                    m.d.sync += [vop.eq(0), err.eq(0)]
            with m.Else():
                m.d.sync += [done.eq(done + n), acc.eq(merged), err.eq(flags)]

        # --- expand, scale, TOut: a stall-all pipeline from SD to the TOut write ---------------------
        to_tout = stream.Signature(chunk_in(w)).create()
        ctl = PipelineCtl(m, d_out, to_tout, PIPE_DEPTH)
        en = ctl.en
        sd = data.View(SD, stage(m, en, d_out.payload.as_value(), "sd"))
        m.d.comb += [expand.mask.eq(sd.mask[:w])]
        for k in range(w):
            m.d.comb += expand.sd[k].eq(sd.vals[k])
        dd = data.View(data.ArrayLayout(16, w), stage(m, en, expand.dd.as_value(), "dd"))
        meta = stage(m, en, sd.as_value(), "dd_meta")
        meta_v = data.View(SD, meta)
        prods = [fp_mul(m, en, dd[k], meta_v.scale, BF16, BF16, f"scale{k}") for k in range(w)]
        dd_late = data.View(data.ArrayLayout(16, w), delay(m, en, dd.as_value(), 2, "dd_late"))
        late = data.View(SD, delay(m, en, meta, 2, "meta_late"))
        for k in range(w):
            m.d.comb += to_tout.payload.data[k].eq(Mux(late.scaled, prods[k], dd_late[k]))
        m.d.comb += [to_tout.payload.vop.eq(late.vop), to_tout.payload.err.eq(late.err),
                     tout.i.valid.eq(to_tout.valid), tout.i.payload.eq(to_tout.payload),
                     to_tout.ready.eq(tout.i.ready)]
        return m
