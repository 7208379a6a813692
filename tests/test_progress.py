"""The serving progress hook's arithmetic: whole simulated seconds and requests per wall-clock second."""

from __future__ import annotations

import numpy as np
import pytest

from sysmodel.progress import SimProgress, serve_progress


class _Bar:
    """What the hook asks of a tqdm bar, recorded."""

    def __init__(self) -> None:
        self.n, self.postfix = 0, ""

    def update(self, k: int) -> None:
        self.n += k

    def set_postfix_str(self, s: str, refresh: bool = True) -> None:
        self.postfix = s


def test_bar_advances_per_whole_simulated_second_and_shows_requests_per_wall_second() -> None:
    wall = iter([100.0, 102.0, 105.0, 105.0])  # the start, then one reading per postfix written
    hook = SimProgress(_Bar(), clock=lambda: next(wall))
    hook(0, 0.4)  # under a second: nothing to show yet
    assert (hook.bar.n, hook.requests) == (0, 0)
    hook(3, 2.7)  # seconds 1 and 2 done; 3 requests in 2 wall seconds
    assert (hook.bar.n, hook.bar.postfix) == (2, "2 requests/s")
    hook(5, 1.9)  # another engine's clock, behind: requests count, the bar does not go back
    assert (hook.bar.n, hook.requests) == (2, 8)
    hook(2, 7.0)  # 10 requests in 5 wall seconds
    assert (hook.bar.n, hook.bar.postfix) == (7, "2 requests/s")
    assert hook.rate() == pytest.approx(10 / 5)


def test_bar_length_is_the_span_of_arrivals() -> None:
    assert serve_progress(np.array([0.0, 3.2, 10.5]), "x", False).bar.total == 11
    assert serve_progress(np.array([0.0, 0.0, np.inf]), "x", False).bar.total is None  # closed loop
