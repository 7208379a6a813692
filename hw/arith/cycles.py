"""Pipeline depths of the shared FP arithmetic (``hw/arith``), in plain Python.

The RTL sizes its pipelines from these numbers and every cycle formula that adds them up (the units'
``cycles.py`` modules, the system model) imports them from here, so timing loads no Amaranth.
Each unit's module docstring says what its stages do.
"""

from __future__ import annotations

__all__ = ["FPADD", "FPEXP", "FPMAC", "FPMUL", "FPRECIP"]

FPMUL = 2  # unpack + significand product; normalise, round, pack
FPADD = 2  # unpack, order, align; add, normalise, round, pack
FPEXP = 3  # to fixed point x log2(e); 2**f lookup + interpolation; round, pack
FPRECIP = 3  # unpack + normalise; restoring division; round, pack
FPMAC = FPMUL + FPADD  # the product rounded to the accumulator format, then added
