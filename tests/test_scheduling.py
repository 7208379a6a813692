"""Serving v2: the scheduler policies and the paged KV cache (sysmodel/engines/scheduling.py) on the serving engine,
against cases worked by hand on a system whose every stage takes one second (ConstantSystem)."""

import json
import math
from dataclasses import dataclass

import numpy as np
import pytest
from constant_system import ConstantSystem
from hypothesis import given
from hypothesis import strategies as st

from sysmodel.engines import scheduling
from sysmodel.engines.serving import Trace, simulate


def trace(arrival, prompt, output) -> Trace:
    return Trace(np.array(arrival, float), np.array(prompt), np.array(output), "hand")


@given(
    st.lists(st.integers(0, 100), min_size=1, max_size=8), st.integers(1, 8), st.integers(0, 40), st.integers(1, 200)
)
def test_steps_that_fit_is_the_last_step_whose_new_blocks_are_free(kv, size, free, limit) -> None:
    """The closed form (rounds of new blocks ordered by each request's slack) against stepping one by one."""
    b = scheduling.Blocks(10**6, size, 0, np.zeros(len(kv), np.int64), free)
    kv = np.array(kv)

    def extra(k: int) -> int:
        return int((b.need(kv + k) - b.need(kv)).sum())

    brute = next((k for k in range(limit + 1) if extra(k + 1) > free), limit) if extra(0) <= free else 0
    assert b.steps_that_fit(kv, limit) == min(brute, limit)


def test_registry() -> None:
    assert list(scheduling.SCHEDULERS) == ["reserve", "orca", "orca-reserve", "vllm", "sarathi", "interleave"]
    assert all(s.source for s in scheduling.SCHEDULERS.values())
    with pytest.raises(
        ValueError, match="unknown 'fifo'; allowed: reserve, orca, orca-reserve, vllm, sarathi, interleave"
    ):
        simulate(trace([0], [1], [1]), ConstantSystem(1.0), scheduler="fifo")


def test_blocks_round_up_and_keep_the_watermark() -> None:
    b = scheduling.Blocks.of(64, 1.0, 3, size=16, watermark=0.25)  # 4 blocks, one kept free
    assert (b.total, b.watermark, b.free) == (4, 1, 4)
    np.testing.assert_array_equal(b.need([0, 1, 16, 17, 32]), [0, 1, 1, 2, 2])
    assert b.can_admit(48) and not b.can_admit(49)  # 3 blocks leave the 1; 4 would not
    b.grow(np.array([0]), 17)
    assert (b.free, int(b.held[0])) == (2, 2)
    assert not b.can_admit(17)  # 2 more would leave 0 < 1
    assert b.steps_that_fit(np.array([17]), 100) == 64 - 17  # its 2 blocks and the 2 free: 64 tokens
    assert b.release(np.array([0])) == 2 and b.free == 4
    with pytest.raises(ValueError, match="block_size: 0 not allowed"):
        scheduling.Blocks.of(64, 1.0, 1, size=0)
    with pytest.raises(ValueError, match="watermark: 1.0 not allowed"):
        scheduling.Blocks.of(64, 1.0, 1, watermark=1.0)


def test_watermark_holds_an_admission_back() -> None:
    """4 blocks of 16, prompts of 17 tokens (2 blocks each): with a 25% watermark the second request waits
    for the first to finish; with none both run at once."""
    tr = trace([0, 0], [17, 17], [2, 2])
    sys_ = ConstantSystem(1.0, capacity=64)
    r = simulate(tr, sys_, scheduler="orca", block_size=16, watermark=0.25)
    np.testing.assert_array_equal(r.admitted, [0, 2])
    np.testing.assert_array_equal(r.first_token, [1, 3])
    np.testing.assert_array_equal(r.finish, [2, 4])
    r = simulate(tr, sys_, scheduler="orca", block_size=16, watermark=0.0)
    np.testing.assert_array_equal(r.finish, [2, 2])
    assert r.meta["preemptions"] == 0


