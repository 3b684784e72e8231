"""Paper 003's offline problem exactly: the most (weighted) deadlines met, with GPU counts and nodes chosen.

The problem (``docs/formulations/deadline.md``): every job arrives at r_j with deadline d_j (eq. 7); a schedule
picks, for each job, whether it runs, its *node vector* (GPUs per node; its run time is eq. 1 with B_intra
on one node, B_inter on several) and its start on the time grid of ``time_unit_s`` (the instance's by
default); jobs run without preemption, every node holds at most its GPUs at every instant; maximise the number
of deadlines met (``weights="count"``) or their sum weighted by 1/alpha (``"urgency"``). A job that cannot
meet its deadline is left out (it would only take GPUs from others).

* [`solve_deadline_cpsat`][optsched.exact.deadline.solve_deadline_cpsat]: CP-SAT, one optional fixed-size interval per
  (job, node vector) sharing the
  job's start, one cumulative per node. Registered as ``deadline-cpsat`` (the problem's default).
* [`brute_force_deadline`][optsched.exact.deadline.brute_force_deadline]: the independent check: depth-first over (job,
  node vector) in order of start
  time, each job at its earliest grid start beside those placed before it (serial schedule generation),
  branch and bound. Registered as ``deadline-brute`` (tiny instances).
* [`deadline_upper_bound`][optsched.exact.deadline.deadline_upper_bound]: an upper bound for instances too large to
  solve, valid for *every* schedule,
  preemptive, migrating and elastic ones included (an energy relaxation; proof in the formulation). The
  exact models are bounded by it, and so is every simulated policy.

Format 2 ([`FORMAT_V2`][optsched.problems.deadline.FORMAT_V2]): explicit deadlines and measured throughput rows are
accepted (a row need not grow with the count: each node vector's time is read from the row, so a slower count is
simply never worth choosing, and the energy bound takes every count's speed as it is). Best-effort jobs are
refused by the exact models ([`check_exact`][optsched.exact.deadline.check_exact]: they have no deadline to meet)
and left out of the upper bound, as out of the ratio it bounds.

Grid rounding: a start k (time k x unit) is allowed from ceil(r_j / unit); a node vector of run time T lasts
ceil(T / unit) units on its nodes (exact for starts on the grid: a job started later on the grid cannot use
those GPUs before) and meets the deadline iff k <= floor((d_j + tol - T) / unit), ``tol`` the package's
[`DEADLINE_TOL_S`][optsched.problems.deadline.DEADLINE_TOL_S]. Simulations in round mode with ``round_s = unit`` start
jobs on that grid too, so non-preemptive policies can be compared with the grid optimum exactly.

```pycon
>>> from optsched.generators.deadline import tiny_deadline_workload
>>> wl = tiny_deadline_workload(4, seed=5)
>>> cp, bf = solve_deadline_cpsat(wl, time_limit=20), brute_force_deadline(wl)
>>> cp.status.value, cp.objective == bf.objective, cp.objective <= deadline_upper_bound(wl).value
('optimal', True, True)

```
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InstanceError, ScheduleError
from ..evaluators.deadline import evaluate
from ..problems.deadline import (
    DEADLINE_TOL_S,
    DeadlineJob,
    DeadlineWorkload,
    job_weight,
    job_weight_int,
    weight_scale,
)
from ..registry import algorithm
from ..result import Result, Schedule, ScheduledJob, SolveStatus
from . import _cpsat

if TYPE_CHECKING:  # pragma: no cover - OR-Tools is imported by the solvers themselves
    from ortools.sat.python import cp_model

__all__ = ["MAX_BRUTE_JOBS", "DeadlineBound", "GridMode", "brute_force_deadline", "deadline_time_indexed_bound",
           "deadline_upper_bound", "grid_modes", "min_energy_gpu_s", "solve_deadline_cpsat", "speed_hull"]

MAX_BRUTE_JOBS = 5


# -- grid modes ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridMode:
    """One way to run a job: ``vector`` (GPUs per node, in node order), its run time (s), its length in grid
    units and the latest grid start that meets the deadline."""

    vector: tuple[int, ...]
    run_time_s: float
    units: int
    latest: int

    @property
    def n_gpu(self) -> int:
        return sum(self.vector)

    @property
    def cross(self) -> bool:
        return sum(1 for c in self.vector if c) > 1


def check_exact(inst: DeadlineWorkload) -> None:
    """Raise [`InstanceError`][optsched.errors.InstanceError] naming the first job the exact models cannot take:
    a best-effort job (no deadline: the models maximise deadlines met; drop it, e.g.
    ``inst.with_jobs(j for j in inst.jobs if not j.best_effort)``).

    ```pycon
    >>> from optsched.problems.deadline import paper_cluster
    >>> check_exact(DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "TSN", 0, epochs=1, best_effort=True),)))
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: best_effort (job 'a'): a best-effort job has no deadline: the exact models \
maximise deadlines met (drop it: inst.with_jobs(j for j in inst.jobs if not j.best_effort))

    ```
    """
    for j in inst.jobs:
        if j.best_effort:
            raise InstanceError("a best-effort job has no deadline: the exact models maximise deadlines met (drop "
                                "it: inst.with_jobs(j for j in inst.jobs if not j.best_effort))", field="best_effort",
                                job=j.id)


def _earliest(job: DeadlineJob, unit: float) -> int:
    return max(0, math.ceil(job.arrival_s / unit - 1e-9))


def grid_modes(inst: DeadlineWorkload, job: DeadlineJob, unit: float, prune: bool = True) -> list[GridMode]:
    """Every node vector of ``job`` that can meet its deadline on the grid of ``unit`` seconds; with ``prune``,
    minus the dominated ones: a vector is dropped if another uses at most as many GPUs on every node (and
    fewer in total), lasts no more units and allows a start at least as late (swapping it in keeps any
    schedule feasible and on time).

    ```pycon
    >>> from optsched.problems.deadline import paper_cluster
    >>> wl = DeadlineWorkload(paper_cluster(2, 2), (DeadlineJob("a", "AlexNet", 0, 1.5, 1),))
    >>> [m.vector for m in grid_modes(wl, wl.jobs[0], 60.0)]        # AlexNet never gains from a 2nd GPU
    [(0, 1), (1, 0)]

    ```
    """
    caps = inst.capacities
    e = _earliest(job, unit)
    out = []
    for vec in itertools.product(*(range(c + 1) for c in caps)):
        n = sum(vec)
        if n < 1 or n > job.max_gpus:
            continue
        cross = sum(1 for c in vec if c) > 1
        t = inst.run_time_s(job, n, cross)
        latest = math.floor((job.deadline_s + DEADLINE_TOL_S - t) / unit)
        if latest < e:
            continue
        out.append(GridMode(tuple(vec), t, max(1, math.ceil(t / unit - 1e-9)), latest))
    if prune:
        keep = []
        for m in out:
            dominated = any(o is not m and o.n_gpu < m.n_gpu and all(a <= b for a, b in zip(o.vector, m.vector))
                            and o.units <= m.units and o.latest >= m.latest for o in out)
            if not dominated:
                keep.append(m)
        out = keep
    return out


def _unit(inst: DeadlineWorkload, time_unit_s: float | None) -> float:
    unit = inst.time_unit_s if time_unit_s is None else time_unit_s
    if isinstance(unit, bool) or not isinstance(unit, (int, float)) or not (unit > 0 and math.isfinite(unit)):
        raise InstanceError(f"must be a positive number of seconds, got {unit!r}", field="time_unit_s")
    return float(unit)


def _schedule(inst: DeadlineWorkload, chosen: dict[str, tuple[GridMode, int]], unit: float, name: str) -> Schedule:
    ids = [s.id for s in inst.cluster.servers]
    rows = []
    for j in inst.jobs:
        if j.id not in chosen:
            continue
        m, k = chosen[j.id]
        start = k * unit
        rows.append(ScheduledJob(j.id, start, {ids[i]: c for i, c in enumerate(m.vector) if c}, start + m.run_time_s))
    return Schedule(tuple(rows), name, inst.name)


# -- CP-SAT --------------------------------------------------------------------------------------------------
def solve_deadline_cpsat(inst: DeadlineWorkload, *, time_unit_s: float | None = None, weights: str = "count",
                         time_limit: float | None = 30.0, num_workers: int = 1, seed: int | None = None,
                         deterministic_limit: float | None = None, prune: bool = True, log: bool = False) -> Result:
    """The most (weighted) deadlines met on the grid (module docstring). ``objective`` is the evaluator's
    weighted count of the schedule found (in [`job_weight`][optsched.problems.deadline.job_weight] units);
    ``info["upper_bound"]`` is CP-SAT's proven bound on the optimum (equal to the objective when ``optimal``).
    ``status`` is ``optimal``, ``time limit`` (a schedule, not proven) or ``unknown`` (no schedule: then
    ``objective`` and ``schedule`` are None)."""
    from ortools.sat.python import cp_model

    params = _cpsat.Params(time_limit=time_limit, deterministic_limit=deterministic_limit, num_workers=num_workers,
                           seed=seed, log=log)
    check_exact(inst)
    unit = _unit(inst, time_unit_s)
    scale = weight_scale(weights)
    t0 = time.perf_counter()
    md = cp_model.CpModel()
    caps = inst.capacities
    per_node: list[tuple[list[cp_model.IntervalVar], list[int]]] = [([], []) for _ in caps]
    lits: dict[str, list[tuple[GridMode, cp_model.IntVar]]] = {}
    starts: dict[str, cp_model.IntVar] = {}
    objective = []
    n_modes = 0
    for j in inst.jobs:
        modes = grid_modes(inst, j, unit, prune)
        if not modes:
            continue
        e = _earliest(j, unit)
        s = md.new_int_var(e, max(m.latest for m in modes), f"S[{j.id}]")
        starts[j.id] = s
        xs = []
        for k, m in enumerate(modes):
            x = md.new_bool_var(f"x[{j.id},{k}]")
            md.add(s <= m.latest).only_enforce_if(x)
            iv = md.new_optional_fixed_size_interval_var(s, m.units, x, f"I[{j.id},{k}]")
            for i, c in enumerate(m.vector):
                if c:
                    per_node[i][0].append(iv)
                    per_node[i][1].append(c)
            xs.append(x)
        n_modes += len(modes)
        md.add_at_most_one(xs)
        lits[j.id] = list(zip(modes, xs))
        objective.append(job_weight_int(j.alpha, weights) * sum(xs))
    for i, (ivs, dem) in enumerate(per_node):
        if ivs:
            md.add_cumulative(ivs, dem, caps[i])
    md.maximize(sum(objective))
    run = _cpsat.solve(md, params)
    info: dict[str, Any] = {"time_unit_s": unit, "weights": weights, "modes": n_modes, "jobs_with_modes": len(lits),
                            "solver": "cpsat", **run.info()}
    info["upper_bound"] = None if run.bound is None else math.floor(run.bound + 1e-9) / scale
    if run.objective is None:
        return Result(None, run.status, time.perf_counter() - t0, None, "deadline-cpsat", seed=seed, info=info)
    chosen = {}
    for jid, pairs in lits.items():
        for m, x in pairs:
            if run.value(x):
                chosen[jid] = (m, run.value(starts[jid]))
    sched = _schedule(inst, chosen, unit, "deadline-cpsat")
    ev = evaluate(inst, sched, weights)
    if abs(ev.objective - run.objective / scale) > 1e-9 or len(ev.met) != len(chosen):
        raise ScheduleError(f"model objective {run.objective / scale} != evaluated {ev.objective}")
    if run.status == SolveStatus.OPTIMAL:
        info["upper_bound"] = ev.objective
    return Result(ev.objective, run.status, time.perf_counter() - t0, ev.schedule, "deadline-cpsat", seed=seed,
                  info=info)


@algorithm("deadline-cpsat", DeadlineWorkload, exact=True,
           description="exact most deadlines met, GPU counts and nodes chosen, non-preemptive (CP-SAT)")
def _registered_cpsat(inst: DeadlineWorkload, *, seed: int | None = None, time_limit: float | None = None,
                      deterministic_limit: float | None = None, **options) -> Result:
    # deterministic_limit named so that solve_many, which reads the signature, passes it (issue 28)
    return solve_deadline_cpsat(inst, seed=seed, time_limit=30.0 if time_limit is None else time_limit,
                                deterministic_limit=deterministic_limit, **options)


# -- brute force ---------------------------------------------------------------------------------------------
def brute_force_deadline(inst: DeadlineWorkload, *, time_unit_s: float | None = None, weights: str = "count",
                         max_jobs: int = MAX_BRUTE_JOBS) -> Result:
    """The grid optimum by enumeration, independent of CP-SAT (``docs/formulations/deadline.md``, "Brute force"):
    jobs are added one at a time with a node vector, each at its earliest grid start >= its arrival at which
    the vector fits beside the jobs already placed; the (start, job) pairs must increase along a branch (every
    on-time schedule can be shifted left into one that this generates in the order of its starts); a branch
    is cut when its value plus the weights of the jobs it could still add cannot beat the best found. Every
    node vector is tried (no dominance), with its own grid rounding."""
    unit = _unit(inst, time_unit_s)
    if inst.n_jobs > max_jobs:
        raise InstanceError(f"at most {max_jobs} jobs for the brute force, got {inst.n_jobs}", field="jobs")
    check_exact(inst)
    t0 = time.perf_counter()
    caps = list(inst.capacities)
    jobs = list(inst.jobs)
    weight = [job_weight_int(j.alpha, weights) for j in jobs]
    earliest = [max(0, math.ceil(j.arrival_s / unit - 1e-9)) for j in jobs]
    options: list[list[tuple[tuple[int, ...], float, int, int]]] = []
    for j in jobs:
        opts = []
        for vec in itertools.product(*(range(c + 1) for c in caps)):
            n = sum(vec)
            if not 1 <= n <= j.max_gpus:
                continue
            t = inst.run_time_s(j, n, cross=sum(1 for c in vec if c) > 1)
            length = max(1, math.ceil(t / unit - 1e-9))
            last = math.floor((j.deadline_s + DEADLINE_TOL_S - t) / unit)
            opts.append((vec, t, length, last))
        options.append(opts)
    horizon = max((o[3] + o[2] for opts in options for o in opts), default=0) + 1
    used = [[0] * max(horizon, 1) for _ in caps]
    best_val = -1
    best: list[dict[int, tuple[tuple[int, ...], float, int]]] = [{}]
    placed: dict[int, tuple[tuple[int, ...], float, int]] = {}
    nodes = 0

    def fits(vec: tuple[int, ...], k: int, length: int) -> bool:
        return all(used[i][t] + c <= caps[i] for i, c in enumerate(vec) if c for t in range(k, k + length))

    def put(vec: tuple[int, ...], k: int, length: int, sign: int) -> None:
        for i, c in enumerate(vec):
            if c:
                row = used[i]
                for t in range(k, k + length):
                    row[t] += sign * c

    def rec(left: frozenset[int], value: int, last: tuple[int, int]) -> None:
        nonlocal best_val, nodes
        nodes += 1
        if value > best_val:
            best_val, best[0] = value, dict(placed)
        still = [i for i in left if any(o[3] >= max(earliest[i], last[0]) for o in options[i])]
        if value + sum(weight[i] for i in still) <= best_val:
            return
        for i in sorted(still):
            for vec, t, length, lst in options[i]:
                k = max(earliest[i], last[0])
                while k <= lst and not fits(vec, k, length):
                    k += 1
                if k > lst or (k, i) <= last:
                    continue
                put(vec, k, length, 1)
                placed[i] = (vec, t, k)
                rec(left - {i}, value + weight[i], (k, i))
                del placed[i]
                put(vec, k, length, -1)

    rec(frozenset(range(len(jobs))), 0, (-1, -1))
    ids = [s.id for s in inst.cluster.servers]
    rows = []
    for i, (vec, t, k) in sorted(best[0].items()):
        start = k * unit
        rows.append(ScheduledJob(jobs[i].id, start, {ids[n]: c for n, c in enumerate(vec) if c}, start + t))
    sched = Schedule(tuple(rows), "deadline-brute", inst.name)
    ev = evaluate(inst, sched, weights)
    return Result(ev.objective, SolveStatus.OPTIMAL, time.perf_counter() - t0, ev.schedule, "deadline-brute",
                  info={"nodes": nodes, "time_unit_s": unit, "weights": weights, "upper_bound": ev.objective})


@algorithm("deadline-brute", DeadlineWorkload, exact=True,
           description="exact most deadlines met by enumeration (tiny instances)")
def _registered_brute(inst: DeadlineWorkload, *, seed: int | None = None, time_limit: float | None = None,
                      **options) -> Result:
    return brute_force_deadline(inst, **options)


# -- the upper bound -----------------------------------------------------------------------------------------
def min_energy_gpu_s(inst: DeadlineWorkload, job: DeadlineJob) -> float:
    """The fewest GPU-seconds any schedule (preemptive, elastic, migrating) can spend to finish ``job`` inside
    its window [arrival, deadline]: the optimum of the linear program "time tau_n on n GPUs, sum tau_n <=
    window, sum tau_n speed(n) = work, minimise sum n tau_n", speed(n) the fastest rate on n GPUs (B_intra when
    n fits a node); inf if the job cannot finish in its window at all. An optimal basic solution uses at most
    two counts, so every single count and every pair is tried.

    ```pycon
    >>> from optsched.problems.deadline import paper_cluster
    >>> wl = DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "TSN", 0, 1.5, 1), DeadlineJob("b", "TSN", 0, 0.5, 1)))
    >>> a, b = (min_energy_gpu_s(wl, j) for j in wl.jobs)
    >>> round(a, 3) == round(wl.jobs[0].run_time_1gpu_s, 3), b > wl.jobs[1].run_time_1gpu_s
    (True, True)

    ```
    """
    big = max(inst.capacities)
    window = job.deadline_s + DEADLINE_TOL_S - job.arrival_s
    w = job.work_batches
    counts = range(1, min(inst.total_gpus, job.max_gpus) + 1)
    speed = {n: w / inst.run_time_s(job, n, cross=n > big) for n in counts}
    best = math.inf
    for n in counts:
        if w / speed[n] <= window:
            best = min(best, n * w / speed[n])
    for a, b in itertools.combinations(counts, 2):
        sa, sb = speed[a], speed[b]
        if sa == sb:
            continue
        tb = (w - window * sa) / (sb - sa)
        ta = window - tb
        if ta >= 0 and tb >= 0:
            best = min(best, a * ta + b * tb)
    return best


@dataclass(frozen=True)
class DeadlineBound:
    """An upper bound on the (weighted) deadlines met by any schedule: ``value`` (proven), ``status`` of the
    solve of the relaxation, ``reachable`` (the weighted count of jobs that can meet their deadline alone, a
    weaker bound), the per-job energies (GPU-seconds) and run details in ``info``. ``chosen``: the ids of the
    jobs the relaxation's best solution meets (y_j = 1, in the instance's order; empty when the solver found
    none); a starting set for [`optsched.exact.deadline_repair`][], not part of the proof."""

    value: float
    status: SolveStatus
    reachable: float
    energy_gpu_s: dict[str, float] = field(repr=False)
    info: dict[str, Any] = field(default_factory=dict, repr=False)
    chosen: tuple[str, ...] = field(default=(), repr=False)


def deadline_upper_bound(inst: DeadlineWorkload, *, weights: str = "count", time_limit: float | None = 30.0,
                         seed: int | None = 0, deterministic_limit: float | None = None) -> DeadlineBound:
    """The energy relaxation (``docs/formulations/deadline.md``, "Upper bound"): choose jobs y_j in {0, 1} to
    maximise the weighted count subject to, for every window [a, b] with a an arrival and b a deadline,
    sum over the jobs whose window lies inside [a, b] of E_j y_j <= G (b - a), E_j =
    [`min_energy_gpu_s`][optsched.exact.deadline.min_energy_gpu_s],
    and y_j = 0 for a job that cannot finish in its window at all. Every schedule's set of on-time jobs
    satisfies these constraints, so the optimum of this knapsack-like program (or CP-SAT's proven bound on it
    when the time limit stops the search) bounds every policy and every exact model. Coefficients are rounded
    in the safe direction (energies down, capacities up, to milliseconds). ``deterministic_limit`` replaces
    ``time_limit`` by CP-SAT's deterministic time ([`optsched.exact._cpsat`][]): the bound is then the same on any
    machine."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    scale = weight_scale(weights)
    energy, ok, reachable = _boundable_jobs(inst, weights)
    if not ok:
        return DeadlineBound(0.0, SolveStatus.OPTIMAL, 0.0, energy, {"windows": 0})
    G = inst.total_gpus
    md = cp_model.CpModel()
    y = {j.id: md.new_bool_var(f"y[{j.id}]") for j in ok}
    e_ms = {j.id: math.floor(energy[j.id] * 1000.0) for j in ok}
    lefts = sorted({j.arrival_s for j in ok})
    rights = sorted({j.deadline_s + DEADLINE_TOL_S for j in ok})
    n_cons = 0
    for a in lefts:
        inside_a = [j for j in ok if j.arrival_s >= a]
        for b in rights:
            if b <= a:
                continue
            inside = [j for j in inside_a if j.deadline_s + DEADLINE_TOL_S <= b]
            if not inside:
                continue
            cap_ms = math.ceil(G * (b - a) * 1000.0)
            if sum(e_ms[j.id] for j in inside) <= cap_ms:
                continue  # cannot bind
            md.add(sum(e_ms[j.id] * y[j.id] for j in inside) <= cap_ms)
            n_cons += 1
    md.maximize(sum(job_weight_int(j.alpha, weights) * y[j.id] for j in ok))
    run = _cpsat.solve(md, _cpsat.Params(time_limit=time_limit, deterministic_limit=deterministic_limit, seed=seed))
    info = {"windows": n_cons, "weights": weights, "wall_s": time.perf_counter() - t0, **run.info()}
    if run.status == SolveStatus.OPTIMAL:
        value = float(run.objective) / scale if run.objective is not None else reachable
    else:
        value = min(reachable, (math.floor(run.bound + 1e-9) / scale) if run.bound is not None else reachable)
    chosen = () if run.objective is None else tuple(j.id for j in ok if run.value(y[j.id]))
    return DeadlineBound(value, run.status, reachable, energy, info, chosen)


