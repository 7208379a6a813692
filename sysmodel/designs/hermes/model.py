"""Hermes's system timing (notes §5.2): one consumer GPU plus NDP-DIMMs, token by token over an activation
trace, and the paper's baselines built from the same parts.

Per decode token and layer, for each sparse block (QKV, then the MLP):
  T_block = max(T_GPU(hot computed) + 2 T_sync + PCIe(partial), slowest DIMM(cold computed)) + merge
(Eqs. 1-5; the merge is a reduce-scatter of the output over DIMM-link), then attention on the DIMMs
(K and V of the KV heads each DIMM holds, dot and AXPY at the GEMV unit's rate, softmax passes), then
the output projection on the GPU (dense, W_O resident), during which hot-neuron reloads (PCIe) and cold
remaps (DIMM-link) run; plus the LM head on the GPU per token. The prompt runs on the GPU with the
non-resident weights streamed over PCIe (FlexGen-style, §IV-A2). End to end: tokens/s = B L_out /
(T_prefill + sum of T_token) (notes A18).

Measured and derived inputs: the NDP-DIMM bandwidth is the memory engine's rank-level streaming rate on
the Hermes DDR4 preset (sysmodel.engines.memory); the GEMV rate is multipliers x 8 lanes per operation at the GEMV
unit's measured cycles per operation (characterization record ``hermes_gemv``, paper size), and a
softmax's cycles are the activation unit's cycle model at 256 lanes (asserted by its testbenches at 4 and
256 lanes).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from golden import hermes as gh
from golden import hermes_spec as hs
from golden.hermes_spec import ActOp
from hw.hermes.cycles import PAPER_RECORDS, UNIT_ACTIVATION, UNIT_GEMV, act_txn_cycles
from sysmodel.cost import characterization
from sysmodel.cost.devices import Link, get_device, get_link
from sysmodel.cost.models import KV_BYTES, ModelConfig, StageShape, load_model
from sysmodel.cost.stage import ATTACC, Efficiency, Engine, Infeasible, stage_time
from sysmodel.designs.baselines import profile_provenance
from sysmodel.designs.hermes import paper
from sysmodel.designs.hermes import scheduler as sch
from sysmodel.designs.hermes.paper import POLICIES
from sysmodel.designs.hermes.workload import BLOCKS, Trace, generate, stage, stats_for
from sysmodel.engines import memory


def c_mul() -> float:
    """Cycles per GEMV operation (each multiplier's 8 lanes): the paper-size GEMV unit's measured rate."""
    return characterization.lookup(UNIT_GEMV, **PAPER_RECORDS[UNIT_GEMV]).extra["op_cycles"]


def softmax_cycles(n: int) -> float:
    """Cycles of one softmax over ``n`` scores on the 256-lane activation unit: its cycle model, which its
    testbenches assert at 4 lanes (`make test`) and at the paper's 256 (`make sim`; records
    ``hermes_activation``)."""
    return act_txn_cycles(ActOp.SOFTMAX, n, lanes=hs.ACT_LANES)


@dataclass(frozen=True)
class Hardware:
    """Hermes's parts (§V-A, Table II; constants in :mod:`sysmodel.designs.hermes.paper`)."""

    gpu: str = paper.GPU
    eff: Efficiency = ATTACC
    gpu_weight_bytes: float = paper.GPU_WEIGHT_BYTES
    pcie: Link = field(default_factory=lambda: get_link(paper.PCIE))
    dimms: int = paper.DIMMS
    dimm_bytes: float = paper.DIMM_BYTES
    multipliers: int = hs.MULTIPLIERS
    link: Link = field(default_factory=lambda: get_link("dimm-link"))
    sync_s: float = paper.T_SYNC

    def __post_init__(self) -> None:
        if self.dimms < 1:
            raise ValueError(f"dimms: {self.dimms} not allowed; >= 1")
        if not 1 <= self.multipliers <= paper.MAX_MULTIPLIERS:
            raise ValueError(
                f"multipliers: {self.multipliers} not allowed; 1 to {paper.MAX_MULTIPLIERS} per NDP core "
                "(the largest of the paper's DSE, Hermes §V-E3, and of the RTL GEMV unit)"
            )

    @property
    def engine(self) -> Engine:
        return Engine(get_device(self.gpu), self.eff)

    @property
    def dimm_bw(self) -> float:
        """One NDP-DIMM's internal bandwidth: every rank streaming to the buffer chip (memory engine)."""
        return memory.analytical_bw(memory.pim_view(memory.DDR4_3200_HERMES, "rank_level"), "streaming")

    @property
    def dimm_macs(self) -> float:
        """FP16 MAC/s of one NDP core's GEMV unit."""
        return self.multipliers * hs.MUL_LANES / c_mul() * hs.CLOCK_HZ


