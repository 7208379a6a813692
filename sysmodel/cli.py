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


def report(papers: list[str], out: Path, requests: int = 1000, quick: bool = False) -> Path:
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
        elif key == "l3":
            from sysmodel.l3 import report as l3_report

            lines += l3_report.report_lines(out, requests)
        elif key == "hermes":
            from sysmodel.hermes import report as hermes_report

            lines += hermes_report.report_lines(out, quick)
        elif key == "duplex":
            from sysmodel.duplex import report as duplex_report

            lines += duplex_report.report_lines(out, requests)
        elif key == "flash":
            from sysmodel.flash import report as flash_report

            lines += flash_report.report_lines(out, quick)
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


class Parser(argparse.ArgumentParser):
    """A user's mistake on the command line is one line on stderr and exit status 2 (no usage dump)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message}\n")


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return v


def serve(a: argparse.Namespace) -> int:
    """`membound serve`: run a request trace on a system and report throughput and latency percentiles."""
    from sysmodel import serving

    qps = [float(q) for q in a.qps.split(",")] if a.qps else [None]
    if any(q is not None and not q > 0 for q in qps):
        raise ValueError(f"--qps: {a.qps!r} not allowed; positive requests per second, comma-separated")
    system = serving.make_system(a.system, a.model, a.device, a.devices, a.routing)
    a.out.mkdir(parents=True, exist_ok=True)
    rows, results = [], []
    for q in qps:
        if Path(a.trace).suffix in (".csv", ".jsonl"):
            trace = serving.load_trace(Path(a.trace))
            trace = serving.Trace(trace.arrival[:a.requests], trace.prompt[:a.requests], trace.output[:a.requests],
                                  trace.name)
        else:
            trace = serving.make_trace(a.trace, a.requests, a.seed, q, a.prompt, a.output)
        res = serving.simulate(trace, system, a.max_batch, a.prefill_budget, a.concurrency, progress=True)
        results.append(res)
        rows.append({"qps": q, **res.summary()})
        s = rows[-1]
        print(f"{s['system']} | {s['trace']} | {s['requests']} requests, {s['output_tokens']} output tokens | "
              f"throughput {s['throughput_tok_s']:.2f} tokens/s")
        for metric, unit, scale in (("tbt", "ms", 1), ("t2ft", "s", 1), ("e2e", "s", 1)):
            sfx = "_ms" if unit == "ms" else "_s"
            print(f"  {metric.upper():5s} p50 {s[f'{metric}_p50{sfx}'] * scale:.4g} {unit}  "
                  f"p90 {s[f'{metric}_p90{sfx}'] * scale:.4g} {unit}  p99 {s[f'{metric}_p99{sfx}'] * scale:.4g} {unit}")
        res.write_csv(a.out / f"requests{'' if q is None else f'-qps{q:g}'}.csv")
    serving.plot_tbt_cdf(results, a.out / "tbt_cdf.png")
    written = [a.out / "tbt_cdf.png"]
    if len(qps) > 1:
        written.append(serving.plot_qps(rows, a.out / "throughput_vs_qps.png"))
    print(f"wrote per-request CSV(s) and {', '.join(p.name for p in written)} to {a.out}")
    return 0


def hermes(a: argparse.Namespace) -> int:
    """`membound hermes`: one Hermes generation on a generated or user-supplied activation trace."""
    from sysmodel.hermes import model as hm
    from sysmodel.hermes import paper as hp
    from sysmodel.hermes import workload as wl
    from sysmodel.models import load_model

    cfg = load_model(a.model)
    if a.trace:
        tr = wl.load_trace(a.trace)
        tr.layers = cfg.layers
    else:
        tr = wl.generate({"attn": cfg.hidden, "mlp": cfg.intermediate}, hp.SIM_LAYERS, hp.L_IN + hp.L_OUT, hp.L_IN,
                         a.batch, seed=a.seed, layers=cfg.layers)
    hw = hm.with_multipliers(hm.Hardware(), a.multipliers)
    run = hm.simulate(cfg, tr, hw, a.policy, host=a.host)
    mean = sum(run.token_s) / len(run.token_s)
    print(f"{run.system} | {cfg.name} | batch {run.batch} | {run.tokens_per_s:.2f} tokens/s | prompt "
          f"{run.prefill_s:.3f} s | decode {mean * 1e3:.2f} ms/token | reloads {run.reloads} | remaps {run.remaps}")
    return 0


def flash_bench(a: argparse.Namespace) -> int:
    """`membound flash-bench`: this machine's read throughput vs chunk size and threads, fitted and plotted."""
    from sysmodel.flash import bench

    threads = tuple(positive_int(t) for t in a.threads.split(","))
    out = a.out or bench.OUT
    res = bench.run(out, a.size << 20, threads=threads, seconds=a.seconds, progress=True)
    print(f"{res.filesystem} file system, {res.mode} reads, {res.size >> 20} MiB file")
    for n in threads:
        row = "  ".join(f"{c // 1024}K {v / 1e9:.2f}" for c, t, v in res.points if t == n)
        print(f"{n:3d} threads (GB/s): {row}")
    m = res.model()
    print(f"fit: peak {m.seq_peak / 1e9:.2f} GB/s, first-byte latency {m.l0 * 1e6:.0f} us, per-read "
          f"{m.per_thread_bw / 1e9:.2f} GB/s, useful parallel reads {m.queue:.1f}")
    print(f"wrote {out / 'flash_bench.json'} and {out / 'flash_bench.png'}")
    return 0


