"""The `membound` command. Every user mistake — a bad option, a missing file, an infeasible configuration —
is one line on stderr naming it and exit status 2, never a traceback; Ctrl-C exits 130 and a closed pipe
(``membound serve ... | head``) exits quietly, both leaving no half-written file (``sysmodel.outputs``)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

USAGE_ERROR, INTERRUPTED, PIPE_CLOSED = 2, 130, 141
DEFAULT_TOKENS = 128  # --prompt and --output of the generated fixed and gaussian traces
SERVING_SECTIONS = ("compare", "duplex", "l3")  # the report sections whose serving runs take --requests (ctx.requests)
SYNTHETIC_TOKENS = 10000  # flash-predictor's synthetic tokens when no --dump is given
# Sizes past which a run would hold this machine for minutes and gigabytes (measured 2026-11-28: dram about
# 130 bytes and 2 us a request at 3 million, 1.3 GB at the bound; flash-predictor 38 KB and 2.1 ms a token
# at 40,000, 3.8 GB at the bound): refused by name rather than left to swap or the kernel's OOM killer
MAX_DRAM_REQUESTS, MAX_SYNTHETIC_TOKENS = 10_000_000, 100_000


class Help(argparse.HelpFormatter):
    """``--help`` shows every option's default beside its help (not a default that is no value: None, off)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
            text += " (default: %(default)s)"
        return text

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        # names such as round-robin or least-outstanding stay whole
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """A user's mistake on the command line is one line on stderr and exit status 2 (no usage dump)."""

    def __init__(self, *args, **kw) -> None:
        kw.setdefault("formatter_class", Help)
        super().__init__(*args, **kw)

    def error(self, message: str):
        self.exit(USAGE_ERROR, f"{self.prog}: {message}\n")


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"


def whole(text: str, minimum: int) -> int:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v == int(v) and v >= minimum):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= {minimum}")
    return int(v)


def positive_int(text: str) -> int:
    return whole(text, 1)


def seed(text: str) -> int:
    """A random seed: numpy's generators take whole numbers >= 0."""
    return whole(text, 0)


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
    from sysmodel.outputs import recorded, replace_outputs
    from sysmodel.report import PAPERS, Context, report

    def files(out: Path) -> dict[Path, tuple[int, int]]:
        return {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in out.iterdir() if p.is_file()}

    papers = list(PAPERS) if a.paper == "all" else [a.paper]
    if a.requests is not None and not set(papers) & set(SERVING_SECTIONS):  # an option that would do nothing
        raise ValueError(
            f"--requests: --paper {a.paper} runs no serving requests (only {', '.join(SERVING_SECTIONS)} do)"
        )
    with out_dir(a, Path("build/report")) as out:
        before, ours = files(out), recorded(out, "report")
        report(papers, Context(out, a.requests or Context.requests, full=a.full), echo=not a.brief)
        # what this run wrote (the sections save their plots themselves): new or replaced files, never a file
        # that was there before and not the report's (someone else's, changed meanwhile)
        wrote = [p for p, stamp in files(out).items() if p not in before or (before[p] != stamp and p.name in ours)]
        replace_outputs(out, "report", wrote)
    return 0


def cmd_characterize(a: argparse.Namespace) -> int:
    from sysmodel.cost import characterization
    from sysmodel.systems import required_records

    added, replaced, kept = characterization.collect(a.records, required_records(), characterization.SNAPSHOT)
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
    from sysmodel.engines import serving

    if Path(a.trace).suffix not in (".csv", ".jsonl"):
        if a.time_scale != 1 or a.start or a.duration is not None or a.trace_where:
            raise ValueError("--time-scale, --start, --duration, --trace-where: only for a trace file")
        trace = serving.make_trace(a.trace, a.requests or 1000, a.seed, qps, a.prompt, a.output)
        return _gaussian_within_context(a, trace, command)
    from sysmodel.cost.models import load_model
    from sysmodel.engines import traces

    window = traces.Window(a.time_scale, a.start, a.duration)
    trace, loaded = traces.load(Path(a.trace), window, a.trace_where, load_model(a.model).context)
    if loaded.format != traces.FORMATS["membound"].name or loaded.skipped:
        print(f"membound {command}: note: {traces.summary(loaded, a.trace)}", file=sys.stderr)
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


def _check_lengths(a: argparse.Namespace) -> None:
    """Generated requests longer than the model's context are refused by name (a trace file's, or the papers'
    long-context traces, run as given: lengths given for them would be ignored, so they are refused too)."""
    from sysmodel.cost.models import load_model
    from sysmodel.engines.serving import L3_TRACES

    if _trace_file(a) or a.trace in L3_TRACES:
        given = [f"--{o}" for o in ("prompt", "output") if getattr(a, o) != DEFAULT_TOKENS]
        if given:
            raise ValueError(f"{', '.join(given)}: trace {a.trace} sets every request's lengths itself")
        return
    context = load_model(a.model).context
    if context and a.prompt + a.output > context:
        raise ValueError(
            f"--prompt, --output: {a.prompt} + {a.output} tokens exceed {a.model}'s context of {context} tokens"
        )


def _check_seed(a: argparse.Namespace) -> None:
    """``--seed`` is refused where nothing is drawn (the fixed trace or a file, at its own arrival times or a
    closed loop: an option that would do nothing); unset, it is 1."""
    from sysmodel.engines.serving import L3_TRACES

    if a.seed is not None and not (a.qps or a.trace == "gaussian" or a.trace in L3_TRACES):
        raise ValueError(f"--seed: nothing random to seed (trace {a.trace}, no --qps)")
    a.seed = 1 if a.seed is None else a.seed