def neuron_shape(cfg: ModelConfig, block: str) -> tuple[int, int]:
    """(bytes, MACs per token) of one neuron: a QKV input dimension (W_Q, W_K, W_V columns) or an FFN
    neuron (its up/gate rows and down column), FP16 (notes §4.4)."""
    if block == "attn":
        return 2 * (cfg.hidden + 2 * cfg.kv_dim), cfg.hidden + 2 * cfg.kv_dim
    return 2 * cfg.ffn_matrices * cfg.hidden, cfg.ffn_matrices * cfg.hidden


def out_width(cfg: ModelConfig, block: str) -> int:
    return cfg.hidden + 2 * cfg.kv_dim if block == "attn" else cfg.hidden


def hot_budget(cfg: ModelConfig, hw: Hardware) -> float:
    """GPU bytes left for hot neurons: the weight budget less W_O of every layer and the LM head, which
    live on the GPU (notes A16, A17)."""
    fixed = cfg.layers * cfg.hidden * cfg.hidden * 2 + cfg.vocab * cfg.hidden * 2
    return hw.gpu_weight_bytes - fixed


def costs(cfg: ModelConfig, hw: Hardware, batch: int, block: str, host: bool = False) -> sch.Costs:
    nbytes, macs = neuron_shape(cfg, block)
    gpu = float(hw.engine.time(2.0 * batch * macs, nbytes))
    if host:
        dimm = max(nbytes / paper.HOST_BW, 2.0 * batch * macs / paper.HOST_FLOPS)
    else:
        dimm = max(nbytes / hw.dimm_bw, batch * macs / hw.dimm_macs)
    return sch.Costs(gpu, dimm, nbytes, 2 * hw.sync_s)


@dataclass
class Run:
    """A simulated generation: seconds of the prompt and of every decode token, the MLP blocks' share,
    and the scheduler's work."""

    system: str
    batch: int
    prefill_s: float
    token_s: list[float]
    mlp_s: float = 0.0
    reloads: int = 0
    remaps: int = 0
    attn_s: list[float] = field(default_factory=list)  # each token's decode attention (all layers)
    gpu_bytes: float = 0.0  # weight bytes of hot neurons the GPU computed, all tokens and layers
    dimm_bytes: float = 0.0  # weight bytes of cold neurons the DIMMs computed, likewise

    @property
    def tokens_per_s(self) -> float:
        return self.batch * len(self.token_s) / (self.prefill_s + sum(self.token_s))


def prefill_time(cfg: ModelConfig, hw: Hardware, batch: int, prompt: int) -> float:
    """The prompt on the GPU, non-resident weights streamed over PCIe and overlapped layer by layer."""
    compute = float(stage_time(cfg, StageShape.prefill(batch, prompt), hw.engine))
    streamed = max(cfg.weight_bytes() - hw.gpu_weight_bytes, 0.0)
    return max(compute, streamed / hw.pcie.bw)


