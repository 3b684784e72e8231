"""CP-SAT model of RAR-DDLS (paper 000) itself, with per-slot communication contention: the ``exact`` solver.

The mathematics, variable by variable, and the proof that the model's optimum equals the evaluator's optimum,
are in ``docs/formulations/rar-ddls-cpsat.md``. In short: a time-indexed model over slots 0..H-1 (H = the best
heuristic makespan), where each job picks a start a_j, a completion C_j and GPUs per server y_js; it runs
non-preemptively in slots a_j..C_j-1; servers never exceed their GPUs (one cumulative per server); in each
slot the number of split jobs on every server gives the contention p_j[t] (eq. 6), and iterations made in
the slot are at most phi_j(n_j, p_j[t]) = floor(1/tau) (eq. 8-9), read from a table precomputed in Python
by the evaluator's own functions ([`optsched.bounds.phi_table`][]), so model and evaluator agree exactly.
The objective is the makespan max_j C_j.

The returned objective is always the evaluator's score of the returned schedule; at a proven optimum it
equals the model's objective (checked on every solve: a mismatch raises [`SolverError`][optsched.errors.SolverError]).

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> from optsched import evaluate
>>> res = solve_rar_cpsat(tiny_rar_example(), time_limit=20, num_workers=1)
>>> res.status.value, res.objective == evaluate(tiny_rar_example(), res.schedule).makespan
('optimal', True)
>>> res.lower_bound == res.objective
True

```
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ortools.sat.python import cp_model

from ..algorithms.baselines import first_fit, list_scheduling, random_placement
from ..algorithms.sjf_bco import sjf_bco
from ..bounds import (
    duration_range,
    fastest_slots,
    lower_bound,
    makespan_lower_bound,
    p_sensitive,
    phi_table,
    placement_classes,
)
from ..errors import ScheduleError, SolverError
from ..evaluators.rar import Evaluation, evaluate
from ..perf.rar import contention, max_contention, phi_for
from ..problems.rar import RarInstance, RarJob
from ..registry import algorithm
from ..result import Result, Schedule, ScheduledJob, SolveStatus
from . import _cpsat

# time-indexed model size (jobs x slots x servers) above which we do not build the model at all
MAX_MODEL_CELLS = 60_000
# the greedy incumbent is only computed up to this many jobs
GREEDY_MAX_JOBS = 16
# the paper's heuristics, each a warm start for the model (name -> function returning (schedule, info))
HEURISTICS = {"ff": first_fit, "ls": list_scheduling, "rand": random_placement, "sjf-bco": sjf_bco}


# -- incumbents: upper bounds and hints ---------------------------------------------------------------------
def _fill(inst: RarInstance, job: RarJob, n: int, free: Mapping[str, int] | None = None) -> dict[str, int] | None:
    """A concrete placement of ``job`` on exactly ``n`` servers: largest (free) servers first, one GPU on
    each, then the rest filled greedily. ``None`` if impossible."""
    cap = dict(free) if free is not None else inst.cluster.capacity
    order = sorted(cap, key=lambda s: (-cap[s], s))[:n]
    if len(order) < n or sum(cap[s] for s in order) < job.gpus or any(cap[s] < 1 for s in order):
        return None
    pl = dict.fromkeys(order, 1)
    rest = job.gpus - n
    if rest < 0:
        return None
    for s in order:
        extra = min(rest, cap[s] - 1)
        pl[s] += extra
        rest -= extra
    return pl if rest == 0 else None


def serial_schedule(inst: RarInstance) -> Schedule:
    """Every job alone, one after another, each on its fastest placement class: always feasible.

    ```pycon
    >>> from optsched.generators.rar import tiny_rar_example
    >>> serial_schedule(tiny_rar_example())["j1"].start   # j0 alone on one server: ceil(120/25) slots
    5

    ```
    """
    rows, t = [], 0
    for job in inst.jobs:
        table = phi_table(inst, job)
        n = max(table, key=lambda k: (table[k][1 if k > 1 else 0], -k))
        pl = _fill(inst, job, n)
        assert pl is not None
        rows.append(ScheduledJob(job.id, t, pl))
        t += -(-job.iterations // table[n][1 if n > 1 else 0])
    return Schedule(tuple(rows), algorithm="serial")


def _done(sj: ScheduledJob) -> float:
    """The completion the evaluator wrote into ``sj`` (every job of an evaluated schedule has one)."""
    if sj.completion is None:
        raise SolverError(f"job {sj.id!r} has no completion: its schedule was not evaluated (a bug)")
    return sj.completion


def greedy_schedule(inst: RarInstance) -> Schedule:
    """A list schedule scored by the evaluator: jobs by decreasing GPU-slots, each at the (start, placement
    class) pair that minimises the partial makespan, starts tried at 0 and at the completions so far."""
    order = sorted(inst.jobs, key=lambda j: -j.gpus * duration_range(inst, j)[0])
    placed: list[ScheduledJob] = []  # evaluated: every job carries its completion
    for job in order:
        best: tuple[tuple[int, float, int], Evaluation] | None = None
        sub = dataclasses.replace(inst, jobs=tuple(inst.job(p.id) for p in placed) + (job,))
        completions = sorted({0, *(_done(c) for c in placed)})
        for start in completions:
            for n in placement_classes(inst, job):
                free = dict(inst.cluster.capacity)
                for p in placed:  # GPUs held at `start` by jobs placed so far
                    if p.start <= start < _done(p):
                        for s, g in p.placement.items():
                            free[s] -= g
                pl = _fill(inst, job, n, free)
                if pl is None:
                    continue
                try:
                    ev = evaluate(sub, Schedule(tuple(placed) + (ScheduledJob(job.id, start, pl),)))
                except ScheduleError:
                    continue
                key = (ev.makespan, start, n)
                if best is None or key < best[0]:
                    best = (key, ev)
        # the last completion always works: the cluster is empty then and every job fits it
        assert best is not None
        placed = list(best[1].schedule.jobs)
    return Schedule(tuple(placed), algorithm="greedy")


def incumbents(inst: RarInstance, seed: int | None = 0, heuristics: bool = True,
               greedy: bool = True) -> list[tuple[int, str, Schedule]]:
    """(makespan, name, schedule) of the serial schedule, the greedy one (<= GREEDY_MAX_JOBS jobs) and every
    registered heuristic, best first. Heuristics that fail are skipped (their failure is not this solver's business)."""
    out: list[tuple[int, str, Schedule]] = []
    # the greedy replays partial schedules for every (start, class) pair: quadratic in jobs, tiny instances only
    use_greedy = greedy and inst.n_jobs <= GREEDY_MAX_JOBS
    makers = [("serial", serial_schedule)] + ([("greedy", greedy_schedule)] if use_greedy else [])
    for name, make in makers:
        sched = make(inst)
        out.append((evaluate(inst, sched).makespan, name, sched))
    if heuristics:
        for name, func in HEURISTICS.items():
            try:
                sched = func(inst, seed=seed)
            except Exception:  # noqa: BLE001 - a broken heuristic must not break the exact solver
                continue
            if isinstance(sched, tuple):
                sched = sched[0]
            out.append((evaluate(inst, sched).makespan, name, sched))
    out.sort(key=lambda x: (x[0], x[1]))
    return out


# -- the model --------------------------------------------------------------------------------------------
@dataclass
class RarModel:
    """The CP-SAT model and the variables needed to read a schedule back or to give a hint."""

    model: cp_model.CpModel
    horizon: int
    start: dict[str, cp_model.IntVar]
    end: dict[str, cp_model.IntVar]
    gpus: dict[tuple[str, str], cp_model.IntVar]  # (job, server) -> y_js
    makespan: cp_model.IntVar
    hint_vars: dict[str, cp_model.IntVar]         # name -> variable, for hints
    server_classes: list[list[str]]           # servers of equal size (interchangeable), in id order


def server_classes(inst: RarInstance) -> list[list[str]]:
    """Servers grouped by size, each group in the cluster's order: servers of one group are interchangeable."""
    groups: dict[int, list[str]] = {}
    for s in inst.cluster.servers:
        groups.setdefault(s.gpus, []).append(s.id)
    return list(groups.values())


def build_model(inst: RarInstance, horizon: int, *, symmetry: bool = True,
                max_makespan: int | None = None, min_makespan: int = 0) -> RarModel:
    """Build the time-indexed model over slots 0..horizon-1 (``docs/formulations/rar-ddls-cpsat.md``)."""
    m = cp_model.CpModel()
    H = int(horizon)
    S = inst.cluster.server_ids
    cap = inst.cluster.capacity
    P = max_contention(inst)
    hv: dict[str, cp_model.IntVar] = {}
    start: dict[str, cp_model.IntVar] = {}
    end: dict[str, cp_model.IntVar] = {}
    y: dict[tuple[str, str], cp_model.IntVar] = {}
    # min_makespan: a proven lower bound on T* from elsewhere (e.g. the interval relaxation of rar_interval)
    makespan = m.new_int_var(min(H, max(makespan_lower_bound(inst), min_makespan)),
                             H if max_makespan is None else min(H, max_makespan), "makespan")
    intervals: dict[str, list[cp_model.IntervalVar]] = {s: [] for s in S}
    demands: dict[str, list[cp_model.LinearExprT]] = {s: [] for s in S}
    all_intervals: list[cp_model.IntervalVar] = []
    all_demands: list[cp_model.LinearExprT] = []
    act: dict[tuple[str, int], cp_model.IntVar] = {}
    z: dict[tuple[str, str], cp_model.IntVar] = {}
    split: dict[str, cp_model.IntVar] = {}
    nserv: dict[str, cp_model.IntVar] = {}
    splittable = [j for j in inst.jobs if max(placement_classes(inst, j)) >= 2]
    # contention is modelled only where it can change phi: a job whose phi_j(n, p) does not depend on p (for any
    # n) runs at phi_j(n_j) throughout, so d_j >= ceil(F_j / phi_j(n_j)) (dlow) is its whole progress model;
    # the per-slot activity of a split-capable job is needed only to count it in cnt for the sensitive jobs
    sensitive = [j for j in splittable if p_sensitive(inst, j)]
    timed = {j.id for j in (splittable if sensitive else [])}
    for j in inst.jobs:
        classes = placement_classes(inst, j)
        dmin, dmax = duration_range(inst, j)
        a = m.new_int_var(0, H - dmin, f"a[{j.id}]")
        c = m.new_int_var(dmin, H, f"C[{j.id}]")
        d = m.new_int_var(dmin, min(dmax, H), f"d[{j.id}]")
        iv = m.new_interval_var(a, d, c, f"iv[{j.id}]")
        start[j.id], end[j.id] = a, c
        hv[f"a[{j.id}]"], hv[f"C[{j.id}]"], hv[f"d[{j.id}]"] = a, c, d
        m.add(makespan >= c)
        for s in S:
            ub = min(j.gpus, cap[s])
            y[j.id, s] = m.new_int_var(0, ub, f"y[{j.id},{s}]")
            z[j.id, s] = m.new_bool_var(f"z[{j.id},{s}]")
            m.add(y[j.id, s] >= 1).only_enforce_if(z[j.id, s])
            m.add(y[j.id, s] == 0).only_enforce_if(z[j.id, s].negated())
            hv[f"y[{j.id},{s}]"], hv[f"z[{j.id},{s}]"] = y[j.id, s], z[j.id, s]
            intervals[s].append(iv)
            demands[s].append(y[j.id, s])
        m.add(sum(y[j.id, s] for s in S) == j.gpus)
        nserv[j.id] = m.new_int_var_from_domain(cp_model.Domain.from_values(list(classes)), f"n[{j.id}]")
        m.add(nserv[j.id] == sum(z[j.id, s] for s in S))
        hv[f"n[{j.id}]"] = nserv[j.id]
        # redundant: the duration is at least ceil(F_j / best phi of the chosen class n_j)
        fast = fastest_slots(inst, j)
        fastest = [fast.get(n, dmin) for n in range(max(classes) + 1)]
        if j not in sensitive and len({fastest[n] for n in classes}) == 1:
            m.add(d >= fastest[classes[0]])  # exact for a p-insensitive job (no per-slot progress below)
        if len({fastest[n] for n in classes}) > 1:
            dlow = m.new_int_var(dmin, max(fastest), f"dlow[{j.id}]")
            m.add_element(nserv[j.id], fastest, dlow)
            m.add(d >= dlow)
            hv[f"dlow[{j.id}]"] = dlow
        all_intervals.append(iv)
        all_demands.append(j.gpus)
        if j in splittable:
            split[j.id] = m.new_bool_var(f"split[{j.id}]")
            m.add(nserv[j.id] >= 2).only_enforce_if(split[j.id])
            m.add(nserv[j.id] <= 1).only_enforce_if(split[j.id].negated())
            hv[f"split[{j.id}]"] = split[j.id]
        # act[j,t] <=> a_j <= t < C_j, through the order literals A[j,t] = [a_j <= t], E[j,t] = [C_j > t]
        for t in (range(H) if j.id in timed else ()):
            A = m.new_bool_var(f"A[{j.id},{t}]")
            E = m.new_bool_var(f"E[{j.id},{t}]")
            m.add(a <= t).only_enforce_if(A)
            m.add(a >= t + 1).only_enforce_if(A.negated())
            m.add(c >= t + 1).only_enforce_if(E)
            m.add(c <= t).only_enforce_if(E.negated())
            x = m.new_bool_var(f"act[{j.id},{t}]")
            m.add_bool_and([A, E]).only_enforce_if(x)
            m.add_bool_or([A.negated(), E.negated(), x])
            act[j.id, t] = x
            hv[f"A[{j.id},{t}]"], hv[f"E[{j.id},{t}]"], hv[f"act[{j.id},{t}]"] = A, E, x
    for s in S:  # capacity of every server in every slot
        m.add_cumulative(intervals[s], demands[s], cap[s])
    # redundant: the whole cluster as one resource of N GPUs, with constant demands G_j (strong propagation)
    m.add_cumulative(all_intervals, all_demands, inst.cluster.total_gpus)
    # contention: cnt[s,t] >= number of split jobs active on s in slot t
    cnt: dict[tuple[str, int], cp_model.IntVar] = {}
    for s in S:
        for t in (range(H) if sensitive else ()):
            terms = []
            for j in splittable:
                u = m.new_bool_var(f"u[{j.id},{s},{t}]")
                # u >= z & split & act (a lower bound suffices: counting too many only slows jobs down)
                m.add_bool_or([z[j.id, s].negated(), split[j.id].negated(), act[j.id, t].negated(), u])
                m.add_implication(u, act[j.id, t])
                m.add_implication(u, z[j.id, s])
                m.add_implication(u, split[j.id])
                hv[f"u[{j.id},{s},{t}]"] = u
                terms.append(u)
            if terms:
                k = m.new_int_var(0, min(len(terms), cap[s]), f"cnt[{s},{t}]")
                m.add(k == sum(terms))
                cnt[s, t] = k
                hv[f"cnt[{s},{t}]"] = k
    # progress: it[j,t] <= phi_j(n_j, p_j[t]) while active, sum_t it[j,t] >= F_j
    for j in sensitive:
        table = phi_table(inst, j)
        phimax = max(max(r) for r in table.values())
        its = []
        if j not in splittable:  # pragma: no cover - sensitive jobs are split-capable
            phi1 = table[1][0]
            for t in range(H):
                it = m.new_int_var(0, phi1, f"it[{j.id},{t}]")
                m.add(it <= phi1 * act[j.id, t])
                hv[f"it[{j.id},{t}]"] = it
                its.append(it)
        else:
            nmax = max(table)
            flat: list[int] = []  # phi_j(n, p) at index n * (P + 1) + p
            for n in range(nmax + 1):
                flat.extend(table.get(n, (0,) * (P + 1)))
            for t in range(H):
                p = m.new_int_var(0, P, f"p[{j.id},{t}]")
                for s in S:
                    if (s, t) in cnt:  # p >= cnt[s,t] on every server j uses
                        m.add(p >= cnt[s, t]).only_enforce_if(z[j.id, s])
                phi = m.new_int_var(min(flat), phimax, f"phi[{j.id},{t}]")
                m.add_element(nserv[j.id] * (P + 1) + p, flat, phi)
                it = m.new_int_var(0, phimax, f"it[{j.id},{t}]")
                m.add(it <= phi)
                m.add(it <= phimax * act[j.id, t])
                hv[f"p[{j.id},{t}]"], hv[f"phi[{j.id},{t}]"], hv[f"it[{j.id},{t}]"] = p, phi, it
                its.append(it)
        m.add(sum(its) >= j.iterations)
    groups = server_classes(inst)
    if symmetry:
        _lex_columns(m, inst, y, groups)
    m.minimize(makespan)
    return RarModel(m, H, start, end, y, makespan, hv, groups)


def _lex_columns(m: cp_model.CpModel, inst: RarInstance, y: dict[tuple[str, str], cp_model.IntVar],
                 classes: list[list[str]]) -> None:
    """Servers of one size are interchangeable: keep the columns y[., s] of each class in lexicographically
    non-increasing order (jobs in instance order). Any schedule can be permuted into this form."""
    jobs = [j.id for j in inst.jobs]
    for group in classes:
        for s1, s2 in zip(group, group[1:]):
            eq_prefix = None  # literal: columns s1 and s2 agree on every job so far (None = trivially true)
            for i, j in enumerate(jobs):
                if eq_prefix is None:
                    m.add(y[j, s1] >= y[j, s2])
                else:
                    m.add(y[j, s1] >= y[j, s2]).only_enforce_if(eq_prefix)
                if i == len(jobs) - 1:
                    break
                same = m.new_bool_var(f"same[{j},{s1},{s2}]")
                m.add(y[j, s1] == y[j, s2]).only_enforce_if(same)
                m.add(y[j, s1] != y[j, s2]).only_enforce_if(same.negated())
                nxt = m.new_bool_var(f"eq[{j},{s1},{s2}]")
                if eq_prefix is None:
                    m.add_implication(same, nxt)
                else:
                    m.add_bool_or([eq_prefix.negated(), same.negated(), nxt])
                eq_prefix = nxt


def canonical(inst: RarInstance, schedule: Schedule) -> Schedule:
    """Permute servers of equal size so that the schedule satisfies the model's symmetry breaking (columns
    of each class lexicographically non-increasing). Same makespan: interchangeable servers."""
    jobs = [j.id for j in inst.jobs]
    mapping: dict[str, str] = {}
    for group in server_classes(inst):
        cols = {s: tuple(schedule[j].placement.get(s, 0) for j in jobs) for s in group}
        ordered = sorted(group, key=lambda s: cols[s], reverse=True)  # stable: ties keep their order
        mapping.update(zip(ordered, group))
    return Schedule(tuple(ScheduledJob(sj.id, sj.start, {mapping[s]: g for s, g in sj.placement.items()},
                                       sj.completion) for sj in schedule.jobs),
                    schedule.algorithm, schedule.instance)


def trajectory(inst: RarInstance, schedule: Schedule) -> dict[str, Any]:
    """Slot-by-slot replay (the evaluator's rules, without event jumping): per (job, slot) activity,
    contention and iterations. Used to hint the model with a complete, consistent assignment."""
    ev = evaluate(inst, schedule)
    jobs = {j.id: j for j in inst.jobs}
    pl = {sj.id: dict(sj.placement) for sj in schedule.jobs}
    st = {sj.id: int(sj.start) for sj in schedule.jobs}
    out: dict[str, Any] = {"completion": dict(ev.completions), "active": {}, "p": {}, "phi": {}, "it": {}}
    for t in range(ev.makespan):
        active = {j: pl[j] for j in pl if st[j] <= t < ev.completions[j]}
        p = contention(active)
        for j in active:
            out["active"][j, t] = True
            out["p"][j, t] = p[j]
            out["phi"][j, t] = phi_for(inst, jobs[j], pl[j], p[j])
    return out


def add_hint(rm: RarModel, inst: RarInstance, schedule: Schedule) -> None:
    """Hint every model variable with the (canonical) schedule's exact trajectory."""
    sched = canonical(inst, schedule)
    tr = trajectory(inst, sched)
    hv = rm.hint_vars
    m = rm.model
    P = max_contention(inst)

    count = {(s, t): sum(1 for j in inst.jobs if len(sched[j.id].placement) >= 2 and s in sched[j.id].placement
                         and tr["active"].get((j.id, t))) for s in inst.cluster.server_ids for t in range(rm.horizon)}

    def hint(name, value):
        if name in hv:
            m.add_hint(hv[name], int(value))

    for j in inst.jobs:
        sj = sched[j.id]
        a, c = int(sj.start), tr["completion"][j.id]
        hint(f"a[{j.id}]", a)
        hint(f"C[{j.id}]", c)
        hint(f"d[{j.id}]", c - a)
        hint(f"dlow[{j.id}]", fastest_slots(inst, j)[len(sj.placement)])
        n = len(sj.placement)
        hint(f"n[{j.id}]", n)
        hint(f"split[{j.id}]", n >= 2)
        for s in inst.cluster.server_ids:
            hint(f"y[{j.id},{s}]", sj.placement.get(s, 0))
            hint(f"z[{j.id},{s}]", sj.placement.get(s, 0) > 0)
        table = phi_table(inst, j)
        for t in range(rm.horizon):
            on = tr["active"].get((j.id, t), False)
            hint(f"A[{j.id},{t}]", a <= t)
            hint(f"E[{j.id},{t}]", c > t)
            hint(f"act[{j.id},{t}]", on)
            if f"p[{j.id},{t}]" in hv:
                # p >= cnt[s,t] on every server j uses; for an active split job this is exactly eq. (6)
                p = max([0] + [count[s, t] for s in sj.placement])
                hint(f"p[{j.id},{t}]", p)
                hint(f"phi[{j.id},{t}]", table[n][min(p, P)])
            hint(f"it[{j.id},{t}]", tr["phi"][j.id, t] if on else 0)
            for s in inst.cluster.server_ids:
                hint(f"u[{j.id},{s},{t}]", on and n >= 2 and s in sj.placement)
    for s in inst.cluster.server_ids:
        for t in range(rm.horizon):
            hint(f"cnt[{s},{t}]", count[s, t])
    m.add_hint(rm.makespan, max(tr["completion"].values()))


class StartsAndGpus(Protocol):
    """A model with a start variable per job and a GPU count per (job, server): what a schedule is read from."""

    start: dict[str, cp_model.IntVar]
    gpus: dict[tuple[str, str], cp_model.IntVar]


def read_schedule(rm: StartsAndGpus, run: _cpsat.Run, inst: RarInstance, *, algorithm: str = "exact") -> Schedule:
    """The schedule of the solution ``run`` found: each job's start and GPUs per server (the time-indexed
    model's, or an interval model's, which names the same variables)."""
    rows = []
    for j in inst.jobs:
        pl = {s: run.value(rm.gpus[j.id, s]) for s in inst.cluster.server_ids}
        rows.append(ScheduledJob(j.id, run.value(rm.start[j.id]), {s: g for s, g in pl.items() if g}))
    return Schedule(tuple(rows), algorithm=algorithm)


# -- the solver -------------------------------------------------------------------------------------------
def solve_rar_cpsat(inst: RarInstance, *, time_limit: float | None = 60.0, num_workers: int = 2,
                    seed: int | None = 0, deterministic_limit: float | None = None, symmetry: bool = True,
                    hint: bool = True, heuristics: bool = True, greedy: bool = True, shortcut: bool = True,
                    within_horizon: bool = False, max_cells: int = MAX_MODEL_CELLS, log: bool = False,
                    min_makespan: int = 0, warm: Schedule | None = None) -> Result:
    """Minimise the makespan of ``inst`` exactly; see the module docstring.

    ``time_limit`` (s, default 60) bounds the whole solve: CP-SAT gets what the incumbents left of it.
    ``deterministic_limit`` replaces it by a limit on CP-SAT's deterministic time, so that a run stopped by
    it is reproduced exactly by the same seed ([`optsched.exact._cpsat`][]); ``info["limit"]`` says which
    one applied. ``num_workers`` is CP-SAT's threads, ``seed`` its random seed and the heuristics' seed.
    With ``within_horizon`` the makespan must not exceed the instance's horizon T (the model may then be
    infeasible). ``heuristics``/``greedy`` choose the incumbents (the serial schedule is always one), ``hint``
    whether the best one hints the search, ``shortcut`` whether an incumbent meeting the closed-form lower
    bound is returned without building the model (tests switch these off to exercise the model alone).
    Instances whose time-indexed model would exceed ``max_cells`` (jobs x slots x servers)
    are not modelled: the best heuristic schedule is returned with the certified lower bound.

    A run stopped by its limit returns status ``time limit`` with the better of CP-SAT's schedule and the
    incumbent, and the best proven bound. ``min_makespan`` is a lower bound on T* proven elsewhere (the model's
    makespan starts there) and ``warm`` one more incumbent (both for [`optsched.exact.rar_interval`][]).
    """
    t0 = time.perf_counter()
    # checked before any work: a bad limit, worker count or seed is the caller's error, reported at once
    params = _cpsat.Params(time_limit=time_limit, deterministic_limit=deterministic_limit,
                           num_workers=num_workers, seed=int(seed or 0), log=log)
    info: dict[str, Any] = {"solver": "cp-sat", **params.info()}
    cands = incumbents(inst, seed=seed, heuristics=heuristics, greedy=greedy)
    if warm is not None:
        cands = sorted(cands + [(evaluate(inst, warm).makespan, "warm", warm)], key=lambda x: (x[0], x[1]))
    ub, ub_name, ub_sched = cands[0]
    info["incumbent"] = {"algorithm": ub_name, "makespan": ub}
    lb = max(makespan_lower_bound(inst), min(min_makespan, ub))
    cap_T = inst.horizon if within_horizon else None

    def result(sched: Schedule | None, status: SolveStatus, bound: int | None, **extra: Any) -> Result:
        info.update(extra)
        obj = None
        if sched is not None:
            ev = evaluate(inst, sched)
            sched = Schedule(ev.schedule.jobs, algorithm="exact", instance=inst.name)
            obj = ev.makespan
        return Result(objective=obj, status=status, runtime_s=time.perf_counter() - t0, schedule=sched,
                      algorithm="exact", lower_bound=bound, seed=seed, info=info)

    if cap_T is not None and lb > cap_T:
        return result(None, SolveStatus.INFEASIBLE, None, reason=f"lower bound {lb} exceeds the horizon {cap_T}")
    if shortcut and lb >= ub:
        return result(ub_sched, SolveStatus.OPTIMAL, ub, proof="incumbent meets the closed-form lower bound")
    H = ub
    cells = inst.n_jobs * H * len(inst.cluster.servers)
    if cells > max_cells:
        lb = lower_bound(inst)
        status = SolveStatus.OPTIMAL if lb >= ub else SolveStatus.FEASIBLE
        return result(ub_sched, status, lb,
                      reason=f"time-indexed model too large ({cells} job-slot-server cells > {max_cells}); "
                             f"best heuristic schedule with the certified lower bound")
    rm = build_model(inst, H, symmetry=symmetry, max_makespan=cap_T, min_makespan=lb)
    if hint and (cap_T is None or ub <= cap_T):
        add_hint(rm, inst, ub_sched)
    if params.time_limit is not None and params.limit == "time":
        # the incumbents spent part of the budget; CP-SAT gets the rest (at least 10 ms, to return its state)
        params = dataclasses.replace(params, time_limit=max(0.01, params.time_limit - (time.perf_counter() - t0)))
    run = _cpsat.solve(rm.model, params)
    info.update(run.info(), horizon_slots=H)
    # CP-SAT's bound is proven on the model, whose optimum is the instance's (docs/formulations/rar-ddls-cpsat.md)
    bound = lb if run.bound is None else max(lb, math.ceil(run.bound - 1e-9))
    if run.status == SolveStatus.OPTIMAL:
        sched = read_schedule(rm, run, inst)
        ev = evaluate(inst, sched)
        assert run.objective is not None  # an optimal run has a solution
        model_obj = int(round(run.objective))
        if ev.makespan != model_obj:
            raise SolverError(f"CP-SAT optimum {model_obj} but the evaluator scores its schedule {ev.makespan}: "
                              "model and evaluator disagree (a bug)")
        return result(sched, SolveStatus.OPTIMAL, model_obj)
    if run.status == SolveStatus.INFEASIBLE:
        if cap_T is None:
            raise SolverError(f"CP-SAT proved the model infeasible although the incumbent ({ub_name}) has "
                              f"makespan {ub}: a bug")
        return result(None, SolveStatus.INFEASIBLE, None)
    if run.found:
        sched = read_schedule(rm, run, inst)
        best = sched if evaluate(inst, sched).makespan <= ub else ub_sched
        return result(best, SolveStatus.TIME_LIMIT, bound)
    # no solution within the limit: fall back to the incumbent, and say so
    if cap_T is not None and ub > cap_T:
        return result(None, SolveStatus.TIME_LIMIT, bound, fallback="none within the horizon")
    return result(ub_sched, SolveStatus.TIME_LIMIT, bound,
                  fallback=f"CP-SAT found no schedule in time; returning the {ub_name} schedule")


@algorithm("exact", RarInstance, exact=True,
          description="CP-SAT model of RAR-DDLS with per-slot contention (makespan, proven optimum or bound)")
def exact(inst: RarInstance, *, seed: int | None = None, time_limit: float | None = None,
          num_workers: int = 2, deterministic_limit: float | None = None, **options: Any) -> Result:
    """CP-SAT model of RAR-DDLS with per-slot contention (makespan, proven optimum or bound)."""
    # deterministic_limit is named here so that callers that read the signature (solve_many) pass it: hidden in
    # **options it was dropped, and the 60-s wall-clock default stopped runs on loaded machines (issue 28)
    return solve_rar_cpsat(inst, time_limit=60.0 if time_limit is None else time_limit,
                           num_workers=num_workers, seed=seed, deterministic_limit=deterministic_limit, **options)
