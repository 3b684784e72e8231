"""The discrete-event engine: arrivals, completions and scheduling rounds in continuous time.

Semantics (the full list, with the Blox lines they follow, is in ``docs/algorithms/blox-engine.md``):

* Events at one instant are handled in this order: completions, then arrivals, then the scheduling decision.
* ``mode="round"`` (Blox, default ``round_s=300``): decisions happen only at times k x round_s (plus the wake-up
  times a combined policy asks for); a job arriving at t waits for the first round at or after t; GPUs freed by a
  completion stay idle until the next round. Rounds in which nothing can change are skipped (no job waiting; or
  no event since the last decision and a scheduling policy that promises no change before a later time): the
  same trajectory, only faster.
* ``mode="event"``: a decision after every batch of simultaneous arrivals/completions and at the policy's
  wake-up times (for ``Composed``: Tiresias threshold crossings and anti-starvation bumps).
* After a decision that preempted a job, another decision follows (next round / same instant): a victim may fit
  in what is left.
* Completions are exact, not round-quantised (Blox stamps them with the round time): a running job's progress
  rate (iterations/s = 1 / iteration time from the performance model) is constant between events and is
  recomputed for every running job whenever the running set changes if the model is co-location-aware.
* A launch after a preemption holds the GPUs for the checkpoint-restore stall of the launch mechanism before it
  progresses; preemption keeps all finished work (iteration-boundary checkpoint, fractional iterations kept).

Stepping: [`Simulator.reset`][optsched.sim.engine.Simulator.reset] (the view at t = 0),
[`Simulator.advance`][optsched.sim.engine.Simulator.advance] (process completions and
arrivals up to the next decision point, admission applied; the view at which a decision is due, or None),
[`Simulator.apply`][optsched.sim.engine.Simulator.apply] (a [`Decision`][optsched.sim.base.Decision]: the policy's from
[`Simulator.decide`][optsched.sim.engine.Simulator.decide], or
any other driver's), [`Simulator.done`][optsched.sim.engine.Simulator.done],
[`Simulator.result`][optsched.sim.engine.Simulator.result]. [`Simulator.run`][optsched.sim.engine.Simulator.run] is
exactly their
loop with the policy's ``decide`` in between.

```pycon
>>> from optsched.problems.workload import Workload, WorkloadJob
>>> from optsched.cluster import Cluster
>>> wl = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 10, 2, 50, 1.0)))
>>> sim = Simulator(wl, Cluster.homogeneous(1, 2), mode="event")
>>> sim.run().jobs["completion_s"].tolist()
[100.0, 150.0]
>>> view = sim.reset()                 # the same run, stepped by hand with the policy's decisions
>>> while (view := sim.advance()) is not None:
...     print(view.now, sorted(j.id for j in view.active()))
...     sim.apply(sim.decide())
0.0 ['a']
10.0 ['a', 'b']
100.0 ['b']
150.0 []
>>> sim.done, sim.result().jobs["completion_s"].tolist()
(True, [100.0, 150.0])

```
"""

from __future__ import annotations

import copy
import gc
import heapq
import math
import operator
import time
from array import array
from bisect import bisect_left
from struct import Struct
from typing import Sequence, cast

import numpy as np

from ..cluster import Cluster
from ..errors import InstanceError, OptschedError, ScheduleError
from ..io import progress
from ..limits import paused_gc
from ..perf.base import PerfModel, RunningJobLike
from ..perf.constant import ConstantPerf
from ..problems.workload import Workload
from .base import (
    AdmissionPolicy,
    Composed,
    Decision,
    LaunchMechanism,
    MetricCollector,
    PlacementPolicy,
    SchedulerPlacer,
    SchedulingPolicy,
    _first,
    check_placement,
)
from .metrics import SimResult, timeseries_frame
from .registry import build_admission, build_placement, build_scheduling
from .state import DONE, QUEUED, RUNNING, ClusterState, Job, JobState, Placement, SimView, jobs_from_workload

__all__ = ["SimulationStalled", "Simulator"]


