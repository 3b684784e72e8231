"""A deadline workload as the simulator's workload: the conversion the one door applies
(``optsched.simulate(deadline_workload, scheduler=...)``, [`optsched.sim.kinds`][]).

* [`to_workload`][optsched.sim.deadline.run.to_workload]: a
  [`DeadlineWorkload`][optsched.problems.deadline.DeadlineWorkload] as the simulator's
  [`Workload`][optsched.problems.workload.Workload]: work in one-GPU batches (epochs x dataset / batch), the
  profiled step time as the iteration time, the deadline, the [`DeadlineJob`][optsched.problems.deadline.DeadlineJob] as
  the spec (the ring model
  reads it) and a GPU *request* for the policies that do not choose counts (LAS, Tiresias):
  ``request="min-feasible"`` (default) asks for the fewest GPUs that meet the deadline if the job started at
  its arrival on an empty cluster (one node when the count fits one, the count with the shortest run time if
  none does; the count the job asked for, ``gpus``, when it has one), ``"one"`` for one GPU. A best-effort job
  has no deadline.

Through the door a deadline workload runs in event mode by default (a decision at every arrival and completion,
as the paper's scheduler), with the ring model of its cluster, DRS unless another scheduler is named (the
simulator's LAS and Tiresias run the jobs on their requested GPUs, consolidated, preemptive), ElasticFlow with its
own admission, and the deadline metrics ([`.metrics`][optsched.sim.deadline.metrics]) in the result; ``round_s`` gives
Blox's rounds instead
(the exact model's time grid: [`optsched.exact.deadline`][]).

```pycon
>>> from optsched.generators.deadline import tiny_deadline_workload
>>> wl = tiny_deadline_workload(3, seed=2)
>>> from optsched.sim import simulate
>>> [simulate(wl, scheduler=p).custom["deadline"].get("jobs") for p in ("drs", "edf", "las")]
[3, 3, 3]

```
"""

from __future__ import annotations

from ...errors import InstanceError
from ...problems.deadline import DeadlineJob, DeadlineWorkload, meets_deadline
from ...problems.workload import Workload, WorkloadJob

__all__ = ["request_gpus", "to_workload"]


def request_gpus(wl: DeadlineWorkload, job: DeadlineJob, rule: str = "min-feasible") -> int:
    """The GPUs a job requests from a policy that does not choose counts (module docstring).

    ```pycon
    >>> from optsched.problems.deadline import paper_cluster
    >>> wl = DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "ResNet-50", 0, 0.5, 10),))
    >>> request_gpus(wl, wl.jobs[0]), request_gpus(wl, wl.jobs[0], "one")
    (3, 1)

    ```
    """
    return _request(wl, job, rule, wl.total_gpus, max(wl.capacities, default=0))


def _request(wl: DeadlineWorkload, job: DeadlineJob, rule: str, total: int, big: int) -> int:
    """[`request_gpus`][optsched.sim.deadline.run.request_gpus] with the cluster's GPUs in all and its largest
    node given (read once per workload, not once per job)."""
    if rule == "one":
        return 1
    if job.gpus is not None and rule == "min-feasible":
        return min(job.gpus, total)  # the count the user asked for (format 2, ElasticFlow's num_gpu)
    if rule != "min-feasible":
        raise InstanceError(f"must be 'min-feasible' or 'one', got {rule!r}", field="request")
    best_n, best_t = 1, float("inf")
    for n in range(1, min(total, job.max_gpus) + 1):
        t = wl.run_time_s(job, n, cross=n > big)
        if meets_deadline(job.arrival_s + t, job.deadline_s):
            return n
        if t < best_t:
            best_n, best_t = n, t
    return best_n


def to_workload(wl: DeadlineWorkload, request: str = "min-feasible") -> Workload:
    """The simulator's workload of a deadline workload (module docstring)."""
    total, big = wl.total_gpus, max(wl.capacities, default=0)
    jobs = tuple(WorkloadJob(j.id, j.arrival_s, _request(wl, j, request, total, big), j.work_batches, j.t_cal,
                             model=j.model, deadline_s=None if j.best_effort else j.deadline_s, spec=j)
                 for j in wl.jobs)
    return Workload(jobs, wl.name, wl.seed, {**wl.meta, "problem": "deadline", "request": request})
