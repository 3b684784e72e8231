"""Exact offline optimum of total (weighted) completion time with placement choice: paper 001's problem A.

Problem (8) of paper 001 with everything known in advance: job i is released at r_i, needs g_i GPUs, runs
non-preemptively, and its duration depends on its placement (n_i iterations times the per-iteration time
alpha_i of the placement, eqs. 4-7). Each server has a GPU capacity. Minimise sum_i w_i C_i (w_i = 1: the
paper's total completion time). The model, variable by variable, and the dominance argument behind the brute
force are in ``formulations/total-jct.md``.

* :class:`TotalJctInstance`: the abstract instance: a :class:`~optsched.cluster.Cluster` and jobs, each with
  candidate placement *shapes* (GPUs per used server, up to server symmetry, e.g. ``(2, 1)``) and an integer
  duration per shape (time units of ``time_unit_s`` seconds).
* :func:`from_pipeline_jobs`: builds one from paper 001's pipeline jobs: every shape of g_i GPUs on the
  cluster's servers, alpha per shape exact (min over count matrices of that shape, eq. 7) or Heavy-Edge's,
  durations n_i * alpha rounded up (an upper bound on the continuous optimum) or down (a lower bound).
* :func:`solve_total_jct`: CP-SAT, one optional interval per (job, concrete placement) sharing the job's start
  and end, one cumulative per server. Registered as ``total-jct-cpsat``.
* :func:`brute_force_total_jct`: the independent check: every job order x every concrete placement, each job
  list-scheduled at its earliest feasible start (serial schedule generation), with branch and bound.
* :func:`check_schedule`: recomputes a schedule's objective and raises on any infeasibility.

>>> from optsched.cluster import Cluster
>>> inst = TotalJctInstance(Cluster.homogeneous(2, 2), (
...     TotalJctJob("a", 0, 2, (Mode((2,), 4), Mode((1, 1), 3))),
...     TotalJctJob("b", 0, 2, (Mode((2,), 2),)),
...     TotalJctJob("c", 1, 1, (Mode((1,), 2),))))
>>> res = solve_total_jct(inst, time_limit=10)
>>> res.status.value, res.objective, res.lower_bound
('optimal', 10, 10)
>>> brute_force_total_jct(inst).objective
10
>>> check_schedule(inst, res.schedule)
10
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from numbers import Real
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from ..cluster import Cluster
from ..errors import InstanceError, ScheduleError
from ..registry import register, register_evaluator
from ..result import Result, Schedule, ScheduledJob, SolveStatus

__all__ = [
    "Mode", "TotalJctInstance", "TotalJctJob", "TotalJctEvaluation", "brute_force_total_jct", "check_schedule",
    "concrete_placements", "evaluate_total_jct", "from_pipeline_jobs", "shapes_of", "solve_total_jct",
]

Shape = tuple[int, ...]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and (not isinstance(v, float) or math.isfinite(v))


# -- problem data ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mode:
    """One candidate placement shape of a job and its duration.

    ``shape``: GPUs on each server used, non-increasing (servers are interchangeable up to capacity, so a shape
    stands for every concrete placement with those counts). ``duration``: integer time units.
    ``alpha``: the per-iteration time behind the duration (any unit, informational; used by the bounds).
    ``stages``: optional per-server per-stage counts, aligned with ``shape`` (pipeline jobs).
    """

    shape: Shape
    duration: int
    alpha: Real | None = None
    stages: tuple[tuple[int, ...], ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(self.shape))


@dataclass(frozen=True)
class TotalJctJob:
    """A job: integer release (time units), GPU count, candidate modes, weight (default 1).

    Optional data for paper 001's bounds: ``iterations`` n_i, ``alpha_max`` alpha_i^max and ``alpha_tilde_min``
    alpha~_i^min (the same unit as the modes' ``alpha``).
    """

    id: str
    release: int
    gpus: int
    modes: tuple[Mode, ...]
    weight: int = 1
    iterations: Real | None = None
    alpha_max: Real | None = None
    alpha_tilde_min: Real | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "modes", tuple(self.modes))

    @property
    def min_duration(self) -> int:
        return min(m.duration for m in self.modes)

    @property
    def max_duration(self) -> int:
        return max(m.duration for m in self.modes)

    @property
    def alpha_min(self) -> Real | None:
        """Smallest per-iteration time over the modes (alpha_i^min on this cluster), if the modes carry alpha."""
        vals = [m.alpha for m in self.modes]
        return None if any(v is None for v in vals) else min(vals)


@dataclass(frozen=True)
class TotalJctInstance:
    """Jobs with placement-dependent durations on a cluster; validated at construction.

    >>> TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 3, (Mode((3,), 1),)),))
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[0].modes[0].shape (job 'a'): does not fit the cluster's servers [2]
    """

    cluster: Cluster
    jobs: tuple[TotalJctJob, ...]
    time_unit_s: float = 1.0
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        self._validate()

    def _validate(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise InstanceError(f"must be a Cluster, got {type(self.cluster).__name__}", field="cluster")
        if not _is_real(self.time_unit_s) or self.time_unit_s <= 0:
            raise InstanceError(f"must be a positive number, got {self.time_unit_s!r}", field="time_unit_s")
        if not self.jobs:
            raise InstanceError("must list at least one job", field="jobs")
        caps = sorted(self.cluster.capacity.values(), reverse=True)
        seen: set[str] = set()
        for i, j in enumerate(self.jobs):
            where = f"jobs[{i}]"
            if not isinstance(j, TotalJctJob):
                raise InstanceError(f"must be a TotalJctJob, got {type(j).__name__}", field=where)
            if not isinstance(j.id, str) or not j.id:
                raise InstanceError(f"must be a non-empty string, got {j.id!r}", field=f"{where}.id")
            if j.id in seen:
                raise InstanceError("duplicate job id", field=f"{where}.id", job=j.id)
            seen.add(j.id)
            if not _is_int(j.release) or j.release < 0:
                raise InstanceError(f"must be an integer >= 0 (time units), got {j.release!r}",
                                    field=f"{where}.release", job=j.id)
            if not _is_int(j.gpus) or j.gpus <= 0:
                raise InstanceError(f"must be a positive integer, got {j.gpus!r}", field=f"{where}.gpus", job=j.id)
            if not _is_int(j.weight) or j.weight < 0:
                raise InstanceError(f"must be an integer >= 0, got {j.weight!r}", field=f"{where}.weight", job=j.id)
            if not j.modes:
                raise InstanceError("must list at least one mode", field=f"{where}.modes", job=j.id)
            shapes: set[Shape] = set()
            for k, m in enumerate(j.modes):
                mw = f"{where}.modes[{k}]"
                if not isinstance(m, Mode):
                    raise InstanceError(f"must be a Mode, got {type(m).__name__}", field=mw, job=j.id)
                if not m.shape or any(not _is_int(v) or v <= 0 for v in m.shape):
                    raise InstanceError(f"must be positive integers, got {m.shape!r}", field=f"{mw}.shape", job=j.id)
                if list(m.shape) != sorted(m.shape, reverse=True):
                    raise InstanceError(f"must be non-increasing, got {m.shape!r}", field=f"{mw}.shape", job=j.id)
                if sum(m.shape) != j.gpus:
                    raise InstanceError(f"places {sum(m.shape)} GPUs but the job needs {j.gpus}",
                                        field=f"{mw}.shape", job=j.id)
                if len(m.shape) > len(caps) or any(v > c for v, c in zip(m.shape, caps)):
                    raise InstanceError(f"does not fit the cluster's servers {caps}", field=f"{mw}.shape", job=j.id)
                if m.shape in shapes:
                    raise InstanceError(f"duplicate shape {m.shape!r}", field=f"{mw}.shape", job=j.id)
                shapes.add(m.shape)
                if not _is_int(m.duration) or m.duration < 0:
                    raise InstanceError(f"must be an integer >= 0 (time units), got {m.duration!r}",
                                        field=f"{mw}.duration", job=j.id)
                if m.alpha is not None and (not _is_real(m.alpha) or m.alpha <= 0):
                    raise InstanceError(f"must be a positive number, got {m.alpha!r}", field=f"{mw}.alpha", job=j.id)
            for name in ("iterations", "alpha_max", "alpha_tilde_min"):
                v = getattr(j, name)
                if v is not None and (not _is_real(v) or v < 0):
                    raise InstanceError(f"must be a number >= 0, got {v!r}", field=f"{where}.{name}", job=j.id)

    # -- derived --------------------------------------------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    def job(self, job_id: str) -> TotalJctJob:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise KeyError(job_id)

    def trivial_lower_bound(self) -> int:
        """sum_i w_i (r_i + min duration_i): every job starts no earlier than its release."""
        return sum(j.weight * (j.release + j.min_duration) for j in self.jobs)

    def horizon(self) -> int:
        """max_i r_i + sum_i max duration_i: no optimal schedule needs a later completion (see the formulation:
        after the last release, some job runs at every instant before the last completion)."""
        return max(j.release for j in self.jobs) + sum(j.max_duration for j in self.jobs)

    def asrpt_parameters(self, predicted: Mapping[str, Real] | None = None, tau: Real = 0):
        """Paper 001's bound parameters (:class:`optsched.bounds.AsrptParameters`) of this instance.

        Needs ``iterations``, ``alpha_max``, ``alpha_tilde_min`` on every job and ``alpha`` on every mode;
        alpha_i^min is the smallest mode alpha (the fastest placement realisable on this cluster).
        ``predicted``: job id -> n~_i (default: perfect prediction). ``alpha_placed_max`` is the largest mode alpha.
        """
        from ..bounds import AsrptParameters

        for j in self.jobs:
            if j.iterations is None or j.alpha_max is None or j.alpha_tilde_min is None or j.alpha_min is None:
                raise InstanceError("needs iterations, alpha_max, alpha_tilde_min and every mode's alpha",
                                    field="jobs", job=j.id)
        pred = {j.id: j.iterations for j in self.jobs} if predicted is None else predicted
        return AsrptParameters(
            total_gpus=self.cluster.total_gpus, gpus=tuple(j.gpus for j in self.jobs),
            iterations=tuple(j.iterations for j in self.jobs), predicted=tuple(pred[j.id] for j in self.jobs),
            alpha_min=tuple(j.alpha_min for j in self.jobs),
            alpha_tilde_min=tuple(j.alpha_tilde_min for j in self.jobs),
            alpha_max=tuple(j.alpha_max for j in self.jobs),
            alpha_placed_max=tuple(max(m.alpha for m in j.modes) for j in self.jobs), tau=tau)


# -- placements ---------------------------------------------------------------------------------------------
def shapes_of(gpus: int, capacities: Sequence[int]) -> list[Shape]:
    """Every shape (non-increasing GPUs per used server) of ``gpus`` GPUs that fits servers ``capacities``.

    >>> shapes_of(4, [4, 4])
    [(4,), (3, 1), (2, 2)]
    >>> shapes_of(3, [2, 1, 1])
    [(2, 1), (1, 1, 1)]
    """
    caps = sorted(capacities, reverse=True)
    out: list[Shape] = []

    def rec(left: int, largest: int, prefix: list[int]) -> None:
        if left == 0:
            out.append(tuple(prefix))
            return
        k = len(prefix)
        if k == len(caps):
            return
        for v in range(min(left, largest, caps[k]), 0, -1):
            prefix.append(v)
            rec(left - v, v, prefix)
            prefix.pop()

    rec(gpus, gpus, [])
    return out


def concrete_placements(shape: Shape, capacities: Sequence[int]) -> list[tuple[int, ...]]:
    """Every distinct vector u (GPUs per server, in the cluster's server order) whose non-zero entries are
    ``shape`` and with u_m <= capacity_m.

    >>> concrete_placements((2, 1), [2, 2, 2])
    [(2, 1, 0), (2, 0, 1), (1, 2, 0), (1, 0, 2), (0, 2, 1), (0, 1, 2)]
    """
    M = len(capacities)
    padded = tuple(shape) + (0,) * (M - len(shape))
    seen: set[tuple[int, ...]] = set()
    out = []
    for perm in itertools.permutations(padded):
        if perm in seen:
            continue
        seen.add(perm)
        if all(u <= c for u, c in zip(perm, capacities)):
            out.append(perm)
    return sorted(out, reverse=True)


def _options(inst: TotalJctInstance, symmetry_job: int | None = None) -> list[list[tuple[int, tuple[int, ...]]]]:
    """Per job, the list of (mode index, concrete vector). For ``symmetry_job``, only vectors that are
    non-increasing within each class of equal-capacity servers (a valid symmetry break for ONE job)."""
    caps = [s.gpus for s in inst.cluster.servers]
    classes: dict[int, list[int]] = {}
    for m, c in enumerate(caps):
        classes.setdefault(c, []).append(m)
    out = []
    for i, j in enumerate(inst.jobs):
        opts = []
        for k, mode in enumerate(j.modes):
            for u in concrete_placements(mode.shape, caps):
                if i == symmetry_job and any(
                        any(u[a] < u[b] for a, b in zip(idx, idx[1:])) for idx in classes.values()):
                    continue
                opts.append((k, u))
        out.append(opts)
    return out


# -- evaluation ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TotalJctEvaluation:
    """``objective``: sum_i w_i C_i; ``makespan``: max_i C_i; ``average_jct``: mean of C_i - r_i (time units)."""

    objective: int
    schedule: Schedule
    makespan: int = 0
    average_jct: float = 0.0


def check_schedule(inst: TotalJctInstance, schedule: Schedule) -> int:
    """sum_i w_i C_i of ``schedule``, after checking it independently of any solver: one entry per job, integer
    start >= release, a placement whose shape is one of the job's modes, completion = start + that mode's
    duration, and no server over capacity at any time. Raises :class:`ScheduleError` otherwise."""
    cap = inst.cluster.capacity
    ids = [sj.id for sj in schedule]
    if sorted(ids) != sorted(j.id for j in inst.jobs):
        raise ScheduleError(f"schedule lists jobs {sorted(ids)}, instance has {sorted(j.id for j in inst.jobs)}",
                            field="schedule")
    events: dict[str, list[tuple[int, int]]] = {s: [] for s in cap}
    total = 0
    for j in inst.jobs:
        sj = schedule[j.id]
        if not _is_int(sj.start) and not (isinstance(sj.start, float) and sj.start.is_integer()):
            raise ScheduleError(f"start must be an integer time, got {sj.start!r}", field="start", job=j.id)
        start = int(sj.start)
        if start < j.release:
            raise ScheduleError(f"starts at {start} before its release {j.release}", field="start", job=j.id)
        inst.cluster.check_placement(dict(sj.placement), field="placement", job=j.id)
        shape = tuple(sorted(sj.placement.values(), reverse=True))
        modes = {m.shape: m for m in j.modes}
        if shape not in modes:
            raise ScheduleError(f"placement shape {shape} is not a mode of the job", field="placement", job=j.id)
        end = start + modes[shape].duration
        if sj.completion is not None and sj.completion != end:
            raise ScheduleError(f"completion {sj.completion} != start + duration = {end}", field="completion",
                                job=j.id)
        total += j.weight * end
        for s, n in sj.placement.items():
            if end > start:
                events[s] += [(start, n), (end, -n)]
    for s, ev in events.items():
        used = 0
        for t, d in sorted(ev, key=lambda e: (e[0], e[1])):  # releases (-) before acquisitions (+) at equal t
            used += d
            if used > cap[s]:
                raise ScheduleError(f"server {s} uses {used} GPUs > {cap[s]} at time {t}", field="placement")
    return total


def evaluate_total_jct(inst: TotalJctInstance, schedule: Schedule) -> TotalJctEvaluation:
    """Evaluator for the registry: the checked objective and the schedule with completions filled in."""
    total = check_schedule(inst, schedule)
    rows, jct = [], []
    for sj in schedule:
        j = inst.job(sj.id)
        d = {m.shape: m.duration for m in j.modes}[tuple(sorted(sj.placement.values(), reverse=True))]
        rows.append(ScheduledJob(sj.id, sj.start, dict(sj.placement), sj.start + d, sj.stage_placement))
        jct.append(sj.start + d - j.release)
    return TotalJctEvaluation(total, Schedule(tuple(rows), schedule.algorithm, inst.name),
                              max(r.completion for r in rows), sum(jct) / len(jct))


register_evaluator("TotalJctInstance", "optsched.exact.total_jct:evaluate_total_jct")


def _schedule(inst: TotalJctInstance, choice: Mapping[str, tuple[int, tuple[int, ...], int]], algorithm: str
              ) -> Schedule:
    """(mode index, vector, start) per job -> Schedule with completions and per-stage counts where known."""
    sids = inst.cluster.server_ids
    rows = []
    for j in inst.jobs:
        k, u, s = choice[j.id]
        mode = j.modes[k]
        placement = {sids[m]: n for m, n in enumerate(u) if n}
        stages = None
        if mode.stages is not None:
            # the shape's columns go to the servers in decreasing GPU count (ties: server order)
            order = sorted((m for m in range(len(u)) if u[m]), key=lambda m: -u[m])
            stages = {sids[m]: tuple(mode.stages[r]) for r, m in enumerate(order)}
        rows.append(ScheduledJob(j.id, s, placement, s + mode.duration, stages))
    return Schedule(tuple(rows), algorithm, inst.name)


# -- a greedy incumbent --------------------------------------------------------------------------------------
class _Profile:
    """Per-server usage over integer time as a list of placed intervals (tiny instances)."""

    def __init__(self, caps: Sequence[int]):
        self.caps = list(caps)
        self.iv: list[list[tuple[int, int, int]]] = [[] for _ in caps]  # (start, end, gpus) per server

    def fits(self, u: Sequence[int], t: int, d: int) -> bool:
        if d == 0:
            return True
        for m, n in enumerate(u):
            if not n:
                continue
            ivs = self.iv[m]
            # usage is piecewise constant; its maximum on [t, t+d) is reached at t or at a start inside
            points = [t] + [a for a, _, _ in ivs if t < a < t + d]
            for p in points:
                if sum(g for a, b, g in ivs if a <= p < b) + n > self.caps[m]:
                    return False
        return True

    def earliest(self, u: Sequence[int], release: int, d: int) -> int:
        """Earliest integer t >= release with u fitting on [t, t+d): r or the end of a placed interval."""
        cands = sorted({release} | {b for ivs in self.iv for _, b, _ in ivs if b > release})
        for t in cands:
            if self.fits(u, t, d):
                return t
        raise AssertionError("unreachable: after every placed interval ends the cluster is empty")

    def add(self, u: Sequence[int], t: int, d: int) -> None:
        for m, n in enumerate(u):
            if n and d:
                self.iv[m].append((t, t + d, n))

    def remove(self, u: Sequence[int], t: int, d: int) -> None:
        for m, n in enumerate(u):
            if n and d:
                self.iv[m].remove((t, t + d, n))


def greedy_total_jct(inst: TotalJctInstance) -> dict[str, tuple[int, tuple[int, ...], int]]:
    """A feasible schedule: jobs by (release, min duration, id), each at the (vector) that completes first."""
    caps = [s.gpus for s in inst.cluster.servers]
    prof = _Profile(caps)
    opts = _options(inst)
    order = sorted(range(inst.n_jobs), key=lambda i: (inst.jobs[i].release, inst.jobs[i].min_duration,
                                                      inst.jobs[i].id))
    out = {}
    for i in order:
        j = inst.jobs[i]
        best = None
        for k, u in opts[i]:
            d = j.modes[k].duration
            t = prof.earliest(u, j.release, d)
            if best is None or (t + d, d) < best[0]:
                best = ((t + d, d), k, u, t)
        _, k, u, t = best
        prof.add(u, t, j.modes[k].duration)
        out[j.id] = (k, u, t)
    return out


# -- CP-SAT -------------------------------------------------------------------------------------------------
def solve_total_jct(inst: TotalJctInstance, *, time_limit: float | None = 30.0, num_workers: int = 1,
                    symmetry: bool = True, hint: bool = True, seed: int | None = None) -> Result:
    """Minimise sum_i w_i C_i exactly (``formulations/total-jct.md``). ``status`` is ``optimal`` when proven,
    ``time limit`` with the best schedule found otherwise. ``lower_bound`` is CP-SAT's proven bound (at least
    :meth:`TotalJctInstance.trivial_lower_bound`). ``objective`` is recomputed by :func:`check_schedule`."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    H = inst.horizon()
    caps = [s.gpus for s in inst.cluster.servers]
    sym_job = None
    if symmetry:
        sym_job = max(range(inst.n_jobs), key=lambda i: (inst.jobs[i].gpus, -i))
    opts = _options(inst, sym_job)
    md = cp_model.CpModel()
    start, end, lits = {}, {}, {}
    per_server: list[tuple[list, list]] = [([], []) for _ in caps]
    for i, j in enumerate(inst.jobs):
        s = md.NewIntVar(j.release, H - j.min_duration, f"S[{j.id}]")
        e = md.NewIntVar(j.release + j.min_duration, H, f"C[{j.id}]")
        start[j.id], end[j.id] = s, e
        xs = []
        for k, u in opts[i]:
            x = md.NewBoolVar(f"x[{j.id},{k},{u}]")
            d = j.modes[k].duration
            iv = md.NewOptionalIntervalVar(s, d, e, x, f"I[{j.id},{k},{u}]")
            for m, n in enumerate(u):
                if n:
                    per_server[m][0].append(iv)
                    per_server[m][1].append(n)
            xs.append(x)
            lits[i, k, u] = x
        md.AddExactlyOne(xs)
    for m, (ivs, dem) in enumerate(per_server):
        if ivs:
            md.AddCumulative(ivs, dem, caps[m])
    lb0 = inst.trivial_lower_bound()
    md.Minimize(sum(j.weight * end[j.id] for j in inst.jobs))
    if hint:
        g = greedy_total_jct(inst)
        for i, j in enumerate(inst.jobs):
            k, u, t = g[j.id]
            if (i, k, u) not in lits:  # the symmetry-broken job: use an equivalent sorted vector instead
                continue
            md.AddHint(start[j.id], t)
            for (ii, kk, uu), x in lits.items():
                if ii == i:
                    md.AddHint(x, int((kk, uu) == (k, u)))
    sol = cp_model.CpSolver()
    sol.parameters.num_workers = num_workers
    if seed is not None:
        sol.parameters.random_seed = int(seed)
    if time_limit is not None:
        sol.parameters.max_time_in_seconds = float(time_limit)
    st = sol.Solve(md)
    runtime = time.perf_counter() - t0
    info: dict[str, Any] = {"horizon": H, "options": sum(len(o) for o in opts), "time_unit_s": inst.time_unit_s,
                            "solver": "cpsat", "symmetry_job": inst.jobs[sym_job].id if sym_job is not None else None}
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        status = SolveStatus.INFEASIBLE if st == cp_model.INFEASIBLE else SolveStatus.UNKNOWN
        return Result(None, status, runtime, None, "total-jct-cpsat", lower_bound=lb0, seed=seed,
                      info=MappingProxyType(info))
    choice = {}
    for (i, k, u), x in lits.items():
        if sol.Value(x):
            choice[inst.jobs[i].id] = (k, u, sol.Value(start[inst.jobs[i].id]))
    sched = _schedule(inst, choice, "total-jct-cpsat")
    obj = check_schedule(inst, sched)
    if abs(obj - sol.ObjectiveValue()) > 1e-6:
        raise ScheduleError(f"model objective {sol.ObjectiveValue()} != checked objective {obj}")
    status = SolveStatus.OPTIMAL if st == cp_model.OPTIMAL else SolveStatus.TIME_LIMIT
    lb = obj if status == SolveStatus.OPTIMAL else max(lb0, int(math.ceil(sol.BestObjectiveBound() - 1e-9)))
    info["modes"] = MappingProxyType({jid: inst.job(jid).modes[k].shape for jid, (k, _, _) in choice.items()})
    return Result(obj, status, runtime, sched, "total-jct-cpsat", lower_bound=lb, seed=seed,
                  info=MappingProxyType(info))


