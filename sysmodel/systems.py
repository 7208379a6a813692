"""The System protocol and the registry of systems: everything the serving engine, `membound compare`,
`membound serve` and the report know of a design.

A design provides (docs/guide.md, "Adding a design"; ``examples/hbm_gemv.py`` is a whole one):

1. a class satisfying :class:`System` — ``name``, KV bytes per token and capacity, ``stage_times`` (seconds
   of a vector of stages, each positive and finite), ``energy`` (joules of the same stages, on
   ``sysmodel.cost.energy``'s one basis), ``area`` (silicon it adds, with the source), ``hardware`` (a
   one-line description) and ``provenance``;
   a configuration that cannot run raises ``sysmodel.cost.stage.Infeasible`` (compare shows it as not
   feasible; any other error stops the run);
2. a module that calls :func:`register` with a name, a one-line description, its parameters
   (:class:`Param`, the paper's values as defaults) and the characterization records it reads. In the
   tree that is ``sysmodel/designs/<design>/system.py`` (or, for the shared baselines,
   ``sysmodel/designs/baselines.py``), which :func:`entries` discovers by path, so no code outside the design
   names it; out of the tree, any importable module named by an installed package's entry point in the
   group ``membound.systems`` or in the ``MEMBOUND_SYSTEMS`` environment variable (comma-separated).
   Registration modules import their model lazily (inside the factory), so listing the systems does not
   load Amaranth or SciPy.

Optional members a system may have: ``max_batch`` (a hardware limit on requests per stage: the engine
never batches more), ``prefill_budget(decode_reqs, decode_ctx)`` (the system's own chunked-prefill
scheduler), ``pure_stage_times = True`` (its ``stage_times`` is an elementwise function of the shape
alone, no state: the serving engine then prices each distinct stage once), ``host_link_bw`` (bytes/s of the
link ``--preempt swap`` moves KV over; default PCIe 4 x16), and for ``--pp``: ``resident_weight_bytes`` (the
weights sharing the KV cache's memory), ``cfg`` (its ``ModelConfig``) and ``device.link`` (the default
inter-stage link).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect
import math
import numbers
import os
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sysmodel.cost.models import StageShape

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Area:
    """Silicon a system adds over the parts it is built from (mm²), and where the number comes from."""

    mm2: float
    source: str


@dataclass
class Provenance:
    """What fed a system's numbers: characterization records (with hashes of the hardware and golden
    sources they were measured on), constants with their sources, and which inputs are fits."""

    records: list[dict] = field(default_factory=list)
    constants: list[dict] = field(default_factory=list)
    fits: list[str] = field(default_factory=list)

    def record(self, unit: str, hw: str, golden: str, **params) -> None:
        """Add the snapshot's record of ``unit`` at ``params`` with hashes of ``hw`` and ``golden`` (repo
        paths of the unit's Amaranth file and its golden model)."""
        from sysmodel.cost import characterization

        rec = characterization.lookup(unit, **params)
        self.records.append(
            {
                "unit": unit,
                "params": rec.params,
                "latency": rec.latency,
                "ii": rec.ii,
                "cycles_per_transaction": rec.cycles_per_transaction,
                "simulator": rec.simulator,
                "date": rec.date,
                "hw": hw,
                "hw_sha256": file_hash(hw),
                "golden": golden,
                "golden_sha256": file_hash(golden),
            }
        )

    def cycle_model(self, name: str, hw: str, note: str) -> None:
        """A unit whose documented cycle model (asserted cycle-exact by its testbench) is used directly."""
        self.records.append({"unit": name, "cycle_model": note, "hw": hw, "hw_sha256": file_hash(hw)})

    def constant(self, name: str, value: Any, source: str) -> None:
        self.constants.append({"name": name, "value": value, "source": source})

    def to_dict(self) -> dict:
        return {"records": self.records, "constants": self.constants, "fits": self.fits}


def file_hash(repo_path: str) -> str:
    return hashlib.sha256((ROOT / repo_path).read_bytes()).hexdigest()[:16]


@runtime_checkable
class System(Protocol):
    """What the serving engine and the comparison need of a system (module docstring)."""

    name: str

    @property
    def kv_bytes_per_token(self) -> float: ...

    def kv_capacity(self) -> float: ...

    def stage_times(self, shape: StageShape) -> np.ndarray: ...

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray: ...

    def area(self) -> Area: ...

    def hardware(self) -> str: ...

    def provenance(self) -> Provenance: ...


MEMBERS = (*System.__annotations__, *(m for m in vars(System) if not m.startswith("_")))  # what build checks

