"""Hermes NDP core units (Hermes §IV-A1): the bit-serial multiplier and the GEMV unit."""