def flash_predictor(a: argparse.Namespace) -> int:
    """`membound flash-predictor`: train the low-rank predictor on a dump (or synthetic tokens) and rate it."""
    from sysmodel.flash import paper
    from sysmodel.flash import predictor as pr

    data = pr.load_dump(a.dump) if a.dump else pr.synthetic(a.tokens, seed=a.seed)
    n = int(data.x.shape[0] * 0.8)
    if n < 1 or n == data.x.shape[0]:
        raise ValueError(f"tokens: {data.x.shape[0]} not allowed; at least 2 (80% train, 20% test)")
    model = pr.train(pr.Activations(data.x[:n], data.active[:n]), a.rank, seed=a.seed)
    q = pr.evaluate(model, pr.Activations(data.x[n:], data.active[n:]))
    print(f"{a.dump or 'synthetic'} | rank {a.rank} | trained on {n} tokens, tested on {data.x.shape[0] - n} | "
          f"false negatives {q.fnr:.1%} (paper OPT-6.7B {paper.PREDICTOR_FNR:.0%}) | false positives {q.fpr:.1%} "
          f"(paper {paper.PREDICTOR_FPR:.0%}) | predicted active {q.predicted:.1%}, truly {q.active:.1%}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="membound")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    r = sub.add_parser("report", help="write the Markdown report")
    r.add_argument("--paper", choices=[*PAPERS, "all"], default="all")
    r.add_argument("--out", type=Path, default=Path("build/report"))
    r.add_argument("--requests", type=positive_int, default=1000,
                   help="requests per serving run (L3: the paper's 1000)")
    r.add_argument("--quick", action="store_true", help="smoke-run grids (Hermes: two models, batches 1 and 16)")
    c = sub.add_parser("characterize", help="fold testbench records into the committed snapshot")
    c.add_argument("--records", type=Path, default=Path("build/characterization"))
    sw = sub.add_parser("sweep", help="run a parameter grid (TOML/YAML config) into a CSV")
    sw.add_argument("config", type=Path)
    sw.add_argument("--out", type=Path)
    sw.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    sw.add_argument("--scheduler", help="run on an existing Dask cluster, e.g. tcp://host:8786")
    sv = sub.add_parser("serve", help="simulate serving a request trace: throughput, TBT/T2FT/E2E percentiles")
    sv.add_argument("--model", required=True, help="a model of the zoo (sysmodel/data/models)")
    sv.add_argument("--system", default="gpu", help="gpu, offload, hbm-pim, cpu, duplex")
    sv.add_argument("--routing", type=Path, help="duplex, MoE models: an expert routing trace (.npy of shape "
                    "(tokens, top_k), or .npz with an 'experts' array; sysmodel/duplex/routing.py)")
    sv.add_argument("--device", help="device name (sysmodel/devices.py); the system's default otherwise")
    sv.add_argument("--devices", type=positive_int, default=1, help="devices in tensor parallel")
    sv.add_argument("--trace", default="fixed", help="fixed, gaussian, openr1, dolphin, openthoughts, longbench, "
                    "or a .csv/.jsonl file (columns arrival_s, prompt_tokens, output_tokens)")
    sv.add_argument("--requests", type=positive_int, default=1000)
    sv.add_argument("--prompt", type=positive_int, default=128, help="prompt tokens (mean for gaussian)")
    sv.add_argument("--output", type=positive_int, default=128, help="output tokens (mean for gaussian)")
    sv.add_argument("--qps", help="Poisson arrivals at this rate; a comma list sweeps it (default: all at t=0)")
    sv.add_argument("--concurrency", type=positive_int, help="closed loop with this many requests in the system")
    sv.add_argument("--max-batch", type=positive_int, default=256)
    sv.add_argument("--prefill-budget", type=positive_int, help="prompt tokens per stage (chunked prefill)")
    sv.add_argument("--seed", type=int, default=1)
    sv.add_argument("--out", type=Path, default=Path("build/serve"))
    hm_ = sub.add_parser("hermes", help="one Hermes generation: tokens/s on a generated or .npz activation trace")
    hm_.add_argument("--model", required=True, help="a model of the zoo (sysmodel/data/models)")
    hm_.add_argument("--trace", type=Path, help="activation trace .npz (sysmodel/hermes/workload.py); generated "
                     "from the paper's statistics when absent")
    hm_.add_argument("--batch", type=positive_int, default=1, help="sequences (generated traces)")
    hm_.add_argument("--seed", type=int, default=1)
    hm_.add_argument("--policy", default="hermes", help="random, partition, adjustment, hermes (the ablation steps)")
    hm_.add_argument("--host", action="store_true", help="Hermes-host: the CPU computes the cold neurons")
    hm_.add_argument("--multipliers", type=positive_int, default=256, help="GEMV multipliers per NDP core")
    fb = sub.add_parser("flash-bench", help="measure this machine's flash read throughput vs chunk size and threads")
    fb.add_argument("--out", type=Path, help="where the scratch file, the results and the plot go (the disk "
                    "measured; default build/flash-bench, which the report overlays)")
    fb.add_argument("--size", type=positive_int, default=512, help="scratch file MiB")
    fb.add_argument("--threads", default="1,4,16,32", help="comma-separated thread counts")
    fb.add_argument("--seconds", type=float, default=0.6, help="reading time per (chunk, threads) point")
    fp = sub.add_parser("flash-predictor", help="train and rate the low-rank activation predictor")
    fp.add_argument("--dump", type=Path, help="activation dump .npz: x (tokens, d_model) and active (bool) or pre "
                    "(float) (tokens, d_ff); synthetic tokens (sysmodel/flash/predictor.py) when absent")
    fp.add_argument("--rank", type=positive_int, default=64)
    fp.add_argument("--tokens", type=positive_int, default=10000, help="synthetic tokens")
    fp.add_argument("--seed", type=int, default=1)
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:  # a mistake already said in one line (Parser.error), or --help
        return int(e.code or 0)
    if a.cmd == "report":
        report(list(PAPERS) if a.paper == "all" else [a.paper], a.out, a.requests, a.quick)
    elif a.cmd == "sweep":
        from sysmodel import sweep

        try:
            cfg = sweep.load_config(a.config)
        except (ValueError, OSError) as e:
            print(f"membound sweep: {a.config}: {e}", file=sys.stderr)
            return 2
        sweep.sweep(cfg, a.out, a.workers, a.scheduler)
    elif a.cmd == "flash-bench":
        try:
            return flash_bench(a)
        except (ValueError, argparse.ArgumentTypeError, OSError) as e:  # bad sizes or threads, an unwritable --out
            print(f"membound flash-bench: {e}", file=sys.stderr)
            return 2
    elif a.cmd == "flash-predictor":
        try:
            return flash_predictor(a)
        except ValueError as e:  # a missing or malformed dump, a rank past the dump's sizes
            print(f"membound flash-predictor: {e}", file=sys.stderr)
            return 2
    elif a.cmd == "hermes":
        try:
            return hermes(a)
        except ValueError as e:  # unknown model or policy, a bad trace file, an infeasible mapping
            print(f"membound hermes: {e}", file=sys.stderr)
            return 2
    elif a.cmd == "serve":
        try:
            return serve(a)
        except ValueError as e:  # bad values, unknown names, infeasible configurations
            print(f"membound serve: {e}", file=sys.stderr)
            return 2
    else:
        data = characterization.collect(a.records)
        print(f"wrote {characterization.SNAPSHOT} ({len(data)} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
