"""The `membound` command: reports from the system model, and characterization intake."""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

from sysmodel import characterization

PAPERS = {
    "arith": "Arithmetic library (measured RTL cycle models)",
    "memory": "Memory timing: DRAM/HBM presets and PIM access modes",
    "baselines": "Baselines: GPU-only, PCIe offloading, CPU-only, HBM-PIM attention",
    "deca": "DECA: near-core weight decompression",
    "hermes": "Hermes: NDP-DIMM + consumer GPU",
    "l3": "L3: DIMM-PIM for long-context attention",
    "duplex": "Duplex: xPU + Logic-PIM for MoE/GQA",
    "flash": "LLM in a flash",
}


ARITH_UNITS = ("fpmul", "fpadd", "fpmac", "addtree", "maxtree", "fpexp", "fprecip")  # hw/arith


def arith_section() -> list[str]:
    recs = [m for m in characterization.load() if m.unit in ARITH_UNITS]
    if not recs:
        return ["No characterization snapshot yet: run `make characterize`."]
    lines = ["| unit | parameters | latency (cycles) | II | vectors checked | simulator | date |",
             "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    for m in recs:
        params = ", ".join(f"{k}={v}" for k, v in m.params.items())
        lines.append(f"| {m.unit} | {params} | {m.latency} | {m.ii:g} | {m.vectors} | {m.simulator} "
                     f"| {m.date} |")
    return lines


def to_html(markdown: str) -> str:
    """The report's Markdown subset (headings, tables, lists, images, paragraphs) as a standalone page."""
    out, table = [], False
    for line in markdown.splitlines():
        if line.startswith("|") and set(line.replace("|", "").strip()) <= set("-: "):
            continue  # table rule
        if line.startswith("|"):
            cells = [html.escape(c.strip()) for c in line.strip("|").split("|")]
            tag = "th" if not table else "td"
            out.append(("<table>" if not table else "") + "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells)
                       + "</tr>")
            table = True
            continue
        if table:
            out.append("</table>")
            table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{html.escape(line.lstrip('#').strip())}</h{level}>")
        elif line.startswith("- "):
            out.append(f"<li>{html.escape(line[2:])}</li>")
        elif "![" in line:
            out.append("".join(f'<img src="{src}" alt="{html.escape(alt)}">'
                               for alt, src in re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", line)))
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if table:
        out.append("</table>")
    style = "body{font-family:sans-serif;max-width:70em}table{border-collapse:collapse}td,th{border:1px solid #ccc;" \
        "padding:2px 6px;text-align:right}img{max-width:100%}"
    return f"<!doctype html><html><head><meta charset=utf-8><title>membound report</title><style>{style}</style>" \
        f"</head><body>{''.join(out)}</body></html>"


def report(papers: list[str], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    lines = ["# membound report", ""]
    for key in papers:
        lines += [f"## {PAPERS[key]}", ""]
        if key == "arith":
            lines += arith_section()
        elif key == "baselines":
            from sysmodel import baselines

            lines += baselines.report_lines()
        elif key == "memory":
            from sysmodel import memory

            lines += memory.report_lines()
        elif key == "deca":
            from sysmodel.deca import report as deca_report

            lines += deca_report.report_lines(out)
        else:
            lines.append("No system model for this paper yet.")
        lines.append("")
    text = "\n".join(lines)
    path = out / "report.md"
    path.write_text(text)
    (out / "report.html").write_text(to_html(text))
    print(text)
    print(f"wrote {path} and {out / 'report.html'}")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="membound")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report", help="write the Markdown report")
    r.add_argument("--paper", choices=[*PAPERS, "all"], default="all")
    r.add_argument("--out", type=Path, default=Path("build/report"))
    c = sub.add_parser("characterize", help="fold testbench records into the committed snapshot")
    c.add_argument("--records", type=Path, default=Path("build/characterization"))
    sw = sub.add_parser("sweep", help="run a parameter grid (TOML/YAML config) into a CSV")
    sw.add_argument("config", type=Path)
    sw.add_argument("--out", type=Path)
    sw.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    sw.add_argument("--scheduler", help="run on an existing Dask cluster, e.g. tcp://host:8786")
    a = ap.parse_args(argv)
    if a.cmd == "report":
        report(list(PAPERS) if a.paper == "all" else [a.paper], a.out)
    elif a.cmd == "sweep":
        from sysmodel import sweep

        try:
            cfg = sweep.load_config(a.config)
        except (ValueError, OSError) as e:
            print(f"membound sweep: {a.config}: {e}", file=sys.stderr)
            return 2
        sweep.sweep(cfg, a.out, a.workers, a.scheduler)
    else:
        data = characterization.collect(a.records)
        print(f"wrote {characterization.SNAPSHOT} ({len(data)} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
