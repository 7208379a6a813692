"""The RTL mutants of tb/rtl_mutants.py under the formal checks: the mutated module replaces the original in
``sys.modules`` while a property module is built (property modules look their unit up at build time)."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

from tb.rtl_mutants import RtlMutant


@contextmanager
def mutated(m: RtlMutant) -> Iterator[None]:
    target = m.module or m.unit_module
    module = types.ModuleType(target)
    module.__file__ = f"<mutant {m.name}>"
    exec(compile(m.sources()[target], module.__file__, "exec"), module.__dict__)
    original = sys.modules.get(target)
    sys.modules[target] = module
    try:
        yield
    finally:
        if original is None:
            del sys.modules[target]
        else:
            sys.modules[target] = original