def test_preempt_recompute_by_hand() -> None:
    """2 blocks of 16, two requests of 15 + 3 tokens. t=1: both prefilled (1 block each). t=2: both decode
    (16 tokens: still 1 block). Now each needs a second block and none is free: the later one (1) is
    preempted, its 16 KV tokens dropped; 0 decodes alone, finishing at 3. Then 1 re-prefills its prompt and
    its 2 tokens (17: both blocks), which gives its third token at 4: a 2 s gap since its last."""
    r = simulate(
        trace([0, 0], [15, 15], [3, 3]),
        ConstantSystem(1.0, capacity=32),
        scheduler="orca",
        block_size=16,
        watermark=0.0,
        preempt="recompute",
    )
    np.testing.assert_array_equal(r.finish, [3, 4])
    assert (r.meta["preemptions"], r.meta["recomputed_tokens"]) == (1, 16)
    np.testing.assert_array_equal(r.stall_tbt, [2.0])
    assert r.tbt_percentiles((50, 99)) == {50: 1.0, 99: 2.0}  # three 1 s gaps and the 2 s stall
    assert r.per_request_tbt()[1][1] == 2.0


def test_preempt_swap_by_hand() -> None:
    """As above with swap over a 16 B/s host link (1 s per 16-token block of 1-byte tokens): the victim's one
    block goes out (1 s, charged to 0's last decode: 2..4), comes back after 0 finishes (1 s more on its own
    decode: 4..6), and its third token comes 4 s after its second."""
    sys_ = ConstantSystem(1.0, capacity=32)
    sys_.host_link_bw = 16.0
    r = simulate(trace([0, 0], [15, 15], [3, 3]), sys_, scheduler="orca", block_size=16, watermark=0.0, preempt="swap")
    np.testing.assert_array_equal(r.finish, [4, 6])
    assert r.meta["preemptions"] == 1 and r.meta["recomputed_tokens"] == 0
    assert r.meta["swapped_gb"] == pytest.approx(32e-9)
    np.testing.assert_array_equal(r.stall_tbt, [4.0])


def test_sarathi_budget_counts_decode_tokens() -> None:
    """Budget 4: 0 (prompt 2) and 1 (prompt 6) start together. Sarathi: stage 1 prefills 2 + 2, stage 2 has
    0's decode first and 3 prompt tokens, stage 3 the last 1: 1 finishes at 3. Reserve's budget counts prompt
    tokens only: 2 + 2, then 4, and 1 finishes at 2."""
    tr = trace([0, 0], [2, 6], [3, 1])
    r = simulate(tr, ConstantSystem(1.0), scheduler="sarathi", prefill_budget=4)
    np.testing.assert_array_equal(r.first_token, [1, 3])
    np.testing.assert_array_equal(r.finish, [3, 3])
    r = simulate(tr, ConstantSystem(1.0), scheduler="reserve", prefill_budget=4)
    np.testing.assert_array_equal(r.finish, [3, 2])
    assert simulate(tr, ConstantSystem(1.0), scheduler="sarathi").meta["scheduler"] == "sarathi"  # budget 512
    with pytest.raises(ValueError, match="prefill_budget: not allowed with scheduler vllm"):
        simulate(tr, ConstantSystem(1.0), scheduler="vllm", prefill_budget=4)


@dataclass
class BudgetSystem(ConstantSystem):
    """A constant-time system with its own prefill budget (L3's ``prefill_budget``), whatever the decodes."""

    budget: int = 2

    def prefill_budget(self, decode_reqs: int, decode_ctx: int) -> float:
        return self.budget


def test_interleave_chunks_prompts_by_the_systems_budget_beside_the_decodes() -> None:
    """1 (prompt 4) arrives at 1.5 while 0 decodes. interleave: stage 2..3 runs 2 of 1's prompt tokens (the
    system's budget) beside 0's decode, 0 finishes at 3, 1's last 2 tokens at 3..4. vLLM runs 1's prompt alone
    (0 waits: [4, 3]); a budget given overrides the system's (4 tokens: both done at 3)."""
    tr = trace([0, 1.5], [1, 4], [3, 1])
    r = simulate(tr, BudgetSystem(1.0), scheduler="interleave")
    np.testing.assert_array_equal(r.finish, [3, 4])
    assert r.meta["preemptions"] == 0  # paged, as vllm
    np.testing.assert_array_equal(simulate(tr, BudgetSystem(1.0), scheduler="vllm").finish, [4, 3])
    np.testing.assert_array_equal(
        simulate(tr, BudgetSystem(1.0), scheduler="interleave", prefill_budget=4).finish, [3, 3]
    )


