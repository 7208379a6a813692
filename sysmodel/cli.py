"""The `membound` command. Every user mistake — a bad option, a missing file, an infeasible configuration —
is one line on stderr naming it and exit status 2, never a traceback; Ctrl-C exits 130 and a closed pipe
(``membound serve ... | head``) exits quietly, both leaving no half-written file (``sysmodel.outputs``)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

USAGE_ERROR, INTERRUPTED, PIPE_CLOSED = 2, 130, 141


class Parser(argparse.ArgumentParser):
    """A user's mistake on the command line is one line on stderr and exit status 2 (no usage dump)."""

    def error(self, message: str):
        self.exit(USAGE_ERROR, f"{self.prog}: {message}\n")


def positive_int(text: str) -> int:
    try:
        v = float(text)
    except ValueError:
        v = 0
    if not (math.isfinite(v) and v == int(v) and v >= 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(v)


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number > 0")
    return v


def number_list(text: str, option: str, kind=positive_float) -> list:
    """A comma-separated list for ``option``; a bad item is a ValueError naming the option."""
    try:
        return [kind(t) for t in text.split(",")]
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"{option}: {e}") from None


def out_dir(a: argparse.Namespace, default: Path):
    """``--out`` checked and created (sysmodel.outputs.output_dir): the default with its parents, a user's
    directory only under an existing parent."""
    from sysmodel.outputs import output_dir

    return output_dir(a.out or default, "--out", default=a.out is None)


# --- commands --------------------------------------------------------------------------------------------


def cmd_report(a: argparse.Namespace) -> int:
    from sysmodel.report import PAPERS, Context, report

    with out_dir(a, Path("build/report")) as out:
        report(
            list(PAPERS) if a.paper == "all" else [a.paper], Context(out, a.requests, a.quick, a.full), echo=not a.brief
        )
    return 0


def cmd_characterize(a: argparse.Namespace) -> int:
    from sysmodel import characterization

    added, replaced, kept = characterization.collect(a.records)
    print(f"wrote {characterization.SNAPSHOT}: {len(added)} added, {len(replaced)} replaced, {len(kept)} kept")
    for what, recs in (("added", added), ("replaced", replaced)):
        for r in recs:
            print(f"  {what}: {r.unit} {r.params}")
    return 0


def cmd_sweep(a: argparse.Namespace) -> int:
    from sysmodel import sweep

    if a.workers is not None and a.workers < 1:
        raise ValueError(f"--workers: {a.workers} not allowed; a whole number >= 1")
    cfg = sweep.load_config(a.config)
    sweep.sweep(cfg, a.out, a.workers, a.scheduler)
    return 0


def _system_settings(a: argparse.Namespace) -> list[str]:
    """``--set`` pairs plus the ``--device``/``--devices``/``--routing`` shortcuts, for systems that have them."""
    from sysmodel import systems

    entry = systems.get(a.system)
    pairs = list(a.set or [])
    for opt, key in (("device", "device"), ("devices", "devices"), ("routing", "routing")):
        v = getattr(a, opt)
        if v is not None:
            if key not in {p.name for p in entry.params}:
                raise ValueError(
                    f"--{opt}: system {a.system} has no {key} parameter; its parameters: "
                    f"{', '.join(p.name for p in entry.params) or 'none'}"
                )
            pairs.append(f"{key}={v}")
    return pairs


def load_requests(a: argparse.Namespace, qps: float | None, command: str):
    """The trace ``--trace`` names: a generated one, or a user's file (``--qps`` replaces its arrivals; asking
    for more requests than it has runs them all); each adjustment is said on stderr."""
    from sysmodel import serving

    if Path(a.trace).suffix not in (".csv", ".jsonl"):
        return serving.make_trace(a.trace, a.requests or 1000, a.seed, qps, a.prompt, a.output)
    trace = serving.load_trace(Path(a.trace))
    if a.requests and a.requests > len(trace):
        print(
            f"membound {command}: note: {a.trace} has {len(trace)} requests; running all of them, not "
            f"--requests {a.requests}",
            file=sys.stderr,
        )
    n = min(a.requests or len(trace), len(trace))
    arrival = trace.arrival[:n]
    if qps is not None:
        import numpy as np

        print(
            f"membound {command}: note: --qps {qps:g} replaces {a.trace}'s arrival times with Poisson arrivals "
            f"(seed {a.seed})",
            file=sys.stderr,
        )
        arrival = serving.poisson_arrivals(np.random.default_rng(a.seed), qps, n)
    return serving.Trace(
        arrival, trace.prompt[:n], trace.output[:n], trace.name if qps is None else f"{trace.name}@{qps:g}qps"
    )


