"""The serving simulator's public names, gathered from the modules that hold them: requests and traces
(:mod:`sysmodel.workload`), the engine and its event loop (:mod:`sysmodel.engine`), the scheduler policies
(:mod:`sysmodel.scheduling`), what a run measured (:mod:`sysmodel.metrics`) and its plots
(:mod:`sysmodel.plots`). Replicas behind a router and pipeline stages: :mod:`sysmodel.replicas`."""

from sysmodel.engine import DEFAULT_SCHEDULER, MAX_STRETCH, OVERSIZE, Engine, qps_sweep, simulate
from sysmodel.metrics import CDF_POINTS, Result, tbt_cdf
from sysmodel.plots import plot_kv, plot_qps, plot_tbt_cdf
from sysmodel.workload import (
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
    "plot_kv",
    "plot_qps",
    "plot_tbt_cdf",
    "poisson_arrivals",
    "qps_sweep",
    "simulate",
    "tbt_cdf",
]
