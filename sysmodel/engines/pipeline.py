"""Pipeline parallelism: a system's layers split over ``stages`` copies of its hardware, run as vLLM runs it.

vLLM (v0 ``LLMEngine``) keeps one *virtual engine* per pipeline stage: each has its own scheduler and
1/stages of the KV blocks (``Scheduler``: ``num_gpu_blocks //= pipeline_parallel_size``), a new request goes
to the one with the fewest unfinished requests, and their batches follow each other through the stages, so
``stages`` batches are in flight. membound models each virtual engine as one serving engine on
:class:`Pipelined` (``sysmodel.engines.replicas`` runs them behind the least-outstanding router):

* **iteration**: the batch passes every stage in turn; stage s runs its 1/stages of the layers on its copy
  in 1/stages of the whole model's time there, so the iteration takes the system's own stage time plus
  ``stages - 1`` hops of the batch's activations (tokens x hidden x 2 bytes) over the inter-stage link;
* **sharing**: a copy spends 1/stages of a batch's time on each virtual engine's batch, so a round of all
  engines keeps it busy for one iteration's compute, inside the iteration plus hops each engine takes: with
  balanced batches the engines never wait for a stage (an unbalanced round would queue; not modelled);
* **KV**: ``stages`` copies hold the weights once — stages x (its KV capacity + resident weights) - weights
  in all, 1/stages per virtual engine;
* **energy**: the whole model's operations once per iteration (the system's own energy of the stage), the
  static power of ``stages`` copies shared by ``stages`` engines (one copy's per engine), and the hops'
  bytes on the link;
* **area**: ``stages`` copies.

A system takes part when it says which weights its KV memory also holds (``resident_weight_bytes``) and
its model (``cfg``, for the hidden size); others are refused by name.
"""

from __future__ import annotations

import numpy as np

from sysmodel.cost.devices import LINKS, Link, get_link
from sysmodel.cost.energy import Usage, joules
from sysmodel.cost.models import StageShape
from sysmodel.cost.stage import ACT_BYTES
from sysmodel.systems import Area, Provenance, System


class PipelineUnsupported(ValueError):
    """A system that cannot be pipelined (compare lists it with this reason; serve stops with it)."""


def default_link(system: System) -> str:
    """The inter-stage link: the system's device interconnect (the link its tensor parallelism uses)."""
    link = getattr(getattr(system, "device", None), "link", None)
    if link is None:
        raise PipelineUnsupported(
            f"pp_link: system {system.name} names no device interconnect; give one: --pp-link "
            f"{' | '.join(LINKS)}"  # the names, not the module that holds them
        )
    return link


class Pipelined:
    """One virtual engine of ``system`` pipelined over ``stages`` copies (module docstring). ``weight_bytes``
    and ``hidden`` default to the system's resident weights and model; a system without them needs both."""

    def __init__(
        self,
        system: System,
        stages: int,
        link: str | None = None,
        weight_bytes: float | None = None,
        hidden: int | None = None,
    ):
        if stages < 1:
            raise ValueError(f"pp: {stages} not allowed; must be >= 1 stage")
        weight_bytes = getattr(system, "resident_weight_bytes", None) if weight_bytes is None else weight_bytes
        cfg = getattr(system, "cfg", None)
        hidden = getattr(cfg, "hidden", None) if hidden is None else hidden
        if weight_bytes is None or hidden is None:
            raise PipelineUnsupported(
                f"pp: system {system.name} does not say which weights share its KV memory "
                f"(resident_weight_bytes) or its model; pipeline stages split those"
            )
        if cfg is not None and stages > cfg.layers:  # a stage with no layer of its own
            raise ValueError(f"pp: {stages} not allowed; at most the model's {cfg.layers} layers (one a stage)")
        self.base, self.stages, self.hidden = system, stages, hidden
        self.link: Link = get_link(link or default_link(system))
        self.weight_bytes = float(weight_bytes)
        self.kv_bytes_per_token = system.kv_bytes_per_token
        self.name = f"{system.name}, PP {stages} over {self.link.name}"

    def __getattr__(self, name: str):
        if name in ("max_batch", "prefill_budget", "host_link_bw", "pure_stage_times"):  # optional System members
            return getattr(self.base, name)
        raise AttributeError(name)

    def kv_capacity(self) -> float:
        return (self.stages * (self.base.kv_capacity() + self.weight_bytes) - self.weight_bytes) / self.stages

    def hop_bytes(self, shape: StageShape) -> np.ndarray:
        """Activation bytes one stage boundary carries: the batch's new tokens x hidden."""
        return np.multiply(shape.tokens, self.hidden * ACT_BYTES)

    def hops(self, shape: StageShape) -> np.ndarray:
        nbytes = self.hop_bytes(shape)
        one = np.where(np.asarray(nbytes) > 0, self.link.latency_s + np.divide(nbytes, self.link.bw), 0.0)
        return (self.stages - 1) * one

    def stage_times(self, shape: StageShape) -> np.ndarray:
        return np.add(self.base.stage_times(shape), self.hops(shape))

    def energy(self, shape: StageShape, seconds: np.ndarray | None = None) -> np.ndarray:
        seconds = self.stage_times(shape) if seconds is None else seconds
        u = Usage()
        u.move(self.link.name, (self.stages - 1) * self.hop_bytes(shape))
        return np.add(self.base.energy(shape, seconds), joules(u, 0.0))

    def area(self) -> Area:
        a = self.base.area()
        return Area(self.stages * a.mm2, f"{self.stages} pipeline stages x ({a.source})")

    def hardware(self) -> str:
        return f"{self.stages} pipeline stages of {self.base.hardware()}, {self.link.name} between them"

    def provenance(self) -> Provenance:
        p = self.base.provenance()
        p.constant(
            f"pipeline link {self.link.name}", {"bw": self.link.bw, "latency_s": self.link.latency_s}, self.link.source
        )
        return p
