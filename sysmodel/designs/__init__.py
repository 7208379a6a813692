"""The designs: each paper's package (facts, System, claims, report) and the baselines they are compared with."""