def cmd_serve(a: argparse.Namespace) -> int:
    """Run a request trace on a registered system (or replicas of it): throughput, latency percentiles, energy."""
    from sysmodel import replicas, serving, systems

    qps = number_list(a.qps, "--qps") if a.qps else [None]
    if a.qps and a.concurrency:
        raise ValueError("--qps, --concurrency: choose one (open-loop Poisson arrivals, or a closed loop)")
    system = systems.build(a.system, a.model, _system_settings(a))
    if a.profile is not None:
        from sysmodel.profile import ProfiledSystem

        system = ProfiledSystem(system, a.profile)
    with out_dir(a, Path("build/serve")) as out:
        rows, results, per_replica = [], [], []
        traces = [load_requests(a, q, "serve") for q in qps]
        runs = replicas.run_all(
            traces,
            system,
            a.dask,
            max_batch=a.max_batch,
            prefill_budget=a.prefill_budget,
            concurrency=a.concurrency,
            progress=a.replicas == a.pp == 1 and a.dask is None,
            **_parallel(a),
            **_scheduling(a),
        )
        for q, (res, each) in zip(qps, runs, strict=True):
            results.append(res)
            per_replica.append(each)
            rows.append({"qps": q, **res.summary()})
            s = rows[-1]
            load = f"closed loop at {a.concurrency}" if a.concurrency else ("all at t=0" if q is None else f"{q:g} QPS")
            print(
                f"{s['system']} | {s['trace']} ({load}) | {s['requests']} requests, {s['output_tokens']} output "
                f"tokens | throughput {s['throughput_tok_s']:.2f} tokens/s | {s['joules_per_token']:.3g} J/token"
            )
            for metric, unit in (("tbt", "ms"), ("t2ft", "s"), ("e2e", "s")):
                sfx = "_ms" if unit == "ms" else "_s"
                p50, p90, p99 = (s[f"{metric}_p{q}{sfx}"] for q in (50, 90, 99))
                print(f"  {metric.upper():5s} p50 {p50:.4g} {unit}  p90 {p90:.4g} {unit}  p99 {p99:.4g} {unit}")
            print(
                f"  scheduler {s['scheduler']}: scheduling delay p50 {s['scheduling_delay_p50_s']:.4g} s, "
                f"p99 {s['scheduling_delay_p99_s']:.4g} s"
                + (
                    f"; {s['preemptions']} preemptions ({a.preempt}), {s['recomputed_tokens']} tokens recomputed, "
                    f"{s['swapped_gb']:.3g} GB swapped"
                    if "preemptions" in s
                    else ""
                )
            )
            if a.slo_tbt or a.slo_ttft:
                g = res.goodput(a.slo_tbt / 1e3 if a.slo_tbt else None, a.slo_ttft)
                rows[-1].update({f"goodput_{k}": v for k, v in g.items()})
                print(
                    f"  goodput: {g['met']} of {s['requests']} requests meet the SLO ({g['share']:.1%}), "
                    f"{g['requests_per_s']:.4g} requests/s, {g['tokens_per_s']:.4g} tokens/s"
                )
            res.write_csv(out / f"requests{'' if q is None else f'-qps{q:g}'}.csv")
        labels = None if len(qps) == 1 else [f"{system.name} at {q:g} QPS" for q in qps]
        kv_runs = [r for each in per_replica for r in each]  # KV over time is per engine
        kv_labels = [
            f"{lab}{f', engine {j}' if len(each) > 1 else ''}"
            for lab, each in zip(labels or [system.name] * len(qps), per_replica, strict=True)
            for j in range(len(each))
        ]
        written = [
            serving.plot_tbt_cdf(results, out / "tbt_cdf.png", labels),
            serving.plot_kv(kv_runs, out / "kv_utilisation.png", kv_labels),
        ]
        if len(qps) > 1:
            written.append(serving.plot_qps(rows, out / "throughput_vs_qps.png"))
        print(f"wrote per-request CSV(s) and {', '.join(p.name for p in written)} to {out}")
    return 0