def test_vllm_runs_new_prompts_alone() -> None:
    """1 arrives at 1.5 while 0 decodes: vLLM's next stage (2..3) is 1's prompt alone, so 0's token waits
    (a 2 s gap); Orca runs both in that stage."""
    tr = trace([0, 1.5], [1, 1], [3, 1])
    r = simulate(tr, ConstantSystem(1.0), scheduler="vllm")
    np.testing.assert_array_equal(r.finish, [4, 3])
    np.testing.assert_array_equal(r.stall_tbt, [2.0])
    r = simulate(tr, ConstantSystem(1.0), scheduler="orca")
    np.testing.assert_array_equal(r.finish, [3, 3])
    assert len(r.stall_tbt) == 0


class Recording(ConstantSystem):
    """1 s per stage; keeps each priced stage's token count (prefill stages are priced one by one)."""

    def __init__(self) -> None:
        super().__init__(1.0)
        self.tokens: list[int] = []

    def stage_times(self, shape):
        self.tokens += np.atleast_1d(shape.tokens).tolist()
        return super().stage_times(shape)


def test_vllm_max_batched_tokens_by_hand() -> None:
    """Cap 8, prompts 3, 3, 3, 10, 2 (one token out each): 0 and 1 fill 6 of the 8 (2's 3 would pass it),
    2 runs next, then 10 > 8 is admitted into an empty iteration and runs alone, then 4. vLLM's default cap
    (2048) takes all five in one iteration."""
    tr = trace(np.zeros(5), [3, 3, 3, 10, 2], [1] * 5)
    s = Recording()
    r = simulate(tr, s, scheduler="vllm", max_batched_tokens=8)
    np.testing.assert_array_equal(r.admitted, [0, 0, 1, 2, 3])
    np.testing.assert_array_equal(r.first_token, [1, 1, 2, 3, 4])
    assert s.tokens == [6, 3, 10, 2]
    assert scheduling.VLLM_MAX_BATCHED_TOKENS == 2048
    np.testing.assert_array_equal(simulate(tr, ConstantSystem(1.0)).first_token, [1] * 5)
    with pytest.raises(ValueError, match="max_batched_tokens: not allowed with scheduler sarathi; allowed with vllm"):
        simulate(tr, ConstantSystem(1.0), scheduler="sarathi", max_batched_tokens=8)
    with pytest.raises(ValueError, match="max_batched_tokens: 0 not allowed; must be >= 1 token"):
        simulate(tr, ConstantSystem(1.0), max_batched_tokens=0)


def test_sarathi_admits_only_while_the_budget_has_room() -> None:
    """Budget 8, ten prompts of 3 tokens at t=0, two tokens out each. Stage 1: 0, 1 and 2 (2 of its 3) fill
    the budget; the rest wait outside (before, all ten were admitted and held their blocks). Stage k >= 2:
    the two requests prefilled last decode (2 tokens), the split prompt ends (1), two more are admitted (3 +
    2). So two requests are admitted a second, none waits admitted without a chunk, and each finishes one
    stage after its first token."""
    s = Recording()
    r = simulate(trace(np.zeros(10), [3] * 10, [2] * 10), s, scheduler="sarathi", prefill_budget=8)
    np.testing.assert_array_equal(r.admitted, [0, 0, 0, 1, 1, 2, 2, 3, 3, 4])
    np.testing.assert_array_equal(r.first_token, [1, 1, 2, 2, 3, 3, 4, 4, 5, 5])
    np.testing.assert_array_equal(r.finish, [2, 2, 3, 3, 4, 4, 5, 5, 6, 6])
    assert s.tokens[:5] == [8, 8, 8, 8, 6]  # stage 5: 2 decodes, 1 + 3 prompt tokens; then 2 decodes


def test_watermark_rounds_down_as_vllm() -> None:
    """1% of 27,950 blocks is 279.5: vLLM keeps int(279.5) = 279 free, not 280."""
    b = scheduling.Blocks.of(27_950 * 16, 1.0, 1, size=16, watermark=0.01)
    assert (b.total, b.watermark) == (27_950, 279)
    assert b.can_admit((27_950 - 279) * 16) and not b.can_admit((27_950 - 279) * 16 + 1)


