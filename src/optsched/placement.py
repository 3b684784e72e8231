"""Placing one mixed-parallelism job (paper 001): Heavy-Edge or an exact model.

``place(job, free, algorithm=...)`` takes the free GPUs per server and returns a
[`Placement`][optsched.placement.Placement]: the
count matrix x (GPUs per server per stage), alpha (eq. 7, ms), the cut weight of the replica graph (MB),
the status and the runtime. The same three algorithms are registered for the placement problem
([`PlacementInstance`][optsched.problems.placement.PlacementInstance]), so ``optsched.solve(instance, "exact-time")``
gives a
[`Result`][optsched.result.Result] whose objective is alpha (ms) and whose lower bound is proven.

* ``"heavy-edge"``: Heavy-Edge ([`optsched.algorithms.heavy_edge`][]). When the free GPUs exceed g_i, the
  servers are first chosen by A-SRPT's SelectMost (``select="most"``, default) or SelectLeast.
* ``"exact-time"``: min alpha ([`optsched.exact.placement`][]), in the selection form (any free GPUs) by
  default, or in the mapping form (``form="mapping"``: on the servers the selection rule gives, as
  Heavy-Edge receives them).
* ``"exact-cut"``: min cut weight on the servers the selection rule gives (Heavy-Edge's own objective).

```pycon
>>> from optsched.algorithms.heavy_edge import fig2_job
>>> p = place(fig2_job(), {"a": 4, "b": 1, "c": 1})
>>> dict(p.x), round(p.alpha, 2), p.cut_weight
({'a': (2, 2, 0), 'b': (0, 0, 1), 'c': (0, 0, 1)}, 22.2, 4.0)
>>> place(fig2_job(), {"a": 4, "b": 1, "c": 1, "d": 8}, algorithm="exact-time").x
{'d': (2, 2, 2)}

```
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from .algorithms.heavy_edge import Vertex, contiguous_assignment, cut_weight, heavy_edge
from .cluster import Cluster
from .errors import InstanceError
from .exact.placement import min_cut_placement, min_time_placement
from .limits import check_seed
from .perf.pipeline import Network, compute_lower_bound
from .perf.pipeline import alpha as alpha_of
from .problems.pipeline import PipelineJob
from .problems.placement import PlacementInstance
from .registry import algorithm as register_algorithm
from .result import FrozenDict, Result, Schedule, ScheduledJob, SolveStatus

ALGORITHMS = ("heavy-edge", "exact-time", "exact-cut")


@dataclass(frozen=True)
class Placement:
    """Where a job's replicas go: ``x[server]`` = GPUs per stage there, with alpha (ms) and cut weight (MB)."""

    job: str
    x: Mapping[str, tuple[int, ...]]
    alpha: float
    cut_weight: float
    status: SolveStatus
    runtime_s: float
    algorithm: str
    assignment: Mapping[str, tuple[Vertex, ...]] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gpus(self) -> dict[str, int]:
        """Server -> GPUs the job takes there."""
        return {s: sum(c) for s, c in self.x.items()}

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(self.x)


