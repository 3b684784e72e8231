"""Paper 003's EDF and FIFO baselines (section 4): the head job of the queue gets *all* of the cluster's GPUs.

EDF picks the waiting job with the earliest deadline [36], FIFO the earliest arrival; either starts it on every
GPU of the cluster (across all nodes, B_inter) once the cluster is empty, and nothing else runs beside it (the
paper's Fig. 12: their utilisation stays at its maximum while jobs wait). A job whose dataset cannot feed a
batch to every GPU gets as many GPUs as it can use. Jobs are never preempted. Ties: arrival, then workload
order. Named ``edf`` and ``deadline-fifo`` (``fifo`` is Blox's FIFO of the simulator, which does not choose GPU
counts).

```pycon
>>> from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster
>>> from optsched.sim import simulate
>>> wl = DeadlineWorkload(paper_cluster(2, 2), (DeadlineJob("a", "TSN", 0, 1.5, 2),
...                                              DeadlineJob("b", "TSN", 1, 0.5, 1)))
>>> r = simulate(wl, scheduler="edf").jobs
>>> r["first_start_s"].tolist() == [0.0, r["completion_s"][0]], bool(r["attained_gpu_s"][1] > 0)
(True, True)

```
"""

from __future__ import annotations

import math

from ..base import Composed, PlacementPolicy, SchedulingPolicy
from ..state import Job, Placement, SimView
from .common import deadline_of, place

__all__ = ["EDF", "DeadlineFIFO", "WholeCluster", "WholeClusterPlacement"]


class WholeClusterPlacement(PlacementPolicy):
    """Every free GPU of an empty cluster (as many as the job can use), else nothing: with a strict order
    (``preemptive=False``, ``backfill=False``) the head of the queue starts alone once the cluster is empty."""

    name = "whole-cluster"
    elastic = True

    def find(self, job: Job, free, view: SimView) -> Placement | None:
        cs = view.cluster
        if cs.busy_gpus or int(free.sum()) != cs.total_gpus:  # something runs, or this decision started a job
            return None
        got = place(free, min(cs.total_gpus, int(getattr(job.spec, "max_gpus", 1 << 30))))
        return None if got is None else Placement.of(got)


class _Order(SchedulingPolicy):
    """A strict order by a fixed key; Blox's anti-starvation bump is off (paper 003's baselines have none)."""

    keys_change = "never"

    def __init__(self) -> None:
        super().__init__(starvation_s=math.inf)


class _DeadlineKey(_Order):
    name = "edf"
    keys_change = "never"

    def key(self, job: Job, now: float):
        return deadline_of(job)


class _ArrivalKey(_Order):
    name = "deadline-fifo"
    keys_change = "never"

    def key(self, job: Job, now: float):
        return job.arrival_s


class WholeCluster(Composed):
    """A strict-order key composed with
    [`WholeClusterPlacement`][optsched.sim.deadline.baselines.WholeClusterPlacement], non-preemptive: the composition of
    the
    simulator's placement walk, not a loop of its own."""

    name = "whole-cluster"
    family = "deadline"
    key_policy: type[SchedulingPolicy] = _Order

    def __init__(self) -> None:
        super().__init__(self.key_policy(), WholeClusterPlacement(preemptive=False, backfill=False))
        self.name = type(self).name


class EDF(WholeCluster):
    """Earliest deadline first, on every GPU of the cluster (paper 003's EDF baseline)."""

    name = "edf"
    key_policy = _DeadlineKey


class DeadlineFIFO(WholeCluster):
    """First in, first out, on every GPU of the cluster (paper 003's FIFO baseline)."""

    name = "deadline-fifo"
    key_policy = _ArrivalKey
