"""The one table of reproduced results the papers' reports print: paper value, model value, their ratio and,
past 10%, the named modelling difference behind the gap."""

from __future__ import annotations

import math

HEAD = ["| result | paper | model | model / paper | gap |", "| --- | ---: | ---: | ---: | --- |"]


def head(text: str) -> list[str]:
    """A paper-vs-model table's caption (what is compared, on what workload) and header."""
    from sysmodel.report import caption

    return [caption(text), *HEAD]


def gap(
    gaps: dict[str, str], name: str, ratio: float, within: str = "within 10%", unexplained: str = "unexplained"
) -> str:
    """``within`` for a ratio within 10% (:func:`sysmodel.ledger.within_tolerance`) or undefined, else the
    named gap, else ``unexplained``."""
    from sysmodel.ledger import within_tolerance

    return within if within_tolerance(ratio) or not math.isfinite(ratio) else gaps.get(name, unexplained)


_KIND_NOTE = {
    "fit": "fit (a constant was fitted to this value)",
    "input": "input (taken as given)",
    "identity": "identity (equal by construction)",
}


def claim_row(gaps: dict[str, str], name: str, r, fmt: str = ".2f") -> str:
    """A ledger row (:class:`sysmodel.ledger.Row`) as a paper-vs-model table row. Fits, inputs and identities
    say so in the gap column, never "within 10%"; a band shows whether the paper lies inside it."""
    stated = math.isnan(r.paper_value)  # a direction the paper states without a number: no ratio to print
    text = _KIND_NOTE.get(r.kind) or (
        f"wrong direction: {gaps.get(name, 'unexplained')}"
        if r.direction_agrees == "no"
        else "direction right"
        if stated
        else gap(gaps, name, r.ratio)
    )
    if stated:
        return f"| {name} | {r.direction} | {r.model_value:{fmt}} | - | {text} |"
    if r.in_band:
        inside = "inside" if r.in_band == "yes" else "outside"
        text += f"; band [{r.band_low:{fmt}}, {r.band_high:{fmt}}]: paper {inside}"
    return f"| {name} | {r.paper_value:{fmt}} | {r.model_value:{fmt}} | {r.ratio:.2f} | {text} |"


def kv_policy_band(whose: str) -> list[str]:
    """The paragraph before a table of headlines computed under both KV policies (the paper states ``whose``
    KV policy nowhere), each row's band spanning the two."""
    return [
        f"The paper does not state {whose}: each headline is computed under the default (paged, vLLM's) and "
        "under the reserve policy, the band the two span.",
        "",
    ]


def gpu_profile_band(default: str, alternatives: tuple[str, ...]) -> list[str]:
    """The paragraph before a table whose claims are banded by the GPU efficiency profile, which the paper does
    not state: ``default``, the profile its own method implies and why; ``alternatives``, the other profiles."""
    return [
        f"The paper does not state its GPUs' achieved efficiency: the default profile is {default}; the claims "
        f"it moves are computed under {' and '.join(alternatives)} too (sysmodel/cost/stage.py PROFILES), each band "
        "spanning every alternative of every unstated setting.",
        "",
    ]


def area_slope(area: dict, small: str, big: str, size: dict[str, int]) -> float:
    """Cells per unit of size (MAC, lane, multiplier) between two synthesized points of the area snapshot."""
    return (area[big]["cells"]["total"] - area[small]["cells"]["total"]) / (size[big] - size[small])


def area_extrapolate(area: dict, small: str, big: str, size: dict[str, int], to: int) -> float:
    """Cells at size ``to`` on the line through two synthesized points (cells affine in the size)."""
    return area[small]["cells"]["total"] + area_slope(area, small, big, size) * (to - size[small])