KINDS = {bool: "true or false", int: "a whole number", float: "a number"}  # a parameter's type, in words


@dataclass(frozen=True)
class Param:
    """A typed, checked value — a design parameter `--set name=value` may change, or a sweep grid's key:
    its type, default, meaning and allowed values (choices, possibly computed, or a range)."""

    name: str
    default: Any
    help: str
    choices: tuple | Callable[[], Iterable] = ()
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False  # the minimum itself not allowed (a bandwidth, a density)
    required: bool = False  # a sweep grid must list it
    config_path: bool = False  # a path to an existing .json file allowed beside the choices (a model's config)
    kind: type | None = None  # its type when the default gives none (None: no default)

    def value_type(self) -> type:
        return self.kind or type(self.default)

    def options(self) -> tuple:
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def parse(self, text: Any) -> Any:
        """``text`` (a string from the command line, or a value) as this parameter's type, validated."""
        kind = self.value_type()
        try:
            if kind is bool:
                if str(text).lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                v: Any = str(text).lower() in ("true", "1", "yes")
            elif kind is int:
                f = float(text)
                if f != int(f):
                    raise ValueError
                v = int(f)
            else:
                v = kind(text)
        except (TypeError, ValueError):
            raise ValueError(f"{self.name}: {text!r} is not {KINDS.get(kind, kind.__name__)}{self.allowed()}") from None
        if isinstance(v, float) and not np.isfinite(v):
            raise ValueError(f"{self.name}: {text!r} not allowed{self.allowed()}")
        if (self.choices and v not in self.options()) or not self._in_range(v):
            raise ValueError(f"{self.name}: {text!r} not allowed{self.allowed()}")
        return v

    def check(self, v: Any, where: str) -> None:
        """An already typed ``v`` (a TOML or YAML value) of exactly this parameter's type, allowed; the error
        names ``where`` (e.g. ``grid.batch``) and :meth:`describe`."""
        kind = self.value_type()
        ok = (
            isinstance(v, str)
            if kind is str
            else isinstance(v, int | float)
            and not isinstance(v, bool)
            and math.isfinite(v)
            and (kind is not int or v == int(v))
        )
        if ok and self.choices:
            ok = v in self.options() or (self.config_path and v.endswith(".json") and Path(v).is_file())
        if not (ok and (kind is str or self._in_range(v))):
            raise ValueError(f"{where}: {v!r} not allowed; {self.describe()}")

    def _in_range(self, v: Any) -> bool:
        lo_ok = self.minimum is None or (v > self.minimum if self.open_minimum else v >= self.minimum)
        return lo_ok and (self.maximum is None or v <= self.maximum)

    def _bounds(self) -> str:
        lo = "" if self.minimum is None else f"{'>' if self.open_minimum else '>='} {self.minimum:g}"
        hi = "" if self.maximum is None else f"<= {self.maximum:g}"
        return " and ".join(x for x in (lo, hi) if x)

    def allowed(self) -> str:
        if self.choices:
            return f"; allowed: {', '.join(map(str, self.options()))}"
        return f"; allowed: {self._bounds()}" if self._bounds() else ""

    def describe(self) -> str:
        """The allowed values in words: 'one of a, b' or 'a whole number >= 1'."""
        if self.choices:
            path = " or the path of a config.json" if self.config_path else ""
            return f"one of {', '.join(map(str, self.options()))}{path}"
        return f"{KINDS.get(self.value_type(), self.value_type().__name__)} {self._bounds()}".strip()


@dataclass(frozen=True)
class Entry:
    """A registered system: ``factory(model, **params)`` builds it."""

    name: str
    description: str
    factory: Callable[..., System]
    params: tuple[Param, ...] = ()
    records: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()  # (unit, params) it reads

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise ValueError(f"--set {name}: system {self.name} has no such parameter; its parameters: {known}")

    def settings(self, pairs: list[str] | dict) -> dict[str, Any]:
        """``key=value`` strings (or a dict) validated against the parameters; a key set twice (``--set
        devices=2 --devices 4``) is refused, not silently the last."""
        items = list(pairs.items()) if isinstance(pairs, dict) else [_split(s) for s in pairs]
        keys = [k for k, _ in items]
        twice = [k for i, k in enumerate(keys) if k in keys[:i]]
        if twice:
            given = ", ".join(f"{k}={v}" for k, v in items if k == twice[0])
            raise ValueError(f"--set {twice[0]}: given twice ({given})")
        return {k: self.param(k).parse(v) for k, v in items}

    def build(self, model: str, settings: list[str] | dict | None = None) -> System:
        values = {p.name: p.default for p in self.params}
        values.update(self.settings(settings or {}))
        system = self.factory(model, **values)
        missing = [m for m in MEMBERS if not hasattr(system, m)]
        if missing:  # a plug-in's mistake, said before the engine meets it halfway through a run
            raise ValueError(
                f"system {self.name}: its factory built a {type(system).__name__}, which lacks "
                f"{', '.join(missing)}; a System has {', '.join(MEMBERS)} (docs/guide.md, 'Adding a design')"
            )
        per_token = system.kv_bytes_per_token
        if not (isinstance(per_token, numbers.Real) and math.isfinite(per_token) and per_token > 0):
            raise ValueError(f"system {self.name}: kv_bytes_per_token is {per_token!r}; a positive, finite number")
        return system


