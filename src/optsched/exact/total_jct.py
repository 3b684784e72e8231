"""Exact total (weighted) completion time with placement choice (paper 001's problem A): CP-SAT and a brute
force that checks it. The problem, its format and its evaluator: [`optsched.problems.total_jct`][].

* [`solve_total_jct`][optsched.exact.total_jct.solve_total_jct]: CP-SAT, one optional interval per (job, concrete
  placement) sharing the job's start
  and end, one cumulative per server (``docs/formulations/total-jct.md``). Registered as ``total-jct-cpsat``.
* [`brute_force_total_jct`][optsched.exact.total_jct.brute_force_total_jct]: the independent check: every job order x
  every concrete placement, each job
  list-scheduled at its earliest feasible start (serial schedule generation), with branch and bound.
  Registered as ``total-jct-brute``.

```pycon
>>> from optsched.cluster import Cluster
>>> from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob
>>> from optsched.evaluators.total_jct import check_schedule
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

```
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Callable

from ..algorithms.total_jct import Profile, greedy_total_jct
from ..errors import InstanceError, ScheduleError
from ..evaluators.total_jct import check_schedule
from ..problems.total_jct import TotalJctInstance, choice_cost, placement_options, schedule_from_choice
from ..registry import algorithm
from ..result import Result, SolveStatus
from . import _cpsat

if TYPE_CHECKING:  # pragma: no cover - OR-Tools is imported by the solver itself (it takes ~0.5 s)
    from ortools.sat.python import cp_model

__all__ = ["MAX_BRUTE_JOBS", "CpModelOf", "brute_force_total_jct", "solve_total_jct"]


# -- CP-SAT -------------------------------------------------------------------------------------------------
def add_mode_choice(md: cp_model.CpModel, j: Any, options: list[tuple[int, tuple[int, ...]]], s: Any, e: Any,
                    per_server: list[tuple[list[Any], list[int]]]) -> dict[tuple[int, tuple[int, ...]], Any]:
    """Job ``j`` runs in exactly one of its (mode, per-server GPU vector) ``options`` between start ``s`` and end
    ``e``: a literal and an optional interval per option, each interval added to ``per_server`` with its GPUs on
    every server it uses (for [`add_server_capacities`][optsched.exact.total_jct.add_server_capacities]). Returns the
    literal of every option. Shared by the full model and the LNS sub-model ([`optsched.exact.total_jct_lns`][])."""
    lits = {}
    for k, u in options:
        x = md.new_bool_var(f"x[{j.id},{k},{u}]")
        iv = md.new_optional_interval_var(s, j.modes[k].duration, e, x, f"I[{j.id},{k},{u}]")
        for m, n in enumerate(u):
            if n:
                per_server[m][0].append(iv)
                per_server[m][1].append(n)
        lits[k, u] = x
    md.add_exactly_one(lits.values())
    return lits


def add_server_capacities(md: cp_model.CpModel, per_server: list[tuple[list[Any], list[int]]],
                          caps: list[int]) -> None:
    """Each server's GPUs bound the intervals placed on it (one cumulative per server that has any)."""
    for m, (ivs, dem) in enumerate(per_server):
        if ivs:
            md.add_cumulative(ivs, dem, caps[m])


