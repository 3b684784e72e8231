"""ElasticFlow (Gu et al., NSDI '23) as its paper describes it, and the baselines it compares against by its own
definitions (``docs/algorithms/elasticflow.md``).

ElasticFlow takes jobs with a deadline and no GPU count. Every job's GPU count comes from a *ladder* of allowed
counts (``gpu_counts`` of a format-2 job, else its throughput row's counts, else the powers of two up to its
maximum: the paper's buddy allocation), with the performance model's speed at each (worst-case bandwidth:
across nodes from two GPUs on, as the fixed variant); only counts faster than every smaller one are kept, so a
non-monotone row never makes a job slower.

* **Plan** ([`plan_jobs`][optsched.sim.deadline.elasticflow.plan_jobs]): the deadline jobs, in deadline order,
  each on a profile of the GPUs the earlier ones leave free over future time. A job given *share* g runs, in
  each interval of the profile, on its fastest ladder count not above min(g, free GPUs); its *minimum
  satisfactory share* is the smallest g with which its remaining work ends by its deadline (a binary search: the
  work done grows with g). No such g: the job is *infeasible*. The profile then loses what the job uses, up to
  its planned end. Allocations change over time: a job may run on 2 GPUs now and 8 once an earlier job ends.
* **Admission** ([`ElasticFlowAdmission`][optsched.sim.deadline.elasticflow.ElasticFlowAdmission]): at each
  arrival every admitted job is re-planned *from its remaining work*, with the new job among them; the new job
  is admitted iff it and every job feasible without it are feasible (otherwise declined: it never runs).
  Best-effort jobs (no deadline) are always admitted and only get leftovers.
* **Scheduling** ([`ElasticFlow`][optsched.sim.deadline.elasticflow.ElasticFlow]): at every decision (arrival,
  completion, the next change of a plan) the plan is made again from the remaining work and each job gets its
  planned count now; the GPUs left over go, one step at a time, to the job whose next faster ladder count saves
  the most remaining run time per added GPU (a job holding none first, earliest deadline first), with a heap of
  each job's next step ([`lend`][optsched.sim.deadline.elasticflow.lend]). Rescaling is ``Decision.migrate``;
  its stall is the launch mechanism's ([`RescaleOverhead`][optsched.sim.deadline.elasticflow.RescaleOverhead]
  grows with the GPU count; the default, none, keeps the plan exact).

Baselines, named apart from paper 003's ``edf`` and ``themis``:

* ``edf-elastic``: elastic, preemptive EDF re-planned at every event: each job in deadline order gets its
  largest useful ladder count still free (no admission);
* ``edf-admission``: the same scheduler behind an admission that plans every job that way (share = its largest
  count) and declines a job that would make a feasible job infeasible;
* ``elasticflow-noadmit``: ElasticFlow's planning and leftovers with every job admitted (infeasible jobs get
  leftovers only);
* ``gandiva-ts``: Gandiva-style time slicing: every job on the GPU count it asked for, round robin in slices
  of ``quantum_s`` when jobs wait ([`GandivaTimeSlicing`][optsched.sim.deadline.elasticflow.GandivaTimeSlicing]).

```pycon
>>> from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster
>>> from optsched.sim import simulate
>>> row = ((1, 1.0), (2, 1.8), (4, 3.0))                  # iterations/s on 1, 2, 4 GPUs
>>> jobs = [DeadlineJob(i, "m", 0.0, deadline_at_s=d, iterations=300, batch=8, throughput=row)
...         for i, d in (("a", 200.0), ("b", 320.0), ("c", 90.0))]
>>> run = simulate(DeadlineWorkload(paper_cluster(1, 4), tuple(jobs)), scheduler="elasticflow")
>>> run.summary["deadlines_met"], run.summary["declined"]   # c would need 3.3 iterations/s: declined
(2, 1)

```
"""

from __future__ import annotations

import bisect
import heapq
import math
from typing import Any, Sequence

import numpy as np

from ...problems.deadline import DEADLINE_TOL_S
from ..base import AdmissionPolicy, Decision, DecisionBuilder, LaunchMechanism, SchedulerPlacer
from ..state import QUEUED, RUNNING, Job, Placement, SimView
from .common import deadline_of, deadline_order, hypothetical, place, placement_of, shared_tables
from .elasticflow_fixed import apply_targets

__all__ = ["EDFAdmission", "EDFElastic", "ElasticFlow", "ElasticFlowAdmission", "ElasticFlowNoAdmission",
           "GandivaTimeSlicing", "Ladder", "RescaleOverhead", "lend", "plan_jobs", "plan_now"]


class Ladder:
    """A job's useful GPU counts (ascending, each faster than every smaller one) and their speeds (units of work
    per second).

    ```pycon
    >>> lad = Ladder.of_speeds({1: 1.0, 2: 1.8, 4: 1.5, 8: 2.5})   # 4 GPUs slower than 2: dropped
    >>> lad.counts, lad.best_upto(5), lad.best_upto(0)
    ([1, 2, 8], 1, -1)

    ```
    """

    __slots__ = ("counts", "speeds", "_by_free")

    def __init__(self, counts: list[int], speeds: list[float]):
        self.counts, self.speeds = counts, speeds
        self._by_free: tuple[list[int], list[float]] = ([], [])

    def by_free(self, n: int) -> tuple[list[int], list[float]]:
        """Two lists indexed by a number of free GPUs f (at least ``n + 1`` long): the fastest count not above f
        (0: none) and its speed (0.0: none), the values ``best_upto`` and ``speed_at`` give, read without a
        bisect.

        ```pycon
        >>> Ladder([1, 2, 8], [1.0, 1.8, 2.5]).by_free(9)[0]
        [0, 1, 2, 2, 2, 2, 2, 2, 8, 8]

        ```
        """
        cnt, spd = self._by_free
        if len(cnt) <= n:
            counts, speeds = self.counts, self.speeds
            cnt, spd = [0] * (n + 1), [0.0] * (n + 1)
            for k, c in enumerate(counts):
                if c > n:
                    break
                nxt = counts[k + 1] if k + 1 < len(counts) and counts[k + 1] <= n else n + 1
                cnt[c:nxt] = [c] * (nxt - c)
                spd[c:nxt] = [speeds[k]] * (nxt - c)
            self._by_free = (cnt, spd)
        return cnt, spd

    @classmethod
    def of_speeds(cls, speed: dict[int, float]) -> Ladder:
        counts: list[int] = []
        speeds: list[float] = []
        for n in sorted(speed):
            s = speed[n]
            if s > 0 and (not speeds or s > speeds[-1]):
                counts.append(n)
                speeds.append(s)
        return cls(counts, speeds)

    def best_upto(self, cap: int) -> int:
        """Index of the fastest count not above ``cap`` (-1: none)."""
        return bisect.bisect_right(self.counts, cap) - 1

    def speed_at(self, i: int) -> float:
        return 0.0 if i < 0 else self.speeds[i]


