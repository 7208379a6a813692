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