class CpModelOf:
    """The CP-SAT model of ``inst`` (``docs/formulations/total-jct.md``): ``md`` (a ``CpModel``), the start
    variable of every job and the literal of every (job, mode, vector);
    [`choice`][optsched.exact.total_jct.CpModelOf.choice] reads a solution back.
    Shared by [`solve_total_jct`][optsched.exact.total_jct.solve_total_jct] and the branch and bound's CP-SAT companion
    ([`optsched.exact.total_jct_bnb`][])."""

    def __init__(self, inst: TotalJctInstance, *, symmetry: bool = True, hint: bool = True):
        from ortools.sat.python import cp_model

        self.inst = inst
        H = self.horizon = inst.horizon()
        caps = [s.gpus for s in inst.cluster.servers]
        self.sym_job = None
        if symmetry:
            self.sym_job = max(range(inst.n_jobs), key=lambda i: (inst.jobs[i].gpus, -i))
        opts = placement_options(inst, self.sym_job)
        self.n_options = sum(len(o) for o in opts)
        md = self.md = cp_model.CpModel()
        start: dict[str, cp_model.IntVar] = {}
        self.start = start
        end: dict[str, cp_model.IntVar] = {}
        lits: dict[tuple[int, int, tuple[int, ...]], cp_model.IntVar] = {}
        self.lits = lits
        per_server: list[tuple[list[cp_model.IntervalVar], list[int]]] = [([], []) for _ in caps]
        for i, j in enumerate(inst.jobs):
            s = md.new_int_var(j.release, H - j.min_duration, f"S[{j.id}]")
            e = md.new_int_var(j.release + j.min_duration, H, f"C[{j.id}]")
            start[j.id], end[j.id] = s, e
            for (k, u), x in add_mode_choice(md, j, opts[i], s, e, per_server).items():
                lits[i, k, u] = x
        add_server_capacities(md, per_server, caps)
        md.minimize(sum(j.weight * end[j.id] for j in inst.jobs))
        if hint:
            g = greedy_total_jct(inst)
            for i, j in enumerate(inst.jobs):
                k, u, t = g[j.id]
                if (i, k, u) not in lits:  # the symmetry-broken job: use an equivalent sorted vector instead
                    continue
                md.add_hint(start[j.id], t)
                for (ii, kk, uu), x in lits.items():
                    if ii == i:
                        md.add_hint(x, (kk, uu) == (k, u))

    def choice(self, value: Callable[[Any], int]) -> dict[str, tuple[int, tuple[int, ...], int]]:
        """(mode index, vector, start) per job id in the solution read through ``value`` (a solver's or a
        solution callback's ``value``)."""
        jobs = self.inst.jobs
        return {jobs[i].id: (k, u, int(value(self.start[jobs[i].id])))
                for (i, k, u), x in self.lits.items() if value(x)}


def solve_total_jct(inst: TotalJctInstance, *, time_limit: float | None = 30.0, num_workers: int = 2,
                    symmetry: bool = True, hint: bool = True, seed: int | None = None,
                    deterministic_limit: float | None = None, log: bool = False) -> Result:
    """Minimise sum_i w_i C_i exactly (``docs/formulations/total-jct.md``). ``status`` is ``optimal`` when proven,
    ``time limit`` with the best schedule found otherwise, and ``unknown`` with ``objective=None`` and
    ``schedule=None`` when the limit stopped CP-SAT before any schedule. ``lower_bound`` is CP-SAT's proven
    bound (at least
    [`TotalJctInstance.trivial_lower_bound`][optsched.problems.total_jct.TotalJctInstance.trivial_lower_bound]).
    ``objective`` is recomputed by
    [`check_schedule`][optsched.evaluators.total_jct.check_schedule]. ``deterministic_limit`` replaces ``time_limit`` by
    a limit on CP-SAT's
    deterministic time, reproducible with the same ``seed`` ([`optsched.exact._cpsat`][]); ``info["limit"]``
    says which one applied."""
    # checked before the model is built: a bad limit, worker count or seed is reported at once
    params = _cpsat.Params(time_limit=time_limit, deterministic_limit=deterministic_limit,
                           num_workers=num_workers, seed=seed, log=log)
    t0 = time.perf_counter()
    model = CpModelOf(inst, symmetry=symmetry, hint=hint)
    lb0 = inst.trivial_lower_bound()
    run = _cpsat.solve(model.md, params)
    sym_job = model.sym_job
    info: dict[str, Any] = {"horizon": model.horizon, "options": model.n_options, "time_unit_s": inst.time_unit_s,
                            "solver": "cpsat", "symmetry_job": inst.jobs[sym_job].id if sym_job is not None else None,
                            **run.info()}
    # CP-SAT's bound holds even when it found no schedule (objective values are integers: round it up)
    lb = lb0 if run.bound is None else max(lb0, math.ceil(run.bound - 1e-9))
    if run.objective is None:  # stopped before any schedule (or infeasible): say what was proven
        return Result(None, run.status, time.perf_counter() - t0, None, "total-jct-cpsat",
                      lower_bound=None if run.status == SolveStatus.INFEASIBLE else lb, seed=seed, info=info)
    choice = model.choice(run.value)
    sched = schedule_from_choice(inst, choice, "total-jct-cpsat")
    obj = check_schedule(inst, sched)
    if abs(obj - run.objective) > 1e-6:
        raise ScheduleError(f"model objective {run.objective} != checked objective {obj}")
    if run.status == SolveStatus.OPTIMAL:
        lb = obj
    info["modes"] = {jid: inst.job(jid).modes[k].shape for jid, (k, _, _) in choice.items()}
    return Result(obj, run.status, time.perf_counter() - t0, sched, "total-jct-cpsat", lower_bound=lb, seed=seed,
                  info=info)