@register("total-jct-cpsat", "TotalJctInstance", exact=True,
          description="exact total (weighted) completion time with placement choice (CP-SAT)")
def _registered_cpsat(inst: TotalJctInstance, *, seed: int | None = None, time_limit: float | None = None,
                      **options) -> Result:
    return solve_total_jct(inst, seed=seed, time_limit=30.0 if time_limit is None else time_limit, **options)


# -- brute force ---------------------------------------------------------------------------------------------
MAX_BRUTE_JOBS = 5


def brute_force_total_jct(inst: TotalJctInstance, *, max_jobs: int = MAX_BRUTE_JOBS) -> Result:
    """The optimum by enumeration, independent of CP-SAT: every job order x every concrete placement vector
    per job, each job started at the earliest integer time >= r_i at which its vector fits beside the jobs
    placed before it (serial schedule generation), pruned by branch and bound on sum_i w_i C_i.

    Why this finds an optimum (``formulations/total-jct.md``, "Brute force"): some optimal schedule is
    *active* (no job can start earlier with the others fixed; left-shifting never raises a regular
    objective), and an active schedule is reproduced exactly by serial generation in the order of its start
    times with its own placement vectors: if the generator started job k earlier than in the active schedule,
    moving k alone there would be feasible in the active schedule too (before k's old start only earlier jobs
    run; from then on k was already there), contradicting activeness. The pruning only drops branches whose
    partial cost plus sum_i w_i (r_i + min duration_i) over the unplaced jobs already reaches the best total.
    """
    if inst.n_jobs > max_jobs:
        raise InstanceError(f"at most {max_jobs} jobs for the brute force, got {inst.n_jobs}", field="jobs")
    t0 = time.perf_counter()
    caps = [s.gpus for s in inst.cluster.servers]
    opts = _options(inst)
    prof = _Profile(caps)
    n = inst.n_jobs
    jobs = inst.jobs
    lbj = [j.weight * (j.release + j.min_duration) for j in jobs]
    g = greedy_total_jct(inst)
    best_val = sum(jobs[i].weight * (g[jobs[i].id][2] + jobs[i].modes[g[jobs[i].id][0]].duration) for i in range(n))
    best = [best_val, dict(g)]
    placed: dict[str, tuple[int, tuple[int, ...], int]] = {}
    nodes = [0]

    def rec(left: frozenset[int], cost: int, rest_lb: int) -> None:
        nodes[0] += 1
        if not left:
            if cost < best[0]:
                best[0], best[1] = cost, dict(placed)
            return
        for i in sorted(left):
            j = jobs[i]
            for k, u in opts[i]:
                d = j.modes[k].duration
                t = prof.earliest(u, j.release, d)
                c = cost + j.weight * (t + d)
                if c + rest_lb - lbj[i] >= best[0]:
                    continue
                prof.add(u, t, d)
                placed[j.id] = (k, u, t)
                rec(left - {i}, c, rest_lb - lbj[i])
                del placed[j.id]
                prof.remove(u, t, d)

    rec(frozenset(range(n)), 0, sum(lbj))
    sched = _schedule(inst, best[1], "total-jct-brute")
    obj = check_schedule(inst, sched)
    return Result(obj, SolveStatus.OPTIMAL, time.perf_counter() - t0, sched, "total-jct-brute", lower_bound=obj,
                  info=MappingProxyType({"nodes": nodes[0]}))


