"""Themis [37] simplified: finish-time fairness, a general core and paper 003's batch baseline.

Themis (Mahajan et al., NSDI 2020) measures each job's *finish-time fairness* rho = T_shared / T_independent:
the time from its arrival to its finish in the shared cluster over the time it would take on its own 1/N
share of the cluster (N contending jobs); GPUs go to the jobs with the largest rho, in leases, through a
partial auction. Our simplification, written once for every policy set that wants it:

* [`ftf_allocate`][optsched.sim.deadline.themis.ftf_allocate] (the core, no simulator types): GPUs are handed out one
  allocation step at a time to the
  job whose rho is currently the largest (a job with no GPU has rho = inf), moving it to the smallest larger
  GPU count that lowers its rho (the next count may skip values that would not help, e.g. 2 GPUs of a job whose
  communication makes 2 slower than 1); a job no count can help is left as it is; GPUs no job can use stay
  free. No auction, no hidden payments, no leases: the allocation is the greedy max-min of rho, recomputed at
  each decision.
* [`rho`][optsched.sim.deadline.themis.rho] of a job given g GPUs at time ``now``: ``(now - arrival + T_run(g)) /
  T_run(share)``, T_run(g) the
  remaining run time on g GPUs starting now, ``share = max(1, floor(G / N))``.
* [`ThemisFTF`][optsched.sim.deadline.themis.ThemisFTF] (``themis``), paper 003's baseline (section 4: "splits GPUs
  among waiting jobs for
  finish-time fairness and schedules them all at once"): when the cluster is empty, every waiting job is
  offered the whole cluster and [`ftf_allocate`][optsched.sim.deadline.themis.ftf_allocate] splits it; the jobs that got
  GPUs start together and run to
  completion, and the next batch starts when the cluster is empty again (``batch=True``: the reading that
  matches the text's Fig. 12, whose Themis reaches full utilisation only intermittently). ``batch=False``
  splits whatever is free among the waiting jobs at every decision instead. Placement: one node when a node
  has room (best fit), otherwise fragments first; rho is computed with B_intra when the count fits a node
  (Themis knows no topology: documented in ``docs/algorithms/drs.md``).

```pycon
>>> ftf_allocate(["a", "b"], 4, lambda j, g: (1.0 if j == "a" else 3.0) / g if g else float("inf"))
{'a': 1, 'b': 3}

```
"""

from __future__ import annotations

import math
from typing import Callable, Hashable, Sequence, TypeVar

from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..state import QUEUED, RUNNING, Placement, SimView
from .common import JobTimes, place

__all__ = ["ThemisFTF", "ftf_allocate", "rho"]

K = TypeVar("K", bound=Hashable)


def ftf_allocate(jobs: Sequence[K], gpus: int, rho_of: Callable[[K, int], float],
                 max_gpus: Callable[[K], int] | None = None) -> dict[K, int]:
    """Split ``gpus`` GPUs among ``jobs`` by finish-time fairness (module docstring). ``rho_of(job, g)`` is the
    job's rho with g GPUs (inf for g = 0); ``max_gpus(job)`` caps its count. Ties in rho go to the job listed
    first. Returns the GPU count of every job (0 for the jobs left out)."""
    alloc = dict.fromkeys(jobs, 0)
    cur = {j: rho_of(j, 0) for j in jobs}
    left = int(gpus)
    stuck: set[K] = set()
    while left > 0:
        best = None
        for pos, j in enumerate(jobs):
            if j in stuck:
                continue
            k = (-cur[j], pos)
            if best is None or k < best[0]:
                best = (k, j)
        if best is None:
            break
        j = best[1]
        cap = max_gpus(j) if max_gpus is not None else gpus
        nxt = None
        for g in range(alloc[j] + 1, min(cap, alloc[j] + left) + 1):
            r = rho_of(j, g)
            if r < cur[j]:
                nxt = (g, r)
                break
        if nxt is None:
            stuck.add(j)
            continue
        left -= nxt[0] - alloc[j]
        alloc[j], cur[j] = nxt
    return alloc


def rho(jt: JobTimes, g: int, *, elapsed_s: float, ideal_s: float, node_gpus: int) -> float:
    """Finish-time fairness with g GPUs: (elapsed + remaining run time on g GPUs) / ideal (inf for g = 0)."""
    if g <= 0:
        return math.inf
    return (elapsed_s + jt.run_time_s(g, cross=g > node_gpus)) / ideal_s


class ThemisFTF(SchedulerPlacer):
    """Themis simplified (module docstring): finish-time-fair split of the GPUs among the waiting jobs, started
    all at once when the cluster is empty (``batch=True``, paper 003's baseline) or on the free GPUs at every
    decision (``batch=False``). Non-preemptive."""

    name = "themis"
    family = "deadline"
    elastic = True

    def __init__(self, batch: bool = True):
        self.batch = bool(batch)

    def decide(self, view: SimView) -> Decision:
        d = Decision()
        active = list(view.jobs.active.values())
        if self.batch and any(j.status == RUNNING for j in active):
            return d
        waiting = sorted((j for j in active if j.status == QUEUED), key=lambda j: (j.arrival_s, j.index))
        total = int(view.cluster.free.sum())
        if not waiting or total == 0:
            return d
        now = view.now
        cs = view.cluster
        node = int(cs.max_capacity)
        share = max(1, cs.total_gpus // max(1, len(active)))
        by_id = {j.id: j for j in waiting}
        times = {j.id: JobTimes.of(j, view.perf, now) for j in waiting}
        # T_independent: the job's whole work on its 1/N share of the cluster (Themis counts it from arrival)
        ideal = {j.id: times[j.id].with_work(j.iterations).run_time_s(share, cross=share > node) for j in waiting}
        alloc = ftf_allocate(
            [j.id for j in waiting], total,
            lambda jid, g: rho(times[jid], g, elapsed_s=now - by_id[jid].arrival_s, ideal_s=ideal[jid],
                               node_gpus=node),
            lambda jid: times[jid].max_gpus)
        b = DecisionBuilder(view, elastic=True)
        for jid in sorted((k for k, g in alloc.items() if g), key=lambda k: (-alloc[k], by_id[k].arrival_s,
                                                                            by_id[k].index)):
            got = place(b.free, alloc[jid])
            if got is None:  # pragma: no cover - the counts add up to the free GPUs
                continue
            b.launch(by_id[jid], Placement.of(got))
        return b.build()
