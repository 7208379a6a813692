"""Hermes testbench cases (tb/hermes/cases.py)."""
