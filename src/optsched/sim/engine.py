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

>>> from optsched.problems.workload import Workload, WorkloadJob
>>> from optsched.cluster import Cluster
>>> wl = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 10, 2, 50, 1.0)))
>>> res = Simulator(wl, Cluster.homogeneous(1, 2), mode="event").run()
>>> res.jobs["completion_s"].tolist()
[100.0, 150.0]
"""

from __future__ import annotations

import heapq
import math
import time
from typing import Sequence

import numpy as np

from ..cluster import Cluster
from ..errors import InstanceError, OptschedError, ScheduleError
from ..perf.base import PerfModel
from .base import (AdmissionPolicy, Composed, Decision, LaunchMechanism, MetricCollector, PlacementPolicy,
                   SchedulerPlacer, SchedulingPolicy)
from .state import DONE, QUEUED, RUNNING, ClusterState, Job, JobState, SimView


class SimulationStalled(OptschedError):
    """Jobs remain but the policy will never start one (nothing runs, nothing will arrive)."""


class Simulator:
    """One simulation run; build it, call :meth:`run` once, get a :class:`~optsched.sim.metrics.SimResult`."""

    def __init__(self, workload, cluster: Cluster, *, policy: SchedulerPlacer | None = None,
                 scheduling: SchedulingPolicy | None = None, placement: PlacementPolicy | None = None,
                 admission: AdmissionPolicy | None = None, perf: PerfModel | None = None,
                 launch: LaunchMechanism | None = None, mode: str = "round", round_s: float = 300.0,
                 stop_when_tracked_done: bool = False, collectors: Sequence[MetricCollector] = (),
                 progress: bool = False, max_time_s: float | None = None, config: dict | None = None,
                 seed: int | None = None):
        from ..perf.constant import ConstantPerf
        from .policies import AcceptAll, Consolidated, Fifo

        if mode not in ("round", "event"):
            raise InstanceError(f"must be 'round' or 'event', got {mode!r}", field="mode")
        if mode == "round" and (isinstance(round_s, bool) or not isinstance(round_s, (int, float))
                                or not round_s > 0 or not math.isfinite(round_s)):
            raise InstanceError(f"must be a positive number of seconds, got {round_s!r}", field="round_s")
        self.workload, self.cluster = workload, cluster
        self.policy = policy if policy is not None else Composed(scheduling or Fifo(), placement or Consolidated())
        self.admission = admission or AcceptAll()
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
        for wj in workload.jobs:
            if wj.gpus > total:
                raise InstanceError(f"needs {wj.gpus} GPUs but the cluster has {total}", field="gpus", job=wj.id)
        self._ran = False

    # -- bookkeeping ---------------------------------------------------------------------------------------
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

    def _end_segment(self, job: Job, now: float) -> None:
        t0, e0 = job.seg_start
        job.segments.append((t0, now, job.placement, job.executed - e0))
        job.seg_start = None

    def _recompute_rates(self, now: float) -> None:
        running = list(self._running.values())
        if not running:
            return
        times = self.perf.iteration_times_s(running, self.cstate)
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
        job.sync(now)
        job.executed = job.iterations
        self._end_segment(job, now)
        self.cstate.release(job.id, job.placement)
        job.status, job.completion_s = DONE, now
        job.version += 1
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
            job.sync(now)
            self._end_segment(job, now)
            self.cstate.release(job.id, job.placement)
            job.status, job.placement, job.rate = QUEUED, None, 0.0
            job.preemptions += 1
            job.wait_since_s = now
            job.version += 1
            del self._running[job.id]
            self._preemptions += 1
            changed = True
        elastic = self.policy.elastic
        for job, pl in decision.launch.items():
            if job.status != QUEUED or job.id not in self.jstate.active:
                raise ScheduleError(f"launch of a job that is not waiting (status {job.status})", job=job.id)
            if not elastic and pl.gpus != job.gpus:
                raise ScheduleError(f"placement has {pl.gpus} GPUs, the job needs {job.gpus}", job=job.id)
            self.cstate.occupy(job.id, pl)
            job.status, job.placement, job.t_ref = RUNNING, pl, now
            job.stall_until = now + self.launcher.stall_s(job, pl, now)
            job.launches += 1
            if math.isnan(job.first_start_s):
                job.first_start_s = now
            job.seg_start = (now, job.executed)
            self._running[job.id] = job
            changed = True
            if not self.perf.colocation_aware:
                t_it = float(self.perf.alone_time_s(job, pl))
                if not t_it > 0 or not math.isfinite(t_it):
                    raise OptschedError(f"performance model gave iteration time {t_it!r} for job {job.id!r}")
                job.rate, job.iteration_now_s = 1.0 / t_it, t_it
                self._push(job)
            else:
                job.rate = 0.0
        if changed and self.perf.colocation_aware:
            self._recompute_rates(now)

    def _queued_count(self) -> int:
        return len(self.jstate.active) - len(self._running) + len(self._pending) + self.admission.holding

    def _record(self, now: float) -> None:
        self._ts.append((now, self.cstate.busy_gpus, self._queued_count(), len(self._running)))

    def _decide(self, now: float) -> None:
        view = self.view
        view.now = now
        if self._pending or self.admission.holding:
            admitted = self.admission.admit(self._pending, view)
            self._pending = []
            for j in admitted:
                j.status, j.admitted_s, j.wait_since_s = QUEUED, now, now
                self.jstate.add(j)
            if admitted:
                self.policy.on_admit(admitted, view)
        decision = self.policy.decide(view)
        self._decisions += 1
        self._apply(decision, now)
        self.policy.after_apply(decision, view)
        # after a preemption the victims may fit in what is left: decide again (next round / same instant)
        self._dirty = bool(decision.preempt)
        if now == self._last_decision_s:
            self._same_instant += 1
            if self._same_instant > 10_000:
                raise SimulationStalled(f"more than 10,000 decisions at t={now} (a preemption cycle?)")
        else:
            self._same_instant = 0
        self._last_decision_s = now
        for c in self.collectors:
            c.collect(view)
        self._record(now)

    # -- the loop ------------------------------------------------------------------------------------------
    def run(self):
        from .metrics import SimResult

        if self._ran:
            raise RuntimeError("a Simulator runs once; build a new one")
        self._ran = True
        wall0 = time.perf_counter()
        self.cstate = ClusterState(self.cluster)
        self.jstate = JobState()
        self.view = SimView(0.0, self.cstate, self.jstate, self.perf, self.round_s if self.mode == "round" else None)
        self.view.extra["rng"] = np.random.default_rng(self.seed)
        self.view.extra["seed"] = self.seed
        jobs = [Job(w.id, w.arrival_s, w.gpus, w.iterations, w.iteration_time_s, index=i, model=w.model,
                    predicted_iterations=w.predicted_iterations, deadline_s=w.deadline_s, user=w.user,
                    group=w.group, spec=w.spec, tracked=w.tracked) for i, w in enumerate(self.workload.jobs)]
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival_s, i))
        arrivals = [jobs[i] for i in order]
        arr_t = [j.arrival_s for j in arrivals]
        n = len(jobs)
        self._heap: list = []
        self._seq = 0
        self._running: dict[str, Job] = {}
        self._pending: list[Job] = []
        self._ts: list[tuple[float, int, int, int]] = []
        self._done = self._preemptions = self._decisions = 0
        self._tracked_left = sum(1 for j in jobs if j.tracked)
        self._dirty = False
        self._last_decision_s = -math.inf
        self._same_instant = 0
        events = 0
        ai = 0
        now = 0.0
        last_k = -1
        R = self.round_s
        bar = None
        if self.progress:
            from tqdm import tqdm
            bar = tqdm(total=n, unit="job", desc=self.config.get("label", "simulate"), leave=False)
        bar_done = 0
        policy = self.policy
        while True:
            if self._done == n or (self.stop_when_tracked_done and self._tracked_left == 0):
                break
            t_c = self._heap_top()
            t_a = arr_t[ai] if ai < n else math.inf
            t_w = policy.next_wakeup(now)
            if t_w <= self._last_decision_s:  # a wake-up must lie after the last decision
                t_w = math.inf
            if self.mode == "round":
                waiting = (self._pending or self.admission.holding or policy.every_round
                           or len(self.jstate.active) > len(self._running))
                if waiting:
                    self.view.now = now
                    floor_t = now if self._dirty else max(now, policy.idle_until(self.view))
                    if floor_t < math.inf:
                        k = max(last_k + 1, math.ceil(floor_t / R - 1e-9))
                        t_s = k * R
                    else:
                        t_s = math.inf
                else:
                    t_s = math.inf
            else:
                t_s = now if self._dirty else math.inf
            t = min(t_c, t_a, t_s, t_w)
            if t == math.inf:
                if self.jstate.active or self._pending or self.admission.holding:
                    raise SimulationStalled(f"{len(self.jstate.active)} jobs wait but nothing runs or arrives")
                break
            if self.max_time_s is not None and t > self.max_time_s:
                break
            now = t
            # 1. completions at t
            ncomp = 0
            while self._heap and self._heap_top() <= t:
                _, _, _, job = heapq.heappop(self._heap)
                self._complete(job, t)
                ncomp += 1
            if ncomp:
                events += ncomp
                self._dirty = True
                if self.perf.colocation_aware:
                    self._recompute_rates(t)
                self._record(t)
            # 2. arrivals at t
            while ai < n and arr_t[ai] <= t:
                self._pending.append(arrivals[ai])
                ai += 1
                events += 1
                self._dirty = True
            # 3. a decision
            if self.mode == "round":
                if t >= t_s or t >= t_w:
                    last_k = max(last_k, math.floor(t / R + 1e-9)) if t >= t_s else last_k
                    self._decide(t)
                    events += 1
                    self._check_stall(ai, n)
            elif self._dirty or t >= t_w:
                self._decide(t)
                events += 1
                self._check_stall(ai, n)
            if bar is not None and self._done - bar_done >= 200:
                bar.update(self._done - bar_done)
                bar_done = self._done
        if bar is not None:
            bar.update(self._done - bar_done)
            bar.close()
        wall = time.perf_counter() - wall0
        return SimResult.build(jobs, self._ts, end_s=now, events=events, decisions=self._decisions,
                               preemptions=self._preemptions, wall_s=wall, total_gpus=self.cstate.total_gpus,
                               config=self.config, custom={c.name: c.result() for c in self.collectors})

    def _check_stall(self, ai: int, n: int) -> None:
        if (not self._running and ai >= n and (self.jstate.active or self.admission.holding)
                and self.policy.next_wakeup(self.view.now) == math.inf and not self._heap_top() < math.inf):
            raise SimulationStalled(f"{len(self.jstate.active) + self.admission.holding} jobs wait, nothing runs, "
                                    "nothing will arrive, and the policy started nothing")