def _scheduling(a: argparse.Namespace) -> dict:
    """The scheduler options of serve and compare, checked before anything runs."""
    from sysmodel.scheduling import PREEMPT, get_scheduler

    get_scheduler(a.scheduler)
    if a.preempt not in PREEMPT:
        raise ValueError(f"--preempt: {a.preempt!r} not allowed; allowed: {', '.join(PREEMPT)}")
    if not 0 <= a.watermark < 1:
        raise ValueError(f"--watermark: {a.watermark} not allowed; a share of the blocks in [0, 1)")
    return {
        "scheduler": a.scheduler,
        "block_size": a.block_size,
        "watermark": a.watermark,
        "preempt": a.preempt,
        "max_batched_tokens": a.max_batched_tokens,
    }


def _parallel(a: argparse.Namespace) -> dict:
    """Replicas, router and pipeline stages of serve and compare, checked before anything runs."""
    from sysmodel.devices import LINKS
    from sysmodel.replicas import ROUTERS

    if a.router not in ROUTERS:
        raise ValueError(f"--router: {a.router!r} not allowed; allowed: {', '.join(ROUTERS)}")
    if a.pp_link is not None and a.pp_link not in LINKS:
        raise ValueError(f"--pp-link: unknown {a.pp_link!r}; known: {', '.join(sorted(LINKS))}")
    return {"replicas": a.replicas, "router": a.router, "pp": a.pp, "pp_link": a.pp_link}


def cmd_compare(a: argparse.Namespace) -> int:
    """The same model and trace on every chosen system: one table, two plots, a provenance sidecar."""
    from sysmodel import compare, compare_report, systems

    known = list(systems.entries())
    names = known if a.systems == "all" else [n.strip() for n in a.systems.split(",") if n.strip()]
    for n in names:
        systems.get(n)  # an unknown name is an error naming it
    if not names:
        raise ValueError("--systems: empty; a comma-separated list of registered systems, or all")
    settings = compare.split_settings(a.set or [], names)
    for n in names:  # validate every --set before anything runs
        systems.get(n).settings(settings[n])
    from sysmodel.models import load_model

    load_model(a.model)
    with out_dir(a, Path("build/compare")) as out:
        trace = load_requests(a, a.qps, "compare")
        rows, prov = compare.run(
            a.model, trace, names, settings, a.max_batch, scheduling=_scheduling(a), parallel=_parallel(a)
        )
        title = f"{a.model} on {trace.name} ({len(trace)} requests)"
        print(title)
        print("\n".join(compare_report.terminal_lines(rows)))
        paths = compare_report.write(rows, prov, title, out)
        if a.provenance:
            print("\nProvenance (full record in compare_provenance.json):")
            print("\n".join(compare_report.provenance_lines(prov)))
        print(f"wrote {', '.join(p.name for p in paths)} to {out}")
    return 0


def cmd_systems(a: argparse.Namespace) -> int:
    from sysmodel import systems

    for name, e in systems.entries().items():
        print(f"{name}: {e.description}")
        for p in e.params:
            print(f"    {p.name} = {p.default!r}: {p.help}{p.allowed()}")
    return 0