def _gaussian_within_context(a: argparse.Namespace, trace, command: str):
    """A gaussian trace without its draws past the model's context, skipped and counted on stderr as a trace
    file's are (they were served silently); refused when every draw is past it. Its means are checked before
    (:func:`_check_lengths`)."""
    from sysmodel.cost.models import load_model
    from sysmodel.engines import serving

    context = load_model(a.model).context
    if a.trace != "gaussian" or not context:
        return trace
    keep = trace.prompt + trace.output <= context
    over = f"{int((~keep).sum())} of the {len(trace)} gaussian requests (std {serving.GAUSSIAN_STD:.0%} of the means)"
    if not keep.any():
        raise ValueError(f"--prompt, --output: {over} exceed {a.model}'s context of {context} tokens")
    if not keep.all():
        print(
            f"membound {command}: note: {over} exceed {a.model}'s context of {context} tokens: skipped", file=sys.stderr
        )
    return serving.Trace(trace.arrival[keep], trace.prompt[keep], trace.output[keep], trace.name)


def _no_repeats(values: list, option: str) -> None:
    """A value given twice (``--qps 1,1``, ``--systems gpu,gpu``) would run twice and overwrite its own files."""
    seen = [v for i, v in enumerate(values) if v in values[:i]]
    if seen:
        raise ValueError(f"{option}: {f'{seen[0]:g}' if isinstance(seen[0], float) else seen[0]} given twice")


def _run_block(a: argparse.Namespace, trace, qps: float | None, sched: dict, par: dict, **extra) -> dict:
    """The run block every output of serve and compare carries (:mod:`sysmodel.runinfo`)."""
    from sysmodel import runinfo
    from sysmodel.engines.serving import L3_TRACES

    timed = _trace_file(a) and bool(trace.arrival.any())  # a file without arrival_s: every request at t = 0
    load = runinfo.arrivals(timed, qps, getattr(a, "concurrency", None))
    own = _trace_file(a) or a.trace in L3_TRACES  # a trace with its own lengths
    generated = {} if own else {"prompt": a.prompt, "output": a.output}
    return runinfo.block(a.model, a.trace, trace, load, qps, a.seed, a.max_batch, sched, par, **generated, **extra)


def _trace_file(a: argparse.Namespace) -> bool:
    return Path(a.trace).suffix in (".csv", ".jsonl")


def _serve_one(a: argparse.Namespace, q: float | None, trace, done: tuple, sched: dict, par: dict, basis: dict) -> dict:
    """One rate's run: its run block, pooled result, each engine's result and summary row (``done``: the
    pooled result and each engine's, from :func:`sysmodel.engines.replicas.run_all`; ``basis``: what the stage
    times came from: ``efficiency_profile``, the profile the system's device ran on (None for none or for
    ``--profile``), and ``profile``, the ``--profile`` file with its hash)."""
    res, each = done
    extra = {"system": a.system, "settings": _system_settings(a), **basis}
    extra["concurrency"] = a.concurrency
    run = _run_block(a, trace, q, sched, par, **extra, prefill_budget=a.prefill_budget)
    row = {"qps": q, **res.summary()}
    if a.slo_tbt or a.slo_ttft:
        row.update({"slo_tbt_ms": a.slo_tbt, "slo_ttft_s": a.slo_ttft})  # the bounds the goodput is counted at
        row.update(
            {f"goodput_{k}": v for k, v in res.goodput(a.slo_tbt / 1e3 if a.slo_tbt else None, a.slo_ttft).items()}
        )
    return {"run": run, "result": res, "engines": each, "row": row}


def _serve_files(a: argparse.Namespace, system, runs: list[dict], out: Path) -> list[Path]:
    """Every file of a serve run, written before anything is printed (``| head`` must not lose them)."""
    import json

    from sysmodel.outputs import replace_outputs, write_text
    from sysmodel.report import plots
    from sysmodel.report.plots import described
    from sysmodel.runinfo import line

    multi = len(runs) > 1
    qps = [r["row"]["qps"] for r in runs]
    written = [
        r["result"].write_csv(out / f"requests{'' if q is None else f'-qps{q:g}'}.csv")
        for r, q in zip(runs, qps, strict=True)
    ]
    if a.trace_stages:
        from sysmodel.engines.metrics import write_stages

        written += [
            write_stages(r["engines"], out / f"stages{'' if q is None else f'-qps{q:g}'}.csv")
            for r, q in zip(runs, qps, strict=True)
        ]
    labels = [f"{system.name} at {q:g} QPS" for q in qps] if multi else None
    kv_labels = [
        f"{lab}{f', engine {j}' if len(r['engines']) > 1 else ''}"
        for lab, r in zip(labels or [system.name], runs, strict=True)
        for j in range(len(r["engines"]))
    ]
    with described("; ".join(line(r["run"]) for r in runs)):  # each plot says how its runs were made
        written += [
            plots.plot_tbt_cdf([r["result"] for r in runs], out / "tbt_cdf.png", labels),
            plots.plot_kv([e for r in runs for e in r["engines"]], out / "kv_utilisation.png", kv_labels),
        ]
        if multi:
            written.append(plots.plot_qps([r["row"] for r in runs], out / "throughput_vs_qps.png"))
    record = [{"run": r["run"], "summary": r["row"]} for r in runs]
    written.append(write_text(out / "run.json", json.dumps(record, indent=1, default=str) + "\n"))
    replace_outputs(out, "serve", written)
    return written


