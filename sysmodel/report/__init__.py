"""`membound report`: every section in one list (:data:`SECTIONS`), each a function of one
:class:`Context`, assembled into ``report.md`` and ``report.html``.

Adding a design's section adds one :class:`Section` here: its key (``--paper``), title and the dotted path of
its ``report_lines(ctx)`` (imported only when the section runs, so a one-paper report loads one paper).
"""

from __future__ import annotations

import html
import importlib
import math
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sysmodel.outputs import write_text

DEFAULT_REQUESTS = 1000  # per serving run: L3's paper runs 1000; the committed cache and ledger hold these runs


@dataclass(frozen=True)
class Context:
    """What every section gets: where plots go, serving runs' request count, and ``full``: rerun every cached
    serving grid instead of reading the committed cache. (No smoke-size report: the default one reads the
    cache in about 20 s, where smoke-size grids without it took 418 s — issue 50.)"""

    out: Path
    requests: int = DEFAULT_REQUESTS
    full: bool = False
    cache_dir: Path | None = None  # where grids are cached (default: the committed sysmodel/data/report_cache)
    commit: bool = True  # a complete default report refreshes the committed ledger (tests say False)

    def grid(self, name: str, fn: Callable[..., Any], *args: Any, modules: tuple[str, ...] = ()) -> Any:
        """``fn(*args)``, a long serving grid: from the committed cache (``sysmodel.cache``) when its key —
        the arguments and the sources ``fn``'s module (and ``modules``: what it reaches dynamically) can
        import — matches and ``--full`` is not given; rerun otherwise, and stored unless it ran at another
        request count than the committed cache's (that would overwrite its entries with the user's runs)."""
        from sysmodel import cache

        return cache.cached(
            name,
            list(args),
            (fn.__module__, *modules),
            lambda: fn(*args),
            self.cache_dir or cache.COMMITTED,
            refresh=self.full,
            store=self.cache_dir is not None or self.requests == DEFAULT_REQUESTS,
        )


def _function(path: str) -> Callable[..., Any]:
    mod, fn = path.split(":")
    return getattr(importlib.import_module(mod), fn)


@dataclass(frozen=True)
class Section:
    """``lines``: "module:function" rendering the section; ``claims``: "module:function" returning the paper's
    claims as ledger rows (``sysmodel/designs/<paper>/claims.py``: ``claims(ctx)``), computed once, which the
    renderer then gets as its second argument; a section without claims renders from ``ctx`` alone."""

    key: str
    title: str
    lines: str
    claims: str = ""

    def rows(self, ctx: Context) -> list:
        return _function(self.claims)(ctx) if self.claims else []

    def run(self, ctx: Context, rows: list) -> list[str]:
        return _function(self.lines)(ctx, rows) if self.claims else _function(self.lines)(ctx)


SECTIONS = (
    Section("arith", "Arithmetic library (measured RTL cycle models)", "sysmodel.report.sections:arith_lines"),
    Section(
        "memory",
        "Memory timing: DRAM/HBM presets and PIM access modes",
        "sysmodel.report.memory:memory_lines",
        claims="sysmodel.designs.pim:claims",
    ),
    Section(
        "baselines",
        "Baselines: GPU-only, PCIe offloading, CPU-only, HBM-PIM attention",
        "sysmodel.report.sections:baselines_lines",
    ),
    Section(
        "compare",
        "Across designs: every registered system on one model and trace",
        "sysmodel.report.compare:report_lines",
    ),
    Section(
        "deca",
        "DECA: near-core weight decompression",
        "sysmodel.designs.deca.report:report_lines",
        claims="sysmodel.designs.deca.claims:claims",
    ),
    Section(
        "hermes",
        "Hermes: NDP-DIMM + consumer GPU",
        "sysmodel.designs.hermes.report:report_lines",
        claims="sysmodel.designs.hermes.claims:claims",
    ),
    Section(
        "l3",
        "L3: DIMM-PIM for long-context attention",
        "sysmodel.designs.l3.report:report_lines",
        claims="sysmodel.designs.l3.claims:claims",
    ),
    Section(
        "duplex",
        "Duplex: xPU + Logic-PIM for MoE/GQA",
        "sysmodel.designs.duplex.report:report_lines",
        claims="sysmodel.designs.duplex.claims:claims",
    ),
    Section(
        "flash",
        "LLM in a flash",
        "sysmodel.designs.flash.report:report_lines",
        claims="sysmodel.designs.flash.claims:claims",
    ),
    Section("gpu", "GPU model: the calibrated per-kernel profile", "sysmodel.report.gpu:report_lines"),
)
PAPERS = {s.key: s.title for s in SECTIONS}
PAPER_ORDER = ["deca", "hermes", "l3", "duplex", "flash"]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


