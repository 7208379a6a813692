"""The serving engine's shape (issue 51 item 3): no import circle through its modules, every function under
60 lines, ``simulate`` under 80."""

import ast
from pathlib import Path

SYSMODEL = Path(__file__).resolve().parent.parent / "sysmodel"
SERVING = ("serving", "workload", "engine", "metrics", "scheduling", "replicas", "pipeline", "profile")


def _module_imports() -> dict[str, set[str]]:
    """Each sysmodel module's sysmodel imports at module level (lazy imports inside functions excluded)."""
    graph: dict[str, set[str]] = {}
    for path in SYSMODEL.rglob("*.py"):
        name = ".".join(path.relative_to(SYSMODEL.parent).with_suffix("").parts).removesuffix(".__init__")
        deps = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sysmodel"):
                deps.add(node.module)
                deps |= {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("sysmodel")}
        graph[name] = deps
    return {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for d in graph[todo.pop()]:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def test_no_import_circle_through_the_serving_modules() -> None:
    graph = _module_imports()
    circles = [m for m in (f"sysmodel.engines.{s}" for s in SERVING) if m in _reaches(graph, m)]
    assert circles == []
    assert "sysmodel.engines.serving" not in set().union(
        *(graph[f"sysmodel.engines.{s}"] for s in SERVING)
    )  # the facade is on top


def test_serving_functions_are_short() -> None:
    long = {}
    for s in SERVING:
        for node in ast.walk(ast.parse((SYSMODEL / "engines" / f"{s}.py").read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > (80 if node.name == "simulate" else 60):
                    long[f"{s}.{node.name}"] = lines
    assert long == {}