def _serve_lines(a: argparse.Namespace, run: dict, s: dict) -> list[str]:
    """One rate's headline, percentiles, scheduler and goodput lines."""
    from sysmodel.runinfo import line

    lines = [
        f"{s['system']} | {s['trace']} ({run['arrivals']}) | {plural(s['requests'], 'request')}, "
        f"{plural(s['output_tokens'], 'output token')} | throughput {s['throughput_tok_s']:.2f} tokens/s | "
        f"{s['joules_per_token']:.3g} J/token",
        f"  {line(run)}",
    ]
    for metric, unit in (("tbt", "ms"), ("t2ft", "s"), ("e2e", "s")):
        sfx = "_ms" if unit == "ms" else "_s"
        p50, p90, p99 = (s[f"{metric}_p{q}{sfx}"] for q in (50, 90, 99))
        if math.isnan(p50):  # TBT of single-token requests
            lines.append(f"  {metric.upper():5s} none: no request has a second output token")
            continue
        lines.append(f"  {metric.upper():5s} p50 {p50:.4g} {unit}  p90 {p90:.4g} {unit}  p99 {p99:.4g} {unit}")
    lines.append(
        f"  scheduler {s['scheduler']}: scheduling delay p50 {s['scheduling_delay_p50_s']:.4g} s, "
        f"p99 {s['scheduling_delay_p99_s']:.4g} s"
        + (
            f"; {s['preemptions']} preemptions ({a.preempt}), {s['recomputed_tokens']} tokens recomputed, "
            f"{s['swapped_gb']:.3g} GB swapped"
            if "preemptions" in s
            else ""
        )
    )
    if "goodput_met" in s:
        bounds = [
            f"{k} <= {v:g} {u}" for k, v, u in (("TBT", s["slo_tbt_ms"], "ms"), ("T2FT", s["slo_ttft_s"], "s")) if v
        ]
        lines.append(
            f"  goodput: {s['goodput_met']} of {s['requests']} requests meet the SLO of {' and '.join(bounds)} "
            f"({s['goodput_share']:.1%}), "
            f"{s['goodput_requests_per_s']:.4g} requests/s, {s['goodput_tokens_per_s']:.4g} tokens/s"
        )
    return lines


def _hardware_batch(a: argparse.Namespace, system) -> None:
    """``--max-batch`` above the system's hardware limit runs at the limit (the engine caps it): said on stderr
    and set so, so the run block records the batch that ran, not the one asked for."""
    most = getattr(system, "max_batch", a.max_batch)
    if most < a.max_batch:
        print(
            f"membound serve: note: --max-batch {a.max_batch}: {system.name} batches at most {most} requests "
            "(its hardware); running at that",
            file=sys.stderr,
        )
        a.max_batch = most


def cmd_serve(a: argparse.Namespace) -> int:
    """Run a request trace on a registered system (or replicas of it): throughput, latency percentiles, energy."""
    from sysmodel import systems
    from sysmodel.designs.baselines import profile_of
    from sysmodel.engines import replicas

    qps = number_list(a.qps, "--qps") if a.qps else [None]
    _no_repeats(qps, "--qps")
    if a.qps and a.concurrency:
        raise ValueError("--qps, --concurrency: choose one (open-loop Poisson arrivals, or a closed loop)")
    _check_seed(a)
    settings = _system_settings(a)
    if a.profile is not None and any(kv.partition("=")[0].strip() == "efficiency" for kv in settings):
        raise ValueError("--set efficiency: --profile's measured times replace the stage times it would set")
    system = systems.build(a.system, a.model, settings)
    _check_lengths(a)
    _hardware_batch(a, system)
    if a.profile is not None:
        from sysmodel.engines.profile import ProfiledSystem

        system = ProfiledSystem(system, a.profile)
    sched, par = _scheduling(a), _parallel(a)
    with out_dir(a, Path("build/serve")) as out:
        traces = [load_requests(a, q, "serve") for q in qps]
        done = replicas.run_all(
            traces,
            system,
            a.dask,
            max_batch=a.max_batch,
            prefill_budget=a.prefill_budget,
            concurrency=a.concurrency,
            progress=a.dask is None,
            stages=a.trace_stages,
            **par,
            **sched,
        )
        basis = (
            {"efficiency_profile": None, "profile": f"{system.path} (sha256 {system.sha256})"}
            if a.profile is not None
            else {"efficiency_profile": profile_of(system.provenance()), "profile": None}
        )
        runs = [
            _serve_one(a, q, trace, res, sched, par, basis) for q, trace, res in zip(qps, traces, done, strict=True)
        ]
        written = _serve_files(a, system, runs, out)
        for r in runs:
            print("\n".join(_serve_lines(a, r["run"], r["row"])))
        print(f"wrote {', '.join(p.name for p in written)} to {out}")
        sys.stdout.flush()  # a closed pipe is met here, inside main's handler, not at exit
    return 0


def _scheduling(a: argparse.Namespace) -> dict:
    """The scheduler options of serve and compare, checked before anything runs."""
    from sysmodel.engines.scheduling import BLOCK_SIZE, PREEMPT, WATERMARK, get_scheduler

    pol = get_scheduler(a.scheduler)
    if a.preempt not in PREEMPT:
        raise ValueError(f"--preempt: {a.preempt!r} not allowed; allowed: {', '.join(PREEMPT)}")
    if not 0 <= a.watermark < 1:
        raise ValueError(f"--watermark: {a.watermark} not allowed; a share of the blocks in [0, 1)")
    paged = (
        ("block-size", a.block_size, BLOCK_SIZE),
        ("watermark", a.watermark, WATERMARK),
        ("preempt", a.preempt, "recompute"),
    )
    unused = [f"--{name}" for name, value, default in paged if value != default]
    if unused and not pol.paged:
        raise ValueError(
            f"{', '.join(unused)}: scheduler {a.scheduler} reserves each request's whole KV cache; these set the "
            "paged cache (vllm, orca, sarathi, interleave)"
        )
    return {
        "scheduler": a.scheduler,
        "block_size": a.block_size,
        "watermark": a.watermark,
        "preempt": a.preempt,
        "max_batched_tokens": a.max_batched_tokens,
    }


