"""DRS, paper 003's dynamic resource scheduling (section 3), and NoRM (DRS without migration).

One decision of [`DRS`][optsched.sim.deadline.drs.DRS] at time T_curr (section 3.4, digest 003):

1. **Migration (3.3).** A node is *migratable* if it runs something and at most half its GPUs are busy. If more
   than half of the nodes are migratable, every running job is paused and re-placed: single-node jobs first,
   then cross-node jobs, each list by GPU count descending, with the allocation of 3.2 (best fit; fragments
   first). Every job keeps its GPU count and its progress (the simulator's [`Decision`][optsched.sim.base.Decision]
   ``migrate``); only jobs whose placement changes are moved. A single-node job that no longer fits on one
   node is placed across nodes (the fallback the text does not need to state: it cannot fail, the GPUs add up).
2. **Plan decision (3.1), per waiting job**, with T_start = T_curr: the single-node plans (N = 1..max c_free,
   B_intra) and, if more than one node has free GPUs, the cross-node plans (N = 2..sum c_free, B_inter), minus
   those failing the speed-up filter (eq. 11); four candidates: single/cross *expected* (T_end <= T_dl, the
   largest score, eq. 12) and single/cross *unexpected* (T_end > T_dl, the earliest end). The job's plan is the
   cross-node expected one if some node has 0 < c_free < N_GPU, N_GPU that plan's GPU count (the symbol's
   meaning everywhere else in the text: the plan then takes nodes too small to hold it, which the allocation
   fills first, and still meets the deadline), else the single-node expected one, else the same rule on the
   two unexpected ones. ``fragment="node"`` reads N_GPU as the node's GPU count instead (a node is a fragment
   if it is partly busy); ``docs/algorithms/drs.md`` compares the two.
3. **Job choice**: the jobs whose plan meets the deadline (Q_exp), least slack T_dl - T_end first; if there is
   none, the others (Q_unexp), earliest T_end first. The chosen job is allocated (3.2) and started.
4. Steps 2-3 repeat while GPUs are free and jobs wait (the text starts one job per call and calls again when
   GPUs are free and jobs wait: the same thing at one instant).

Ties: fewer GPUs first among equal scores, then arrival, then workload order. Every reading the text leaves
open is listed in ``docs/algorithms/drs.md``.

```pycon
>>> from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster
>>> from optsched.sim import simulate
>>> wl = DeadlineWorkload(paper_cluster(2, 4), (DeadlineJob("a", "ResNet-50", 0, 0.5, 2),
...                                              DeadlineJob("b", "VGG-16", 0, 1.0, 2)))
>>> run = simulate(wl, scheduler="drs")      # a is urgent: 6 GPUs across the nodes; b gets 2 of the 2 left on a node
>>> [(c.job, c.kind, c.plan.n_gpu, c.free) for c in run.policy.choices]
[('a', 'cross-expected', 6, (4, 4)), ('b', 'single-expected', 2, (0, 2))]
>>> run.summary["deadlines_met"], run.summary["r_trace"]
(2, 1.0)

```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...errors import InstanceError
from ...perf.ring import Plan, Score, candidate_plans, get_score
from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..state import QUEUED, RUNNING, Job, Placement, SimView
from .common import JobTimes, allocate, deadline_of

__all__ = ["DRS", "Choice", "MigrationEvent", "NoRM", "has_fragment", "migratable_nodes", "migration_plan",
           "plan_decision"]


@dataclass(frozen=True)
class Choice:
    """The plan decision for one job: the chosen ``plan`` and which candidate it was (``kind``), with all four
    candidates (None where absent) and the free GPUs per node it was decided on."""

    job: str
    time_s: float
    plan: Plan
    kind: str
    candidates: dict[str, Plan | None] = field(compare=False)
    free: tuple[int, ...] = ()


@dataclass(frozen=True)
class MigrationEvent:
    """One migration round: when, how many nodes were migratable, and the jobs moved (id -> (old, new))."""

    time_s: float
    migratable: int
    nodes: int
    moves: dict[str, tuple[dict[int, int], dict[int, int]]]


def has_fragment(free: np.ndarray, capacity: np.ndarray, plan: Plan, rule: str = "plan") -> bool:
    """Section 3.1, step 4's test "some node has 0 < c_free < N_GPU": N_GPU is the plan's GPU count
    (``rule="plan"``, the default) or the node's own GPU count (``rule="node"``: a partly busy node).

    ```pycon
    >>> import numpy as np
    >>> p = Plan(6, True, 10.0, 0.0, 20.0)
    >>> has_fragment(np.array([4, 4]), np.array([4, 4]), p), has_fragment(np.array([4, 4]), np.array([4, 4]), p, "node")
    (True, False)

    ```
    """
    if rule == "node":
        return bool(np.any((free > 0) & (free < capacity)))
    return bool(np.any((free > 0) & (free < plan.n_gpu)))


def plan_decision(jt: JobTimes, deadline_s: float, now: float, free: np.ndarray, capacity: np.ndarray,
                  score: Score, job_id: str = "", use_filter: bool = True, fragment: str = "plan") -> Choice | None:
    """Section 3.1 for one job on the free GPUs ``free`` (per node, of ``capacity``) at ``now``; None if no GPU
    is free."""
    ls, lm = candidate_plans(jt.run_time_s, deadline_s, now, free, jt.max_gpus, jt.useful if use_filter else None)

    def best(plans: list[Plan]) -> Plan | None:
        exp = [p for p in plans if p.expected]
        return max(exp, key=lambda p: (score(p), -p.n_gpu)) if exp else None

    def earliest(plans: list[Plan]) -> Plan | None:
        late = [p for p in plans if not p.expected]
        return min(late, key=lambda p: (p.end_s, p.n_gpu)) if late else None

    cand = {"single-expected": best(ls), "cross-expected": best(lm),
            "single-unexpected": earliest(ls), "cross-unexpected": earliest(lm)}
    # cross-node first when it uses a fragment, then single-node; expected before unexpected; a cross-node
    # plan without a fragment only if nothing else exists (cannot happen while a GPU is free: ls holds N = 1)
    for kind, needs_fragment in (("cross-expected", True), ("single-expected", False), ("cross-unexpected", True),
                                 ("single-unexpected", False), ("cross-expected", False),
                                 ("cross-unexpected", False)):
        p = cand[kind]
        if p is not None and (not needs_fragment or has_fragment(free, capacity, p, fragment)):
            return Choice(job_id, now, p, kind, cand, tuple(int(x) for x in free))
    return None


def migratable_nodes(view: SimView) -> list[int]:
    """Nodes that run something with at most half their GPUs busy (section 3.3)."""
    cs = view.cluster
    return [i for i in range(len(cs.capacity))
            if cs.jobs_on[i] and 2 * (int(cs.capacity[i]) - int(cs.free[i])) <= int(cs.capacity[i])]


def migration_plan(view: SimView) -> dict[Job, Placement]:
    """Section 3.3's re-placement of every running job (single-node jobs first, then cross-node ones, each by
    GPU count descending; ties by arrival and workload order), from an empty cluster. Returns only the jobs
    whose placement changes."""
    cs = view.cluster
    running = [j for j in view.jobs.active.values() if j.status == RUNNING]
    key: Callable[[Job], tuple] = lambda j: (-j.held_gpus, j.arrival_s, j.index)
    single = sorted((j for j in running if j.placement is not None and j.placement.n_servers == 1), key=key)
    cross = sorted((j for j in running if j.placement is not None and j.placement.n_servers > 1), key=key)
    free = cs.capacity.copy()
    moves: dict[Job, Placement] = {}
    for jobs, is_cross in ((single, False), (cross, True)):
        for j in jobs:
            n = j.held_gpus
            got = allocate(free, n, is_cross) if is_cross else (allocate(free, n, False) or allocate(free, n, True))
            assert got is not None  # the running jobs' GPUs add up to at most the cluster's
            for node, k in got.items():
                free[node] -= k
            pl = Placement.of(got)
            if pl != j.placement:
                moves[j] = pl
    return moves


class DRS(SchedulerPlacer):
    """Paper 003's DRS (module docstring): plan decision, least-slack job choice, best-fit allocation and
    migration (``migration=False`` is NoRM). ``score``: the plan score of eq. (12), a name in
    [`optsched.perf.ring.SCORES`][] or a callable (default ``slack-per-gpu``, P = (T_dl - T_end) / N).
    ``use_filter``: apply the speed-up filter (eq. 11). ``record``: keep every
    [`Choice`][optsched.sim.deadline.drs.Choice] and
    [`MigrationEvent`][optsched.sim.deadline.drs.MigrationEvent] in [`choices`][optsched.sim.deadline.drs.DRS.choices] /
    [`migrations`][optsched.sim.deadline.drs.DRS.migrations] (tests, analysis). ``fragment``: the
    reading of section 3.1's fragment test ([`has_fragment`][optsched.sim.deadline.drs.has_fragment])."""

    name = "drs"
    family = "deadline"
    elastic = True  # DRS chooses each job's GPU count

    def __init__(self, migration: bool = True, score: str | Score = "slack-per-gpu", use_filter: bool = True,
                 record: bool = True, fragment: str = "plan"):
        if fragment not in ("plan", "node"):
            raise InstanceError(f"must be 'plan' or 'node', got {fragment!r}", field="fragment")
        self.fragment = fragment
        self.migration = bool(migration)
        self.score = score
        self._score = get_score(score)
        self.use_filter = bool(use_filter)
        self.record = bool(record)
        self.choices: list[Choice] = []
        self.migrations: list[MigrationEvent] = []
        self._times: dict[str, tuple[float, JobTimes]] = {}

    def _times_of(self, job: Job, view: SimView) -> JobTimes:
        # a waiting job's remaining work does not change while it waits: cache by its executed work
        hit = self._times.get(job.id)
        done = job.executed_at(view.now)
        if hit is None or hit[0] != done:
            hit = (done, JobTimes.of(job, view.perf, view.now))
            self._times[job.id] = hit
        return hit[1]

    def decide(self, view: SimView) -> Decision:
        now = view.now
        b = DecisionBuilder(view, elastic=True)
        free = b.free  # the builder's: every move and launch below updates it
        cap = view.cluster.capacity
        if self.migration:
            mig = migratable_nodes(view)
            n_nodes = len(free)
            if 2 * len(mig) > n_nodes:
                moves = migration_plan(view)
                if moves:
                    b.move(moves)
                if self.record:
                    self.migrations.append(MigrationEvent(now, len(mig), n_nodes, {
                        j.id: (j.placement.as_dict() if j.placement else {}, pl.as_dict())
                        for j, pl in moves.items()}))
        waiting = [j for j in view.jobs.active.values() if j.status == QUEUED]
        while waiting and b.free_total > 0:
            best_exp = best_unexp = None
            for j in waiting:
                c = plan_decision(self._times_of(j, view), deadline_of(j), now, free, cap, self._score, j.id,
                                  self.use_filter, self.fragment)
                if c is None:
                    continue
                if c.plan.expected:
                    k = (c.plan.slack_s, j.arrival_s, j.index)
                    if best_exp is None or k < best_exp[0]:
                        best_exp = (k, j, c)
                else:
                    k = (c.plan.end_s, j.arrival_s, j.index)
                    if best_unexp is None or k < best_unexp[0]:
                        best_unexp = (k, j, c)
            pick = best_exp or best_unexp
            if pick is None:
                break
            _, job, choice = pick
            got = allocate(free, choice.plan.n_gpu, choice.plan.cross)
            assert got is not None  # a plan never asks for more than the free GPUs of its kind
            b.launch(job, Placement.of(got))
            waiting.remove(job)
            self._times.pop(job.id, None)
            if self.record:
                self.choices.append(choice)
        return b.build()

    def on_completion(self, job: Job, view: SimView) -> None:
        self._times.pop(job.id, None)



class NoRM(DRS):
    """DRS without the migration step (the paper's NoRM baseline)."""

    name = "norm"

    def __init__(self, score: str | Score = "slack-per-gpu", use_filter: bool = True, record: bool = True,
                 fragment: str = "plan"):
        super().__init__(migration=False, score=score, use_filter=use_filter, record=record, fragment=fragment)
