"""Gavel (Narayanan et al., OSDI 2020) as Blox composes it: an allocation LP over GPU types, realised round by round.

Every rule is in ``docs/algorithms/gavel.md``; the LPs in ``docs/formulations/gavel.md`` and
[`.lp`][optsched.sim.hetero.lp].

* **Allocation.** Whenever the set of active jobs changes (an admission or a completion),
  [`Gavel`][optsched.sim.hetero.gavel.Gavel] solves
  its LP over the active jobs (queued and running): ``objective="max-min"`` (heterogeneity-aware LAS, Blox's
  "Gavel") or ``"makespan"``; the throughput of job m on type k is ``1 / iteration time`` of m on its requested
  GPUs of type k (from the run's performance model: [`HeteroPerf`][optsched.perf.hetero.HeteroPerf] bound to the
  cluster on a heterogeneous cluster).
* **Realisation** (Gavel section 5, "round-based scheduling"). Every round (``every_round``: Gavel time-slices,
  so it decides every round even when no job waits) each (job, type) pair with ``x[m, k] > 0`` gets the priority
  ``x[m, k] / f[m, k]``, ``f`` the fraction of the job's time since its admission that it spent on type k
  (infinite while it is 0); pairs are taken in decreasing priority (ties: larger ``x``, then arrival) and a job
  is scheduled on the type of its first pair that still has its GPUs free; a job runs on at most one type per
  round. Jobs that keep their type keep their GPUs; the others are preempted (a change of type is a restart).
  So the achieved time fractions track the LP's (tested on a static job set).
* **Rounds.** In round mode, the simulator's rounds; in event mode, Gavel asks for a decision ``round_s``
  (default 300 s) after each of its decisions (``next_wakeup``), besides the arrivals and completions.
* **Placement** inside a type: one server if one has room (best fit), else whole servers (largest first), else
  the first free GPUs of the type (Blox's Gavel places with "maximize consolidation").

``lp_log`` records every LP solve of a run (time, jobs, rows, build and solve seconds, optimum).

```pycon
>>> from optsched.sim import simulate, Workload, WorkloadJob
>>> from optsched.cluster import parse_cluster
>>> from optsched.perf.hetero import HeteroPerf
>>> cl = parse_cluster("V100:1x1,K80:1x1")
>>> wl = Workload((WorkloadJob("r50", 0, 1, 3600, 1.0, model="ResNet-50/ImageNet"),
...                WorkloadJob("a3c", 0, 1, 3600, 1.0, model="A3C/Pong")))
>>> g = Gavel()
>>> r = simulate(wl, cl, scheduler=g, perf=HeteroPerf.for_cluster(cl))
>>> [round(e["value"], 4) for e in g.lp_log], r.jobs["completion_s"].round().tolist()
([1.0, 1.8182], [5760.0, 4560.0])

```

(Both jobs must run all the time to use both GPUs, so each alternates between them: t* = 1, the equal share.
Once A3C is done, ResNet-50 alone gets the V100, 1.82 times its equal share of 0.55 iterations/s.)
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InstanceError
from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..state import RUNNING, Job, SimView
from .lp import SOLVERS, Allocation, max_min_fairness, min_makespan
from .placement import bound_perf_ok, place_on_type, probe_placement

OBJECTIVES = ("max-min", "makespan")
_EPS = 1e-9


class Gavel(SchedulerPlacer):
    """Gavel's LP allocation realised round by round (module docstring). ``objective``: ``"max-min"`` or
    ``"makespan"``; ``solver``: ``"glop"`` or ``"highs"``; ``aggregate`` and ``efficiency``: see
    [`.lp`][optsched.sim.hetero.lp]."""

    name = "gavel"
    every_round = True

    def __init__(self, objective: str = "max-min", solver: str = "glop", aggregate: bool = True,
                 efficiency: bool = True, round_s: float = 300.0):
        if objective not in OBJECTIVES:
            raise InstanceError(f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}", field="objective")
        if solver not in SOLVERS:
            raise InstanceError(f"must be one of {', '.join(SOLVERS)}, got {solver!r}", field="solver")
        self.objective, self.solver = objective, solver
        self.aggregate, self.efficiency = bool(aggregate), bool(efficiency)
        if isinstance(round_s, bool) or not isinstance(round_s, (int, float)) or not 0 < round_s < math.inf:
            raise InstanceError(f"must be a positive number of seconds, got {round_s!r}", field="round_s")
        self.round_s = float(round_s)
        self._x: dict[str, np.ndarray] = {}
        self._rows: dict[str, np.ndarray] = {}       # job id -> throughput on every type (cached)
        self._received: dict[str, np.ndarray] = {}   # job id -> seconds run on every type
        self._dirty = True
        self._last_t: float | None = None
        self._wake = math.inf
        self.lp_log: list[dict] = []
        self.last_allocation: Allocation | None = None

    # -- hooks ---------------------------------------------------------------------------------------------
    def on_admit(self, jobs, view: SimView) -> None:
        self._dirty = True

    def on_completion(self, job: Job, view: SimView) -> None:
        self._dirty = True
        for d in (self._x, self._rows, self._received):
            d.pop(job.id, None)

    def next_wakeup(self, now: float) -> float:
        return self._wake if self._wake > now else math.inf

    # -- the LP ----------------------------------------------------------------------------------------------
    def _row(self, job: Job, view: SimView) -> np.ndarray:
        row = self._rows.get(job.id)
        if row is None:
            cs, perf = view.cluster, view.perf
            row = np.zeros(len(cs.types))
            time_on = getattr(perf, "time_on", None)
            for k, t in enumerate(cs.types):
                if (job.gpu_type and job.gpu_type != t) or job.gpus > cs.type_capacity[k]:
                    continue
                if time_on is not None:
                    n_srv = probe_placement(cs, k, job.gpus).n_servers
                    it = float(time_on(job, t, job.gpus, n_srv))
                else:
                    it = float(perf.alone_time_s(job, probe_placement(cs, k, job.gpus)))
                row[k] = 1.0 / it
            if not row.any():
                raise InstanceError(f"needs {job.gpus} GPUs of one type; the largest type has "
                                    f"{int(cs.type_capacity.max())} (Gavel runs a job on one type at a time)",
                                    field="gpus", job=job.id)
            self._rows[job.id] = row
        return row

    def _solve(self, jobs: list[Job], view: SimView) -> None:
        cs = view.cluster
        if not bound_perf_ok(view.perf, cs):
            raise InstanceError("Gavel on a heterogeneous cluster needs a performance model that knows the GPU "
                                "type of every server: perf=HeteroPerf.for_cluster(cluster)", field="perf")
        T = np.array([self._row(j, view) for j in jobs])
        z = np.array([j.gpus for j in jobs], dtype=float)
        N = cs.type_capacity.astype(float)
        if self.objective == "max-min":
            a = max_min_fairness(T, z, N, solver=self.solver, efficiency=self.efficiency, aggregate=self.aggregate)
        else:
            R = np.array([j.remaining_iterations(view.now) for j in jobs])
            a = min_makespan(T, z, N, R, solver=self.solver, efficiency=self.efficiency)
        self._x = {j.id: a.x[i] for i, j in enumerate(jobs)}
        self.last_allocation = a
        self.lp_log.append({"t_s": view.now, "jobs": len(jobs), "rows": a.rows, "lps": a.lps,
                            "build_s": a.build_s, "solve_s": a.solve_s, "value": a.value})
        self._dirty = False

    # -- bookkeeping of the time received on each type -------------------------------------------------------
    def _account(self, view: SimView) -> None:
        now, cs = view.now, view.cluster
        K = len(cs.types)
        for j in view.jobs.active.values():
            rec = self._received.get(j.id)
            if rec is None:
                rec = self._received[j.id] = np.zeros(K)
            since = j.running_since_s
            if j.status == RUNNING and j.placement is not None and since is not None:
                start = since if self._last_t is None else max(self._last_t, since)
                if now > start:
                    rec[int(cs.type_of[j.placement.servers[0]])] += now - start
        self._last_t = now

    def received(self, job_id: str) -> np.ndarray:
        """Seconds job ``job_id`` has run on each GPU type so far (as of the last decision)."""
        return self._received[job_id].copy()

    def allocation(self, job_id: str) -> np.ndarray:
        """The LP's time fractions of job ``job_id`` on each GPU type (the current allocation)."""
        return self._x[job_id].copy()

    # -- the decision ------------------------------------------------------------------------------------------
    def decide(self, view: SimView) -> Decision:
        self._account(view)
        jobs = sorted(view.jobs.active.values(), key=lambda j: (j.arrival_s, j.index))
        # event mode: Gavel's own rounds are wake-ups
        self._wake = view.now + self.round_s if (view.round_s is None and jobs) else math.inf
        if not jobs:
            return Decision()
        if self._dirty or any(j.id not in self._x for j in jobs):
            self._solve(jobs, view)
        now, cs = view.now, view.cluster
        entries = []
        for pos, j in enumerate(jobs):
            x = self._x[j.id]
            rec = self._received[j.id]
            elapsed = now - j.admitted_s
            for kk in np.flatnonzero(x > _EPS):
                frac = rec[kk] / elapsed if elapsed > 0 else 0.0
                prio = x[kk] / frac if frac > 0 else math.inf
                entries.append((-prio, -x[kk], pos, int(kk)))
        entries.sort()
        free_t = cs.type_capacity.copy()
        chosen: dict[str, int] = {}
        order: list[tuple[Job, int]] = []
        for _, _, pos, k in entries:
            j = jobs[pos]
            if j.id in chosen or j.gpus > free_t[k]:
                continue
            chosen[j.id] = k
            free_t[k] -= j.gpus
            order.append((j, k))
        b = DecisionBuilder(view)
        for j in jobs:
            if j.status == RUNNING and j.placement is not None:
                if chosen.get(j.id) != int(cs.type_of[j.placement.servers[0]]):
                    b.preempt(j)
        gone = {j.id for j in b.decision.preempt}
        stay = {j.id for j in jobs if j.status == RUNNING and j.id not in gone}
        for j, k in order:
            if j.id in stay:
                continue
            pl = place_on_type(cs, b.free, k, j.gpus)
            if pl is None:  # pragma: no cover - the counts per type add up
                continue
            b.launch(j, pl)
        return b.build()


class GavelMakespan(Gavel):
    """[`Gavel`][optsched.sim.hetero.gavel.Gavel] with the makespan objective (``scheduler="gavel-makespan"``)."""

    name = "gavel-makespan"

    def __init__(self, solver: str = "glop", efficiency: bool = True, round_s: float = 300.0):
        super().__init__("makespan", solver=solver, aggregate=False, efficiency=efficiency, round_s=round_s)


__all__ = ["OBJECTIVES", "Gavel", "GavelMakespan"]
