"""The progress bar long runs show (sweeps, serving): on a terminal only, silent when stderr is not a TTY."""

from __future__ import annotations

import sys


def progress(total: int, desc: str, enabled: bool = True):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=not (enabled and sys.stderr.isatty()), file=sys.stderr, leave=False)