def attention_time(cfg: ModelConfig, hw: Hardware, batch: int, ctx: int, host: bool = False) -> float:
    """One layer's decode attention where the KV cache lives: KV heads round-robin over the DIMMs (notes
    A15), K and V read once per step; q.K and p.V at the GEMV rate; one softmax per query head at the
    activation unit's measured cycles."""
    units = 1 if host else hw.dimms
    kv_heads = -(-cfg.kv_heads // units)
    q_heads = -(-cfg.heads // units)
    nbytes = batch * kv_heads * 2 * cfg.head_dim * ctx * KV_BYTES
    macs = batch * q_heads * 2 * cfg.head_dim * ctx
    if host:
        return max(nbytes / paper.HOST_BW, 2 * macs / paper.HOST_FLOPS)
    softmax = batch * q_heads * softmax_cycles(ctx) / hs.CLOCK_HZ
    return max(nbytes / hw.dimm_bw, macs / hw.dimm_macs) + softmax


def merge_time(cfg: ModelConfig, hw: Hardware, batch: int, block: str) -> float:
    """GPU partial to the DIMMs, then a reduce-scatter of the block's output over DIMM-link (notes §1.3)."""
    vec = batch * out_width(cfg, block) * 2
    return hw.pcie.time(vec) + hw.link.time(vec * (hw.dimms - 1) / hw.dimms)


def oproj_time(cfg: ModelConfig, hw: Hardware, batch: int) -> float:
    h = cfg.hidden
    return hw.pcie.time(batch * h * 2) + float(hw.engine.time(2.0 * batch * h * h, h * h * 2))


def _placements(
    cfg: ModelConfig, hw: Hardware, trace: Trace, batch: int, policy: str, host: bool
) -> dict[tuple[int, str], sch.Placement]:
    keys = sorted(trace.acts)
    freqs = [trace.freq[k] for k in keys]
    per_block = {b: costs(cfg, hw, batch, b, host) for b in BLOCKS}
    cs = [per_block[b] for _, b in keys]
    budget = hot_budget(cfg, hw) * trace.sim_layers / cfg.layers
    if budget < 0:
        raise sch.InfeasibleMapping(
            f"{cfg.name}: W_O and the LM head alone exceed the GPU's {hw.gpu_weight_bytes / 1e9:.0f} GB weight budget"
        )
    units = 1 if host else hw.dimms
    if policy == "random":
        maps = sch.random_mapping(freqs, cs, budget, units)
    else:
        maps = sch.decomposed_ilp(freqs, cs, budget, units)
    return dict(zip(keys, maps, strict=True))


def check_limits(cfg: ModelConfig, batch: int | None = None, field: str = "batch") -> None:
    """The limits of Hermes' model, which `membound hermes` and the `hermes` system both apply (with the
    multipliers' range, :class:`Hardware`): a dense model without sliding-window layers, and 1 to
    ``MAX_BATCH`` sequences (``field`` names where the batch came from)."""
    if cfg.experts > 1:
        raise Infeasible(
            f"{cfg.name}: Hermes splits dense FFN neurons between GPU and DIMMs; MoE experts "
            "are outside its model (the paper runs dense models only)"
        )
    if cfg.sliding_layers:
        raise Infeasible(f"{cfg.name}: sliding-window layers; Hermes' attention reads every cached token")
    if batch is not None and not 1 <= batch <= hs.MAX_BATCH:
        raise ValueError(
            f"{field}: {batch} not allowed; 1 to {hs.MAX_BATCH} sequences (the GEMV unit's batch, Hermes §V-A)"
        )


def paper_trace(cfg: ModelConfig, batch: int, seed: int, bar: Any = None) -> Trace:
    """A generated trace of ``cfg``'s family (``workload.stats_for``) over the paper's generation, L_IN
    prompt and L_OUT output tokens, on ``paper.SIM_LAYERS`` layers standing for all of the model's."""
    neurons = {"attn": cfg.hidden, "mlp": cfg.intermediate}
    return generate(
        neurons, paper.SIM_LAYERS, paper.L_IN + paper.L_OUT, paper.L_IN, batch, stats_for(cfg.name), seed, bar
    )


def require_dimms(cfg: ModelConfig, hw: Hardware) -> None:
    """The NDP-DIMMs hold a full copy of the weights (hot neurons are reloaded from them and demoted ones
    computed there): ``Infeasible`` when they do not fit (§V-E1: Falcon-40B's 84 GB needs four 32 GB DIMMs)."""
    cap = hw.dimms * hw.dimm_bytes
    if cfg.weight_bytes() > cap:
        raise Infeasible(
            f"{cfg.name}: {cfg.weight_bytes() / 1e9:.0f} GB of weights do not fit {hw.dimms} NDP-DIMMs "
            f"x {hw.dimm_bytes / 1e9:.0f} GB ({cap / 1e9:.0f} GB)"
        )


def check_trace(cfg: ModelConfig, trace: Trace) -> None:
    """``trace`` fits ``cfg`` (:func:`check_limits`; its blocks' widths; at most the model's layers)."""
    check_limits(cfg, trace.batch, "trace: batch")
    if trace.sim_layers > cfg.layers:
        raise ValueError(f"trace: {trace.sim_layers} layers; {cfg.name} has {cfg.layers}")
    for (_, b), a in trace.acts.items():
        want = cfg.hidden if b == "attn" else cfg.intermediate
        if a.shape[2] != want:
            raise ValueError(f"trace: {b} has {a.shape[2]} neurons; {cfg.name} has {want}")


def _checked_run(cfg: ModelConfig | str, trace: Trace, hw: Hardware, policy: str, host: bool) -> ModelConfig:
    """The model of a :func:`simulate` run, its inputs checked (DIMMs, policy, trace)."""
    cfg = cfg if isinstance(cfg, ModelConfig) else load_model(cfg)
    if not host:
        require_dimms(cfg, hw)
    if policy not in POLICIES:
        raise ValueError(f"policy: {policy!r} not allowed; allowed: {', '.join(POLICIES)}")
    check_trace(cfg, trace)
    return cfg


def _window_remap(hw: Hardware, maps: dict, activity: dict, cs: dict, t_o: float) -> int:
    """The next window's remap of every block, over DIMM-link during its O-proj phases; resets the window's
    activity counts. Returns the neurons moved."""
    moved = 0
    for key, p in maps.items():
        cap = int(paper.WINDOW * t_o / 2 * hw.link.bw // cs[key[1]].bytes)
        moved += sch.window_remap(p, activity[key], hw.dimms, cap)
        activity[key][:] = 0
    return moved


def simulate(
    cfg: ModelConfig | str,
    trace: Trace,
    hw: Hardware = Hardware(),
    policy: str = "hermes",
    host: bool = False,
    rule: str = "state-or-correlation",
    bar: Any = None,
) -> Run:
    """Hermes (``policy`` one of POLICIES) or Hermes-host (``host``: the CPU computes the cold neurons
    and attention, as PowerInfer) over ``trace``'s generation, its layers standing for all of the model's
    (their times scaled by model layers / trace layers); ``bar`` (a progress bar) counts its tokens."""
    cfg = _checked_run(cfg, trace, hw, policy, host)
    batch, units = trace.batch, 1 if host else hw.dimms
    stage(bar, "placing neurons (ILP)")
    maps = _placements(cfg, hw, trace, batch, policy, host)
    state = {k: gh.init_states(a[:, : trace.prefill].mean(axis=(0, 1))) for k, a in trace.acts.items()}
    cs = {b: costs(cfg, hw, batch, b, host) for b in BLOCKS}
    scale = cfg.layers / trace.sim_layers
    t_o = oproj_time(cfg, hw, batch)
    lm = float(hw.engine.time(2.0 * batch * cfg.hidden * cfg.vocab, cfg.hidden * cfg.vocab * 2)) + hw.sync_s
    name = ("Hermes-host" if host else "Hermes") + ("" if policy == "hermes" else f" ({policy})")
    run = Run(name, batch, prefill_time(cfg, hw, batch, trace.prefill), [])
    activity = {k: np.zeros(a.shape[2]) for k, a in trace.acts.items()}
    stage(bar, run.system, trace.tokens - trace.prefill)
    for t in range(trace.prefill, trace.tokens):
        if bar is not None:
            bar.update()
        total, attn = 0.0, attention_time(cfg, hw, batch, t, host)  # attention: the same every layer
        for layer in range(trace.sim_layers):
            for b in BLOCKS:
                key, c = (layer, b), cs[b]
                act = trace.acts[key][:, t]
                if b == "attn":  # exact: the ReLU before QKV is computed first (notes A23)
                    comp = act.any(axis=0)
                else:
                    prev = trace.acts[(layer - 1, b)][:, t] if layer else None
                    comp = sch.predicted(state[key], trace.parents.get(key), prev, rule).any(axis=0)
                p = maps[key]
                hot = int((comp & p.on_gpu).sum())
                gpu = c.gpu * hot + c.sync
                cold = np.bincount(p.dimm[comp & ~p.on_gpu], minlength=units)
                run.gpu_bytes += hot * c.bytes * scale
                run.dimm_bytes += int(cold.sum()) * c.bytes * scale
                block = max(gpu, c.dimm * cold.max()) + merge_time(cfg, hw, batch, b)
                total += block
                run.mlp_s += block * scale if b == "mlp" else 0.0
                activity[key] += comp & ~p.on_gpu
                state[key] = gh.update_states(state[key], np.asarray(act.any(axis=0)))
                if policy in ("adjustment", "hermes"):  # reloads ride the O-proj, half of it per block [S]
                    run.reloads += sch.adjust(p, state[key], int(t_o / 2 * hw.pcie.bw // c.bytes))
            total += attn + t_o
        if policy == "hermes" and not host and (t - trace.prefill + 1) % paper.WINDOW == 0:
            run.remaps += _window_remap(hw, maps, activity, cs, t_o)
        run.token_s.append(total * scale + lm)
        run.attn_s.append(attn * cfg.layers)
    return run


# --- baselines -------------------------------------------------------------------------------------------


def active_fraction(trace: Trace, block: str) -> float:
    """Mean share of a block's neurons some sequence of the batch activates per generated token."""
    return float(np.mean([a[:, trace.prefill :].any(axis=0).mean() for (_, b), a in trace.acts.items() if b == block]))


def baseline_system(name: str, cfg: ModelConfig, hw: Hardware, trace: Trace | None = None):
    """The shared baseline systems (sysmodel.designs.baselines) configured as Hermes describes its baselines (§V-A):
    FlexGen and HF Accelerate are the offload system's overlapped and serial policies on the same GPU, PCIe
    and 20 GB of resident weights; Deja Vu streams only its predicted-active neurons (the trace's active share
    of each sparse block) and spends 18.1% more compute on its predictor (§V-D); TensorRT-LLM is the GPU-only
    system on 5 x A100-40GB."""
    from sysmodel.designs.baselines import GpuOnly, Offload

    if name == "TensorRT-LLM":
        return GpuOnly(cfg, paper.TRT_GPU, paper.TRT_GPUS, eff=hw.eff)
    kw: dict[str, Any] = {"device": hw.gpu, "link": hw.pcie.name, "eff": hw.eff, "resident_bytes": hw.gpu_weight_bytes}
    if name == "FlexGen":
        return Offload(cfg, **kw)
    if name == "Accelerate":
        return Offload(cfg, overlap=False, **kw)
    if name == "Deja Vu":
        if trace is None:
            raise ValueError("trace: Deja Vu needs the activation trace")
        return Offload(
            cfg,
            overlap=False,
            active={b: active_fraction(trace, b) for b in BLOCKS},
            compute_overhead=paper.DEJAVU_PREDICTOR,
            **kw,
        )
    raise ValueError(f"baseline: {name!r} not allowed; allowed: {', '.join(BASELINES)}")


def baseline(name: str, cfg: ModelConfig | str, hw: Hardware, batch: int, trace: Trace | None = None) -> Run:
    """FlexGen, HF Accelerate, Deja Vu, TensorRT-LLM (:func:`baseline_system`, on the shared baseline systems)
    and Hermes-base (NDP-DIMMs, no sparsity), over ``paper.L_IN`` / ``paper.L_OUT``: the prompt as one prefill
    stage, then one decode step per output token."""
    cfg = cfg if isinstance(cfg, ModelConfig) else load_model(cfg)
    ctx = np.arange(paper.L_IN, paper.L_IN + paper.L_OUT)
    if name == "Hermes-base":
        return Run(name, batch, prefill_time(cfg, hw, batch, paper.L_IN), list(hermes_base_token(cfg, hw, batch, ctx)))
    sys_ = baseline_system(name, cfg, hw, trace)
    pre = float(np.asarray(sys_.stage_times(StageShape.prefill(batch, paper.L_IN))).reshape(-1)[0])
    steps = np.broadcast_to(np.asarray(sys_.stage_times(StageShape.decode(batch, ctx)), float), ctx.shape)
    return Run(name, batch, pre, list(steps))


BASELINES = ("FlexGen", "Accelerate", "Deja Vu", "Hermes-base", "TensorRT-LLM")


def hermes_base_token(cfg: ModelConfig, hw: Hardware, batch: int, ctx: np.ndarray) -> np.ndarray:
    """Hermes-base (§V-A): no sparsity. The FC layers of the layers that fit the GPU's hot budget run
    there; the others run dense on the DIMMs, split evenly; attention on the DIMMs; O-proj on the GPU."""
    layer_bytes = sum(neuron_shape(cfg, b)[0] * n for b, n in (("attn", cfg.hidden), ("mlp", cfg.intermediate)))
    on_gpu = min(cfg.layers, max(hot_budget(cfg, hw), 0) // layer_bytes)
    out = []
    for n in ctx:
        gpu_layer = ndp_layer = 0.0
        for b, count in (("attn", cfg.hidden), ("mlp", cfg.intermediate)):
            c = costs(cfg, hw, batch, b)
            gpu_layer += c.gpu * count + c.sync
            ndp_layer += c.dimm * -(-count // hw.dimms) + merge_time(cfg, hw, batch, b)
        common = attention_time(cfg, hw, batch, int(n)) + oproj_time(cfg, hw, batch)
        out.append(
            on_gpu * gpu_layer
            + (cfg.layers - on_gpu) * ndp_layer
            + cfg.layers * common
            + float(hw.engine.time(2.0 * batch * cfg.hidden * cfg.vocab, cfg.hidden * cfg.vocab * 2))
        )
    return np.asarray(out)


def with_multipliers(hw: Hardware, m: int) -> Hardware:
    return replace(hw, multipliers=m)


def on_gpu(hw: Hardware, gpu: str) -> Hardware:
    """``hw`` with another GPU; its weight budget scales with its memory (the paper's 20 GB of the 4090's 24) [S]."""
    return replace(
        hw,
        gpu=gpu,
        gpu_weight_bytes=paper.GPU_WEIGHT_BYTES * get_device(gpu).mem_bytes / get_device(paper.GPU).mem_bytes,
    )


# --- Hermes as a serving system ----------------------------------------------------------------------------

CALIBRATION_BATCHES = paper.BATCHES  # the batches the per-token model is run at (§V-B2's range)


class HermesSystem:
    """Hermes on the serving engine (`hermes`): a decode stage of b requests costs the per-token model's
    FC and LM-head time at batch b — :func:`simulate` over a generated activation trace of the model's
    family (``workload.stats_for``) at :data:`CALIBRATION_BATCHES`, interpolated linearly between them —
    plus decode attention on the DIMMs at the stage's mean context (:func:`attention_time`); prefill
    chunks run on the GPU with the non-resident weights streamed over PCIe (:func:`prefill_time`'s rule),
    before the stage's decodes [S]. The GEMV unit batches at most 16 sequences (``max_batch``). The DIMMs
    hold a full copy of the weights (:func:`require_dimms`) and the KV cache in what is left."""

    pure_stage_times = True  # a stage's time is a function of its shape alone: the serving engine memoizes it

    max_batch = hs.MAX_BATCH

    def __init__(
        self,
        model: str | ModelConfig,
        dimms: int = paper.DIMMS,
        multipliers: int = hs.MULTIPLIERS,
        policy: str = "hermes",
        host: bool = False,
        seed: int = 1,
        eff: Efficiency = ATTACC,
    ):
        self.cfg = model if isinstance(model, ModelConfig) else load_model(model)
        check_limits(self.cfg)
        if policy not in POLICIES:
            raise ValueError(f"policy: {policy!r} not allowed; allowed: {', '.join(POLICIES)}")
        self.hw, self.policy, self.host, self.seed = (
            replace(Hardware(), dimms=dimms, multipliers=multipliers, eff=eff),
            policy,
            host,
            seed,
        )
        if not host:
            require_dimms(self.cfg, self.hw)
        elif self.cfg.weight_bytes() > paper.HOST_BYTES:
            raise Infeasible(f"{self.cfg.name}: weights exceed the host's {paper.HOST_BYTES / 1e9:.0f} GB")
        if hot_budget(self.cfg, self.hw) < 0:
            raise Infeasible(
                f"{self.cfg.name}: W_O and the LM head alone exceed the GPU's "
                f"{self.hw.gpu_weight_bytes / 1e9:.0f} GB weight budget"
            )
        self.name = ("Hermes-host" if host else "Hermes") + ("" if policy == "hermes" else f" ({policy})")
        self._runs: dict[int, Run] = {}

    @property
    def kv_bytes_per_token(self) -> float:
        return self.cfg.kv_bytes_per_token(KV_BYTES)

    def kv_capacity(self) -> float:
        cap = paper.HOST_BYTES if self.host else self.hw.dimms * self.hw.dimm_bytes
        return cap - self.cfg.weight_bytes()

    def hardware(self) -> str:
        if self.host:
            return f"{self.hw.gpu} + host CPU ({paper.HOST_BYTES / 1e9:.0f} GB DDR5)"
        return (
            f"{self.hw.gpu} + {self.hw.dimms} NDP-DIMMs x {self.hw.dimm_bytes / 1e9:.0f} GB DDR4 "
            f"({self.hw.multipliers} multipliers each)"
        )

    def run(self, batch: int) -> Run:
        """The per-token model at ``batch`` on a generated trace of the paper's 128 + 128 tokens."""
        if batch not in self._runs:
            tr = paper_trace(self.cfg, batch, self.seed)
            self._runs[batch] = simulate(self.cfg, tr, self.hw, self.policy, self.host)
        return self._runs[batch]

    def _per_token(self, reqs: np.ndarray) -> np.ndarray:
        """(FC + LM-head seconds, GPU weight bytes, DIMM weight bytes) per decode token at each batch."""
        pts = {b: self.run(b) for b in self._needed(reqs)}
        xs = np.array(sorted(pts), float)
        cols = [
            [np.mean(np.subtract(r.token_s, r.attn_s)), r.gpu_bytes / len(r.token_s), r.dimm_bytes / len(r.token_s)]
            for r in (pts[b] for b in sorted(pts))
        ]
        ys = np.array(cols)
        return np.stack([np.interp(reqs, xs, ys[:, j]) for j in range(3)])

    def _needed(self, reqs: np.ndarray) -> set[int]:
        cal = np.array(CALIBRATION_BATCHES)
        out = set()
        for r in np.unique(reqs[reqs > 0]):
            i = int(np.searchsorted(cal, r))
            out |= (
                {int(cal[min(i, len(cal) - 1)]), int(cal[max(i - 1, 0)])}
                if cal[min(i, len(cal) - 1)] != r
                else {int(r)}
            )
        return out or {1}

    def _attention(self, reqs: np.ndarray, ctx: np.ndarray) -> np.ndarray:
        """Decode attention of all layers at the stage's mean context (linear in the requests)."""
        mean = np.where(reqs > 0, ctx / np.maximum(reqs, 1), 0).round().astype(int)
        per_req = {m: attention_time(self.cfg, self.hw, 1, int(m), self.host) for m in np.unique(mean) if m}
        return reqs * np.array([per_req.get(m, 0.0) for m in mean]) * self.cfg.layers

    def _fields(self, shape: StageShape) -> tuple[np.ndarray, ...]:
        f = [
            np.atleast_1d(np.asarray(getattr(shape, k), float))
            for k in ("tokens", "decode_reqs", "decode_ctx", "prefill_pairs", "prefill_kv")
        ]
        n = max(len(x) for x in f)
        return tuple(np.broadcast_to(x, (n,)) for x in f)

    def _prefill(self, tokens: np.ndarray, pairs: np.ndarray, kv: np.ndarray) -> np.ndarray:
        compute = np.asarray(
            stage_time(self.cfg, StageShape(tokens=tokens, prefill_pairs=pairs, prefill_kv=kv), self.hw.engine), float
        )
        streamed = max(self.cfg.weight_bytes() - self.hw.gpu_weight_bytes, 0.0) / self.hw.pcie.bw
        return np.where(tokens > 0, np.maximum(compute, streamed), 0.0)

    def stage_times(self, shape: StageShape) -> np.ndarray:
        tokens, reqs, ctx, pairs, kv = self._fields(shape)
        if reqs.max(initial=0) > self.max_batch:
            raise ValueError(f"decode_reqs: {int(reqs.max())} not allowed; the GEMV unit batches <= {self.max_batch}")
        fc = np.where(reqs > 0, self._per_token(reqs)[0], 0.0)
        return fc + self._attention(reqs, ctx) + self._prefill(tokens - reqs, pairs, kv)

    def usage(self, shape: StageShape):
        from sysmodel.cost.energy import DDR4_CHIP_STATIC_W, Usage, device_static_w

        c, hw = self.cfg, self.hw
        tokens, reqs, ctx, pairs, kv = self._fields(shape)
        _, gpu_b, dimm_b = np.where(reqs > 0, self._per_token(reqs), 0.0)
        chips = 0 if self.host else hw.dimms * hw.dimm_bytes * 8 / (8 << 30)
        gpu = get_device(hw.gpu)
        u = Usage(static_w=device_static_w(gpu.tdp_w) + chips * DDR4_CHIP_STATIC_W)
        dense = c.layers * c.hidden * c.hidden * 2 + c.vocab * c.hidden * 2  # W_O and the LM head, on the GPU
        cold_mem, path = ("ddr5", "host") if self.host else ("ddr4", "buffer")
        u.read(gpu.memory, np.where(reqs > 0, gpu_b + dense, 0.0))
        u.read(cold_mem, dimm_b, path)
        u.read(cold_mem, ctx * self.kv_bytes_per_token, path)  # the KV cache, read where attention runs
        u.flops = (gpu_b + dimm_b + dense) * reqs + 4.0 * c.heads * c.head_dim * ctx * c.layers
        vec = reqs * 2 * (c.hidden + 2 * c.kv_dim + c.hidden) * c.layers  # partials of QKV and the MLP
        u.move(hw.pcie.name, vec)
        if not self.host:
            u.move(hw.link.name, vec * (hw.dimms - 1) / hw.dimms)
        pre = tokens - reqs
        streamed = max(c.weight_bytes() - hw.gpu_weight_bytes, 0.0)
        u.read(gpu.memory, np.where(pre > 0, c.weight_bytes(), 0.0))
        u.read(cold_mem, np.where(pre > 0, streamed, 0.0), "host")
        u.move(hw.pcie.name, np.where(pre > 0, streamed, 0.0))
        u.flops = u.flops + 2.0 * pre * c.params() + 4.0 * c.heads * c.head_dim * pairs * c.layers
        return u

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        from sysmodel.cost.energy import joules

        return joules(self.usage(shape), self.stage_times(shape) if seconds is None else seconds)

    def area(self):
        from sysmodel.systems import Area

        if self.host:
            return Area(0.0, "Hermes-host: nothing added")
        return Area(
            paper.AREA_PER_CORE_MM2 * self.hw.dimms,
            f"[Q] Hermes §V: {paper.AREA_PER_CORE_MM2} mm2 per NDP core (7 nm) x DIMMs",
        )

    def provenance(self):
        from sysmodel.systems import Provenance

        p = Provenance()
        if not self.host:
            p.record(UNIT_GEMV, "hw/hermes/gemv.py", "golden/hermes.py", **PAPER_RECORDS[UNIT_GEMV])
            p.record(UNIT_ACTIVATION, "hw/hermes/activation.py", "golden/hermes.py", **PAPER_RECORDS[UNIT_ACTIVATION])
        p.constant(
            "activation statistics",
            str(stats_for(self.cfg.name)),
            "sysmodel/designs/hermes/workload.py FAMILY_STATS (Hermes §II-B, §III-B; family end of the 70-90% range "
            "[S])",
        )
        p.constant(
            "NDP-DIMM bandwidth", self.hw.dimm_bw, "sysmodel.engines.memory, rank-level mode, Hermes DDR4 preset"
        )
        for name in ("T_SYNC", "GPU_WEIGHT_BYTES", "PCIE"):
            p.constant(name, getattr(paper, name), "sysmodel/designs/hermes/paper.py")
        profile_provenance(p, self.hw.engine)
        return p
