"""L3 (DIMM-PIM + GPU for long-context decode attention): the system model (model.py), the paper's
constants and results (paper.py) and the report section (report.py)."""
