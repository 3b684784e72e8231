"""Blox's scheduler abstractions as small base classes (digest 002, Table 6).

=====================  =========================================  ============================================
abstraction            input                                      output
=====================  =========================================  ============================================
AdmissionPolicy        new jobs, view                             accepted jobs (it may hold the rest)
SchedulingPolicy       view                                       priority list (highest priority first)
PlacementPolicy        priority list, view                        Decision(launch {job: Placement}, preempt)
SchedulerPlacer        view                                       Decision (combined scheduling + placement)
LaunchMechanism        job, placement / preemption, time          the stall before progress (restore overhead)
MetricCollector        view                                       -- (records what it wants)
=====================  =========================================  ============================================

The engine only talks to a :class:`SchedulerPlacer`; a scheduling policy plus a placement policy are glued
into one by :class:`Composed`. A combined module (Pollux-style, or A-SRPT with its own pending queue and its
own wake-up times) subclasses :class:`SchedulerPlacer` directly and may use the hooks ``on_admit``,
``on_completion`` and ``next_wakeup``.

>>> d = Decision(); d.launch, d.preempt
({}, [])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from .state import QUEUED, RUNNING, Job, Placement, SimView

if TYPE_CHECKING:  # pragma: no cover
    pass

# Blox's anti-starvation guard: a job that has not run for this long gets job_priority 1 (digest 002, [R])
STARVATION_S = 3600.0 * 1000


@dataclass
class Decision:
    """What a scheduling round decides: jobs to start (job -> placement) and jobs to suspend.

    A job both preempted and launched in one decision migrates (suspend + launch, as in Blox).
    """

    launch: dict[Job, Placement] = field(default_factory=dict)
    preempt: list[Job] = field(default_factory=list)


class AdmissionPolicy:
    """Decides which new jobs enter the system; it may hold jobs and release them later (its own queue)."""

    name = "admission"

    def admit(self, new_jobs: list[Job], view: SimView) -> list[Job]:
        raise NotImplementedError

    @property
    def holding(self) -> int:
        """Jobs held back, not yet admitted."""
        return 0

    def describe(self) -> dict:
        return {"name": self.name}


class SchedulingPolicy:
    """Orders the active jobs (queued and running), highest priority first.

    Subclasses give a sort ``key(job, now)``; the base adds Blox's anti-starvation bump (a job that has not
    run for ``starvation_s`` gets priority 1, the others 999, and priority sorts first) and breaks ties by
    arrival then workload order. ``time_invariant`` says the order changes only at events (arrivals,
    completions, preemptions), which lets the engine skip rounds in which nothing happened.
    """

    name = "scheduling"
    time_invariant = False

    def __init__(self, starvation_s: float = STARVATION_S):
        self.starvation_s = float(starvation_s)

    def key(self, job: Job, now: float):
        raise NotImplementedError

    def bump(self, job: Job, now: float) -> int:
        if job.status != RUNNING and now - job.wait_since_s >= self.starvation_s:
            job.priority = 1
        elif job.status == RUNNING:
            job.priority = 999  # the bump lasts until the job runs again
        return job.priority

    def next_bump_s(self, jobs: Iterable[Job]) -> float:
        """Earliest time a waiting job could get the bump (lets the engine skip idle rounds safely)."""
        return min((j.wait_since_s + self.starvation_s for j in jobs if j.status == QUEUED and j.priority != 1),
                   default=math.inf)

    def order(self, view: SimView) -> list[Job]:
        now = view.now
        return sorted(view.jobs.active.values(),
                      key=lambda j: (self.bump(j, now), self.key(j, now), j.arrival_s, j.index))

    def describe(self) -> dict:
        return {"name": self.name, "starvation_s": self.starvation_s}


class PlacementPolicy:
    """Walks the priority list and decides launches and preemptions (Blox's generic ``place()``, [R]).

    For each job not running, in priority order: find GPUs among the free ones (:meth:`find`); if none and
    ``preemptive``, suspend running jobs of *lower* priority from the lowest-priority end until the job fits
    (a dry run first: if even all of them would not make room, nobody is suspended); if it still does not
    fit, stop (``backfill=False``, Blox) or go on to the next job (``backfill=True``).
    """

    name = "placement"

    def __init__(self, preemptive: bool = True, backfill: bool = False):
        self.preemptive, self.backfill = bool(preemptive), bool(backfill)

    def find(self, job: Job, free: np.ndarray, view: SimView) -> Placement | None:
        raise NotImplementedError

    def place(self, order: Sequence[Job], view: SimView) -> Decision:
        free = view.cluster.free.copy()
        decision = Decision()
        preempted: set[str] = set()
        for idx, job in enumerate(order):
            if job.status == RUNNING and job.id not in preempted:
                continue
            if job.id in preempted:
                continue
            pl = self.find(job, free, view)
            if pl is None and self.preemptive:
                trial = free.copy()
                chosen: list[Job] = []
                for victim in reversed(order[idx + 1:]):
                    if victim.status != RUNNING or victim.id in preempted:
                        continue
                    vp = victim.placement
                    trial[list(vp.servers)] += vp.counts
                    chosen.append(victim)
                    pl = self.find(job, trial, view)
                    if pl is not None:
                        break
                if pl is not None:
                    free = trial
                    decision.preempt.extend(chosen)
                    preempted.update(v.id for v in chosen)
            if pl is not None:
                decision.launch[job] = pl
                free[list(pl.servers)] -= pl.counts
            elif not self.backfill:
                break
        return decision

    def describe(self) -> dict:
        return {"name": self.name, "preemptive": self.preemptive, "backfill": self.backfill}


class SchedulerPlacer:
    """A combined scheduling + placement module: the only interface the engine calls.

    Hooks: ``on_admit(jobs, view)`` when jobs are admitted, ``on_completion(job, view)`` when one finishes,
    ``next_wakeup(now)`` a time (> now) at which it wants a decision even if nothing happens (e.g. the end of
    a delay window); ``every_round`` asks for a decision every round even with no job waiting.
    """

    name = "policy"
    every_round = False
    elastic = False  # True: launches may use a GPU count other than the job's demand

    def decide(self, view: SimView) -> Decision:
        raise NotImplementedError

    def on_admit(self, jobs: Sequence[Job], view: SimView) -> None:
        pass

    def on_completion(self, job: Job, view: SimView) -> None:
        pass

    def next_wakeup(self, now: float) -> float:
        return math.inf

    def can_skip(self, view: SimView, changed: bool) -> bool:
        """True if a round with no event since the last one cannot change anything (engine speed-up)."""
        return False

    def describe(self) -> dict:
        return {"name": self.name}


class Composed(SchedulerPlacer):
    """A scheduling policy followed by a placement policy (Blox's Fig. 2 steps 7-8)."""

    def __init__(self, scheduling: SchedulingPolicy, placement: PlacementPolicy):
        self.scheduling, self.placement = scheduling, placement
        self.name = f"{scheduling.name}+{placement.name}"
        self._next_bump = math.inf

    def decide(self, view: SimView) -> Decision:
        order = self.scheduling.order(view)
        decision = self.placement.place(order, view)
        if self.scheduling.time_invariant:
            self._next_bump = self.scheduling.next_bump_s(view.jobs.active.values())
        return decision

    def can_skip(self, view: SimView, changed: bool) -> bool:
        return self.scheduling.time_invariant and not changed and view.now < self._next_bump

    def describe(self) -> dict:
        return {"scheduling": self.scheduling.describe(), "placement": self.placement.describe()}


class LaunchMechanism:
    """Launch and preemption (Blox's two mechanism abstractions), as the simulator models them.

    ``launch`` returns the stall (seconds without progress while holding the GPUs) of a job starting on a
    placement: ``restore_s`` when it resumes after a preemption (checkpoint-restore overhead, Blox section 7
    profiles it), ``start_s`` on its first launch. Preemption happens at an iteration boundary with no lost
    work (Blox's iteration-boundary checkpoint); ``checkpoint_s`` is charged at the next resume as well,
    because in the simulator the checkpoint is written while the GPUs are being handed over.
    """

    name = "checkpoint-restore"

    def __init__(self, restore_s: float = 0.0, checkpoint_s: float = 0.0, start_s: float = 0.0):
        for n, v in (("restore_s", restore_s), ("checkpoint_s", checkpoint_s), ("start_s", start_s)):
            if not isinstance(v, (int, float)) or v < 0 or v != v:
                from ..errors import InstanceError
                raise InstanceError(f"must be a non-negative number, got {v!r}", field=n)
        self.restore_s, self.checkpoint_s, self.start_s = float(restore_s), float(checkpoint_s), float(start_s)

    def stall_s(self, job: Job, placement: Placement, now: float) -> float:
        if job.launches == 0:
            return self.start_s
        return self.restore_s + self.checkpoint_s

    def describe(self) -> dict:
        return {"name": self.name, "restore_s": self.restore_s, "checkpoint_s": self.checkpoint_s,
                "start_s": self.start_s}


class MetricCollector:
    """Called after every scheduling round with the view (Blox's metric collection). Subclass and pass
    instances as ``simulate(..., collectors=[...])``; ``result()`` is stored in ``SimResult.custom``."""

    name = "metrics"

    def collect(self, view: SimView) -> None:
        pass

    def result(self):
        return None