# -- the time-indexed bound ----------------------------------------------------------------------------------
def speed_hull(inst: DeadlineWorkload, job: DeadlineJob) -> list[tuple[int, float]]:
    """The GPU counts on the upper concave hull of the points (0, 0) and (n, speed(n)), speed(n) the fastest
    share of the job done per second on n GPUs (B_intra when n fits a node), with their speeds, by count:
    any mix of counts is matched or beaten by a mix of these at the same time and GPU-time
    (``docs/formulations/deadline.md``, "Time-indexed bound").

    ```pycon
    >>> from optsched.problems.deadline import paper_cluster
    >>> wl = DeadlineWorkload(paper_cluster(), (DeadlineJob("a", "ResNet-50", 0, 1.0, 10),))
    >>> [n for n, _ in speed_hull(wl, wl.jobs[0])]     # 2, 3: below the chord from 1 to 4 GPUs
    [1, 4, 16]

    ```
    """
    big = max(inst.capacities)
    pts = [(0, 0.0)] + [(n, 1.0 / inst.run_time_s(job, n, cross=n > big))
                        for n in range(1, min(inst.total_gpus, job.max_gpus) + 1)]
    hull: list[tuple[int, float]] = []
    for p in pts:  # Andrew's monotone chain, upper side (counts increase)
        while len(hull) >= 2 and ((hull[-1][1] - hull[-2][1]) * (p[0] - hull[-2][0])
                                  <= (p[1] - hull[-2][1]) * (hull[-1][0] - hull[-2][0])):
            hull.pop()
        hull.append(p)
    return [p for p in hull if p[0] > 0]


