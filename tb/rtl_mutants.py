"""Deliberately broken RTL, one unit per paper with hardware, to prove each paper's testbench bites.

A mutant is one textual change to a unit's Amaranth source — a flipped comparison, an off-by-one in a
counter — written as a copy under ``build/mutants/`` and simulated in place of the unit by the unit's own
reduced testbench (:func:`run_mutant`); tests/test_mutation.py asserts every mutant fails it. (LLM in a
flash has no RTL: its mechanisms are software.) The golden-model mutants of the arithmetic library are
tb/mutants.py's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from dataclasses import dataclass

from hw.duplex.cycles import UNIT_GEMM_MODULE
from hw.hermes.cycles import UNIT_GEMV
from hw.l3.cycles import UNIT_SOFTMAX
from tb.deca.cases import SPECS as DECA_SPECS
from tb.duplex.cases import SPECS as DUPLEX_SPECS
from tb.hermes.cases import SPECS as HERMES_SPECS
from tb.l3.cases import SPECS as L3_SPECS
from tb.runner import ROOT, TbSpec, run, source_hash

MUTANT_DIR = ROOT / "build" / "mutants"


def _spec(specs: list[TbSpec], unit: str) -> TbSpec:
    return next(s for s in specs if s.unit == unit)


@dataclass(frozen=True)
class RtlMutant:
    """``old`` (occurring exactly once in ``module``, default the unit's own) replaced by ``new``: the bug
    ``what`` names. ``via``: the modules between ``module`` and the unit that import it; each is copied with
    its imports of the copied modules pointed at the copies, so the unit elaborates with the mutant."""

    name: str
    paper: str
    spec: TbSpec
    old: str
    new: str
    what: str
    testcase: str = "test_vectors"
    module: str | None = None
    via: tuple[str, ...] = ()

    @property
    def unit_module(self) -> str:
        return self.spec.component.split(":")[0]

    def sources(self) -> dict[str, str]:
        """Original module name -> the text its copy gets."""
        target = self.module or self.unit_module
        names = dict.fromkeys([target, *self.via, self.unit_module])
        texts = {n: (ROOT / f"{n.replace('.', '/')}.py").read_text() for n in names}
        if texts[target].count(self.old) != 1:
            raise ValueError(
                f"mutant {self.name}: {self.old!r} occurs {texts[target].count(self.old)} times in "
                f"{target}; it must occur once (the unit changed: update the mutant)"
            )
        texts[target] = texts[target].replace(self.old, self.new)
        return texts

    def materialize(self) -> TbSpec:
        """Write the copies and return the spec that simulates the mutated unit. Copies are named with a hash
        of their texts and of the unit's import closure, so the build cache never serves a stale mutant."""
        texts = self.sources()
        digest = hashlib.sha256("".join([*texts.values(), source_hash(self.spec)]).encode()).hexdigest()[:10]
        new = {n: f"mutant_{self.name.replace('-', '_')}_{n.rpartition('.')[2]}_{digest}" for n in texts}
        MUTANT_DIR.mkdir(parents=True, exist_ok=True)
        for n, text in texts.items():
            for orig, copy in new.items():
                text = text.replace(f"from {orig} import", f"from {copy} import")
            (MUTANT_DIR / f"{new[n]}.py").write_text(text)
        if str(MUTANT_DIR) not in sys.path:  # cocotb passes sys.path on to the simulator's Python
            sys.path.insert(0, str(MUTANT_DIR))
        return dataclasses.replace(
            self.spec,
            component=f"{new[self.unit_module]}:{self.spec.component.split(':')[1]}",
            family=self.spec.case_family,
        )


RTL_MUTANTS = (
    RtlMutant(
        "deca-prefix-sum",
        "deca",
        next(s for s in DECA_SPECS if s.params["w"] == 8),
        "if i >= dist else level[i]",
        "if i > dist else level[i]",
        "a flipped comparison in the expansion's parallel prefix sum (hw/deca/expand.py): a lane misses "
        "its predecessor's count",
        testcase="test_formats",
        module="hw.deca.expand",
        via=("hw.deca.scale", "hw.deca.dequant"),
    ),
    RtlMutant(
        "hermes-gemv-lane-count",
        "hermes",
        _spec(HERMES_SPECS, UNIT_GEMV),
        "mtree.o.valid & (lane_at == g.lanes - 1)",
        "mtree.o.valid & (lane_at == g.lanes - 2)",
        "an off-by-one in the GEMV unit's lane counter (hw/hermes/gemv.py): the reduction fires a lane early",
    ),
    RtlMutant(
        "l3-softmax-chunk",
        "l3",
        _spec(L3_SPECS, UNIT_SOFTMAX),
        "Mux(k < lane, asm[k], Mux(k == lane, self.i.payload.s, NEG_INF))",
        "Mux(k <= lane, asm[k], Mux(k == lane, self.i.payload.s, NEG_INF))",
        "a flipped comparison in the chunk softmax's assembly of a chunk (hw/l3/softmax_unit.py): the "
        "arriving score is dropped for a stale one",
    ),
    RtlMutant(
        "duplex-gemm-input",
        "duplex",
        _spec(DUPLEX_SPECS, UNIT_GEMM_MODULE),
        'self.i.ready.eq((c["kk"] < c["k"]) & (~self.issue | last_grp))',
        'self.i.ready.eq((c["kk"] <= c["k"]) & (~self.issue | last_grp))',
        "an off-by-one in the GEMM module's input beat counter (hw/duplex/gemm_module.py): one beat too many "
        "accepted per K tile",
    ),
)


def run_mutant(m: RtlMutant, extra_env: dict[str, str] | None = None) -> None:
    """Run the mutant under its unit's testbench case; raises AssertionError when the testbench catches it."""
    run(m.materialize(), testcase=m.testcase, extra_env=extra_env)
