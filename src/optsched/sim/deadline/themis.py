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

import bisect
import math
from typing import Callable, Hashable, Iterable, Iterator, Mapping, Sequence, TypeVar

from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..state import QUEUED, Job, Placement, SimView
from .common import JobTimes, place

__all__ = ["ThemisFTF", "ftf_allocate", "ftf_allocate_lazy", "rho"]

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
        j = _furthest_behind(jobs, cur, stuck)
        if j is None:
            break
        nxt = _next_step(j, alloc[j], cur[j], left, gpus, rho_of, max_gpus)
        if nxt is None:
            stuck.add(j)
            continue
        left -= nxt[0] - alloc[j]
        alloc[j], cur[j] = nxt
    return alloc


def _furthest_behind(jobs: Sequence[K], cur: Mapping[K, float], stuck: set[K]) -> K | None:
    """The job with the largest current rho (the first in order on ties), leaving out ``stuck``; None if none."""
    best = None
    for pos, j in enumerate(jobs):
        if j in stuck:
            continue
        k = (-cur[j], pos)
        if best is None or k < best[0]:
            best = (k, j)
    return None if best is None else best[1]


def _next_step(j: K, has: int, rho_now: float, left: int, gpus: int, rho_of: Callable[[K, int], float],
               max_gpus: Callable[[K], int] | None) -> tuple[int, float] | None:
    """The smallest GPU count above ``has`` (within the job's cap and the ``left`` spare GPUs) that lowers the
    job's rho, with that rho; None if no count does."""
    cap = max_gpus(j) if max_gpus is not None else gpus
    for g in range(has + 1, min(cap, has + left) + 1):
        r = rho_of(j, g)
        if r < rho_now:
            return g, r
    return None


def ftf_allocate_lazy(jobs: Iterable[K], gpus: int, rho_of: Callable[[K, int], float],
                      max_gpus: Callable[[K], int] | None = None) -> dict[K, int]:
    """[`ftf_allocate`][optsched.sim.deadline.themis.ftf_allocate] reading ``jobs`` (an iterable, in order) only
    as far as it needs: a job with no GPU has rho = inf (``rho_of(j, 0)``), so it comes before every job that
    already has some, and the jobs with none come in the order given; once the GPUs run out the rest are never
    read. Same allocation; the jobs left out are absent (not 0). If a job's ``rho_of(j, 0)`` is not inf, the
    rest is read and ``ftf_allocate`` decides.

    ```pycon
    >>> r = lambda j, g: (1.0 if j == "a" else 3.0) / g if g else float("inf")
    >>> ftf_allocate_lazy(iter(["a", "b"]), 4, r), ftf_allocate_lazy(iter(["a", "b", "c", "d", "e"]), 2, r)
    ({'a': 1, 'b': 3}, {'a': 1, 'b': 1})

    ```
    """
    it = iter(jobs)
    seen: list[K] = []
    alloc: dict[K, int] = {}
    cur: dict[K, float] = {}
    left = int(gpus)
    stuck: set[K] = set()
    fresh = True  # jobs may remain unread
    while left > 0:
        j = None
        if fresh:
            j = next(it, None)
            if j is None:
                fresh = False
            else:
                seen.append(j)
                c0 = rho_of(j, 0)
                if c0 != math.inf:  # not the case this shortcut covers: decide eagerly, as ftf_allocate
                    full = ftf_allocate([*seen, *it], gpus, rho_of, max_gpus)
                    return {k: g for k, g in full.items() if g}
                alloc[j], cur[j] = 0, c0
        if j is None:
            j = _furthest_behind(seen, cur, stuck)
            if j is None:
                break
        nxt = _next_step(j, alloc[j], cur[j], left, gpus, rho_of, max_gpus)
        if nxt is None:
            stuck.add(j)
            continue
        left -= nxt[0] - alloc[j]
        alloc[j], cur[j] = nxt
    return {k: g for k, g in alloc.items() if g}


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
        # the waiting jobs in arrival order, kept across decisions (a job leaves when it starts; entries of jobs
        # no longer waiting are skipped and dropped from the front); resynchronised from the view when its
        # count of active jobs disagrees (a run this policy joined midway) or after an outside decision
        self._queue: list[Job] = []
        self._head = 0
        self._known = 0
        self._sync = True

    def on_admit(self, jobs: Sequence[Job], view: SimView) -> None:
        q = self._queue
        for j in sorted(jobs, key=_arrival):
            if self._head < len(q) and _arrival(j) < _arrival(q[-1]):
                bisect.insort(q, j, lo=self._head, key=_arrival)
            else:
                q.append(j)
        self._known += len(jobs)

    def on_completion(self, job: Job, view: SimView) -> None:
        self._known -= 1

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        if not own:
            self._sync = True

    def _waiting(self, view: SimView) -> Iterator[Job]:
        """The waiting jobs in arrival order (the order of ``sorted(queued, key=(arrival_s, index))``)."""
        active = view.jobs.active
        if self._sync or self._known != len(active):
            self._queue = sorted((j for j in active.values() if j.status == QUEUED), key=_arrival)
            self._head, self._known, self._sync = 0, len(active), False
        q = self._queue
        while self._head < len(q) and q[self._head].status != QUEUED:
            self._head += 1
        if self._head > 1024 and 2 * self._head > len(q):
            del q[:self._head]
            self._head = 0
        return (j for j in q[self._head:] if j.status == QUEUED)

    def decide(self, view: SimView) -> Decision:
        d = Decision()
        cs = view.cluster
        if self.batch and cs.busy_gpus > 0:  # a job runs (a running job holds GPUs): the batch is not over
            return d
        waiting = self._waiting(view)
        total = int(cs.free.sum())
        if total == 0:
            return d
        now = view.now
        node = int(cs.max_capacity)
        share = max(1, cs.total_gpus // max(1, len(view.jobs.active)))
        by_id: dict[str, Job] = {}
        times: dict[str, JobTimes] = {}
        ideal: dict[str, float] = {}

        def ids() -> Iterator[str]:
            for j in waiting:
                jt = JobTimes.of(j, view.perf, now)
                by_id[j.id], times[j.id] = j, jt
                # T_independent: the job's whole work on its 1/N share of the cluster (Themis counts it from
                # arrival)
                ideal[j.id] = jt.with_work(j.iterations).run_time_s(share, cross=share > node)
                yield j.id

        alloc = ftf_allocate_lazy(
            ids(), total,
            lambda jid, g: rho(times[jid], g, elapsed_s=now - by_id[jid].arrival_s, ideal_s=ideal[jid],
                               node_gpus=node),
            lambda jid: times[jid].max_gpus)
        if not alloc:
            return d
        b = DecisionBuilder(view, elastic=True)
        for jid in sorted(alloc, key=lambda k: (-alloc[k], by_id[k].arrival_s, by_id[k].index)):
            got = place(b.free, alloc[jid])
            if got is None:  # pragma: no cover - the counts add up to the free GPUs
                continue
            b.launch(by_id[jid], Placement.of(got))
        return b.build()


def _arrival(job: Job) -> tuple[float, int]:
    return job.arrival_s, job.index
