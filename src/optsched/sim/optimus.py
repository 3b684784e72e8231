"""Optimus (Peng et al., EuroSys 2018) as Blox composes it: GPUs handed out by marginal gain, SRTF-ordered.

Rules (``docs/algorithms/optimus.md`` has the readings and what Blox's code does instead):

* **When.** A new allocation is computed when the set of active jobs changes (an admission or a completion);
  between those events the allocation stands (rounds without an event are skipped), so jobs are not restarted
  round after round.
* **Order.** Active jobs sorted by estimated remaining time on their requested GPUs (Blox's Optimus uses this
  oracle order, as SRTF does; Optimus itself estimates it from a fitted loss curve).
* **Allocation.** One GPU to each job in that order while GPUs remain (Optimus's starvation guard, and Blox's
  "assign one GPU to each job in expected convergence order"); then, one GPU at a time, the job whose estimated
  remaining time drops most by one more GPU (Optimus's marginal gain: reduction of the estimated completion time
  per unit of resource) gets it, until the GPUs run out or no job gains. A job holds at most ``max_gpus`` GPUs
  (default: the larger of its request and a server, so that it can stay on one server).
* **Estimates** come from the run's performance model at hypothetical consolidated placements: Optimus is meant
  for a model whose speed depends on the GPUs held (``perf="hetero"``: [`HeteroPerf`][optsched.perf.hetero.HeteroPerf],
  ``scales_with_gpus``). Under a model without that (the constant model: a job is as fast on one GPU as on the
  four it asked for) it cannot estimate any gain, and a job shrunk to one GPU would run at full speed for free:
  there every job gets exactly its request, in the same order while GPUs remain (the first job that does not fit
  is skipped), i.e. preemptive SRTF with backfilling. One GPU type only (Optimus has no types).
* **Placement** (Optimus: fewest servers): jobs keeping their GPU count keep their GPUs; the others (restarted,
  a change of count is a suspend + resume) are placed largest first on one server (best fit), else on whole
  servers, else on the first free GPUs.

```pycon
>>> from optsched.sim import simulate, Workload, WorkloadJob
>>> wl = Workload((WorkloadJob("a", 0, 1, 7200, 1.0, model="ResNet-50/ImageNet"),))
>>> r = simulate(wl, servers=1, gpus_per_server=4, scheduler="optimus", perf="hetero")
>>> r.jobs["completion_s"].tolist()          # four GPUs, speed-up 4 / (1 + 3 x 0.05) = 3.478
[2070.0]

```
"""

from __future__ import annotations

import heapq
import math

from ..errors import InstanceError
from .base import Decision, DecisionBuilder, SchedulerPlacer
from .hetero.placement import place_on_type, probe_placement
from .state import RUNNING, Job, SimView

__all__ = ["Optimus", "marginal_gain_allocation"]


def marginal_gain_allocation(jobs: list, gpus: int, remaining_s, cap, start=None) -> dict:
    """GPU counts by Optimus's greedy: ``start(job)`` GPUs (default 1) to each job in the given order while they
    fit, then GPU after GPU to the job whose ``remaining_s(job, g) - remaining_s(job, g + 1)`` is largest (ties:
    earlier in the order), while it is positive and the job is below ``cap(job)``.

    ```pycon
    >>> rem = {"a": [None, 8.0, 4.0, 3.0], "b": [None, 6.0, 5.0, 4.5]}
    >>> marginal_gain_allocation(["a", "b"], 3, lambda j, g: rem[j][g], lambda j: 3)
    {'a': 2, 'b': 1}

    ```
    """
    alloc: dict = {}
    left = int(gpus)
    for j in jobs:
        g0 = 1 if start is None else int(start(j))
        if g0 <= left:
            alloc[j] = g0
            left -= g0
        if left == 0:
            break
    heap = []
    for pos, j in enumerate(jobs):
        if j in alloc and cap(j) > alloc[j]:
            g = alloc[j]
            heap.append((-(remaining_s(j, g) - remaining_s(j, g + 1)), pos, j))
    heapq.heapify(heap)
    while left > 0 and heap:
        neg, pos, j = heapq.heappop(heap)
        if not -neg > 0:
            break
        alloc[j] += 1
        left -= 1
        g = alloc[j]
        if g < cap(j):
            heapq.heappush(heap, (-(remaining_s(j, g) - remaining_s(j, g + 1)), pos, j))
    return alloc


