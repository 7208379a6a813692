"""`make bench`: the performance figures membound records in BENCH.md so regressions show.

Parts (``python -m tb.cli bench --part ...``; each rewrites only its own section of BENCH.md):

* ``rtl``: for every testbench and installed simulator, a fresh build, then a run of the vector test;
  simulated cycles per second of wall time (cocotb and the golden model included).
* ``sysmodel``: the serving simulator on the L3 traces (1,000 requests each, the paper's protocol) and
  on a Poisson trace, and the sweep's points per second — wall time of the simulation itself.

Timings are wall-clock on the machine named in the section header; run on an idle machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sysmodel.characterization import read
from tb import runner
from tb.charz import record_path
from tb.registry import all_specs

PARTS = ("rtl", "sysmodel")
DECA_BENCH_TILES = 2  # tiles per DECA format and density: bounds the Icarus run (~2.5 min per design)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                   if ln.startswith("model name"))
    return f"{time.strftime('%Y-%m-%d')}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def bench_rtl(vectors: int) -> tuple[list[dict], list[str]]:
    """Fresh build + run per (testbench, simulator), each in a clean build root; the paper-size testbenches
    (marker ``full``: the 8 x 16 L3 rank, ~10 min on Icarus and hours of Verilator C++ build) are left to
    `make sim`."""
    results = []
    for sim in runner.available_simulators():
        for spec in all_specs(full=False):
            with tempfile.TemporaryDirectory() as tmp:
                env = {**os.environ, "SIM": sim, "MEMBOUND_BUILD": tmp, "MEMBOUND_VECTORS": str(vectors),
                       "MEMBOUND_DECA_TILES": str(DECA_BENCH_TILES)}
                code = ("import sys, time; from tb import runner; from tb.registry import spec_by_tag;"
                        "s = spec_by_tag(sys.argv[1]); t = time.perf_counter();"
                        "runner.build(s, runner.simulator(s)); b = time.perf_counter() - t;"
                        "t = time.perf_counter(); runner.run(s); print(b, time.perf_counter() - t)")
                proc = subprocess.run([sys.executable, "-c", code, spec.tag], env=env, capture_output=True,
                                      text=True, cwd=runner.ROOT)
                if proc.returncode:
                    print(proc.stdout[-2000:], proc.stderr[-2000:])
                    raise SystemExit(f"bench: {spec.tag} on {sim} failed")
                build_s, run_s = map(float, proc.stdout.split()[-2:])
                rec = read(record_path(spec.tag, sim, Path(tmp) / "characterization"))
            row = {"testbench": spec.tag, "simulator": sim, "build_s": round(build_s, 2),
                   "run_s": round(run_s, 2), "vectors": rec.vectors, "sim_cycles": rec.sim_cycles,
                   "vector_test_s": rec.wall_s,
                   "cycles_per_s": round(rec.sim_cycles / rec.wall_s) if rec.wall_s else None}
            results.append(row)
            print(json.dumps(row))
    lines = [f"Per testbench and simulator, a fresh build, then a run with {vectors} random vectors (DECA PE: "
             f"{DECA_BENCH_TILES} tiles per format and density; the paper-size L3 rank is `make sim`'s only); "
             "cycles/s is simulated cycles of the vector test "
             "per second of wall time (cocotb + golden model included).", "",
             "| testbench | simulator | build s | run s | build+run s | simulated cycles/s |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['testbench']} | {r['simulator']} | {r['build_s']} | {r['run_s']} | "
              f"{r['build_s'] + r['run_s']:.2f} | {r['cycles_per_s']} |" for r in results]
    return results, lines


SERVING_BUDGET_S = 10.0  # issue 8: 1,000 L3-trace requests in under 10 s on this 2-core machine


def bench_sysmodel() -> tuple[list[dict], list[str]]:
    from sysmodel import serving, sweep
    from sysmodel.baselines import GpuOnly

    gpu = GpuOnly("gpt3-175b", "a100-80g-sxm", 8)
    runs = [(name, serving.make_trace(name, 1000, seed=1), {}) for name in serving.L3_TRACES]
    runs.append(("gaussian 4096/512 @ 8 QPS", serving.make_trace("gaussian", 1000, 1, 8.0, 4096, 512),
                 {"max_batch": 128}))
    results = []
    for label, trace, kw in runs:
        t0 = time.perf_counter()
        res = serving.simulate(trace, gpu, **kw)
        wall = time.perf_counter() - t0
        results.append({"what": f"serve {label}", "system": gpu.name, "requests": len(trace),
                        "output_tokens": int(trace.output.sum()), "stages": len(res.iter_time),
                        "wall_s": round(wall, 3), "stages_per_s": round(len(res.iter_time) / wall)})
        print(json.dumps(results[-1]))
    cfg = sweep.load_config(runner.ROOT / "examples" / "decode.toml")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        sweep.sweep(cfg, Path(tmp) / "out.csv", workers=2)
        wall = time.perf_counter() - t0
    n = len(sweep.points(cfg))
    results.append({"what": "sweep examples/decode.toml (2 workers)", "points": n, "wall_s": round(wall, 3),
                    "points_per_s": round(n / wall, 1)})
    results.append(bench_flash())
    lines = ["The serving simulator (sysmodel/serving.py) on GPT-175B, GPU-only, 8x A100-80GB: 1,000 requests of "
             f"each L3 trace (Table 4 statistics, offline) and a Poisson trace; budget {SERVING_BUDGET_S:g} s per "
             "1,000-request L3 run.", "",
             "| run | requests | output tokens | stages | wall s | stages/s |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['what']} | {r['requests']} | {r['output_tokens']} | {r['stages']} | {r['wall_s']} | "
              f"{r['stages_per_s']} |" for r in results if "stages" in r]
    lines += ["", "| sweep | points | wall s | points/s |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {r['what']} | {r['points']} | {r['wall_s']} | {r['points_per_s']} |"
              for r in results if "points" in r]
    f = next(r for r in results if r["what"].startswith("flash"))
    lines += ["", "| flash mechanism | tokens | cache mode | wall s | tokens/s | MB/s read |",
              "| --- | ---: | --- | ---: | ---: | ---: |",
              f"| {f['what']} | {f['tokens']} | {f['cache_mode']} | {f['wall_s']} | {f['tokens_per_s']} | "
              f"{f['mb_per_s']} |"]
    return results, lines


def bench_flash() -> dict:
    """The real flash mechanism: an OPT-6.7B-shaped FFN layer at 1/4 size in a bundled file on this disk,
    synthetic predictor masks, the neuron cache (window 5) loading and computing every token."""
    from sysmodel.flash import predictor as pr
    from sysmodel.flash.cache import NeuronCache
    from sysmodel.flash.store import FlashReader, write, zoo_ffn

    ffn = zoo_ffn("opt-6.7b", scale=4)
    acts = pr.synthetic(300, pr.Synthetic(d_model=ffn.d_model, d_ff=ffn.d_ff), seed=1)
    with tempfile.TemporaryDirectory(dir=runner.ROOT / "build") as tmp, \
            FlashReader(write(Path(tmp) / "ffn.bin", ffn), threads=32) as reader:
        cache = NeuronCache(reader, ffn.bias, ffn.d_ff, 5)
        t0 = time.perf_counter()
        for x, a in zip(acts.x, acts.active, strict=True):
            cache.step(a)
            cache.ffn(x, a)
        wall = time.perf_counter() - t0
        out = {"what": f"flash cache, OPT-6.7B FFN layer / 4 ({ffn.d_model} x {ffn.d_ff} fp32), window 5",
               "tokens": len(acts.x), "cache_mode": reader.cache_mode, "wall_s": round(wall, 3),
               "tokens_per_s": round(len(acts.x) / wall, 1), "mb_per_s": round(reader.bytes_read / wall / 1e6, 1)}
    print(json.dumps(out))
    return out


TITLES = {"rtl": "RTL simulation", "sysmodel": "System model"}


def write_section(md: Path, part: str, lines: list[str]) -> None:
    """Replace (or append) ``part``'s section of BENCH.md, keeping the others."""
    begin, end = f"<!-- bench:{part} -->", f"<!-- /bench:{part} -->"
    block = "\n".join([begin, f"## {TITLES[part]} ({machine()})", "", *lines, end])
    text = md.read_text() if md.exists() else ""
    if begin in text:
        text = re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda _m: block, text, flags=re.S)
    else:
        if not text.startswith("# "):
            text = "# membound benchmarks\n\nWritten by `make bench` (tb/bench.py); each section by its own part.\n"
        text = text.rstrip() + "\n\n" + block
    md.write_text(text.rstrip() + "\n")


def run(parts: tuple[str, ...], out_json: Path, out_md: Path, vectors: int) -> int:
    out_json.parent.mkdir(parents=True, exist_ok=True)
    for part in parts:
        results, lines = bench_rtl(vectors) if part == "rtl" else bench_sysmodel()
        (out_json.parent / f"{part}.json").write_text(json.dumps({"machine": machine(), "results": results},
                                                                 indent=1))
        write_section(out_md, part, lines)
        print(f"wrote the {part} section of {out_md}")
    return 0
