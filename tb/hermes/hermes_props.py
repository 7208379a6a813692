"""Hermes formal properties: the stream contract of every Hermes unit at its testbench (reduced) sizes."""

from __future__ import annotations

from tb.formal.contract import contract_spec
from tb.hermes.cases import SPECS

PROPS = [contract_spec(s) for s in SPECS]