@register("total-jct-brute", "TotalJctInstance", exact=True,
          description="exact total (weighted) completion time by enumeration (tiny instances)")
def _registered_brute(inst: TotalJctInstance, *, seed: int | None = None, time_limit: float | None = None,
                      **options) -> Result:
    return brute_force_total_jct(inst, **options)


# -- from paper 001's pipeline jobs -------------------------------------------------------------------------
def from_pipeline_jobs(jobs: Sequence, cluster: Cluster | tuple[int, int] = (2, 4), *, nic_gbps: float = 10.0,
                       intra_gbs: float = 300.0, time_unit_s: float = 1.0, alpha: str = "exact",
                       rounding: str = "up", weights: Mapping[str, int] | None = None, seed: int = 0,
                       name: str = "") -> TotalJctInstance:
    """Problem A of paper 001 from pipeline jobs, as a :class:`TotalJctInstance`.

    ``jobs``: tuples ``(id, release_s, PipelineJob, iterations[, predicted])`` (the format of
    :func:`optsched.sim.asrpt.run_asrpt`). Every shape of g_i GPUs on the (homogeneous) servers is a mode, with
    per-iteration time (ms, eq. 7) ``alpha="exact"`` (the minimum over count matrices of that shape, by
    enumeration, :func:`optsched.perf.pipeline.min_alpha_enumerate`) or ``"heavy-edge"`` (Heavy-Edge's mapping
    on that shape, seeded). Duration = n_i * alpha / 1000 s in units of ``time_unit_s``, release = r_i in those
    units, both rounded ``"up"`` (every schedule of the rounded instance is feasible for the continuous one:
    its optimum is an upper bound on the continuous optimum) or ``"down"`` (a lower bound). Each job also
    carries alpha_i^max (closed form) and alpha~_i^min (Heavy-Edge on the fewest servers), both in ms.

    >>> from optsched.models import catalogue_job
    >>> inst = from_pipeline_jobs([("a", 0.0, catalogue_job("VGG19:dp4"), 100)], (2, 4), time_unit_s=0.5)
    >>> [m.shape for m in inst.jobs[0].modes]
    [(4,), (3, 1), (2, 2)]
    >>> [m.duration for m in inst.jobs[0].modes]     # 0.5 s units: the ring all-reduce crosses the NIC
    [15, 566, 290]
    """
    from ..algorithms.heavy_edge import heavy_edge
    from ..algorithms.heavy_edge import alpha_tilde_min
    from ..perf.pipeline import Network, alpha as alpha_of, alpha_max, min_alpha_enumerate
    from ..problems.pipeline import PipelineJob

    if alpha not in ("exact", "heavy-edge"):
        raise InstanceError(f"must be 'exact' or 'heavy-edge', got {alpha!r}", field="alpha")
    if rounding not in ("up", "down"):
        raise InstanceError(f"must be 'up' or 'down', got {rounding!r}", field="rounding")
    if not _is_real(time_unit_s) or time_unit_s <= 0:
        raise InstanceError(f"must be a positive number, got {time_unit_s!r}", field="time_unit_s")
    if isinstance(cluster, Cluster):
        cl = cluster
    else:
        try:
            m_servers, g = cluster
        except (TypeError, ValueError):
            raise InstanceError(f"must be a Cluster or (servers, gpus_per_server), got {cluster!r}",
                                field="cluster") from None
        cl = Cluster.homogeneous(int(m_servers), int(g))
    caps = sorted({s.gpus for s in cl.servers})
    if len(caps) != 1:
        raise InstanceError("paper 001's model needs homogeneous servers", field="cluster")
    g = caps[0]
    net = Network.from_gbps(g, nic_gbps, intra_gbs)
    rnd = (lambda x: int(math.ceil(x - 1e-9))) if rounding == "up" else (lambda x: int(math.floor(x + 1e-9)))
    out = []
    for idx, row in enumerate(jobs):
        try:
            jid, release_s, spec, iters, *_ = row
        except (TypeError, ValueError):
            raise InstanceError("each job must be (id, release_s, PipelineJob, iterations[, predicted])",
                                field=f"jobs[{idx}]") from None
        if not isinstance(spec, PipelineJob):
            raise InstanceError(f"must be a PipelineJob, got {type(spec).__name__}", field=f"jobs[{idx}].spec",
                                job=str(jid))
        if not _is_real(iters) or iters < 0:
            raise InstanceError(f"must be a number >= 0, got {iters!r}", field=f"jobs[{idx}].iterations",
                                job=str(jid))
        if not _is_real(release_s) or release_s < 0:
            raise InstanceError(f"must be a number >= 0, got {release_s!r}", field=f"jobs[{idx}].release_s",
                                job=str(jid))
        modes = []
        for shape in shapes_of(spec.gpus, [s.gpus for s in cl.servers]):
            if alpha == "exact":
                a_ms, cols = min_alpha_enumerate(spec, net, list(shape), exact_sizes=True)
                cols = [tuple(c) for c in cols]
            else:
                res = heavy_edge(spec, [(f"m{k}", v) for k, v in enumerate(shape)], rng=seed)
                cols = [tuple(res.counts[f"m{k}"]) for k in range(len(shape))]
                a_ms = alpha_of(spec, net, cols, check=False)
            modes.append(Mode(shape, rnd(iters * a_ms / 1000.0 / time_unit_s), a_ms, tuple(cols)))
        out.append(TotalJctJob(str(jid), rnd(release_s / time_unit_s), spec.gpus, tuple(modes),
                               1 if weights is None else weights.get(str(jid), 1), iters, alpha_max(spec, net),
                               alpha_tilde_min(spec, net, seed=seed)))
    return TotalJctInstance(cl, tuple(out), float(time_unit_s), name)