def allowed_counts(job: Job, total: int) -> list[int]:
    """The counts a job may take (module docstring), at most ``total``."""
    spec = job.spec
    given = getattr(spec, "gpu_counts", None)
    row = getattr(spec, "throughput", None)
    cap = min(total, int(getattr(spec, "max_gpus", None) or total))
    if given:
        counts = [c for c in given if c <= cap]
    elif row:
        counts = [n for n, _ in row if n <= total]
    else:
        counts = []
        c = 1
        while c <= cap:
            counts.append(c)
            c *= 2
    return counts


def ladder_of(job: Job, view: SimView, cache: dict[str, Ladder]) -> Ladder:
    """The job's [`Ladder`][optsched.sim.deadline.elasticflow.Ladder] under the run's performance model (cached by
    job id: speeds do not depend on the work left)."""
    lad = cache.get(job.id)
    if lad is None:
        perf = view.perf
        counts = allowed_counts(job, view.cluster.total_gpus)
        shared = shared_tables(job, perf)  # the jobs with one speed function share their ladder per counts
        memo = shared[3] if shared is not None else None
        key = ("ladder", tuple(counts))
        lad = memo.get(key) if memo is not None else None
        if lad is None:
            lad = Ladder.of_speeds({n: 1.0 / perf.alone_time_s(job, hypothetical(n, n > 1)) for n in counts})
            if memo is not None:
                memo[key] = lad
        cache[job.id] = lad
    return lad


def _entry(job: Job, view: SimView, cache: dict[str, Ladder]) -> tuple[Job, Ladder, float]:
    """A job's plan entry without its deadline: (job, its ladder, its remaining work now)."""
    return job, cache.get(job.id) or ladder_of(job, view, cache), job.remaining_iterations(view.now)


# -- the plan ----------------------------------------------------------------------------------------------------
def _finish(lad: Ladder, share: int, work: float, times: list[float], ends: list[float], free: list[int],
            limit: float = math.inf) -> float:
    """When ``work`` ends with share index ``share`` on the profile (intervals [times[k], ends[k]) with free[k]
    GPUs, each interval's end the next one's start; inf: never, or not by ``limit``: an end after ``limit`` may be
    returned as well when ``times[0]`` is after it, which the callers read as "not by ``limit``" all the same).
    Interval by interval, as the job would run: the float operations of the plan, in their order. An interval with
    at least the share's count free runs at the share's speed (no table read); the walk stops after the interval
    that reaches past ``limit``."""
    cap = lad.counts[share]
    top = lad.speeds[share]
    spd = None
    for t0, end, f in zip(times, ends, free):
        if f >= cap:
            s = top
        else:
            if spd is None:
                spd = lad._by_free[1]
                if len(spd) <= cap:
                    spd = lad.by_free(cap)[1]
            s = spd[f]
            if not s:  # no count fits: no work in this interval
                if end > limit:
                    break
                continue
        t = t0 + work / s
        if t <= end:
            return t
        if end > limit:  # the next interval starts after the limit
            break
        work -= s * (end - t0)
    return math.inf


def _take(lad: Ladder, share: int, finish: float, times: list[float], ends: list[float], free: list[int]
          ) -> tuple[int, float]:
    """Remove the job's use from the profile up to ``finish`` (in place); returns (its count now, the time its
    count first changes)."""
    kf = len(times)  # the intervals before the job's end
    if finish < math.inf:
        k = bisect.bisect_right(times, finish) - 1  # times[k] <= finish < times[k + 1]: the interval of its end
        if times[k] < finish:  # split it there
            times.insert(k + 1, finish)
            ends.insert(k, finish)
            free.insert(k + 1, free[k])
            kf = k + 1
        else:
            kf = k
    cap = lad.counts[share]
    if kf > 0 and min(free[:kf]) >= cap:  # its share fits all of them: the loop below, without its branches
        free[:kf] = [f - cap for f in free[:kf]]
        return cap, (times[kf] if kf < len(times) and cap > 0 else math.inf)
    cnt = lad._by_free[0]
    if len(cnt) <= cap:
        cnt = lad.by_free(cap)[0]
    now_count, change = -1, math.inf
    for k in range(kf):
        f = free[k]
        c = cnt[f if f < cap else cap]
        if now_count < 0:
            now_count = c
        elif c != now_count and change == math.inf:
            change = times[k]
        free[k] = f - c
    if kf < len(times) and change == math.inf and now_count > 0:
        change = times[kf]
    return max(now_count, 0), change