def test_orca_reserve_reserves_the_longest_output() -> None:
    """Prompts of 4, outputs 2 and 8, a 20-token cache. reserve holds 4 + 2 and 4 + 8 = 18: both run, 1
    finishes at 8. orca-reserve holds 4 + 8 for each (the trace's longest output): 1 waits for 0 (done at
    2), takes its first token at 3 and its last at 10; paged orca runs both."""
    tr = trace([0, 0], [4, 4], [2, 8])
    sys_ = ConstantSystem(1.0, capacity=20)
    np.testing.assert_array_equal(simulate(tr, sys_, scheduler="reserve").finish, [2, 8])
    r = simulate(tr, sys_, scheduler="orca-reserve")
    np.testing.assert_array_equal(r.admitted, [0, 2])
    np.testing.assert_array_equal(r.finish, [2, 10])
    assert "preemptions" not in r.meta
    np.testing.assert_array_equal(simulate(tr, sys_, scheduler="orca", block_size=4, watermark=0).finish, [2, 8])
    with pytest.raises(ValueError, match="prefill_budget: not allowed with scheduler orca-reserve"):
        simulate(tr, sys_, scheduler="orca-reserve", prefill_budget=4)


def test_paged_admits_more_than_reserve_when_kv_binds() -> None:
    """Long outputs on a small cache: reserve admits by prompt + output, paging by what is held, so the
    paged run keeps more requests running and finishes sooner (the issue's KV-bound regime)."""
    tr = trace(np.zeros(8), np.full(8, 64), np.full(8, 512))
    sys_ = ConstantSystem(0.01, capacity=4 * 576)  # room for 4 requests' whole KV at once
    reserve = simulate(tr, sys_, scheduler="reserve")
    paged = simulate(tr, sys_, scheduler="vllm", watermark=0.0)
    assert paged.makespan < reserve.makespan
    assert paged.meta["preemptions"] > 0  # they grow into each other: the latest arrived yields
    assert paged.trace.output.sum() == reserve.trace.output.sum()


def test_metrics_scheduling_delay_kv_share_and_goodput() -> None:
    tr = trace([0, 0], [17, 17], [2, 2])
    r = simulate(tr, ConstantSystem(1.0, capacity=64), scheduler="orca", block_size=16, watermark=0.25, stages=True)
    np.testing.assert_array_equal(r.scheduling_delay, [0, 2])
    assert len(r.iter_kv) == len(r.iter_time) and 0 < r.iter_kv.max() <= 1
    g = r.goodput(slo_tbt=1.0, slo_ttft=1.0)  # request 1 waits 3 s for its first token
    assert (g["met"], g["share"]) == (1, 0.5) and g["requests_per_s"] == pytest.approx(1 / 4)
    assert r.goodput()["met"] == 2
    s = r.summary()
    assert s["scheduling_delay_p99_s"] == pytest.approx(np.percentile([0, 2], 99)) and s["preemptions"] == 0
    with pytest.raises(ValueError, match="slo_tbt: -1 not allowed"):
        r.goodput(slo_tbt=-1)


def test_reserve_is_unchanged_by_paging_options() -> None:
    """reserve ignores the paged cache's options and reports no paging fields."""
    tr = trace([0, 0, 1], [3, 5, 7], [4, 2, 3])
    a = simulate(tr, ConstantSystem(1.0, capacity=20), scheduler="reserve")
    b = simulate(tr, ConstantSystem(1.0, capacity=20), scheduler="reserve", block_size=4, watermark=0.5, preempt="swap")
    np.testing.assert_array_equal(a.finish, b.finish)
    assert "preemptions" not in a.meta and math.isnan(a.goodput(slo_ttft=0.5)["share"]) is False