class Optimus(SchedulerPlacer):
    """Optimus's marginal-gain GPU allocation with SRTF order (module docstring)."""

    name = "optimus"
    elastic = True

    def __init__(self, max_gpus: int | None = None):
        if max_gpus is not None and (isinstance(max_gpus, bool) or not isinstance(max_gpus, int) or max_gpus < 1):
            raise InstanceError(f"must be a positive integer or None, got {max_gpus!r}", field="max_gpus")
        self.max_gpus = max_gpus
        self._dirty = True
        # job id -> {GPUs: seconds per iteration at the probe placement}: a model reads only a job's static
        # attributes and the placement (optsched.perf.base), so a job's times hold for the whole run
        self._times: dict[str, dict[int, float]] = {}
        self._for: tuple[int, int] | None = None  # (id(perf), id(cluster state)) the times were computed for

    def on_admit(self, jobs, view: SimView) -> None:
        self._dirty = True

    def on_completion(self, job: Job, view: SimView) -> None:
        self._dirty = True
        self._times.pop(job.id, None)

    def idle_until(self, view: SimView) -> float:
        return view.now if self._dirty else math.inf

    def decide(self, view: SimView) -> Decision:
        cs, perf, now = view.cluster, view.perf, view.now
        if cs.typed:
            raise InstanceError("Optimus allocates GPUs of one type; this cluster has " + ", ".join(cs.types),
                                field="cluster")
        if not self._dirty:
            return Decision()
        self._dirty = False
        jobs = list(view.jobs.active.values())
        if not jobs:
            return Decision()
        if self._for != (id(perf), id(cs)):
            self._times, self._for = {}, (id(perf), id(cs))
        times = self._times

        def it(j: Job, g: int) -> float:
            per = times.get(j.id)
            if per is None:
                per = times[j.id] = {}
            v = per.get(g)
            if v is None:
                v = per[g] = float(perf.alone_time_s(j, probe_placement(cs, 0, g)))
            return v

        rem = {j.id: j.remaining_iterations(now) for j in jobs}
        by_id = {j.id: j for j in jobs}
        order = sorted(jobs, key=lambda j: (rem[j.id] * it(j, j.gpus), j.arrival_s, j.index))
        total = cs.total_gpus

        scaling = bool(getattr(perf, "scales_with_gpus", False))
        if scaling:
            def cap(jid: str) -> int:
                return min(total, self.max_gpus if self.max_gpus is not None else max(by_id[jid].gpus,
                                                                                        cs.max_capacity))

            alloc = marginal_gain_allocation([j.id for j in order], total,
                                             lambda jid, g: rem[jid] * it(by_id[jid], g), cap)
        else:
            # every job its request, in order while GPUs remain (marginal_gain_allocation with start = cap =
            # the request: no job can gain a GPU, so its second phase does nothing)
            alloc = {}
            left = total
            for j in order:
                if j.gpus <= left:
                    alloc[j.id] = j.gpus
                    left -= j.gpus
                if left == 0:
                    break
        b = DecisionBuilder(view, elastic=True)
        for j in jobs:
            if j.status == RUNNING and j.placement is not None and alloc.get(j.id, 0) != j.held_gpus:
                b.preempt(j)
        gone = {j.id for j in b.decision.preempt}
        todo = [by_id[jid] for jid in alloc if not (by_id[jid].status == RUNNING and jid not in gone)]
        for j in sorted(todo, key=lambda j: -alloc[j.id]):
            pl = place_on_type(cs, b.free, 0, alloc[j.id])
            if pl is None:  # pragma: no cover - the counts add up to at most the cluster
                continue
            b.launch(j, pl)
        return b.build()
