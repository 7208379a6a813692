"""The system model's shape: what its modules may load."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

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


def _sysmodel_imports() -> dict[str, set[str]]:
    """Module -> the sysmodel modules it imports (anywhere in it, lazy imports included)."""
    import ast
    from pathlib import Path

    root = Path(sysmodel.__file__).parent.parent
    files = {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
        for p in (root / "sysmodel").rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                found |= {base, *(f"{base}.{a.name}" for a in node.names)}
        graph[name] = {m for m in found if m in files and m != name}
    return graph


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