_INLINE = [(re.compile(r"`([^`]+)`"), r"<code>\1</code>"), (re.compile(r"\*\*([^*]+)\*\*"), r"<strong>\1</strong>")]


def inline(text: str) -> str:
    """Escape, then render the report's inline Markdown: `code` and **bold**."""
    out = html.escape(text)
    for pat, rep in _INLINE:
        out = pat.sub(rep, out)
    return out


def to_html(markdown: str) -> str:
    """The report's Markdown subset (headings, tables, lists, images, paragraphs, inline code and bold) as a
    standalone page with a table of contents linking every section and figure."""
    out, toc, table, figure = [], [], False, 0
    for line in markdown.splitlines():
        if line.startswith("|") and set(line.replace("|", "").strip()) <= set("-: "):
            continue  # table rule
        if line.startswith("|"):
            cells = [inline(c.strip()) for c in line.strip("|").split("|")]
            tag = "th" if not table else "td"
            out.append(
                ("<table>" if not table else "") + "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"
            )
            table = True
            continue
        if table:
            out.append("</table>")
            table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            text = line.lstrip("#").strip()
            anchor = slug(text)
            if level in (2, 3):
                toc.append((level, anchor, text))
            out.append(f'<h{level} id="{anchor}">{inline(text)}</h{level}>')
        elif line.startswith("- "):
            out.append(f"<li>{inline(line[2:])}</li>")
        elif "![" in line:
            for alt, src in re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", line):
                figure += 1
                anchor = f"figure-{figure}"
                toc.append((4, anchor, alt))
                out.append(
                    f'<figure id="{anchor}"><img src="{src}" alt="{html.escape(alt)}">'
                    f"<figcaption>{inline(alt)}</figcaption></figure>"
                )
        elif line.startswith("**Table "):
            out.append(f'<p class="caption">{inline(line)}</p>')
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
    if table:
        out.append("</table>")
    items = "".join(f'<li class="l{lvl}"><a href="#{a}">{inline(t)}</a></li>' for lvl, a, t in toc)
    style = (
        "body{font-family:sans-serif;max-width:75em;margin:auto;padding:1em;text-align:left}"
        "table{border-collapse:collapse;margin:0.8em 0}td,th{border:1px solid #ccc;padding:3px 8px}"
        "td{text-align:right}td:first-child,th{text-align:left}img{max-width:100%}figure{margin:1em 0}"
        "figcaption{font-size:90%;color:#444}code{background:#f3f3f3;padding:0 2px}"
        "nav li.l3{margin-left:1.5em}nav li.l4{margin-left:3em;font-size:90%}p.caption{margin-bottom:0.2em}"
    )
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>membound report</title><style>{style}</style>"
        f"</head><body><nav><h2>Contents</h2><ul>{items}</ul></nav>{''.join(out)}</body></html>"
    )


CAPTION = "Table: "  # a section's line before a table: its caption, numbered by :func:`number`


def caption(text: str) -> str:
    """The caption line a section puts right before a table: what is compared, on what workload."""
    return CAPTION + text


def number(lines: list[str]) -> list[str]:
    """Number the captions: ``Table: x`` -> ``**Table N:** x``, ``![x](f)`` -> ``![Figure N: x](f)``."""
    out, tables, figures = [], 0, 0
    for line in lines:
        if line.startswith(CAPTION):
            tables += 1
            line = f"**Table {tables}:** {line[len(CAPTION) :]}"
        elif "![" in line:

            def fig(m: re.Match) -> str:
                nonlocal figures
                figures += 1
                return f"![Figure {figures}: {m.group(1)}]({m.group(2)})"

            line = re.sub(r"!\[([^\]]*)\]\(([^)]+)\)", fig, line)
        out.append(line)
    return out


