"""The serving engine: iteration-level (ORCA) continuous batching of a :class:`~sysmodel.engines.workload.Trace` on a
:class:`~sysmodel.systems.System`, one :class:`Engine` per serving instance.

**Stages**: every iteration runs the admitted requests a scheduler policy picks (:mod:`sysmodel.engines.scheduling`:
``vllm``, the default, ``reserve``, ``orca``, ``orca-reserve``, ``sarathi``; the policy object answers
admission, the iteration's prefill split and the preemption victim). It is *mixed* when it holds prefill
work (whole prompts, or chunks under a token budget) with the decodes riding along (``vllm`` runs prompts
alone, at most ``max_batched_tokens`` of them), and *decode-only* otherwise. A request's first output token
comes at the end of the stage that finishes its prompt; each later stage it is in gives it one more.
**Admission** is FCFS up to ``max_batch`` requests. Under ``reserve`` a request is admitted only when its
whole KV cache — (prompt + output tokens) x the system's bytes per token — fits next to what admitted
requests reserved (never over-commit, never preempt; it needs output lengths in advance: an idealisation;
``orca-reserve`` reserves the trace's longest output instead of the request's own). The paged policies
hold KV in blocks allocated as tokens are produced, admit by free blocks above a watermark and, under
``vllm`` and ``sarathi``, only while the iteration's token budget has room, and preempt (recompute or swap)
when a block is missing; they learn a request is done when it emits its last token. A request that could
never fit is :class:`~sysmodel.cost.stage.Infeasible`, or with ``oversize="reject"`` is dropped before the run
(vLLM rejects a request longer than its KV cache) and counted in the result's ``meta["rejected"]``.

**Pricing**: decode-only stretches between events (a finish, an admissible arrival, the last free block)
are priced in one vectorised call, so a trace of 10^7 output tokens runs in seconds.

**Event loop**: an :class:`Engine` takes requests as they are routed to it (:meth:`Engine.add`) and runs
the iterations that start before a given time (:meth:`Engine.advance`), so one loop advances many engines
together (:mod:`sysmodel.engines.replicas`). An iteration's decisions use only the requests arrived by its start;
a decode-only stretch also needs the engine's next arrival (it ends with the stage that arrival lands in,
when it can be admitted), so it is settled once that arrival is known or the stretch ends before any
unrouted request can arrive. Run alone (:func:`simulate`) every arrival is known from the start.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import fields

import numpy as np

from sysmodel.cost.devices import get_link
from sysmodel.cost.models import StageShape
from sysmodel.cost.stage import Infeasible
from sysmodel.engines.metrics import Distinct, ExactSum, KvSeries, Result, range_max
from sysmodel.engines.scheduling import BLOCK_SIZE, HOST_LINK, WATERMARK, Blocks, Scheduler, get_scheduler
from sysmodel.engines.workload import Trace, make_trace
from sysmodel.progress import serve_progress
from sysmodel.systems import System

MAX_STRETCH = 1 << 16  # decode-only iterations priced in one call (bounds memory)
# Stage times the cost memo (:class:`StageCosts`) holds at most: 64 MB of decode tables at 8 bytes each (single
# stages, far fewer, count one each); past it the memo starts over, which costs recomputation, never a number.
MEMO_CELLS = 1 << 23
OVERSIZE = ("error", "reject")
DEFAULT_SCHEDULER = "vllm"  # paged, preempting, output lengths unknown: what deployed servers do (issue 33)


class _Rows:
    """Rows of numbers appended as a run goes, in one growing array (amortised doubling): a field costs 8
    bytes, not a Python object."""

    def __init__(self, width: int, dtype: type) -> None:
        self.a, self.n = np.zeros((64, width), dtype), 0

    def extend(self, block) -> None:
        block = np.asarray(block, self.a.dtype).reshape(-1, self.a.shape[1])
        if self.n + len(block) > len(self.a):
            more = max(len(self.a), len(block))
            self.a = np.concatenate([self.a, np.zeros((more, self.a.shape[1]), self.a.dtype)])
        self.a[self.n : self.n + len(block)] = block
        self.n += len(block)

    def col(self, j: int) -> np.ndarray:
        return np.ascontiguousarray(self.a[: self.n, j])


class _Stages:
    """The stages of a run as the engine produces them, turned into per-stage columns a chunk at a time
    (:meth:`take`: the engine streams each chunk into its statistics and drops it). Single
    stages are kept as rows; a decode-only stretch as one row (first stage, steps, requests, context at its
    first step, requests in the system, stalled tokens of its first step; KV share at its start and end) and
    its stage times, expanded in one vectorised pass — a paged run has thousands of short stretches. Energy
    is priced there too: a stage's energy depends on nothing after it, so one call per MAX_STRETCH stages
    replaces one per segment."""

    def __init__(self, base: int = 0) -> None:
        # single stages: (stage, decode, in system, stalled, tokens, decode_reqs, decode_ctx, prefill_kv),
        # (seconds, KV share, prefill_pairs); stretches: (stage, steps, requests, context, in system, stalled),
        # (KV0, KV1), and every stretch stage's seconds
        self.single, self.single_f = _Rows(8, np.int64), _Rows(3, float)
        self.stretch, self.stretch_f, self.stretch_dt = _Rows(6, np.int64), _Rows(2, float), _Rows(1, float)
        self.n = self.base = base  # stages recorded; the first one not yet taken

    @property
    def held(self) -> int:
        return self.n - self.base

    def take(self, system: System) -> tuple[int, dict[str, np.ndarray]]:
        """(Index of the first stage held, :meth:`columns` of those held); they are dropped."""
        base, col = self.base, self.columns(system)
        self.__init__(self.n)
        return base, col

    def stage(self, shape: StageShape, dt: float, in_sys: int, kv: float, stalled: int) -> None:
        d = shape.decode_reqs
        self.single.extend([self.n, d, in_sys, stalled, shape.tokens, d, shape.decode_ctx, shape.prefill_kv])
        self.single_f.extend([dt, kv, shape.prefill_pairs])
        self.n += 1

    def decode(self, dts: np.ndarray, reqs: int, ctx0: int, in_sys: int, kv0: float, kv1: float, stalled: int) -> None:
        self.stretch.extend([self.n, len(dts), reqs, ctx0, in_sys, stalled])
        self.stretch_f.extend([kv0, kv1])
        self.stretch_dt.extend(dts)
        self.n += len(dts)

    def columns(self, system: System) -> dict[str, np.ndarray]:
        """Per-stage ``time``, ``decode`` tokens, requests ``in_system``, ``energy``, ``kv`` share, ``stalled``
        of the stages held."""
        n, base = self.held, self.base
        col = {
            "time": np.zeros(n),
            "decode": np.zeros(n, np.int64),
            "in_system": np.zeros(n, np.int64),
            "energy": np.zeros(n),
            "kv": np.zeros(n),
            "stalled": np.zeros(n, np.int64),
        }
        if self.single.n:
            at = self.single.col(0) - base
            for name, j in (("decode", 1), ("in_system", 2), ("stalled", 3)):
                col[name][at] = self.single.col(j)
            col["time"][at], col["kv"][at] = self.single_f.col(0), self.single_f.col(1)
            tokens, reqs, ctx, kv = (self.single.col(j) for j in (4, 5, 6, 7))
            shape = StageShape(tokens, reqs, ctx, self.single_f.col(2), kv)
            col["energy"][at] = self._price(system, shape, col["time"][at])
        if self.stretch.n:
            first, k, reqs, ctx0, in_sys = (self.stretch.col(j) for j in range(5))
            first = first - base
            kv0, kv1 = self.stretch_f.col(0), self.stretch_f.col(1)
            step = np.arange(k.sum()) - np.repeat(np.cumsum(k) - k, k)  # step within its stretch
            at = np.repeat(first, k) + step
            col["time"][at] = self.stretch_dt.col(0)
            r = np.repeat(reqs, k)
            col["decode"][at], col["in_system"][at] = r, np.repeat(in_sys, k)
            slope = np.repeat((kv1 - kv0) / np.maximum(k - 1, 1), k)  # KV grows linearly over a stretch
            kv = step * slope + np.repeat(kv0, k)
            last = np.cumsum(k) - 1
            kv[last] = np.where(k > 1, kv1, kv0)
            col["kv"][at] = kv
            col["stalled"][first] = self.stretch.col(5)
            shape = StageShape(tokens=r, decode_reqs=r, decode_ctx=np.repeat(ctx0, k) + step * r)
            col["energy"][at] = self._price(system, shape, col["time"][at])
        return col

    @staticmethod
    def _price(system: System, shape: StageShape, seconds: np.ndarray) -> np.ndarray:
        parts = []
        for i in range(0, len(seconds), MAX_STRETCH):
            part = StageShape(
                *(
                    np.broadcast_to(getattr(shape, f.name), len(seconds))[i : i + MAX_STRETCH]
                    for f in fields(StageShape)
                )
            )
            e = np.asarray(system.energy(part, seconds[i : i + MAX_STRETCH]), float)
            bad = ~(np.isfinite(e) & (e >= 0))
            if bad.any():  # a system's mistake, named rather than printed as a NaN or negative J/token
                raise ValueError(
                    f"system {system.name}: energy gave {float(np.ravel(e[bad])[0])!r} J for a stage; "
                    "a stage's energy is a finite number >= 0"
                )
            parts.append(np.broadcast_to(e, len(seconds[i : i + MAX_STRETCH])))
        return np.concatenate(parts)


class StageCosts:
    """A system's stage times, each distinct stage priced once when the system declares its stage time a
    function of the shape alone (``pure_stage_times``; a system drawing expert routing per stage does not).
    Keys are exact — a prefill stage's five fields; a decode-only stage's requests and summed context, kept
    in one array per request count indexed by context — so every time is the very number the system
    returned for that shape (its cost functions are elementwise: an entry does not depend on its batch)."""

    def __init__(self, system: System) -> None:
        self.system, self.on = system, bool(getattr(system, "pure_stage_times", False))
        self.singles: dict[tuple, float] = {}  # single stages by their five fields
        self.decodes: dict[int, np.ndarray] = {}  # requests -> seconds by summed context (NaN: not priced)
        self.cells = 0

    def stage(self, shape: StageShape) -> float:
        """Seconds of one stage (scalar fields)."""
        key = (shape.tokens, shape.decode_reqs, shape.decode_ctx, shape.prefill_pairs, shape.prefill_kv)
        dt = self.singles.get(key) if self.on else None
        if dt is None:
            dt = float(np.asarray(self.system.stage_times(shape)).reshape(-1)[0])
            if not (dt > 0 and math.isfinite(dt)):  # scalar test: this path prices every new prefill stage
                self._refuse(dt)
            if self.on:
                self._room(1)
                self.singles[key] = dt
        return dt

    def decode(self, reqs: int, ctx: np.ndarray) -> np.ndarray:
        """Seconds of decode-only stages of ``reqs`` requests at each summed context of ``ctx``."""
        if not self.on:
            shape = StageShape(tokens=reqs, decode_reqs=reqs, decode_ctx=ctx)
            return np.broadcast_to(self._priced(shape), ctx.shape)
        table = self.decodes.get(reqs)
        if table is None or len(table) <= ctx[-1]:
            old = 0 if table is None else len(table)
            table = _grown(table, int(ctx[-1]) + 1)
            self._room(len(table) - old)
            self.decodes[reqs] = table
        dts = table[ctx]
        todo = np.isnan(dts)
        if todo.any():
            shape = StageShape(tokens=reqs, decode_reqs=reqs, decode_ctx=ctx[todo])
            dts[todo] = np.broadcast_to(self._priced(shape), (int(todo.sum()),))
            table[ctx[todo]] = dts[todo]
        return dts

    def _priced(self, shape: StageShape) -> np.ndarray:
        """The system's seconds for ``shape``; one that is not a positive finite number is its mistake, named
        here rather than met as a negative latency, a NaN the memo takes for unpriced, or an overflow."""
        dts = np.asarray(self.system.stage_times(shape), float)
        bad = ~(np.isfinite(dts) & (dts > 0))
        if bad.any():
            self._refuse(float(np.ravel(dts[bad])[0]))
        return dts

    def _refuse(self, dt: float) -> None:
        raise ValueError(
            f"system {self.system.name}: stage_times gave {dt!r} s for a stage; "
            "a stage takes a positive, finite number of seconds"
        )

    def _room(self, cells: int) -> None:
        self.cells += cells
        if self.cells > MEMO_CELLS:
            self.singles.clear()
            self.decodes.clear()
            self.cells = cells


def _grown(table: np.ndarray | None, size: int) -> np.ndarray:
    """``table`` (or nothing) extended with NaN to at least ``size`` entries (amortised doubling)."""
    old = np.zeros(0) if table is None else table
    out = np.full(max(size, 2 * len(old)), np.nan)
    out[: len(old)] = old
    return out


class Engine:
    """One serving instance's state: its requests (local index = routing order), queues, KV cache and clock."""

    COLUMNS = ("arrival", "need", "admitted", "first", "finish", "t_last", "max_gap", "stage_max")
    COUNTS = ("prompt", "out", "target", "done_pf", "gen", "kvtok", "out_blocks", "first_it", "last_it")

    def __init__(
        self,
        system: System,
        pol: Scheduler,
        max_batch: int,
        longest: int,
        size: int = 64,
        costs: StageCosts | None = None,
        stages: bool = False,
    ) -> None:
        self.system, self.pol, self.max_batch, self.longest = system, pol, max_batch, longest
        self.per_tok, self.cap = system.kv_bytes_per_token, system.kv_capacity()
        self.blocks = (
            Blocks.of(max(self.cap, 0.0), self.per_tok, size, pol.block_size, pol.watermark) if pol.paged else None
        )
        self.link_bw = getattr(system, "host_link_bw", None) or get_link(HOST_LINK).bw
        for name in self.COLUMNS:
            setattr(self, name, np.full(size, np.nan))
        for name in self.COUNTS:
            setattr(self, name, np.zeros(size, np.int64))
        self.max_gap[:] = 0.0
        self.n, self.nxt, self.finished, self.n_iter = 0, 0, 0, 0
        self.t, self.kv_used, self.kv_peak, self.link_s = 0.0, 0.0, 0.0, 0.0
        self.preemptions, self.recomputed, self.swap_bytes = 0, 0, 0.0
        self.waiting: deque[int] = deque()
        self.swapped: deque[int] = deque()
        self.running: list[int] = []
        self._run_arr: np.ndarray | None = None  # ``running`` as an array, until it changes
        # stages: recorded, streamed a chunk at a time into TBT samples, energy, the KV series and each
        # request's longest stage, and kept only with ``stages`` (a chunk of columns each)
        self.stages, self.keep, self.kept = _Stages(), stages, []
        self.tbt, self.stall_tbt, self.energy, self.kv = Distinct(), Distinct(), ExactSum(), KvSeries()
        self.open: set[int] = set()  # requests with a first token whose longest stage can still grow
        self.costs = costs or StageCosts(system)  # engines of one system (replicas) share one memo
        self.last_finished = 0  # requests the last iteration run finished (at its end, the engine's clock)
        self.pending: tuple | None = None  # a decode-only stretch waiting for its next arrival
        self.closed: int | None = None  # closed loop: requests released so far (arrivals set at finishes)
        # progress: called after every iteration with the requests it finished and the clock at its end
        self.on_finish: Callable[[int, float], None] | None = None

    def add(self, prompt: np.ndarray, output: np.ndarray, arrival: np.ndarray) -> None:
        """Requests routed here, in arrival order (after every request routed before)."""
        i, j = self.n, self.n + len(prompt)
        if j > len(self.arrival):  # grow every per-request column (amortised doubling)
            more = max(j, 2 * len(self.arrival)) - len(self.arrival)
            for name in (*self.COLUMNS, *self.COUNTS):
                old = getattr(self, name)
                setattr(
                    self, name, np.concatenate([old, np.full(more, np.nan if old.dtype == float else 0, old.dtype)])
                )
            self.max_gap[i:] = 0.0
            if self.blocks is not None:
                self.blocks.held = np.concatenate([self.blocks.held, np.zeros(more, np.int64)])
        self.arrival[i:j], self.prompt[i:j], self.out[i:j], self.target[i:j] = arrival, prompt, output, prompt
        self.need[i:j] = (np.asarray(prompt) + (self.longest if self.pol.reserve_longest else output)) * self.per_tok
        self.n = j

    def outstanding(self, t: float) -> int:
        """Requests routed here and not finished by ``t``, the engine advanced to ``t``: only the last iteration
        it ran can end after ``t`` (the next would start after it), so only its finishes may not be due yet."""
        return self.n - self.finished + (self.last_finished if self.t > t else 0)

    def kv_bytes(self) -> float:
        """KV bytes held (reserved, or in blocks)."""
        if self.blocks is None:
            return self.kv_used
        return (self.blocks.total - self.blocks.free) * self.pol.block_size * self.per_tok

    def kv_share(self) -> float:
        return self.kv_bytes() / self.cap

    def advance(self, until: float = math.inf) -> None:
        """Run the iterations that start before ``until`` (a request may still be routed here at ``until``)."""
        while self.finished < self.n:
            if self.stages.held >= MAX_STRETCH:
                self._flush()
            if self.pending is not None:
                if not self._settle(until):
                    return
                continue
            if self.t >= until:
                return
            self._enqueue()
            self._admit()
            self.kv_peak = max(self.kv_peak, self.kv_bytes())
            if not self.running:
                if self.nxt >= self.n:
                    return  # idle until a request is routed here
                self.t = max(self.t, self.arrival[self.nxt])
                continue
            pre, dec = self._split()
            if self.blocks is not None and len(dec) and not (len(pre) and not self.pol.mixed):
                pre, dec = self._make_room(pre, dec)
            if not self.running:
                continue
            in_sys = len(self.running) + len(self.waiting) + len(self.swapped)
            if len(pre):
                self._prefill(pre, dec, in_sys)
            else:
                self._plan_stretch(dec, in_sys)

    def _enqueue(self) -> None:
        while self.nxt < self.n and self.arrival[self.nxt] <= self.t:
            self.waiting.append(self.nxt)
            self.nxt += 1

    def _run(self) -> np.ndarray:
        """The running requests, in admission order, as an array (rebuilt only after the list changed)."""
        if self._run_arr is None:
            self._run_arr = np.array(self.running, np.int64)
        return self._run_arr

    def _split(self) -> tuple[np.ndarray, np.ndarray]:
        """(Prefilling, decoding) running requests, in admission order."""
        run = self._run()
        left = self.done_pf[run] < self.target[run]
        return run[left], run[~left]

    def _admit(self) -> None:
        if self.blocks is None:
            while (
                self.waiting
                and len(self.running) < self.max_batch
                and self.kv_used + self.need[self.waiting[0]] <= self.cap
            ):
                r = self.waiting.popleft()
                self.running.append(r)
                self._run_arr = None
                self.admitted[r] = self.t
                self.kv_used += self.need[r]
            return
        blocks, kvtok, target = self.blocks, self.kvtok, self.target
        while (
            self.swapped
            and len(self.running) < self.max_batch
            and blocks.can_admit(max(int(kvtok[self.swapped[0]]) + 1, int(target[self.swapped[0]])))
        ):
            r = self.swapped.popleft()  # swapped requests come back before any new admission
            blocks.grow(np.array([r]), max(kvtok[r] + 1, target[r]))
            self._move(int(self.out_blocks[r]))
            self.running.append(r)
            self._run_arr = None
        room, empty = self._token_room()
        while (
            not self.swapped
            and self.waiting
            and len(self.running) < self.max_batch
            and blocks.can_admit(int(target[self.waiting[0]]))
            and self.pol.admits(room, int(target[self.waiting[0]]), empty)
        ):
            r = self.waiting.popleft()
            self.running.append(r)
            self._run_arr = None
            room, empty = room - int(target[r]), False
            if np.isnan(self.admitted[r]):
                self.admitted[r] = self.t
            blocks.grow(np.array([r]), target[r])

    def _move(self, nblocks: int) -> None:
        """Swap ``nblocks`` blocks over the host link (its time is charged to the next iteration)."""
        moved = nblocks * self.pol.block_size * self.per_tok
        self.swap_bytes += moved
        self.link_s += moved / self.link_bw

    def _token_room(self) -> tuple[float, bool]:
        """(Tokens of the iteration's budget the running requests leave, whether none of them prefills)."""
        r = self._run()
        left = np.maximum(self.target[r] - self.done_pf[r], 0)
        if self.pol.budget is None:
            return math.inf, not left.any()
        decodes = int((left == 0).sum()) if self.pol.budget_counts_decode else 0
        return self.pol.budget - int(left.sum()) - decodes, not left.any()

    def _make_room(self, pre: np.ndarray, dec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Preempt until every decode has the block its next token needs."""
        blocks = self.blocks
        assert blocks is not None  # only the paged policies preempt
        while len(dec) and int(np.maximum(blocks.need(self.kvtok[dec] + 1) - blocks.held[dec], 0).sum()) > blocks.free:
            victim = self.pol.victim(self.running)
            self.running.remove(victim)
            self._run_arr = None
            self.preemptions += 1
            if self.pol.preempt == "recompute":
                self.recomputed += int(self.kvtok[victim])
                blocks.release(victim)
                self.kvtok[victim], self.done_pf[victim] = 0, 0
                self.target[victim] = self.prompt[victim] + self.gen[victim]
                self.waiting.appendleft(victim)
            else:
                self.out_blocks[victim] = blocks.held[victim]
                self._move(int(self.out_blocks[victim]))
                blocks.release(victim)
                self.swapped.append(victim)
            pre, dec = self._split()
        return pre, dec

    def _tokens_at(self, rs: np.ndarray, end: float, dt: float) -> int:
        """``rs`` emit a token at ``end`` after a stage of ``dt``: a longer gap (a stall) is its own TBT sample."""
        gap = end - self.t_last[rs]
        late = gap > dt * (1 + 1e-9)
        if late.any():
            g, who = gap[late], rs[late]
            # one gap shared by every stalled token (a prompt paused them all) needs no sort
            same = g[0] == g[1:]
            self.stall_tbt.add(*((g[:1], np.array([len(g)])) if same.all() else np.unique(g, return_counts=True)))
            self.max_gap[who] = np.maximum(self.max_gap[who], g)  # requests distinct: no repeated index
        self.t_last[rs] = end
        return int(late.sum())

    def _finish(self, done: np.ndarray) -> None:
        for r in done:
            self.finish[r] = self.t
            self.last_it[r] = self.n_iter
            if self.blocks is None:
                self.kv_used -= self.need[r]
            else:
                self.blocks.release(r)
            self.running.remove(int(r))
            self._run_arr = None
            self.finished += 1
            if self.closed is not None and self.closed < self.n:
                self.arrival[self.closed] = self.t
                self.closed += 1
        self.last_finished = len(done)
        if self.on_finish is not None:
            self.on_finish(len(done), self.t)

    def _prefill(self, pre: np.ndarray, dec: np.ndarray, in_sys: int) -> None:
        """A stage with prefill work; decodes ride along unless the policy runs prompts alone."""
        prompt, gen, done_pf, target = self.prompt, self.gen, self.done_pf, self.target
        run = self._run()
        ride = dec if self.pol.mixed else dec[:0]
        ctx = int((prompt[ride] + gen[ride]).sum())
        own = getattr(self.system, "prefill_budget", None)
        chunk = self.pol.plan(target[pre] - done_pf[pre], len(ride), own and (lambda: own(len(ride), ctx)))
        p = done_pf[pre]
        shape = StageShape(
            tokens=int(chunk.sum()) + len(ride),
            decode_reqs=len(ride),
            decode_ctx=ctx,
            prefill_pairs=float((chunk * p + chunk * (chunk + 1) / 2).sum()),
            prefill_kv=int(((p + chunk) * (chunk > 0)).sum()),
        )
        dt = self.costs.stage(shape) + self.link_s
        kv_at_start = self.kv_share()
        self.link_s = 0.0
        self.t += dt
        done_pf[pre] += chunk
        self.kvtok[pre] += chunk
        gen[ride] += 1
        self.kvtok[ride] += 1
        if self.blocks is not None and len(ride):
            self.blocks.grow(ride, self.kvtok[ride])
        self.stages.stage(shape, dt, in_sys, kv_at_start, self._tokens_at(ride, self.t, dt))
        new = pre[(done_pf[pre] == target[pre]) & (chunk > 0)]
        back = new[gen[new] > 0]  # a recomputed request's prefill gives its next token
        if len(back):
            self._tokens_at(back, self.t, 0.0)
        gen[new] += 1
        fresh = new[np.isnan(self.first[new])]
        self.first[fresh] = self.t
        self.t_last[fresh] = self.t
        self.first_it[fresh] = self.n_iter + 1
        self.open.update(fresh.tolist())
        self.n_iter += 1
        self._finish(run[(gen[run] >= self.out[run]) & (done_pf[run] == target[run])])

    def _plan_stretch(self, dec: np.ndarray, in_sys: int) -> None:
        """A decode-only stretch up to the next finish (or the last free block), priced at once; it is settled
        (:meth:`_settle`) when the engine's next arrival is known."""
        k = int(min((self.out[dec] - self.gen[dec]).min(), MAX_STRETCH))
        if self.blocks is not None:
            k = max(1, self.blocks.steps_that_fit(self.kvtok[dec], k))
        ctx0 = int((self.prompt[dec] + self.gen[dec]).sum())
        dts = self.costs.decode(len(dec), ctx0 + np.arange(k) * len(dec))
        if self.link_s:
            dts = dts.copy()
            dts[0] += self.link_s
            self.link_s = 0.0
        self.pending = (dec, dts, self.t + np.cumsum(dts), ctx0, in_sys)

    def _settle(self, until: float) -> bool:
        """Run the pending stretch to its end, or to the stage an admissible arrival lands in (the next
        request is known, or none can arrive before the stretch ends); False: not known yet."""
        dec, dts, ends, ctx0, in_sys = self.pending
        k = len(ends)
        if self.nxt < self.n:
            a = self.arrival[self.nxt]
            if len(self.running) < self.max_batch and a < ends[-1] and self._fits(self.nxt):
                k = min(int(np.searchsorted(ends, a, side="right")) + 1, k)  # the stage it arrives in completes
        elif ends[-1] > until:
            return False
        self.pending = None
        kv0 = self.kv_share()
        self.t = float(ends[k - 1])
        first_stalls = self._tokens_at(dec, float(ends[0]), float(dts[0]))
        self.t_last[dec] = self.t
        self.gen[dec] += k
        self.kvtok[dec] += k
        if self.blocks is not None:
            self.blocks.grow(dec, self.kvtok[dec])
        kv1 = self.kv_share() if self.blocks is not None else kv0
        self.stages.decode(dts[:k], len(dec), ctx0, in_sys, kv0, kv1, first_stalls)
        self.n_iter += k
        self._finish(dec[self.gen[dec] >= self.out[dec]])
        return True

    def _fits(self, r: int) -> bool:
        """Whether request ``r``'s KV could be admitted now."""
        if self.blocks is None:
            return self.kv_used + self.need[r] <= self.cap
        return self.blocks.can_admit(int(self.target[r]))

    def _flush(self) -> None:
        """Stream the stages held into the run's statistics (and keep them with ``stages``)."""
        base, col = self.stages.take(self.system)
        if not len(col["time"]):
            return
        end = base + len(col["time"])
        self.energy.add(col["energy"])
        self.tbt.add(col["time"], col["decode"] - col["stalled"])
        self.kv.add(col["time"], col["kv"])
        if self.keep:
            self.kept.append(col)
        if self.open:  # each open request's longest stage among these: its range [first_it, last_it) cut to them
            ids = np.fromiter(self.open, np.int64, len(self.open))
            done = ~np.isnan(self.finish[ids])
            a, b = np.maximum(self.first_it[ids], base), np.where(done, np.minimum(self.last_it[ids], end), end)
            some = b > a
            if some.any():
                who, longest = ids[some], range_max(col["time"], a[some] - base, b[some] - base)
                self.stage_max[who] = np.fmax(self.stage_max[who], longest)
            self.open.difference_update(ids[done].tolist())

    def result(self, trace: Trace, meta: dict) -> Result:
        """The run's :class:`Result` (``trace``: this engine's requests, in their order here)."""
        self._flush()
        n = self.n
        paged = {
            "block_size": self.pol.block_size,
            "watermark": self.pol.watermark,
            "preempt": self.pol.preempt,
            "preemptions": self.preemptions,
            "recomputed_tokens": self.recomputed,
            "swapped_gb": self.swap_bytes / 1e9,
        }
        gaps, counts = self.stall_tbt.table()
        tbt = Distinct()
        for part in (self.tbt, self.stall_tbt):
            tbt.merge(part)
        kept = {k: np.concatenate([c[k] for c in self.kept]) for k in self.kept[0]} if self.kept else {}
        if self.keep and not kept:
            kept = _Stages().columns(self.system)
        return Result(
            trace,
            self.system.name,
            self.admitted[:n],
            self.first[:n],
            self.finish[:n],
            self.arrival[:n],
            np.stack([self.first_it[:n], self.last_it[:n]], axis=1),
            self.kv_peak,
            self.cap,
            {**meta, "scheduler": self.pol.name, **(paged if self.blocks is not None else {})},
            stages=self.stages.n,
            energy=self.energy,
            tbt=tbt,
            tbt_count=self.stages.n + len(gaps),
            stage_max=self.stage_max[:n],
            max_gap=self.max_gap[:n],
            stall_gaps=gaps,
            stall_counts=counts,
            kv_series=self.kv,
            **{f"iter_{k}": v for k, v in kept.items()},
        )


def simulate(
    trace: Trace,
    system: System,
    max_batch: int = 256,
    prefill_budget: int | None = None,
    concurrency: int | None = None,
    progress: bool = False,
    oversize: str = "error",
    scheduler: str = DEFAULT_SCHEDULER,
    block_size: int = BLOCK_SIZE,
    watermark: float = WATERMARK,
    preempt: str = "recompute",
    max_batched_tokens: int | None = None,
    stages: bool = False,
) -> Result:
    """Run ``trace`` on ``system`` (module docstring) under a scheduler policy of
    :data:`sysmodel.engines.scheduling.SCHEDULERS` (``block_size``, ``watermark``, ``preempt``: its paged cache).
    ``concurrency``: closed loop with that many requests in the system (the trace's arrival times are
    ignored). ``prefill_budget``: tokens per stage (``reserve``: prompt tokens, default the system's
    ``prefill_budget(decode_reqs, decode_ctx)`` if it has one, else unbounded; ``sarathi``: prompt and
    decode tokens, default 512; ``orca`` and ``orca-reserve`` run whole prompts). ``max_batched_tokens``
    (``vllm`` only): prompt tokens one prefill iteration admits, default vLLM's 2048. ``stages``: keep the
    per-stage records in the result (``iter_*``; otherwise only what is streamed from them)."""
    pol = get_scheduler(
        scheduler,
        block_size=block_size,
        watermark=watermark,
        preempt=preempt,
        prefill_budget=prefill_budget,
        max_batched_tokens=max_batched_tokens,
    )
    check_options(max_batch, concurrency, oversize)
    longest = int(trace.output.max())  # orca-reserve's max_tokens (scheduling.py)
    trace, rejected = admissible(trace, system, pol, oversize, longest)
    n, max_batch = len(trace), min(max_batch, getattr(system, "max_batch", max_batch))  # a hardware limit
    eng = Engine(system, pol, max_batch, longest, n, stages=stages)
    arrival = trace.arrival
    if concurrency is not None:  # closed loop: the first ``concurrency`` at 0, each later one at a finish
        arrival, eng.closed = np.where(np.arange(n) < concurrency, 0.0, np.inf), min(n, concurrency)
    eng.add(trace.prompt, trace.output, arrival)
    bar = serve_progress(arrival, f"serve {system.name}", progress)
    eng.on_finish = bar
    eng.advance()
    bar.close()
    meta = {"max_batch": max_batch, "prefill_budget": prefill_budget, "concurrency": concurrency, "rejected": rejected}
    return eng.result(trace, meta)


def check_options(max_batch: int, concurrency: int | None, oversize: str) -> None:
    """The engine's own options (the scheduler checks its settings)."""
    if max_batch < 1:
        raise ValueError(f"max_batch: {max_batch} not allowed; must be >= 1")
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"concurrency: {concurrency} not allowed; must be >= 1")
    if oversize not in OVERSIZE:
        raise ValueError(f"oversize: {oversize!r} not allowed; allowed: {', '.join(OVERSIZE)}")


