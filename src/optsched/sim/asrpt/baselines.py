"""The baselines of paper 001's evaluation (section V-A-1-d) as online policies: one non-preemptive priority
order with Heavy-Edge mapping on SelectMost servers [R11], strict (SPJF, SPWF) or work-conserving (WCS-*).

==================  ==========================================================================================
``spjf``            shortest predicted job (n~_i alpha~_i^min) first, strict order (MLaaS)
``spwf``            shortest predicted workload (g_i n~_i alpha~_i^min) first, strict order (Tiresias)
``wcs-duration``    work-conserving by predicted duration: start every job that fits, in that order
``wcs-workload``    work-conserving by predicted workload
``wcs-subtime``     work-conserving by submission time
==================  ==========================================================================================

>>> from optsched.sim import Workload, WorkloadJob, simulate
>>> wl = Workload((WorkloadJob("a", 0, 2, 10, 1.0, predicted_iterations=10),
...                WorkloadJob("b", 0, 1, 4, 1.0, predicted_iterations=4)))
>>> r = simulate(wl, servers=1, gpus_per_server=2, scheduler="spjf", mode="event")
>>> [(j.id, j.first_start_s) for j in r.job_objects]     # b is shorter: first; a waits for both GPUs
[('a', 4.0), ('b', 0.0)]
"""

from __future__ import annotations

import heapq
from typing import Any

from ..base import Decision, DecisionBuilder
from ..state import Job, SimView
from .predicting import PredictingPolicy, select_servers

__all__ = ["OrderedPolicy", "SPJF", "SPWF", "WCSDuration", "WCSSubTime", "WCSWorkload"]


class OrderedPolicy(PredictingPolicy):
    """A non-preemptive priority order with Heavy-Edge mapping on SelectMost servers [R11].

    ``strict=True``: start jobs in order while the head fits, then stop (SPJF, SPWF: "if the shortest job does
    not fit, it will not schedule longer jobs", paper l. 282). ``strict=False``: work-conserving, start every
    job that fits, in order (WCS, l. 265). Ties: arrival time, then workload position.
    """

    name = "ordered"
    strict = True

    def __init__(self, predictor: Any = "workload", seed: int | None = 0, nic_gbps: float | None = None,
                 intra_gbs: float | None = None):
        super().__init__(predictor, seed, nic_gbps, intra_gbs)
        self._heaps: dict[int, list] = {}

    def key(self, job: Job) -> float:
        raise NotImplementedError

    def on_admit(self, jobs, view) -> None:
        super().on_admit(jobs, view)
        for j in jobs:
            h = self._heaps.setdefault(0 if self.strict else j.gpus, [])
            heapq.heappush(h, (self.key(j), j.arrival_s, j.index, j))

    def _forget(self, ids: set[str]) -> None:
        for g, h in self._heaps.items():
            if any(e[3].id in ids for e in h):
                self._heaps[g] = [e for e in h if e[3].id not in ids]
                heapq.heapify(self._heaps[g])

    def _requeue(self, job: Job) -> None:
        heapq.heappush(self._heaps.setdefault(0 if self.strict else job.gpus, []),
                       (self.key(job), job.arrival_s, job.index, job))

    def decide(self, view: SimView) -> Decision:
        self._setup(view)
        b = DecisionBuilder(view)
        free = b.free  # the builder's: every launch below updates it
        total_free = b.free_total
        heaps = self._heaps
        while True:
            if self.strict:
                h = heaps.get(0)
                if not h or h[0][3].gpus > total_free:
                    break
            else:  # the best head among the demand classes that fit
                best = None
                for g, hh in heaps.items():
                    if hh and g <= total_free and (best is None or hh[0][:3] < heaps[best][0][:3]):
                        best = g
                if best is None:
                    break
                h = heaps[best]
            job = heapq.heappop(h)[3]
            pl, a = self.mapper.place(job, select_servers(free, job.gpus, True))
            self._launch(b, job, pl, a)
            total_free -= job.gpus
        return b.build()


class SPJF(OrderedPolicy):
    """Shortest predicted job first (MLaaS, paper l. 265 (1)), strict order."""

    name = "spjf"
    strict = True

    def key(self, job):
        return self.predicted_duration_s(job)


class SPWF(OrderedPolicy):
    """Shortest predicted workload (duration x GPUs) first (Tiresias, l. 265 (2)), strict order."""

    name = "spwf"
    strict = True

    def key(self, job):
        return self.predicted_duration_s(job) * job.gpus


class WCSDuration(OrderedPolicy):
    """Work-conserving by predicted duration (l. 265 (3))."""

    name = "wcs-duration"
    strict = False

    def key(self, job):
        return self.predicted_duration_s(job)


class WCSWorkload(OrderedPolicy):
    """Work-conserving by predicted workload (l. 265 (4))."""

    name = "wcs-workload"
    strict = False

    def key(self, job):
        return self.predicted_duration_s(job) * job.gpus


class WCSSubTime(OrderedPolicy):
    """Work-conserving by submission time (l. 265 (5))."""

    name = "wcs-subtime"
    strict = False

    def key(self, job):
        return job.arrival_s