def _parallel(a: argparse.Namespace) -> dict:
    """Replicas, router and pipeline stages of serve and compare, checked before anything runs."""
    from sysmodel.cost.devices import LINKS
    from sysmodel.engines.replicas import ROUTERS

    if a.router not in ROUTERS:
        raise ValueError(f"--router: {a.router!r} not allowed; allowed: {', '.join(ROUTERS)}")
    if a.router != next(iter(ROUTERS)) and a.replicas == 1:
        raise ValueError(f"--router: {a.router} has nothing to route with one replica (give --replicas N)")
    if a.pp_link is not None and a.pp == 1:
        raise ValueError("--pp-link: no pipeline stages to link (give --pp N)")
    if a.pp_link is not None and a.pp_link not in LINKS:
        raise ValueError(f"--pp-link: unknown {a.pp_link!r}; known: {', '.join(sorted(LINKS))}")
    return {"replicas": a.replicas, "router": a.router, "pp": a.pp, "pp_link": a.pp_link}


def cmd_compare(a: argparse.Namespace) -> int:
    """The same model and trace on every chosen system: one table, two plots, a provenance sidecar."""
    from sysmodel import compare, runinfo, systems
    from sysmodel.outputs import replace_outputs
    from sysmodel.report import compare as compare_report

    known = list(systems.entries())
    names = known if a.systems == "all" else [n.strip() for n in a.systems.split(",") if n.strip()]
    for n in names:
        systems.get(n)  # an unknown name is an error naming it
    if not names:
        raise ValueError("--systems: empty; a comma-separated list of registered systems, or all")
    _no_repeats(names, "--systems")
    settings = compare.split_settings(a.set or [], names)
    for n in names:  # validate every --set before anything runs
        systems.get(n).settings(settings[n])
    from sysmodel.cost.models import load_model

    load_model(a.model)
    _check_lengths(a)
    _check_seed(a)
    sched, par = _scheduling(a), _parallel(a)
    with out_dir(a, Path("build/compare")) as out:
        trace = load_requests(a, a.qps, "compare")
        staged: list[Path] = []
        if a.trace_stages:
            from sysmodel.engines.metrics import write_stages

            def keep(name: str, each: list) -> None:
                staged.append(write_stages(each, out / f"stages-{name}.csv"))

        rows, prov = compare.run(
            a.model,
            trace,
            names,
            settings,
            a.max_batch,
            scheduling=sched,
            parallel=par,
            stages=keep if a.trace_stages else None,
        )
        run = _run_block(a, trace, a.qps, sched, par)
        copies = "".join(f", {n} {what}" for n, what in ((a.replicas, "replicas"), (a.pp, "pipeline stages")) if n > 1)
        title = f"{a.model} on {trace.name} ({plural(len(trace), 'request')}{copies})"
        paths = [*compare_report.write(rows, prov, title, out, run), *staged]
        replace_outputs(out, "compare", paths)
        print(title)
        print(runinfo.line(run))
        print("\n".join(compare_report.terminal_lines(rows)))
        print(compare_report.profile_line(rows))
        if a.provenance:
            print("\nProvenance (full record in compare_provenance.json):")
            print("\n".join(compare_report.provenance_lines(prov)))
        print(f"wrote {', '.join(p.name for p in paths)} to {out}")
        sys.stdout.flush()  # a closed pipe is met here, inside main's handler, not at exit
    return 0


def cmd_systems(a: argparse.Namespace) -> int:
    from sysmodel import systems

    for name, e in systems.entries().items():
        print(f"{name}: {e.description}")
        for p in e.params:  # the default as --set takes it: true/false, a bare name, "" for an empty one
            d = p.default
            shown = str(d).lower() if isinstance(d, bool) else (d or '""') if isinstance(d, str) else d
            print(f"    {p.name} = {shown}: {p.help}{p.allowed()}")
    return 0


def _billions(n: float) -> str:
    return f"{n / 1e9:.1f}B"


def cmd_model(a: argparse.Namespace) -> int:
    """What the kit derives from a zoo model or a config.json; without one, the zoo."""
    from sysmodel.cost.models import available, describe, load_model

    if a.model is None:
        for name in available():
            d = describe(load_model(name))
            print(f"{name}: {d['family']}, {_billions(d['params'])} total, {_billions(d['active_params'])} active")
        return 0
    d = describe(load_model(a.model))
    mtp = f" ({_billions(d['params_mtp'])} with the multi-token-prediction layers)" if d["params_mtp"] else ""
    ffn = "gated" if d["gated"] else "plain"
    lines = [
        f"{d['name']} ({d['family']}, context {d['context'] or 'not given'})",
        f"parameters: {_billions(d['params'])} total{mtp}, {_billions(d['active_params'])} active",
        f"KV cache: {d['kv_bytes_per_token'] / 1024:.1f} KiB per token (FP16, every layer), {d['attention']}"
        + (f": latent rank {d['kv_lora']} + rope key {d['rope_dim']}" if d["attention"] == "MLA" else ""),
        f"layers: {d['layers']}: {d['dense_layers']} dense, {d['moe_layers']} MoE, "
        f"{d['sliding_layers']} with a sliding window" + (f" of {d['window']} tokens" if d["window"] else ""),
        f"FFN: {ffn} ({d['activation']}); embeddings {'tied' if d['tied_embeddings'] else 'untied'}",
    ]
    if d["sliding_layers"] and d["context"]:
        held, full = d["kv_bytes_at_context"] / 2**30, d["kv_bytes_per_token"] * d["context"] / 2**30
        lines.insert(
            3,
            f"KV cache of one request at its {d['context']}-token context: {held:.2f} GiB with the sliding layers "
            f"keeping {d['window']} tokens ({full:.2f} GiB reserved in full)",
        )
    if d["experts"] > 1:
        shared = f", shared experts {d['shared_intermediate']} wide" if d["shared_intermediate"] else ""
        lines.append(f"experts: {d['experts']} routed, top-{d['top_k']}{shared}")
    print("\n".join(lines))
    return 0