def admissible(trace: Trace, system: System, pol: Scheduler, oversize: str, longest: int) -> tuple[Trace, int]:
    """(``trace`` without the requests whose KV could never fit under ``oversize="reject"``, how many were
    dropped); :class:`~sysmodel.cost.stage.Infeasible` if one is left that never fits."""
    per_tok, cap = system.kv_bytes_per_token, system.kv_capacity()
    room = cap
    if pol.paged:  # the blocks above the watermark
        b = Blocks.of(max(cap, 0.0), per_tok, 0, pol.block_size, pol.watermark)
        room = (b.total - b.watermark) * pol.block_size * per_tok
    need = (trace.prompt + (longest if pol.reserve_longest else trace.output)) * per_tok
    fits, rejected = need <= room, 0
    if oversize == "reject" and fits.any() and not fits.all():
        rejected = int((~fits).sum())
        trace, need = Trace(trace.arrival[fits], trace.prompt[fits], trace.output[fits], trace.name), need[fits]
    if cap <= 0:
        raise Infeasible(f"{system.name}: no room for a KV cache: its weights fill its memory ({system.hardware()})")
    if (need > room).any():
        i = int(np.argmax(need > room))
        raise Infeasible(
            f"{system.name}: request {i} ({trace.prompt[i]} + {need[i] / per_tok - trace.prompt[i]:.0f} tokens) needs "
            f"{need[i] / 1e9:.1f} GB "
            f"of KV cache; the system holds {cap / 1e9:.1f} GB next to its weights"
            # the watermark said when it is what refuses the request
            + (
                f", {room / 1e9:.1f} GB of it above the watermark ({pol.watermark:g} kept free)"
                if need[i] <= cap
                else ""
            )
        )
    return trace, rejected


def qps_sweep(systems: list[System], kind: str, n: int, qps_values: list[float], seed: int = 1, **kw) -> list[dict]:
    """Poisson arrivals at each QPS, same seed per point, on every system: the saturation curve."""
    rows = []
    for q in qps_values:
        trace = make_trace(kind, n, seed, qps=q, **{k: v for k, v in kw.items() if k in ("prompt", "output")})
        for s in systems:
            res = simulate(trace, s, **{k: v for k, v in kw.items() if k in ("max_batch", "prefill_budget")})
            rows.append({"qps": q, **res.summary()})
    return rows
