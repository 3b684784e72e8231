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

``lp_log`` records every LP solve of a run (time, jobs, rows, build and solve seconds, optimum, and whether the
closed form of one GPU type with room for every job answered it instead of GLOP: [`.lp`][optsched.sim.hetero.lp];
``method`` ``"knapsack (deferred)"``: one type without room, decided on the LP's exact optimum where that provably
decides as GLOP's answer, GLOP never needed; ``materialised`` counts the deferred LPs GLOP solved after all).

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
from array import array
from collections.abc import Iterator
from operator import attrgetter

import numpy as np

from ...errors import InstanceError
from ..base import Decision, DecisionBuilder, SchedulerPlacer
from ..state import RUNNING, Job, SimView
from .lp import GLOP_TOL, SOLVERS, Allocation, max_min_fairness, min_makespan
from .placement import bound_perf_ok, place_on_type, probe_placement

OBJECTIVES = ("max-min", "makespan")
_EPS = 1e-9
_FIELDS = tuple(attrgetter(f) for f in ("w.iterations", "executed", "rate", "t_ref", "stall_until"))
_STATUS = attrgetter("status")


def _remaining(jobs: list[Job], now: float) -> np.ndarray:
    """Every job's ``remaining_iterations(now)``, the same doubles (the same operations, elementwise), from its
    fields read by ``map`` instead of two method calls per job.

    ```pycon
    >>> j = Job("a", 0.0, 1, 100.0, 1.0)
    >>> j.status, j.executed, j.rate, j.t_ref = RUNNING, 10.0, 0.5, 4.0
    >>> _remaining([j], 10.0).tolist(), j.remaining_iterations(10.0)
    ([87.0], 87.0)

    ```
    """
    n = len(jobs)
    it, ex, rate, t_ref, stall = (np.fromiter(map(f, jobs), float, n) for f in _FIELDS)
    run = np.fromiter(map(RUNNING.__eq__, map(_STATUS, jobs)), bool, n)
    start = np.where(t_ref > stall, t_ref, stall)
    run &= now > start
    ex[run] = ex[run] + rate[run] * (now - start[run])
    left = it - ex
    return np.where(left > 0.0, left, 0.0)


class Gavel(SchedulerPlacer):
    """Gavel's LP allocation realised round by round (module docstring). ``objective``: ``"max-min"`` or
    ``"makespan"``; ``solver``: ``"glop"``, ``"highs"`` or ``"closed-form"``; ``aggregate`` and ``efficiency``: see
    [`.lp`][optsched.sim.hetero.lp]."""

    name = "gavel"
    every_round = True
    #: with GLOP on one GPU type without room: decide on the LP's exact optimum where that is certain to decide
    #: as GLOP's answer would, and solve with GLOP only where it might not (``docs/formulations/gavel.md``)
    defer = True
    #: check every such decision against GLOP's answer (tests; solves every deferred LP)
    verify = False

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
        self._rows: dict[str, np.ndarray] = {}       # job id -> throughput on every type (cached)
        # the active jobs by arrival (then index) and, row by row in that order, their GPUs, admission times,
        # throughputs (NaN until computed), seconds run on every type, current type (-1: not running) and the
        # time they took their placement (NaN: unknown), and the allocation; _pos: job id -> row
        self._jobs: list[Job] = []
        self._pos: dict[str, int] = {}
        self._gpus = np.zeros(0, dtype=np.int64)
        self._adm = np.zeros(0)
        self._T = np.zeros((0, 0))
        self._rec = np.zeros((0, 0))
        self._run_type = np.zeros(0, dtype=np.int64)
        self._run_since = np.zeros(0)
        self._xm: np.ndarray | None = None
        self._admitted: list[Job] = []                # admitted since the last _rebuild (on_admit)
        self._done: list[int] = []                    # rows completed since the last _rebuild (on_completion)
        self._dirty = True
        self._last_t: float | None = None
        self._wake = math.inf
        self._lp = _LpLog()                           # one row per LP solve (fields: _LP_FIELDS)
        self._alloc: Allocation | None = None
        self._glop: Allocation | None = None         # GLOP's answer to a deferred LP, once computed (verify)
        self.materialised = 0                         # deferred LPs that GLOP had to solve after all

    # -- hooks ---------------------------------------------------------------------------------------------
    def on_admit(self, jobs, view: SimView) -> None:
        self._dirty = True
        self._admitted.extend(jobs)

    def on_completion(self, job: Job, view: SimView) -> None:
        self._dirty = True
        self._rows.pop(job.id, None)
        r = self._pos.get(job.id)
        if r is not None:
            self._run_type[r] = -1
            self._done.append(r)

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        # the running jobs' types and start times change only here (and at completions): re-read the jobs a
        # decision touched (an outside driver's too)
        for j in (*decision.preempt, *decision.migrate, *decision.launch):
            r = self._pos.get(j.id)
            if r is not None:
                self._read_running(r, j, view)

    @property
    def last_allocation(self) -> Allocation | None:
        """The allocation in force (GLOP's answer: a deferred solve is done now)."""
        self._materialise()
        return self._alloc

    def next_wakeup(self, now: float) -> float:
        return self._wake if self._wake > now else math.inf

    def _read_running(self, r: int, j: Job, view: SimView) -> None:
        """Row ``r``'s running type and start time from job ``j``'s state."""
        if j.status == RUNNING and j.placement is not None:
            t0 = j.running_since_s
            self._run_type[r] = view.cluster.type_of[j.placement.servers[0]]
            self._run_since[r] = math.nan if t0 is None else t0
        else:
            self._run_type[r] = -1

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

    def _solve(self, view: SimView) -> None:
        """Solve the LP over ``_jobs`` (in their order) into ``_xm``."""
        cs, jobs = view.cluster, self._jobs
        if not bound_perf_ok(view.perf, cs):
            raise InstanceError("Gavel on a heterogeneous cluster needs a performance model that knows the GPU "
                                "type of every server: perf=HeteroPerf.for_cluster(cluster)", field="perf")
        T = self._T
        for r in np.flatnonzero(np.isnan(T[:, 0])).tolist():
            T[r] = self._row(jobs[r], view)
        z = self._gpus.astype(float)
        N = cs.type_capacity.astype(float)
        defer = self.solver == "glop" and self.defer
        if self.objective == "max-min":
            a = max_min_fairness(T, z, N, solver=self.solver, efficiency=self.efficiency, aggregate=self.aggregate,
                                 defer=defer)
        else:
            R = _remaining(jobs, view.now)
            a = min_makespan(T, z, N, R, solver=self.solver, efficiency=self.efficiency, defer=defer)
        self._xm = a.x
        self._alloc, self._glop = a, None
        if self.verify and a.glop is not None:
            g = self._glop_answer().x
            if not (np.all(np.abs(g - a.x) <= GLOP_TOL * (1.0 + a.x)) and np.all(g[a.x == 1.0] == 1.0)):
                raise AssertionError(f"Gavel at {view.now} s: GLOP's answer is not within {GLOP_TOL} (1 + x) of "
                                     "the optimum, or not 1.0 where it is 1.0")
        self._lp.append(view.now, len(jobs), a.rows, a.lps, a.build_s, a.solve_s, a.value,
                        bool(a.info.get("closed_form")),
                        a.info.get("method", self.solver) + (" (deferred)" if a.glop else ""))
        self._dirty = False

    def _glop_answer(self) -> Allocation:
        """GLOP's answer to the deferred LP in force (solved once)."""
        assert self._alloc is not None and self._alloc.glop is not None
        if self._glop is None:
            self._glop = self._alloc.glop()
        return self._glop

    def _materialise(self) -> None:
        """Replace a deferred allocation (the exact optimum standing in for GLOP's) by GLOP's answer, from now on
        (its log entry too)."""
        a = self._alloc
        if a is None or a.glop is None:
            return
        g = self._glop_answer()
        self._xm, self._alloc, self._glop = g.x, g, None
        self.materialised += 1
        self._lp.redo_last(g.lps, g.build_s, g.solve_s, g.value, False, "glop")

    @property
    def lp_log(self) -> list[dict]:
        """Every LP solve of the run so far, one dict each (fields in the module docstring). Kept as rows and
        built on request: a million-job run solves hundreds of thousands of LPs."""
        return [dict(zip(_LP_FIELDS, r)) for r in self._lp.rows()]

    def _order_certain(self, ps: np.ndarray, xs: np.ndarray, chosen: np.ndarray, launched: np.ndarray,
                       gpus: np.ndarray, cap: int) -> bool:
        """Whether the greedy's outcome on one GPU type (the chosen jobs, and the order of the launched ones) is
        the same under GLOP's answer as under the deferred one (``docs/formulations/gavel.md``, "deferring
        GLOP"), given GLOP's x within ``e = GLOP_TOL (1 + x)`` of the deferred x, and equal where that is 1.0
        (``e = 0``). The pairs come sorted by priority ``ps`` (decreasing; the infinite ones first, by ``xs``).
        Each pair's key (its priority, or x where that is infinite) lies within ``e / f = e ps / xs`` (or ``e``)
        of GLOP's; the sorted pairs split into groups wherever every key before lies above every key after,
        intervals included, so GLOP's order differs from this one only within groups, and only in groups with
        some x below 1. Such a group is safe when every member is chosen and at most one of them launched (all
        fit in any order), or when no member with x below 1 is chosen and each needs more GPUs than were free at
        the group's start (it is refused wherever it stands, and takes nothing from the others)."""
        m = len(ps)
        loose = xs != 1.0
        if m < 2 or not loose.any():
            return True
        e = np.where(loose, GLOP_TOL * (1.0 + xs), 0.0)
        fin = np.isfinite(ps)
        key = np.where(fin, ps, xs)
        with np.errstate(invalid="ignore"):
            err = np.where(fin, ps * (e / xs), e)
        cut = np.ones(m - 1, dtype=bool)                              # cut between pair i and i + 1
        n_inf = m - int(fin.sum())                                     # the infinite priorities come first
        for a, b in ((0, n_inf), (n_inf, m)):
            if b - a > 1:
                low = np.minimum.accumulate(key[a:b] - err[a:b])
                high = np.maximum.accumulate((key[a:b] + err[a:b])[::-1])[::-1]
                cut[a:b - 1] = low[:-1] > high[1:]
        group = np.concatenate(([0], np.cumsum(cut)))
        size = np.bincount(group)
        n_loose = np.bincount(group, weights=loose)
        n_ch = np.bincount(group, weights=chosen)
        n_l = np.bincount(group, weights=launched)
        bad = (size > 1) & (n_loose > 0) & ~((n_ch == size) & (n_l <= 1))
        if not bad.any():
            return True
        took = np.where(chosen, gpus, 0)
        start = np.flatnonzero(np.r_[True, cut])                      # each group's first pair
        free0 = cap - (took.cumsum()[start] - took[start])
        min_g = np.minimum.reduceat(np.where(loose, gpus, np.iinfo(np.int64).max), start)
        loose_chosen = np.bincount(group, weights=loose & chosen) > 0
        return not (bad & (loose_chosen | (min_g <= free0))).any()

    # -- the active jobs as arrays (updated when the set of active jobs changes) -----------------------------
    def _rebuild(self, view: SimView) -> None:
        """Bring ``_jobs`` and its arrays to the active jobs: drop the rows of the jobs gone, add the new jobs
        (their running state read from them), keep every array's rows of the others; forget the allocation."""
        active, pos, old = view.jobs.active, self._pos, self._jobs
        K = len(view.cluster.types)
        # the jobs gone and the new ones, as the hooks told them; checked against the active set (by keys, in
        # C), else found by scanning it
        alive = np.ones(len(old), dtype=bool)
        alive[self._done] = False
        keep = np.flatnonzero(alive).tolist()
        new = sorted({j.id: j for j in self._admitted if j.id in active and j.id not in pos}.values(),
                     key=lambda j: (j.arrival_s, j.index))
        gone = {old[r].id for r in self._done}
        self._admitted, self._done = [], []
        if len(keep) + len(new) != len(active) or active.keys() != (pos.keys() - gone) | {j.id for j in new}:
            keep = [i for i, j in enumerate(old) if j.id in active]
            new = sorted((j for j in active.values() if j.id not in pos), key=lambda j: (j.arrival_s, j.index))
        if not keep or not new or (old[keep[-1]].arrival_s, old[keep[-1]].index) < (new[0].arrival_s, new[0].index):
            jobs = [old[i] for i in keep] + new     # the common case: the new jobs arrived after the others
            src = np.array(keep + [-1] * len(new), dtype=np.int64)
        else:
            jobs = sorted([old[i] for i in keep] + new, key=lambda j: (j.arrival_s, j.index))
            src = np.array([pos.get(j.id, -1) for j in jobs], dtype=np.int64)
        has = src >= 0
        n = len(jobs)

        def carry(a: np.ndarray, fill: float | int) -> np.ndarray:
            out = np.full((n, *a.shape[1:]), fill, dtype=a.dtype)
            out[has] = a[src[has]]
            return out

        if self._T.shape[1:] != (K,):  # the first call
            self._T, self._rec = np.zeros((0, K)), np.zeros((0, K))
        self._gpus, self._adm = carry(self._gpus, 0), carry(self._adm, 0.0)
        self._T, self._rec = carry(self._T, math.nan), carry(self._rec, 0.0)
        self._run_type, self._run_since = carry(self._run_type, -1), carry(self._run_since, math.nan)
        self._jobs, self._pos = jobs, {j.id: i for i, j in enumerate(jobs)}
        fresh = np.flatnonzero(~has).tolist()
        for r in fresh:
            j = jobs[r]
            self._gpus[r], self._adm[r] = j.gpus, j.admitted_s
            self._read_running(r, j, view)
        self._xm = None

    # -- bookkeeping of the time received on each type -------------------------------------------------------
    def _account(self, view: SimView) -> tuple[np.ndarray, np.ndarray]:
        """Add the time each running job ran since the last decision to its type; return the rows (in
        ``_jobs``) of the running jobs and their types."""
        now = view.now
        ri = np.flatnonzero(self._run_type >= 0)
        rt = self._run_type[ri]
        if len(ri):
            st = self._run_since[ri]
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
        """The LP's time fractions of job ``job_id`` on each GPU type (the current allocation; GLOP's answer: a
        deferred solve is done now)."""
        self._materialise()
        assert self._xm is not None
        return self._xm[self._pos[job_id]].copy()

    # -- the decision ------------------------------------------------------------------------------------------
    def _choose(self, now: float, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """[`_greedy`][optsched.sim.hetero.gavel.Gavel._greedy] on the allocation in force. A deferred one (the
        exact optimum standing in for GLOP's answer) is used only where the outcome is certain to be GLOP's
        (``_order_certain``); otherwise GLOP solves the LP and its answer is used from now on."""
        X = self._xm
        assert X is not None
        oi, ok, chosen, ps, xs, rows = self._greedy(X, now, cap)
        if self._alloc is None or self._alloc.glop is None:
            return oi, ok, chosen
        launched = (chosen >= 0) & (chosen != self._run_type)
        if not self._order_certain(ps, xs, chosen[rows] >= 0, launched[rows], self._gpus[rows], int(cap[0])):
            self._materialise()
            assert self._xm is not None
            return self._greedy(self._xm, now, cap)[:3]
        if self.verify:  # the same chosen types, and the launches in the same order
            gi, gk, gc = self._greedy(self._glop_answer().x, now, cap)[:3]
            mine, glop = launched[oi], (gc >= 0)[gi] & (gc[gi] != self._run_type[gi])
            if not (np.array_equal(chosen, gc) and np.array_equal(oi[mine], gi[glop])):
                raise AssertionError(f"Gavel at {now} s: the deferred allocation decides otherwise than GLOP's")
        return oi, ok, chosen

    def _greedy(self, X: np.ndarray, now: float,
                cap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The realisation's greedy (module docstring) on allocation ``X``: (job, type) pairs with ``x > 0`` by
        decreasing priority ``x / f`` (ties: larger x, then arrival), each job on the type of its first pair that
        still has its GPUs free. Returns the chosen jobs' rows and types in the order taken, every job's chosen
        type (-1: none), and the pairs' priorities, x and job rows in priority order.
        Vectorised: while no pair is refused for want of GPUs the greedy takes the first pair of every job, so
        that prefix is found with cumulative sums; the rest is the plain loop."""
        rec, n = self._rec, len(self._jobs)
        pi, pk = np.nonzero(X > _EPS)  # pairs in (job, type) order
        x = X[pi, pk]
        elapsed = now - self._adm[pi]
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(elapsed > 0, rec[pi, pk] / elapsed, 0.0)
            prio = np.where(frac > 0, x / frac, math.inf)
        o = np.lexsort((pk, pi, -x, -prio))
        ps, xs = prio[o], x[o]
        ei, ek = pi[o], pk[o]
        m = len(o)
        if X.shape[1] == 1:
            first = np.ones(m, dtype=bool)      # one type: one pair per job
        else:
            # a job's pairs are consecutive in (job, type) order: its first in priority order has the least rank
            rank = np.empty(m, dtype=np.int64)
            rank[o] = np.arange(m)
            starts = np.flatnonzero(np.r_[True, pi[1:] != pi[:-1]]) if m else np.zeros(0, dtype=np.int64)
            first = np.zeros(m, dtype=bool)
            if m:
                first[np.minimum.reduceat(rank, starts)] = True
        demand = np.zeros((m, len(cap)), dtype=np.int64)
        demand[np.arange(m), ek] = np.where(first, self._gpus[ei], 0)
        used = demand.cumsum(axis=0)
        over = first & (used[np.arange(m), ek] > cap[ek])
        stop = int(over.argmax()) if over.any() else m
        chosen = np.full(n, -1, dtype=np.int64)
        take = np.flatnonzero(first[:stop])
        chosen[ei[take]] = ek[take]
        if stop == m:
            return ei[take], ek[take], chosen, ps, xs, ei
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
        return np.array(oi, dtype=np.int64), np.array(ok_, dtype=np.int64), chosen, ps, xs, ei

    def decide(self, view: SimView) -> Decision:
        active = view.jobs.active
        if self._dirty or self._xm is None or active.keys() != self._pos.keys():
            self._rebuild(view)
        ri, rt = self._account(view)
        jobs = self._jobs
        # event mode: Gavel's own rounds are wake-ups
        self._wake = view.now + self.round_s if (view.round_s is None and jobs) else math.inf
        if not jobs:
            return Decision()
        if self._dirty or self._xm is None:  # the set of active jobs changed (_rebuild forgets _xm)
            self._solve(view)
        now, cs = view.now, view.cluster
        X = self._xm
        assert X is not None
        if self._alloc is not None and self._alloc.glop is not None:
            # deferred: which x are above _EPS must not depend on GLOP's last digits
            if ((X > 0) & (X - GLOP_TOL * (1.0 + X) <= _EPS)).any():
                self._materialise()
                X = self._xm
                assert X is not None
        if X.shape[1] == 1:
            # one type: if the jobs with x > 0 are exactly the running ones and all fit at once, the greedy
            # chooses every one of them, whatever their priorities: nothing to do
            want = X[:, 0] > _EPS
            if np.array_equal(want, self._run_type >= 0) and int(self._gpus[want].sum()) <= cs.type_capacity[0]:
                return Decision()
        oi, ok, chosen = self._choose(now, cs.type_capacity)
        gone = ri[chosen[ri] != rt]                     # running jobs off their chosen type, by arrival
        stays = np.zeros(len(jobs), dtype=bool)
        stays[ri] = True
        stays[gone] = False                             # the running jobs that keep their GPUs
        launch = np.flatnonzero(~stays[oi])
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


_LP_FIELDS = ("t_s", "jobs", "rows", "lps", "build_s", "solve_s", "value", "closed_form", "method")


class _LpLog:
    """Gavel's LP log kept as columns (typed arrays; the method as an index into the few names used): a
    million-job run solves about 180,000 LPs, and a tuple of nine boxed fields per solve held about 200 bytes
    where these columns hold 57. [`Gavel.lp_log`][optsched.sim.hetero.gavel.Gavel.lp_log] reads the rows back:
    the same numbers (doubles and integers store exactly), ``closed_form`` a bool again."""

    __slots__ = ("_f", "_i", "_m", "_names")

    def __init__(self) -> None:
        self._f = array("d")     # t_s, build_s, solve_s, value per row
        self._i = array("q")     # jobs, rows, lps, closed_form per row
        self._m = array("H")     # the method's index in _names
        self._names: list[str] = []

    def __len__(self) -> int:
        return len(self._m)

    def append(self, t_s: float, jobs: int, rows: int, lps: int, build_s: float, solve_s: float, value: float,
               closed_form: bool, method: str) -> None:
        self._f.extend((t_s, build_s, solve_s, value))
        self._i.extend((jobs, rows, lps, closed_form))
        self._m.append(self._name(method))

    def redo_last(self, lps: int, build_s: float, solve_s: float, value: float, closed_form: bool,
                  method: str) -> None:
        """The last row's solve replaced (its time, jobs and rows kept)."""
        k = len(self._m) - 1
        self._f[4 * k + 1:4 * k + 4] = array("d", (build_s, solve_s, value))
        self._i[4 * k + 2:4 * k + 4] = array("q", (lps, closed_form))
        self._m[k] = self._name(method)

    def rows(self) -> Iterator[tuple]:
        f, i, names = self._f, self._i, self._names
        for k, m in enumerate(self._m):
            t_s, build_s, solve_s, value = f[4 * k:4 * k + 4]
            jobs, rows, lps, closed = i[4 * k:4 * k + 4]
            yield t_s, jobs, rows, lps, build_s, solve_s, value, bool(closed), names[m]

    def _name(self, method: str) -> int:
        try:
            return self._names.index(method)
        except ValueError:
            self._names.append(method)
            return len(self._names) - 1


class GavelMakespan(Gavel):
    """[`Gavel`][optsched.sim.hetero.gavel.Gavel] with the makespan objective (``scheduler="gavel-makespan"``)."""

    name = "gavel-makespan"

    def __init__(self, solver: str = "glop", efficiency: bool = True, round_s: float = 300.0):
        super().__init__("makespan", solver=solver, aggregate=False, efficiency=efficiency, round_s=round_s)


__all__ = ["OBJECTIVES", "Gavel", "GavelMakespan"]