def plan_jobs(jobs: Sequence[tuple[Any, Ladder, float, float]], now: float, total: int, share: str = "min"
              ) -> tuple[dict[Any, tuple[int, float]], list[Any]]:
    """Plan ``(key, ladder, remaining work, deadline)`` jobs, in the order given (deadline order), on ``total``
    GPUs from ``now`` (module docstring). ``share``: ``"min"`` (the minimum satisfactory share, ElasticFlow) or
    ``"max"`` (the largest count, EDF's plan). Returns {key: (GPUs now, time that count first changes)} for the
    feasible jobs and the keys of the infeasible ones (they take nothing from the profile).

    ```pycon
    >>> lin = Ladder([1, 2, 4], [1.0, 2.0, 4.0])          # perfect scaling
    >>> plan_jobs([("a", lin, 200.0, 100.0), ("b", lin, 300.0, 125.0), ("c", lin, 100.0, 30.0)], 0.0, 4)
    ({'a': (2, 100.0), 'b': (2, 100.0)}, ['c'])

    ```
    """
    times, ends, free = [now], [math.inf], [total]  # the profile: free[k] GPUs on [times[k], ends[k])
    plans: dict[Any, tuple[int, float]] = {}
    failed: list[Any] = []
    for key, lad, work, deadline in jobs:
        if not lad.counts:
            failed.append(key)
            continue
        limit = deadline + DEADLINE_TOL_S
        if share == "max":
            best = len(lad.counts) - 1
            fin = _finish(lad, best, work, times, ends, free, limit)
            ok = fin <= limit
        else:
            # the smallest share that still ends by the deadline: the smallest count often does (one call),
            # else the largest must, then a binary search between them
            lo, hi = 1, len(lad.counts) - 1
            best, fin = 0, _finish(lad, 0, work, times, ends, free, limit)
            ok = fin <= limit
            if not ok and hi > 0:
                best, fin = hi, _finish(lad, hi, work, times, ends, free, limit)
                ok = fin <= limit
            else:
                lo = hi
            while ok and lo < hi:
                mid = (lo + hi) // 2
                f = _finish(lad, mid, work, times, ends, free, limit)
                if f <= limit:
                    hi, best, fin = mid, mid, f
                else:
                    lo = mid + 1
        if not ok:
            failed.append(key)
            continue
        plans[key] = _take(lad, best, fin, times, ends, free)
    return plans, failed


# the bound on how far a planned end walked interval by interval over the profile (one rounded subtraction, product
# and difference per interval) can be from the end computed in one division, per interval and per second of the
# magnitudes (about 64 units in the last place of a double per interval; _plan_fit's docstring)
_DRIFT = 2.0 ** -47


def _fit_end(cap: int, speed: float, work: float, now: float, room: int, first: float, limit: float, n: int
             ) -> tuple[bool, float, bool] | None:
    """One share tried by ``_plan_fit``: (ends by ``limit``, its end now + work / speed, that end is the walk's
    exactly); None when the share may not fit every interval or the bound cannot decide."""
    if cap > room:
        return None  # an interval may not have its share free: the walk mixes counts
    c = now + work / speed
    if c <= first:  # ends in the first interval: the walk's first step, exactly
        return c <= limit, c, True
    if first > limit:  # the walk stops after the first interval: inf
        return False, math.inf, True
    mg = _DRIFT * (n + 2) * (abs(c) + abs(now))
    if c + mg <= limit:
        return True, c, False
    if c - mg > limit:
        return False, c, False
    return None


def _plan_fit(jobs: Sequence[tuple[Any, Ladder, float, float]], now: float, total: int, share: str
              ) -> tuple[dict[Any, int], list[Any], float] | None:
    """[`plan_now`][optsched.sim.deadline.elasticflow.plan_now] without the profile, when every share it tries
    fits every interval (None when one does not, or when a bound below cannot decide a comparison).

    Then every planned job runs at its share's speed s from ``now`` to its planned end: the profile is
    ``total`` less the shares of the jobs whose end is later, so its least free count is ``total`` less every
    share so far (checked before each share is tried), and the job's count now is its share. The walk's end is
    ``now + work / s`` exactly when it falls in the first interval (before the earliest planned end so far, the
    first interval's end: the walk's first step is that expression); later, it is the interval-by-interval sum,
    mathematically the same value, in floats within ``_DRIFT`` x (intervals + 2) x (|end| + |now|) of it
    (each interval's rounded difference, product and subtraction move the projected end by a few units in the
    last place of the magnitudes involved, all below |end| + |now|; the bound holds 8 times over). Such an end
    is only compared: with the deadline (decided when it is farther than the bound, else None) and with the
    earliest end so far (it must be later by more than the bound, else None), so the counts, the infeasible
    jobs and the earliest end (the decision's wake-up) are those of ``plan_jobs``, bit for bit."""
    counts: dict[Any, int] = {}
    failed: list[Any] = []
    used = 0  # the shares of the planned jobs: every interval has at least total - used free
    first = math.inf  # the earliest planned end after now (the profile's first interval's end), exact
    n = 1  # intervals in the profile (at most)
    tol = DEADLINE_TOL_S
    for key, lad, work, deadline in jobs:
        cs = lad.counts
        if not cs:
            failed.append(key)
            continue
        limit = deadline + tol
        room = total - used
        sp = lad.speeds
        top = len(cs) - 1
        # the shares tried, in plan_jobs' order: the smallest, then (if it is late) the largest, then bisection
        best = top if share == "max" else 0
        r = _fit_end(cs[best], sp[best], work, now, room, first, limit, n)
        if r is None:
            return None
        ok, fin, exact = r
        if share != "max" and not ok and top > 0:
            best = top
            r = _fit_end(cs[top], sp[top], work, now, room, first, limit, n)
            if r is None:
                return None
            ok, fin, exact = r
            lo, hi = 1, top
            while ok and lo < hi:
                mid = (lo + hi) // 2
                r = _fit_end(cs[mid], sp[mid], work, now, room, first, limit, n)
                if r is None:
                    return None
                if r[0]:
                    hi, best, fin, exact = mid, mid, r[1], r[2]
                else:
                    lo = mid + 1
        if not ok:
            failed.append(key)
            continue
        if exact:
            if fin == now:  # no work left: it ends at once, holding nothing
                counts[key] = 0
                continue
        elif fin - _DRIFT * (n + 2) * (abs(fin) + abs(now)) <= first:
            return None  # it might end first: its end would be the wake-up, known only within the bound
        counts[key] = cs[best]
        used += cs[best]
        if fin < first:
            first = fin
        n += 1
    return counts, failed, first


