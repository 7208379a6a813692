"""Hypothesis fuzzing of the DECA PE RTL against golden.deca.

One example is a list of BATCHES tile batches of 1..TILES_PER_BATCH tiles (fewer in `make test`), all run in one
simulation (tb/deca/pe_fuzz_tb.py, transaction-level). A batch has one format — any bit width 1..8 with
arbitrary LUT contents, or raw 16-bit; unscaled or a scale group from W to 512 — and tiles with densities
including exactly 0 and 1, adversarial masks (every window full, alternating bits, one full window, empty),
every code value, arbitrary scale bit patterns (NaN, Inf, subnormals), sometimes a truncated or overlong
stream, and random handshake probabilities.
`make test` runs MEMBOUND_RTL_FUZZ_EXAMPLES=1 example (derandomized); `make fuzz` runs more.
"""

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from golden import deca
from golden.deca_spec import TILE
from tb.deca.cases import SPECS
from tb.runner import run

SPEC = SPECS[0]
W = SPEC.params["w"]
NV = TILE // W
EXAMPLES = int(os.environ.get("MEMBOUND_RTL_FUZZ_EXAMPLES", "1"))
# per example (one simulation): the transaction-level harness (tb/txn.py) runs a batch for about the cost of
# loading it, so a `make fuzz` example carries ~10x the tiles it did with per-cycle drivers (6 batches of 1-3
# tiles); `make test`'s one example stays a smoke test of that old size, to keep make test's time
BATCHES, TILES_PER_BATCH = (16, 40) if EXAMPLES > 1 else (6, 3)


def adversarial_mask(kind: str, rng: np.random.Generator, d: float) -> np.ndarray:
    i = np.arange(TILE)
    return {
        "random": rng.random(TILE) < d,
        "full": np.ones(TILE, bool),
        "empty": np.zeros(TILE, bool),
        "alternating": i % 2 == 0,
        "one_window": i // W == rng.integers(NV),
        "first_lanes": i % W < W // 2 + 1,
    }[kind]


@st.composite
def batches(draw) -> dict:
    bits = draw(st.sampled_from([*range(1, 9), 16]))
    table = None if bits == 16 else draw(st.lists(st.integers(0, 0xFFFF), min_size=1 << bits, max_size=1 << bits))
    group = draw(st.sampled_from([None, W, 2 * W, 128, 512]))
    fmt = deca.DecaFormat("fuzz", bits, tuple(table) if table else None, group=group)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tiles = []
    for _ in range(draw(st.integers(1, TILES_PER_BATCH))):
        sparse = draw(st.booleans())
        kind = draw(st.sampled_from(["random", "full", "empty", "alternating", "one_window", "first_lanes"]))
        d = draw(st.sampled_from([0.0, 1.0, 0.05, 0.5, 0.97]))
        mask = adversarial_mask(kind, rng, d) if sparse else None
        nnz = TILE if mask is None else int(np.count_nonzero(mask))
        codes = rng.integers(0, 1 << bits, nnz).astype(np.uint16)
        scales = None if group is None else rng.integers(0, 1 << 16, fmt.n_scales).astype(np.uint16)
        ts = deca.TileStreams.of(deca.CompressedTile(fmt, codes, mask, scales), W)
        cut = draw(st.sampled_from(["none"] * 6 + ["lines", "mask", "scales", "extra_line"]))
        if cut == "lines" and len(ts.lines) > 1:
            ts.lines = ts.lines[:-1]
        elif cut == "mask" and len(ts.mask) > 1:
            ts.mask = ts.mask[:-1]
        elif cut == "scales" and len(ts.scales) > 1:
            ts.scales = ts.scales[:-1]
        elif cut == "extra_line":
            ts.lines = ts.lines + [int(rng.integers(0, 2**62))]
        c = ts.cmd
        tiles.append(
            {
                "cmd": {"bits": c.bits, "sparse": c.sparse, "scaled": c.scaled, "group_log2": c.group_log2},
                "lines": ts.lines,
                "mask": ts.mask,
                "scales": ts.scales,
            }
        )
    return {
        "name": f"q{bits}-g{group}",
        "bits": bits,
        "table": table,
        "group": group,
        "tiles": tiles,
        "p_valid": draw(st.sampled_from([1.0, 0.9, 0.5])),
        "p_ready": draw(st.sampled_from([1.0, 0.8, 0.4])),
    }


@pytest.mark.sim
@pytest.mark.fuzz
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES == 1,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(st.lists(batches(), min_size=BATCHES, max_size=BATCHES))
def test_rtl_matches_golden_on_fuzzed_tiles(tmp_path, example: list[dict]) -> None:
    path = tmp_path / "batches.json"
    path.write_text(json.dumps(example))
    spec = dataclasses.replace(SPEC, test_module="tb.deca.pe_fuzz_tb")
    run(spec, extra_env={"MEMBOUND_DECA_VECTORS": str(path)})


@pytest.mark.sim
def test_long_sqq_tile_whose_window_ends_mid_line() -> None:
    """Regression, found by the fuzzer's larger batches: a sparse tile with one extra SQQ line whose last vOp
    starts with 513..1023 bits in the window and leaves at most a line. The PE used to wait for a line the
    window would only load after the take, and hung; it now ends the tile (flagging ``sqq_long``) once any
    line is in. The batch also has a short bitmask stream and a dense tile before it."""
    spec = dataclasses.replace(SPEC, test_module="tb.deca.pe_fuzz_tb")
    run(spec, extra_env={"MEMBOUND_DECA_VECTORS": str(Path(__file__).parent / "data" / "deca_long_sqq_tile.json")})