# -- instance files and generator ----------------------------------------------------------------------------
FORMAT = "optsched/total-jct@1"

# paper 001's Table I catalogue entries with at most 4 GPUs (optsched.models, ESTIMATED profiles): jobs that fit
# the tiny clusters on which the exact model is tractable
TINY_SPECS = ("VGG19:1gpu", "VGG19:dp4", "VGG19:pp4", "ResNet152:1gpu", "Inception-V3:1gpu", "Inception-V3:dp4",
              "Inception-V3:pp2x2", "BERT-large:1gpu", "BERT-large:dp4", "T5:pp3", "GPT-6.7B:pp3")


def random_pipeline_jobs(n: int, seed: int, specs: Sequence[str] = TINY_SPECS) -> list[tuple]:
    """``n`` jobs ``(id, release_s, PipelineJob, iterations, predicted)`` drawn with ``default_rng([seed, n])``:
    a catalogue entry from ``specs``, 20-400 iterations, release uniform in [0, 5] s (so that jobs contend),
    predicted iterations = true +- up to 50 %. The input of :func:`from_pipeline_jobs` and of
    :func:`optsched.sim.asrpt.run_asrpt`.

    >>> [(j[0], j[2].gpus, j[3]) for j in random_pipeline_jobs(2, 0)]
    [('j0', 3, 50), ('j1', 3, 75)]
    """
    import numpy as np

    from ..models import catalogue_job

    if not _is_int(n) or n < 1:
        raise InstanceError(f"must be a positive integer, got {n!r}", field="jobs")
    rng = np.random.default_rng([seed, n])
    jobs = []
    for i in range(n):
        spec = catalogue_job(specs[int(rng.integers(len(specs)))], f"j{i}")
        iters = int(rng.integers(20, 401))
        pred = max(0, int(round(iters * rng.uniform(0.5, 1.5))))
        jobs.append((f"j{i}", float(np.round(rng.uniform(0, 5), 2)), spec, iters, pred))
    return jobs


