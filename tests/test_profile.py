"""A user's measured iteration times as stage times (sysmodel/engines/profile.py): exact on a linear profile,
refused outside it, bad files named; `membound serve --profile`."""

import hashlib
import json

import numpy as np
import pytest
from constant_system import ConstantSystem

from sysmodel.cost.models import StageShape
from sysmodel.cost.stage import Infeasible
from sysmodel.engines.profile import COLUMNS, LEGACY, ProfiledSystem
from sysmodel.engines.serving import Trace, simulate


def decode_time(reqs, ctx):
    return 0.01 + 1e-3 * np.asarray(reqs) + 1e-6 * np.asarray(ctx)


def prefill_time(tokens):
    return 0.02 + 1e-4 * np.asarray(tokens)


def write(path, batches=(1, 8, 64), ctx_per_req=(128, 4096, 32768), prefill=(1, 512, 8192)) -> None:
    rows = ["decode_reqs,decode_ctx,prefill_tokens,seconds"]
    rows += [f"{b},{b * c},0,{float(decode_time(b, b * c))!r}" for b in batches for c in ctx_per_req]
    rows += [f"0,0,{p},{float(prefill_time(p))!r}" for p in prefill]
    path.write_text("\n".join(rows) + "\n")


HEADER = ",".join(COLUMNS)


def linear_s(tokens):
    return 0.01 + 1e-4 * np.asarray(tokens)


def attention_s(pairs):
    return 1e-8 * np.asarray(pairs)


def decode_attention_s(reqs, ctx):
    return 1e-3 * np.asarray(reqs) + 1e-6 * np.asarray(ctx)


def write_operators(path, batches=(1, 8, 64), ctx_per_req=(128, 4096), chunks=((1, 0), (512, 0), (4096, 0))) -> None:
    """Decode-only rows at each batch and context, prefill-only rows of a chunk after ``done`` tokens."""
    rows = [HEADER]
    for b in batches:
        for c in ctx_per_req:
            rows.append(f"{b},{b * c},0,0,{float(linear_s(b))!r},0,{float(decode_attention_s(b, b * c))!r}")
    for c, done in chunks:
        pairs = c * done + c * (c + 1) / 2
        rows.append(f"0,0,{c},{pairs!r},{float(linear_s(c))!r},{float(attention_s(pairs))!r},0")
    path.write_text("\n".join(rows) + "\n")


def test_operator_profile_prices_a_mixed_iteration_by_hand(tmp_path) -> None:
    """A Sarathi-style iteration: 4 decodes over 4,000 context tokens beside a 256-token chunk of a prompt
    512 of whose tokens are computed. Linear layers at 260 tokens: 0.01 + 0.026 = 0.036 s; prefill
    attention at 256 x 512 + 256 x 257 / 2 = 163,968 pairs: 1.63968 ms; decode attention 4 ms + 4 ms: in
    all 45.63968 ms. The two-table form of the same measurements adds a decode iteration (0.01 + 0.0004 +
    0.008) and a 256-token prefill (0.01 + 0.0256 + attention of 32,896 pairs from scratch): 54.33 ms, the
    weights' pass counted twice and the 512 computed tokens missed."""
    path = tmp_path / "ops.csv"
    write_operators(path, chunks=((1, 0), (512, 0), (512, 3584), (4096, 0)))
    s = ProfiledSystem(ConstantSystem(1.0), path)
    mixed = StageShape.prefill(1, 256, 512)
    shape = StageShape(
        tokens=mixed.tokens + 4,
        decode_reqs=4,
        decode_ctx=4000,
        prefill_pairs=mixed.prefill_pairs,
        prefill_kv=mixed.prefill_kv,
    )
    assert mixed.prefill_pairs == 163_968
    assert s.stage_times(shape)[()] == pytest.approx(0.036 + 1.63968e-3 + 0.008, rel=1e-12)
    legacy = tmp_path / "legacy.csv"
    rows = [",".join(LEGACY)]
    rows += [
        f"{b},{b * c},0,{float(linear_s(b) + decode_attention_s(b, b * c))!r}" for b in (1, 8, 64) for c in (128, 4096)
    ]
    rows += [f"0,0,{c},{float(linear_s(c) + attention_s(c * (c + 1) / 2))!r}" for c in (1, 256, 512)]
    legacy.write_text("\n".join(rows) + "\n")
    old = ProfiledSystem(ConstantSystem(1.0), legacy).stage_times(shape)[()]
    assert old == pytest.approx(0.0184 + 0.01 + 0.0256 + 3.2896e-4, rel=1e-9)
    with pytest.raises(Infeasible, match="measures prefill attention at 1-8.39066e[+]06 [(]query, key[)] pairs"):
        s.stage_times(StageShape.prefill(1, 4096, 4096))
    with pytest.raises(Infeasible, match="measures linear layers at 1-4096 tokens, not 5000"):
        s.stage_times(StageShape(tokens=5000, prefill_pairs=10_000))


