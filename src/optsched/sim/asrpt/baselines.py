"""The baselines of paper 001's evaluation (section V-A-1-d) as online policies: one non-preemptive priority
order with Heavy-Edge mapping on SelectMost servers [R11], strict (SPJF, SPWF) or work-conserving (WCS-*). Each is
the simulator's composition ([`Composed`][optsched.sim.base.Composed]): a fixed key from the predictions and a
placement (SelectMost + Heavy-Edge), non-preemptive, without (strict) or with (work-conserving) backfilling.

==================  ==========================================================================================
``spjf``            shortest predicted job (n~_i alpha~_i^min) first, strict order (MLaaS)
``spwf``            shortest predicted workload (g_i n~_i alpha~_i^min) first, strict order (Tiresias)
``wcs-duration``    work-conserving by predicted duration: start every job that fits, in that order
``wcs-workload``    work-conserving by predicted workload
``wcs-subtime``     work-conserving by submission time
==================  ==========================================================================================

```pycon
>>> from optsched.sim import Workload, WorkloadJob, simulate
>>> wl = Workload((WorkloadJob("a", 0, 2, 10, 1.0, predicted_iterations=10),
...                WorkloadJob("b", 0, 1, 4, 1.0, predicted_iterations=4)))
>>> r = simulate(wl, servers=1, gpus_per_server=2, scheduler="spjf", mode="event")
>>> [(j.id, j.first_start_s) for j in r.job_objects]     # b is shorter: first; a waits for both GPUs
[('a', 4.0), ('b', 0.0)]

```
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..base import Composed, PlacementPolicy, SchedulingPolicy
from ..state import Job, Placement, SimView
from .predicting import Predictions, select_servers

__all__ = ["OrderedPolicy", "PredictedOrder", "SPJF", "SPWF", "SelectMostHeavyEdge", "WCSDuration", "WCSSubTime",
           "WCSWorkload"]

#: the order's key of a job, by name
KEYS = ("duration", "workload", "subtime")


class PredictedOrder(Predictions, SchedulingPolicy):
    """A fixed key from the predictions (made once, at admission): ``duration`` n~_i alpha~_i^min, ``workload``
    that times g_i, or ``subtime`` the arrival; no anti-starvation bump (paper 001's baselines have none)."""

    name = "predicted-order"
    keys_change = "never"

    def __init__(self, by: str = "duration", predictor: Any = "workload", seed: int | None = 0,
                 nic_gbps: float | None = None, intra_gbs: float | None = None):
        super().__init__(starvation_s=math.inf)
        if by not in KEYS:
            raise ValueError(f"by must be one of {KEYS}, got {by!r}")  # pragma: no cover - set by the classes
        self.by = by
        self._init_predictions(predictor, seed, nic_gbps, intra_gbs)

    def key(self, job: Job, now: float) -> float:
        if self.by == "subtime":
            return job.arrival_s
        d = self.predicted_duration_s(job)
        return d * job.gpus if self.by == "workload" else d


class SelectMostHeavyEdge(PlacementPolicy):
    """SelectMost servers and Heavy-Edge mapping [R11], with the mapper and notes of ``order`` (its predictions)."""

    name = "select-most-heavy-edge"
    fit_by_size = True  # SelectMost finds GPUs for a job exactly when enough are free

    def __init__(self, order: PredictedOrder, preemptive: bool = False, backfill: bool = False):
        super().__init__(preemptive, backfill)
        self.order = order

    def find(self, job: Job, free: np.ndarray, view: SimView) -> Placement | None:
        o = self.order
        pl, a = o.mapper.place(job, select_servers(free, job.gpus, True))
        # a non-preemptive walk asks only for the job it launches next: note its mapping there
        o._note(job, alpha_s=a)
        o.start_order.append(job.id)
        return pl


class OrderedPolicy(Composed):
    """A non-preemptive priority order with Heavy-Edge mapping on SelectMost servers [R11]: the composition of
    [`PredictedOrder`][optsched.sim.asrpt.baselines.PredictedOrder] (key ``by``) and
    [`SelectMostHeavyEdge`][optsched.sim.asrpt.baselines.SelectMostHeavyEdge].

    ``strict = True``: start jobs in order while the head fits, then stop (SPJF, SPWF: "if the shortest job does
    not fit, it will not schedule longer jobs", paper l. 282). ``strict = False``: work-conserving, start every
    job that fits, in order (WCS, l. 265). Ties: arrival time, then workload position.
    """

    name = "ordered"
    family = "a-srpt"
    strict = True
    by = "duration"

    def __init__(self, predictor: Any = "workload", seed: int | None = 0, nic_gbps: float | None = None,
                 intra_gbs: float | None = None):
        order = PredictedOrder(self.by, predictor, seed, nic_gbps, intra_gbs)
        super().__init__(order, SelectMostHeavyEdge(order, preemptive=False, backfill=not self.strict))
        self.name = type(self).name
        self.predictor, self.seed, self.nic_gbps, self.intra_gbs = predictor, order.seed, nic_gbps, intra_gbs

    @property
    def records(self) -> dict[str, dict[str, Any]]:
        """What the order noted per job (predictions, mapped alpha), columns of the run's per-job table."""
        assert isinstance(self.scheduling, PredictedOrder)
        return self.scheduling.records

    @property
    def start_order(self) -> list[str]:
        assert isinstance(self.scheduling, PredictedOrder)
        return self.scheduling.start_order


class SPJF(OrderedPolicy):
    """Shortest predicted job first (MLaaS, paper l. 265 (1)), strict order."""

    name = "spjf"
    strict = True
    by = "duration"


class SPWF(OrderedPolicy):
    """Shortest predicted workload (duration x GPUs) first (Tiresias, l. 265 (2)), strict order."""

    name = "spwf"
    strict = True
    by = "workload"


class WCSDuration(OrderedPolicy):
    """Work-conserving by predicted duration (l. 265 (3))."""

    name = "wcs-duration"
    strict = False
    by = "duration"


class WCSWorkload(OrderedPolicy):
    """Work-conserving by predicted workload (l. 265 (4))."""

    name = "wcs-workload"
    strict = False
    by = "workload"


class WCSSubTime(OrderedPolicy):
    """Work-conserving by submission time (l. 265 (5))."""

    name = "wcs-subtime"
    strict = False
    by = "subtime"
