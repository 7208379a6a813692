"""The serving simulator's public names, gathered from the modules that hold them: requests and traces
(:mod:`sysmodel.engines.workload`), the engine and its event loop (:mod:`sysmodel.engines.engine`), the
scheduler policies (:mod:`sysmodel.engines.scheduling`) and what a run measured
(:mod:`sysmodel.engines.metrics`). Replicas behind a router and pipeline stages:
:mod:`sysmodel.engines.replicas`; a run's plots: :mod:`sysmodel.report.plots`."""

from sysmodel.engines.engine import DEFAULT_SCHEDULER, MAX_STRETCH, OVERSIZE, Engine, qps_sweep, simulate
from sysmodel.engines.metrics import CDF_POINTS, Result, tbt_cdf
from sysmodel.engines.workload import (
    GAUSSIAN_STD,
    L3_TRACES,
    TRACE_CAP,
    TRACE_COLUMNS,
    Trace,
    gaussian_lengths,
    load_trace,
    lognormal_lengths,
    make_trace,
    poisson_arrivals,
)

__all__ = [
    "CDF_POINTS",
    "DEFAULT_SCHEDULER",
    "GAUSSIAN_STD",
    "L3_TRACES",
    "MAX_STRETCH",
    "OVERSIZE",
    "TRACE_CAP",
    "TRACE_COLUMNS",
    "Engine",
    "Result",
    "Trace",
    "gaussian_lengths",
    "load_trace",
    "lognormal_lengths",
    "make_trace",
    "poisson_arrivals",
    "qps_sweep",
    "simulate",
    "tbt_cdf",
]
