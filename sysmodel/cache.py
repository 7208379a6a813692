"""Results cached under a key of everything that determines them, so the default report reads its long
serving grids instead of rerunning them, and knows when it must not.

A key is the SHA-256 of: the cache entry's name, its inputs (JSON), the code of every membound module the
computation can reach — the *import closure* of the modules named, found from their import statements
(:func:`closure`; lazy imports inside functions count) — and the data it reads (the model zoo, the
characterization snapshot and the GPU measurements the calibrated profile is fitted to). Change any of those
and the key changes. A module counts by its syntax tree without docstrings (:func:`code`), so editing a comment
or a docstring keeps the key: they compute nothing. Presentation modules (:data:`PRESENTATION`: how the report
is written, captions, plots, progress bars) are left out of closures: they shape no number, and a caption's
wording should not force a rerun. The slow grids live in modules of their own
(``sysmodel/designs/<paper>/grids.py``) for the same reason.

* :data:`COMMITTED` (``sysmodel/data/report_cache/``, in git): the report's serving grids. ``membound report``
  uses an entry whose key matches, recomputes (and rewrites) one that does not, and ``--full`` recomputes
  all; ``tests/test_report.py`` fails when a committed entry is stale, naming the command that refreshes it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from sysmodel.outputs import write_text

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hw", "golden", "sysmodel")
PRESENTATION = frozenset(
    {
        "sysmodel.report",
        "sysmodel.report.sections",
        "sysmodel.report.memory",
        "sysmodel.report.results",
        "sysmodel.report.plots",
        "sysmodel.outputs",
        "sysmodel.progress",
        "sysmodel.ledger",
    }
)  # the ledger only labels numbers
COMMITTED = ROOT / "sysmodel" / "data" / "report_cache"
DATA = (
    ROOT / "sysmodel" / "data" / "characterization.json",
    *sorted((ROOT / "sysmodel" / "data" / "models").glob("*.json")),
    *sorted((ROOT / "sysmodel" / "data").glob("gpu_*.csv")),  # the calibrated GPU's fits read them
)


def _file(module: str) -> Path | None:
    path = ROOT.joinpath(*module.split("."))
    for p in (path.with_suffix(".py"), path / "__init__.py"):
        if p.exists():
            return p
    return None


@cache
def _imports(path: Path) -> frozenset[str]:
    """The membound modules one file imports (anywhere in it)."""
    out = set()
    pkg = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}  # `from pkg import module`
    return frozenset(m for m in out if m.split(".")[0] in PACKAGES and _file(m))


def closure(modules: Iterable[str]) -> list[Path]:
    """Every source file the named modules can import, transitively (membound's own packages only)."""
    seen: dict[str, Path] = {}
    todo = list(modules)
    while todo:
        m = todo.pop()
        path = _file(m)
        if m in seen or path is None or m in PRESENTATION:
            continue
        seen[m] = path
        todo += sorted(_imports(path))
        parent = m.rpartition(".")[0]
        if parent:
            todo.append(parent)  # importing a.b runs a/__init__.py
    return sorted(set(seen.values()))


def code(source: str) -> str:
    """What of a module's source computes: its syntax tree (comments and layout gone) with the docstrings of
    the module, its classes and its functions removed."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def key(name: str, inputs: Any, modules: Iterable[str]) -> str:
    h = hashlib.sha256(json.dumps([name, inputs], sort_keys=True, default=str).encode())
    for path in closure(modules):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(code(path.read_text()).encode())
    for path in _plugins(modules):
        h.update(code(path.read_text()).encode())
    for path in DATA:
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _plugins(modules: Iterable[str]) -> list[Path]:
    """Source files of the named modules outside membound's packages: an out-of-tree system's registration
    module (``MEMBOUND_SYSTEMS``), whose edits must change the key of a grid it is served in."""
    specs = (importlib.util.find_spec(m) for m in modules if m.split(".")[0] not in PACKAGES)
    return [Path(s.origin) for s in specs if s and s.origin and s.origin.endswith(".py")]


def entry_path(name: str, where: Path = COMMITTED) -> Path:
    return where / f"{name}.json"


def stored(name: str, where: Path = COMMITTED) -> dict | None:
    path = entry_path(name, where)
    return json.loads(path.read_text()) if path.exists() else None


def cached(
    name: str,
    inputs: Any,
    modules: Iterable[str],
    compute: Callable[[], Any],
    where: Path = COMMITTED,
    refresh: bool = False,
    store: bool = True,
) -> Any:
    """``compute()``'s (JSON-able) value, from the store when its key matches and not ``refresh``; a fresh
    value is written back (atomically) under the new key when ``store``."""
    modules = tuple(modules)
    k = key(name, inputs, modules)
    old = None if refresh else stored(name, where)
    if old is not None and old["key"] == k:
        return old["value"]
    value = compute()
    if not store:
        return value
    where.mkdir(parents=True, exist_ok=True)
    write_text(
        entry_path(name, where),
        json.dumps(
            {"name": name, "key": k, "inputs": inputs, "modules": modules, "value": value}, indent=1, default=float
        )
        + "\n",
    )
    return json.loads(json.dumps(value, default=float))  # the same types a cache hit returns


def stale(where: Path = COMMITTED) -> list[str]:
    """Names of committed entries whose key no longer matches their inputs and sources."""
    out = []
    for path in sorted(where.glob("*.json")):
        e = json.loads(path.read_text())
        if e["key"] != key(e["name"], e["inputs"], e["modules"]):
            out.append(e["name"])
    return out
