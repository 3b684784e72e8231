"""Running a deadline workload in the simulator: the workload conversion, the policy table, one run.

* :func:`to_workload`: a :class:`~optsched.problems.deadline.DeadlineWorkload` as the simulator's
  :class:`~optsched.problems.workload.Workload`: work in one-GPU batches (epochs x dataset / batch), the
  profiled step time as the iteration time, the deadline, the :class:`DeadlineJob` as the spec (the ring model
  reads it) and a GPU *request* for the policies that do not choose counts (LAS, Tiresias):
  ``request="min-feasible"`` (default) asks for the fewest GPUs that meet the deadline if the job started at
  its arrival on an empty cluster (one node when the count fits one, the count with the shortest run time if
  none does), ``"one"`` for one GPU.
* :data:`POLICIES`: the policy compositions by name: ``drs``, ``norm``, ``edf``, ``deadline-fifo``, ``themis``,
  ``elasticflow`` (with its admission), ``las`` and ``tiresias`` (the simulator's, consolidated placement,
  preemptive, on the requested GPUs).
* :func:`run_deadline`: one run; returns a :class:`DeadlineRun` (the :class:`~optsched.sim.metrics.SimResult`,
  the deadline metrics and the policy object, whose records DRS keeps).

Event mode by default (a decision at every arrival and completion, as the paper's scheduler); ``round_s``
gives Blox's rounds instead (the exact model's time grid: :mod:`optsched.exact.deadline`).

>>> from optsched.generators.deadline import tiny_deadline_workload
>>> wl = tiny_deadline_workload(3, seed=2)
>>> [run_deadline(wl, p).metrics["jobs"] for p in ("drs", "edf", "las")]
[3, 3, 3]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...errors import InstanceError
from ...perf.ring import RingPerf
from ...problems.deadline import DeadlineJob, DeadlineWorkload, meets_deadline
from ...problems.workload import Workload, WorkloadJob
from ..base import LaunchMechanism, MetricCollector, SchedulerPlacer
from ..metrics import SimResult
from ..registry import build_admission, build_policy
from ..runner import simulate
from .metrics import deadline_metrics

__all__ = ["PAPER_POLICIES", "POLICIES", "DeadlineRun", "request_gpus", "run_deadline", "to_workload"]

#: policy name -> simulate() options
POLICIES: dict[str, dict[str, Any]] = {
    "drs": {"scheduler": "drs"},
    "norm": {"scheduler": "norm"},
    "edf": {"scheduler": "edf"},
    "deadline-fifo": {"scheduler": "deadline-fifo"},
    "themis": {"scheduler": "themis"},
    "elasticflow": {"scheduler": "elasticflow", "admission": "elasticflow"},
    "las": {"scheduler": "las", "placement": "consolidated"},
    "tiresias": {"scheduler": "tiresias", "placement": "consolidated"},
}
#: the paper's methods (section 4) in its order
PAPER_POLICIES = ("drs", "norm", "edf", "deadline-fifo", "themis")


def request_gpus(wl: DeadlineWorkload, job: DeadlineJob, rule: str = "min-feasible") -> int:
    """The GPUs a job requests from a policy that does not choose counts (module docstring).

    >>> from optsched.problems.deadline import paper_cluster
    >>> wl = DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "ResNet-50", 0, 0.5, 10),))
    >>> request_gpus(wl, wl.jobs[0]), request_gpus(wl, wl.jobs[0], "one")
    (3, 1)
    """
    if rule == "one":
        return 1
    if rule != "min-feasible":
        raise InstanceError(f"must be 'min-feasible' or 'one', got {rule!r}", field="request")
    big = max(wl.capacities)
    best_n, best_t = 1, float("inf")
    for n in range(1, min(wl.total_gpus, job.max_gpus) + 1):
        t = wl.run_time_s(job, n, cross=n > big)
        if meets_deadline(job.arrival_s + t, job.deadline_s):
            return n
        if t < best_t:
            best_n, best_t = n, t
    return best_n


def to_workload(wl: DeadlineWorkload, request: str = "min-feasible") -> Workload:
    """The simulator's workload of a deadline workload (module docstring)."""
    jobs = tuple(WorkloadJob(j.id, j.arrival_s, request_gpus(wl, j, request), j.work_batches, j.t_cal,
                             model=j.model, deadline_s=j.deadline_s, spec=j) for j in wl.jobs)
    return Workload(jobs, wl.name, wl.seed, {**wl.meta, "problem": "deadline", "request": request})


@dataclass
class DeadlineRun:
    """One run: ``policy`` name, ``result`` (the simulator's), ``metrics`` (:func:`deadline_metrics`) and
    ``policy`` object (DRS keeps its plan choices and migrations there)."""

    name: str
    result: SimResult
    metrics: dict[str, Any]
    policy: Any
    admission: Any = None


def run_deadline(wl: DeadlineWorkload, policy: str | SchedulerPlacer = "drs", *, mode: str = "event",
                 round_s: float | None = None, seed: int = 0, request: str = "min-feasible",
                 migration_s: float = 0.0, restore_s: float = 0.0, collectors: Sequence[MetricCollector] = (),
                 **options: Any) -> DeadlineRun:
    """Simulate ``wl`` under ``policy`` (a :data:`POLICIES` name or a combined policy object) with the ring model
    of its cluster. ``round_s`` switches to round mode with that round length (``mode="round"``).
    ``options`` go to the scheduler (e.g. ``score=...`` for DRS)."""
    if isinstance(policy, str):
        if policy not in POLICIES:
            raise InstanceError(f"unknown deadline policy {policy!r} (known: {', '.join(POLICIES)})",
                                field="policy")
        spec = dict(POLICIES[policy])
        name = policy
    else:
        spec, name = {"scheduler": policy}, getattr(policy, "name", type(policy).__name__)
    if round_s is not None:
        mode = "round"
    sched = build_policy(spec["scheduler"], spec.get("placement", "consolidated"), seed=seed, **options)
    adm = build_admission(spec.get("admission", "accept-all"))
    res = simulate(to_workload(wl, request), wl.cluster, scheduler=sched, admission=adm,
                   perf=RingPerf.for_workload(wl), mode=mode, round_s=300.0 if round_s is None else round_s,
                   seed=seed, launch=LaunchMechanism(restore_s=restore_s, migration_s=migration_s),
                   collectors=collectors, label=name)
    alphas = {j.id: j.alpha for j in wl.jobs}
    return DeadlineRun(name, res, deadline_metrics(res, alphas), sched, adm)
