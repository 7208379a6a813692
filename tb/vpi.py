"""Wide ports read and written in the VPI's vector format (IEEE 1364-2005 sec. 27.14, ``vpiVectorVal``), called
in-process through ctypes: the transaction-level harness's load and drain words (tb/txn.py).

cocotb 2.1 moves a signal wider than 32 bits as a binary string, one character per bit on both sides of
the VPI: on Verilator a 4,096-bit load word cost 29 us to write and a 6,144-bit drain word 29 us to read,
most of a FpMac batch's Python time (2026-11-27). The vector format moves 32 bits per element (8-10 us
for the same words, measured in the same runs). cocotb runs inside the simulator's process, and every VPI
simulator exports ``vpi_handle_by_name``, ``vpi_get_value`` and ``vpi_put_value`` to the VPI libraries it
loads (Verilator's executable, Icarus's vvp), so ctypes finds them in the process's own symbols. The
handles here are separate from cocotb's, for the same signals.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

VECTOR_VAL = 9  # vpiVectorVal (vpi_user.h)
NO_DELAY = 1  # vpiNoDelay: applied at once, half a period before the rising edge that samples it


class _Value(ctypes.Structure):
    """``s_vpi_value`` with its union read as the ``vector`` pointer."""

    _fields_ = [("format", ctypes.c_int32), ("vector", ctypes.c_void_p)]


@functools.cache
def _lib() -> ctypes.CDLL:
    lib = ctypes.CDLL(None)  # the simulator process's own symbols
    lib.vpi_handle_by_name.restype = ctypes.c_void_p
    lib.vpi_handle_by_name.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    lib.vpi_get_value.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Value)]
    lib.vpi_put_value.restype = ctypes.c_void_p
    lib.vpi_put_value.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Value), ctypes.c_void_p, ctypes.c_int32]
    return lib


class WidePort:
    """The signal ``path`` (e.g. ``top.hx_drain_data``) of ``width`` bits.

    :meth:`write` deposits an int; :meth:`read` returns the simulator's vector as raw bytes (an aval and a
    bval per 32 bits), :meth:`avals` turns many such reads into one array at once (per-read numpy calls
    cost a third of a read), :meth:`value` one read into an int."""

    def __init__(self, path: str, width: int):
        self.path, self.width, self.words = path, width, -(-width // 32)
        self._handle = _lib().vpi_handle_by_name(path.encode(), None)
        if not self._handle:
            raise ValueError(f"{path}: no such signal in the simulation")
        self._vec = np.zeros((self.words, 2), "<u4")  # (aval, bval) per 32 bits; bval 0: no X or Z
        self._put = _Value(VECTOR_VAL, self._vec.ctypes.data)
        self._get = _Value(VECTOR_VAL, None)

    def write(self, value: int) -> None:
        self._vec[:, 0] = np.frombuffer(value.to_bytes(4 * self.words, "little"), "<u4")
        self._put.format, self._put.vector = VECTOR_VAL, self._vec.ctypes.data
        _lib().vpi_put_value(self._handle, ctypes.byref(self._put), None, NO_DELAY)

    def read(self) -> bytes:
        self._get.format = VECTOR_VAL
        _lib().vpi_get_value(self._handle, ctypes.byref(self._get))
        return ctypes.string_at(self._get.vector, 8 * self.words)

    def avals(self, reads: list[bytes]) -> np.ndarray:
        """``reads`` as a (reads, words) array of 32-bit values, bit 0 of the signal in element 0's bit 0 and
        the bits above the width cleared; an X or Z bit (a nonzero bval) raises AssertionError."""
        vec = np.frombuffer(b"".join(reads), "<u4").reshape(len(reads), self.words, 2)
        if vec[:, :, 1].any():
            raise AssertionError(f"{self.path}: X/Z bits in a harness output")
        out = vec[:, :, 0].copy()
        if self.width % 32:
            out[:, -1] &= (1 << (self.width % 32)) - 1
        return out

    def value(self) -> int:
        return int.from_bytes(self.avals([self.read()]).tobytes(), "little")