def deadline_time_indexed_bound(inst: DeadlineWorkload, *, weights: str = "count", time_limit: float | None = 60.0,
                                solver: str = "SCIP") -> DeadlineBound:
    """A bound at least as tight as [`deadline_upper_bound`][optsched.exact.deadline.deadline_upper_bound], valid
    for every schedule too (``docs/formulations/deadline.md``, "Time-indexed bound"): time is cut at every
    arrival and deadline; in each piece a job on time may hold counts of its
    [`speed_hull`][optsched.exact.deadline.speed_hull] for at most the piece's length, all jobs together at most
    G GPUs on average, and a chosen job (y_j = 1) must finish its work inside its window. A mixed-integer program
    (OR-Tools' ``solver``: SCIP, or CBC as the second solver of the tests); its proven bound (the optimum, or
    the best bound when the time limit stops it) rounded down to the weights' unit, with a 1e-6 allowance for
    the solver's tolerances, is ``value``.

    ```pycon
    >>> from optsched.generators.deadline import tiny_deadline_workload
    >>> wl = tiny_deadline_workload(4, seed=5)
    >>> deadline_time_indexed_bound(wl).value <= deadline_upper_bound(wl).value
    True

    ```
    """
    from ortools.linear_solver import pywraplp  # type: ignore[attr-defined]  # a SWIG module without stubs

    t0 = time.perf_counter()
    scale = weight_scale(weights)
    energy, ok, reachable = _boundable_jobs(inst, weights)
    if not ok:
        return DeadlineBound(0.0, SolveStatus.OPTIMAL, 0.0, energy, {"pieces": 0})
    md = pywraplp.Solver.CreateSolver(solver)
    if md is None:
        raise InstanceError(f"OR-Tools has no solver {solver!r}", field="solver")
    hours = 3600.0  # variables in hours: coefficients near 1
    cuts = sorted({j.arrival_s for j in ok} | {j.deadline_s + DEADLINE_TOL_S for j in ok})
    pieces = list(zip(cuts[:-1], cuts[1:]))
    load: list[list[Any]] = [[] for _ in pieces]
    y = {}
    for j in ok:
        hull = speed_hull(inst, j)
        y[j.id] = md.BoolVar(f"y[{j.id}]")
        done = []
        for p, (a, b) in enumerate(pieces):
            if a < j.arrival_s or b > j.deadline_s + DEADLINE_TOL_S:
                continue
            length = (b - a) / hours
            taus = [(n, s * hours, md.NumVar(0.0, length, "")) for n, s in hull]
            md.Add(sum(v for _, _, v in taus) <= length)
            done += [s * v for _, s, v in taus]
            load[p] += [n * v for n, _, v in taus]
        md.Add(sum(done) >= y[j.id])
    for p, (a, b) in enumerate(pieces):
        if load[p]:
            md.Add(sum(load[p]) <= inst.total_gpus * (b - a) / hours)
    md.Maximize(sum(job_weight_int(j.alpha, weights) * y[j.id] for j in ok))
    if time_limit is not None:
        md.SetTimeLimit(int(time_limit * 1000))
    code = md.Solve()
    info = {"pieces": len(pieces), "variables": md.NumVariables(), "solver": solver,
            "wall_s": time.perf_counter() - t0}
    if code == pywraplp.Solver.OPTIMAL:
        status, raw = SolveStatus.OPTIMAL, md.Objective().Value()
    elif code == pywraplp.Solver.FEASIBLE:
        status, raw = SolveStatus.TIME_LIMIT, md.Objective().BestBound()
    else:  # no answer: the weaker bound stands
        return DeadlineBound(reachable, SolveStatus.UNKNOWN, reachable, energy, info)
    info["raw_bound"] = raw
    chosen = tuple(j.id for j in ok if y[j.id].solution_value() > 0.5)
    return DeadlineBound(min(reachable, math.floor(raw + 1e-6) / scale), status, reachable, energy, info, chosen)


def _boundable_jobs(inst: DeadlineWorkload, weights: str) -> tuple[dict[str, float], list[DeadlineJob], float]:
    """The bounds' common start: each deadline job's least GPU-seconds (inf if it cannot finish in its window),
    the jobs that can, and their total weight. Best-effort jobs are out of the ratio the bounds bound (format 2)."""
    energy = {j.id: min_energy_gpu_s(inst, j) for j in inst.jobs if not j.best_effort}
    ok = [j for j in inst.jobs if not j.best_effort and energy[j.id] < math.inf]
    return energy, ok, sum(job_weight(j.alpha, weights) for j in ok)