def plan_now(jobs: Sequence[tuple[Any, Ladder, float, float]], now: float, total: int, share: str = "min"
             ) -> tuple[dict[Any, int], list[Any], float]:
    """What [`plan_jobs`][optsched.sim.deadline.elasticflow.plan_jobs] gives the schedulers: {key: GPUs now} of
    the feasible jobs, the infeasible keys and the earliest time a count changes (inf: none), the same values;
    without walking the profile when every share fits it (``_plan_fit``), else from ``plan_jobs``.

    ```pycon
    >>> lin = Ladder([1, 2, 4], [1.0, 2.0, 4.0])
    >>> plan_now([("a", lin, 200.0, 100.0), ("b", lin, 300.0, 125.0), ("c", lin, 100.0, 30.0)], 0.0, 4)
    ({'a': 2, 'b': 2}, ['c'], 100.0)

    ```
    """
    fit = _plan_fit(jobs, now, total, share)
    if fit is not None:
        return fit
    plans, failed = plan_jobs(jobs, now, total, share)
    return {k: p[0] for k, p in plans.items()}, failed, min((p[1] for p in plans.values()), default=math.inf)


def lend(jobs: Sequence[tuple[Any, Ladder, float]], target: dict[Any, int], spare: int) -> int:
    """Lend ``spare`` GPUs to ``(key, ladder, remaining work)`` jobs holding ``target[key]`` GPUs (a ladder count
    or 0): step by step, the job whose next ladder count saves the most remaining run time per added GPU gets it
    (a job holding none saves an unbounded time: those come first, in the order given); a step that no longer
    fits is dropped. Updates ``target``; returns the GPUs left. Below: b starts (1 GPU), a goes to 2 (saves
    50 s), b to 2 (saves 17 s); a's next step (2 more GPUs) does not fit the one left.

    ```pycon
    >>> a, b = Ladder([1, 2, 4], [1.0, 2.0, 4.0]), Ladder([1, 2], [1.0, 1.2])
    >>> target = {"a": 1, "b": 0}
    >>> lend([("a", a, 100.0), ("b", b, 100.0)], target, 4), target
    (1, {'a': 2, 'b': 2})

    ```

    The steps are those of a heap of each job's next step ([`_lend_heap`][optsched.sim.deadline.elasticflow._lend_heap],
    which a few jobs use); with many jobs, the same steps in one sort (``_lend_sorted``).
    """
    if len(jobs) >= _LEND_SORTED_FROM and spare > 0:
        left = _lend_sorted(jobs, target, spare)
        if left is not None:
            return left
    return _lend_heap(jobs, target, spare)


# lend sorts every step at once from this many jobs: below, the heap's steps cost less CPU than numpy's calls
# (recorded calls of the 2,000-GPU run: 16-31 jobs 1.29x the heap's time, 32-63 0.92x, 64 and more 0.81-0.84x)
_LEND_SORTED_FROM = 48


def _lend_sorted(jobs: Sequence[tuple[Any, Ladder, float]], target: dict[Any, int], spare: int) -> int | None:
    """``_lend_heap``'s steps, in one sort (None, with nothing written, when a job holds a count off its ladder or
    a saving is not a number: the heap then lends).

    The heap holds each job's next step keyed by (-saving per GPU, position); a job's step enters when its previous
    one is taken. Its order of takes is the order of every step by (the running maximum of the keys along the
    job's steps, position, step): a step whose key beats the previous one's is popped at once after it (it beats
    every key left, none smaller than the previous), so it is taken as if it had the previous one's key; the other
    steps are popped by their own key, which is then that maximum. A step that does not fit the GPUs left ends its
    job's steps (they only decrease), in either way. The keys are the heap's floats: work / speed per count, their
    difference, over the added GPUs, negated (numpy's float64 operations round as Python's)."""
    bisect_right = bisect.bisect_right
    inf = math.inf
    rows: dict[int, int] = {}  # ladder (by id) -> its row
    lads: list[Ladder] = []
    works: list[float] = []
    li: list[int] = []
    k0: list[int] = []
    k1: list[int] = []
    for key, lad, work in jobs:
        r = rows.get(id(lad))
        if r is None:
            r = rows[id(lad)] = len(lads)
            lads.append(lad)
        counts = lad.counts
        g = target[key]
        k = bisect_right(counts, g)  # the job's next step
        if g and (not k or counts[k - 1] != g) or not 0.0 <= work < inf:
            return None  # a count off the ladder (its first step is not the ladder's), or no finite work
        works.append(work)
        li.append(r)
        k0.append(k)
        k1.append(bisect_right(counts, g + spare))  # (its steps from there on never fit)
    mats = _ladder_mats(lads)
    if mats is None:
        return None
    smat, amat = mats
    n, width = len(li), smat.shape[1]
    v = np.array(works + li + k0 + k1, dtype=float)  # (one conversion: the small integers are exact)
    lrow = v[n:2 * n].astype(np.intp)
    t = v[:n, None] / smat[lrow]  # the remaining run time on each count
    adds = amat[lrow]
    key = np.empty_like(t)
    key[:, 0] = -inf  # a job holding none: an unbounded saving
    np.divide(t[:, 1:] - t[:, :-1], adds[:, 1:], out=key[:, 1:])  # -(t_now - t_next) / added GPUs
    steps = _STEPS[:width]
    held = steps < v[2 * n:3 * n, None]
    key[held] = -inf  # (the steps it holds: out of the running maximum)
    np.maximum.accumulate(key, axis=1, out=key)
    # the steps it holds, those that never fit and the padding past a ladder: sorted last, never read
    key[held | (steps >= v[3 * n:, None])] = inf
    flat = np.argsort(key, axis=None, kind="stable")[:sum(k1) - sum(k0)]  # ties: by position, then step
    a = adds.ravel()[flat]
    job = flat // width
    csum = np.cumsum(a)
    p = int(np.searchsorted(csum, spare, side="right"))  # the steps before p fit one after another: all taken
    left = spare - (int(csum[p - 1]) if p else 0)
    taken = np.bincount(job[:p], minlength=n).tolist()
    if p < len(flat) and left > 0:
        done = [False] * n
        for i, x in zip(job[p:].tolist(), a[p:].tolist()):
            if done[i]:
                continue
            if x <= left:
                left -= int(x)
                taken[i] += 1
                if left <= 0:
                    break
            else:
                done[i] = True
    for i, d in enumerate(taken):
        if d:
            key_i, lad, _ = jobs[i]
            target[key_i] = lad.counts[k0[i] + d - 1]
    return left


