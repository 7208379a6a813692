"""The one way membound's reports get matplotlib: pyplot on the file-only Agg backend, imported at the first
plot so commands that draw nothing never load it."""

from __future__ import annotations


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
