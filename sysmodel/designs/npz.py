"""A user's ``.npz`` of named arrays (a Hermes activation trace, an LLM-in-a-flash activation dump), read
without unpickling: a data file is data, never code. Anything else — missing, a directory, a single ``.npy``
array, text, a damaged archive, a member of Python objects — is one ValueError naming ``what`` and the file."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np


def read_npz(path: Path, what: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` at ``path``."""
    try:
        data = np.load(path, allow_pickle=False)
    except OSError as e:  # missing, unreadable, a directory
        raise ValueError(f"{what}: cannot read {path}: {e.strerror or e}") from None
    except (ValueError, EOFError, zipfile.BadZipFile):  # neither an .npy nor a zip numpy can read
        raise ValueError(f"{what} {path}: not an .npz archive (numpy.savez writes one)") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(f"{what} {path}: one .npy array, not an .npz archive of named arrays (numpy.savez)")
    with data:
        return {key: _member(data, key, path, what) for key in data.files}


def _member(data: np.lib.npyio.NpzFile, key: str, path: Path, what: str) -> np.ndarray:
    try:
        a = data[key]
    except (ValueError, OSError, EOFError, zipfile.BadZipFile):  # Python objects (pickled) or damaged data
        a = None
    if not isinstance(a, np.ndarray):
        raise ValueError(f"{what} {path}: {key} is not an array of numbers or bools (objects or damaged data)")
    return a