def random_total_jct_instance(n: int, seed: int, servers: int = 2, gpus_per_server: int = 4, *,
                              time_unit_s: float = 0.01, nic_gbps: float = 10.0, intra_gbs: float = 300.0
                              ) -> TotalJctInstance:
    """Problem A of paper 001 on :func:`random_pipeline_jobs` (exact alpha per shape, durations rounded up);
    the instances of ``benchmarks/total_jct.py`` with the defaults (2 x 4 GPUs, 10 ms units).

    >>> inst = random_total_jct_instance(3, 0)
    >>> inst.n_jobs, inst.cluster.total_gpus, inst.name
    (3, 8, 'total-jct-j3-s2x4-seed0')
    """
    return from_pipeline_jobs(random_pipeline_jobs(n, seed), (servers, gpus_per_server), nic_gbps=nic_gbps,
                              intra_gbs=intra_gbs, time_unit_s=time_unit_s, seed=seed,
                              name=f"total-jct-j{n}-s{servers}x{gpus_per_server}-seed{seed}")


def to_dict(inst: TotalJctInstance) -> dict:
    """The JSON form (format ``optsched/total-jct@1``, ``docs/formats.md``) of an instance."""
    out: dict[str, Any] = {"format": FORMAT}
    if inst.name:
        out["name"] = inst.name
    out["time_unit_s"] = inst.time_unit_s
    out["cluster"] = {"servers": [{"id": s.id, "gpus": s.gpus} for s in inst.cluster.servers]}
    rows = []
    for j in inst.jobs:
        row: dict[str, Any] = {"id": j.id, "release": j.release, "gpus": j.gpus}
        if j.weight != 1:
            row["weight"] = j.weight
        for name in ("iterations", "alpha_max", "alpha_tilde_min"):
            if getattr(j, name) is not None:
                row[name] = getattr(j, name)
        modes = []
        for m in j.modes:
            md: dict[str, Any] = {"shape": list(m.shape), "duration": m.duration}
            if m.alpha is not None:
                md["alpha"] = m.alpha
            if m.stages is not None:
                md["stages"] = [list(c) for c in m.stages]
            modes.append(md)
        row["modes"] = modes
        rows.append(row)
    out["jobs"] = rows
    return out