_STEPS = np.arange(64)  # a ladder's step indices (counts up to 2 ** 63)
# the ladders of a lend (by id) -> (those ladders, kept alive; their speeds; their added GPUs per step)
_MATS: dict[tuple[int, ...], tuple[list[Ladder], np.ndarray, np.ndarray]] = {}


def _ladder_mats(lads: list[Ladder]) -> tuple[np.ndarray, np.ndarray] | None:
    """The ladders' speeds and added GPUs per step (the first: its count), one row each, padded to the longest
    (speed 1, 1 GPU: never read), kept for the next lend on the same ladders; None when a ladder has fewer than two
    counts throughout, a count below 1, a speed that is not finite and positive, or more than 64 counts (the heap
    then lends)."""
    ids = tuple(map(id, lads))
    hit = _MATS.get(ids)
    if hit is not None:
        return hit[1], hit[2]
    width = max(len(lad.counts) for lad in lads)
    if not 2 <= width <= len(_STEPS):
        return None
    for lad in lads:
        if not lad.counts or lad.counts[0] < 1 or not all(0.0 < x < math.inf for x in lad.speeds):
            return None
    smat = np.array([lad.speeds + [1.0] * (width - len(lad.speeds)) for lad in lads])
    amat = np.array([[lad.counts[0], *(b - a for a, b in zip(lad.counts, lad.counts[1:]))]
                     + [1] * (width - len(lad.counts)) for lad in lads], dtype=float)
    if len(_MATS) >= 256:
        _MATS.clear()
    _MATS[ids] = (lads, smat, amat)
    return smat, amat


def _lend_heap(jobs: Sequence[tuple[Any, Ladder, float]], target: dict[Any, int], spare: int) -> int:
    """[`lend`][optsched.sim.deadline.elasticflow.lend] with a heap of each job's next step, O((jobs + steps) log
    jobs): a few jobs, or a ladder the sort cannot read."""
    inf = math.inf
    bisect_right = bisect.bisect_right
    held = [target[key] for key, _, _ in jobs]  # each job's count, by position (written back to ``target`` once)
    # each job's next step: (key, position, ladder index, counts, speeds, work); positions are distinct, so the
    # heap never compares past them (the ladder and work ride along, read without indexing ``jobs``)
    heap: list[tuple[float, int, int, list[int], list[float], float]] = []
    for i, (_, lad, work) in enumerate(jobs):
        g = held[i]
        counts = lad.counts
        k = bisect_right(counts, g)
        if k < len(counts) and counts[k] - g <= spare:
            speeds = lad.speeds
            t_now = inf if g <= 0 else work / speeds[k - 1]
            heap.append((-(t_now - work / speeds[k]) / (counts[k] - g), i, k, counts, speeds, work))
    if not heap or spare <= 0:
        return spare
    heapq.heapify(heap)
    pop, pushpop = heapq.heappop, heapq.heappushpop
    item = pop(heap)
    while True:
        _, i, k, counts, speeds, work = item
        g = counts[k]
        add = g - held[i]
        if add <= spare:  # (else it never fits again: the GPUs left only decrease)
            spare -= add
            held[i] = g
            k += 1  # the job now holds ladder count k - 1: its next step is count k
            if k < len(counts) and counts[k] - g <= spare:  # (then spare > 0 still)
                item = (-(work / speeds[k - 1] - work / speeds[k]) / (counts[k] - g), i, k, counts, speeds, work)
                if heap:
                    item = pushpop(heap, item)  # push then pop: a job holds at most one entry, so no two tie
                continue
            if spare <= 0:
                break
        if not heap:
            break
        item = pop(heap)
    for (key, _, _), g in zip(jobs, held):
        target[key] = g
    return spare


def _ladder_cache(view: SimView, own: dict[str, Ladder]) -> dict[str, Ladder]:
    """The ladders of the run's admission policy when it keeps them (ElasticFlow's and EDF's admission: the same
    ladders, built once per job), else the scheduler's own."""
    shared = getattr(view.admission, "ladders", None)
    return shared if isinstance(shared, dict) else own


def _ending(jobs: Sequence[Job], now: float) -> dict[Job, int]:
    """The running jobs a rounding error from their end, with their GPUs: they keep them until they complete
    (stopping one would leave a few ulps of work waiting for GPUs, perhaps for hours)."""
    out: dict[Job, int] = {}
    limit = now + DEADLINE_TOL_S
    for j in jobs:  # j.finish_time() <= limit, inline (the same floats): read for every running job at every decision
        if j.status == RUNNING and (rate := j.rate) > 0:
            t_ref, stall = j.t_ref, j.stall_until
            left = j.w.iterations - j.executed
            if (t_ref if t_ref > stall else stall) + (left if left > 0.0 else 0.0) / rate <= limit:
                out[j] = j.held_gpus
    return out


