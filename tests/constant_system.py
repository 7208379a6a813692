"""A system whose every stage takes the same time: the closed forms the serving tests check the engine against."""

import math
from dataclasses import dataclass

import numpy as np

from sysmodel.cost.models import StageShape
from sysmodel.systems import Area, Provenance


@dataclass
class ConstantSystem:
    """Every stage takes ``seconds`` and ``joules``: the closed forms the tests check the engine against."""

    seconds: float
    capacity: float = math.inf
    kv_bytes_per_token: float = 1.0
    name: str = "constant"
    joules: float = 0.0

    def kv_capacity(self) -> float:
        return self.capacity

    def stage_times(self, shape: StageShape) -> np.ndarray:
        return np.full(np.shape(shape.tokens), self.seconds, float)

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        return np.full(np.shape(shape.tokens), self.joules, float)

    def area(self) -> Area:
        return Area(0.0, "a test system")

    def hardware(self) -> str:
        return f"{self.seconds * 1e3:g} ms per stage"

    def provenance(self) -> Provenance:
        return Provenance()