def cmd_hermes(a: argparse.Namespace) -> int:
    """One Hermes generation on a generated or user-supplied activation trace."""
    from sysmodel.hermes import model as hm
    from sysmodel.hermes import paper as hp
    from sysmodel.hermes import workload as wl
    from sysmodel.models import load_model

    cfg = load_model(a.model)
    if a.policy not in hm.POLICIES:
        raise ValueError(f"--policy: {a.policy!r} not allowed; allowed: {', '.join(hm.POLICIES)}")
    if a.trace:
        tr = wl.load_trace(a.trace)
        tr.layers = cfg.layers
    else:
        tr = wl.generate(
            {"attn": cfg.hidden, "mlp": cfg.intermediate},
            hp.SIM_LAYERS,
            hp.L_IN + hp.L_OUT,
            hp.L_IN,
            a.batch,
            wl.stats_for(cfg.name),
            seed=a.seed,
            layers=cfg.layers,
        )
    hw = hm.with_multipliers(hm.Hardware(), a.multipliers)
    run = hm.simulate(cfg, tr, hw, a.policy, host=a.host, progress=True)
    mean = sum(run.token_s) / len(run.token_s)
    print(
        f"{run.system} | {cfg.name} | batch {run.batch} | {run.tokens_per_s:.2f} tokens/s | prompt "
        f"{run.prefill_s:.3f} s | decode {mean * 1e3:.2f} ms/token | reloads {run.reloads} | remaps {run.remaps}"
    )
    return 0


def cmd_dram(a: argparse.Namespace) -> int:
    """One channel of a preset (or a PIM view of it) on a generated trace: bandwidth, refreshes, and with
    --log the command log as CSV, replayed by the checker first."""
    import numpy as np

    from sysmodel import memory as mm
    from sysmodel import memory_check

    if a.log is not None:
        from sysmodel.outputs import check_dir

        if a.log.is_dir():
            raise ValueError(f"--log: {a.log} is a directory; name a file")
        if not a.log.parent.is_dir():
            raise ValueError(f"--log: {a.log.parent} does not exist (create it, or choose another directory)")
        check_dir(a.log.parent, "--log")
    p = mm.get_preset(a.preset)
    if a.mode:
        p = mm.pim_view(p, a.mode)
    p = mm.replace(p, org=mm.replace(p.org, channels=1))
    if not 0 <= a.writes <= 1:
        raise ValueError(f"--writes: {a.writes} not allowed; a share in [0, 1]")
    addrs = mm.pattern_addrs(p, a.pattern, a.requests, a.stride, seed=a.seed)
    writes = np.random.default_rng(a.seed).random(len(addrs)) < a.writes
    res = mm.simulate(p, addrs, writes, refresh=a.refresh, log=a.log is not None)
    print(
        f"{p.name} | {a.pattern} | {len(addrs)} requests ({a.writes:.0%} writes) | refresh {a.refresh} | "
        f"{res.bandwidth / 1e9:.2f} GB/s of {p.peak_bw() / 1e9:.2f} peak ({res.bandwidth / p.peak_bw():.1%}) | "
        f"{res.cycles} cycles | {res.refreshes} refreshes"
    )
    if a.log is not None:
        assert res.log is not None  # simulate() logged: log=True
        bad = memory_check.check(p, res.log, refresh=a.refresh != "none")
        if bad:
            raise RuntimeError(f"the command log breaks a timing constraint: {bad[0]}")
        res.write_log(a.log)
        print(f"wrote {len(res.log)} commands to {a.log} (timing checker: legal)")
    return 0


def cmd_flash_bench(a: argparse.Namespace) -> int:
    """This machine's flash read throughput vs chunk size and threads, fitted and plotted."""
    from sysmodel.flash import bench

    threads = tuple(number_list(a.threads, "--threads", positive_int))
    with out_dir(a, bench.OUT) as out:
        res = bench.run(out, a.size << 20, threads=threads, seconds=a.seconds, progress=True)
    print(f"{res.filesystem} file system, {res.mode} reads, {res.size >> 20} MiB file")
    for n in threads:
        row = "  ".join(f"{c // 1024}K {v / 1e9:.2f}" for c, t, v in res.points if t == n)
        print(f"{n:3d} threads (GB/s): {row}")
    m = res.model()
    print(
        f"fit: peak {m.seq_peak / 1e9:.2f} GB/s, first-byte latency {m.l0 * 1e6:.0f} us, per-read "
        f"{m.per_thread_bw / 1e9:.2f} GB/s, useful parallel reads {m.queue:.1f}"
    )
    print(f"wrote {out / 'flash_bench.json'} and {out / 'flash_bench.png'}")
    return 0


