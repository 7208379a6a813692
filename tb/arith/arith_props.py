"""Arithmetic formal properties: the stream contract of every arithmetic unit at its testbench formats
(pipelines of latency 2-6: a depth of latency + II + 3 spans an item in and its result out). The 8-bit
equivalences against the golden rounding are exhaustive simulations (tb/formal/equiv.py)."""

from __future__ import annotations

from tb.arith.cases import SPECS
from tb.formal.contract import contract_spec

# the BF16 multiplier's contract closes by k-induction in seconds: `make test` runs it
PROPS = [
    contract_spec(s, mode="prove" if s.tag == "fpmul-fmt_inbf16" else "bmc", slow=s.tag != "fpmul-fmt_inbf16")
    for s in SPECS
]
