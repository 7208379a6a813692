"""The one way membound's reports get matplotlib: pyplot on the file-only Agg backend, imported at the first
plot so commands that draw nothing never load it."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, plt, path: Path) -> Path:
    """Write a report figure and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
