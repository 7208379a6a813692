"""Every testbench membound runs (`make sim`, `make bench`, `make verilog`), by unit family."""

from __future__ import annotations

from tb.runner import TbSpec


def all_specs(full: bool = True) -> list[TbSpec]:
    """``full``: include the paper-size testbenches of `make sim` (pytest marker ``full``)."""
    from tb.arith.cases import SPECS as ARITH
    from tb.deca.cases import SPECS as DECA
    from tb.duplex.cases import FULL_SPECS as DUPLEX_FULL
    from tb.duplex.cases import SPECS as DUPLEX
    from tb.hermes.cases import FULL_SPECS as HERMES_FULL
    from tb.hermes.cases import SPECS as HERMES
    from tb.l3.cases import FULL_SPECS as L3_FULL
    from tb.l3.cases import SPECS as L3

    return [*ARITH, *DECA, *L3, *DUPLEX, *HERMES, *(L3_FULL + DUPLEX_FULL + HERMES_FULL if full else [])]


def spec_by_tag(tag: str) -> TbSpec:
    for spec in all_specs():
        if spec.tag == tag:
            return spec
    raise ValueError(f"tag: unknown testbench {tag!r}; known: {[s.tag for s in all_specs()]}")
