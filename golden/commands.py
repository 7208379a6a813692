"""What every command-stream golden model shares: reading a transaction's items and consuming a flagged
transaction to its ``last`` item (golden.duplex.module_run, golden.hermes.gemv_run and act_run)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def _tuple_last(item: Any) -> bool:
    return bool(item[2])  # (op, data, last) command items


def take(items: Sequence, i: int, what: str = "items") -> Any:
    """``items[i]``, or the error a stream that ends inside a transaction gets."""
    if i >= len(items):
        raise ValueError(f"{what}: a transaction without a last item")
    return items[i]


def skip_to_last(items: Sequence, i: int, what: str = "items",
                 is_last: Callable[[Any], bool] = _tuple_last) -> int:
    """The index after the transaction's next ``last`` item, from ``items[i]`` on."""
    while not is_last(take(items, i, what)):
        i += 1
    return i + 1