def _settle_young() -> None:
    """Move every object the collector tracks to its oldest generation, without a pass over them (``gc.freeze``
    then ``gc.unfreeze``), unless someone else froze objects (the unfreeze would release theirs too).

    Called at the end of a run with the collector paused: the run's surviving objects (its jobs, held by the
    result) are all young then, and the first collection after the pause would walk every one of them (about 4 %
    of a 100,000-job FIFO run) only to promote them, as survivors of the young generations are; garbage cycles
    among them (a run makes none) wait for the next full collection instead of the next young one."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


# a time-series record (t, busy GPUs, queued, running) as the bytes of four doubles, appended to the flat records
_PACK4 = Struct("4d").pack

# the types of value a simulator copy takes as they are (immutable)
_PLAIN = frozenset((int, float, bool, str, type(None)))
_NIL = object()


def _copy_value(x: object, memo: dict) -> object:
    """``copy.deepcopy(x, memo)`` for a field of a simulator's view, with its common cases taken directly: a
    plain value as it is, an object the copy has (or shares) already from the memo, and a dict of plain keys (the
    view's ``extra``: the run's generator and seed) entry by entry.

    ```pycon
    >>> rng = object(); memo = {id(rng): rng}
    >>> extra = {"rng": rng, "seed": 3}
    >>> c = _copy_value(extra, memo)
    >>> c == extra, c is extra, c["rng"] is rng, memo[id(extra)] is c
    (True, False, True, True)

    ```
    """
    if type(x) in _PLAIN:
        return x
    c = memo.get(id(x), _NIL)
    if c is not _NIL:
        return c
    if type(x) is dict and all(type(k) in _PLAIN for k in x):
        c = memo[id(x)] = {}
        for k, v in x.items():
            c[k] = _copy_value(v, memo)
        return c
    return copy.deepcopy(x, memo)


class SimulationStalled(OptschedError):
    """Jobs remain but the policy will never start one (nothing runs, nothing will arrive)."""


class Simulator:
    """One simulated cluster under one policy composition, run whole ([`run`][optsched.sim.engine.Simulator.run]) or
    stepped.

    Stepping (an outside driver: a gym environment, a notebook, a migration step, a test)::

        view = sim.reset()                          # t = 0, nothing processed yet
        while (view := sim.advance()) is not None:  # the next decision point (admission applied)
            decision = sim.decide()                 # the policy's decision; or any Decision the driver builds
            sim.apply(decision)
        result = sim.result()

    [`run`][optsched.sim.engine.Simulator.run] is exactly that loop with
    [`decide`][optsched.sim.engine.Simulator.decide]. A decision supplied by a driver goes through the same
    checks and the same policy hooks (``after_apply``) as the policy's own, so the policy stays consistent and
    can take over again at the next decision point; only the policy's own decisions (from
    [`decide`][optsched.sim.engine.Simulator.decide]) are
    checked for a stall (jobs wait, nothing runs or will arrive, and the policy started nothing).
    ``advance(until=t)`` stops at time ``t`` if no decision is due before it (returns None with
    [`done`][optsched.sim.engine.Simulator.done]
    still False). [`reset`][optsched.sim.engine.Simulator.reset] starts a new run from scratch (policies, admission and
    collectors included), so
    one simulator, like one policy object, can run again with the same result. ``copy.deepcopy(sim)`` (or
    [`clone`][optsched.sim.engine.Simulator.clone]) mid-run gives an independent simulator.

    ``lean`` (an attribute, False unless set, copied with the simulator): the run keeps no time series records and
    calls no collectors from then on; everything else (jobs, cluster, policy, clock, counters) goes on as it would.
    For a copy whose jobs alone are read (a what-if window's score); its ``result()`` would lack those records.
    """

    lean = False

    def __init__(self, workload: Workload, cluster: Cluster, *, policy: SchedulerPlacer | None = None,
                 scheduling: SchedulingPolicy | None = None, placement: PlacementPolicy | None = None,
                 admission: AdmissionPolicy | None = None, perf: PerfModel | None = None,
                 launch: LaunchMechanism | None = None, mode: str = "round", round_s: float = 300.0,
                 stop_when_tracked_done: bool = False, collectors: Sequence[MetricCollector] = (),
                 progress: bool = False, max_time_s: float | None = None, config: dict | None = None,
                 seed: int | None = None):
        if mode not in ("round", "event"):
            raise InstanceError(f"must be 'round' or 'event', got {mode!r}", field="mode")
        if mode == "round" and (isinstance(round_s, bool) or not isinstance(round_s, (int, float))
                                or not round_s > 0 or not math.isfinite(round_s)):
            raise InstanceError(f"must be a positive number of seconds, got {round_s!r}", field="round_s")
        if not workload.jobs:
            raise InstanceError("the workload has no jobs: nothing to simulate", field="workload")
        self.workload, self.cluster = workload, cluster
        if policy is None:
            sched = scheduling or build_scheduling("fifo")
            assert isinstance(sched, SchedulingPolicy)
            policy = Composed(sched, placement or build_placement("consolidated"))
        self.policy = policy
        self.admission = admission or build_admission("accept-all")
        self.perf = perf or ConstantPerf()
        self.launcher = launch or LaunchMechanism()
        self.mode, self.round_s = mode, float(round_s)
        self.stop_when_tracked_done = stop_when_tracked_done
        self.collectors = list(collectors)
        self.progress, self.max_time_s = progress, max_time_s
        self.config = dict(config or {})
        self.seed = seed
        self.config.setdefault("seed", seed)
        total = cluster.total_gpus
        by_type = cluster.gpus_by_type
        largest_type = max(by_type.values(), default=total)  # a job runs on one GPU type at a time
        # (checked in bulk first: a job of at most the largest type's GPUs that names no type always fits; the loop
        # below names the culprit)
        wjobs = workload.jobs
        fits = (max(map(operator.attrgetter("gpus"), wjobs)) <= largest_type
                and not any(map(operator.attrgetter("gpu_type"), wjobs)))
        for wj in () if fits else wjobs:
            if wj.gpus > total:
                raise InstanceError(f"needs {wj.gpus} GPUs but the cluster has {total}", field="gpus", job=wj.id)
            if not wj.gpu_type and wj.gpus > largest_type:
                raise InstanceError(f"needs {wj.gpus} GPUs of one type (a job runs on one type at a time); the "
                                    f"largest type has {largest_type} (types: {', '.join(by_type)})", field="gpus",
                                    job=wj.id)
            if wj.gpu_type and by_type.get(wj.gpu_type, 0) < wj.gpus:
                raise InstanceError(f"needs {wj.gpus} GPUs of type {wj.gpu_type!r}; the cluster has "
                                    f"{by_type.get(wj.gpu_type, 0)} (types: {', '.join(by_type)})", field="gpu_type",
                                    job=wj.id)
        self._started = False

    # -- the stepping API ----------------------------------------------------------------------------------
    def reset(self) -> SimView:
        """Start a run from scratch: fresh cluster and job state, policies, admission and collectors reset.
        Returns the view at t = 0 (nothing arrived yet: the first [`advance`][optsched.sim.engine.Simulator.advance]
        processes t = 0)."""
        self._close_bar()
        self._wall0 = time.perf_counter()
        self._wall_s: float | None = None
        self.cstate = ClusterState(self.cluster)
        self.jstate = JobState()
        self.view = SimView(0.0, self.cstate, self.jstate, self.perf, self.round_s if self.mode == "round" else None,
                            admission=self.admission)
        self.view.extra["rng"] = np.random.default_rng(self.seed)
        self.view.extra["seed"] = self.seed
        self.jobs = jobs_from_workload(self.workload.jobs)
        arr = [w.arrival_s for w in self.workload.jobs]  # (the jobs' own, read from their workload jobs)
        if all(map(operator.le, arr, arr[1:])):  # already in order of arrival (generated workloads): one list
            self._arrivals = self.jobs
        else:
            order = sorted(range(len(arr)), key=arr.__getitem__)  # by arrival, ties in workload order (stable)
            self._arrivals = [self.jobs[i] for i in order]
            arr = [j.arrival_s for j in self._arrivals]
        self._arr_t = arr
        self._n = len(self.jobs)
        self._pos: array | None = None  # arrival position by workload index (built by the first copy)
        self._ai = 0
        # arrivals at positions >= _shared_from are job objects shared with a copy (still untouched: the jobs
        # that had not arrived when the copy was made); each simulator takes its own copy of one when it
        # arrives (_own), so neither ever writes a shared job
        self._shared_from = self._n
        self._heap: list = []
        self._seq = 0
        self._running: dict[str, Job] = {}
        self._pending: list[Job] = []
        # the time series, flat: (t, busy GPUs, queued, running) per record, 32 bytes each (a list of tuples took
        # about 150: two records per job, a third of the memory of a million-job run)
        self._ts = array("d")
        self._ts_frame = None  # the records as a table, once the run is over and a result asked for them
        self._done = self._preemptions = self._migrations = self._decisions = self._events = 0
        tracked = map(operator.attrgetter("tracked"), self.workload.jobs)
        self._tracked_left = self._tracked_total = sum(map(bool, tracked))
        self._dirty = False
        self._last_decision_s = -math.inf
        self._same_instant = 0
        # preemption thrash (every launch preempted before its stall ends, see _check_stall): the last time a job
        # progressed, the launches lost since (preempted before their stall ended) and the longest stall given
        self._progress_s = 0.0
        self._lost_launches = 0
        self._max_stall_s = 0.0
        self._now = 0.0
        self._last_k = -1
        self._due = False        # a decision point was returned by advance() and awaits apply()
        self._policy_decision: Decision | None = None
        self._finished = False
        self.policy.reset()
        self.admission.reset()
        for c in self.collectors:
            reset = getattr(c, "reset", None)  # collectors written before the hook may lack it
            if reset is not None:
                reset()
        self._bar = None
        self._bar_done = 0
        if self.progress:
            # the run ends when the tracked jobs are done (stop_when_tracked_done): count those, so the bar
            # ends at 100 %
            self._bar = progress(self._tracked_total if self.stop_when_tracked_done else self._n,
                                 self.config.get("label", "simulate"), "job")
        self._started = True
        return self.view

    @property
    def now(self) -> float:
        """The simulated time: of the last event processed, the pending decision point, or ``until``."""
        return self._now

    @property
    def done(self) -> bool:
        """True once the run has ended (every job done, the tracked ones with ``stop_when_tracked_done``, the
        ``max_time_s`` horizon, or nothing left that could happen)."""
        return self._finished

    @property
    def decision_due(self) -> bool:
        """True between an [`advance`][optsched.sim.engine.Simulator.advance] that returned a view and the
        [`apply`][optsched.sim.engine.Simulator.apply] of a decision."""
        return self._due

    def advance(self, until: float | None = None) -> SimView | None:
        """Process completions and arrivals up to the next decision point; admission is applied there.

        Returns the [`SimView`][optsched.sim.state.SimView] at which a decision is due (call
        [`apply`][optsched.sim.engine.Simulator.apply]), or
        None: the run is over ([`done`][optsched.sim.engine.Simulator.done]), or, with ``until``, no decision is due at
        or before ``until``
        (the clock then stands at ``until``; call again to go on).
        """
        if not self._started:
            raise RuntimeError("call reset() before advance()")
        if self._due:
            raise RuntimeError(f"a decision is due at t={self._now}: apply() one first (an empty Decision() "
                               "decides nothing)")
        if self._finished:
            return None
        # the hot loop works on locals; they are written back on every exit
        heap = self._heap
        heappop = heapq.heappop
        arr_t, arrivals = self._arr_t, self._arrivals
        n = self._n
        ai, now, last_k = self._ai, self._now, self._last_k
        events = self._events
        policy, admission, jstate, view = self.policy, self.admission, self.jstate, self.view
        next_wakeup, idle_until, on_completion = policy.next_wakeup, policy.idle_until, policy.on_completion
        # Composed's wake-up is its _wake while that lies ahead, set only by after_apply (and reset): read once
        tp = type(policy)
        wake = policy._wake if (tp.next_wakeup is Composed.next_wakeup and tp.on_completion is Composed.on_completion
                                and isinstance(policy, Composed)) else None
        # Composed's on_completion, inline (its sorted lists, which only a decision replaces), when it is the policy's
        # (its lists read here, not through a call: advance runs at every event in event mode)
        done_entry: dict | None = None
        done_r: list | None = None
        if wake is not None and not policy._rebuild_needed:  # type: ignore[attr-defined]
            done_entry, done_r = policy._entry, policy._r  # type: ignore[attr-defined]
        # an admission that never holds a job (its class keeps the base's holding, always 0) is not asked
        holds = type(admission).holding is not AdmissionPolicy.holding
        active, finished_add = jstate.active, jstate.finished.add
        release = self.cstate.release
        running, pending = self._running, self._pending
        ts_add = self._ts.frombytes  # (a record packed at once: extend converted its four numbers one by one)
        lean = self.lean
        cstate = self.cstate
        plain_cs = type(cstate) is ClusterState  # (a subclass's release runs)
        fl, free, jobs_on = cstate._fl, cstate.free, cstate.jobs_on
        round_mode = self.mode == "round"
        R = self.round_s
        inf = math.inf
        ceil = math.ceil
        stop_tracked = self.stop_when_tracked_done
        max_t = self.max_time_s
        colocation = self.perf.colocation_aware
        bar = self._bar
        # round mode: once a job waits and an event has happened since the last decision, the next round is the
        # first multiple of round_s after that event, and no later event moves it (rounds only move to later
        # times while the clock advances); ``fixed`` says t_s is that round
        fixed = False
        t_s = inf
        horizon = inf if max_t is None else max_t  # (the earlier of the two horizons: max_time_s and until)
        if until is not None and until < horizon:
            horizon = until
        # (counters and flags the loop writes at every event, kept in locals; written back on every exit)
        done, tracked_left, dirty = self._done, self._tracked_left, self._dirty
        shared_from = self._shared_from  # (a copy, which moves it, is made only between calls)
        progress_t = None  # the last completion's time (then: _progress_s, and no launch lost since)
        # the round found (``fixed``) with Composed's hooks and no progress bar: the completions and arrivals
        # before the round, the wake-up and the horizons are taken in a short loop of their own (below)
        quick = wake is not None and bar is None
        wake_q: float = inf if wake is None else wake
        last_decision_s = self._last_decision_s
        try:
            while True:
                if fixed and quick:
                    # Before the round (and the wake-up; within the horizons) nothing but completions and arrivals
                    # can happen, and nothing they do moves the round: the events are taken one after the other,
                    # with the same state changes, records and clock as one iteration of the loop below each
                    # (Composed's on_completion reads nothing of the view; its wake-up is fixed during a call)
                    t_w = wake_q if wake_q > now else inf
                    if t_w <= last_decision_s:
                        t_w = inf
                    lim = t_s if t_s < t_w else t_w
                    if horizon < inf:  # an event after a horizon goes to the loop below, which ends there
                        hz = math.nextafter(horizon, inf)
                        if hz < lim:
                            lim = hz
                    while True:
                        if heap:
                            top = heap[0]
                            job = top[3]
                            if job.version != top[2] or job.status != RUNNING:
                                heappop(heap)
                                continue
                            t_c = top[0]
                        else:
                            t_c = inf
                        if ai < n and arr_t[ai] < t_c:
                            t = arr_t[ai]
                            if t >= lim:
                                break
                            view.now = now
                            # the arrivals before the next completion (and the limit), the clock at the last
                            bound = t_c if t_c < lim else lim
                            pending.append(arrivals[ai] if ai < shared_from else self._own(ai))
                            ai += 1
                            events += 1
                            while ai < n and arr_t[ai] < bound:
                                pending.append(arrivals[ai] if ai < shared_from else self._own(ai))
                                t = arr_t[ai]
                                ai += 1
                                events += 1
                            now = t
                            dirty = True
                            continue
                        if t_c >= lim:
                            break
                        view.now = now
                        now = t = t_c
                        # the completions at t (what the loop below does)
                        ncomp = 0
                        while heap:
                            top = heap[0]
                            job = top[3]
                            if job.version != top[2] or job.status != RUNNING:
                                heappop(heap)
                                continue
                            if top[0] > t:
                                break
                            heappop(heap)
                            jid = job.id
                            # job.complete(t), inline (keep them alike): its service up to t, its work all done
                            t_ref = job.t_ref
                            if t > t_ref:
                                dt = t - t_ref
                                a, g = job.attained_s, job.attained_gpu_s
                                job.attained_s = sa = a + dt
                                job.attained_gpu_s = sa if g == a and job.held_gpus == 1 else g + dt * job.held_gpus
                            job.t_ref = t
                            job.executed = job.w.iterations
                            if job._segs:
                                pl = job._end_segment(t)
                            else:  # its only segment: not stored (``segments`` derives it)
                                pl = job.placement
                                job.seg_start = None
                            job.status, job.completion_s, job.held_gpus, job.rate = DONE, t, 0, 0.0
                            job.version += 1
                            # release(jid, pl), inline for one server of a plain cluster state
                            servers = pl.servers
                            if plain_cs and len(servers) == 1:
                                s = servers[0]
                                c = pl.counts[0]
                                fl[s] = free[s] = fl[s] + c
                                del jobs_on[s][jid]
                                cstate.busy_gpus -= c
                            else:
                                release(jid, pl)
                            del running[jid]
                            del active[jid]
                            finished_add(job)
                            if done_r is None:
                                on_completion(job, view)
                            else:  # Composed.on_completion, inline: the job's running entry out of its sorted list
                                e = done_entry.pop(jid)  # type: ignore[union-attr]
                                i = bisect_left(done_r, e[0], key=_first)
                                if i >= len(done_r) or done_r[i][1] is not job:
                                    raise RuntimeError(f"priority list out of sync for job {jid!r}")  # pragma: no cover
                                del done_r[i]
                            if job.w.tracked:
                                tracked_left -= 1
                            ncomp += 1
                        done += ncomp
                        progress_t = t
                        events += ncomp
                        dirty = True
                        if colocation:
                            self._recompute_rates(t)
                        if not lean:  # (a lean run keeps no time series)
                            ts_add(_PACK4(t, cstate.busy_gpus, len(active) - len(running) + len(pending)
                                          + (admission.holding if holds else 0), len(running)))
                        if done == n or (stop_tracked and tracked_left == 0):
                            break
                if done == n or (stop_tracked and tracked_left == 0):
                    self._finish()
                    return None
                # the heap's top (stale entries dropped: lazy deletion)
                while heap:
                    top = heap[0]
                    job = top[3]
                    if job.version != top[2] or job.status != RUNNING:
                        heappop(heap)
                    else:
                        break
                t_c = heap[0][0] if heap else inf
                t_a = arr_t[ai] if ai < n else inf
                if wake is None:
                    t_w = next_wakeup(now)
                else:
                    t_w = wake if wake > now else inf
                if t_w <= self._last_decision_s:  # a wake-up must lie after the last decision
                    t_w = inf
                if round_mode:
                    if fixed:  # the round found after an event (below) stands until the decision
                        view.now = now
                    elif (pending or len(active) > len(running) or (holds and admission.holding)
                            or policy.every_round):  # a job waits
                        view.now = now
                        fixed = dirty  # (nothing stops a job waiting but a decision)
                        if dirty:
                            floor_t = now
                        else:
                            floor_t = idle_until(view)
                            if floor_t < now:
                                floor_t = now
                        if floor_t < inf:
                            k = ceil(floor_t / R - 1e-9)
                            if k <= last_k:
                                k = last_k + 1
                            t_s = k * R
                            if t_s < now:  # the tolerance must not put a round before the clock: a completion
                                k += 1     # just after k R comes after round k (which a naive run holds first)
                                t_s = k * R
                        else:
                            t_s = inf
                    else:
                        t_s = inf
                else:
                    t_s = now if dirty else inf
                t = t_c if t_c < t_a else t_a
                if t_s < t:
                    t = t_s
                if t_w < t:
                    t = t_w
                if t == inf:
                    if active or pending or (holds and admission.holding):
                        raise SimulationStalled(f"{len(active)} jobs wait but nothing runs or arrives")
                    self._finish()
                    return None
                if max_t is not None and t > max_t:
                    self._finish()
                    return None
                if until is not None and t > until:
                    if until > now:
                        now = until
                        view.now = until
                    return None
                now = t
                # 1. completions at t (the heap's top is valid here: checked above)
                if t_c <= t:
                    ncomp = 0
                    while heap:
                        top = heap[0]
                        job = top[3]
                        if job.version != top[2] or job.status != RUNNING:
                            heappop(heap)
                            continue
                        if top[0] > t:
                            break
                        heappop(heap)
                        # the completion (what _complete does, inline: the hot path)
                        jid = job.id
                        # job.complete(t), inline (keep them alike): its service up to t, its work all done
                        t_ref = job.t_ref
                        if t > t_ref:
                            dt = t - t_ref
                            a, g = job.attained_s, job.attained_gpu_s
                            job.attained_s = sa = a + dt
                            job.attained_gpu_s = sa if g == a and job.held_gpus == 1 else g + dt * job.held_gpus
                        job.t_ref = t
                        job.executed = job.w.iterations
                        if job._segs:
                            pl = job._end_segment(t)
                        else:  # its only segment: not stored (``segments`` derives it)
                            pl = job.placement
                            job.seg_start = None
                        job.status, job.completion_s, job.held_gpus, job.rate = DONE, t, 0, 0.0
                        job.version += 1
                        # release(jid, pl), inline for one server of a plain cluster state
                        servers = pl.servers
                        if plain_cs and len(servers) == 1:
                            s = servers[0]
                            c = pl.counts[0]
                            fl[s] = free[s] = fl[s] + c
                            del jobs_on[s][jid]
                            cstate.busy_gpus -= c
                        else:
                            release(jid, pl)
                        del running[jid]
                        del active[jid]
                        finished_add(job)
                        if done_r is None:
                            on_completion(job, view)
                        else:  # Composed.on_completion, inline: the job's running entry out of its sorted list
                            e = done_entry.pop(jid)  # type: ignore[union-attr]
                            i = bisect_left(done_r, e[0], key=_first)
                            if i >= len(done_r) or done_r[i][1] is not job:
                                raise RuntimeError(f"priority list out of sync for job {jid!r}")  # pragma: no cover
                            del done_r[i]
                        if job.w.tracked:
                            tracked_left -= 1
                        ncomp += 1
                    if ncomp:
                        done += ncomp
                        progress_t = t
                        events += ncomp
                        dirty = True
                        if colocation:
                            self._recompute_rates(t)
                        if not lean:  # (a lean run keeps no time series)
                            ts_add(_PACK4(t, cstate.busy_gpus, len(active) - len(running) + len(pending)
                                          + (admission.holding if holds else 0), len(running)))
                # 2. arrivals at t
                if t_a <= t:
                    while ai < n and arr_t[ai] <= t:
                        pending.append(arrivals[ai] if ai < shared_from else self._own(ai))
                        ai += 1
                        events += 1
                    dirty = True
                    if fixed:
                        # the arrivals before the next completion, round and wake-up (and within the horizons)
                        # change nothing but the queue: taken at once, the clock at the last of them (as one
                        # iteration each would leave it)
                        lim = t_c if t_c < t_s else t_s
                        if t_w < lim:
                            lim = t_w
                        while ai < n and arr_t[ai] < lim and arr_t[ai] <= horizon:
                            pending.append(arrivals[ai] if ai < shared_from else self._own(ai))
                            now = t = arr_t[ai]
                            ai += 1
                            events += 1
                if bar is not None:
                    units = self._tracked_total - tracked_left if stop_tracked else done
                    if units - self._bar_done >= 200:
                        bar.update(units - self._bar_done)
                        self._bar_done = units
                # 3. a decision, if one is due at t
                if round_mode:
                    due = t >= t_s or t >= t_w
                    if due and t >= t_s:
                        last_k = max(last_k, math.floor(t / R + 1e-9))
                else:
                    due = dirty or t >= t_w
                if due:
                    self._admit(t)
                    self._due = True
                    return view
        finally:
            self._ai, self._now, self._last_k, self._events = ai, now, last_k, events
            self._done, self._tracked_left, self._dirty = done, tracked_left, dirty
            if progress_t is not None:
                self._progress_s, self._lost_launches = progress_t, 0

    def decide(self) -> Decision:
        """The policy's decision at the pending decision point (``policy.decide(view)``), for
        [`apply`][optsched.sim.engine.Simulator.apply]."""
        if not self._due:
            raise RuntimeError("no decision is due: call advance() first")
        decision = self.policy.decide(self.view)
        self._policy_decision = decision
        return decision

    def apply(self, decision: Decision) -> None:
        """Carry out ``decision`` at the pending decision point: preemptions, then launches (checked against
        the cluster's capacity and the jobs' states), then the policy's ``after_apply``, the collectors and the
        time series."""
        if not self._due:
            raise RuntimeError("no decision is due: call advance() first")
        if not isinstance(decision, Decision):
            raise ScheduleError(f"must be a Decision, got {type(decision).__name__}")
        by_policy = decision is self._policy_decision
        self._policy_decision = None
        self._due = False
        now, view = self._now, self.view
        view.now = now
        self._decisions += 1
        self._apply(decision, now)
        self.policy.after_apply(decision, view, by_policy)
        # after a preemption the victims may fit in what is left: decide again (next round / same instant)
        self._dirty = bool(decision.preempt)
        if now == self._last_decision_s:
            self._same_instant += 1
            if self._same_instant > 10_000:
                raise SimulationStalled(f"more than 10,000 decisions at t={now} (a preemption cycle?)")
        else:
            self._same_instant = 0
        self._last_decision_s = now
        if not self.lean:
            for c in self.collectors:
                c.collect(view)
            self._record(now)
        self._events += 1
        if by_policy:
            self._check_stall()

    def result(self) -> SimResult:
        """The [`SimResult`][optsched.sim.metrics.SimResult] of the run (so far, if it is not
        [`done`][optsched.sim.engine.Simulator.done])."""
        if not self._started:
            raise RuntimeError("call reset() (or run()) first")
        wall = self._wall_s if self._wall_s is not None else time.perf_counter() - self._wall0
        tsd = self._ts_frame
        if tsd is None:
            # a view of the records (the table copies each column: the run may go on), released at once (the
            # records cannot grow while a view of them exists)
            ts = np.frombuffer(self._ts, dtype=float).reshape(-1, 4)
            tsd = timeseries_frame(ts, self.cstate.total_gpus)
            del ts
            if self._finished:
                # the run is over: its records are kept as this table only (a million-job run's records took 64 MB
                # beside the table); each result gets a copy-on-write copy of it
                self._ts_frame, self._ts = tsd, array("d")
        tsd = tsd.copy(deep=False)
        # the job list itself once the run is over (nothing changes it then; a run going on replaces entries)
        res = SimResult.build(self.jobs if self._finished else self.jobs[:], tsd, end_s=self._now, events=self._events,
                              decisions=self._decisions, preemptions=self._preemptions,
                              migrations=self._migrations, wall_s=wall,
                              total_gpus=self.cstate.total_gpus, config=self.config,
                              custom={c.name: c.result() for c in self.collectors}, final=self._finished)
        res.policy, res.admission = self.policy, self.admission
        records = getattr(self.policy, "records", None)  # what the policy noted per job: more columns
        if records:
            res.add_records(records)
        for c in self.collectors:
            finish = getattr(c, "finish", None)  # collectors written before the hook may lack it
            if finish is not None:
                finish(res)
        return res

    def run(self) -> SimResult:
        """Simulate from scratch to the end with the policy's decisions; returns the
        [`SimResult`][optsched.sim.metrics.SimResult].

        Python's cyclic garbage collector is paused during the run (and restored after, also on an error): the
        engine allocates millions of short-lived objects that reference counting frees (a whole run leaves no
        cyclic garbage), and the collector's passes over the tens of thousands of live jobs took about a quarter
        of a 100,000-job run."""
        with paused_gc():
            self.reset()
            while self.advance() is not None:
                self.apply(self.decide())
            res = self.result()
            _settle_young()
            return res

    # -- copies --------------------------------------------------------------------------------------------
    def clone(self) -> Simulator:
        """An independent copy of this simulator in its current state (the same as ``copy.deepcopy(self)``):
        continuing the copy gives what continuing the original would, and leaves the original untouched.

        The workload, the cluster and the jobs' ``spec`` objects are immutable and shared; everything else
        (job and cluster state, policies, admission, performance model, collectors, the random generator) is
        copied. A progress bar is not: the copy runs without one.

        ```pycon
        >>> from optsched.problems.workload import Workload, WorkloadJob
        >>> wl = Workload((WorkloadJob("a", 0, 1, 10, 1.0), WorkloadJob("b", 5, 1, 10, 1.0)))
        >>> def finish(s):
        ...     while s.advance() is not None:
        ...         s.apply(s.decide())
        ...     return s.result().jobs["completion_s"].tolist()
        >>> sim = Simulator(wl, Cluster.homogeneous(1, 1), mode="event")
        >>> _ = sim.reset(); sim.apply(sim.decide()) if sim.advance() else None   # a starts at 0
        >>> twin = sim.clone()
        >>> finish(twin), sim.now, sim.done, finish(sim)
        ([10.0, 20.0], 0.0, False, [10.0, 20.0])

        ```
        """
        return copy.deepcopy(self)

    def __deepcopy__(self, memo: dict) -> Simulator:
        specs = self.__dict__.get("_specs")
        if specs is None:  # the jobs' spec objects, found once per simulator (immutable, shared by every copy)
            specs = self._specs = [w.spec for w in self.workload.jobs if w.spec is not None]
        for obj in (self.workload, self.cluster, specs, *specs):
            memo.setdefault(id(obj), obj)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        d = self.__dict__
        if d.get("_started"):
            # the job structures by hand (what-if switching copies a simulator hundreds of times; deepcopy's
            # per-element dispatch over every list of jobs was most of its cost). Shared: a finished job (never
            # written again: the engine writes jobs only through their lifecycle, and completion is the last
            # step) and a job that has not arrived, until it arrives in either simulator (``_shared_from``: each
            # takes its own copy then), so a copy for a short look-ahead pays only for the jobs in the system.
            # Copied: the jobs that have arrived and not finished (active, pending, held by admission)
            live = [*self.jstate.active.values(), *self._pending]
            if self.admission.holding:
                seen = {id(j) for j in live}
                live += [j for j in self._arrivals[:self._ai] if j.status != DONE and id(j) not in seen]
            pos = d.get("_pos")
            if pos is None:  # arrival position of every job (by workload index), found once per simulator
                pos = self._pos = array("q", bytes(8 * self._n))
                for p, j in enumerate(self._arrivals):
                    pos[j.index] = p
            jobs = self.jobs[:]
            arrivals = jobs if self._arrivals is self.jobs else self._arrivals[:]
            twin: dict[int, Job] = {}
            for j in live:
                c = memo.get(id(j))
                if c is None:
                    c = j.__deepcopy__(memo)
                twin[id(j)] = c
                jobs[j.index] = arrivals[pos[j.index]] = c
            new.jobs, new._arrivals, new._pos = jobs, arrivals, pos
            new._heap = [(t, q, v, twin.get(id(j), j)) for t, q, v, j in self._heap]  # (the same heap order)
            new._running = {k: twin[id(j)] for k, j in self._running.items()}
            new._pending = [twin[id(j)] for j in self._pending]
            js = memo[id(self.jstate)] = JobState()
            js.active = {k: twin[id(j)] for k, j in self.jstate.active.items()}
            js.finished = self.jstate.finished.copy()
            new.jstate = js
            new._shared_from = self._shared_from = self._ai
            done = {"jobs", "_arrivals", "_heap", "_running", "_pending", "jstate", "_shared_from", "_pos"}
        else:
            done = set()
        # the rest: plain values (most of the attributes) as they are, without deepcopy's dispatch; the view by
        # its fields
        nd = new.__dict__
        deepcopy, known = copy.deepcopy, memo.get
        for k, v in d.items():
            if k in done:
                continue
            if type(v) in _PLAIN:
                pass
            elif (c := known(id(v), _NIL)) is not _NIL:
                v = c  # shared or copied already (what deepcopy answers first, without its dispatch)
            elif k == "_bar":
                v = None
            elif k == "_ts":
                v = v[:]  # an array of numbers: a shallow copy is a deep one
            elif k == "_arr_t":
                pass  # the arrival times, read only (a finished run drops its reference): shared
            elif k == "view" and type(v) is SimView:
                view = memo[id(v)] = SimView.__new__(SimView)
                view.__dict__.update((f, _copy_value(x, memo)) for f, x in v.__dict__.items())
                v = view
            elif type(v) is list and not v:  # (no collectors)
                v = memo[id(v)] = []
            else:
                v = deepcopy(v, memo)
            nd[k] = v
        return new

    # -- bookkeeping ---------------------------------------------------------------------------------------
    def _finish(self) -> None:
        self._finished = True
        self._arr_t = []  # (read only while the run goes on: a million-job run's 8 MB)
        self._wall_s = time.perf_counter() - self._wall0
        self._close_bar()

    def _close_bar(self) -> None:
        bar = getattr(self, "_bar", None)
        if bar is not None:
            if self._finished:  # a finished run is 100 %, also when a horizon left jobs unfinished
                bar.update(bar.total - self._bar_done)
            bar.close()
            self._bar = None

    def _admit(self, now: float) -> None:
        view = self.view
        view.now = now
        admission = self.admission
        if self._pending or admission.holding:
            # an admission that admits every job as it is (accept-all) is not asked (its admit() copies the list)
            admitted = self._pending if admission.admits_all else admission.admit(self._pending, view)
            self._pending = []
            active = self.jstate.active
            for j in admitted:
                j.status, j.admitted_s, j.wait_since_s = QUEUED, now, now  # (Job.admit, inline)
                active[j.id] = j  # (JobState.add)
            if admitted:
                self.policy.on_admit(admitted, view)

    def _own(self, pos: int) -> Job:
        """The job arriving at position ``pos``, shared with a copy until now: replaced by a private copy."""
        job = self._arrivals[pos]
        own = job.__deepcopy__({})
        self._arrivals[pos] = self.jobs[own.index] = own
        return own

    def _push(self, job: Job) -> None:
        job.version += 1
        t = job.finish_time()
        if t < math.inf:
            self._seq += 1
            heapq.heappush(self._heap, (t, self._seq, job.version, job))

    def _heap_top(self) -> float:
        h = self._heap
        while h and (h[0][3].version != h[0][2] or h[0][3].status != RUNNING):
            heapq.heappop(h)
        return h[0][0] if h else math.inf

    def _recompute_rates(self, now: float) -> None:
        running = list(self._running.values())
        if not running:
            return
        # running jobs hold their placements: they are the RunningJobLike the model reads
        times = self.perf.iteration_times_s(cast("list[RunningJobLike]", running), self.cstate)
        for j in running:
            t_it = float(times[j.id])
            if not t_it > 0 or not math.isfinite(t_it):
                raise OptschedError(f"performance model gave iteration time {t_it!r} for job {j.id!r}")
            rate = 1.0 / t_it
            if rate != j.rate:
                j.sync(now)
                j.rate, j.iteration_now_s = rate, t_it
                self._push(j)

    def _complete(self, job: Job, now: float) -> None:
        self._progress_s, self._lost_launches = now, 0
        self.cstate.release(job.id, job.complete(now))
        del self._running[job.id]
        self.jstate.finish(job)
        self.policy.on_completion(job, self.view)
        self._done += 1
        if job.tracked:
            self._tracked_left -= 1

    def _apply(self, decision: Decision, now: float) -> None:
        changed = False
        for job in decision.preempt:
            if job.status != RUNNING:
                raise ScheduleError("preemption of a job that is not running", job=job.id)
            if job.stall_until < now:  # it progressed after its stall
                self._progress_s, self._lost_launches = now, 0
            else:
                self._lost_launches += 1
            self.cstate.release(job.id, job.preempt(now))
            del self._running[job.id]
            self._preemptions += 1
            changed = True
        elastic = self.policy.elastic
        if decision.migrate:
            self._migrate(decision, now, elastic)
            changed = True
        if decision.launch:
            # the launches (the hot path: what check_placement, _set_rate and _push do, inline)
            active, running, heap = self.jstate.active, self._running, self._heap
            occupy, stall_s = self.cstate.occupy, self.launcher.stall_s
            colocation = self.perf.colocation_aware
            alone_time_s = self.perf.alone_time_s
            launcher = self.launcher
            plain = type(launcher) is LaunchMechanism  # its stall_s, inline: start_s first, else restore + checkpoint
            start_s, resume_s = launcher.start_s, launcher.restore_s + launcher.checkpoint_s
            seq, inf, heappush = self._seq, math.inf, heapq.heappush
            # the constant model's alone_time_s, inline (the profiled time, times its factor across servers)
            cross = self.perf.cross_server_factor if type(self.perf) is ConstantPerf else None
            # ClusterState.occupy of a one-server placement, inline (its checks; a fault goes to occupy, which
            # names it; a subclass's occupy runs)
            cstate = self.cstate
            plain_cs = type(cstate) is ClusterState
            fl, free, jobs_on = cstate._fl, cstate.free, cstate.jobs_on
            n_servers = len(fl)
            for job, pl in decision.launch.items():
                jid = job.id
                if job.status != QUEUED or jid not in active:
                    raise ScheduleError(f"launch of a job that is not waiting (status {job.status})", job=jid)
                if type(pl) is not Placement or pl.gpus < 1 or (pl.gpus != job.gpus and not elastic):
                    check_placement(job, pl, elastic)  # raises, naming the fault (or passes a subclass)
                servers = pl.servers
                if plain_cs and len(servers) == 1:
                    s, c = servers[0], pl.counts[0]
                    if 0 <= s < n_servers and 0 < c <= fl[s]:
                        fl[s] = free[s] = fl[s] - c
                        jobs_on[s][jid] = c
                        cstate.busy_gpus += c
                    else:
                        occupy(jid, pl)
                else:
                    occupy(jid, pl)
                if plain:
                    stall = start_s if job.launches == 0 else resume_s
                else:
                    stall = stall_s(job, pl, now)
                if stall > self._max_stall_s:
                    self._max_stall_s = stall
                # job.launch(now, pl, stall), inline
                job.status, job.placement, job.t_ref, job.held_gpus = RUNNING, pl, now, pl.gpus
                job.stall_until = now + stall if stall else now
                job.launches += 1
                if job.first_start_s != job.first_start_s:  # (NaN: its first launch)
                    job.first_start_s = now
                job.seg_start = (now, job.executed)
                running[jid] = job
                if colocation:
                    job.rate = 0.0  # set by the co-location-aware recomputation below
                    continue
                if cross is None:
                    t_it = float(alone_time_s(job, pl))
                else:
                    t_it = job.w.iteration_time_s
                    if len(servers) > 1:
                        t_it = t_it * cross
                if not 0.0 < t_it < inf:  # (positive and finite; NaN fails too)
                    raise OptschedError(f"performance model gave iteration time {t_it!r} for job {job.id!r}")
                job.rate = rate = 1.0 / t_it
                job.iteration_now_s = t_it
                job.version = v = job.version + 1
                # job.finish_time(), inline
                t_ref, stall_until = job.t_ref, job.stall_until
                left = job.w.iterations - job.executed
                t = (t_ref if t_ref > stall_until else stall_until) + (left if left > 0.0 else 0.0) / rate
                if t < inf:
                    seq += 1
                    heappush(heap, (t, seq, v, job))
            self._seq = seq
            changed = True
        if changed and self.perf.colocation_aware:
            self._recompute_rates(now)

    def _set_rate(self, job: Job, pl: Placement) -> None:
        """A job just placed (launched or moved) on ``pl``: its rate from the model, or from the
        co-location-aware recomputation that follows (rate 0 until then)."""
        if not self.perf.colocation_aware:
            t_it = float(self.perf.alone_time_s(job, pl))
            if not t_it > 0 or not math.isfinite(t_it):
                raise OptschedError(f"performance model gave iteration time {t_it!r} for job {job.id!r}")
            job.rate, job.iteration_now_s = 1.0 / t_it, t_it
            self._push(job)
        else:
            job.rate = 0.0

    def _migrate(self, decision: Decision, now: float, elastic: bool) -> None:
        """Move running jobs without losing progress: every mover releases its GPUs before any takes its new
        ones (two jobs may swap), then each stalls ``migration_s`` on its new placement."""
        moves = list(decision.migrate.items())
        for job, pl in moves:
            if job.status != RUNNING:
                why = "it was preempted in the same decision" if job in decision.preempt else f"status {job.status}"
                raise ScheduleError(f"migration of a job that is not running ({why})", job=job.id)
            if job in decision.launch:
                raise ScheduleError("a job cannot be both launched and migrated in one decision", job=job.id)
            check_placement(job, pl, elastic)
        olds = {}
        # the movers' GPUs shifted on the servers whose count changes only, when the moves fit (else released and
        # occupied below, which names the fault); elastic jobs resized on hundreds of servers change a few
        # (with the builder's per-server GPUs of a move when it worked them out for these very placements)
        known = decision.moved
        triples, deltas = [], []
        for job, pl in moves:
            triples.append((job.id, job.placement, pl))
            m = known.get(job) if known else None
            deltas.append(m[2] if m is not None and m[0] is job.placement and m[1] is pl else None)
        shifted = self.cstate.shift(triples, deltas)  # type: ignore[arg-type]
        for job, _ in moves:
            olds[job.id] = job.leave(now)
            if not shifted:
                self.cstate.release(job.id, olds[job.id])
        for job, pl in moves:
            if not shifted:
                self.cstate.occupy(job.id, pl)
            stall = self.launcher.migration_stall_s(job, olds[job.id], pl, now)
            if stall > self._max_stall_s:
                self._max_stall_s = stall
            job.migrate(now, pl, stall)
            self._migrations += 1
            self._set_rate(job, pl)

    def _queued_count(self) -> int:
        return len(self.jstate.active) - len(self._running) + len(self._pending) + self.admission.holding

    def _record(self, now: float) -> None:
        self._ts.frombytes(_PACK4(now, self.cstate.busy_gpus, self._queued_count(), len(self._running)))

    def _check_stall(self) -> None:
        if (not self._running and self._ai >= self._n and (self.jstate.active or self.admission.holding)
                and self.policy.next_wakeup(self.view.now) == math.inf and not self._heap_top() < math.inf):
            raise SimulationStalled(f"{len(self.jstate.active) + self.admission.holding} jobs wait, nothing runs, "
                                    "nothing will arrive, and the policy started nothing")
        # preemption thrash: with a stall longer than the time between decisions, a policy may preempt every job
        # before its stall ends (LAS in rounds shorter than restore_s), and the run would never end. After the
        # last arrival, 100 launches lost and 100 windows of (longest stall + round) without any job progressing
        # end the run
        if self._lost_launches < 100 or self._ai < self._n:
            return
        now = self._now
        since = max(self._progress_s, self._arr_t[-1] if self._arr_t else 0.0)
        if now - since > 100.0 * (self._max_stall_s + (self.round_s if self.mode == "round" else 0.0)):
            if any(j.stall_until <= now for j in self._running.values()):
                self._progress_s, self._lost_launches = now, 0  # some job is past its stall: it progresses
                return
            raise SimulationStalled(
                f"no job progressed for {now - since:,.0f} s of simulated time (t={now:,.0f} s): every one of the "
                f"last {self._lost_launches} launches was preempted before its stall (up to {self._max_stall_s:g} s) "
                "ended, a preemption thrash; "
                "shorten the stall (restore_s, start_s, migration_s) below the round (round_s) or use a policy that "
                "lets a launched job run longer")