def _check_free(job: PipelineJob, free: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for sid, n in free.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InstanceError(f"free GPUs must be a non-negative integer, got {n!r}", field=f"free[{sid!r}]",
                                job=job.id)
        out[str(sid)] = n
    job.check_fits(sum(out.values()))
    return out


def select_most(free: Mapping[str, int], gpus: int) -> dict[str, int]:
    """A-SRPT's SelectMost: servers by free GPUs descending (ties: the given order), take min(free, left).

    ```pycon
    >>> select_most({"a": 2, "b": 8, "c": 5}, 10)
    {'b': 8, 'c': 2}

    ```
    """
    return _select(free, gpus, descending=True)


def select_least(free: Mapping[str, int], gpus: int) -> dict[str, int]:
    """A-SRPT's SelectLeast: the same over servers with free GPUs, ascending.

    ```pycon
    >>> select_least({"a": 2, "b": 8, "c": 5, "d": 0}, 4)
    {'a': 2, 'c': 2}

    ```
    """
    return _select(free, gpus, descending=False)


def _select(free: Mapping[str, int], gpus: int, descending: bool) -> dict[str, int]:
    items = [(s, n) for s, n in free.items() if n > 0]
    items.sort(key=(lambda it: -it[1]) if descending else (lambda it: it[1]))
    out, left = {}, gpus
    for sid, n in items:
        if left <= 0:
            break
        take = min(n, left)
        out[sid] = take
        left -= take
    if left > 0:
        raise InstanceError(f"needs {gpus} GPUs but only {gpus - left} are free", field="free")
    return out


def network_for(network: Network | None = None, cluster: Cluster | None = None, **overrides: Any) -> Network:
    """The [`Network`][optsched.perf.pipeline.Network] to use: given, or from a cluster (bandwidths read as GB/s), or
    the paper's
    simulation (8 GPUs, 10 Gbps NIC, 300 GB/s) with keyword overrides."""
    if network is not None:
        return network
    if cluster is not None:
        base = Network(cluster.max_server_gpus, float(cluster.inter_bandwidth), float(cluster.intra_bandwidth))
    else:
        base = Network.paper_simulation()
    kw = {k: v for k, v in overrides.items() if v is not None}
    if not kw:
        return base
    return Network(kw.get("gpus_per_server", base.gpus_per_server),
                   kw.get("inter_bandwidth_gbs", base.inter_bandwidth_gbs),
                   kw.get("intra_bandwidth_gbs", base.intra_bandwidth_gbs))


def place(job: PipelineJob, free: Mapping[str, int], algorithm: str = "heavy-edge", *,
          network: Network | None = None, cluster: Cluster | None = None, gpus_per_server: int | None = None,
          inter_bandwidth_gbs: float | None = None, intra_bandwidth_gbs: float | None = None,
          select: str = "most", form: str | None = None, solver: str | None = None, seed: int | None = 0,
          time_limit: float | None = None, num_workers: int = 1,
          deterministic_limit: float | None = None) -> Placement:
    """Place ``job`` on the free GPUs ``free`` = {server: free GPUs}; see the module docstring.

    A job needing more GPUs than are free raises [`InstanceError`][optsched.errors.InstanceError]. ``seed`` drives
    Heavy-Edge's random
    picks and CP-SAT's search; ``solver`` ("cpsat" by default, "cbc", "highs"), ``time_limit`` (seconds, default
    10), ``deterministic_limit`` (CP-SAT only) and ``num_workers`` the exact models; ``form`` exact-time's
    model. Options that do not apply to the algorithm are refused, not ignored.
    """
    if not isinstance(job, PipelineJob):
        raise InstanceError(f"must be a PipelineJob (optsched.models.catalogue_job('VGG19:dp4'), or optsched.load of "
                            f"a pipeline-job file), got {type(job).__name__}", field="job")
    if not isinstance(free, Mapping):
        raise InstanceError(f"must map server ids to free GPUs, e.g. {{'s0': 8}}, got {type(free).__name__}",
                            field="free", job=job.id)
    check_seed(seed, job=job.id)
    if algorithm not in ALGORITHMS:
        raise InstanceError(f"unknown placement algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})",
                            field="algorithm", job=job.id)
    if algorithm == "heavy-edge":
        for name, value in (("solver", solver), ("time_limit", time_limit), ("form", form),
                            ("deterministic_limit", deterministic_limit)):
            if value is not None:
                raise InstanceError("applies to the exact models only; heavy-edge is a heuristic", field=name,
                                    job=job.id)
    elif algorithm == "exact-cut" and form is not None:
        raise InstanceError("applies to exact-time only (exact-cut works on the selected servers)", field="form",
                            job=job.id)
    solver = solver or "cpsat"
    if time_limit is None and deterministic_limit is None:
        time_limit = 10.0
    if select not in ("most", "least"):
        raise InstanceError(f"must be 'most' or 'least', got {select!r}", field="select", job=job.id)
    net = network_for(network, cluster, gpus_per_server=gpus_per_server, inter_bandwidth_gbs=inter_bandwidth_gbs,
                      intra_bandwidth_gbs=intra_bandwidth_gbs)
    t0 = time.perf_counter()
    free = _check_free(job, free)
    total = sum(free.values())
    if form is None:
        form = "selection" if algorithm == "exact-time" and total > job.gpus else "mapping"
    chosen = free if total == job.gpus else (select_most if select == "most" else select_least)(free, job.gpus)
    chosen = {s: n for s, n in chosen.items() if n > 0}
    if algorithm == "heavy-edge":
        he = heavy_edge(job, chosen, rng=seed)
        x = {s: c for s, c in he.counts.items() if any(c)}
        return Placement(job.id, FrozenDict(x), alpha_of(job, net, x, check=False), he.cut_weight_mb,
                         SolveStatus.FEASIBLE, time.perf_counter() - t0, algorithm,
                         FrozenDict(dict(he.assignment)), FrozenDict({"servers": dict(chosen)}))
    if algorithm == "exact-time":
        res = min_time_placement(job, net, free if form == "selection" else chosen, form=form, solver=solver,
                                 time_limit=time_limit, num_workers=num_workers, seed=seed if solver == "cpsat"
                                 else None, deterministic_limit=deterministic_limit)
    else:
        res = min_cut_placement(job, chosen, solver=solver, time_limit=time_limit, num_workers=num_workers, net=net,
                                seed=seed if solver == "cpsat" else None, deterministic_limit=deterministic_limit)
    x = {s: c for s, c in res.counts.items() if any(c)}
    assign = dict(res.assignment or contiguous_assignment(job, x))
    cut = cut_weight(job, assign) if x else math.inf
    a = alpha_of(job, net, x, check=False) if x else math.inf
    info = {"form": form, "solver": solver, **dict(res.info)}
    return Placement(job.id, FrozenDict(x), a, cut, res.status, time.perf_counter() - t0, algorithm,
                     FrozenDict(assign), FrozenDict(info))


# -- the placement problem's registered algorithms -------------------------------------------------------------
def solve_placement(inst: PlacementInstance, algorithm: str = "heavy-edge", *, seed: int | None = None,
                    time_limit: float | None = None, **options: Any) -> Result:
    """[`place`][optsched.placement.place] on a [`PlacementInstance`][optsched.problems.placement.PlacementInstance], as
    a [`Result`][optsched.result.Result]: objective alpha
    (ms), lower bound alpha itself when exact-time proves optimality, else the compute bound max_s (p^f_s +
    p^b_s) (no placement is faster, digest P6). ``exact-cut`` is optimal for the cut weight, not for alpha, so
    its status is ``feasible``.

    ```pycon
    >>> from optsched.generators.placement import random_placement_instance
    >>> inst = random_placement_instance(seed=1)
    >>> he, ex = solve_placement(inst, "heavy-edge"), solve_placement(inst, "exact-time")
    >>> ex.status.value, ex.objective <= he.objective + 1e-9, he.lower_bound <= ex.objective
    ('optimal', True, True)

    ```
    """
    p = place(inst.job, dict(inst.free), algorithm, network=inst.network, seed=0 if seed is None else seed,
              time_limit=time_limit, **options)
    bound = compute_lower_bound(inst.job)
    status = p.status if algorithm == "exact-time" else SolveStatus.FEASIBLE
    if algorithm == "exact-time":
        proven = p.info.get("bound")
        if p.status == SolveStatus.OPTIMAL:
            bound = p.alpha
        elif isinstance(proven, (int, float)) and math.isfinite(proven):
            bound = max(bound, float(proven) - 1e-6)  # the model rounds column costs up to 1e-6 ms
    # "interrupted" (the signal that stopped the exact model) lets optsched.solve label the result and the CLI exit
    info = {"cut_weight_mb": p.cut_weight,
            **{k: v for k, v in p.info.items()
               if k in ("form", "solver", "servers", "interrupted", "limit", "time_limit_s", "deterministic_limit")}}
    if algorithm == "exact-cut":
        info["cut_status"] = p.status.value
    if not p.x:
        return Result(None, status, p.runtime_s, None, algorithm, lower_bound=bound, seed=seed, info=info)
    sched = Schedule((ScheduledJob(inst.job.id, 0, p.gpus, None, dict(p.x)),), algorithm, inst.name)
    return Result(p.alpha, status, p.runtime_s, sched, algorithm, lower_bound=min(bound, p.alpha), seed=seed,
                  info=info)


@register_algorithm("heavy-edge", PlacementInstance)
def _heavy_edge(inst: PlacementInstance, **kw: Any) -> Result:
    """Heavy-Edge (paper 001, IV-B) on the servers SelectMost picks"""
    return solve_placement(inst, "heavy-edge", **kw)


@register_algorithm("exact-time", PlacementInstance, exact=True)
def _exact_time(inst: PlacementInstance, *, deterministic_limit: float | None = None, **kw: Any) -> Result:
    """min alpha over every count matrix on the free GPUs (CP-SAT; CBC/HiGHS with solver=)"""
    # deterministic_limit named so that solve_many, which reads the signature, passes it (issue 28)
    return solve_placement(inst, "exact-time", deterministic_limit=deterministic_limit, **kw)


@register_algorithm("exact-cut", PlacementInstance)
def _exact_cut(inst: PlacementInstance, **kw: Any) -> Result:
    """min cut weight of the replica graph (Heavy-Edge's own objective, solved exactly; a heuristic for alpha)"""
    return solve_placement(inst, "exact-cut", **kw)
