"""Arithmetic formal properties: the stream contract of every arithmetic unit at its testbench formats,
proved by k-induction at depth latency + II + 3 (pipelines of latency 2-6: the induction closes within an
item's passage, each in seconds). The 8-bit equivalences against the golden rounding are exhaustive
simulations (tb/formal/equiv.py). In a `make formal` run at 15d7c60 (2 workers, shared 2-core VM) each contract
took 5-11 s per task; the E5M2 equivalences 38 s (FpMul) and 37 s (FpAdd)."""

from __future__ import annotations

from tb.arith.cases import SPECS
from tb.formal.contract import contract_spec

FAST = "fpmul-fmt_inbf16"  # `make test` proves this one; `make formal` all

PROPS = [contract_spec(s, mode="prove", slow=s.tag != FAST, timeout=120) for s in SPECS]
