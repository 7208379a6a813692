"""Hypothesis profiles: the default keeps `make test` quick; `make fuzz` uses --hypothesis-profile=fuzz."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=int(os.environ.get("MEMBOUND_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("MEMBOUND_FUZZ_EXAMPLES", "5000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")


def pytest_collection_modifyitems(config, items) -> None:
    """The paper-size testbenches (marker ``full``, `make sim` only) first, so `pytest -n` never leaves one
    worker finishing a 4-minute array alone at the end; everything else in collection order (the same on
    every xdist worker). Ordering every testbench first made `make test` slower (8.5 vs 7.3 min on a fresh
    clone: its long hypothesis tests then ran last), so only ``full`` moves."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("full") else 1)
