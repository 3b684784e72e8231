"""The fixed-reservation ElasticFlow-style policy (``elasticflow-fixed``): admission control with guaranteed
deadlines, one reservation per job, leftovers shared. ElasticFlow as its paper describes it (re-planning every
admitted job at each arrival) is ``elasticflow`` ([`.elasticflow`][optsched.sim.deadline.elasticflow]).

ElasticFlow (Gu et al., ASPLOS 2023) takes jobs with a deadline and no GPU count, admits a job only if every
admitted deadline can still be met, gives each admitted job the fewest GPUs that meet its deadline (its
*minimum satisfactory share*) and lends the GPUs left over to the jobs that gain most from them, rescaling jobs
elastically. Its public artifact (pkusys/ElasticFlow, ``scheduler.py``) plans on a profile of future free GPUs
(``future_free_gpus``), re-plans every admitted job in deadline order at each arrival
(``estimate_all_jobs``), declines the new job when that fails (``ef_sim_jobs_access_control``), hands free
GPUs out by marginal GPU-time (``allocate_free_gpus``) and uses power-of-two counts on a buddy allocator. Our
version keeps the idea and makes the guarantee provable in our model, with these simplifications (also in
``docs/algorithms/drs.md``):

* **Reservations.** An admitted job holds a *reservation* (g GPUs on [s, e)) in a profile of reserved GPUs over
  future time, kept by the admission policy
  ([`ElasticFlowFixedAdmission.reservations`][optsched.sim.deadline.elasticflow_fixed.ElasticFlowFixedAdmission.reservations]).
  A new job (in arrival order) gets the fewest GPUs g for which some start s in {now} U {reservation ends}
  leaves g GPUs unreserved on [s, s + T_run(g)) and ends by its deadline; counts no faster than a smaller
  count are skipped. No such g: the job is *declined* (dropped: it never runs, and misses its deadline).
  Admitted reservations are never re-planned (ElasticFlow re-plans them all in deadline order: ``elasticflow``;
  fixed reservations keep the proof short, see below).
* **Worst-case bandwidth.** T_run(g) of a reservation is the performance model's time across nodes for every
  g >= 2 (B_inter for the ring model: the job may end up split); a placement on one node is only faster (true
  of the ring and constant models, the ones this guarantee is stated for).
* **Leftovers.** At each decision the jobs whose reservation has begun get their g GPUs; GPUs left over start
  admitted jobs before their reservation (earliest deadline first, up to g), then go to running jobs by the
  largest gain in batches/s per GPU, each step to the next count that is faster (worst-case bandwidth). Lent
  GPUs are taken back (a job shrinks to its g, or a job running early stops) when a reservation needs them.
  Any count, not only powers of two.
* **Guarantee.** Reservations never overlap beyond the cluster's GPUs (admission checks it), so at every
  instant the reserved jobs get their g GPUs; a job holding more than g runs at least as fast as on g
  (leftovers only add faster counts), and a job started early has done extra work. So every admitted job
  finishes by its reservation's end, hence by its deadline, provided moves cost nothing (``migration_s`` and
  ``restore_s`` of the simulator at 0, the default; a rescaling is a migration to another GPU count, counted
  in ``migrations``). ``tests/test_deadline_policies.py`` checks it.

Jobs admitted by another admission policy (no reservation) are run best effort on leftovers (earliest deadline
first, one GPU each, then leftovers). Use ``scheduler="elasticflow-fixed", admission="elasticflow-fixed"``
(``optsched.simulate(wl, scheduler="elasticflow-fixed")`` does: the policy names its admission).

```pycon
>>> from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster
>>> from optsched.sim import simulate
>>> wl = DeadlineWorkload(paper_cluster(1, 2), (DeadlineJob("a", "ResNet-50", 0, 0.5, 3),
...                                              DeadlineJob("b", "ResNet-50", 0, 0.5, 3),
...                                              DeadlineJob("c", "ResNet-50", 0, 1.0, 3)))
>>> run = simulate(wl, scheduler="elasticflow-fixed")
>>> run.summary["declined"], run.summary["deadlines_met"]
(2, 1)

```
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any, Sequence

from ...problems.deadline import DEADLINE_TOL_S
from ..base import AdmissionPolicy, Decision, DecisionBuilder, SchedulerPlacer
from ..state import QUEUED, RUNNING, Job, SimView
from .common import JobTimes, deadline_of, deadline_order, grown, place, placement_of, shrunk

__all__ = ["ElasticFlowFixed", "ElasticFlowFixedAdmission", "Reservation", "apply_targets", "leftovers",
           "reservation_of", "reserve"]


@dataclass(frozen=True)
class Reservation:
    """``gpus`` GPUs reserved for a job on [``start_s``, ``end_s``)."""

    gpus: int
    start_s: float
    end_s: float


def _worst_time(jt: JobTimes, g: int) -> float:
    return jt.run_time_s(g, cross=g > 1)


def _peak(profile: Sequence[Reservation], a: float, b: float) -> int:
    """Most GPUs reserved at any instant of [a, b)."""
    points = [a] + [r.start_s for r in profile if a < r.start_s < b]
    return max((sum(r.gpus for r in profile if r.start_s <= t < r.end_s) for t in points), default=0)


def reserve(jt: JobTimes, deadline_s: float, now: float, profile: Sequence[Reservation],
            total_gpus: int) -> Reservation | None:
    """The fewest GPUs (and, for them, the earliest start in {now} U {ends of reservations}) with which the job
    fits beside ``profile`` and ends by ``deadline_s`` at worst-case bandwidth; None if there is none.

    ```pycon
    >>> jt = JobTimes(lambda n, cross: 1.0 / n, 100.0)     # 100 s on one GPU, perfect scaling
    >>> reserve(jt, 60.0, 0.0, [Reservation(2, 0.0, 30.0)], 4)     # 2 GPUs free now: enough
    Reservation(gpus=2, start_s=0.0, end_s=50.0)
    >>> reserve(jt, 60.0, 0.0, [Reservation(3, 0.0, 30.0)], 4)     # 1 free now: 4 GPUs from t = 30
    Reservation(gpus=4, start_s=30.0, end_s=55.0)
    >>> reserve(jt, 50.0, 0.0, [Reservation(3, 0.0, 30.0)], 4) is None
    True

    ```
    """
    starts = sorted({now, *(r.end_s for r in profile if r.end_s > now)})
    fastest = 0.0
    for g in range(1, min(total_gpus, jt.max_gpus) + 1):
        dur = _worst_time(jt, g)
        speed = 1.0 / dur if dur > 0 else math.inf
        if speed <= fastest:
            continue  # no faster than a smaller count: it cannot meet a deadline the smaller one missed
        fastest = speed
        for s in starts:
            if s + dur > deadline_s:
                break
            if _peak(profile, s, s + dur) + g <= total_gpus:
                return Reservation(g, s, s + dur)
    return None


def _next_step(jt: JobTimes, g: int, limit: int) -> tuple[float, int] | None:
    """(gain, g2): the next count g2 in (g, limit] faster than g at worst-case bandwidth and its gain in
    batches/s per added GPU; None if there is none. The first faster count and its gain depend on the speeds
    only, not on the limit: memoised per count in ``jt.steps`` (scanned only as far as a limit has asked)."""
    memo = jt.steps.get(g)
    if memo is None or (not memo[1] and memo[0] < limit):
        base = jt.speed(g, cross=g > 1)
        g2, gain = 0, 0.0
        for c in range(g + 1 if memo is None else memo[0] + 1, limit + 1):
            s2 = jt.speed(c, cross=True)
            if s2 > base:
                g2, gain = c, (s2 - base) / (c - g)
                break
        memo = jt.steps[g] = (limit if not g2 else g2, g2, gain)
    if memo[1] and memo[1] <= limit:
        return memo[2], memo[1]
    return None


def _unit_steps(jt: JobTimes, runs: list[Any], upto: int) -> tuple[list[float], list[int], list[int]]:
    """The table of a shared speed function's unit steps, built for counts below ``upto`` at least (doubling):
    ``neg[c]`` = -(gain of c -> c + 1) when c + 1 is the next faster count of c (c >= 2; what
    [`_next_step`][optsched.sim.deadline.elasticflow_fixed._next_step] gives, the same float), else nan;
    ``up[c]`` (``down[c]``): the end (exclusive) of the block of counts from c on whose steps are all unit steps
    with non-increasing (non-decreasing) gains; ``up[c] == c``: c's step is not a unit step."""
    if runs and len(runs[0]) >= upto:
        return runs[0], runs[1], runs[2]
    n = max(upto, 2 * len(runs[0]) if runs else 64)
    neg: list[float] = runs[0] if runs else [math.nan, math.nan]
    for c in range(len(neg), n):
        base, s2 = jt.speed(c, cross=True), jt.speed(c + 1, cross=True)
        neg.append(-((s2 - base) / 1) if s2 > base else math.nan)
    up, down = list(range(n)), list(range(n))
    for c in range(n - 1, 1, -1):
        x = neg[c]
        if x == x:  # a unit step (not nan)
            nx = neg[c + 1] if c + 1 < n else math.nan
            up[c] = up[c + 1] if x <= nx else c + 1
            down[c] = down[c + 1] if x >= nx else c + 1
    runs[:] = [neg, up, down]
    return neg, up, down