LEDGER_HEAD = [
    "| paper | statements | claimed / not computed | rows | predictions | within 10% | median abs(log ratio) "
    "| paper inside band / banded | median band width | directions right / stated | fits | inputs | identities |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
]


def _ledger_row(name: str, s: dict, c: dict) -> str:
    share = f"{s['within']} ({s['within'] / s['predictions']:.0%})" if s["predictions"] else "-"
    med = f"{s['median_abs_log']:.3f}" if math.isfinite(s["median_abs_log"]) else "-"
    cat = (c["statements"] or "-", f"{c['claimed']} / {c['not_computed']}" if c["statements"] else "-")
    band = f"{s['in_band']} / {s['banded']}" if s["banded"] else "-"
    width = f"{math.exp(s['median_band']):.2f}x" if math.isfinite(s["median_band"]) else "-"
    return (
        f"| {name} | {cat[0]} | {cat[1]} | {s['rows']} | {s['predictions']} | {share} | {med} | {band} | {width} | "
        f"{s['directions_right']} / {s['directions']} | {s['fits']} | {s['inputs']} | {s['identities']} |"
    )


def ledger_lines(rs: list, papers: list[str] | None = None) -> list[str]:
    """The ledger's summary table (:func:`sysmodel.ledger.summary`, with each paper's statement catalogue,
    :func:`sysmodel.ledger.coverage`): one row per paper (in ``papers`` order) and, for several, the total."""
    from sysmodel.ledger import coverage, summary

    papers = papers or list(dict.fromkeys(r.paper for r in rs))
    lines = [
        caption(
            "The validation ledger in brief: each paper's quantitative statements (those the ledger computes "
            "and those it does not, with why), the numbers the kit computes, how many are predictions, how "
            "many of those land within 10%, and the directions of stated comparisons (fits, inputs and "
            "identities are never counted as reproduced)"
        ),
        *LEDGER_HEAD,
    ]
    cov = {p: coverage(p) for p in papers}
    lines += [_ledger_row(p, summary([r for r in rs if r.paper == p]), cov[p]) for p in papers]
    if len(papers) > 1:
        total = {k: sum(c[k] for c in cov.values()) for k in ("statements", "claimed", "not_computed")}
        lines.append(_ledger_row("all", summary(rs), total))
    return lines


def report(keys: list[str], ctx: Context, echo: bool = True) -> Path:
    """Run the sections ``keys`` and write report.md and report.html (atomically) under ``ctx.out``, with the
    validation ledger (``ledger.csv``, ``ledger.parquet``) of every paper number the sections compared: its
    summary heads the report and each section. A complete report also refreshes the committed
    ledger (``sysmodel/data/ledger.csv``)."""
    from sysmodel import ledger
    from sysmodel.progress import progress

    body = []
    chosen = [s for s in SECTIONS if s.key in keys]
    bar = progress(len(chosen), "report")
    rows = []
    for s in chosen:
        bar.set_postfix_str(s.key)
        start = time.perf_counter()
        mine = s.rows(ctx)
        lines = s.run(ctx, mine)
        rows += mine
        head = [*ledger_lines(mine), ""] if mine else []
        body += [f"## {s.title}", "", *head, *lines, ""]
        bar.update()
        print(f"report: {s.key} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    bar.close()
    top = (
        [
            "## Validation ledger",
            "",
            "Every number of the five papers this report compares, in `ledger.csv`: paper, "
            "location, quantity, workload, paper and model values, ratio, kind (prediction, fit, input, identity), the "
            "stated direction and whether the model agrees, and for each prediction outside [0.9, 1.1] or the "
            "wrong way, its named cause.",
            "",
            *ledger_lines(rows, PAPER_ORDER),
            "",
        ]
        if rows
        else []
    )
    text = "\n".join(number(["# membound report", "", *top, *body]))
    path = write_text(ctx.out / "report.md", text)
    write_text(ctx.out / "report.html", to_html(text))
    written = [path, ctx.out / "report.html"]
    if rows:
        written += ledger.write(rows, ctx.out)
        if set(keys) == set(PAPERS) and ctx.commit and ctx.requests == DEFAULT_REQUESTS:
            written.append(ledger.write_committed(rows))
    if echo:
        print(text)
    print(f"wrote {', '.join(str(p) for p in written)}")
    return path
