"""The validation ledger: every number the five papers state that the kit computes, with its model value, ratio,
kind and direction, in one table (``ledger.csv`` and ``ledger.parquet`` beside the report; the committed copy
``sysmodel/data/ledger.csv`` is what ``tests/test_ledger.py`` checks).

* A :class:`Claim` is a paper's number with where it stands (section, table or figure — for a value read off a
  plot's axis, the reading is said), what it measures, on what workload, and its **kind**: ``prediction`` (the
  model computes it from other inputs), ``fit`` (a constant was fitted to this very number), ``input`` (the
  model takes it, or the facts that fix it, as given — shown as a check, never as a reproduction) or
  ``identity`` (equal by construction: zero where the mechanism is absent, an input re-emitted, arithmetic of
  the stated organisation — it checks the kit's bookkeeping, it predicts nothing). A claim that
  compares two systems (``ratio``: A over B) also states a **direction** (A beats B when above 1).
  Claims are floats, so a paper's module keeps using them as numbers; each lives once, in its ``paper.py``.
* :func:`evaluate` pairs a claim with the model's value and, for a prediction outside [0.9, 1.1] or pointing the
  wrong way, the named cause (the paper's ``GAPS``). Each paper's ``claims(ctx)``
  (``sysmodel/designs/<paper>/claims.py``)
  returns its rows, computed once; the report renders them (``sysmodel.report.results.claim_row``) and writes them here.
* :func:`summary` gives, per paper: rows, predictions, the share of predictions within 10%, the median
  |log ratio|, directions right of stated, fits, inputs and identities. Only predictions count as reproduced.
  (The report renders it; this module imports no presentation code.)
* A prediction whose model value equals the paper's to 4 significant digits must say why it is one
  (``note``): ``tests/test_ledger.py`` flags it otherwise, since such agreement usually means the value went in.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

KINDS = ("prediction", "fit", "input", "identity")
TOLERANCE = 0.1  # a prediction "within 10%": model / paper in [0.9, 1.1]
MOVES = 0.05  # issue 53 item 4: an unstated setting is banded where an alternative moves the claim by more than 5%
COMMITTED = Path(__file__).parent / "data" / "ledger.csv"


class Claim(float):
    """A paper's number (a float) with its provenance: paper, where, quantity, workload, kind, ratio."""

    paper: str
    where: str
    quantity: str
    workload: str
    kind: str
    ratio: bool
    above: bool
    note: str

    def __new__(
        cls,
        value: float,
        paper: str,
        where: str,
        quantity: str,
        workload: str = "",
        kind: str = "prediction",
        ratio: bool = False,
        above: bool | None = None,
        note: str = "",
    ) -> Claim:
        """``above``: for a direction the paper states without a number (``value`` NaN, ``ratio`` true), whether
        A over B is above 1; ``note``: why a prediction that lands on the paper's value is still a prediction."""
        if kind not in KINDS:
            raise ValueError(f"kind: {kind!r} not allowed; allowed: {', '.join(KINDS)}")
        c = super().__new__(cls, value)
        c.paper, c.where, c.quantity, c.workload, c.kind, c.ratio = paper, where, quantity, workload, kind, ratio
        c.above = value > 1 if above is None else above
        c.note = note
        return c

    def __reduce__(self):  # pickles (and so crosses process pools) as the claim it is
        return (
            Claim,
            (
                float(self),
                self.paper,
                self.where,
                self.quantity,
                self.workload,
                self.kind,
                self.ratio,
                self.above,
                self.note,
            ),
        )


def claims(paper: str, where: str, workload: str = "", kind: str = "prediction", ratio: bool = False):
    """A maker of one paper section's claims: ``c = claims("hermes", "§V-B"); c(13.75, "tokens/s ...")``."""

    def make(value: float, quantity: str, **kw) -> Claim:
        return Claim(
            value,
            paper,
            kw.pop("where", where),
            quantity,
            kw.pop("workload", workload),
            kw.pop("kind", kind),
            kw.pop("ratio", ratio),
            kw.pop("above", None),
            kw.pop("note", ""),
        )

    return make