def leftovers(times: dict[Any, JobTimes], target: dict[Any, int], spare: int) -> int:
    """Lend ``spare`` GPUs, one step at a time, to the job with the largest gain in batches/s per GPU, each step
    to its next faster count (worst-case bandwidth), ties to the earlier job of ``times``; updates ``target`` in
    place and returns the GPUs left. A heap of each job's next step: a job whose next step does not fit the GPUs
    left never fits again (they only decrease), so it leaves the heap (O((jobs + steps) log jobs), where
    rescanning every job per step cost O(jobs x steps)); a job's next steps that beat the heap's top are taken
    in one run, without touching the heap, reading each from the job's memo of next steps.

    ```pycon
    >>> times = {"a": JobTimes(lambda n, c: 1.0 / n, 100.0, 3), "b": JobTimes(lambda n, c: 1.0 / n ** 0.5, 100.0)}
    >>> target = {"a": 1, "b": 1}
    >>> leftovers(times, target, 4), target["a"], target["b"]
    (0, 3, 3)

    ```
    """
    import heapq

    heap: list[tuple[float, int, int]] = []
    jobs = list(times)
    for i, j in enumerate(jobs):
        jt = times[j]
        step = _next_step(jt, target[j], min(target[j] + spare, jt.max_gpus))
        if step is not None:
            heap.append((-step[0], i, step[1]))
    heapq.heapify(heap)
    pop, replace = heapq.heappop, heapq.heapreplace
    item = pop(heap) if heap else None
    while spare > 0 and item is not None:
        _, i, g2 = item
        j = jobs[i]
        g = target[j]
        if g2 - g > spare:
            # the scan found g2 with more GPUs free; no count in (g, g + spare] is faster than g, and the
            # spare GPUs only decrease: this job is done
            item = pop(heap) if heap else None
            continue
        jt = times[j]
        steps, cap, runs = jt.steps, jt.max_gpus, jt.runs
        top = heap[0] if heap else None  # unchanged while this job's steps beat it
        while True:  # this job's run of steps: each next step fits (its scan stops at the GPUs left)
            spare -= g2 - g
            g = g2
            limit = g + spare if g + spare < cap else cap
            if runs is not None and g >= 2 and limit > g:
                # the steps g -> g + 1 -> ... that the loop below would take one at a time, at once: within a block
                # of unit steps whose gains do not increase, those beating the heap's top are a prefix (bisect);
                # the limit stays g + spare (or the cap) along the run
                neg, up, down = _unit_steps(jt, runs, limit)
                hi = up[g] if up[g] < limit else limit
                if top is None:
                    p = max(hi, down[g] if down[g] < limit else limit)
                elif neg[g] < top[0] or (neg[g] == top[0] and i < top[1]):  # the first step beats the top
                    # gains that grow from there beat it too; gains that fall: a prefix of them (bisect; a tie
                    # with the top goes to the earlier job)
                    p = down[g] if down[g] < limit else limit
                    if hi > p:
                        p = (bisect.bisect_right if i < top[1] else bisect.bisect_left)(neg, top[0], g, hi)
                else:
                    p = g
                spare -= p - g
                g = p
            memo = steps.get(g)
            if memo is not None and memo[1]:  # _next_step's answer from its memo, without the call
                step = (memo[2], memo[1]) if memo[1] <= limit else None
            else:
                step = _next_step(jt, g, limit)
            if step is None:
                item = pop(heap) if heap else None
                break
            nk, g2 = -step[0], step[1]
            if top is not None and (top[0] < nk or (top[0] == nk and top[1] < i)):
                item = replace(heap, (nk, i, g2))  # the heap's top beats this step: push it, pop the top
                break
        target[j] = g
    return spare