def cmd_hermes(a: argparse.Namespace) -> int:
    """One Hermes generation on a generated or user-supplied activation trace; the bar shows from the start
    (the imports, solving the statistics and the placement ILP take seconds before the first token)."""
    from sysmodel.progress import progress

    if a.trace and (a.batch is not None or a.seed is not None):
        raise ValueError("--batch, --seed: for generated traces; a trace file has its own sequences")
    if a.host and a.multipliers is not None:
        raise ValueError("--multipliers: Hermes-host computes the cold neurons on the CPU; no NDP multipliers")
    with progress(0, "hermes: loading the model") as bar:
        from sysmodel.cost.models import load_model
        from sysmodel.designs.hermes import model as hm
        from sysmodel.designs.hermes import workload as wl

        cfg = load_model(a.model)
        if a.policy not in hm.POLICIES:
            raise ValueError(f"--policy: {a.policy!r} not allowed; allowed: {', '.join(hm.POLICIES)}")
        hw = hm.with_multipliers(hm.Hardware(), a.multipliers or hm.Hardware().multipliers)
        if a.trace:
            tr = wl.load_trace(a.trace, lambda t: hm.check_trace(cfg, t), bar)
        else:
            hm.check_limits(cfg, a.batch or 1)
            tr = hm.paper_trace(cfg, a.batch or 1, 1 if a.seed is None else a.seed, bar)
        run = hm.simulate(cfg, tr, hw, a.policy, host=a.host, bar=bar)
    if a.trace and tr.sim_layers < cfg.layers:  # a sample of the layers, scaled (workload docstring)
        print(
            f"membound hermes: the trace's {tr.sim_layers} layers stand for all {cfg.layers} of {cfg.name}",
            file=sys.stderr,
        )
    mean = sum(run.token_s) / len(run.token_s)
    print(
        f"{run.system} | {cfg.name} | batch {run.batch} | {run.tokens_per_s:.2f} tokens/s | prompt "
        f"{run.prefill_s:.3f} s | decode {mean * 1e3:.2f} ms/token | {plural(run.reloads, 'neuron')} reloaded onto "
        f"the GPU (PCIe)" + ("" if a.host else f" | {plural(run.remaps, 'neuron')} remapped across DIMMs (DIMM-link)")
    )  # Hermes-host has no NDP-DIMMs to remap across
    return 0


def cmd_dram(a: argparse.Namespace) -> int:
    """One channel of a preset (or a PIM view of it) on a generated trace: bandwidth, refreshes, and with
    --log the command log as CSV, replayed by the checker first."""
    import numpy as np

    from sysmodel.engines import memory as mm
    from sysmodel.engines import memory_check

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
    if a.requests > MAX_DRAM_REQUESTS:
        raise ValueError(f"--requests: {a.requests} not allowed; 1 to {MAX_DRAM_REQUESTS:,} bursts")
    addrs = mm.pattern_addrs(p, a.pattern, a.requests, a.stride or 1, seed=a.seed or 0)  # names a bad pattern
    if a.stride is not None and a.pattern != "strided":  # options that would do nothing are refused
        raise ValueError(f"--stride: only for --pattern strided, not {a.pattern}")
    if a.seed is not None and a.pattern != "random" and not a.writes:
        raise ValueError(f"--seed: nothing random to seed (--pattern {a.pattern}, no --writes)")
    writes = np.random.default_rng(a.seed or 0).random(len(addrs)) < a.writes
    res = mm.simulate(p, addrs, writes, refresh=a.refresh, log=a.log is not None, age_cap=a.age_cap)
    print(
        f"{p.name} | {a.pattern} | {plural(len(addrs), 'request')} ({a.writes:.0%} writes) | refresh {a.refresh} | "
        f"{res.bandwidth / 1e9:.2f} GB/s of {p.peak_bw() / 1e9:.2f} GB/s peak ({res.bandwidth / p.peak_bw():.1%}) | "
        f"{plural(res.cycles, 'cycle')} | {plural(res.refreshes, 'refresh')}"
    )
    if a.log is not None:
        assert res.log is not None  # simulate() logged: log=True
        bad = memory_check.check(p, res.log, refresh=a.refresh)
        if bad:
            raise RuntimeError(f"the command log breaks a timing constraint: {bad[0]}")
        res.write_log(a.log)
        print(f"wrote {len(res.log)} commands to {a.log} (timing checker: legal)")
    return 0


def cmd_flash_bench(a: argparse.Namespace) -> int:
    """This machine's flash read throughput vs chunk size and threads, fitted and plotted."""
    from sysmodel.designs.flash import bench

    threads = tuple(number_list(a.threads, "--threads", positive_int))
    _no_repeats(list(threads), "--threads")  # each count measured twice, its rows printed twice
    with out_dir(a, bench.OUT) as out:
        res = bench.run(out, a.size << 20, threads=threads, seconds=a.seconds, progress=True)
    print(f"{res.filesystem} file system, {res.mode} reads, {res.size >> 20} MiB file")
    for n in threads:
        row = "  ".join(f"{c // 1024}K {v / 1e9:.2f}" for c, t, v in res.points if t == n)
        print(f"{plural(n, 'thread'):>11} (GB/s): {row}")
    m = res.model()
    print(
        f"fit: peak {m.seq_peak / 1e9:.2f} GB/s, first-byte latency {m.l0 * 1e6:.0f} us, per-read "
        f"{m.per_thread_bw / 1e9:.2f} GB/s, useful parallel reads {m.queue:.1f}"
    )
    print(f"wrote {out / 'flash_bench.json'} and {out / 'flash_bench.png'}")
    return 0


