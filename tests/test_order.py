"""The order tests/conftest.py gives `pytest -n --dist worksteal`: every worker's share starts with its turn of
the testbenches (paper-size ones first) and the shares have the sizes xdist's worksteal scheduler cuts."""

from dataclasses import dataclass

import conftest
import pytest


@dataclass
class Item:
    name: str
    marks: tuple[str, ...] = ()

    def get_closest_marker(self, mark: str) -> bool | None:
        return True if mark in self.marks else None


@dataclass
class Config:
    workerinput: dict


def _items() -> list[Item]:
    plain = [Item(f"t{i}") for i in range(9)]
    sims = [Item(f"s{i}", ("sim",)) for i in range(4)] + [Item("full", ("sim", "full"))]
    return plain[:3] + sims[:2] + plain[3:] + sims[2:]


@pytest.mark.parametrize("workers", [2, 3])
def test_each_share_starts_with_its_testbenches(workers: int) -> None:
    items = _items()
    conftest.pytest_collection_modifyitems(Config({"workercount": workers}), items)
    assert sorted(i.name for i in items) == sorted(i.name for i in _items())  # nothing lost or repeated
    shares, left, at = [], len(items), 0
    for j in range(workers):  # xdist.scheduler.worksteal: len(pending) // workers still to serve, in turn
        size = left // (workers - j)
        shares.append(items[at : at + size])
        at, left = at + size, left - size
    sims = [[i.name for i in s if "sim" in i.marks] for s in shares]
    assert sims[0][0] == "full"  # the paper-size testbench first, then the rest in reverse collection order
    assert sorted(n for s in sims for n in s) == ["full", "s0", "s1", "s2", "s3"]
    for s, names in zip(shares, sims, strict=True):
        assert [i.name for i in s[: len(names)]] == names  # each share's testbenches come first
    assert max(map(len, sims)) - min(map(len, sims)) <= 1  # dealt in turn


def test_without_xdist_the_testbenches_come_first() -> None:
    items = _items()
    conftest.pytest_collection_modifyitems(object(), items)
    assert [i.name for i in items[:5]] == ["full", "s3", "s2", "s1", "s0"]
    assert [i.name for i in items[5:]] == [f"t{i}" for i in range(9)]