@dataclass(frozen=True)
class Row:
    paper: str
    where: str
    quantity: str
    workload: str
    paper_value: float
    model_value: float
    ratio: float
    kind: str
    direction: str  # "A over B above 1" for a ratio claim; empty otherwise
    direction_agrees: str  # "yes", "no", or "" where no direction is stated
    within: str  # "yes" / "no" for predictions, "" for fits and inputs
    cause: str  # for a prediction outside [0.9, 1.1] or the wrong way: the named modelling difference
    note: str = ""  # the claim's note (why an exact agreement is still a prediction)
    # Where the paper leaves a setting unstated that moves the claim (a baseline's KV policy, ...): the model's
    # value at each documented alternative too, as [band_low, band_high] around the point, and whether the
    # paper's value lies inside it; NaN and "" where no such setting was varied
    band_low: float = math.nan
    band_high: float = math.nan
    in_band: str = ""


@dataclass(frozen=True)
class Statement:
    """One quantitative statement of a paper as its text makes it (a number with a unit, "X times", "up to",
    "on average", "similar", "A beats B", "grows with", "every", "at least"), from each paper's catalogue
    (``sysmodel/designs/<paper>/claims.py``: ``STATEMENTS``, in the paper's order).

    ``where``: section, figure or table, exactly; ``text``: the statement, quoted or closely paraphrased;
    ``claims``: regular expressions over the ledger's ``quantity`` column (the paper's rows they match are
    its claims); a statement the kit does not compute has none and names ``reason`` instead (the input the
    paper does not give, the mechanism the kit does not model)."""

    where: str
    text: str
    claims: tuple[str, ...] = ()
    reason: str = ""

    def __post_init__(self) -> None:
        if bool(self.claims) == bool(self.reason):
            raise ValueError(f"statement {self.where}: {self.text!r}: give ledger claims or a reason, exactly one")

    def matches(self, quantity: str) -> bool:
        return any(re.fullmatch(c, quantity) for c in self.claims)


def claim(where: str, text: str, *quantities: str) -> Statement:
    """A statement the ledger computes: ``quantities`` are regexes over its rows' quantity."""
    return Statement(where, text, tuple(quantities))


def not_computed(where: str, text: str, reason: str) -> Statement:
    """A statement the kit does not compute, with why."""
    return Statement(where, text, reason=reason)


def catalogue(paper: str) -> tuple[Statement, ...]:
    """The paper's statement list (``sysmodel/designs/<paper>/claims.py``), empty where none is written yet."""
    import importlib

    try:
        return importlib.import_module(f"sysmodel.designs.{paper}.claims").STATEMENTS
    except ModuleNotFoundError:
        return ()


def coverage(paper: str) -> dict[str, int]:
    """The paper's catalogue in counts: statements, those the ledger computes, those it does not."""
    st = catalogue(paper)
    return {
        "statements": len(st),
        "claimed": sum(bool(x.claims) for x in st),
        "not_computed": sum(bool(x.reason) for x in st),
    }


def _direction(c: Claim, model: float) -> tuple[str, str]:
    if not c.ratio or not math.isfinite(model):
        return "", ""
    stated = "above 1" if c.above else "below 1"
    return stated, "yes" if (model > 1) == c.above else "no"


def within_tolerance(ratio: float) -> bool:
    """A model / paper ratio within :data:`TOLERANCE` — the one test every report's "within 10%" uses."""
    return math.isfinite(ratio) and abs(ratio - 1) <= TOLERANCE + 1e-12


def evaluate(
    c: Claim, model: float, cause: str = "", kind: str | None = None, band: tuple[float, ...] | None = None
) -> Row:
    """A claim with the model's value, as a ledger row; ``kind`` overrides the claim's (a cell a constant was
    fitted to); ``cause``: the named reason a prediction misses (ignored, and left empty, where it does not);
    ``band``: the model's values under the unstated setting's documented alternatives (the point joins them).
    Each paper's ``claims(ctx)`` (``sysmodel/designs/<paper>/claims.py``) returns its rows made here; the report and
    the ledger both render from them."""
    if not isinstance(c, Claim):
        raise TypeError(f"ledger: {c!r} is a bare number; paper values are Claims in the paper's paper.py")
    model = float(model)
    kind = kind or c.kind
    ratio = model / float(c) if float(c) else (1.0 if model == 0 else math.inf)
    direction, agrees = _direction(c, model)
    ok = within_tolerance(ratio)
    numeric = not math.isnan(float(c))  # a direction the paper states without a number has no ratio to meet
    within = ("yes" if ok else "no") if kind == "prediction" and numeric else ""
    missed = kind == "prediction" and ((numeric and not ok) or agrees == "no")
    return Row(
        c.paper,
        c.where,
        c.quantity,
        c.workload,
        float(c),
        model,
        ratio,
        kind,
        direction,
        agrees,
        within,
        (cause or "unexplained") if missed else "",
        c.note,
        *_band(c, model, band),
    )


