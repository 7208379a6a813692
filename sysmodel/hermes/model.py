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
the Hermes DDR4 preset (sysmodel.memory); the GEMV rate is multipliers x 8 lanes per operation at the GEMV
unit's measured cycles per operation (characterization record ``hermes_gemv``, paper size), and a
softmax's cycles are the activation unit's cycle model at 256 lanes (asserted by its testbenches at 4 and
256 lanes).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from golden import hermes as gh
from golden import hermes_spec as hs
from golden.hermes_spec import ActOp
from hw.hermes import activation
from sysmodel import characterization, memory
from sysmodel.cost import ATTACC, Efficiency, Engine, stage_time
from sysmodel.devices import Link, get_device, get_link
from sysmodel.hermes import paper
from sysmodel.hermes import scheduler as sch
from sysmodel.hermes.workload import BLOCKS, Trace
from sysmodel.models import KV_BYTES, ModelConfig, StageShape, load_model

POLICIES = ("random", "partition", "adjustment", "hermes")  # §V-C's ablation steps, cumulative


def c_mul() -> float:
    """Cycles per GEMV operation (each multiplier's 8 lanes): the paper-size GEMV unit's measured rate."""
    return characterization.lookup("hermes_gemv").extra["op_cycles"]


def softmax_cycles(n: int) -> float:
    """Cycles of one softmax over ``n`` scores on the 256-lane activation unit: its cycle model, which its
    testbenches assert at 4 lanes (`make test`) and at the paper's 256 (`make sim`; records
    ``hermes_activation``)."""
    return activation.txn_cycles(ActOp.SOFTMAX, n, lanes=hs.ACT_LANES)


@dataclass(frozen=True)
class Hardware:
    """Hermes's parts (§V-A, Table II; constants in :mod:`sysmodel.hermes.paper`)."""

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
        if self.dimms < 1 or self.multipliers < 1:
            raise ValueError(f"dimms, multipliers: {self.dimms}, {self.multipliers} not allowed; >= 1 each")

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


def _placements(cfg: ModelConfig, hw: Hardware, trace: Trace, batch: int, policy: str,
                host: bool) -> dict[tuple[int, str], sch.Placement]:
    keys = sorted(trace.acts)
    freqs = [trace.freq[k] for k in keys]
    cs = [costs(cfg, hw, batch, k[1], host) for k in keys]
    budget = hot_budget(cfg, hw) * trace.sim_layers / cfg.layers
    if budget < 0:
        raise sch.InfeasibleMapping(f"{cfg.name}: W_O and the LM head alone exceed the GPU's "
                                    f"{hw.gpu_weight_bytes / 1e9:.0f} GB weight budget")
    units = 1 if host else hw.dimms
    if policy == "random":
        maps = sch.random_mapping(freqs, cs, budget, units)
    else:
        maps = sch.decomposed_ilp(freqs, cs, budget, units)
    return dict(zip(keys, maps, strict=True))


