"""Hypothesis profiles: the default keeps `make test` quick; `make fuzz` uses --hypothesis-profile=fuzz."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=int(os.environ.get("MEMBOUND_EXAMPLES", "100")),
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=int(os.environ.get("MEMBOUND_FUZZ_EXAMPLES", "5000")),
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