def apply_targets(view: SimView, target: dict[Job, int]) -> Decision:
    """The decision that brings every job of ``target`` to its GPU count: running jobs shrink or stop first
    (their GPUs go back to the pool), then grow (most GPUs first: [`grown`][optsched.sim.deadline.common.grown]),
    then waiting jobs start (most GPUs first, then deadline), one node when it fits, else fragments first.
    Rescalings are ``Decision.migrate``."""
    # the jobs whose count changes, in the order of ``target`` (every other job is left as it is)
    down: list[Job] = []  # running jobs that shrink or stop
    up: list[Job] = []  # running jobs that grow
    start: list[Job] = []  # waiting jobs that start
    for j, g in target.items():
        if j.status == RUNNING:
            pl = j.placement
            assert pl is not None
            if g < pl.gpus:
                down.append(j)
            elif g > pl.gpus:
                up.append(j)
        elif g > 0 and j.status == QUEUED:
            start.append(j)
    if not (down or up or start):
        return Decision()  # every job already holds its count: nothing to do
    b = DecisionBuilder(view, elastic=True)
    for j in down:  # shrink or stop first: their GPUs go back to the pool
        pl = j.placement
        assert pl is not None
        if target[j] == 0:
            b.preempt(j)
        else:
            moved: dict[int, int] = {}  # (the GPUs given back per server: the builder's shift takes them)
            b.migrate(j, shrunk(pl, target[j], moved), _moved=moved)
    for j in sorted(up, key=lambda j: -target[j]):  # stable: most GPUs first, then the order of ``target``
        pl = j.placement
        assert pl is not None
        added: dict[int, int] = {}
        new_pl = grown(pl, target[j], b.free, added)
        if new_pl is None:  # pragma: no cover - the targets add up to at most the cluster
            continue
        b.migrate(j, new_pl, _moved=added)
    cap = view.cluster.max_capacity  # (place skips the single-node search for a count above it)
    for j in sorted(start, key=lambda j: (-target[j], deadline_of(j), j.index)):
        got = place(b.free, target[j], cap)
        if got is None:  # pragma: no cover
            continue
        b.launch(j, placement_of(got))
    return b.build()