@algorithm("total-jct-cpsat", TotalJctInstance, exact=True,
          description="exact total (weighted) completion time with placement choice (CP-SAT)")
def _registered_cpsat(inst: TotalJctInstance, *, seed: int | None = None, time_limit: float | None = None,
                      deterministic_limit: float | None = None, **options) -> Result:
    # deterministic_limit named so that callers reading the signature (solve_many) pass it (as exact's, issue 28)
    return solve_total_jct(inst, seed=seed, time_limit=30.0 if time_limit is None else time_limit,
                           deterministic_limit=deterministic_limit, **options)


# -- brute force ---------------------------------------------------------------------------------------------
MAX_BRUTE_JOBS = 5


def brute_force_total_jct(inst: TotalJctInstance, *, max_jobs: int = MAX_BRUTE_JOBS) -> Result:
    """The optimum by enumeration, independent of CP-SAT: every job order x every concrete placement vector
    per job, each job started at the earliest integer time >= r_i at which its vector fits beside the jobs
    placed before it (serial schedule generation), pruned by branch and bound on sum_i w_i C_i.

    Why this finds an optimum (``docs/formulations/total-jct.md``, "Brute force"): some optimal schedule is
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
    opts = placement_options(inst)
    prof = Profile(caps)
    n = inst.n_jobs
    jobs = inst.jobs
    lbj = [j.weight * (j.release + j.min_duration) for j in jobs]
    g = greedy_total_jct(inst)
    best_val = choice_cost(inst, g)
    best_choice: dict[str, tuple[int, tuple[int, ...], int]] = dict(g)
    placed: dict[str, tuple[int, tuple[int, ...], int]] = {}
    nodes = 0

    def rec(left: frozenset[int], cost: int, rest_lb: int) -> None:
        nonlocal best_val, best_choice, nodes
        nodes += 1
        if not left:
            if cost < best_val:
                best_val, best_choice = cost, dict(placed)
            return
        for i in sorted(left):
            j = jobs[i]
            for k, u in opts[i]:
                d = j.modes[k].duration
                t = prof.earliest(u, j.release, d)
                c = cost + j.weight * (t + d)
                if c + rest_lb - lbj[i] >= best_val:
                    continue
                prof.add(u, t, d)
                placed[j.id] = (k, u, t)
                rec(left - {i}, c, rest_lb - lbj[i])
                del placed[j.id]
                prof.remove(u, t, d)

    rec(frozenset(range(n)), 0, sum(lbj))
    sched = schedule_from_choice(inst, best_choice, "total-jct-brute")
    obj = check_schedule(inst, sched)
    return Result(obj, SolveStatus.OPTIMAL, time.perf_counter() - t0, sched, "total-jct-brute", lower_bound=obj,
                  info={"nodes": nodes})


@algorithm("total-jct-brute", TotalJctInstance, exact=True,
          description="exact total (weighted) completion time by enumeration (tiny instances)")
def _registered_brute(inst: TotalJctInstance, *, seed: int | None = None, time_limit: float | None = None,
                      **options) -> Result:
    return brute_force_total_jct(inst, **options)
