"""Seeded floating-point stimulus shared by the testbenches: edge cases and random bit patterns."""

from __future__ import annotations

import random

from golden.fp import FloatFormat, encode


def edge_values(fmt: FloatFormat) -> list[int]:
    """±0, smallest/largest subnormal and normal, ±1 and its neighbours, ±max, ±Inf, NaNs."""
    s, mb = fmt.sign_bit, fmt.man_bits
    one = encode(1.0, fmt)
    pos = [0, 1, (1 << mb) - 1, 1 << mb, one - 1, one, one + 1, fmt.max_bits - 1, fmt.max_bits]
    specials = [fmt.inf_bits, fmt.inf_bits | s, fmt.nan_bits, fmt.nan_bits | s, fmt.inf_bits | 1]
    return pos + [v | s for v in pos] + specials


def random_value(rng: random.Random, fmt: FloatFormat, exp_span: int | None = None) -> int:
    """Half uniform bit patterns (all classes at their natural rate), half finite values with a
    biased exponent within ``exp_span`` of 1.0 (ordinary magnitudes, where rounding matters most)."""
    if rng.random() < 0.5:
        return rng.getrandbits(fmt.width)
    span = exp_span if exp_span is not None else max(2, fmt.bias // 2)
    e = min(max(fmt.bias + rng.randint(-span, span), 0), fmt.emax_field - 1)
    return (rng.getrandbits(1) * fmt.sign_bit) | (e << fmt.man_bits) | rng.getrandbits(fmt.man_bits)


def near(rng: random.Random, bits: int, fmt: FloatFormat, max_shift: int) -> int:
    """A value whose exponent is within ``max_shift`` of ``bits``' (alignment, cancellation, ties)."""
    e = (bits >> fmt.man_bits) & fmt.emax_field
    e = min(max(e - rng.randint(0, max_shift), 0), fmt.emax_field - 1)
    return (rng.getrandbits(1) * fmt.sign_bit) | (e << fmt.man_bits) | rng.getrandbits(fmt.man_bits)
