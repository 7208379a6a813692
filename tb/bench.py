"""`make bench`: the performance figures membound records so regressions show: the measurements in
``tb/bench.json`` (committed; :data:`BENCH_JSON`), BENCH.md rendered from it (:func:`render`).

Parts (``python -m tb.cli bench --part ...``; each replaces only its own entry of the JSON):

* ``rtl``: for every testbench and installed simulator, a cold build, then a run of its tests under
  `make test`'s conditions; simulated cycles per second of wall time (cocotb and the golden model included).
  tb.runner.FASTEST, the simulator each unit's testbenches use, is read from this table (by cold build + run in
  `make test`, by run alone in `make sim`, whose builds are cached).
* ``harness``: the same batches through three drivers of one unit's harness build on Verilator — per-cycle
  cocotb (tb/streams.py), transaction-level cocotb (tb/txn.py) and the C++ main with no Python
  (tb/harness_main.py, the limit) — for the DECA PE (W=32, L=8) and every arithmetic unit; batch cycles per second
  of simulation wall time (stimulus and golden excluded), the ratios to the limit, and a check that all
  three produce the same outputs (and the two harness drivers the same cycle stamps).
* ``sysmodel``: the serving simulator on the L3 traces (1,000 requests each, the paper's protocol) and
  on a Poisson trace, and the sweep's points per second — wall time of the simulation itself.

Timings are wall-clock on the machine named in the section header; run on an idle machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sysmodel.cost.characterization import read
from tb import runner
from tb.charz import record_path
from tb.registry import all_specs

PARTS = ("rtl", "harness", "sysmodel", "gpu")
BENCH_JSON = runner.BENCH_JSON  # the measurements; BENCH.md is rendered from them


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        )
    return f"{time.strftime('%Y-%m-%d')}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


# `make bench` stops a testbench's run on one simulator once it has taken this many times the other simulator's
# build + run: the row then says "stopped" with the time it had taken, a lower bound (the DECA PE's 24 tiles per
# format on Icarus would take about 25 minutes of an otherwise 30-minute bench)
STOP_FACTOR = 3.0


def _bench_one(spec: runner.TbSpec, sim: str, vectors: int, timeout: float | None) -> dict:
    """A fresh build (cold: its own build root and an empty ccache, as on a CI machine) and a run of
    ``spec`` on ``sim``; the row of BENCH.md's RTL table (``stopped`` when it ran past ``timeout`` s)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "SIM": sim,
            "MEMBOUND_BUILD": tmp,
            "MEMBOUND_VECTORS": str(vectors),
            "CCACHE_DIR": str(Path(tmp) / "ccache"),
        }
        code = (
            "import sys, time; from tb import runner; from tb.registry import spec_by_tag;"
            "s = spec_by_tag(sys.argv[1]); t = time.perf_counter();"
            "runner.build(s, runner.simulator(s)); b = time.perf_counter() - t; print(b, flush=True);"
            "t = time.perf_counter(); runner.run(s); print(time.perf_counter() - t)"
        )
        t0 = time.perf_counter()
        # its own process group, so a stop also ends the simulator the runner started
        proc = subprocess.Popen(
            [sys.executable, "-c", code, spec.tag],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=runner.ROOT,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, _ = proc.communicate()
            elapsed = time.perf_counter() - t0
            build_s = round(float(stdout.split()[0]), 2) if stdout.split() else None
            return {"testbench": spec.tag, "simulator": sim, "build_s": build_s, "stopped_s": round(elapsed, 2)}
        if proc.returncode:
            print(stdout[-2000:], stderr[-2000:])
            raise SystemExit(f"bench: {spec.tag} on {sim} failed")
        build_s, run_s = map(float, stdout.split()[-2:])
        rec = read(record_path(spec.tag, sim, Path(tmp) / "characterization"))
    return {
        "testbench": spec.tag,
        "simulator": sim,
        "build_s": round(build_s, 2),
        "run_s": round(run_s, 2),
        "vectors": rec.vectors,
        "sim_cycles": rec.sim_cycles,
        "vector_test_s": rec.wall_s,
        "cycles_per_s": round(rec.sim_cycles / rec.wall_s) if rec.wall_s else None,
    }


def _md_row(r: dict) -> str:
    if "stopped_s" in r:
        build = "?" if r["build_s"] is None else r["build_s"]
        return f"| {r['testbench']} | {r['simulator']} | {build} | stopped | >{r['stopped_s']:.2f} | - |"
    return (
        f"| {r['testbench']} | {r['simulator']} | {r['build_s']} | {r['run_s']} | "
        f"{r['build_s'] + r['run_s']:.2f} | {r['cycles_per_s']} |"
    )


def bench_rtl(vectors: int) -> dict:
    """Per testbench, a cold build and a run on each installed simulator (Verilator first, the other stopped
    past STOP_FACTOR x its time) under `make test`'s conditions: ``vectors`` random vectors, the DECA PE's
    default tiles. The paper-size testbenches (marker ``full``: minutes of build each, on the simulator
    their spec names) are left to `make sim`."""
    results = []
    sims = sorted(runner.available_simulators(), key=lambda s: s != "verilator")
    for spec in all_specs(full=False):
        best = None
        for sim in sims:
            row = _bench_one(spec, sim, vectors, None if best is None else STOP_FACTOR * best)
            if "run_s" in row:
                total = row["build_s"] + row["run_s"]
                best = total if best is None else min(best, total)
            results.append(row)
            print(json.dumps(row))
    results.sort(key=lambda r: r["simulator"])  # the table lists one simulator, then the other
    return {"vectors": vectors, "stop_factor": STOP_FACTOR, "results": results}


def render_rtl(d: dict) -> list[str]:
    lines = [
        f"Per testbench and simulator, a cold build (a fresh build root and an empty ccache, as on a CI "
        f"machine), then a run under `make test`'s conditions: {d['vectors']} random vectors, the DECA PE's "
        f"default tiles per format and density (the paper-size arrays are `make sim`'s only). A run is stopped "
        f"once it takes {d['stop_factor']:g}x the other simulator's build + run (its time then a lower bound). "
        "cycles/s is simulated cycles of the vector test per second of wall time (cocotb + golden model "
        "included). tb.runner.FASTEST reads these rows: by build + run for `make test`, by run for `make sim`.",
        "",
        "| testbench | simulator | build s | run s | build+run s | simulated cycles/s |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    return lines + [_md_row(r) for r in d["results"]]


SERVING_BUDGET_S = 10.0  # issue 8: 1,000 L3-trace requests in under 10 s on this 2-core machine


def _bench_serving() -> list[dict]:
    """The serving simulator on GPT-175B, GPU-only, 8x A100-80GB: 1,000 requests of each L3 trace, a Poisson
    trace and openr1 under the preempting schedulers; then the paged run's target row."""
    from sysmodel.designs.baselines import GpuOnly
    from sysmodel.engines import serving

    gpu = GpuOnly("gpt3-175b", "a100-80g-sxm", 8)
    runs = [
        (f"{name}, reserve", serving.make_trace(name, 1000, seed=1), {"scheduler": "reserve"})
        for name in serving.L3_TRACES
    ]
    runs.append(
        (
            "gaussian 4096/512 @ 8 QPS, reserve",
            serving.make_trace("gaussian", 1000, 1, 8.0, 4096, 512),
            {"max_batch": 128, "scheduler": "reserve"},
        )
    )
    runs += [
        (f"openr1, {s} (paged, preempting)", serving.make_trace("openr1", 1000, seed=1), {"scheduler": s})
        for s in ("vllm", "sarathi")
    ]
    results = []
    for label, trace, kw in runs:
        t0 = time.perf_counter()
        res = serving.simulate(trace, gpu, **kw)
        wall = time.perf_counter() - t0
        results.append(
            {
                "what": f"serve {label}",
                "system": gpu.name,
                "requests": len(trace),
                "output_tokens": int(trace.output.sum()),
                "stages": res.stages,
                "wall_s": round(wall, 3),
                "stages_per_s": round(res.stages / wall),
            }
        )
        print(json.dumps(results[-1]))
    paged = next(r for r in results if r["what"] == "serve openr1, vllm (paged, preempting)")
    results.append(
        {
            "what": "serve 1,000 openr1 requests, vllm (paged, preempting; issue 33)",
            "measured": f"{paged['wall_s']:.2f} s",
            "target": "< 2 s",
        }
    )
    return results


def _bench_sweep() -> dict:
    """The sweep's points per second on examples/decode.toml."""
    from sysmodel import sweep

    cfg = sweep.load_config(runner.ROOT / "examples" / "decode.toml")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        sweep.sweep(cfg, Path(tmp) / "out.csv", workers=2)
        wall = time.perf_counter() - t0
    n = len(sweep.points(cfg))
    return {
        "what": "sweep examples/decode.toml (2 workers)",
        "points": n,
        "wall_s": round(wall, 3),
        "points_per_s": round(n / wall, 1),
    }


def bench_sysmodel() -> dict:
    results = _bench_serving()
    results.append(_bench_sweep())
    results.append(bench_flash())
    results += bench_hermes_memory()
    results += bench_serving_scale(plot=runner.ROOT / SCALE_PLOT)
    results += bench_targets()
    results += bench_dram()
    return {"serving_budget_s": SERVING_BUDGET_S, "old_engine": OLD_ENGINE, "results": results}


def render_sysmodel(d: dict) -> list[str]:
    results = d["results"]
    lines = [
        "The serving simulator (sysmodel/engines/serving.py) on GPT-175B, GPU-only, 8x A100-80GB: 1,000 requests of "
        f"each L3 trace (Table 4 statistics, offline) and a Poisson trace; budget {d['serving_budget_s']:g} s per "
        "1,000-request L3 run.",
        "",
        "| run | requests | output tokens | stages | wall s | stages/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['what']} | {r['requests']} | {r['output_tokens']} | {r['stages']} | {r['wall_s']} | "
        f"{r['stages_per_s']} |"
        for r in results
        if "stages" in r
    ]
    lines += ["", "| sweep | points | wall s | points/s |", "| --- | ---: | ---: | ---: |"]
    lines += [
        f"| {r['what']} | {r['points']} | {r['wall_s']} | {r['points_per_s']} |" for r in results if "points" in r
    ]
    lines += [
        "",
        "Figures with a target (issues 33 and 35), each measured here:",
        "",
        "| what | measured | target |",
        "| --- | ---: | ---: |",
    ]
    lines += [f"| {r['what']} | {r['measured']} | {r['target']} |" for r in results if "target" in r]
    return lines + _render_engines(d)


def _render_engines(d: dict) -> list[str]:
    """render_sysmodel's tables after the targets: the DRAM engine, `membound hermes --trace`'s peak memory,
    the serving scale and the flash mechanism."""
    results = d["results"]
    lines = [
        "",
        "The DRAM timing engine (sysmodel/engines/memory.py, numba) against the pure-Python engine it replaced "
        f"(commit {d['old_engine']}, loaded from git), one DDR4-3200 channel, refresh postpone (the old policy):",
        "",
        "| trace | requests | engine req/s | old engine req/s (its requests) | speed-up | same cycles |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    lines += [
        f"| {r['what']} | {r['requests']} | {r['req_per_s']} | {r['old_req_per_s']} ({r['old_requests']}) | "
        f"{r['speedup']} | {r['same']} |"
        for r in results
        if "req_per_s" in r
    ]
    lines += [
        "",
        "Peak memory of `membound hermes --trace` (issue 50) on generated LLaMA2-13B traces of 12 tokens "
        "without correlation tables (loading computes them), each run a fresh process:",
        "",
        "| run | layers | trace arrays MB | peak RSS MB | wall s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['what']} | {r['layers']} | {r['trace_mb']} | {r['peak_rss_mb']} | {r['wall_s']} |"
        for r in results
        if "peak_rss_mb" in r
    ]
    scale = [r for r in results if r["what"] == "serving scale"]
    if scale:
        lines += ["", *serving_scale_lines(scale)]
    f = next(r for r in results if r["what"].startswith("flash"))
    lines += [
        "",
        "| flash mechanism | tokens | cache mode | wall s | tokens/s | MB/s read |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
        f"| {f['what']} | {f['tokens']} | {f['cache_mode']} | {f['wall_s']} | {f['tokens_per_s']} | {f['mb_per_s']} |",
    ]
    return lines


def bench_gpu() -> dict:
    """The calibrated GPU's error per kernel class and per element-wise kernel (issue 54); seconds to run
    alone (`make bench PART=gpu`)."""
    from sysmodel.cost.gpu_validation import class_errors, gemm_balance_errors

    return {
        "classes": class_errors(),
        "elementwise": class_errors("elementwise"),
        "balance": gemm_balance_errors(),
    }


def render_gpu(d: dict) -> list[str]:
    from sysmodel.report.gpu import balance_lines, class_error_lines

    return [
        "The calibrated GPU (sysmodel/cost/gpu.py) per kernel class against Vidur's public A100/H100 measurements, "
        "|modelled / measured - 1|, rows held out of every fit apart (CodeLlama-34B and tensor-parallel width 4):",
        "",
        *class_error_lines(d["classes"]),
        "",
        "The element-wise class by kernel (each its own law: the residual add a flat kernel, the others vLLM row "
        "kernels):",
        "",
        *class_error_lines(d["elementwise"]),
        "",
        "GEMMs by the law's compute / memory ratio, modelled / measured - 1 (the law takes the longer term; near "
        "the ridge, 0.8-1.6, loads and tensor-core work do not fully overlap):",
        "",
        *balance_lines(d["balance"]),
    ]


HERMES_DEPTHS = (4, 8, 40)  # layers of the traces bench_hermes_memory runs (issue 50: ~1.1 GB per layer before)
# `membound ARGS`, then its peak resident KiB: the process's own (VmHWM), where ru_maxrss would carry the
# parent's peak across fork and exec
_PEAK_RUN = (
    "import sys\nfrom sysmodel.cli import main\nrc = main(sys.argv[1:])\n"
    "print(next(ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')).split()[1])\nsys.exit(rc)"
)


def bench_hermes_memory(model: str = "llama2-13b", tokens: int = 12, prefill: int = 8) -> list[dict]:
    """Peak resident memory of `membound hermes --trace`, each in a fresh process, on generated traces of
    ``model``'s widths (the narrowest zoo model with 40 layers), ``tokens`` tokens and HERMES_DEPTHS layers,
    saved without correlation tables, so loading computes every layer's."""
    from sysmodel.cost.models import load_model
    from sysmodel.designs.hermes import workload as wl

    cfg, out = load_model(model), []
    with tempfile.TemporaryDirectory(dir=runner.ROOT / "build") as tmp:
        for layers in HERMES_DEPTHS:
            tr = wl.generate({"attn": cfg.hidden, "mlp": cfg.intermediate}, layers, tokens, prefill, seed=1)
            path = tr.save(Path(tmp) / f"deep{layers}.npz", parents=False)
            t0 = time.perf_counter()
            run = subprocess.run(
                [sys.executable, "-c", _PEAK_RUN, "hermes", "--model", model, "--trace", str(path)],
                cwd=runner.ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            out.append(
                {
                    "what": f"membound hermes --trace, {model}, {layers} layers x {tokens} tokens",
                    "layers": layers,
                    "trace_mb": round(sum(a.nbytes for a in tr.acts.values()) / 1e6, 1),
                    "peak_rss_mb": round(int(run.stdout.split()[-1]) / 1024, 1),
                    "wall_s": round(time.perf_counter() - t0, 2),
                }
            )
            print(json.dumps(out[-1]))
    return out


SCALE_COUNTS = (2_000, 10_000, 40_000, 200_000, 1_000_000)  # requests per run (issue 57's targets: 10^6)
SCALE_REPLICAS = (1, 8)  # one engine; 8 replicas behind least-outstanding (issue 57)
SCALE_TIMEOUT_S = 600.0  # a run over this is stopped and the larger counts skipped
COMPARE_REQUESTS = 100_000  # `compare --systems all` at this many requests per system (issue 57: < 10 min)
SCALE_PLOT = "bench_serving_scale.png"  # written next to BENCH.md


def _scale_run(requests: int, replicas: int) -> None:
    """One run of :func:`bench_serving_scale`, in its own process so that its peak memory is its own: the
    issue-57 workload (LLaMA-2-7B on the GPU system, Gaussian 512/256, Poisson at 20 QPS per replica);
    ``replicas`` 0: that trace on every registered system, one replica each (`compare --systems all`)."""
    import resource

    from sysmodel import compare, systems
    from sysmodel.engines import replicas as reps
    from sysmodel.engines.serving import make_trace

    trace = make_trace("gaussian", requests, 1, qps=20.0 * max(replicas, 1), prompt=512, output=256)
    t0 = time.perf_counter()
    if replicas:
        reps.serve(trace, systems.build("gpu", "llama2-7b"), replicas, "least-outstanding").summary()
    else:
        compare.run("llama2-7b", trace, list(systems.entries()), show_progress=False)
    wall = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_SELF)  # CPU time too: wall time on a shared machine is its load's
    print(json.dumps({"wall_s": wall, "cpu_s": use.ru_utime + use.ru_stime, "peak_bytes": use.ru_maxrss * 1024}))


def bench_serving_scale(
    counts: tuple[int, ...] = SCALE_COUNTS, timeout: float = SCALE_TIMEOUT_S, plot: Path | None = None
) -> list[dict]:
    """Requests/s and peak memory (the process's RSS) against request count, on one replica and on 8 behind
    least-outstanding; a run over ``timeout`` is recorded as such and the larger counts are skipped. Each row
    names its date and commit: this part may be rerun alone (its rows then postdate the part's machine line)."""
    from sysmodel.runinfo import commit

    when = f"{time.strftime('%Y-%m-%d')}, commit {commit()[:12]}"
    rows = []
    for replicas, n in [(r, n) for r in SCALE_REPLICAS for n in counts] + [(0, COMPARE_REQUESTS)]:
        if rows and "over_s" in rows[-1] and rows[-1]["replicas"] == replicas:
            continue  # a smaller count of these replicas ran over
        code = f"from tb.bench import _scale_run; _scale_run({n}, {replicas})"
        try:
            done = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=runner.ROOT
            )
        except subprocess.TimeoutExpired:
            rows.append(
                {"what": "serving scale", "replicas": replicas, "requests": n, "over_s": timeout, "measured": when}
            )
            continue
        if done.returncode:
            raise RuntimeError(f"bench_serving_scale: {n} requests on {replicas}: {done.stderr[-2000:]}")
        m = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(
            {
                "what": "serving scale",
                "replicas": replicas,
                "requests": n,
                "wall_s": round(m["wall_s"], 2),
                "cpu_s": round(m["cpu_s"], 2),  # the whole process's, imports included
                "requests_per_s": round(n / m["wall_s"]),
                "peak_mb": round(m["peak_bytes"] / 1e6),
                "measured": when,
            }
        )
        print(json.dumps(rows[-1]))
    if plot is not None:
        serving_scale_plot(rows, plot)
    return rows


def serving_scale_lines(rows: list[dict]) -> list[str]:
    """BENCH.md's table of :func:`bench_serving_scale` (the log-log plot beside it)."""
    lines = [
        "The serving engine at scale (issue 57): LLaMA-2-7B on the GPU system, Gaussian 512/256 at 20 QPS per "
        "replica, one replica and 8 behind least-outstanding, and `compare --systems all` (requests per system; "
        "requests/s: requests per system over the run's wall time); each run its own process (peak RSS). Targets: "
        f"10^6 requests on one replica in < 2 min and < 2 GB, on 8 replicas in < 5 min; {COMPARE_REQUESTS:,} per "
        f"system through compare in < 10 min. Plot: `{SCALE_PLOT}`."
        f" Measured {rows[0]['measured']}; wall time carries the shared machine's load, CPU time is the run's.",
        "",
        "| replicas | requests | wall s | CPU s (process) | requests/s | peak MB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        who = r["replicas"] or "compare: every system, one replica each"
        if "over_s" in r:
            lines.append(f"| {who} | {r['requests']:,} | over {r['over_s']:g} (stopped) | | | |")
        else:
            lines.append(
                f"| {who} | {r['requests']:,} | {r['wall_s']} | {r['cpu_s']} | {r['requests_per_s']:,} | "
                f"{r['peak_mb']:,} |"
            )
    return lines


def serving_scale_plot(rows: list[dict], path: Path) -> Path:
    """Requests/s and peak memory against request count, log-log, one line per replica count."""
    from sysmodel.report.plots import pyplot, save

    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for replicas in sorted({r["replicas"] for r in rows} - {0}):  # 0: the compare row, one point
        pts = [r for r in rows if r["replicas"] == replicas and "wall_s" in r]
        label = f"{replicas} replica{'s' if replicas > 1 else ''}"
        a1.loglog([r["requests"] for r in pts], [r["requests_per_s"] for r in pts], marker="o", label=label)
        a2.loglog([r["requests"] for r in pts], [r["peak_mb"] for r in pts], marker="o", label=label)
    a1.set(xlabel="requests", ylabel="requests simulated per second", title="serving engine speed")
    a2.set(xlabel="requests", ylabel="peak memory (MB)", title="serving engine memory")
    a1.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, plt, path)


def _target_decode() -> dict:
    """A 70B decode of 1,000 tokens as one evaluation of the stage cost function."""
    from sysmodel.cost.devices import get_device
    from sysmodel.cost.models import load_model
    from sysmodel.cost.stage import ATTACC, Engine, decode_tokens

    cfg, eng = load_model("llama2-70b"), Engine(get_device("a100-80g-sxm"), ATTACC, 4)
    t0 = time.perf_counter()
    for _ in range(10):
        decode_tokens(cfg, eng, 8, 128, 1000)
    return {
        "what": "decode of 1,000 tokens, Llama2-70B on 4 A100s (one evaluation)",
        "measured": f"{(time.perf_counter() - t0) / 10 * 1e3:.2f} ms",
        "target": "< 10 ms",
    }


def _target_sweeps() -> list[dict]:
    """A 10,000-point sweep locally and on a 2-worker Dask LocalCluster (chunked submission)."""
    from dask.distributed import LocalCluster

    from sysmodel import sweep

    grid = {
        "model": ["llama3.1-8b", "qwen2.5-72b", "llama3.1-70b", "falcon-40b"],  # contexts past 65,536 (or none)
        "device": ["rtx4090", "a100-80g-sxm"],
        "batch": list(range(1, 251)),
        "kv_len": [512, 2048, 8192, 32768, 65536],
        "gpus": [8],
    }  # 10,000 points, 55% feasible (llama2/opt at 2-4K contexts made 8K-64K infeasible; one GPU held no 70B)
    cfg10k = {"kind": "decode", "grid": grid}
    sweep.validate(cfg10k)
    n = len(sweep.points(cfg10k))
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        local = sweep.sweep(cfg10k, Path(tmp) / "local.csv", workers=2).read_bytes()
        t_local = time.perf_counter() - t0
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
            t0 = time.perf_counter()
            dask = sweep.sweep(cfg10k, Path(tmp) / "dask.csv", scheduler=cluster.scheduler_address).read_bytes()
            t_dask = time.perf_counter() - t0
    return [
        {"what": f"sweep of {n} points, local pool (2 workers)", "measured": f"{t_local:.2f} s", "target": "-"},
        {
            "what": f"sweep of {n} points, Dask LocalCluster (2 workers), chunked",
            "measured": f"{t_dask:.2f} s ({t_dask / t_local:.2f}x local; byte-identical: "
            f"{'yes' if dask == local else 'no'})",
            "target": "< 1.5x local, identical",
        },
    ]


def _target_cdf() -> dict:
    """The TBT CDF plot of a long run."""
    from sysmodel import systems
    from sysmodel.engines import serving
    from sysmodel.report import plots

    res = serving.simulate(  # reserve: the most stages
        serving.make_trace("openr1", 1000), systems.build("gpu", "llama2-7b"), scheduler="reserve"
    )
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        plots.plot_tbt_cdf([res], Path(tmp) / "cdf.png")
        t_cdf = time.perf_counter() - t0
    return {
        "what": f"TBT CDF plot of a run of {res.stages:,} stages (serve --plot)",
        "measured": f"{t_cdf:.2f} s",
        "target": "< 0.5 s",
    }


def bench_targets() -> list[dict]:
    """The system model's speed targets: a 70B decode of 1,000 tokens as one evaluation, a 10,000-point sweep
    locally and on a 2-worker Dask LocalCluster (chunked submission), the TBT CDF plot of a long run, and
    `membound --help`'s start-up."""
    out = [_target_decode(), *_target_sweeps(), _target_cdf()]
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sysmodel.cli", "--help"], check=True, capture_output=True)
    out.append(
        {
            "what": "`membound --help` (a new process)",
            "measured": f"{time.perf_counter() - t0:.2f} s",
            "target": "< 0.5 s",
        }
    )
    for r in out:
        print(json.dumps(r))
    return out


OLD_ENGINE = "52d6dd2"  # the last commit with the pure-Python DRAM engine


def bench_dram(requests: int = 200_000, old_requests: int = 20_000) -> list[dict]:
    """Requests/s of the DRAM engine on streaming, random and strided (128) traces, beside the pure-Python
    engine of OLD_ENGINE run live from git on the first ``old_requests`` of each (same total cycles asserted
    on those: the command logs' identity is tests/test_memory_conformance.py's)."""
    import importlib.util
    import subprocess
    import sys
    from dataclasses import replace

    from sysmodel.engines import memory as mm

    src = subprocess.run(
        ["git", "show", f"{OLD_ENGINE}:sysmodel/engines/memory.py"],
        cwd=runner.ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "old_memory.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location("old_memory", path)
        old = importlib.util.module_from_spec(spec)
        sys.modules["old_memory"] = old  # dataclasses look their module up
        try:
            spec.loader.exec_module(old)
        finally:
            del sys.modules["old_memory"]
    p = replace(mm.DDR4_3200, org=replace(mm.DDR4_3200.org, channels=1))
    mm.simulate(p, [0, 1])  # compile (cached on disk after the first run)
    out = []
    for pattern, stride in (("streaming", 1), ("random", 1), ("strided", 128)):
        addrs = mm.pattern_addrs(p, pattern, requests, stride, seed=1)
        t0 = time.perf_counter()
        mm.simulate(p, addrs, refresh="postpone")
        new_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        reqs = old.Channel(p).run([old.Request(a) for a in addrs[:old_requests]])
        old_s = time.perf_counter() - t0
        same = max(r.done for r in reqs) == mm.simulate(p, addrs[:old_requests], refresh="postpone").cycles
        new_rate, old_rate = requests / new_s, old_requests / old_s
        out.append(
            {
                "what": f"{pattern}{f' {stride}' if stride > 1 else ''}",
                "requests": requests,
                "req_per_s": f"{new_rate:,.0f}",
                "old_requests": old_requests,
                "old_req_per_s": f"{old_rate:,.0f}",
                "speedup": f"{new_rate / old_rate:.0f}x",
                "same": "yes" if same else "NO",
            }
        )
        print(json.dumps(out[-1]))
    return out


def bench_flash() -> dict:
    """The real flash mechanism: an OPT-6.7B-shaped FFN layer at 1/4 size in a bundled file on this disk,
    synthetic predictor masks, the neuron cache (window 5) loading and computing every token."""
    from sysmodel.designs.flash import predictor as pr
    from sysmodel.designs.flash.cache import NeuronCache
    from sysmodel.designs.flash.store import FlashReader, write, zoo_ffn

    ffn = zoo_ffn("opt-6.7b", scale=4)
    acts = pr.synthetic(300, pr.Synthetic(d_model=ffn.d_model, d_ff=ffn.d_ff), seed=1)
    with (
        tempfile.TemporaryDirectory(dir=runner.ROOT / "build") as tmp,
        FlashReader(write(Path(tmp) / "ffn.bin", ffn), threads=32) as reader,
    ):
        cache = NeuronCache(reader, ffn.bias, ffn.d_ff, 5)
        t0 = time.perf_counter()
        for x, a in zip(acts.x, acts.active, strict=True):
            cache.step(a)
            cache.ffn(x, a)
        wall = time.perf_counter() - t0
        out = {
            "what": f"flash cache, OPT-6.7B FFN layer / 4 ({ffn.d_model} x {ffn.d_ff} fp32), window 5",
            "tokens": len(acts.x),
            "cache_mode": reader.cache_mode,
            "wall_s": round(wall, 3),
            "tokens_per_s": round(len(acts.x) / wall, 1),
            "mb_per_s": round(reader.bytes_read / wall / 1e6, 1),
        }
    print(json.dumps(out))
    return out


TITLES = {
    "rtl": "RTL simulation",
    "harness": "Transaction-level harness",
    "sysmodel": "System model",
    "gpu": "Calibrated GPU",
}


def render(data: dict) -> str:
    """BENCH.md from the measurements: each part's section (headed by the machine and date it ran on), then the
    measurement history of the suites' wall times and the notes measured by hand."""
    out = [
        "# membound benchmarks",
        "",
        f"Rendered by `make bench` (tb/bench.py) from `{BENCH_JSON.relative_to(runner.ROOT)}`, "
        "which each part rewrites for itself.",
        "",
    ]
    renderers = {"rtl": render_rtl, "sysmodel": render_sysmodel, "harness": render_harness, "gpu": render_gpu}
    for part, fn in renderers.items():
        if part in data:
            out += [f"## {TITLES[part]} ({data[part]['machine']})", "", *fn(data[part]), ""]
    if data.get("history"):
        out += [
            "## History",
            "",
            "The suites' wall times as measured on fresh clones (newest first).",
            "",
            "| date | commit | target | figure | conditions |",
            "| --- | --- | --- | --- | --- |",
        ]
        out += [
            f"| {h['date']} | {h['commit']} | {h['target']} | {h['figure']} | {h['conditions']} |"
            for h in data["history"]
        ]
        out.append("")
    for note in data.get("notes", []):  # a paragraph each
        out += [note, ""]
    return "\n".join(out).rstrip() + "\n"


def harness_workloads(scale: int = 1) -> list[tuple[str, runner.TbSpec, list]]:
    """The harness part's batches: DECA PE W=32 L=8 (q8 LUT programmed, then 4 x 60 sparse tiles at
    density 0.5) and every arithmetic unit in its first configuration (5 x 2,000 random vectors each); the
    handshake of the vector tests (p_valid 0.8, p_ready 0.7). ``scale`` divides the batch counts' sizes
    (tests use a small one)."""
    import random

    import numpy as np

    from golden import deca
    from golden.deca_spec import TILE
    from tb.arith.cases import SPECS as ARITH
    from tb.arith.cases import case
    from tb.deca.cases import SPECS as DECA
    from tb.deca.streams import lut_items, tile_items
    from tb.streams import pack
    from tb.txn import Batch

    pe = DECA[0]
    w, nrng, rng = pe.params["w"], np.random.default_rng(1), random.Random(1)
    fmt = deca.FORMATS["q8"]
    batches = [Batch({"lut": lut_items(deca.lut_image(fmt))}, {"o": 0}, 0.8, 1.0, 1, linger=2, timeout=10_000)]
    for i in range(4):
        items = {p: [] for p in ("cmd", "sqq", "mask", "scale")}
        n = 60 // scale
        for _ in range(n):
            for p, v in tile_items(deca.TileStreams.of(deca.random_tile(nrng, fmt, 0.5, True), w), w).items():
                items[p] += v
        batches.append(
            Batch(items, {"o": n * TILE // w}, 0.8, 0.7, 2 + i, linger=16, timeout=100 * n * TILE // w, stamps=["cmd"])
        )
    out = [("DECA PE W=32 L=8, q8 d=0.5", dataclasses.replace(pe, sim="verilator"), batches)]
    firsts: dict[str, runner.TbSpec] = {}
    for spec in ARITH:
        firsts.setdefault(spec.unit, spec)
    for spec in firsts.values():  # each arithmetic unit in its first configuration
        c, layout = case(spec), spec.build_unit().i.payload.shape()
        vec = [
            Batch(
                {"i": [pack(layout, c.random(rng)) for _ in range(2000 // scale)]},
                {"o": 2000 // scale},
                0.8,
                0.7,
                7 + i,
                linger=16,
                timeout=100_000,
            )
            for i in range(5)
        ]
        label = " ".join([spec.component.split(":")[1], *map(str, spec.params.values())])
        out.append((label, dataclasses.replace(spec, sim="verilator"), vec))
    return out


REPEATS = 3  # each driver runs the batches this many times; the fastest counts (this VM's noise is +-30%)
TXN_TARGET = 3.0  # issue 35: transaction-level cocotb within 3x of the C++ main


def bench_harness(scale: int = 1, only: int | None = None) -> dict:
    """Per workload: per-cycle cocotb, transaction-level cocotb and the C++ main on the same batches."""

    from tb import harness_main

    results = []
    for label, spec, batches in harness_workloads(scale)[:only]:
        row = {"workload": label, "batches": len(batches)}
        outs = {}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "batches.json"
            path.write_text(json.dumps([dataclasses.asdict(b) for b in batches]))
            bspec = dataclasses.replace(spec, test_module="tb.bench_tb")
            for mode in ("per_cycle", "txn"):
                out = Path(tmp) / f"{mode}.json"
                runner.run(
                    bspec,
                    extra_env={
                        "MEMBOUND_BENCH_BATCHES": str(path),
                        "MEMBOUND_BENCH_MODE": mode,
                        "MEMBOUND_BENCH_OUT": str(out),
                        "MEMBOUND_BENCH_REPEATS": str(REPEATS),
                    },
                )
                outs[mode] = json.loads(out.read_text())
                row[f"{mode}_cycles_per_s"] = round(outs[mode]["cycles"] / outs[mode]["wall_s"])
        runs = [harness_main.run(spec, batches) for _ in range(REPEATS)]
        caps, wall = runs[0][0], min(r[2] for r in runs)
        cxx_cycles = sum(c.cycles_run for c in caps)
        row["cxx_cycles_per_s"] = round(cxx_cycles / wall)
        if [c.items for c in caps] != outs["txn"]["items"] or [c.cycles for c in caps] != outs["txn"]["stamps"]:
            raise SystemExit(f"bench: {label}: the C++ main and transaction-level cocotb disagree")
        if outs["per_cycle"]["items"] != outs["txn"]["items"]:
            raise SystemExit(f"bench: {label}: per-cycle and transaction-level outputs differ")
        row.update(
            cycles=cxx_cycles,
            txn_vs_limit=round(row["cxx_cycles_per_s"] / row["txn_cycles_per_s"], 2),
            per_cycle_vs_limit=round(row["cxx_cycles_per_s"] / row["per_cycle_cycles_per_s"], 1),
            txn_speedup=round(row["txn_cycles_per_s"] / row["per_cycle_cycles_per_s"], 1),
        )
        results.append(row)
        print(json.dumps(row))
    return {"repeats": REPEATS, "txn_target": TXN_TARGET, "results": results}


def render_harness(d: dict) -> list[str]:
    lines = [
        "One harness build per unit on Verilator; the same batches through each driver. Batch cycles per second "
        f"of simulation wall time, the fastest of {d['repeats']} runs of the same batches per driver (stimulus "
        "generation and golden models excluded; load and drain included). `limit / x`: how many times slower "
        f"than the C++ main; the target is transaction-level within {d['txn_target']:g}x of it. All three produce the "
        "same outputs; the two harness drivers the same cycle stamps (checked).",
        "",
        "| workload | batch cycles | per-cycle cocotb cycles/s | transaction-level cocotb cycles/s | "
        "C++ main (limit) cycles/s | limit / per-cycle | limit / transaction-level | target | "
        "transaction-level / per-cycle |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['workload']} | {r['cycles']} | {r['per_cycle_cycles_per_s']} | {r['txn_cycles_per_s']} | "
        f"{r['cxx_cycles_per_s']} | {r['per_cycle_vs_limit']} | {r['txn_vs_limit']} | < {d['txn_target']:g} | "
        f"{r['txn_speedup']} |"
        for r in d["results"]
    ]
    return lines


def run(parts: tuple[str, ...], out_json: Path, out_md: Path, vectors: int) -> int:
    """Measure ``parts`` into ``out_json`` (each replacing its own entry), then render ``out_md`` from it."""
    data = json.loads(out_json.read_text()) if out_json.exists() else {}
    bench = {"rtl": lambda: bench_rtl(vectors), "harness": bench_harness, "sysmodel": bench_sysmodel, "gpu": bench_gpu}
    for part in parts:
        data[part] = {"machine": machine(), **bench[part]()}
        out_json.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        out_md.write_text(render(data))
        print(f"wrote the {part} part of {out_json} and {out_md}")
    return 0