def _reservations(view: SimView) -> dict[str, Reservation]:
    """The reservations the run's admission policy (``view.admission``) holds, by job id (none: empty)."""
    return getattr(view.admission, "reservations", {})


def reservation_of(job: Job, view: SimView) -> Reservation | None:
    """The reservation the run's admission policy (``view.admission``) holds for ``job``, if any."""
    return _reservations(view).get(job.id)


class ElasticFlowFixedAdmission(AdmissionPolicy):
    """Admit a job only if a reservation meeting its deadline fits beside the admitted jobs' reservations
    ([`reserve`][optsched.sim.deadline.elasticflow_fixed.reserve]); declined jobs are dropped (listed in
    [`declined`][optsched.sim.deadline.elasticflow_fixed.ElasticFlowFixedAdmission.declined], never run). The
    reservations are its own state
    ([`reservations`][optsched.sim.deadline.elasticflow_fixed.ElasticFlowFixedAdmission.reservations], job id ->
    [`Reservation`][optsched.sim.deadline.elasticflow_fixed.Reservation]), which the scheduler reads through
    ``view.admission``."""

    name = "elasticflow-fixed"

    def __init__(self) -> None:
        self.declined: list[str] = []
        self.reservations: dict[str, Reservation] = {}

    def admit(self, new_jobs: list[Job], view: SimView) -> list[Job]:
        now = view.now
        total = view.cluster.total_gpus
        profile = [r for j in view.jobs.active.values()
                   if (r := self.reservations.get(j.id)) is not None and r.end_s > now]
        out = []
        for j in sorted(new_jobs, key=lambda j: (j.arrival_s, j.index)):
            r = reserve(JobTimes.of(j, view.perf, now), deadline_of(j), now, profile, total)
            if r is None:
                self.declined.append(j.id)
                continue
            self.reservations[j.id] = r
            profile.append(r)
            out.append(j)
        return out


