"""The online workload kinds the one door ([`optsched.sim.simulate`][]) takes, and what each brings along.

Every online problem of the package is simulated by the same engine; its kind only sets the defaults a user of
that kind expects and the metrics of its family:

=====================================  =========================================================================
kind                                    defaults and metrics
=====================================  =========================================================================
[`workload`][optsched.problems.workload]    Blox's setting: ``fifo`` + consolidated, 300 s rounds, the constant model
``Workload`` (paper 002)                (cross-server penalty); JCT, responsiveness, utilisation
[`deadline`][optsched.problems.deadline]    the workload's cluster and its ring model (paper 003), event mode,
``DeadlineWorkload``                    ``drs``; jobs request the fewest GPUs meeting their deadline from a policy
                                        that does not choose counts (``request``); deadline metrics
                                        ([`optsched.sim.deadline.metrics`][])
[`contention`][optsched.problems.contention]  the instance's cluster, DeepShare's measured table with sticky ratios
``ContentionInstance`` (paper 004)      and its floor, rounds of the instance's length, ``contention-greedy``,
                                        the instance's threshold for the policies that take one; the
                                        repository's round accounting beside the exact JCT
                                        ([`optsched.sim.contention.runner`][])
=====================================  =========================================================================

A path is read with [`optsched.load`][] (any of the three file formats) or, for a CSV, by its header (Pollux's
and Philly's files, [`optsched.generators.workload.resolve_workload`][]); ``philly``, ``pollux:N``, ``synthetic``,
``bursty`` and ``replay:PATH`` name generated workloads.

```pycon
>>> from optsched.generators.deadline import tiny_deadline_workload
>>> s = online_setup(tiny_deadline_workload(3, seed=2))
>>> s.kind, s.defaults["scheduler"], s.defaults["mode"], len(s.workload)
('deadline', 'drs', 'event', 3)

```
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..cluster import Cluster
from ..errors import InstanceError
from ..problems.contention import ContentionInstance
from ..problems.deadline import DeadlineWorkload
from ..problems.workload import Workload, WorkloadJob
from .base import MetricCollector

__all__ = ["KINDS", "OnlineSetup", "online_setup"]

KINDS = ("workload", "deadline", "contention")


@dataclass
class OnlineSetup:
    """What a workload kind brings to a simulation: the simulator's workload, its cluster (None: the caller's or
    Blox's default), the defaults of [`optsched.sim.simulate`][], collectors that add the family's metrics to
    the result, and options some schedulers of the family take (``scheduler_options``, given only to a class
    whose constructor has that parameter and only when the user did not set it)."""

    kind: str
    workload: Workload
    cluster: Cluster | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    collectors: list[MetricCollector] = field(default_factory=list)
    scheduler_options: dict[str, Any] = field(default_factory=dict)
    perf_factory: Callable[[], Any] | None = None


def _deadline(wl: DeadlineWorkload, request: str | None) -> OnlineSetup:
    from ..perf.ring import RingPerf
    from ..perf.table import TablePerf
    from .deadline.metrics import DeadlineMetrics
    from .deadline.run import to_workload

    # a workload with measured throughput rows (format 2, ElasticFlow's traces) gets the table model
    model = TablePerf if any(j.throughput is not None for j in wl.jobs) else RingPerf
    best_effort = [j.id for j in wl.jobs if j.best_effort]
    return OnlineSetup("deadline", to_workload(wl, request or "min-feasible"), wl.cluster,
                       {"scheduler": "drs", "mode": "event", "round_s": 300.0},
                       [DeadlineMetrics({j.id: j.alpha for j in wl.jobs}, best_effort or None)],
                       perf_factory=lambda: model.for_workload(wl))


def _contention(inst: ContentionInstance) -> OnlineSetup:
    from ..generators.contention import to_workload
    from ..perf.measured import MeasuredPerf
    from .contention.runner import ContentionMetrics

    return OnlineSetup("contention", to_workload(inst), Cluster.homogeneous(inst.nodes, inst.gpus_per_node),
                       {"scheduler": "contention-greedy", "mode": "round", "round_s": float(inst.round_s)},
                       [ContentionMetrics(float(inst.round_s), inst.total_gpus)],
                       scheduler_options={"threshold": inst.threshold},
                       perf_factory=lambda: MeasuredPerf(floor=inst.floor, sticky=True,
                                                         extrapolate=any(j.gpus > 8 for j in inst.jobs)))


def _load(path: str | os.PathLike) -> Any:
    """A file of any online kind: the three JSON formats through the registry, CSVs by their header."""
    from ..api import load
    from ..generators.workload import csv_kind, resolve_workload
    from ..io import check_format, read_json
    from ..problems.elasticflow import is_elasticflow_trace

    p = Path(path)
    if is_elasticflow_trace(p):
        raise InstanceError(f"{p} is an ElasticFlow trace: it needs its throughput folder (read it with "
                            "optsched.problems.elasticflow.read_elasticflow_trace, or optsched simulate PATH "
                            "--throughputs DIR)", field="workload")
    if p.suffix.lower() == ".csv":
        kind = csv_kind(p)
        if kind in ("pollux", "philly"):
            return resolve_workload(str(p))
        if kind == "deadline":
            from ..problems.deadline import read_deadline_workload

            return read_deadline_workload(p)
        from ..problems.workload import read_workload

        return read_workload(p)
    data = read_json(p)
    check_format(data)
    return load(p)


def online_setup(obj: Any, *, request: str | None = None) -> OnlineSetup:
    """The [`OnlineSetup`][optsched.sim.kinds.OnlineSetup] of a workload of any kind: a
    [`Workload`][optsched.problems.workload.Workload], a
    [`DeadlineWorkload`][optsched.problems.deadline.DeadlineWorkload], a
    [`ContentionInstance`][optsched.problems.contention.ContentionInstance],
    a list of [`WorkloadJob`][optsched.problems.workload.WorkloadJob], a path to a file of any of them, or the name of a
    generated workload
    (``philly``, ``pollux:N``, ``synthetic``, ...). ``request`` (deadline workloads): ``min-feasible`` or ``one``."""
    if isinstance(obj, (str, os.PathLike)):
        spec = os.fspath(obj)
        if Path(spec).exists():
            obj = _load(spec)
        else:
            from ..generators.workload import resolve_workload

            obj = resolve_workload(spec)  # philly, pollux:N, synthetic, ...; a clear error otherwise
    if request is not None and not isinstance(obj, DeadlineWorkload):
        raise InstanceError("applies to deadline workloads only (the GPUs a job asks of a policy that does not "
                            "choose counts)", field="request")
    if isinstance(obj, DeadlineWorkload):
        return _deadline(obj, request)
    if isinstance(obj, ContentionInstance):
        return _contention(obj)
    if isinstance(obj, Workload):
        return OnlineSetup("workload", obj, defaults={"scheduler": "fifo", "mode": "round", "round_s": 300.0})
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(j, WorkloadJob) for j in obj):
        return online_setup(Workload(tuple(obj)))
    raise InstanceError("must be a Workload, a DeadlineWorkload, a ContentionInstance, a list of WorkloadJob, a "
                        f"file of one of them, or philly / pollux:N / synthetic; got {type(obj).__name__}",
                        field="workload")
