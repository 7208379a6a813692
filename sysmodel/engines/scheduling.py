"""Scheduler policies of the serving engine (:func:`sysmodel.engines.serving.simulate`), in a registry, and the
paged KV cache they share.

A policy answers four questions each iteration: how KV is held (reserved whole at admission, or paged in
blocks allocated as tokens are produced), what one iteration runs (prefill and decode together, or a
prefill-only iteration whenever new prompts can start), how prefill is split (whole prompts, or chunks
under a token budget that may count the iteration's decode tokens too), and whether that budget also
gates admission (a waiting request is admitted only while the iteration has room for its tokens).

* ``reserve`` — membound's original policy, kept as an idealisation: a request is admitted only when its
  whole KV (prompt + output tokens) fits beside what admitted requests reserved, which needs every output
  length in advance; never preempts. Prefill optionally chunked (``prefill_budget`` counts prompt tokens).
* ``orca`` — Orca (Yu et al., OSDI 2022): iteration-level scheduling, whole prompts in the same iteration
  as the running decodes; here on the paged cache.
* ``orca-reserve`` — Orca as published: the same iterations, but each request reserves KV for its maximum
  length at admission (Orca §4.2, Algorithm 1, reserves ``max_tokens`` slots per request; it does not
  page). Orca does not know a request's output length, so the maximum is the prompt plus the trace's
  longest output — the ``max_tokens`` limit a deployment sets so that every request of the trace can
  finish; never preempts.
* ``vllm`` — vLLM's default scheduler (Kwon et al., SOSP 2023; vLLM v0 ``Scheduler._schedule_default``,
  chunked prefill off): paged KV, prefill-prioritising — an iteration runs the prompts it can admit and
  nothing else, otherwise every running request decodes; preempts the latest-arrived running request when
  a block is missing. Prompts are admitted FCFS while their tokens fit ``max_batched_tokens`` (vLLM's
  ``max_num_batched_tokens``, :data:`VLLM_MAX_BATCHED_TOKENS`); prefill is never chunked, so a prompt
  longer than the cap is admitted only into an empty iteration and runs alone (vLLM rejects it instead).
* ``sarathi`` — Sarathi-Serve (Agrawal et al., OSDI 2024): chunked prefill under a per-iteration token
  budget that counts the decode tokens first (each running decode takes one), then the admitted prompts'
  chunks, FCFS; a waiting request is admitted only while the budget has room left for at least one of its
  tokens (Vidur's ``SarathiReplicaScheduler._get_next_batch``, microsoft/vidur 7d47513), so every admitted
  request starts its prefill in the iteration it is admitted in. Default budget 512 tokens (the paper's
  smaller setting).
* ``interleave`` — L3's adaptive chunk-partitioned batch interleaving (L3 §5.2-5.3): paged KV (as ``vllm``),
  prefill chunks in the same iteration as the running decodes, each iteration's chunk the system's own
  ``prefill_budget(decode_reqs, decode_ctx)`` (the most prompt tokens whose GPU time hides under the PIM's
  decode attention) unless ``prefill_budget`` is given; a system without one runs whole prompts (as
  ``orca``). ``reserve`` chunks the same way on the reserved cache.

The paged policies never look at a request's output length: a request is known to be done when it emits
its last token. **Paged KV** (:class:`Blocks`): blocks of ``block_size`` tokens (default 16, vLLM's); a
request holds ceil(KV tokens / block size) blocks, its prompt's allocated at admission; admission needs
the free blocks left after it to stay at or above the watermark, ``int(watermark x all blocks)`` blocks
(vLLM's rounding, down; default share 0.01). When a
running request needs a block and none is free, the latest-arrived running request is preempted (vLLM's
victim choice) by ``preempt``: ``recompute`` drops its KV and re-queues it at the head of the waiting queue,
to re-prefill its prompt and the tokens it produced; ``swap`` moves its blocks to host memory over the
system's host link (the link's time is charged to the iteration), and it is swapped back in, before any
new admission, once its blocks fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

PREEMPT = ("recompute", "swap")
BLOCK_SIZE = 16  # tokens per KV block (vLLM's default)
WATERMARK = 0.01  # vLLM's default free-block watermark for admission
# vLLM's max_num_batched_tokens default, input: vllm/config.py (vllm-project/vllm c0c2335)
# _DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048
# ("a balance between ITL and TTFT"); without chunked prefill SchedulerConfig takes max(max_model_len, 2048).
# membound's traces carry no max_model_len (a generated trace's lengths are not bounded by a model's
# context), so the engine takes the 2048 floor; --max-batched-tokens sets a deployment's value.
VLLM_MAX_BATCHED_TOKENS = 2048
SARATHI_BUDGET = 512  # tokens per iteration, Sarathi-Serve §5 (its 512 and 2048 settings; the smaller one)
HOST_LINK = "pcie4x16"  # a system naming no host link swaps over PCIe 4.0 x16 (sysmodel.cost.devices)


class Scheduler:
    """A policy (module docstring): what it is in class attributes, its settings on the instance (the paged
    cache's ``block_size`` and ``watermark``, ``preempt``, the per-iteration token ``budget``), and the three
    decisions the engine asks it for: whether a waiting request is admitted (:meth:`admits`), how an
    iteration's prefill is split (:meth:`plan`) and which running request gives way (:meth:`victim`)."""

    name: str = ""
    source: str = ""
    paged: bool = True  # KV in blocks as tokens are produced (False: whole KV reserved at admission)
    mixed: bool = True  # prefill and decode in one iteration (False: prompts it can admit run alone)
    chunked: bool = False  # prefill split under the token budget (False: whole prompts)
    budget_option: str | None = None  # the simulate() option that sets the per-iteration token budget
    budget_counts_decode: bool = False  # the budget counts the iteration's decode tokens (Sarathi)
    default_budget: int | None = None
    reserve_longest: bool = False  # reserves prompt + the trace's longest output (else its own output)

    def __init__(
        self,
        block_size: int = BLOCK_SIZE,
        watermark: float = WATERMARK,
        preempt: str = "recompute",
        prefill_budget: int | None = None,
        max_batched_tokens: int | None = None,
    ) -> None:
        for option, value in (("prefill_budget", prefill_budget), ("max_batched_tokens", max_batched_tokens)):
            if value is not None and value < 1:
                raise ValueError(f"{option}: {value} not allowed; must be >= 1 token")
            if value is not None and self.budget_option != option:
                takers = [s.name for s in SCHEDULERS.values() if s.budget_option == option]
                raise ValueError(
                    f"{option}: not allowed with scheduler {self.name}; allowed with {' and '.join(takers)}"
                )
        if preempt not in PREEMPT:
            raise ValueError(f"preempt: {preempt!r} not allowed; allowed: {', '.join(PREEMPT)}")
        self.block_size, self.watermark, self.preempt = block_size, watermark, preempt
        given = max_batched_tokens if self.budget_option == "max_batched_tokens" else prefill_budget
        self.budget: int | None = given if given is not None else self.default_budget  # tokens per iteration

    def admits(self, room: float, tokens: int, first: bool) -> bool:
        """Whether a waiting request with ``tokens`` to prefill is admitted into an iteration whose token
        budget has ``room`` left (``first``: no prefill in the iteration yet); KV is checked apart."""
        return True

    def plan(self, left: np.ndarray, decodes: int, system_budget) -> np.ndarray:
        """Prefill tokens each prefilling request (``left`` tokens to go, FCFS in admission order) computes in
        an iteration beside ``decodes`` decode tokens; ``system_budget()`` is the system's own prefill budget,
        which ``reserve`` follows when none is set."""
        budget: float = math.inf if self.budget is None or not self.chunked else self.budget
        if self.budget_counts_decode:
            budget -= decodes
        elif self.budget is None and self.chunked and system_budget is not None:
            budget = system_budget()
        chunk = np.zeros(len(left), np.int64)
        for j, todo in enumerate(left):
            if budget <= 0:
                break
            chunk[j] = min(todo, budget)
            budget -= chunk[j]
        return chunk

    def victim(self, running: list[int]) -> int:
        """The running request preempted when a block is missing: the latest arrived (vLLM's choice)."""
        return max(running)


SCHEDULERS: dict[str, type[Scheduler]] = {}


def register(cls: type[Scheduler]) -> type[Scheduler]:
    SCHEDULERS[cls.name] = cls
    return cls


@register
class Reserve(Scheduler):
    name = "reserve"
    source = "membound's original policy: whole KV reserved at admission, output lengths known (an idealisation)"
    paged = False
    chunked = True  # only under a prefill_budget given, or the system's own
    budget_option = "prefill_budget"


@register
class Orca(Scheduler):
    name = "orca"
    source = "Orca (OSDI 2022): iteration-level batching, whole prompts beside the decodes; paged KV"


@register
class OrcaReserve(Scheduler):
    name = "orca-reserve"
    source = "Orca (OSDI 2022) as published: iteration-level batching, maximum length reserved per request"
    paged = False
    reserve_longest = True


@register
class Vllm(Scheduler):
    name = "vllm"
    source = "vLLM v0 default scheduler (SOSP 2023): paged KV, prefill-prioritising, latest-arrived preempted"
    mixed = False
    budget_option = "max_batched_tokens"
    default_budget = VLLM_MAX_BATCHED_TOKENS

    def admits(self, room: float, tokens: int, first: bool) -> bool:
        return first or tokens <= room  # whole prompts; one longer than the cap runs alone


@register
class Sarathi(Scheduler):
    name = "sarathi"
    source = "Sarathi-Serve (OSDI 2024): chunked prefill, token budget counting decode tokens first"
    chunked = True
    budget_option = "prefill_budget"
    budget_counts_decode = True
    default_budget = SARATHI_BUDGET

    def admits(self, room: float, tokens: int, first: bool) -> bool:
        return room > 0  # its first chunk starts in this iteration


@register
class Interleave(Scheduler):
    name = "interleave"
    source = "L3 (§5.2-5.3): prefill chunks beside the decodes, sized by the system's own budget; paged KV"
    chunked = True  # under a prefill_budget given, or the system's own
    budget_option = "prefill_budget"


def get_scheduler(name: str, **settings) -> Scheduler:
    """The policy ``name`` with its ``settings`` (:class:`Scheduler`'s)."""
    try:
        cls = SCHEDULERS[name]
    except KeyError:
        raise ValueError(f"scheduler: unknown {name!r}; allowed: {', '.join(SCHEDULERS)}") from None
    return cls(**settings)


@dataclass
class Blocks:
    """The paged KV cache of one engine: ``total`` blocks of ``size`` tokens; ``held[r]`` per request."""

    total: int
    size: int
    watermark: int  # blocks that must stay free after an admission
    held: np.ndarray
    free: int = 0

    @classmethod
    def of(
        cls, capacity_bytes: float, bytes_per_token: float, n: int, size: int = BLOCK_SIZE, watermark: float = WATERMARK
    ) -> Blocks:
        if size < 1:
            raise ValueError(f"block_size: {size} not allowed; must be >= 1 token")
        if not 0 <= watermark < 1:
            raise ValueError(f"watermark: {watermark} not allowed; a share of the blocks in [0, 1)")
        total = int(min(capacity_bytes / (size * bytes_per_token), 2**62))  # an unbounded cache: 2^62 blocks
        # the watermark rounds down as vLLM v0's SelfAttnBlockSpaceManager does: int(watermark * num_gpu_blocks)
        # (vllm/core/block_manager.py, vllm-project/vllm 006a839; Vidur's schedulers alike)
        return cls(total, size, int(watermark * total), np.zeros(n, np.int64), total)

    def need(self, tokens) -> np.ndarray:
        """Blocks that ``tokens`` KV tokens occupy."""
        return -(-np.asarray(tokens, np.int64) // self.size)

    def can_admit(self, tokens: int) -> bool:
        return self.free - -(-int(tokens) // self.size) >= self.watermark  # need(), on a Python int

    def grow(self, r, tokens) -> None:
        """Requests ``r`` now hold ``tokens`` KV tokens (blocks allocated; the caller made room)."""
        new = self.need(tokens)
        self.free -= int((new - self.held[r]).sum())
        self.held[r] = new

    def release(self, r) -> int:
        """Free the blocks of requests ``r``; returns how many."""
        n = int(self.held[r].sum())
        self.free += n
        self.held[r] = 0
        return n

    def steps_that_fit(self, kv: np.ndarray, limit: int) -> int:
        """Most decode steps (<= ``limit``) the requests holding ``kv`` tokens can all take (one token each
        per step) before the free blocks run out. A request with ``slack`` tokens of room left in its last
        block needs a new block at steps slack + 1, slack + 1 + size, ...; slacks lie in [0, size), so the
        j-th round of new blocks (all requests) comes after the (j-1)-th, and the (free + 1)-th block is
        wanted at step sorted_slack[free mod n] + 1 + (free div n) x size — the step before it is the last
        that fits."""
        kv = np.asarray(kv, np.int64)
        if not len(kv):
            return limit
        slack = np.sort(self.need(kv) * self.size - kv)
        rounds, i = divmod(self.free, len(kv))
        return min(limit, int(slack[i]) + rounds * self.size)
