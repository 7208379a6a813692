"""Every file membound writes goes through here, so a failed or interrupted run leaves nothing half-written.

* :func:`atomic` yields a temporary path beside the target (same suffix, so matplotlib and pyarrow pick the
  format from it); on success it is renamed over the target (``os.replace``: atomic on POSIX), on any
  exception — Ctrl-C included — it is removed. The result has the mode a plain ``open()`` gives under the
  umask (the temporary file is created with 0666 and the umask applied by the kernel, not mkstemp's 0600),
  or the mode of the file it replaces (a tracked file keeps its 0644 or 0664). :func:`write_text` and
  ``sysmodel.report.plots.save`` use it.
* :func:`output_dir` checks a ``--out`` directory before any work starts — not a file, its parent exists,
  writable (probed by creating a file: root ignores permission bits) — creates it, and removes it again if
  the command fails while it is still empty. The default output directories (under ``build/``) are created
  with their parents; a user's ``--out`` needs an existing parent, so a typo is an error, not a new tree.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic(path: Path) -> Iterator[Path]:
    """A temporary file to write ``path``'s contents into; renamed over ``path`` when the block succeeds."""
    path = Path(path)
    tmp = path.parent / f".{path.stem}.{uuid.uuid4().hex[:12]}{path.suffix}"
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # O_EXCL: never another's file
    try:
        yield tmp
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))  # a rewrite keeps the file's mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path: Path, text: str) -> Path:
    with atomic(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def check_dir(path: Path, option: str = "--out", parents: bool = False) -> None:
    """Raise ``ValueError`` naming ``option`` unless ``path`` is (or can be made) a writable directory."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option}: {path} is a file, not a directory")
    probe = path
    while not probe.exists():
        if not parents and probe == path and not path.parent.exists():
            raise ValueError(f"{option}: {path.parent} does not exist (create it, or choose another directory)")
        probe = probe.parent
    if not probe.is_dir():
        raise ValueError(f"{option}: {probe} is a file, not a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".membound-probe.", dir=probe)
    except OSError as e:
        raise ValueError(f"{option}: {probe} is not writable ({e.strerror})") from None
    os.close(fd)
    os.unlink(tmp)


@contextlib.contextmanager
def output_dir(path: Path, option: str = "--out", default: bool = False) -> Iterator[Path]:
    """Check and create ``path``; if the block fails, remove what this call created while still empty.
    ``default``: the command's own default directory, created with its parents."""
    path = Path(path)
    check_dir(path, option, parents=default)
    created = []
    probe = path
    while not probe.exists():
        created.append(probe)
        probe = probe.parent
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    except BaseException:
        for d in created:  # innermost first
            with contextlib.suppress(OSError):
                d.rmdir()  # only if empty
        raise


MANIFEST = ".membound-written.json"  # per command, the files it last wrote into an output directory


def _manifest(out: Path) -> dict:
    import json

    try:
        record = json.loads((Path(out) / MANIFEST).read_text())
    except (OSError, ValueError):  # none yet, or unreadable: nothing known to be ours
        return {}
    return record if isinstance(record, dict) else {}


def recorded(out: Path, command: str) -> set[str]:
    """The names of the files ``command`` wrote into ``out`` on its previous run there."""
    names = _manifest(out).get(command, [])
    return {n for n in names if isinstance(n, str) and Path(n).name == n} if isinstance(names, list) else set()


def replace_outputs(out: Path, command: str, written: list[Path]) -> list[Path]:
    """Record the files ``command`` wrote into ``out`` and remove those it wrote there on its previous run and
    not on this one (a reused ``--out`` keeps no stale CSV or plot of an earlier run, e.g. a rate no longer
    swept); files it did not write are left alone. Returns the files removed."""
    import json

    now = sorted({Path(p).name for p in written})
    removed = []
    for name in recorded(out, command) - set(now):
        stale = Path(out) / name
        if stale.is_file():
            stale.unlink()
            removed.append(stale)
    write_text(Path(out) / MANIFEST, json.dumps({**_manifest(out), command: now}, indent=1) + "\n")
    return removed
