"""Pipeline depths of the shared FP arithmetic (``hw/arith``), in plain Python.

The RTL sizes its pipelines from these numbers and every cycle formula that adds them up (the units'
``cycles.py`` modules, the system model) imports them from here, so timing loads no Amaranth.
Each unit's module docstring says what its stages do.
"""

from __future__ import annotations

__all__ = [
    "FPADD",
    "FPEXP",
    "FPMAC",
    "FPMUL",
    "FPRECIP",
    "UNITS",
    "UNIT_ADDTREE",
    "UNIT_FPADD",
    "UNIT_FPEXP",
    "UNIT_FPMAC",
    "UNIT_FPMUL",
    "UNIT_FPRECIP",
    "UNIT_MAXTREE",
]

FPMUL = 2  # unpack + significand product; normalise, round, pack
FPADD = 2  # unpack, order, align; add, normalise, round, pack
FPEXP = 3  # to fixed point x log2(e); 2**f lookup + interpolation; round, pack
FPRECIP = 3  # unpack + normalise; restoring division; round, pack
FPMAC = FPMUL + FPADD  # the product rounded to the accumulator format, then added

# Characterization record keys (``unit`` in sysmodel/data/characterization.json): tb writes, sysmodel reads.
UNIT_FPMUL = "fpmul"
UNIT_FPADD = "fpadd"
UNIT_FPMAC = "fpmac"
UNIT_ADDTREE = "addtree"
UNIT_MAXTREE = "maxtree"
UNIT_FPEXP = "fpexp"
UNIT_FPRECIP = "fprecip"
UNITS = (UNIT_FPMUL, UNIT_FPADD, UNIT_FPMAC, UNIT_ADDTREE, UNIT_MAXTREE, UNIT_FPEXP, UNIT_FPRECIP)
