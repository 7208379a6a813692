"""Duplex (xPU + Logic-PIM) system model and report."""
