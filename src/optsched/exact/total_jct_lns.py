"""Large-neighbourhood search with CP-SAT for total (weighted) completion time (paper 001's problem A).

An upper-side method: it improves a schedule, it proves nothing. From a start schedule (the greedy list
schedule by default, or any feasible choice such as the branch and bound's incumbent), each round frees a few
jobs and keeps every other job exactly where it is (same placement vector, same start); CP-SAT then re-places
and re-times the freed jobs around the fixed ones (one optional interval per free job and concrete placement,
the fixed jobs as fixed intervals in each server's cumulative), with the current positions as a hint. A round's
result replaces the schedule only when its cost is lower, so the cost never rises; every accepted schedule is
re-checked by the evaluator ([`optsched.evaluators.total_jct.check_schedule`][]).

Neighbourhoods, in turn: a window of ``window`` jobs consecutive in start order (at a random position), and
``window`` jobs drawn at random. With ``num_workers=1`` and ``deterministic_limit`` per round, a run is
deterministic for a given ``seed`` and ``rounds``.

```pycon
>>> from optsched.generators.total_jct import random_total_jct_instance
>>> from optsched.algorithms.total_jct import greedy_total_jct
>>> from optsched.problems.total_jct import choice_cost
>>> inst = random_total_jct_instance(8, 0)
>>> res = lns_total_jct(inst, rounds=5, round_limit=0.5, seed=0)
>>> res.objective <= choice_cost(inst, greedy_total_jct(inst))
True

```
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from typing import Any, Mapping

from ..algorithms.total_jct import greedy_total_jct
from ..errors import InstanceError
from ..evaluators.total_jct import check_schedule
from ..problems.total_jct import TotalJctInstance, choice_cost, placement_options, schedule_from_choice
from ..registry import algorithm
from ..result import Result, Schedule, SolveStatus
from .total_jct import add_mode_choice, add_server_capacities
from .total_jct_assign import assignment_descent

__all__ = ["choice_of_schedule", "improve", "lns_total_jct", "solve_total_jct_lns"]

Choice = dict[str, tuple[int, tuple[int, ...], int]]


def choice_of_schedule(inst: TotalJctInstance, schedule: Schedule) -> Choice:
    """The (mode index, vector, start) per job id of a feasible ``schedule`` (checked first by the evaluator), the
    input of [`lns_total_jct`][optsched.exact.total_jct_lns.lns_total_jct]."""
    check_schedule(inst, schedule)
    sids = inst.cluster.server_ids
    out: Choice = {}
    for j in inst.jobs:
        sj = schedule[j.id]
        u = tuple(int(sj.placement.get(s, 0)) for s in sids)
        shape = tuple(sorted((x for x in u if x), reverse=True))
        k = next(i for i, m in enumerate(j.modes) if m.shape == shape)
        out[j.id] = (k, u, int(sj.start))
    return out


def improve(inst: TotalJctInstance, choice: Mapping[str, tuple[int, tuple[int, ...], int]], free: set[int], *,
            round_limit: float = 2.0, seed: int = 0) -> Choice | None:
    """Re-place the jobs of ``free`` (indices) optimally (within ``round_limit`` deterministic units of CP-SAT,
    one worker) with every other job fixed as in ``choice``; the new choice when it costs less, else None."""
    from ortools.sat.python import cp_model

    jobs = inst.jobs
    caps = [s.gpus for s in inst.cluster.servers]
    H = max(choice[j.id][2] + j.modes[choice[j.id][0]].duration for j in jobs) + sum(
        jobs[i].max_duration for i in free)
    md = cp_model.CpModel()
    per_server: list[tuple[list, list[int]]] = [([], []) for _ in caps]
    for i, j in enumerate(jobs):
        if i in free:
            continue
        k, u, t = choice[j.id]
        d = j.modes[k].duration
        if d == 0:
            continue
        iv = md.new_fixed_size_interval_var(t, d, f"F[{j.id}]")
        for m, n in enumerate(u):
            if n:
                per_server[m][0].append(iv)
                per_server[m][1].append(n)
    opts = placement_options(inst, None)
    ends = {}
    starts = {}
    lits: dict[tuple[int, int, tuple[int, ...]], Any] = {}
    for i in sorted(free):
        j = jobs[i]
        s = md.new_int_var(j.release, H - j.min_duration, f"S[{j.id}]")
        e = md.new_int_var(j.release + j.min_duration, H, f"C[{j.id}]")
        starts[i], ends[i] = s, e
        k0, u0, t0 = choice[j.id]
        md.add_hint(s, t0)
        for (k, u), x in add_mode_choice(md, j, opts[i], s, e, per_server).items():
            md.add_hint(x, (k, u) == (k0, tuple(u0)))
            lits[i, k, u] = x
    add_server_capacities(md, per_server, caps)

    def cost_of(i: int) -> int:
        k, _, t = choice[jobs[i].id]
        return jobs[i].weight * (t + jobs[i].modes[k].duration)

    old = sum(cost_of(i) for i in free)
    md.minimize(sum(jobs[i].weight * ends[i] for i in free))
    sol = cp_model.CpSolver()
    sol.parameters.num_workers = 1
    sol.parameters.max_deterministic_time = round_limit
    sol.parameters.random_seed = seed
    st = sol.solve(md)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE) or sol.objective_value >= old - 0.5:
        return None
    new = dict(choice)
    for (i, k, u), x in lits.items():
        if sol.value(x):
            new[jobs[i].id] = (k, u, int(sol.value(starts[i])))
    return new


def lns_total_jct(inst: TotalJctInstance, start: Mapping[str, tuple[int, tuple[int, ...], int]] | None = None, *,
                  time_limit: float | None = None, rounds: int | None = None, window: int = 10,
                  round_limit: float = 2.0, seed: int = 0) -> Result:
    """Improve ``start`` (a choice: job id -> (mode index, vector, start); default the greedy schedule) by
    large-neighbourhood search (module docstring) for ``time_limit`` seconds of wall clock and/or ``rounds``
    rounds (at least one of the two). Returns the best schedule (status ``feasible``; this method proves
    nothing) with ``info["rounds"]``, ``info["improved"]`` (accepted rounds) and ``info["start_cost"]``."""
    if time_limit is None and rounds is None:
        raise InstanceError("give time_limit or rounds", field="time_limit")
    if not isinstance(window, int) or window < 1:
        raise InstanceError(f"must be a positive integer, got {window!r}", field="window")
    t0 = time.perf_counter()
    cur: Choice = dict(start) if start is not None else greedy_total_jct(inst)
    cost = check_schedule(inst, schedule_from_choice(inst, cur, "total-jct-lns"))
    first = cost
    rng = random.Random(seed)
    n = inst.n_jobs
    w = min(window, n)
    done = improved = 0
    while (rounds is None or done < rounds) and (time_limit is None or time.perf_counter() - t0 < time_limit):
        order = sorted(range(n), key=lambda i: (cur[inst.jobs[i].id][2], i))
        if done % 2 == 0:
            a = rng.randrange(n - w + 1)
            free = set(order[a:a + w])
        else:
            free = set(rng.sample(range(n), w))
        new = improve(inst, cur, free, round_limit=round_limit, seed=rng.randrange(1 << 30))
        done += 1
        if new is not None:
            c = choice_cost(inst, new)
            if c < cost:
                cur, cost = new, c
                improved += 1
    sched = schedule_from_choice(inst, cur, "total-jct-lns")
    checked = check_schedule(inst, sched)
    if checked != cost:  # pragma: no cover - the evaluator and the choice's cost disagree: a bug
        raise AssertionError(f"LNS schedule costs {checked}, expected {cost}")
    return Result(cost, SolveStatus.FEASIBLE, time.perf_counter() - t0, sched, "total-jct-lns", seed=seed,
                  info={"rounds": done, "improved": improved, "start_cost": first})


def solve_total_jct_lns(inst: TotalJctInstance, *, time_limit: float | None = 60.0, num_workers: int = 2,
                        seed: int | None = None, deterministic_limit: float | None = None, window: int = 8,
                        round_limit: float = 0.3, slots: int = 4000, start_slots: int = 1500,
                        search_share: float = 0.25, start_lp_share: float = 0.25,
                        lagrangian_iterations: int = 1000, lagrangian_slots: int = 2000,
                        descent_share: float = 0.15, descent_evaluations: int = 400, descent_units: float = 1.0
                        ) -> Result:
    """Best schedule and certified bound for instances beyond the branch and bound's reach: the branch and
    bound ([`solve_total_jct_bnb`][optsched.exact.total_jct_bnb.solve_total_jct_bnb]) for ``search_share`` of the
    limit; when it has not proved the optimum, LNS ([`lns_total_jct`][optsched.exact.total_jct_lns.lns_total_jct])
    from its schedule for the rest, and the time-slot LP bound
    ([`optsched.exact.total_jct_lp.lp_lower_bound`][], ``slots``) and the start-slot LP bound
    ([`optsched.exact.total_jct_lp.start_lp_lower_bound`][], ``start_slots``; 0 leaves it out) and the Lagrangian
    bound from the duals of a time-slot LP on ``lagrangian_slots`` slots
    ([`optsched.exact.total_jct_lp.LagrangianBound`][], ``lagrangian_iterations`` subgradient steps towards the best
    schedule's cost; with ``time_limit``, at most 15 % of it). Between LNS and the bounds, the server-assignment
    descent ([`assignment_descent`][optsched.exact.total_jct_assign.assignment_descent]: moves of one job and swaps
    of two between servers, each server re-solved by the branch and bound for ``descent_units`` units) improves the
    best schedule: for ``descent_share`` of a time limit (taken from LNS's share), or ``descent_evaluations`` moves
    with ``deterministic_limit`` (0 leaves it out). ``lower_bound``
    is the largest of the branch and bound's, the two LPs' and the Lagrangian one (all proved in
    ``docs/formulations/total-jct.md``);
    the status is ``optimal`` when the schedule meets it, else ``time limit``. With ``time_limit``, the start-slot
    LP gets ``start_lp_share`` of it (HiGHS's own limit; no bound from it when that stops it) and LNS the rest.
    With ``deterministic_limit`` (units) instead: the branch and bound gets ``search_share`` of the units, LNS
    ``rest / round_limit`` rounds, and the LPs run to their end (deterministic with ``num_workers=1``)."""
    from .total_jct_bnb import solve_total_jct_bnb
    from .total_jct_lp import LagrangianBound, lp_lower_bound, start_lp_lower_bound

    if time_limit is None and deterministic_limit is None:
        raise InstanceError("give time_limit or deterministic_limit", field="time_limit")
    if not 0 < search_share <= 1:
        raise InstanceError(f"must be in (0, 1], got {search_share!r}", field="search_share")
    if not 0 <= start_lp_share < 1:
        raise InstanceError(f"must be in [0, 1), got {start_lp_share!r}", field="start_lp_share")
    if not 0 <= descent_share < 1:
        raise InstanceError(f"must be in [0, 1), got {descent_share!r}", field="descent_share")
    if isinstance(descent_evaluations, bool) or not isinstance(descent_evaluations, int) or descent_evaluations < 0:
        raise InstanceError(f"must be an integer >= 0, got {descent_evaluations!r}", field="descent_evaluations")
    if isinstance(start_slots, bool) or not isinstance(start_slots, int) or start_slots < 0:
        raise InstanceError(f"must be an integer >= 0, got {start_slots!r}", field="start_slots")
    t0 = time.perf_counter()
    if deterministic_limit is not None:
        bb = solve_total_jct_bnb(inst, time_limit=None, deterministic_limit=deterministic_limit * search_share,
                                 num_workers=num_workers, seed=seed)
    else:
        assert time_limit is not None
        bb = solve_total_jct_bnb(inst, time_limit=time_limit * search_share, num_workers=num_workers, seed=seed)
    if bb.status in (SolveStatus.OPTIMAL, SolveStatus.INTERRUPTED) or bb.schedule is None:
        # the branch and bound's answer, under the name the user asked for (its figures in info say who found it)
        return dataclasses.replace(bb, algorithm="total-jct-lns", info={**bb.info, "found_by": bb.algorithm})
    if deterministic_limit is not None:
        lns = lns_total_jct(inst, choice_of_schedule(inst, bb.schedule), window=window, round_limit=round_limit,
                            rounds=max(1, int(deterministic_limit * (1 - search_share) / round_limit)),
                            seed=seed or 0)
    else:
        assert time_limit is not None
        left = max(0.0, time_limit * (0.85 - descent_share - (start_lp_share if start_slots else 0))
                   - (time.perf_counter() - t0))
        lns = lns_total_jct(inst, choice_of_schedule(inst, bb.schedule), window=window, round_limit=round_limit,
                            time_limit=left, seed=seed or 0)
    best = lns if lns.objective is not None and lns.objective < (bb.objective or math.inf) else bb
    descent = None
    assert best.schedule is not None
    if deterministic_limit is not None and descent_evaluations:
        descent = assignment_descent(inst, choice_of_schedule(inst, best.schedule), units=descent_units,
                                     evaluations=descent_evaluations)
    elif deterministic_limit is None and descent_share:
        assert time_limit is not None
        left = max(0.0, time_limit * (0.85 - (start_lp_share if start_slots else 0)) - (time.perf_counter() - t0))
        descent = assignment_descent(inst, choice_of_schedule(inst, best.schedule), units=descent_units,
                                     time_limit=left)
    if descent is not None and descent.objective is not None and best.objective is not None and \
            descent.objective < best.objective:
        best = descent
    lp = lp_lower_bound(inst, slots=slots)
    lag_bound = LagrangianBound(inst, slots=lagrangian_slots, iterations=lagrangian_iterations, target=best.objective,
                                time_limit=None if time_limit is None or deterministic_limit is not None
                                else 0.15 * time_limit).bound()
    start_lp = None
    if start_slots:
        lp_limit = None if time_limit is None or deterministic_limit is not None else \
            max(1.0, time_limit - (time.perf_counter() - t0))
        start_lp = start_lp_lower_bound(inst, slots=start_slots, time_limit=lp_limit)
    lb = max(bb.lower_bound or 0, lp, start_lp or 0, lag_bound)
    sched = best.schedule
    assert sched is not None
    obj = check_schedule(inst, sched)
    info = {"bnb_objective": bb.objective, "bnb_bound": bb.lower_bound, "lp_bound": lp, "start_lp_bound": start_lp,
            "lagrangian_bound": lag_bound,
            "lns_rounds": lns.info["rounds"], "lns_improved": lns.info["improved"], "num_workers": num_workers,
            "lns_objective": lns.objective, "descent_objective": None if descent is None else descent.objective,
            "descent_moves": None if descent is None else descent.info["moves"]}
    status = SolveStatus.OPTIMAL if lb >= obj else SolveStatus.TIME_LIMIT  # the LP bound can close the gap
    return Result(obj, status, time.perf_counter() - t0, sched, "total-jct-lns", lower_bound=lb,
                  seed=seed, info=info)


@algorithm("total-jct-lns", TotalJctInstance, exact=True,
           description="total (weighted) completion time: branch and bound, then LNS with CP-SAT and the "
                       "largest of the time-slot LP, start-slot LP and Lagrangian bounds (for instances it does "
                       "not close)")
def _registered_lns(inst: TotalJctInstance, *, seed: int | None = None, time_limit: float | None = None,
                    deterministic_limit: float | None = None, **options) -> Result:
    if time_limit is None and deterministic_limit is None:
        time_limit = 60.0
    return solve_total_jct_lns(inst, seed=seed, time_limit=time_limit, deterministic_limit=deterministic_limit,
                               **options)
