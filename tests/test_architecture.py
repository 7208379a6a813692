"""The system model's shape: what its modules may load."""

from __future__ import annotations

import ast
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import sysmodel


def test_sysmodel_loads_no_amaranth() -> None:
    """Every system-model module imports its cycle formulas from the plain ``hw/<paper>/cycles.py`` modules,
    never from an Amaranth unit: importing all of them, in a fresh interpreter, loads no ``amaranth``."""
    modules = [m.name for m in pkgutil.walk_packages(sysmodel.__path__, "sysmodel.")]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted({k.split('.')[0] for k in sys.modules} & {'amaranth'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert len(modules) > 50, modules
    assert out.strip() == "[]", f"a sysmodel module loads Amaranth: {out}"


def _sysmodel_files(packages: tuple[str, ...] = ("sysmodel",)) -> dict[str, Path]:
    """Module name -> source file of every module of ``packages`` (the system model's by default)."""
    root = Path(sysmodel.__file__).parent.parent
    return {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
        for package in packages
        for p in sorted((root / package).rglob("*.py"))
    }


def _sysmodel_imports() -> dict[str, set[str]]:
    """Module -> the sysmodel modules it imports (anywhere in it, lazy imports included): the report cache's own
    reading of a file's imports (:func:`sysmodel.cache._imports`), so the two cannot disagree."""
    from sysmodel.cache import _imports

    files = _sysmodel_files()
    return {name: {m for m in _imports(path) if m in files and m != name} for name, path in files.items()}


def test_sysmodel_has_no_import_circle() -> None:
    """No two system-model modules import each other, directly or around a loop (lazy imports count)."""
    graph = _sysmodel_imports()
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            raise AssertionError(f"import circle: {' -> '.join([*path[path.index(node) :], node])}")
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, [*path, node])
        done.add(node)

    for module in sorted(graph):
        visit(module, [])


LAYERS = (  # lowest first: a module imports from its own layer or below, never above (issue 51)
    ("base", r"sysmodel|sysmodel\.(outputs|progress|cache|cluster|ledger)"),
    ("cost", r"sysmodel\.cost(\.\w+)?"),
    ("systems", r"sysmodel\.systems"),
    ("engines", r"sysmodel\.engines(\.\w+)?"),
    ("designs", r"sysmodel\.designs(\.\w+)*|sysmodel\.(compare|sweep|runinfo)"),
    ("report", r"sysmodel\.report(\.\w+)?|sysmodel\.designs\.\w+\.(claims|figures|report|bench)"),
    ("cli", r"sysmodel\.cli"),
)


def layer(module: str) -> int:
    """The highest layer whose pattern names ``module`` (a design's report modules are report, not design)."""
    hits = [i for i, (_, pat) in enumerate(LAYERS) if re.fullmatch(pat, module)]
    if not hits:
        raise AssertionError(f"{module}: in no layer of LAYERS")
    return hits[-1]


def test_sysmodel_imports_point_down() -> None:
    """Every system-model module is in a layer (base, cost, systems, engines, designs, report, cli) and imports
    only from its own layer or those below (lazy imports count): engines know no design, designs no report."""
    graph = _sysmodel_imports()
    up = [
        f"{m} ({LAYERS[layer(m)][0]}) -> {d} ({LAYERS[layer(d)][0]})"
        for m, deps in sorted(graph.items())
        for d in sorted(deps)
        if layer(d) > layer(m)
    ]
    assert not up, "upward imports:\n" + "\n".join(up)


MAX_LINES = 60  # issue 51: a function longer than a screen is split into named helpers
LONG_FUNCTIONS = {  # (module, function) -> why it stays longer (the test fails on an entry that fits)
    ("sysmodel.engines.memory", "_channel"): "a numba kernel: one compiled loop, its controller state in locals",
}


CODE = ("hw", "golden", "tb", "sysmodel", "tests")  # every package of the layout holds to it


def _long_functions() -> dict[tuple[str, str], int]:
    """(module, qualified function name) -> lines (``def`` to its last line) of every function of the
    :data:`CODE` packages over :data:`MAX_LINES`, methods and nested functions included."""
    found: dict[tuple[str, str], int] = {}

    def walk(node: ast.AST, module: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                lines = child.end_lineno - child.lineno + 1
                if not isinstance(child, ast.ClassDef) and lines > MAX_LINES:
                    found[(module, name)] = lines
                name += "."
            walk(child, module, name)

    for module, path in _sysmodel_files(CODE).items():
        walk(ast.parse(path.read_text()), module, "")
    return found


def test_functions_fit_a_screen() -> None:
    """Every function (hardware, golden, testbenches, system model, tests) is at most MAX_LINES long, but those
    LONG_FUNCTIONS names with a reason; an allowed one that got short (or went) must leave the list too."""
    found = _long_functions()
    over = {f"{m}.{f}: {n} lines" for (m, f), n in found.items() if (m, f) not in LONG_FUNCTIONS}
    assert not over, f"functions over {MAX_LINES} lines (split them into named helpers): {sorted(over)}"
    gone = {f"{m}.{f}" for m, f in LONG_FUNCTIONS if (m, f) not in found}
    assert not gone, f"LONG_FUNCTIONS entries no longer over {MAX_LINES} lines (drop them): {sorted(gone)}"


def test_long_function_finder_sees_methods_and_nested_functions(tmp_path, monkeypatch) -> None:
    """The finder counts a method and a nested function by their qualified names, and nothing at the limit."""
    pkg = tmp_path / "sysmodel"
    pkg.mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text(
        f"class C:\n    def long(self):\n{body}\n\n"
        "def outer():\n    def inner():\n" + body + "\n    return inner\n\n"
        "def short():\n" + "\n".join(f"    y{i} = {i}" for i in range(MAX_LINES - 1)) + "\n"
    )
    monkeypatch.setattr(sysmodel, "__file__", str(pkg / "__init__.py"))
    assert _long_functions() == {
        ("sysmodel.m", "C.long"): MAX_LINES + 1,
        ("sysmodel.m", "outer"): MAX_LINES + 3,
        ("sysmodel.m", "outer.inner"): MAX_LINES + 1,
    }