def test_default_scheduler_serves_on_a_profile_measured_to_4096_tokens(tmp_path, capsys) -> None:
    """Issue 52's done-when: 200 prompts of 512 tokens at t=0 under vllm's default 2,048-token cap run as
    prefill iterations of 2,048 tokens, inside a profile measured to 4,096 (before the cap: one iteration of
    102,400 tokens, refused); in both profile forms."""
    from sysmodel.cli import main

    ops, legacy = tmp_path / "ops.csv", tmp_path / "legacy.csv"
    write_operators(ops, batches=(1, 64, 256), ctx_per_req=(1, 2048))
    write(legacy, batches=(1, 64, 256), ctx_per_req=(1, 2048), prefill=(1, 4096))
    for path in (ops, legacy):
        argv = ["serve", "--model", "llama2-7b", "--requests", "200", "--prompt", "512", "--output", "16"]
        assert main([*argv, "--profile", str(path), "--out", str(tmp_path / path.stem)]) == 0
        assert f"(profile {path.name})" in capsys.readouterr().out
        big = ["--max-batched-tokens", "8192", "--out", str(tmp_path / "x")]
        assert main([*argv, "--profile", str(path), *big]) == 2
        assert "8192" in capsys.readouterr().err


def test_linear_profile_is_reproduced_exactly_and_never_extrapolated(tmp_path) -> None:
    path = tmp_path / "prof.csv"
    write(path)
    s = ProfiledSystem(ConstantSystem(1.0, capacity=1e6), path)
    shape = StageShape(
        tokens=np.array([4, 300, 20]),
        decode_reqs=np.array([4, 20, 20]),
        decode_ctx=np.array([4 * 1000, 20 * 2000, 20 * 300]),
    )
    np.testing.assert_allclose(
        s.stage_times(shape),
        decode_time([4, 20, 20], [4000, 40000, 6000]) + np.array([0, prefill_time(280), 0]),
        rtol=1e-9,
    )
    assert s.stage_times(StageShape(tokens=100))[()] == pytest.approx(prefill_time(100))
    with pytest.raises(Infeasible, match="no measurement around 100 decode requests"):
        s.stage_times(StageShape.decode(100, 1000))
    with pytest.raises(Infeasible, match="measures prefill of 1-8192 tokens, not 9000"):
        s.stage_times(StageShape(tokens=9000))
    assert s.kv_capacity() == 1e6 and "iteration times" in str(s.provenance().constants)


def test_one_batch_size_interpolates_along_its_line(tmp_path) -> None:
    path = tmp_path / "prof.csv"
    write(path, batches=(8,))
    s = ProfiledSystem(ConstantSystem(1.0), path)
    assert s.stage_times(StageShape.decode(8, 1000))[()] == pytest.approx(decode_time(8, 8000))
    with pytest.raises(Infeasible, match="no measurement around 4 decode requests"):
        s.stage_times(StageShape.decode(4, 1000))


def test_serving_on_a_profile_equals_the_constant_system_it_measured(tmp_path) -> None:
    """A profile measured off a 1 s-per-stage system serves a trace exactly as that system does."""
    path = tmp_path / "flat.csv"
    path.write_text(
        "decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,1\n1,100,0,1\n4,1,0,1\n4,400,0,1\n0,0,1,1\n0,0,100,1\n"
    )
    tr = Trace(np.zeros(3), np.array([3, 5, 7]), np.array([4, 2, 3]))
    a = simulate(tr, ConstantSystem(1.0))
    b = simulate(tr, ProfiledSystem(ConstantSystem(1.0), path), max_batch=4)
    np.testing.assert_array_equal(a.finish, b.finish)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a,b,c,d\n1,2,3,4\n", f"needs the header {','.join(COLUMNS)} (or {','.join(LEGACY)})"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n", "has no rows"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,x,0,1\n", "line 2: every column needs a number"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,-1\n", "line 2: counts >= 0 and seconds > 0"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,1\n2,2,0,1\n", "(prefill); it has 2 and 0"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,1\n0,0,5,1\n", "at least two distinct decode points"),
        (f"{HEADER}\n0,0,4,6,1,1,0\n", "it has 0 and 1"),
        (f"{HEADER}\n0,0,4,3,1,1,0\n", "line 2: prefill_pairs >= prefill_tokens"),
        (f"{HEADER}\n2,1,0,0,1,0,1\n", "line 2: decode_ctx >= decode_reqs"),
        (f"{HEADER}\n2,8,0,0,1,0,0\n", "line 2: decode_ctx >= decode_reqs, and decode_attention_s > 0"),
        (f"{HEADER}\n0,0,0,0,1,0,0\n", "line 2: an iteration has tokens"),
        (f"{HEADER}\n0,0,4,10,1,0,0\n", "line 2: prefill_attention_s > 0 exactly when prefill_tokens > 0"),
    ],
)
def test_bad_profiles_are_named(text, needle, tmp_path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"profile: .*{needle.replace('(', '[(]').replace(')', '[)]')}"):
        ProfiledSystem(ConstantSystem(1.0), path)


def test_serve_profile_cli(tmp_path, capsys) -> None:
    from sysmodel.cli import main

    path = tmp_path / "a100.csv"
    write(path, batches=(1, 64, 256), ctx_per_req=(1, 4096, 65536), prefill=(1, 65536))
    assert (
        main(
            ["serve", "--model", "llama2-7b", "--requests", "20", "--profile", str(path), "--out", str(tmp_path / "o")]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "(profile a100.csv)" in out and "efficiency_profile" not in out  # measured times: no GPU profile
    (run,) = json.loads((tmp_path / "o" / "run.json").read_text())
    assert run["run"]["efficiency_profile"] is None
    sha = hashlib.sha256(path.read_bytes()).hexdigest()[:16]  # the run block names the file it ran on
    assert run["run"]["profile"] == f"{path} (sha256 {sha})" and f"profile {path} (sha256 {sha})," in out
    assert (
        main(
            [
                "serve",
                "--model",
                "llama2-7b",
                "--requests",
                "2",
                "--profile",
                str(tmp_path / "none.csv"),
                "--out",
                str(tmp_path / "o2"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err