def test_serve_and_compare_take_the_scheduler(tmp_path, capsys) -> None:
    """`membound serve --scheduler vllm ...`: the scheduler line, goodput at the SLOs, the KV utilisation plot
    (checked for colliding text); compare passes the options to every system."""
    from sysmodel.cli import main
    from sysmodel.report import plots

    plots.CHECK, plots.FOUND[:] = True, []
    serve = (
        "serve --model llama2-7b --system gpu --trace openr1 --requests 40 --scheduler vllm --preempt swap "
        "--block-size 32 --slo-tbt 50 --slo-ttft 10 --out"
    )
    try:
        assert main([*serve.split(), str(tmp_path / "s")]) == 0
    finally:
        plots.CHECK = False
    assert plots.FOUND == []
    out = capsys.readouterr().out
    assert "scheduler vllm: scheduling delay p50" in out and "preemptions (swap)" in out
    assert "goodput: " in out and "requests meet the SLO of TBT <= 50 ms and T2FT <= 10 s (" in out  # bounds said
    (run,) = json.loads((tmp_path / "s" / "run.json").read_text())  # and kept beside the goodput they give
    assert (run["summary"]["slo_tbt_ms"], run["summary"]["slo_ttft_s"]) == (50, 10)
    assert (tmp_path / "s" / "kv_utilisation.png").exists()
    compare = "compare --model llama2-7b --systems gpu,cpu --requests 4 --scheduler sarathi --out"
    assert main([*compare.split(), str(tmp_path / "c")]) == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--scheduler", "fifo"],
            "scheduler: unknown 'fifo'; allowed: reserve, orca, orca-reserve, vllm, sarathi, interleave",
        ),
        (["--preempt", "drop"], "--preempt: 'drop' not allowed; allowed: recompute, swap"),
        (["--watermark", "1.5"], "--watermark: 1.5 not allowed"),
        (["--block-size", "0"], "--block-size: '0' is not a whole number >= 1"),
        (["--slo-tbt", "-1"], "--slo-tbt: '-1' is not a number > 0"),
        (["--scheduler", "orca", "--prefill-budget", "64"], "prefill_budget: not allowed with scheduler orca"),
        (["--scheduler", "sarathi", "--max-batched-tokens", "64"], "max_batched_tokens: not allowed with scheduler"),
        (["--max-batched-tokens", "0"], "--max-batched-tokens: '0' is not a whole number >= 1"),
    ],
)
def test_scheduler_mistakes(args, needle, tmp_path, capsys) -> None:
    from sysmodel.cli import main

    assert main(["serve", "--model", "llama2-7b", "--requests", "2", "--out", str(tmp_path / "o"), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


@pytest.mark.fuzz
@given(
    st.sampled_from(list(scheduling.SCHEDULERS)),
    st.sampled_from(scheduling.PREEMPT),
    st.integers(0, 2**32 - 1),
    st.integers(1, 30),
    st.integers(1, 32),
    st.floats(0, 0.3),
    st.integers(1, 8),
)
def test_random_runs_keep_the_invariants(name, preempt, seed, n, block, watermark, max_batch) -> None:
    """Any trace on a tight cache: every request finishes with exactly its tokens, times are ordered, the
    blocks come back, TBT samples are positive, and reserve never preempts."""
    rng = np.random.default_rng(seed)
    prompt, output = rng.integers(1, 40, n), rng.integers(1, 40, n)
    tr = trace(np.sort(rng.random(n) * 5), prompt, output)
    blocks = -(-(prompt.max() + output.max()) // block) + 1  # orca-reserve holds the longest output
    cap = float(block * max(blocks, int(np.ceil(blocks / (1 - watermark))) + 1) * rng.integers(1, 3))
    r = simulate(
        tr,
        ConstantSystem(0.1, capacity=cap),
        max_batch=max_batch,
        scheduler=name,
        block_size=block,
        watermark=watermark,
        preempt=preempt,
        stages=True,
    )
    assert not np.isnan(r.finish).any()
    assert (r.arrival <= r.admitted).all() and (r.admitted < r.first_token).all()
    assert (r.first_token <= r.finish).all()
    regained = r.stall_tbt.size - int(r.iter_stalled.sum())  # tokens a recomputing prefill gave back
    assert n + int(r.iter_decode.sum()) + regained == output.sum()  # first tokens, decode tokens, those
    assert (r.stall_tbt > 0).all() and (r.iter_kv >= 0).all() and (r.iter_kv <= 1 + 1e-9).all()
    if name == "reserve":
        assert r.stall_tbt.size == 0 and "preemptions" not in r.meta