def cmd_flash_predictor(a: argparse.Namespace) -> int:
    """Train the low-rank predictor on a dump (or synthetic tokens) and rate it."""
    from sysmodel.flash import paper
    from sysmodel.flash import predictor as pr

    data = pr.load_dump(a.dump) if a.dump else pr.synthetic(a.tokens, seed=a.seed)
    n = int(data.x.shape[0] * 0.8)
    if n < 1 or n == data.x.shape[0]:
        raise ValueError(f"tokens: {data.x.shape[0]} not allowed; at least 2 (80% train, 20% test)")
    model = pr.train(pr.Activations(data.x[:n], data.active[:n]), a.rank, seed=a.seed, progress=True)
    q = pr.evaluate(model, pr.Activations(data.x[n:], data.active[n:]))
    print(
        f"{a.dump or 'synthetic'} | rank {a.rank} | trained on {n} tokens, tested on {data.x.shape[0] - n} | "
        f"false negatives {q.fnr:.1%} (paper OPT-6.7B {paper.PREDICTOR_FNR:.0%}) | false positives {q.fpr:.1%} "
        f"(paper {paper.PREDICTOR_FPR:.0%}) | predicted active {q.predicted:.1%}, truly {q.active:.1%}"
    )
    return 0


# --- the parser ------------------------------------------------------------------------------------------


