"""Duplex formal properties: the stream contract of every Duplex unit at its testbench (reduced) sizes."""

from __future__ import annotations

from hw.duplex.cycles import UNIT_ACTIVATION
from tb.duplex.cases import SPECS
from tb.formal.contract import contract_spec

# the activation unit's contract closes by k-induction (~30 s); the others are bounded
PROPS = [contract_spec(s, mode="prove", timeout=120) if s.unit == UNIT_ACTIVATION else contract_spec(s) for s in SPECS]