def simulate(cfg: ModelConfig | str, trace: Trace, hw: Hardware = Hardware(), policy: str = "hermes",
             host: bool = False, rule: str = "state-or-correlation") -> Run:
    """Hermes (``policy`` one of POLICIES) or Hermes-host (``host``: the CPU computes the cold neurons
    and attention, as PowerInfer) over ``trace``'s generation."""
    cfg = cfg if isinstance(cfg, ModelConfig) else load_model(cfg)
    if policy not in POLICIES:
        raise ValueError(f"policy: {policy!r} not allowed; allowed: {', '.join(POLICIES)}")
    for (_, b), a in trace.acts.items():
        want = cfg.hidden if b == "attn" else cfg.intermediate
        if a.shape[2] != want:
            raise ValueError(f"trace: {b} has {a.shape[2]} neurons; {cfg.name} has {want}")
    batch, units = trace.batch, 1 if host else hw.dimms
    maps = _placements(cfg, hw, trace, batch, policy, host)
    state = {k: gh.init_states(a[:, :trace.prefill].mean(axis=(0, 1))) for k, a in trace.acts.items()}
    cs = {b: costs(cfg, hw, batch, b, host) for b in BLOCKS}
    scale = cfg.layers / trace.sim_layers
    t_o = oproj_time(cfg, hw, batch)
    lm = float(hw.engine.time(2.0 * batch * cfg.hidden * cfg.vocab, cfg.hidden * cfg.vocab * 2)) + hw.sync_s
    run = Run(("Hermes-host" if host else "Hermes") + ("" if policy == "hermes" else f" ({policy})"), batch,
              prefill_time(cfg, hw, batch, trace.prefill), [])
    activity = {k: np.zeros(a.shape[2]) for k, a in trace.acts.items()}
    for t in range(trace.prefill, trace.tokens):
        total = 0.0
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
                gpu = c.gpu * int((comp & p.on_gpu).sum()) + c.sync
                cold = np.bincount(p.dimm[comp & ~p.on_gpu], minlength=units)
                block = max(gpu, c.dimm * cold.max()) + merge_time(cfg, hw, batch, b)
                total += block
                run.mlp_s += block * scale if b == "mlp" else 0.0
                activity[key] += comp & ~p.on_gpu
                state[key] = gh.update_states(state[key], act.any(axis=0))
                if policy in ("adjustment", "hermes"):  # reloads ride the O-proj, half of it per block [S]
                    run.reloads += sch.adjust(p, state[key], int(t_o / 2 * hw.pcie.bw // c.bytes))
            total += attention_time(cfg, hw, batch, t, host) + t_o
        if policy == "hermes" and not host and (t - trace.prefill + 1) % paper.WINDOW == 0:
            for key, p in maps.items():  # next window's remap, over DIMM-link during its O-proj phases
                cap = int(paper.WINDOW * t_o / 2 * hw.link.bw // cs[key[1]].bytes)
                run.remaps += sch.window_remap(p, activity[key], hw.dimms, cap)
                activity[key][:] = 0
        run.token_s.append(total * scale + lm)
    return run


# --- baselines -------------------------------------------------------------------------------------------

def active_fraction(trace: Trace, block: str) -> float:
    """Mean share of a block's neurons some sequence of the batch activates per generated token."""
    return float(np.mean([a[:, trace.prefill:].any(axis=0).mean() for (_, b), a in trace.acts.items()
                          if b == block]))


def _dense_decode(cfg: ModelConfig, engine: Engine, batch: int, ctx: np.ndarray) -> np.ndarray:
    return np.asarray(stage_time(cfg, StageShape.decode(batch, ctx), engine), float) * np.ones(len(ctx))


def baseline(name: str, cfg: ModelConfig | str, hw: Hardware, batch: int, trace: Trace | None = None) -> Run:
    """FlexGen, HF Accelerate, Deja Vu (offloading on the same GPU and PCIe), Hermes-base (NDP-DIMMs, no
    sparsity) and TensorRT-LLM (5 x A100-40GB, all resident), over ``paper.L_IN`` / ``paper.L_OUT``."""
    cfg = cfg if isinstance(cfg, ModelConfig) else load_model(cfg)
    ctx = np.arange(paper.L_IN, paper.L_IN + paper.L_OUT)
    if name == "TensorRT-LLM":
        eng = Engine(get_device(paper.TRT_GPU), hw.eff, paper.TRT_GPUS)
        pre = float(stage_time(cfg, StageShape.prefill(batch, paper.L_IN), eng))
        return Run(name, batch, pre, list(_dense_decode(cfg, eng, batch, ctx)))
    pre = prefill_time(cfg, hw, batch, paper.L_IN)
    streamed = max(cfg.weight_bytes() - hw.gpu_weight_bytes, 0.0)
    compute = _dense_decode(cfg, hw.engine, batch, ctx)
    if name == "FlexGen":  # weights of layer i+1 load while layer i computes
        return Run(name, batch, pre, list(np.maximum(compute, streamed / hw.pcie.bw)))
    if name == "Accelerate":  # load, then compute
        return Run(name, batch, pre, list(compute + streamed / hw.pcie.bw))
    if name == "Deja Vu":  # only predicted-active neurons of the offloaded layers cross PCIe
        if trace is None:
            raise ValueError("trace: Deja Vu needs the activation trace")
        share = streamed / cfg.weight_bytes()
        sparse = sum(active_fraction(trace, b) * neuron_shape(cfg, b)[0] * n
                     for b, n in (("attn", cfg.hidden), ("mlp", cfg.intermediate)))
        dense = cfg.hidden * cfg.hidden * 2
        moved = share * cfg.layers * (sparse + dense)
        return Run(name, batch, pre, list(compute * (1 + paper.DEJAVU_PREDICTOR) + moved / hw.pcie.bw))
    if name == "Hermes-base":
        return Run(name, batch, pre, list(hermes_base_token(cfg, hw, batch, ctx)))
    raise ValueError(f"baseline: {name!r} not allowed; allowed: {', '.join(BASELINES)}")


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
        out.append(on_gpu * gpu_layer + (cfg.layers - on_gpu) * ndp_layer + cfg.layers * common
                   + float(hw.engine.time(2.0 * batch * cfg.hidden * cfg.vocab, cfg.hidden * cfg.vocab * 2)))
    return np.asarray(out)


def with_multipliers(hw: Hardware, m: int) -> Hardware:
    return replace(hw, multipliers=m)
