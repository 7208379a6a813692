"""The command front end Duplex's GEMM module controller (hw/duplex/gemm_module.py) and Hermes' GEMV
sequencer (hw/hermes/gemv.py) share, for streams of {op, data, last} items: the check of a transaction's
DESC item, and what a flagged transaction does — its error flags latched, the rest of it consumed to its
``last`` item (the ``SKIP`` state), then one error item (the golden twin: ``golden.commands``).

Used inside the unit's FSM (``m.next`` names the unit's states)."""

from __future__ import annotations

from amaranth.hdl import Module, Signal, Value
from amaranth.lib import stream


class CommandFront:
    """``i``: the unit's item stream; ``err``: its error-flag register; ``malformed``: the flags of an item
    out of order; ``error_state``: the state that answers with the error item, once the transaction's
    ``last`` item is in."""

    def __init__(self, m: Module, i: stream.Interface, err: Signal, malformed, error_state: str = "ERROR"):
        self.m, self.i, self.err, self.malformed, self.error_state = m, i, err, malformed, error_state

    def fail(self, flags) -> None:
        """Flag ``flags`` for the item accepted now: the error item next if it was the transaction's last,
        else after skipping to it."""
        m = self.m
        m.d.sync += self.err.as_value().eq(flags)
        with m.If(self.i.payload.last):
            m.next = self.error_state
        with m.Else():
            m.next = "SKIP"

    def desc(self, desc_op: int, flags: Value, then: str) -> None:
        """A DESC item accepted now: on to ``then``, or flagged — not a DESC, ``flags`` (the descriptor's
        own check) set, or ``last`` on it (a transaction needs more items)."""
        m, item = self.m, self.i.payload
        with m.If(item.op != desc_op):
            self.fail(self.malformed)
        with m.Elif(flags.as_value() != 0):
            self.fail(flags)
        with m.Elif(item.last):
            self.fail(self.malformed)
        with m.Else():
            m.next = then

    def skip(self) -> None:
        """The ``SKIP`` state: items consumed until the transaction's ``last``."""
        m = self.m
        m.d.comb += self.i.ready.eq(1)
        with m.If(self.i.valid & self.i.payload.last):
            m.next = self.error_state
