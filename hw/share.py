"""Elaborate once, instantiate many: repeated datapaths built as one module each while Verilog is written.

Amaranth elaborates and lowers every instance of a component on its own, so a unit built from 2,048
bit-serial multipliers or 255 tree adders costs 2,048 or 255 times one of them in Python (the paper-size
Hermes GEMV spent about five minutes there) and the simulators see as many copies. Inside
:func:`library` (tb.runner's Verilog conversion opens one), each distinct datapath is elaborated once into
its own module and every use becomes an ``Instance`` of it; :func:`Library.rtlil` holds the modules' text
for the same Yosys run as the design's. Outside a library (the Amaranth simulator, the area flow in
tb/area.py) nothing changes: the datapath is built inline, as without this module.

The logic is the same either way: a module's ports are exactly the values the inline build would read and
its output the value it would return, and its registers run in the caller's ``sync`` domain (``clk`` and
``rst`` passed through), so cycle counts and outputs are unchanged; every testbench checks the instanced
build bit for bit.

* :func:`shared_op` decorates an FP datapath function ``fn(m, <values and parameters>..., name)``.
* :func:`shared` builds a :class:`amaranth.lib.wiring.Component` (for the Hermes GEMV's multipliers).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from amaranth.back import rtlil
from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Shape, Signal, Value, ValueCastable
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

_ACTIVE: ContextVar[Library | None] = ContextVar("membound_share_library", default=None)
_TOP_ATTRIBUTE = "attribute \\top 1\n"  # only the design's own top keeps it
_INPUT_WIRE = re.compile(r"^\s*wire (?:width \d+ )?(?:signed )?input \d+\s+\\(\S+)$", re.M)


@dataclass(frozen=True)
class _Built:
    name: str
    rtlil: str
    signature: wiring.Signature  # its ports, as the component built had them
    domain_ports: tuple[str, ...]  # which of the sync domain's clk and rst it has


class Library:
    """The modules built during one conversion, one per distinct datapath (a key)."""

    def __init__(self) -> None:
        self._built: dict[object, _Built] = {}
        self._names = 0  # modules named so far (a nested module is named after the one containing it)

    def module(self, key: object, label: str, build: Callable[[], wiring.Component]) -> _Built:
        """The module for ``key``, converting ``build()`` the first time it is asked for."""
        if key not in self._built:
            name, self._names = f"shared{self._names}_{label}", self._names + 1
            component = build()
            text = rtlil.convert(component, name=name, emit_src=False)
            head = text.index(f"module \\{name}\n")
            inputs = set(_INPUT_WIRE.findall(text[head : text.index("\nend\n", head)]))
            foreign = {p for p in inputs if p.endswith(("_clk", "_rst"))}
            if foreign:
                raise ValueError(f"{label}: shared datapaths run in the sync domain only, not via {sorted(foreign)}")
            # nested shared datapaths were added while converting: ours goes after them
            domain_ports = tuple(p for p in ("clk", "rst") if p in inputs)
            self._built[key] = _Built(name, text.replace(_TOP_ATTRIBUTE, "", 1), component.signature, domain_ports)
        return self._built[key]

    def rtlil(self) -> str:
        """Every module built, as RTLIL text to convert with the design's own."""
        return "".join(b.rtlil for b in self._built.values())

    def __len__(self) -> int:
        return len(self._built)


@contextmanager
def library() -> Iterator[Library]:
    """Build repeated datapaths once each while the ``with`` body converts a design."""
    lib = Library()
    token = _ACTIVE.set(lib)
    try:
        yield lib
    finally:
        _ACTIVE.reset(token)


def _instance(m: Module, name: str, built: _Built, ports: dict[str, tuple[str, Value]]) -> None:
    """An instance of ``built`` in ``m`` (named ``name`` unless taken); ``ports``: port name -> ("i" or
    "o", the caller's value)."""
    domain = {"clk": ClockSignal(), "rst": ResetSignal()}
    clock = [("i", p, domain[p]) for p in built.domain_ports]
    inst = Instance(built.name, *clock, *((d, port, v) for port, (d, v) in ports.items()))
    try:
        m.submodules[name] = inst
    except NameError:  # a datapath name used twice in one module (its signals are named alike too)
        m.submodules += inst


class _Op(wiring.Component):
    """``fn``'s datapath on its own ports: one In per value argument, ``y`` Out — what ``fn`` returns."""

    def __init__(self, fn: Callable[..., Value], shapes: dict[str, Shape], params: dict[str, object]):
        self._m = m = Module()
        operands = {k: Signal(s, name=k) for k, s in shapes.items()}
        y = Value.cast(fn(m, **operands, **params, name="op"))
        super().__init__({**{k: In(s) for k, s in shapes.items()}, "y": Out(y.shape())})
        m.d.comb += [operands[k].eq(getattr(self, k)) for k in shapes]
        m.d.comb += self.y.eq(y)

    def elaborate(self, platform) -> Module:
        return self._m


def shared_op(fn: Callable[..., Value]) -> Callable[..., Value]:
    """``fn(m, ..., name)`` built inline, or, inside a :func:`library`, as an instance of one module per
    distinct combination of its value arguments' shapes and its other arguments (formats)."""
    signature = inspect.signature(fn)
    if "y" in signature.parameters or "name" not in signature.parameters:
        raise TypeError(f"{fn.__qualname__}: a shared datapath takes `name` and no argument named `y`")

    @functools.wraps(fn)
    def build(m: Module, *args, **kwargs) -> Value:
        lib = _ACTIVE.get()
        if lib is None:
            return fn(m, *args, **kwargs)
        bound = signature.bind(m, *args, **kwargs)
        bound.apply_defaults()
        given = {k: v for k, v in bound.arguments.items() if k not in ("m", "name")}
        values = {k: Value.cast(v) for k, v in given.items() if isinstance(v, Value | ValueCastable)}
        params = {k: v for k, v in given.items() if k not in values}
        shapes = {k: v.shape() for k, v in values.items()}
        key = (fn, tuple(shapes.items()), tuple(params.items()))
        built = lib.module(key, fn.__name__, lambda: _Op(fn, shapes, params))
        name = bound.arguments["name"]
        y = Signal(built.signature.members["y"].shape, name=f"{name}_y")
        _instance(m, name, built, {**{k: ("i", v) for k, v in values.items()}, "y": ("o", y)})
        return y

    return build


class _Stand(wiring.Component):
    """In a design, the stand-in for a shared component: its signature, elaborated as an instance."""

    def __init__(self, built: _Built):
        self._built = built
        super().__init__(built.signature)

    def elaborate(self, platform) -> Module:
        m = Module()
        ports = {
            "__".join(map(str, path)): ("i" if member.flow == In else "o", Value.cast(value))
            for path, member, value in self.signature.flatten(self)
        }
        _instance(m, "shared", self._built, ports)
        return m


def shared(cls: type[wiring.Component], *args, **kwargs) -> wiring.Component:
    """``cls(*args, **kwargs)``, or, inside a :func:`library`, a stand-in with its signature instantiating
    the one module built for ``cls`` with these arguments."""
    lib = _ACTIVE.get()
    if lib is None:
        return cls(*args, **kwargs)
    key = (cls, args, tuple(sorted(kwargs.items())))
    return _Stand(lib.module(key, cls.__name__, lambda: cls(*args, **kwargs)))