def _entries(jobs: Sequence[Job], view: SimView, cache: dict[str, Ladder], skip: dict[Job, int]
             ) -> list[tuple[Job, Ladder, float]]:
    """``[_entry(j, view, cache) for j in jobs if j not in skip]``, with ``remaining_iterations`` inline (the same
    floats): the scheduler's entries of every job at every decision that plans."""
    now = view.now
    out: list[tuple[Job, Ladder, float]] = []
    add = out.append
    for j in jobs:
        if skip and j in skip:
            continue
        ex = j.executed
        if j.status == RUNNING:  # j.executed_at(now)
            t_ref, stall = j.t_ref, j.stall_until
            start = t_ref if t_ref > stall else stall
            if now > start:
                ex = ex + j.rate * (now - start)
        left = j.w.iterations - ex
        add((j, cache.get(j.id) or ladder_of(j, view, cache), left if left > 0.0 else 0.0))
    return out


# -- admission -----------------------------------------------------------------------------------------------------
class ElasticFlowAdmission(AdmissionPolicy):
    """ElasticFlow's admission control (module docstring): a new job is admitted iff re-planning every admitted
    job from its remaining work, with the new one, keeps it and every job feasible without it feasible; declined
    jobs are dropped (listed in ``declined``). ``share``: ``"min"`` (minimum satisfactory shares) or ``"max"``
    (each job on its largest count: EDF with admission control)."""

    name = "elasticflow"

    def __init__(self, share: str = "min") -> None:
        if share not in ("min", "max"):
            from ...errors import InstanceError

            raise InstanceError(f"must be 'min' or 'max', got {share!r}", field="share")
        self.share = share
        self.declined: list[str] = []
        # job id -> its ladder; the schedulers of the family read and prune this one when they run behind it
        self.ladders: dict[str, Ladder] = {}
        self._order_keys: dict[str, tuple[float, float, int]] = {}  # job id -> deadline_order(job), fixed per job
        # (time, the admitted jobs in deadline order, their counts now in the plan, their plan entries (job, ladder,
        # remaining work, deadline), the plan's earliest change) of the last admission: read by ElasticFlow's
        # scheduler at the same instant
        self.last_plan: tuple[float, list[Job], dict[Job, int], list[tuple[Job, Ladder, float, float]],
                              float] | None = None

    def admit(self, new_jobs: list[Job], view: SimView) -> list[Job]:
        now, total = view.now, view.cluster.total_gpus
        cache = self.ladders
        # the admitted jobs in deadline order, decorated with their keys (unique: the jobs are never compared, and
        # inserting at a key's bisect is sorting), and their plan entries, built once for every new job
        order_of = self._order_keys
        active = view.jobs.active
        if len(order_of) > 2 * len(active) + 64:  # forget the jobs that left
            order_of = self._order_keys = {jid: order_of[jid] for jid in active if jid in order_of}
        dec = []
        for j in active.values():
            k = order_of.get(j.id)
            if k is None:
                k = order_of[j.id] = deadline_order(j)
            if math.isfinite(k[0]):
                dec.append((k, j))
        dec.sort()
        keys = [k for k, _ in dec]
        ents = [(j, lad, w, k[0]) for (j, lad, w), (k, _) in zip(_entries([j for _, j in dec], view, cache, {}), dec)]
        out = []
        last: tuple[list[Job], dict, list, float] | None = None
        for j in sorted(new_jobs, key=lambda j: (j.arrival_s, j.index)):
            k = deadline_order(j)
            if not math.isfinite(k[0]):
                out.append(j)  # best effort: always admitted, leftovers only
                continue
            at = bisect.bisect_right(keys, k)
            trial = [*ents[:at], (*_entry(j, view, cache), k[0]), *ents[at:]]
            plans, failed, wake = plan_now(trial, now, total, self.share)
            ok = j in plans
            if ok and failed:  # admitted jobs already infeasible do not block it; jobs it makes infeasible do
                before, _, _ = plan_now(ents, now, total, self.share)
                ok = set(before) <= set(plans)
            if ok:
                ents = trial
                keys.insert(at, k)
                last = ([e[0] for e in trial], plans, trial, wake)
                out.append(j)
            else:
                self.declined.append(j.id)
                cache.pop(j.id, None)
        # the scheduler deciding at this instant plans the same jobs from the same remaining work: it may reuse this
        # plan and these entries (ladders and remaining work)
        self.last_plan = (now, *last) if last is not None else None
        return out


class EDFAdmission(ElasticFlowAdmission):
    """EDF with admission control (ElasticFlow's baseline): the plan gives each job its largest count."""

    name = "edf-admission"

    def __init__(self, share: str = "max") -> None:
        super().__init__(share)


# -- schedulers ----------------------------------------------------------------------------------------------------
class _DeadlineOrdered(SchedulerPlacer):
    """The active jobs in deadline order and their keys, kept across decisions (insert at admission, delete at
    completion; rebuilt from the view when its count of active jobs disagrees or after an outside decision):
    the list ``sorted(active, key=deadline_order)`` gives (the keys are unique), without sorting every job at
    every decision."""

    def __init__(self) -> None:
        self._order: list[Job] = []
        self._keys: list[tuple[float, float, int]] = []
        self._stale = True

    def on_admit(self, jobs: Sequence[Job], view: SimView) -> None:
        for j in jobs:
            k = deadline_order(j)
            i = bisect.bisect_right(self._keys, k)
            self._keys.insert(i, k)
            self._order.insert(i, j)

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        if not own:
            self._stale = True

    def _sorted(self, view: SimView) -> list[Job]:
        """The active jobs in deadline order (the list kept: do not change it)."""
        active = view.jobs.active
        if self._stale or len(self._order) != len(active):
            self._order = sorted(active.values(), key=deadline_order)
            self._keys = [deadline_order(j) for j in self._order]
            self._stale = False
        return self._order

    def _forget(self, job: Job) -> None:
        k = deadline_order(job)
        i = bisect.bisect_left(self._keys, k)
        if i < len(self._keys) and self._keys[i] == k:
            del self._keys[i]
            del self._order[i]


