"""Paper 003's EDF and FIFO baselines (section 4): the head job of the queue gets *all* of the cluster's GPUs.

EDF picks the waiting job with the earliest deadline [36], FIFO the earliest arrival; either starts it on every
GPU of the cluster (across all nodes, B_inter) once the cluster is empty, and nothing else runs beside it (the
paper's Fig. 12: their utilisation stays at its maximum while jobs wait). A job whose dataset cannot feed a
batch to every GPU gets as many GPUs as it can use. Jobs are never preempted. Ties: arrival, then workload
order. Named ``edf`` and ``deadline-fifo`` (``fifo`` is Blox's FIFO of the simulator, which does not choose GPU
counts).

>>> from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster
>>> from optsched.sim import simulate
>>> wl = DeadlineWorkload(paper_cluster(2, 2), (DeadlineJob("a", "TSN", 0, 1.5, 2),
...                                              DeadlineJob("b", "TSN", 1, 0.5, 1)))
>>> r = simulate(wl, scheduler="edf").jobs
>>> r["first_start_s"].tolist() == [0.0, r["completion_s"][0]], bool(r["attained_gpu_s"][1] > 0)
(True, True)
"""

from __future__ import annotations

from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..state import QUEUED, RUNNING, Job, Placement, SimView
from .common import deadline_of, place

__all__ = ["EDF", "DeadlineFIFO", "WholeCluster"]


class WholeCluster(SchedulerPlacer):
    """Start the head of the queue (by :meth:`key`) on every GPU once the cluster is empty."""

    name = "whole-cluster"
    family = "deadline"
    elastic = True

    def key(self, job: Job):
        raise NotImplementedError

    def decide(self, view: SimView) -> Decision:
        d = Decision()
        jobs = view.jobs.active.values()
        if any(j.status == RUNNING for j in jobs):
            return d
        waiting = [j for j in jobs if j.status == QUEUED]
        if not waiting:
            return d
        head = min(waiting, key=lambda j: (self.key(j), j.arrival_s, j.index))
        b = DecisionBuilder(view, elastic=True)
        n = min(b.free_total, int(getattr(head.spec, "max_gpus", 1 << 30)))
        got = place(b.free, n)
        assert got is not None  # the cluster is empty
        b.launch(head, Placement.of(got))
        return b.build()


class EDF(WholeCluster):
    """Earliest deadline first, on every GPU of the cluster (paper 003's EDF baseline)."""

    name = "edf"

    def key(self, job: Job):
        return deadline_of(job)


class DeadlineFIFO(WholeCluster):
    """First in, first out, on every GPU of the cluster (paper 003's FIFO baseline)."""

    name = "deadline-fifo"

    def key(self, job: Job):
        return job.arrival_s
