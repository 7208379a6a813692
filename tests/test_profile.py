"""A user's measured iteration times as stage times (sysmodel/profile.py): exact on a linear profile,
refused outside it, bad files named; `membound serve --profile`."""

import numpy as np
import pytest

from sysmodel.cost import Infeasible
from sysmodel.models import StageShape
from sysmodel.profile import ProfiledSystem
from sysmodel.serving import ConstantSystem, Trace, simulate


def decode_time(reqs, ctx):
    return 0.01 + 1e-3 * np.asarray(reqs) + 1e-6 * np.asarray(ctx)


def prefill_time(tokens):
    return 0.02 + 1e-4 * np.asarray(tokens)


def write(path, batches=(1, 8, 64), ctx_per_req=(128, 4096, 32768), prefill=(1, 512, 8192)) -> None:
    rows = ["decode_reqs,decode_ctx,prefill_tokens,seconds"]
    rows += [f"{b},{b * c},0,{float(decode_time(b, b * c))!r}" for b in batches for c in ctx_per_req]
    rows += [f"0,0,{p},{float(prefill_time(p))!r}" for p in prefill]
    path.write_text("\n".join(rows) + "\n")


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
        ("a,b,c,d\n1,2,3,4\n", "needs the header decode_reqs,decode_ctx,prefill_tokens,seconds"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n", "has no rows"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,x,0,1\n", "line 2: every column needs a number"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,-1\n", "line 2: counts >= 0 and seconds > 0"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,1\n2,2,0,1\n", "(prefill); it has 2 and 0"),
        ("decode_reqs,decode_ctx,prefill_tokens,seconds\n1,1,0,1\n0,0,5,1\n", "at least two distinct decode points"),
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
    assert "(profile a100.csv)" in capsys.readouterr().out
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