def _trace_options(p: argparse.ArgumentParser, requests_help: str) -> None:
    p.add_argument("--model", required=True, help="a model of the zoo (sysmodel/data/models)")
    p.add_argument(
        "--trace",
        default="fixed",
        help="fixed, gaussian, openr1, dolphin, openthoughts, longbench, "
        "or a .csv/.jsonl file (columns arrival_s, prompt_tokens, output_tokens)",
    )
    p.add_argument("--requests", type=positive_int, help=requests_help)
    p.add_argument("--prompt", type=positive_int, default=128, help="prompt tokens (mean for gaussian)")
    p.add_argument("--output", type=positive_int, default=128, help="output tokens (mean for gaussian)")
    p.add_argument("--max-batch", type=positive_int, default=256, help="requests per stage at most")
    p.add_argument(
        "--scheduler",
        default="vllm",
        help="vllm (paged, preempting; the default), reserve (whole KV "
        "reserved at admission, output lengths known), orca, orca-reserve, sarathi (sysmodel/scheduling.py)",
    )
    p.add_argument(
        "--max-batched-tokens",
        type=positive_int,
        help="vllm: prompt tokens one prefill iteration admits (default vLLM's 2048; a longer prompt runs alone)",
    )
    p.add_argument("--block-size", type=positive_int, default=16, help="paged schedulers: tokens per KV block")
    p.add_argument(
        "--watermark", type=float, default=0.01, help="paged schedulers: share of blocks kept free at admission, 0-1"
    )
    p.add_argument("--preempt", default="recompute", help="paged schedulers: recompute or swap (over the host link)")
    p.add_argument("--replicas", type=positive_int, default=1, help="copies of the system behind a router")
    p.add_argument(
        "--router",
        default="round-robin",
        help="round-robin, least-outstanding or kv-aware (fewest KV bytes held; sysmodel/replicas.py)",
    )
    p.add_argument(
        "--pp",
        type=positive_int,
        default=1,
        help="pipeline stages: copies of the system's hardware, "
        "each holding 1/pp of the layers, one virtual engine per stage (sysmodel/pipeline.py)",
    )
    p.add_argument(
        "--pp-link",
        help="the link between pipeline stages (default: the system's device interconnect; "
        "pcie4x16, pcie5x16, nvlink-a100, nvlink-h100, dimm-link)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, help="output directory (its parent must exist)")


def parser() -> Parser:
    ap = Parser(prog="membound", description="membound: RTL-backed system models of memory-bound LLM inference")
    sub = ap.add_subparsers(dest="cmd", parser_class=Parser, metavar="COMMAND")
    r = sub.add_parser("report", help="write the Markdown and HTML report")
    r.add_argument("--paper", choices=["all", *_papers()], default="all")
    r.add_argument("--out", type=Path, help="output directory (default build/report)")
    r.add_argument(
        "--requests", type=positive_int, default=1000, help="requests per serving run (L3: the paper's 1000)"
    )
    r.add_argument("--quick", action="store_true", help="smoke-run grids (Hermes: two models, batches 1 and 16)")
    r.add_argument(
        "--full",
        action="store_true",
        help="rerun every serving grid instead of reading the committed cache (sysmodel/data/report_cache)",
    )
    r.add_argument("--brief", action="store_true", help="do not echo the report to the terminal")
    c = sub.add_parser("characterize", help="merge testbench records into the committed snapshot")
    c.add_argument("--records", type=Path, default=Path("build/characterization"))
    sw = sub.add_parser("sweep", help="run a parameter grid (TOML/YAML config) into a CSV")
    sw.add_argument("config", type=Path)
    sw.add_argument("--out", type=Path)
    sw.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    sw.add_argument("--scheduler", help="run on an existing Dask cluster, e.g. tcp://host:8786")
    sub.add_parser("systems", help="list the registered systems with their parameters")
    sv = sub.add_parser("serve", help="serve a request trace on a system: throughput, TBT/T2FT/E2E, J/token")
    _trace_options(sv, "requests (default 1000; a file: all of its rows)")
    sv.add_argument("--system", default="gpu", help="a registered system (`membound systems`)")
    sv.add_argument("--set", action="append", metavar="KEY=VALUE", help="a system parameter (repeatable)")
    sv.add_argument("--device", help="shortcut for --set device=NAME (systems with a device parameter)")
    sv.add_argument("--devices", type=positive_int, help="shortcut for --set devices=N")
    sv.add_argument(
        "--routing",
        type=Path,
        help="shortcut for --set routing=FILE (duplex: an expert routing "
        "trace, .npy (tokens, top_k) or .npz with an 'experts' array)",
    )
    sv.add_argument(
        "--qps",
        help="Poisson arrivals at this rate; a comma list sweeps it (default: all at t=0; "
        "with a trace file it replaces the file's arrival times)",
    )
    sv.add_argument("--concurrency", type=positive_int, help="closed loop with this many requests in the system")
    sv.add_argument(
        "--prefill-budget",
        type=positive_int,
        help="tokens per stage (chunked prefill: reserve counts "
        "prompt tokens, sarathi prompt and decode tokens, default 512)",
    )
    sv.add_argument(
        "--profile",
        type=Path,
        help="measured iteration times replacing the system's stage times (CSV: per operator class, "
        "or decode_reqs, decode_ctx, prefill_tokens, seconds; sysmodel/profile.py)",
    )
    sv.add_argument("--slo-tbt", type=positive_float, help="goodput: the longest gap between tokens allowed (ms)")
    sv.add_argument("--slo-ttft", type=positive_float, help="goodput: the longest time to first token allowed (s)")
    sv.add_argument(
        "--dask", metavar="ADDRESS", help="run the --qps values as tasks on an existing Dask cluster (tcp://host:8786)"
    )
    cp = sub.add_parser("compare", help="one model and trace on every system: tokens/s, TBT, T2FT, J/token, area")
    _trace_options(cp, "requests (default 1000; a file: all of its rows)")
    cp.add_argument("--systems", default="all", help="comma-separated registered systems, or all")
    cp.add_argument("--set", action="append", metavar="SYSTEM.KEY=VALUE", help="a system parameter (repeatable)")
    cp.add_argument("--qps", type=positive_float, help="Poisson arrivals at this rate (default: all at t=0)")
    cp.add_argument("--provenance", action="store_true", help="also print what fed each system's numbers")
    hm_ = sub.add_parser("hermes", help="one Hermes generation: tokens/s on a generated or .npz activation trace")
    hm_.add_argument("--model", required=True, help="a model of the zoo (sysmodel/data/models)")
    hm_.add_argument(
        "--trace",
        type=Path,
        help="activation trace .npz (sysmodel/hermes/workload.py); generated from the paper's statistics when absent",
    )
    hm_.add_argument("--batch", type=positive_int, default=1, help="sequences (generated traces)")
    hm_.add_argument("--seed", type=int, default=1)
    hm_.add_argument("--policy", default="hermes", help="random, partition, adjustment, hermes (the ablation steps)")
    hm_.add_argument("--host", action="store_true", help="Hermes-host: the CPU computes the cold neurons")
    hm_.add_argument("--multipliers", type=positive_int, default=256, help="GEMV multipliers per NDP core")
    dr = sub.add_parser("dram", help="one DRAM/HBM channel on a generated trace: bandwidth, refresh, command log")
    dr.add_argument("--preset", default="ddr4-3200", help="ddr4-3200, ddr4-3200-hermes, ddr5-4800, hbm3")
    dr.add_argument("--mode", choices=["all_bank", "bank_bundle", "rank_level"], help="a PIM access mode's view")
    dr.add_argument("--pattern", default="streaming", help="streaming, random, strided")
    dr.add_argument("--requests", type=positive_int, default=100000, help="bursts")
    dr.add_argument("--stride", type=positive_int, default=1, help="strided: bursts between requests")
    dr.add_argument("--writes", type=float, default=0.0, help="share of writes, 0-1")
    dr.add_argument("--refresh", default="on-time", help="on-time, postpone, per-bank (DDR5, HBM3), none")
    dr.add_argument("--seed", type=int, default=0)
    dr.add_argument(
        "--log", type=Path, help="write the command log here (CSV: cycle, channel, rank, bankgroup, bank, row, command)"
    )
    fb = sub.add_parser("flash-bench", help="measure this machine's flash read throughput vs chunk size and threads")
    fb.add_argument(
        "--out",
        type=Path,
        help="where the scratch file, the results and the plot go (the disk "
        "measured; default build/flash-bench, which the report overlays)",
    )
    fb.add_argument("--size", type=positive_int, default=512, help="scratch file MiB")
    fb.add_argument("--threads", default="1,4,16,32", help="comma-separated thread counts")
    fb.add_argument("--seconds", type=positive_float, default=0.6, help="reading time per (chunk, threads) point")
    fp = sub.add_parser("flash-predictor", help="train and rate the low-rank activation predictor")
    fp.add_argument(
        "--dump",
        type=Path,
        help="activation dump .npz: x (tokens, d_model) and active (bool) or pre "
        "(float) (tokens, d_ff); synthetic tokens (sysmodel/flash/predictor.py) when absent",
    )
    fp.add_argument("--rank", type=positive_int, default=64)
    fp.add_argument("--tokens", type=positive_int, default=10000, help="synthetic tokens")
    fp.add_argument("--seed", type=int, default=1)
    return ap


def _papers() -> list[str]:
    from sysmodel.report import PAPERS

    return list(PAPERS)


COMMANDS = {
    "report": cmd_report,
    "characterize": cmd_characterize,
    "sweep": cmd_sweep,
    "serve": cmd_serve,
    "compare": cmd_compare,
    "systems": cmd_systems,
    "hermes": cmd_hermes,
    "dram": cmd_dram,
    "flash-bench": cmd_flash_bench,
    "flash-predictor": cmd_flash_predictor,
}


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:  # a mistake already said in one line (Parser.error), or --help
        return int(e.code or 0)
    if a.cmd is None:
        ap.print_usage(sys.stderr)
        print("membound: a command is required (membound --help lists them)", file=sys.stderr)
        return USAGE_ERROR
    try:
        return COMMANDS[a.cmd](a)
    except BrokenPipeError:  # the reader went away (`| head`): say nothing more, on a stdout that stays quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED
    except (ValueError, OSError) as e:  # a user's mistake: bad values, names, files; infeasible configurations
        print(f"membound {a.cmd}: {e}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print(f"membound {a.cmd}: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
