"""Hypothesis profiles: the default keeps `make test` quick; `make fuzz` uses --hypothesis-profile=fuzz."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=int(os.environ.get("MEMBOUND_EXAMPLES", "100")),
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=int(os.environ.get("MEMBOUND_FUZZ_EXAMPLES", "5000")),
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


def pytest_collection_modifyitems(config, items) -> None:
    """Longest first, so `pytest -n` never leaves one worker finishing a paper-size array alone: the
    paper-size testbenches (marker ``full``), then the other testbenches (``sim``), then the rest, each
    group in collection order (the same on every xdist worker)."""
    def rank(item) -> int:
        return 0 if item.get_closest_marker("full") else 1 if item.get_closest_marker("sim") else 2

    items.sort(key=rank)
