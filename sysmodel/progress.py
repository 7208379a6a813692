"""The progress bar long runs show (sweeps, serving): on a terminal only, silent when stderr is not a TTY."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

import numpy as np


def progress(total: int | None, desc: str, enabled: bool = True, unit: str = "it"):
    from tqdm import tqdm

    return tqdm(
        total=total, desc=desc, unit=unit, disable=not (enabled and sys.stderr.isatty()), file=sys.stderr, leave=False
    )


class SimProgress:
    """A serving run's bar: it advances one step per whole simulated second of the trace and shows the requests
    finished per wall-clock second. Called by the engines (``done`` requests finished by simulated time ``t``);
    ``clock``: the wall clock (a test passes its own)."""

    def __init__(self, bar, clock: Callable[[], float] = time.perf_counter) -> None:
        self.bar, self.clock = bar, clock
        self.start = clock()
        self.seconds = 0  # whole simulated seconds the bar has advanced
        self.requests = 0  # requests finished

    def __call__(self, done: int, t: float) -> None:
        self.requests += done
        ahead = int(t) - self.seconds  # engines advance together: a clock behind the furthest one adds nothing
        if ahead > 0:
            self.seconds += ahead
            self.bar.update(ahead)
            self.bar.set_postfix_str(f"{self.rate():,.0f} requests/s", refresh=False)

    def rate(self) -> float:
        """Requests finished per wall-clock second so far (0 before any wall time has passed)."""
        wall = self.clock() - self.start
        return self.requests / wall if wall > 0 else 0.0

    def close(self) -> None:
        self.bar.close()


def serve_progress(arrival: np.ndarray, desc: str, enabled: bool) -> SimProgress:
    """The bar of a serving run over ``arrival`` (seconds): its length is the trace's span of arrivals, whole
    seconds (a closed loop's arrivals are not known ahead: no length); the run's drain goes past it."""
    known = arrival[np.isfinite(arrival)]
    span = math.ceil(float(known.max())) if len(known) and known.max() > 0 else None
    return SimProgress(progress(span, desc, enabled, unit="sim s"))
