"""The one table of reproduced results the papers' reports print: paper value, model value, their ratio and,
past 10%, the named modelling difference behind the gap."""

from __future__ import annotations

import math

HEAD = ["| result | paper | model | model / paper | gap |", "| --- | ---: | ---: | ---: | --- |"]


def head(text: str) -> list[str]:
    """A paper-vs-model table's caption (what is compared, on what workload) and header."""
    from sysmodel.report import caption

    return [caption(text), *HEAD]


def gap(gaps: dict[str, str], name: str, ratio: float, within: str = "within 10%",
        unexplained: str = "unexplained") -> str:
    """``within`` for a ratio within 10% (or undefined), else the named gap, else ``unexplained``."""
    return within if abs(ratio - 1) <= 0.1 or not math.isfinite(ratio) else gaps.get(name, unexplained)


def row(gaps: dict[str, str], name: str, want: float, got: float, fmt: str = ".2f", **kw: str) -> str:
    ratio = got / want
    return f"| {name} | {want:{fmt}} | {got:{fmt}} | {ratio:.2f} | {gap(gaps, name, ratio, **kw)} |"


def area_slope(area: dict, small: str, big: str, size: dict[str, int]) -> float:
    """Cells per unit of size (MAC, lane, multiplier) between two synthesized points of the area snapshot."""
    return (area[big]["cells"]["total"] - area[small]["cells"]["total"]) / (size[big] - size[small])


def area_extrapolate(area: dict, small: str, big: str, size: dict[str, int], to: int) -> float:
    """Cells at size ``to`` on the line through two synthesized points (cells affine in the size)."""
    return area[small]["cells"]["total"] + area_slope(area, small, big, size) * (to - size[small])
