"""What every command-stream golden model shares: reading a transaction's items and consuming a flagged
transaction to its ``last`` item (golden.duplex.module_run, golden.hermes.gemv_run and act_run)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def _tuple_last(item: Any) -> bool:
    return bool(item[2])  # (op, data, last) command items


def take(items: Sequence, i: int, what: str = "items") -> Any:
    """``items[i]``, or the error a stream that ends inside a transaction gets."""
    if i >= len(items):
        raise ValueError(f"{what}: a transaction without a last item")
    return items[i]


def skip_to_last(items: Sequence, i: int, what: str = "items", is_last: Callable[[Any], bool] = _tuple_last) -> int:
    """The index after the transaction's next ``last`` item, from ``items[i]`` on."""
    while not is_last(take(items, i, what)):
        i += 1
    return i + 1


def pack_fields(fields: Mapping[str, int], **values: int) -> int:
    """A descriptor's bits from its field list (name -> width, LSB first: the order and packing of
    ``amaranth.lib.data.StructLayout(fields)``, which hw builds from the same dictionary)."""
    if set(values) != set(fields):
        raise ValueError(f"descriptor fields: got {sorted(values)}, need {list(fields)}")
    word, shift = 0, 0
    for name, width in fields.items():
        v = int(values[name])
        if not 0 <= v < 1 << width:
            raise ValueError(f"{name}: {v} not allowed; 0 to {(1 << width) - 1} ({width} bits)")
        word |= v << shift
        shift += width
    return word


def unpack_fields(fields: Mapping[str, int], word: int) -> tuple[int, ...]:
    """The field values of a descriptor word, in the field list's order (bits above the fields ignored)."""
    out, shift = [], 0
    for width in fields.values():
        out.append(word >> shift & ((1 << width) - 1))
        shift += width
    return tuple(out)


def flag_fields(flags: type[enum.IntFlag]) -> dict[str, int]:
    """An error-flag enum as a field list: one 1-bit field per flag, LSB first, named in lower case (hw
    builds its error ``StructLayout`` from it). The flags must be bits 0, 1, 2, ... in declaration order."""
    fields = {}
    for i, f in enumerate(flags):
        if f.value != 1 << i:
            raise ValueError(f"{flags.__name__}.{f.name}: {f.value} not allowed; flag {i} must be 1 << {i}")
        fields[str(f.name).lower()] = 1
    return fields
