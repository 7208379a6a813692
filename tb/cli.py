"""``python -m tb.cli summary|verilog|bench|area``: the `make sim` table, `make verilog`, `make bench` and
`make area`.

* summary: after `make sim`, one row per testbench: unit, parameters, PASS/FAIL (from pytest's JUnit
  XML), the unit's formal result from the last `make formal` (proved / bounded d=N / FAIL / not covered),
  vectors checked, measured latency and II (from the characterization records).
* verilog: every registered unit's Verilog into build/verilog/<tag>.v.
* area: Yosys cell counts of the DECA PE design points, L3's Table 5 units and Duplex's GEMM module and
  softmax unit into sysmodel/data/area.json.
* bench: the performance figures of `make bench` (tb/bench.py) into tb/bench.json, and BENCH.md rendered from it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from sysmodel.cost.characterization import Record, read
from tb import area, bench, runner
from tb.charz import record_path
from tb.formal.sby import recorded
from tb.registry import all_specs


def _junit_outcomes(path: Path) -> dict[str, str]:
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        if "[" not in name:
            continue
        status = (
            "FAIL"
            if case.find("failure") is not None or case.find("error") is not None
            else "SKIP"
            if case.find("skipped") is not None
            else "PASS"
        )
        out[name[name.index("[") + 1 : -1]] = status
    return out


def formal_cell(results: list[dict], spec: runner.TbSpec) -> str:
    """The testbench's formal result from the last `make formal` (tb/formal/sby.py's result.json files): its
    contract's ("abstract": with its arithmetic free, tb/formal/abstract.py; "composed": a sub-unit replaced
    by its checked guarantees; "at <params>": checked at a smaller formal size, ``fp_latency`` its FP
    pipelines' stages), "; " between a unit's contracts, then "+eq" when its unit's other modules
    (equivalences, data properties) all hold, "FAIL" if any failed."""
    kinds = {f"contract-{spec.tag}{k}": k.lstrip("-") for k in ("", "-abstract", "-composed")}
    own = sorted((r for r in results if r["name"] in kinds), key=lambda r: r["name"])
    other = [r for r in results if r["unit"] == spec.unit and not r["name"].startswith("contract-")]
    if not all(r["passed"] for r in own + other):
        return "FAIL"
    cells = [
        r["summary"].replace("bounded at depth", "bounded d=").split(" (")[0].replace("= ", "=")
        + (f" {kinds[r['name']]}" if kinds[r["name"]] else "")
        + (f" at {r['size']}" if r.get("size") else "")  # a smaller formal size
        for r in own
    ]
    return ("; ".join(cells) or "not covered") + (" +eq" if other else "")


def summary(junit: Path) -> int:
    outcomes = _junit_outcomes(junit) if junit.exists() else {}
    formal = recorded()
    rows = [("unit", "parameters", "simulator", "result", "formal", "vectors", "latency", "II", "model lat/II")]
    failed = 0
    for spec in all_specs():
        sim = runner.simulator(spec)
        rec_file = record_path(spec.tag, sim, runner.CHARZ_DIR)
        rec = read(rec_file) if rec_file.exists() else None
        status = outcomes.get(spec.tag, "NOT RUN")
        failed += status != "PASS"
        params = ",".join(f"{k}={v}" for k, v in spec.all_params.items())
        proof = formal_cell(formal, spec)
        if rec:
            rows.append(
                (
                    spec.unit,
                    params,
                    sim,
                    status,
                    proof,
                    str(rec.vectors),
                    str(rec.latency),
                    f"{rec.ii:g}",
                    f"{rec.model['latency']}/{rec.model['ii']:g}",
                )
            )
            for sub in _children(spec.tag, sim):
                p = sub.params
                rows.append(
                    (
                        "",
                        f"  {p['fmt']} d={p['density']}",
                        sim,
                        status,
                        "",
                        str(sub.vectors),
                        str(sub.latency),
                        f"{sub.ii:g}",
                        f"{sub.model['latency']}/"
                        f"{sub.model['ii']:.2f} (bpv {sub.extra['bubbles_per_vop']:.3f} vs "
                        f"{sub.extra['bpv_formula']:.3f})",
                    )
                )
        else:
            rows.append((spec.unit, params, sim, status, proof, "-", "-", "-", "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print("\nmembound testbench summary (II of DECA rows: cycles per tile; model II: #vOps*(1+bpv))")
    for i, row in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    specs = len(all_specs())
    print(
        f"\n{specs - failed} of {specs} testbenches PASS, {failed} not passing "
        f"({len(rows) - 1 - specs} per-format DECA rows belong to their testbench)"
    )
    return int(failed > 0)


def _children(tag: str, sim: str) -> list[Record]:
    """Per-(format, density) records a testbench wrote under its own record (extra.parent)."""
    recs = (read(p) for p in sorted(runner.CHARZ_DIR.glob(f"{tag}-*.{sim}.json")))
    return [r for r in recs if r.extra.get("parent") == tag]


def verilog(out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    for spec in all_specs():
        path = runner.elaborate(dataclasses.replace(spec, harness=False), out_dir / f"{spec.tag}.v")
        print(f"{path}  ({path.stat().st_size} bytes)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.cli")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--junit", type=Path, default=runner.BUILD / "sim-results.xml")
    v = sub.add_parser("verilog")
    v.add_argument("--out", type=Path, default=runner.BUILD / "verilog")
    b = sub.add_parser("bench")
    b.add_argument("--json", type=Path, default=runner.BENCH_JSON)
    b.add_argument("--md", type=Path, default=runner.ROOT / "BENCH.md")
    b.add_argument("--vectors", type=int, default=10000)
    b.add_argument(
        "--part",
        choices=("all", *bench.PARTS),
        default="all",
        help="measure one part; the other sections of BENCH.md are kept",
    )
    ar = sub.add_parser("area", help="synthesize a paper's units with Yosys into the area snapshot")
    ar.add_argument("--paper", choices=("all", *area.AREA_PAPERS), default="all")
    a = ap.parse_args(argv)
    if a.cmd == "summary":
        return summary(a.junit)
    if a.cmd == "verilog":
        return verilog(a.out)
    if a.cmd == "area":
        for paper in area.AREA_PAPERS if a.paper == "all" else (a.paper,):
            area.write_area(paper)
        return 0
    parts = bench.PARTS if a.part == "all" else (a.part,)
    return bench.run(parts, a.json, a.md, a.vectors)


if __name__ == "__main__":
    sys.exit(main())