class ElasticFlow(_DeadlineOrdered):
    """ElasticFlow's scheduling (module docstring): re-plan every job from its remaining work at each decision,
    the planned counts now, leftovers by the largest run time saved per GPU; use with admission ``elasticflow``
    (the default through the door)."""

    name = "elasticflow"
    elastic = True
    family = "deadline"
    default_admission = "elasticflow"

    def __init__(self) -> None:
        super().__init__()
        self._wake = math.inf
        self._ladders: dict[str, Ladder] = {}

    def targets(self, view: SimView) -> dict[Job, int]:
        """The GPU count every active job should hold now."""
        now, total = view.now, view.cluster.total_gpus
        order = self._sorted(view)
        ending = _ending(order, now)
        total -= sum(ending.values())
        keys = self._keys  # each job's deadline_order (its deadline first), beside ``order``
        memo = getattr(view.admission, "last_plan", None) if not ending else None
        if (memo is not None and memo[0] == now and getattr(view.admission, "share", None) == "min"
                and memo[1] == [j for j, k in zip(order, keys) if math.isfinite(k[0])]):
            # the admission planned these jobs at this instant from the same remaining work: its plan and entries
            plans, wake = memo[2], memo[4]
            if len(memo[1]) == len(order):
                entries = [e[:3] for e in memo[3]]
            else:  # best-effort jobs among them: their own entries, in deadline order
                by_job = {e[0]: e[:3] for e in memo[3]}
                cache = _ladder_cache(view, self._ladders)
                entries = [by_job.get(j) or _entry(j, view, cache) for j in order]
        else:
            cache = _ladder_cache(view, self._ladders)
            entries = _entries(order, view, cache, ending)
            if ending:
                planned = [(j, lad, w, d) for j, lad, w in entries if math.isfinite(d := deadline_of(j))]
            else:
                planned = [(*e, k[0]) for e, k in zip(entries, keys) if math.isfinite(k[0])]
            plans, _, wake = plan_now(planned, now, total)
        get = plans.get  # (entries are (job, ladder, work): unpacked without a starred list per job)
        target = {j: get(j, 0) for j, _, _ in entries}
        self._wake = wake
        lend(entries, target, total - sum(target.values()))
        target.update(ending)
        return target

    def decide(self, view: SimView) -> Decision:
        return apply_targets(view, self.targets(view))

    def next_wakeup(self, now: float) -> float:
        return self._wake if self._wake > now else math.inf

    def on_completion(self, job: Job, view: SimView) -> None:
        _ladder_cache(view, self._ladders).pop(job.id, None)
        self._forget(job)


class ElasticFlowNoAdmission(ElasticFlow):
    """ElasticFlow without admission control: every job is admitted; an infeasible job gets leftovers only."""

    name = "elasticflow-noadmit"
    default_admission = "accept-all"


class EDFElastic(_DeadlineOrdered):
    """ElasticFlow's EDF baseline: elastic and preemptive, re-planned at every event; each job in deadline order
    gets its largest useful count still free. Not paper 003's ``edf`` (one job on the whole cluster)."""

    name = "edf-elastic"
    elastic = True
    family = "deadline"

    def __init__(self) -> None:
        super().__init__()
        self._ladders: dict[str, Ladder] = {}

    def decide(self, view: SimView) -> Decision:
        """Walks the jobs in deadline order only until the free GPUs run out (every later job would get none);
        the running jobs after that point are listed with 0 (stopped), in deadline order, as a walk of every
        job lists them."""
        order = self._sorted(view)
        active = view.jobs.active
        jobs_on = view.cluster.jobs_on
        if len(order) <= len(jobs_on):  # fewer jobs than nodes: read the jobs, else the nodes (the same set)
            running = [j for j in order if j.status == RUNNING]
        else:
            running = sorted({active[jid] for jobs in jobs_on for jid in jobs}, key=deadline_order)
        target = _ending(running, view.now)
        free = view.cluster.total_gpus - sum(target.values())
        cache = _ladder_cache(view, self._ladders)
        last = None
        for j in order:
            if free <= 0:
                last = j
                break
            if j in target:
                continue
            lad = ladder_of(j, view, cache)
            i = lad.best_upto(free)
            target[j] = lad.counts[i] if i >= 0 else 0
            free -= target[j]
        if last is not None:
            key = deadline_order(last)
            for j in running:  # the running jobs the walk did not reach: stopped
                if j not in target and deadline_order(j) >= key:
                    target[j] = 0
        return apply_targets(view, target)

    def on_completion(self, job: Job, view: SimView) -> None:
        _ladder_cache(view, self._ladders).pop(job.id, None)
        self._forget(job)


class EDFWithAdmission(EDFElastic):
    """EDF with admission control (ElasticFlow's baseline): ``edf-elastic`` behind admission ``edf-admission``."""

    name = "edf-admission"
    default_admission = "edf-admission"


