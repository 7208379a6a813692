"""The RTL mutants of tb/rtl_mutants.py under the formal checks: the mutated module, and the modules between
it and the unit (re-run so they import the mutant), replace the originals in ``sys.modules`` while a
property module is built (property modules look their unit up at build time)."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

from tb.rtl_mutants import RtlMutant


@contextmanager
def mutated(m: RtlMutant) -> Iterator[None]:
    originals = {}
    try:
        for name, text in m.sources().items():  # the mutated module first, the unit last
            module = types.ModuleType(name)
            module.__file__ = f"<mutant {m.name}: {name}>"
            originals[name] = sys.modules.get(name)
            sys.modules[name] = module
            exec(compile(text, module.__file__, "exec"), module.__dict__)
        yield
    finally:
        for name, original in originals.items():
            if original is None:
                del sys.modules[name]
            else:
                sys.modules[name] = original
