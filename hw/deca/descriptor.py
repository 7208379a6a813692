"""DECA PE descriptor decode (DECA §5 TEPL metadata, §6.1): the per-tile settings every stage reads.

Combinational. A descriptor the PE cannot run (code width not in 1..8/16, or a scale group outside
W..512: ``golden.deca_spec.TileCmd.valid``) is *bad*: the tile is treated as all-empty windows with
scaling off, its streams are consumed as usual, and ``bad_cfg`` is flagged (``golden.deca.pe_decompress``).
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.deca_spec import CMD_FIELDS, GROUP_LOG2_MAX, LANES, RAW_BITS, TILE, W
from hw.deca.cycles import lq

CMD = data.StructLayout(CMD_FIELDS)  # golden.deca_spec.TileCmd


class DescriptorDecode(wiring.Component):
    """Members:
    ``cmd``: In(CMD) — the tile's descriptor;
    ``bad``: Out(1) — the descriptor cannot run (``bad_cfg``);
    ``bits``: Out(5) — the code width to read (8 for a bad descriptor, whose windows are empty anyway);
    ``lq``: Out — values the dequantization stage handles per cycle at this width (``hw.deca.cycles.lq``);
    ``sparse``/``scaled``: Out(1) — the tile carries a mask / scale stream (consumed even when bad);
    ``scale_on``: Out(1) — multiply by the group scales (scaled and not bad);
    ``group_vops``: Out — vOps per scale group minus one, as a mask on the vOp index.
    """

    def __init__(self, w: int = W, lanes: int = LANES):
        self.w, self.lanes = w, lanes
        super().__init__(
            {
                "cmd": In(CMD),
                "bad": Out(1),
                "bits": Out(5),
                "lq": Out(range(w + 1)),
                "sparse": Out(1),
                "scaled": Out(1),
                "scale_on": Out(1),
                "group_vops": Out(range(TILE + 1)),
            }
        )

    def elaborate(self, platform) -> Module:
        m = Module()
        c, w, lanes = self.cmd, self.w, self.lanes
        log2w = w.bit_length() - 1
        width_ok = ((c.bits >= 1) & (c.bits <= 8)) | (c.bits == RAW_BITS)
        group_ok = (c.group_log2 >= log2w) & (c.group_log2 <= GROUP_LOG2_MAX)
        m.d.comb += self.bad.eq(~width_ok | (c.scaled & ~group_ok))
        m.d.comb += self.bits.eq(Mux(self.bad, 8, c.bits))
        rate = lq(6, lanes, w)  # every width up to 6 bits reads at the 6-bit rate
        for bits in (7, 8, RAW_BITS):
            rate = Mux(self.bits == bits, lq(bits, lanes, w), rate)
        m.d.comb += [
            self.lq.eq(rate),
            self.sparse.eq(c.sparse),
            self.scaled.eq(c.scaled),
            self.scale_on.eq(c.scaled & ~self.bad),
            self.group_vops.eq((Const(1, GROUP_LOG2_MAX + 1) << (c.group_log2 - log2w)[:4]) - 1),
        ]
        return m