def cmd_flash_predictor(a: argparse.Namespace) -> int:
    """Train the low-rank predictor on a dump (or synthetic tokens) and rate it."""
    from sysmodel.designs.flash import paper
    from sysmodel.designs.flash import predictor as pr

    if a.dump and a.tokens is not None:  # an option that would do nothing is refused
        raise ValueError("--tokens: only for synthetic tokens; a --dump's tokens are its rows")
    if (a.tokens or 0) > MAX_SYNTHETIC_TOKENS:
        raise ValueError(f"--tokens: {a.tokens} not allowed; 2 to {MAX_SYNTHETIC_TOKENS:,} synthetic tokens")
    data = pr.load_dump(a.dump) if a.dump else pr.synthetic(a.tokens or SYNTHETIC_TOKENS, seed=a.seed)
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
    p.add_argument(
        "--model", required=True, help="a zoo model (membound model lists them) or a Hugging Face config.json"
    )
    p.add_argument(
        "--trace",
        default="fixed",
        help="fixed, gaussian, openr1, dolphin, openthoughts, longbench, or a .csv/.jsonl file: columns "
        "arrival_s, prompt_tokens, output_tokens, or an Azure LLM inference, BurstGPT or Mooncake trace",
    )
    p.add_argument("--requests", type=positive_int, help=requests_help)
    p.add_argument(
        "--time-scale",
        type=positive_float,
        default=1.0,
        help="a trace file's arrival times times F (0.5: twice the rate)",
    )
    p.add_argument("--start", type=float, default=0.0, help="a trace file: skip its first S seconds")
    p.add_argument("--duration", type=positive_float, help="a trace file: replay D seconds from --start")
    p.add_argument(
        "--trace-where",
        action="append",
        metavar="COLUMN=VALUE",
        help="a public trace file: keep its rows with this value (repeatable; e.g. Model=ChatGPT for BurstGPT)",
    )
    p.add_argument("--prompt", type=positive_int, default=DEFAULT_TOKENS, help="prompt tokens (mean for gaussian)")
    p.add_argument("--output", type=positive_int, default=DEFAULT_TOKENS, help="output tokens (mean for gaussian)")
    _engine_options(p)
    p.add_argument("--seed", type=seed, help="seed of generated traces and Poisson arrivals (default 1)")
    p.add_argument("--out", type=Path, help="output directory (its parent must exist)")


def _engine_options(p: argparse.ArgumentParser) -> None:
    """How serve and compare run the trace: the scheduler and its cache, replicas, pipeline stages."""
    p.add_argument("--max-batch", type=positive_int, default=256, help="requests per stage at most")
    p.add_argument(
        "--scheduler",
        default="vllm",
        help="vllm (paged, preempting; the default), reserve (whole KV "
        "reserved at admission, output lengths known), orca, orca-reserve, sarathi, interleave (L3's: chunks "
        "sized by the system) (sysmodel/engines/scheduling.py)",
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
        help="round-robin, least-outstanding or kv-aware (fewest KV bytes held; sysmodel/engines/replicas.py)",
    )
    p.add_argument(
        "--pp",
        type=positive_int,
        default=1,
        help="pipeline stages: copies of the system's hardware, "
        "each holding 1/pp of the layers, one virtual engine per stage (sysmodel/engines/pipeline.py)",
    )
    p.add_argument(
        "--pp-link",
        help="the link between pipeline stages (default: the system's device interconnect; "
        "pcie4x16, pcie5x16, nvlink-a100, nvlink-h100, dimm-link)",
    )


def _report_args(sub: argparse._SubParsersAction) -> None:
    """`membound report`'s options."""
    p = sub.add_parser("report", help="write the Markdown and HTML report")
    p.add_argument("--paper", choices=["all", *_papers()], default="all", help="one section, or all")
    p.add_argument("--out", type=Path, help="output directory (default build/report)")
    p.add_argument(
        "--requests",
        type=positive_int,
        help=f"requests per serving run of the {', '.join(SERVING_SECTIONS)} sections "
        "(default 1000, as L3's paper runs)",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="rerun every serving grid instead of reading the committed cache (sysmodel/data/report_cache)",
    )
    p.add_argument("--brief", action="store_true", help="do not echo the report to the terminal")


def _characterize_args(sub: argparse._SubParsersAction) -> None:
    """`membound characterize`'s options."""
    p = sub.add_parser("characterize", help="merge testbench records into the committed snapshot")
    p.add_argument(
        "--records", type=Path, default=Path("build/characterization"), help="directory of testbench records (.json)"
    )


def _sweep_args(sub: argparse._SubParsersAction) -> None:
    """`membound sweep`'s options."""
    p = sub.add_parser("sweep", help="run a parameter grid (TOML/YAML config) into a CSV")
    p.add_argument("config", type=Path, help="the grid: a .toml or .yaml file (examples/)")
    p.add_argument(
        "--out",
        type=Path,
        help="the results: .csv, or .parquet (default: the config's out, else build/sweeps/KIND.csv)",
    )
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.add_argument("--scheduler", help="run on an existing Dask cluster, e.g. tcp://host:8786")


def _systems_args(sub: argparse._SubParsersAction) -> None:
    """`membound systems` (no options)."""
    sub.add_parser("systems", help="list the registered systems with their parameters")


