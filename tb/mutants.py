"""Deliberately wrong golden models, to prove the testbenches bite (MEMBOUND_GOLDEN_MUTANT=name).

``rtz``: round toward zero instead of to nearest even. ``ftz``: subnormal results flushed to zero.
Both patch the one rounding routine the golden twins call; a testbench run against a mutant must fail.
"""

from __future__ import annotations

import golden.arith
from golden import fp

_round_pack = fp.round_pack


def _rtz(sign, sig, exp, fmt, rounding="rne", sticky=False):
    return _round_pack(sign, sig, exp, fmt, "rtz", sticky)


def _ftz(sign, sig, exp, fmt, rounding="rne", sticky=False):
    bits = _round_pack(sign, sig, exp, fmt, rounding, sticky)
    return (fmt.sign_bit if sign else 0) if fp.classify(bits, fmt) == "sub" else bits


MUTANTS = {"rtz": _rtz, "ftz": _ftz}


def apply(name: str) -> None:
    if name not in MUTANTS:
        raise ValueError(f"MEMBOUND_GOLDEN_MUTANT: {name!r} not allowed; allowed: {sorted(MUTANTS)}")
    golden.arith.round_pack = MUTANTS[name]
