"""Shared pytest set-up: the Hypothesis profiles (the default keeps `make test` quick; `make fuzz` uses
--hypothesis-profile=fuzz), the order the testbenches run in under `pytest -n`, and the ``icarus_prints``
fixture."""

import os
import subprocess

import pytest
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


@pytest.hookimpl(trylast=True)  # after -m/-k deselection, which changes the shares' sizes
def pytest_collection_modifyitems(config, items) -> None:
    """The order `pytest -n` (the Makefile's ``--dist worksteal``) runs tests in: the testbenches (marker
    ``sim``) first, the paper-size ones (``full``, `make sim` only) first among them, so the long simulations
    start early on every worker. worksteal hands each of the W workers a contiguous share of the list
    and lets an idle worker take the unstarted tail of another's, so the testbenches are dealt to the shares
    in turn (in reverse collection order, which puts the reduced L3 rank, the longest in `make test`, first
    and the DECA fuzzer after the DECA PE test whose build it reuses) and each share ends with quick tests
    to balance. The order is the same on every worker, as xdist requires."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    sims = [it for it in reversed(items) if it.get_closest_marker("sim")]
    sims.sort(key=lambda it: 0 if it.get_closest_marker("full") else 1)
    rest = [it for it in items if not it.get_closest_marker("sim")]
    shares, left = [sims[j::workers] for j in range(workers)], len(items)
    for j, share in enumerate(shares):  # xdist's split: len(pending) // workers_remaining, in turn
        size = left // (workers - j)
        take = max(0, size - len(share))
        share += rest[:take]
        rest, left = rest[take:], left - len(share)
    shares[-1] += rest
    items[:] = [it for share in shares for it in share]


@pytest.fixture
def icarus_prints(tmp_path):
    """``run(name, verilog)``: compile ``verilog`` (a design and its ``bench`` module) with Icarus, return what
    the simulation prints."""

    def run(name: str, verilog: str) -> str:
        (tmp_path / f"{name}.v").write_text(verilog)
        subprocess.run(["iverilog", "-g2012", "-o", tmp_path / name, tmp_path / f"{name}.v"], check=True)
        return subprocess.run(["vvp", "-n", tmp_path / name], capture_output=True, text=True, check=True).stdout

    return run
