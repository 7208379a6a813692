"""Each command descriptor is declared once, as a field list in its paper's spec module: the golden
pack/unpack and the RTL's ``StructLayout`` view are both derived from it, so they cannot disagree."""

from __future__ import annotations

import pytest
from amaranth.hdl import Const
from amaranth.lib import data
from hypothesis import given
from hypothesis import strategies as st

from golden import deca_spec, duplex, duplex_spec, hermes_spec
from golden.commands import pack_fields, unpack_fields
from hw.duplex import gemm_module
from hw.hermes import gemv

SPECS = {"duplex": duplex_spec.DESC_FIELDS, "hermes": hermes_spec.DESC_FIELDS, "deca": deca_spec.CMD_FIELDS}


@pytest.mark.parametrize("name", SPECS)
@given(st.data())
def test_golden_packing_is_the_struct_layouts(name, draw):
    fields = SPECS[name]
    values = {f: draw.draw(st.integers(0, (1 << w) - 1), label=f) for f, w in fields.items()}
    word = pack_fields(fields, **values)
    assert word == Const.cast(data.StructLayout(fields).const(values)).value
    assert unpack_fields(fields, word) == tuple(values.values())


def test_the_rtl_views_use_the_spec_layouts():
    assert data.StructLayout(duplex_spec.DESC_FIELDS) == gemm_module.DESC
    assert data.StructLayout(hermes_spec.DESC_FIELDS) == gemv.DESC
    assert duplex.unpack_desc(duplex.pack_desc(64, 128, 3)) == (64, 128, 3)
    assert hermes_spec.unpack_desc(hermes_spec.pack_desc(1, 5, 7, 16)) == (1, 5, 7, 16)


def test_a_field_out_of_range_is_named():
    with pytest.raises(ValueError, match=r"batch: 32 not allowed; 0 to 31 \(5 bits\)"):
        hermes_spec.pack_desc(0, 1, 1, 32)
    with pytest.raises(ValueError, match="need"):
        pack_fields(duplex_spec.DESC_FIELDS, m=1, k=1)
