"""The value type the cost functions return: a scalar, or an array of them (one per batch size or KV length
of a vectorised evaluation). Arguments stay ``numpy.typing.ArrayLike``; results are this, so arithmetic on
them type-checks."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np

Num: TypeAlias = float | np.ndarray