def _model_args(sub: argparse._SubParsersAction) -> None:
    """`membound model`'s options."""
    p = sub.add_parser("model", help="what the kit derives from a model: parameters, KV bytes, layers, experts")
    p.add_argument("model", nargs="?", help="a zoo name or a Hugging Face config.json (none: list the zoo)")


def _serve_args(sub: argparse._SubParsersAction) -> None:
    """`membound serve`'s options."""
    p = sub.add_parser("serve", help="serve a request trace on a system: throughput, TBT/T2FT/E2E, J/token")
    _trace_options(p, "requests (default 1000; a file: all of its rows)")
    p.add_argument("--system", default="gpu", help="a registered system (`membound systems`)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a system parameter (repeatable)")
    p.add_argument("--device", help="shortcut for --set device=NAME (systems with a device parameter)")
    p.add_argument("--devices", type=positive_int, help="shortcut for --set devices=N")
    p.add_argument(
        "--routing",
        type=Path,
        help="shortcut for --set routing=FILE (duplex: an expert routing "
        "trace, .npy (tokens, top_k) or .npz with an 'experts' array)",
    )
    p.add_argument(
        "--qps",
        help="Poisson arrivals at this rate; a comma list sweeps it (default: all at t=0; "
        "with a trace file it replaces the file's arrival times)",
    )
    p.add_argument("--concurrency", type=positive_int, help="closed loop with this many requests in the system")
    p.add_argument(
        "--prefill-budget",
        type=positive_int,
        help="tokens per stage (chunked prefill: reserve counts "
        "prompt tokens, sarathi prompt and decode tokens, default 512; interleave prompt tokens)",
    )
    p.add_argument(
        "--profile",
        type=Path,
        help="measured iteration times replacing the system's stage times (CSV: per operator class, "
        "or decode_reqs, decode_ctx, prefill_tokens, seconds; sysmodel/engines/profile.py)",
    )
    p.add_argument("--slo-tbt", type=positive_float, help="goodput: the longest gap between tokens allowed (ms)")
    p.add_argument("--slo-ttft", type=positive_float, help="goodput: the longest time to first token allowed (s)")
    p.add_argument(
        "--dask", metavar="ADDRESS", help="run the --qps values as tasks on an existing Dask cluster (tcp://host:8786)"
    )
    p.add_argument(
        "--trace-stages",
        action="store_true",
        help="also write every stage (iteration) of each engine: stages.csv beside run.json",
    )


def _compare_args(sub: argparse._SubParsersAction) -> None:
    """`membound compare`'s options."""
    p = sub.add_parser("compare", help="one model and trace on every system: tokens/s, TBT, T2FT, J/token, area")
    _trace_options(p, "requests (default 1000; a file: all of its rows)")
    p.add_argument("--systems", default="all", help="comma-separated registered systems, or all")
    p.add_argument("--set", action="append", metavar="SYSTEM.KEY=VALUE", help="a system parameter (repeatable)")
    p.add_argument("--qps", type=positive_float, help="Poisson arrivals at this rate (default: all at t=0)")
    p.add_argument("--provenance", action="store_true", help="also print what fed each system's numbers")
    p.add_argument(
        "--trace-stages",
        action="store_true",
        help="also write every stage (iteration) of each system's engines: stages-SYSTEM.csv beside compare.csv",
    )


def _hermes_args(sub: argparse._SubParsersAction) -> None:
    """`membound hermes`'s options."""
    p = sub.add_parser("hermes", help="one Hermes generation: tokens/s on a generated or .npz activation trace")
    p.add_argument(
        "--model", required=True, help="a zoo model (membound model lists them) or a Hugging Face config.json"
    )
    p.add_argument(
        "--trace",
        type=Path,
        help="activation trace .npz (sysmodel/designs/hermes/workload.py): at most the model's layers, fewer standing "
        "for "
        "all of them; generated from the paper's statistics when absent",
    )
    p.add_argument(
        "--batch", type=positive_int, help="sequences of a generated trace (default 1; at most the GEMV unit's batch)"
    )
    p.add_argument("--seed", type=seed, help="a generated trace's seed (default 1)")
    p.add_argument("--policy", default="hermes", help="random, partition, adjustment, hermes (the ablation steps)")
    p.add_argument("--host", action="store_true", help="Hermes-host: the CPU computes the cold neurons")
    p.add_argument(
        "--multipliers",
        type=positive_int,
        help="GEMV multipliers per NDP core (default 256; at most the paper's DSE's largest)",
    )


def _dram_args(sub: argparse._SubParsersAction) -> None:
    """`membound dram`'s options."""
    p = sub.add_parser("dram", help="one DRAM/HBM channel on a generated trace: bandwidth, refresh, command log")
    p.add_argument("--preset", default="ddr4-3200", help="ddr4-3200, ddr4-3200-hermes, ddr5-4800, hbm3")
    p.add_argument("--mode", choices=["all_bank", "bank_bundle", "rank_level"], help="a PIM access mode's view")
    p.add_argument("--pattern", default="streaming", help="streaming, random, strided")
    p.add_argument("--requests", type=positive_int, default=100000, help=f"bursts, at most {MAX_DRAM_REQUESTS:,}")
    p.add_argument("--stride", type=positive_int, help="strided: bursts between requests (default 1)")
    p.add_argument("--writes", type=float, default=0.0, help="share of writes, 0-1")
    p.add_argument("--refresh", default="on-time", help="on-time, postpone, per-bank (DDR5, HBM3), none")
    p.add_argument("--seed", type=seed, help="seed of random addresses and writes (default 0)")
    p.add_argument(
        "--age-cap",
        type=positive_int,
        help="FR-FCFS starvation bound: cycles after which the oldest request goes first (default: no cap)",
    )
    p.add_argument(
        "--log", type=Path, help="write the command log here (CSV: cycle, channel, rank, bankgroup, bank, row, command)"
    )


