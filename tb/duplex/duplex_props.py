"""Duplex formal properties: the stream contract of every Duplex unit at its testbench (reduced) sizes."""

from __future__ import annotations

from tb.duplex.cases import SPECS
from tb.formal.contract import contract_spec

PROPS = [contract_spec(s) for s in SPECS]
