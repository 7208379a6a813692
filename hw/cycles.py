"""The documented cycle model every unit publishes and every testbench asserts."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class CycleModel:
    """``latency``: cycles from an input's acceptance to its result's acceptance with a ready sink;
    ``ii``: cycles between accepted inputs at full throughput (initiation interval); a mean for units
    whose timing depends on the data (DECA tiles)."""

    latency: int
    ii: float = 1

    def cycles(self, n: int) -> int:
        """Cycles from the first input accepted to the last result accepted, for ``n`` back-to-back items."""
        return self.latency + (n - 1) * self.ii

    def as_dict(self) -> dict:
        return asdict(self)