def from_dict(data: Mapping[str, Any], name: str = "") -> TotalJctInstance:
    """Read the JSON form; every error names the field path and the job.

    >>> from_dict({"format": FORMAT, "cluster": {"servers": [{"id": "s0", "gpus": 2}]},
    ...            "jobs": [{"id": "a", "release": 0, "gpus": 2, "modes": [{"shape": [2]}]}]})
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: jobs[0].modes[0].duration (job 'a'): missing field
    """
    from ..cluster import Server
    from ..io import Fields, check_format

    top = Fields(data, "")
    check_format(data, FORMAT)
    servers = []
    for i, s in enumerate(top.obj("cluster").array("servers")):
        sf = Fields(s, f"cluster.servers[{i}]")
        servers.append(Server(sf.string("id"), sf.integer("gpus")))
    jobs = []
    for i, j in enumerate(top.array("jobs")):
        jid = j.get("id") if isinstance(j, Mapping) else None
        jf = Fields(j, f"jobs[{i}]", jid if isinstance(jid, str) else None)
        modes = []
        for k, m in enumerate(jf.array("modes")):
            mf = Fields(m, f"{jf.where}.modes[{k}]", jf.job)
            shape = mf.array("shape")
            for v in shape:
                if isinstance(v, bool) or not isinstance(v, int):
                    raise InstanceError(f"must be positive integers, got {shape!r}", field=mf.path("shape"),
                                        job=jf.job)
            stages = None
            if "stages" in m:
                cols = mf.array("stages")
                if len(cols) != len(shape) or any(not isinstance(c, list) or not all(_is_int(x) for x in c)
                                                  for c in cols):
                    raise InstanceError("must list one array of integer per-stage counts per server of the shape",
                                        field=mf.path("stages"), job=jf.job)
                stages = tuple(tuple(c) for c in cols)
            alpha = mf.number("alpha") if "alpha" in m else None
            modes.append(Mode(tuple(shape), mf.integer("duration"), alpha, stages))
        opt = {k: jf.number(k) for k in ("iterations", "alpha_max", "alpha_tilde_min") if k in j}
        jobs.append(TotalJctJob(jf.string("id"), jf.integer("release"), jf.integer("gpus"), tuple(modes),
                                jf.integer("weight", 1), **opt))
    return TotalJctInstance(Cluster(tuple(servers)), tuple(jobs), top.number("time_unit_s", 1.0),
                            str(data.get("name", name) or name))