class GandivaTimeSlicing(SchedulerPlacer):
    """Gandiva-style time slicing: each job runs on the GPU count it asked for (``job.gpus``); when jobs wait, a
    job that has run for ``quantum_s`` since it last started yields to the jobs that waited longest (round robin,
    suspend-resume). Order: a running job within its slice first, then by the time the job joined the queue (its
    arrival, its last preemption, or for a running job the end of its slice), then deadline; a job that does not
    fit is skipped (backfilling)."""

    name = "gandiva-ts"
    elastic = False
    family = "deadline"

    def __init__(self, quantum_s: float = 60.0) -> None:
        if not (quantum_s > 0 and math.isfinite(quantum_s)):
            from ...errors import InstanceError

            raise InstanceError(f"must be a positive number of seconds, got {quantum_s!r}", field="quantum_s")
        self.quantum_s = float(quantum_s)
        self._since: dict[str, float] = {}  # job id -> when it last started (running) or became ready (waiting)
        # job id -> (deadline, workload order, job): the key's fixed part
        self._tail: dict[str, tuple[float, int, Job]] = {}
        self._wake = math.inf

    def decide(self, view: SimView) -> Decision:
        now, q = view.now, self.quantum_s
        since, tails = self._since, self._tail
        active = list(view.jobs.active.values())
        # every active job fits at once (what they ask adds up to at most the cluster) and none is in between
        # (each is running or waiting): the walk below keeps them all, whatever the order, so the order matters
        # only among the waiting jobs, which start in it (a large cluster, lightly loaded: about every decision)
        total = view.cluster.total_gpus
        if len(active) <= total:  # (more jobs than GPUs: not all fit, no need to add them up)
            demand, others = 0, []
            for j in active:
                demand += j.gpus
                if j.status != RUNNING:
                    others.append(j)
            if demand <= total and all(j.status == QUEUED for j in others):
                return self._all_fit(view, active, others)
        # the order's key, decorated (no key function): a running job within its slice first (since), then by the
        # time the job joined the queue (its arrival or last preemption; a running job whose slice is over: the
        # slice's end), then deadline and workload order (unique: the jobs themselves are never compared)
        order: list[tuple] = []
        running: list[tuple] = []
        waiting = False
        for j in active:
            jid = j.id
            s0 = since.get(jid)
            if s0 is None:
                s0 = since[jid] = j.arrival_s
            t = tails.get(jid)
            if t is None:
                t = tails[jid] = (deadline_of(j), j.index, j)
            if j.status == RUNNING:
                running.append((s0, t))
            else:
                order.append((1, s0) + t)
                if j.status == QUEUED:
                    waiting = True
        cut = q - DEADLINE_TOL_S
        for s0, t in running:
            if not waiting or now - s0 < cut:
                order.append((0, s0) + t)
            else:
                order.append((1, s0 + q) + t)
        order.sort()
        free = view.cluster.total_gpus
        keep: list[Job] = []
        launches = 0
        for e in order:
            j = e[4]
            if j.gpus <= free:
                keep.append(j)
                free -= j.gpus
                if j.status != RUNNING:
                    launches += 1
                if free == 0:  # no job fits in no GPU: the rest of the walk keeps nothing
                    break
        if not launches and len(keep) == len(running):
            # every running job keeps its GPUs and no job starts: nothing to decide, only the next slice's end
            self._wake = min((since[j.id] + q for j in keep), default=math.inf)
            return Decision()
        kept = set(keep)
        b = DecisionBuilder(view)
        wake = math.inf
        for j in active:
            if j.status == RUNNING and j not in kept:
                b.preempt(j)
                since[j.id] = now
        for j in keep:
            if j.status == QUEUED:
                if self._start(b, j, now):
                    wake = min(wake, now + q)
            else:
                wake = min(wake, since[j.id] + q)
        self._wake = wake
        return b.build()

    def _all_fit(self, view: SimView, active: list[Job], waiting: list[Job]) -> Decision:
        """``decide`` when every active job fits at once and each is running or waiting: no job is preempted,
        the waiting ones start in the walk's order (by the time they joined the queue, then deadline and workload
        order), and the wake-up is the earliest slice end (a minimum: any order gives it)."""
        now, q = view.now, self.quantum_s
        since = self._since
        wake = math.inf
        for j in active:
            if j.status == RUNNING:
                s0 = since.get(j.id)
                if s0 is None:
                    s0 = since[j.id] = j.arrival_s
                if s0 + q < wake:
                    wake = s0 + q
        if not waiting:
            self._wake = wake
            return Decision()
        tails = self._tail
        order = []
        for j in waiting:
            s0 = since.get(j.id)
            if s0 is None:
                s0 = since[j.id] = j.arrival_s
            t = tails.get(j.id)
            if t is None:
                t = tails[j.id] = (deadline_of(j), j.index, j)
            order.append((s0, *t))
        order.sort()
        b = DecisionBuilder(view)
        for e in order:
            if self._start(b, e[3], now):
                wake = min(wake, now + q)
        self._wake = wake
        return b.build()

    def _start(self, b: DecisionBuilder, j: Job, now: float) -> bool:
        """Launch waiting job ``j`` on the walk's placement among ``b``'s free GPUs, its slice starting ``now``;
        False when they are fragmented (it waits for the next decision)."""
        pl = place(b.free, j.gpus)
        if pl is None:
            return False
        b.launch(j, placement_of(pl))
        self._since[j.id] = now
        return True

    def next_wakeup(self, now: float) -> float:
        return self._wake if self._wake > now else math.inf

    def on_completion(self, job: Job, view: SimView) -> None:
        self._since.pop(job.id, None)
        self._tail.pop(job.id, None)


class RescaleOverhead(LaunchMechanism):
    """A launch mechanism whose rescaling stall grows with the GPU count, as ElasticFlow measures it: a move
    (``Decision.migrate``, an elastic rescaling) stalls ``migration_s + migration_per_gpu_s`` x the larger of the
    old and new GPU counts. The defaults (0) charge nothing.

    ```pycon
    >>> from optsched.sim.state import Placement
    >>> RescaleOverhead(migration_s=2.0, migration_per_gpu_s=0.5).migration_stall_s(
    ...     None, Placement.of({0: 2}), Placement.of({0: 4, 1: 4}), 0.0)
    6.0

    ```
    """

    name = "rescale-overhead"

    def __init__(self, restore_s: float = 0.0, checkpoint_s: float = 0.0, start_s: float = 0.0,
                 migration_s: float = 0.0, migration_per_gpu_s: float = 0.0):
        super().__init__(restore_s, checkpoint_s, start_s, migration_s)
        if isinstance(migration_per_gpu_s, bool) or not (0 <= migration_per_gpu_s < math.inf):
            from ...errors import InstanceError

            raise InstanceError(f"must be a finite number >= 0, got {migration_per_gpu_s!r}",
                                field="migration_per_gpu_s")
        self.migration_per_gpu_s = float(migration_per_gpu_s)

    def migration_stall_s(self, job: Job, old: Placement, new: Placement, now: float) -> float:
        return self.migration_s + self.migration_per_gpu_s * max(old.gpus, new.gpus)