def _split(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--set: {text!r} is not key=value")
    return key.strip(), value.strip()


_REGISTRY: dict[str, Entry] = {}
_DISCOVERED = False
PLUGIN_GROUP = "membound.systems"  # entry points of installed packages whose modules register systems
PLUGIN_ENV = "MEMBOUND_SYSTEMS"  # comma-separated importable modules that register systems (no install needed)


def register(
    name: str, description: str, params: tuple[Param, ...] = (), records: tuple[tuple[str, dict], ...] = ()
) -> Callable:
    """Decorator: register ``factory(model, **params) -> System`` under ``name``."""

    def wrap(factory: Callable[..., System]) -> Callable[..., System]:
        try:  # the factory takes what build passes it: said where it is registered, not when first built
            inspect.signature(factory).bind("model", **{p.name: p.default for p in params})
        except TypeError as e:
            takes, where = ", ".join(["model", *(p.name for p in params)]), f"{factory.__module__}.{factory.__name__}"
            raise ValueError(f"system {name}: its factory {where} must take ({takes}): {e}") from None
        if name in _REGISTRY and _REGISTRY[name].factory is not factory:
            first = _REGISTRY[name].factory.__module__
            raise ValueError(f"system: {name!r} registered twice ({first}, then {factory.__module__}); rename one")
        recs = tuple((u, tuple(sorted(p.items()))) for u, p in records)
        _REGISTRY[name] = Entry(name, description, factory, tuple(params), recs)
        return factory

    return wrap


def entries() -> dict[str, Entry]:
    """Every registered system, the shared baselines first, then the designs' packages in name order."""
    global _DISCOVERED
    if not _DISCOVERED:
        importlib.import_module("sysmodel.designs.baselines")
        designs = [str(Path(__file__).parent / "designs")]  # found by path: the registry sits below the designs
        for mod in sorted(m.name for m in pkgutil.iter_modules(designs) if m.ispkg):
            try:
                importlib.import_module(f"sysmodel.designs.{mod}.system")
            except ModuleNotFoundError as e:
                if e.name != f"sysmodel.designs.{mod}.system":
                    raise
        _plugins()
        _DISCOVERED = True
    return dict(_REGISTRY)


def _plugins() -> None:
    """Import the out-of-tree registration modules: entry points in :data:`PLUGIN_GROUP`, then the modules
    :data:`PLUGIN_ENV` names; one that cannot be found, or imports what is not installed, is an error naming
    where it was named."""
    eps = importlib.metadata.entry_points(group=PLUGIN_GROUP)
    named = [(f"entry point {ep.name} = {ep.value!r} ({PLUGIN_GROUP})", ep.module) for ep in eps]
    named += [(PLUGIN_ENV, m) for m in filter(None, (m.strip() for m in os.environ.get(PLUGIN_ENV, "").split(",")))]
    for where, mod in named:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            why = "on the path (PYTHONPATH: its directory)" if e.name == mod else f"(imported by {mod}) installed"
            raise ValueError(f"{where}: no module {e.name!r} {why}") from None


def modules() -> tuple[str, ...]:
    """The modules that register systems (what :func:`entries` imports by name, unseen by import graphs)."""
    entries()
    return tuple(sorted({e.factory.__module__ for e in _REGISTRY.values()}))


def get(name: str) -> Entry:
    es = entries()
    if name not in es:
        raise ValueError(f"system: unknown {name!r}; registered: {', '.join(es)}")
    return es[name]


def build(name: str, model: str, settings: list[str] | dict | None = None) -> System:
    """The system ``name`` for ``model`` with its defaults overridden by ``settings`` (``key=value``)."""
    return get(name).build(model, settings)


def required_records() -> dict[str, list[tuple[str, dict]]]:
    """(unit, params) records each registered system reads from the characterization snapshot."""
    return {n: [(u, dict(p)) for u, p in e.records] for n, e in entries().items()}
