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
        self._pos: dict[str, int] = {}                # job id -> its row in _jobs, _rec, _gpus, _adm, _xm
        self._jobs: list[Job] = []                    # the active jobs by arrival (then index)
        self._keys: set[str] = set()
        self._rec = np.zeros((0, 0))                  # seconds run on every type, rows in _jobs' order
        self._running: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # see _running_jobs
        self._gpus = np.zeros(0, dtype=np.int64)
        self._adm = np.zeros(0)
        self._xm: np.ndarray | None = None            # the allocation, rows in _jobs' order
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
        self._running = None
        for d in (self._x, self._rows):
            d.pop(job.id, None)

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        if decision.launch or decision.preempt or decision.migrate:
            self._running = None  # jobs started, stopped or moved

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

    # -- the active jobs as arrays (rebuilt when the set of active jobs changes) ------------------------------
    def _rebuild(self, view: SimView) -> None:
        """``_jobs`` (active jobs by arrival, then index) and their arrays: GPUs, admission times and the time
        received on each type (``_rec``; ``_pos`` maps each job to its row)."""
        K = len(view.cluster.types)
        jobs = sorted(view.jobs.active.values(), key=lambda j: (j.arrival_s, j.index))
        pos = {j.id: i for i, j in enumerate(jobs)}
        rec = np.zeros((len(jobs), K))
        old = [(i, self._pos[j.id]) for i, j in enumerate(jobs) if j.id in self._pos]
        if old:
            new_i, old_i = np.array(old, dtype=np.int64).T
            rec[new_i] = self._rec[old_i]
        self._jobs, self._keys, self._rec, self._pos = jobs, set(pos), rec, pos
        self._running = None
        self._gpus = np.array([j.gpus for j in jobs], dtype=np.int64)
        self._adm = np.array([j.admitted_s for j in jobs], dtype=float)
        self._xm: np.ndarray | None = None  # the allocation as a matrix in _jobs' order (after the next solve)

    # -- bookkeeping of the time received on each type -------------------------------------------------------
    def _running_jobs(self, view: SimView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The running jobs (holding GPUs): their rows in ``_jobs``, GPU types and the times they took their
        placements (NaN if unknown). Kept while no decision starts, stops or moves a job and none completes
        (``after_apply``, ``on_completion``): only those change them."""
        if self._running is None:
            type_of = view.cluster.type_of
            idx, typ, since = [], [], []
            for i, j in enumerate(self._jobs):
                if j.status == RUNNING:
                    pl, t0 = j.placement, j.running_since_s
                    if pl is not None:
                        idx.append(i)
                        typ.append(type_of[pl.servers[0]])
                        since.append(math.nan if t0 is None else t0)
            self._running = (np.array(idx, dtype=np.int64), np.array(typ, dtype=np.int64),
                             np.array(since, dtype=float))
        return self._running

    def _account(self, view: SimView) -> tuple[np.ndarray, np.ndarray]:
        """Add the time each running job ran since the last decision to its type; return the rows (in
        ``_jobs``) of the running jobs and their types."""
        now = view.now
        ri, rt, st = self._running_jobs(view)
        if len(ri):
            ok = ~np.isnan(st)
            start = st if self._last_t is None else np.maximum(self._last_t, st)
            ok &= now > start
            self._rec[ri[ok], rt[ok]] += now - start[ok]
        self._last_t = now
        return ri, rt

    def received(self, job_id: str) -> np.ndarray:
        """Seconds job ``job_id`` has run on each GPU type so far (as of the last decision)."""
        return self._rec[self._pos[job_id]].copy()

    def allocation(self, job_id: str) -> np.ndarray:
        """The LP's time fractions of job ``job_id`` on each GPU type (the current allocation)."""
        return self._x[job_id].copy()

    # -- the decision ------------------------------------------------------------------------------------------
    def _choose(self, now: float, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The realisation's greedy (module docstring): (job index, type) pairs with ``x > 0`` by decreasing
        priority ``x / f`` (ties: larger x, then arrival), each job on the type of its first pair that still
        has its GPUs free. Returns the chosen jobs' indices and types in the order taken, and every job's
        chosen type (-1: none). Vectorised: while no pair is refused for want of GPUs the greedy takes the
        first pair of every job, so that prefix is found with cumulative sums; the rest is the plain loop."""
        X, rec, n = self._xm, self._rec, len(self._jobs)
        assert X is not None
        pi, pk = np.nonzero(X > _EPS)  # pairs in (job, type) order
        x = X[pi, pk]
        elapsed = now - self._adm[pi]
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(elapsed > 0, rec[pi, pk] / elapsed, 0.0)
            prio = np.where(frac > 0, x / frac, math.inf)
        o = np.lexsort((pk, pi, -x, -prio))
        ei, ek = pi[o], pk[o]
        m = len(o)
        first = np.zeros(m, dtype=bool)
        first[np.unique(ei, return_index=True)[1]] = True
        demand = np.zeros((m, len(cap)), dtype=np.int64)
        demand[np.arange(m), ek] = np.where(first, self._gpus[ei], 0)
        used = demand.cumsum(axis=0)
        over = first & (used[np.arange(m), ek] > cap[ek])
        stop = int(over.argmax()) if over.any() else m
        chosen = np.full(n, -1, dtype=np.int64)
        take = np.flatnonzero(first[:stop])
        chosen[ei[take]] = ek[take]
        if stop == m:
            return ei[take], ek[take], chosen
        free_t = cap - (used[stop - 1] if stop else 0)
        oi, ok_ = ei[take].tolist(), ek[take].tolist()
        gpus = self._gpus
        for i, k in zip(ei[stop:].tolist(), ek[stop:].tolist()):
            if chosen[i] >= 0 or gpus[i] > free_t[k]:
                continue
            chosen[i] = k
            free_t[k] -= gpus[i]
            oi.append(i)
            ok_.append(k)
        return np.array(oi, dtype=np.int64), np.array(ok_, dtype=np.int64), chosen

    def decide(self, view: SimView) -> Decision:
        active = view.jobs.active
        if self._dirty or self._xm is None or len(active) != len(self._jobs) or active.keys() != self._keys:
            self._rebuild(view)
        ri, rt = self._account(view)
        jobs = self._jobs
        # event mode: Gavel's own rounds are wake-ups
        self._wake = view.now + self.round_s if (view.round_s is None and jobs) else math.inf
        if not jobs:
            return Decision()
        if self._dirty or self._xm is None:  # the set of active jobs changed (_rebuild forgets _xm)
            self._solve(jobs, view)
            self._xm = np.array([self._x[j.id] for j in jobs])
        now, cs = view.now, view.cluster
        oi, ok, chosen = self._choose(now, cs.type_capacity)
        gone = ri[chosen[ri] != rt]                     # running jobs off their chosen type, by arrival
        running = np.zeros(len(jobs), dtype=bool)
        running[ri] = True
        running[gone] = False                           # the jobs that stay where they are
        launch = np.flatnonzero(~running[oi])
        if not len(gone) and not len(launch):
            return Decision()
        b = DecisionBuilder(view)
        for i in gone.tolist():
            b.preempt(jobs[i])
        for i, k in zip(oi[launch].tolist(), ok[launch].tolist()):
            j = jobs[i]
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