def find(rs: list[Row], quantity: str, workload: str | None = None) -> Row:
    """The row of ``quantity`` (and ``workload``, where a quantity repeats) among a paper's claims."""
    hits = [r for r in rs if r.quantity == quantity and workload in (None, r.workload)]
    if len(hits) != 1:
        raise KeyError(f"ledger: {len(hits)} rows of quantity {quantity!r} (workload {workload!r}); expected one")
    return hits[0]


def moved(model: float, alternatives: tuple[float, ...]) -> tuple[float, ...] | None:
    """``alternatives`` (a claim's values under an unstated setting's documented alternatives) when one of them moves
    ``model`` by more than :data:`MOVES`, the band :func:`evaluate` then takes; None where none does."""
    return alternatives if any(abs(a / model - 1) > MOVES for a in alternatives if model) else None


def _band(c: Claim, model: float, alternatives: tuple[float, ...] | None) -> tuple[float, float, str]:
    """[low, high] over the point and its alternatives, and whether the paper lies inside: its value, or for a
    direction it states without a number, a value on the stated side of 1."""
    paper = float(c)
    if not alternatives or (math.isnan(paper) and not c.ratio):
        return math.nan, math.nan, ""
    values = [model, *map(float, alternatives)]
    lo, hi = min(values), max(values)
    inside = (hi > 1 if c.above else lo < 1) if math.isnan(paper) else lo <= paper <= hi
    return lo, hi, "yes" if inside else "no"


def summary(rs: list[Row]) -> dict:
    pred = [r for r in rs if r.kind == "prediction"]
    logs = [abs(math.log(r.ratio)) for r in pred if r.ratio > 0 and math.isfinite(r.ratio)]
    directions = [r for r in rs if r.direction]
    # the paper's number inside the band; a direction's band (some value on the stated side) is in the rows only,
    # since a default already on that side would count as inside by itself
    banded = [r for r in pred if r.in_band and not math.isnan(r.paper_value)]
    return {
        "rows": len(rs),
        "predictions": len(pred),
        "within": sum(r.within == "yes" for r in pred),
        "median_abs_log": float(np.median(logs)) if logs else math.nan,
        "directions_right": sum(r.direction_agrees == "yes" for r in directions),
        "directions": len(directions),
        "fits": sum(r.kind == "fit" for r in rs),
        "inputs": sum(r.kind == "input" for r in rs),
        "identities": sum(r.kind == "identity" for r in rs),
        "banded": len(banded),
        "in_band": sum(r.in_band == "yes" for r in banded),
        "median_band": float(np.median(widths))
        if (widths := [math.log(r.band_high / r.band_low) for r in banded if r.band_low > 0])
        else math.nan,
    }


def write(rs: list[Row], out: Path) -> list[Path]:
    """``ledger.csv`` and ``ledger.parquet`` in ``out`` (atomically)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sysmodel.outputs import atomic

    names = [f.name for f in fields(Row)]
    paths = [out / "ledger.csv", out / "ledger.parquet"]
    with atomic(paths[0]) as tmp, tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=names)
        w.writeheader()
        w.writerows(_formatted(r) for r in rs)
    with atomic(paths[1]) as tmp:
        pq.write_table(pa.Table.from_pylist([asdict(r) for r in rs]), tmp)
    return paths


def write_committed(rs: list[Row], path: Path = COMMITTED) -> Path:
    """The committed copy ``tests/test_ledger.py`` reads (CSV only, rows in report order)."""
    from sysmodel.outputs import atomic

    with atomic(path) as tmp, tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[f.name for f in fields(Row)])
        w.writeheader()
        w.writerows(_formatted(r) for r in rs)
    return path


def _formatted(r: Row) -> dict:
    d = asdict(r)
    for k in ("paper_value", "model_value", "ratio", "band_low", "band_high"):
        d[k] = f"{d[k]:.6g}"
    return d


def load(path: Path = COMMITTED) -> list[dict]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))