def _flash_bench_args(sub: argparse._SubParsersAction) -> None:
    """`membound flash-bench`'s options."""
    p = sub.add_parser("flash-bench", help="measure this machine's flash read throughput vs chunk size and threads")
    p.add_argument(
        "--out",
        type=Path,
        help="where the scratch file, the results and the plot go (the disk "
        "measured; default build/flash-bench, which the report overlays)",
    )
    p.add_argument("--size", type=positive_int, default=512, help="scratch file MiB")
    p.add_argument("--threads", default="1,4,16,32", help="comma-separated thread counts")
    p.add_argument("--seconds", type=positive_float, default=0.6, help="reading time per (chunk, threads) point")


def _flash_predictor_args(sub: argparse._SubParsersAction) -> None:
    """`membound flash-predictor`'s options."""
    p = sub.add_parser("flash-predictor", help="train and rate the low-rank activation predictor")
    p.add_argument(
        "--dump",
        type=Path,
        help="activation dump .npz: x (tokens, d_model) and active (bool) or pre "
        "(float) (tokens, d_ff); synthetic tokens (sysmodel/designs/flash/predictor.py) when absent",
    )
    p.add_argument("--rank", type=positive_int, default=64, help="rank of the predictor's low-rank layer")
    p.add_argument(
        "--tokens",
        type=positive_int,
        help=f"synthetic tokens (default {SYNTHETIC_TOKENS}, at most {MAX_SYNTHETIC_TOKENS:,}; a dump's are its rows)",
    )
    p.add_argument("--seed", type=seed, default=1, help="seed of synthetic tokens and training")


def parser() -> Parser:
    ap = Parser(prog="membound", description="membound: RTL-backed system models of memory-bound LLM inference")
    sub = ap.add_subparsers(dest="cmd", parser_class=Parser, metavar="COMMAND")
    for add in (
        _report_args,
        _characterize_args,
        _sweep_args,
        _systems_args,
        _model_args,
        _serve_args,
        _compare_args,
        _hermes_args,
        _dram_args,
        _flash_bench_args,
        _flash_predictor_args,
    ):
        add(sub)
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
    "model": cmd_model,
    "hermes": cmd_hermes,
    "dram": cmd_dram,
    "flash-bench": cmd_flash_bench,
    "flash-predictor": cmd_flash_predictor,
}


class _Interrupt:
    """The SIGINT handler: KeyboardInterrupt at once, except while numba compiles (its global compiler lock
    held), where Python code runs inside LLVM's C callbacks: raised there, the interrupt is swallowed (the
    run goes on and exits 0 after an llvmlite traceback) or leaves LLVM broken (a segfault). Then it is
    raised when the lock is released, a few seconds later at most (numba's ``numba:compiler_lock`` event)."""

    def __init__(self) -> None:
        self.pending = False
        self.registered = False

    def __call__(self, _signum: int, _frame: object) -> None:
        lock = sys.modules.get("numba.core.compiler_lock")
        if lock is None or not lock.global_compiler_lock.is_locked():
            raise KeyboardInterrupt
        self.pending = True
        if not self.registered:  # numba.core.event is imported with the lock: no import in a signal handler
            event = sys.modules["numba.core.event"]
            event.register("numba:compiler_lock", self._at_release(event.Listener, lock.global_compiler_lock))
            self.registered = True

    def _at_release(self, base: type, lock) -> object:
        interrupt = self

        class AtRelease(base):
            def on_start(self, event) -> None:
                pass

            def on_end(self, event) -> None:  # the lock is already released: raising here is safe
                if interrupt.pending and not lock.is_locked():
                    interrupt.pending = False
                    raise KeyboardInterrupt

        return AtRelease()


@contextlib.contextmanager
def _interrupts() -> Iterator[None]:
    """:class:`_Interrupt` in place of Python's KeyboardInterrupt handler for the block; any other handling
    is left alone (SIGINT ignored, as in a shell's background job; a host program's handler), as are
    threads other than the main one (signal handlers belong to it)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    previous = signal.signal(signal.SIGINT, _Interrupt())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _warnings_as_lines(cmd: str) -> Iterator[None]:
    """A library warning that still reaches a run (numpy, matplotlib, ...) is printed as one line naming the
    command, not a source path and line. Only the format changes: Python's filters still decide (each said
    once per place; ``-W error`` raises) and a harness that records warnings (pytest) still gets them.
    Causes are fixed where found (tests/test_cli_robustness.py runs the commands under ``-W error``)."""
    previous = warnings.formatwarning
    warnings.formatwarning = lambda message, category, *_, **__: (
        f"membound {cmd}: warning: {' '.join(str(message).split())} ({category.__name__})\n"
    )
    try:
        yield
    finally:
        warnings.formatwarning = previous


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:  # a mistake already said in one line (Parser.error), or --help
        return int(e.code or 0)
    if a.cmd is None:
        ap.print_help(sys.stderr)  # the commands with what each does
        print("membound: a command is required (membound --help lists them)", file=sys.stderr)
        return USAGE_ERROR
    try:
        with _interrupts(), _warnings_as_lines(a.cmd):
            return COMMANDS[a.cmd](a)
    except BrokenPipeError:  # the reader went away (`| head`): say nothing more, on a stdout that stays quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED
    except (ValueError, OSError) as e:  # a user's mistake: bad values, names, files; infeasible configurations
        print(f"membound {a.cmd}: {e}", file=sys.stderr)
        return USAGE_ERROR
    # a size asked for beyond this machine (dram --requests 1e12): Python's message is often empty
    except MemoryError as e:
        print(f"membound {a.cmd}: out of memory{f' ({e})' if str(e) else ''}: ask for fewer", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print(f"membound {a.cmd}: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