class ElasticFlowFixed(SchedulerPlacer):
    """ElasticFlow-style scheduling with fixed reservations: admitted jobs get their reserved GPUs, leftovers go
    to the jobs that gain most (module docstring; use with admission ``elasticflow-fixed``); rescaling through
    ``Decision.migrate``."""

    name = "elasticflow-fixed"
    elastic = True
    family = "deadline"
    default_admission = "elasticflow-fixed"  # the door pairs it with its admission unless the user names another

    def __init__(self) -> None:
        self._wake = math.inf
        self._jt: dict[str, JobTimes] = {}  # job id -> its times (speeds cached across decisions)

    def _times(self, job: Job, view: SimView) -> JobTimes:
        jt = self._jt.get(job.id)
        if jt is None:
            jt = self._jt[job.id] = JobTimes.of(job, view.perf, view.now)
        return jt

    def on_completion(self, job: Job, view: SimView) -> None:
        self._jt.pop(job.id, None)

    def targets(self, view: SimView) -> dict[Job, int]:
        """The GPU count every active job should hold now."""
        now = view.now
        total = view.cluster.total_gpus
        active = sorted(view.jobs.active.values(), key=deadline_order)
        target: dict[Job, int] = {}
        wake = math.inf
        reservation = _reservations(view).get  # job id -> reservation (reservation_of)
        # a running job a rounding error past its reservation's end (its completion falls a few ulps after a
        # decision at that end, e.g. a round boundary) keeps its GPUs until it completes: preempting it for the
        # reservation that starts now would make it finish a whole run later and miss its deadline
        overrun = {j for j in active if j.status == RUNNING and (r := reservation(j.id)) is not None
                   and now >= r.end_s and j.finish_time() <= now + DEADLINE_TOL_S}
        held = sum(j.held_gpus for j in overrun)
        for j in overrun:
            target[j] = j.held_gpus
            wake = min(wake, j.finish_time())
        for j in active:
            if j in overrun:
                continue
            r = reservation(j.id)
            if r is not None and r.start_s <= now < r.end_s and held + r.gpus <= total:
                target[j] = r.gpus
                held += r.gpus
            else:
                target[j] = 0
                if r is not None and now < r.start_s:
                    wake = min(wake, r.start_s)
        spare = total - held
        # early starts (and a job a few ulps past its reservation's end), earliest deadline first
        for j in active:
            if spare <= 0:
                break
            if target[j] == 0:
                r = reservation(j.id)
                give = min(r.gpus if r is not None else 1, spare)
                target[j] = give
                spare -= give
        # (the leftover steps read the speeds only, never the work left: each job's times as they are)
        times = {j: self._times(j, view) for j in active if target[j] > 0}
        leftovers(times, target, spare)
        self._wake = wake
        return target

    def decide(self, view: SimView) -> Decision:
        return apply_targets(view, self.targets(view))

    def next_wakeup(self, now: float) -> float:
        return self._wake if self._wake > now else math.inf
