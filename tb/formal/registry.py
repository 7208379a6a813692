"""Every property module `make formal` runs, by paper (tb/<paper>/<paper>_props.py)."""

from __future__ import annotations

from tb.formal.sby import FormalSpec


def all_props() -> list[FormalSpec]:
    from tb.arith.arith_props import PROPS as ARITH
    from tb.deca.deca_props import PROPS as DECA
    from tb.duplex.duplex_props import PROPS as DUPLEX
    from tb.hermes.hermes_props import PROPS as HERMES
    from tb.l3.l3_props import PROPS as L3

    return [*ARITH, *DECA, *L3, *DUPLEX, *HERMES]
