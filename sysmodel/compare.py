"""`membound compare`: one model and one request trace on every registered system, side by side.

Each system is built from the registry (:mod:`sysmodel.systems`) with its paper's defaults (or ``--set
system.key=value``) and runs the same trace on the one serving engine (:func:`sysmodel.engines.serving.simulate`;
replicas and
pipeline stages through :func:`sysmodel.engines.replicas.run`);
energy comes from each system's ``energy`` on the one basis (:mod:`sysmodel.cost.energy`), area from its
``area``. A system that cannot hold the model, or a request's KV cache, gets its reason and no numbers.
This module computes the rows; :mod:`sysmodel.report.compare` writes them (tables, CSV, plots, the report's
cross-design section), so a change of wording leaves the report's cached rows valid.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from sysmodel import systems
from sysmodel.cost.stage import Infeasible
from sysmodel.designs.baselines import profile_of
from sysmodel.engines import replicas
from sysmodel.engines.pipeline import PipelineUnsupported
from sysmodel.engines.serving import Result, Trace
from sysmodel.progress import progress

COLUMNS = (
    ("system", "system", ""),
    ("hardware", "hardware", ""),
    ("tokens/s", "throughput_tok_s", ".1f"),
    ("TBT p50 ms", "tbt_p50_ms", ".1f"),
    ("TBT p99 ms", "tbt_p99_ms", ".1f"),
    ("T2FT p50 s", "t2ft_p50_s", ".2f"),
    ("T2FT p99 s", "t2ft_p99_s", ".2f"),
    ("J/token", "joules_per_token", ".3g"),
    ("added mm2", "area_mm2", ".3g"),
    ("feasible", "feasible", ""),
)


def split_settings(pairs: list[str], names: list[str]) -> dict[str, list[str]]:
    """``system.key=value`` strings to {system: ["key=value", ...]}; an unknown system is an error."""
    out: dict[str, list[str]] = {n: [] for n in names}
    for text in pairs:
        name, dot, rest = text.partition(".")
        if not dot or "=" not in rest:
            raise ValueError(f"--set: {text!r} is not system.key=value (e.g. hermes.dimms=16)")
        if name not in out:
            raise ValueError(f"--set: {text!r}: system {name!r} is not compared; compared: {', '.join(names)}")
        out[name].append(rest)
    return out


def run(
    model: str,
    trace: Trace,
    names: list[str],
    settings: dict[str, list[str]] | None = None,
    max_batch: int = 256,
    show_progress: bool = True,
    scheduling: dict | None = None,
    parallel: dict | None = None,
    stages: Callable[[str, list[Result]], object] | None = None,
) -> tuple[list[dict], dict]:
    """(rows, provenance): each system's summary of serving ``trace``, or its reason for not running it (in
    its row and its provenance). ``parallel``: replicas, router, pp, pp_link (:func:`sysmodel.engines.replicas.run`);
    a system that cannot be pipelined gets its reason in its row. ``show_progress``: a bar over the systems
    and, below it, each system's own run advancing. ``stages``: each feasible system's runs keep their stages
    and are given to it (name, each engine's result) as soon as they end (``compare --trace-stages``)."""
    par = {"replicas": 1, "router": "round-robin", "pp": 1, "pp_link": None, **(parallel or {})}
    copies = par["replicas"] * par["pp"]
    kw = {"max_batch": max_batch, "progress": show_progress, **par, **(scheduling or {})}
    rows, prov = [], {}
    settings = settings or {}
    bar = progress(len(names), "compare", show_progress)
    for name in names:
        entry = systems.get(name)
        bar.set_postfix_str(name)
        row = {"system": name, "hardware": "", "feasible": False, "reason": ""}
        try:
            sys_ = entry.build(model, settings.get(name, []))
            row["hardware"] = sys_.hardware()
            area = sys_.area()
            s = _served(trace, sys_, stages and partial(stages, name), **kw)
            row.update(
                {k: s[k] for _, k, _ in COLUMNS[2:8]},
                feasible=True,
                area_mm2=copies * area.mm2,
                area_source=area.source if copies == 1 else f"{copies} copies x ({area.source})",
                max_batch=s["max_batch"],
            )
            p = sys_.provenance()
            row["efficiency_profile"] = profile_of(p)
            prov[name] = {
                "system": sys_.name,
                "settings": settings.get(name, []),
                "feasible": True,
                "efficiency_profile": row["efficiency_profile"],
                **p.to_dict(),
                "area": {"mm2": area.mm2, "source": area.source},
            }
        except (Infeasible, PipelineUnsupported) as e:
            row["reason"] = str(e)
            prov[name] = {"system": name, "settings": settings.get(name, []), "feasible": False, "reason": str(e)}
        rows.append(row)
        bar.update()
    bar.close()
    return rows, prov


def _served(trace: Trace, system, stages: Callable[[list[Result]], object] | None, **kw) -> dict:
    """The summary of ``trace`` served on ``system`` (``kw``: :func:`sysmodel.engines.replicas.run`'s options);
    with ``stages``, the run keeps its stages and each engine's result is given to it."""
    res, each = replicas.run(trace, system, stages=stages is not None, **kw)
    if stages is not None:
        stages(each)
    return res.summary()


def pareto(rows: list[dict]) -> list[dict]:
    """Feasible rows no other row beats on both tokens/s (higher) and J/token (lower)."""
    ok = [r for r in rows if r["feasible"]]
    return [
        r
        for r in ok
        if not any(
            o["throughput_tok_s"] >= r["throughput_tok_s"]
            and o["joules_per_token"] <= r["joules_per_token"]
            and o is not r
            and (o["throughput_tok_s"] > r["throughput_tok_s"] or o["joules_per_token"] < r["joules_per_token"])
            for o in ok
        )
    ]


def rows_of(model: str, kind: str, requests: int, prompt: int, output: int, names: list[str]) -> list[dict]:
    """The comparison's rows for a generated trace (what the report caches)."""
    from sysmodel.engines.serving import make_trace

    trace = make_trace(kind, requests, 1, prompt=prompt or 128, output=output or 128)
    return run(model, trace, names, show_progress=False)[0]
