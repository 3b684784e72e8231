"""Server-assignment descent for total (weighted) completion time (paper 001's problem A; issue 23, upper side).

When every job runs on one server (a single-server mode), the servers do not interact: a schedule is a
partition of the jobs among the servers and, per server, a schedule of its own jobs on its own GPUs. So the best
schedule for a given partition is the sum of the servers' own optima, and each server alone is a small problem
that the branch and bound ([`solve_total_jct_bnb`][optsched.exact.total_jct_bnb.solve_total_jct_bnb]) proves in
a fraction of a second at ten jobs. This module searches the partitions: from a start schedule's partition, it
moves one job to another server or swaps two jobs of two servers, re-solves the two servers concerned, and keeps
the move when the total drops (first improvement; the per-server optima are kept by job set). Its argument and
what it does not prove are in ``docs/formulations/total-jct.md`` ("Server decomposition").

It is an upper-side method: LNS with CP-SAT ([`optsched.exact.total_jct_lns`][]) re-times a few jobs around
fixed ones, while this one re-times whole servers around a changed partition (on the generator's 20-job
instances the LNS schedules turn out to be optimal for their own partitions, and moves of one or two jobs
improve them). Every returned schedule is re-scored by the evaluator.

```pycon
>>> from optsched.generators.total_jct import random_total_jct_instance
>>> from optsched.algorithms.total_jct import greedy_total_jct
>>> from optsched.problems.total_jct import choice_cost
>>> inst = random_total_jct_instance(8, 0)
>>> res = assignment_descent(inst, evaluations=50)
>>> res.objective <= choice_cost(inst, greedy_total_jct(inst))
True

```
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Callable, Mapping

from ..algorithms.total_jct import greedy_total_jct
from ..cluster import Cluster, Server
from ..errors import InstanceError
from ..evaluators.total_jct import check_schedule
from ..problems.total_jct import Mode, TotalJctInstance, TotalJctJob, schedule_from_choice
from ..result import Result, SolveStatus

__all__ = ["assignment_descent", "partition_neighbourhood", "partition_of", "server_instance", "ServerOptima",
           "spread_instance", "spread_bounds",
           "modes_instance"]

Choice = dict[str, tuple[int, tuple[int, ...], int]]


def _fits_alone(mode: Mode, gpus: int) -> bool:
    """Whether ``mode`` runs on one server of ``gpus`` GPUs."""
    return len(mode.shape) == 1 and mode.shape[0] <= gpus


def server_instance(inst: TotalJctInstance, server: int, jobs: frozenset[int] | set[int]) -> TotalJctInstance:
    """The instance of server ``server`` (index) alone with the jobs ``jobs`` (indices), each keeping only its
    single-server modes that fit that server (its weight and release unchanged). Raises
    [`InstanceError`][optsched.errors.InstanceError] when a job has no such mode.

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> sub = server_instance(random_total_jct_instance(6, 0), 1, {0, 2})
    >>> sub.cluster.server_ids, [len(m.shape) for j in sub.jobs for m in j.modes]
    (('s1',), [1, 1])

    ```
    """
    srv = inst.cluster.servers[server]
    out = []
    for i in sorted(jobs):
        j = inst.jobs[i]
        modes = tuple(m for m in j.modes if _fits_alone(m, srv.gpus))
        if not modes:
            raise InstanceError(f"has no single-server mode that fits server {srv.id!r}", field="modes", job=j.id)
        out.append(TotalJctJob(j.id, j.release, j.gpus, modes, j.weight))
    return TotalJctInstance(Cluster((Server(srv.id, srv.gpus, srv.gpu_type),)), tuple(out), inst.time_unit_s,
                            inst.name)


def spread_instance(inst: TotalJctInstance, job: int) -> TotalJctInstance | None:
    """The instance in which job ``job`` (index) keeps only its multi-server modes (shapes of two or more parts),
    every other job unchanged; ``None`` when it has none. Its schedules are exactly the schedules of ``inst`` that
    run that job over several servers.

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> [m.shape for m in spread_instance(inst, 3).jobs[3].modes], spread_instance(inst, 0)
    ([(3, 1), (2, 2)], None)

    ```
    """
    return modes_instance(inst, job, lambda m: len(m.shape) > 1)


def modes_instance(inst: TotalJctInstance, job: int, keep: Callable[[Mode], bool]) -> TotalJctInstance | None:
    """The instance in which job ``job`` (index) keeps only its modes ``keep`` accepts, every other job unchanged;
    ``None`` when it keeps none. Its schedules are exactly the schedules of ``inst`` that run that job in one of
    those modes.

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> [m.shape for m in modes_instance(inst, 3, lambda m: m.shape == (2, 2)).jobs[3].modes]
    [(2, 2)]

    ```
    """
    j = inst.jobs[job]
    modes = tuple(m for m in j.modes if keep(m))
    if not modes:
        return None
    jobs = list(inst.jobs)
    jobs[job] = dataclasses.replace(j, modes=modes)
    return dataclasses.replace(inst, jobs=tuple(jobs))


def spread_bounds(inst: TotalJctInstance, *, slots: int = 1000, iterations: int = 300,
                  target: float | None = None) -> dict[str, int]:
    """Per job with a multi-server mode: a lower bound on the cost of every schedule that runs that job over
    several servers, the Lagrangian bound ([`LagrangianBound`][optsched.exact.total_jct_lp.LagrangianBound], on
    ``slots`` slots with ``iterations`` subgradient steps towards ``target``) of its
    [`spread_instance`][optsched.exact.total_jct_assign.spread_instance].

    Every schedule is single-server or runs some job over several servers, so the optimum is at least
    min(min of these values, any lower bound over single-server schedules); and when every value is at least the
    cost U of a known schedule, the optimum is min(U, the best single-server schedule), which the decomposition
    reduces to the best partition (formulation, "Spread jobs").

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> b = spread_bounds(inst, slots=200, iterations=20)
    >>> sorted(b) == [j.id for j in inst.jobs if any(len(m.shape) > 1 for m in j.modes)]
    True
    >>> min(b.values()) > 70497    # the optimum (bundled library): no optimal schedule of it spreads a job
    True

    ```
    """
    from .total_jct_lp import LagrangianBound

    out = {}
    for i, j in enumerate(inst.jobs):
        sub = spread_instance(inst, i)
        if sub is not None:
            out[j.id] = LagrangianBound(sub, slots=slots, iterations=iterations, target=target).bound()
    return out


class ServerOptima:
    """Per (server, job set): the branch and bound's best schedule of that server alone, kept once computed.

    ``units``: deterministic units per solve (``NODES_PER_UNIT`` nodes each); a solve that does not finish
    gives a feasible schedule that may not be optimal (counted in ``unproven``). ``value(m, S)`` is its cost,
    ``starts(m, S)`` its (job index -> (mode index in the full instance, start)).
    """

    def __init__(self, inst: TotalJctInstance, units: float = 20.0):
        from .total_jct_bnb import solve_total_jct_bnb

        self._solve = solve_total_jct_bnb
        self.inst, self.units = inst, units
        self.memo: dict[tuple[int, frozenset[int]], tuple[int, dict[int, tuple[int, int]]]] = {}
        self.solves = self.unproven = 0
        caps = [s.gpus for s in inst.cluster.servers]
        # which servers each job fits on one server
        self.fits = [[m for m, c in enumerate(caps)
                      if any(_fits_alone(md, c) for md in j.modes)] for j in inst.jobs]

    def _get(self, m: int, S: frozenset[int], known: Mapping[int, tuple[int, int]] | None = None
             ) -> tuple[int, dict[int, tuple[int, int]]]:
        key = (m, S)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if not S:
            self.memo[key] = (0, {})
            return self.memo[key]
        sub = server_instance(self.inst, m, S)
        given = None
        if known is not None:  # a feasible schedule of this server (job -> (mode in the full instance, start))
            given = {}
            for i, (k, t) in known.items():
                shape = self.inst.jobs[i].modes[k].shape
                given[self.inst.jobs[i].id] = (next(x for x, md in enumerate(sub.job(self.inst.jobs[i].id).modes)
                                                     if md.shape == shape), shape, t)
        res = self._solve(sub, time_limit=None, deterministic_limit=self.units, num_workers=1, seed=0,
                          incumbent=given)
        self.solves += 1
        if res.status != SolveStatus.OPTIMAL:
            self.unproven += 1
        assert res.schedule is not None and res.objective is not None
        idx = {self.inst.jobs[i].id: i for i in S}
        starts = {}
        for sj in res.schedule:
            i = idx[sj.id]
            g = next(iter(sj.placement.values()))
            k = next(k for k, md in enumerate(self.inst.jobs[i].modes) if md.shape == (g,))
            starts[i] = (k, int(sj.start))
        self.memo[key] = (int(res.objective), starts)
        return self.memo[key]

    def value(self, m: int, S: frozenset[int], known: Mapping[int, tuple[int, int]] | None = None) -> int:
        """The cost of server ``m`` alone with jobs ``S``; ``known``: a feasible schedule of exactly these jobs on
        it (job -> (mode index, start)), given to the search as its first incumbent."""
        return self._get(m, S, known)[0]

    def starts(self, m: int, S: frozenset[int]) -> dict[int, tuple[int, int]]:
        return self._get(m, S)[1]


def partition_of(inst: TotalJctInstance, choice: Mapping[str, tuple[int, tuple[int, ...], int]],
                 fits: list[list[int]]) -> list[set[int]]:
    """Per server, the jobs (indices) of ``choice`` that it holds: a job on one server stays there; a job spread
    over several goes to the one of them with most of its GPUs where it fits alone (else the largest server it
    fits alone)."""
    caps = [s.gpus for s in inst.cluster.servers]
    part: list[set[int]] = [set() for _ in caps]
    for i, j in enumerate(inst.jobs):
        u = choice[j.id][1]
        ranked = sorted(range(len(u)), key=lambda m: (-u[m], -caps[m], m))
        m = next((m for m in ranked if u[m] and m in fits[i]), None)
        if m is None:
            m = max(fits[i], key=lambda x: (caps[x], -x))
        part[m].add(i)
    return part


def assignment_descent(inst: TotalJctInstance, start: Mapping[str, tuple[int, tuple[int, ...], int]] | None = None,
                       *, units: float = 20.0, evaluations: int | None = None, time_limit: float | None = None
                       ) -> Result:
    """Improve ``start`` (a choice: job id -> (mode index, vector, start); default the greedy schedule) by
    descent over server partitions (module docstring): moves of one job, then swaps of two, each re-solving the
    two servers concerned by the branch and bound for ``units`` deterministic units; first improvement, until
    no move improves or ``evaluations`` moves (deterministic) or ``time_limit`` seconds (wall clock) are spent.
    The result (status ``feasible``, re-scored by the evaluator) is never worse than ``start``; ``info``:
    ``start_cost``, ``partition_cost`` (the start's partition re-solved per server), ``evaluations``, ``moves``
    (accepted), ``solves`` and ``unproven`` (per-server solves the limit stopped), ``local_optimum`` (no move of
    one job or swap of two improves, with every solve proven), ``partition`` (per server, the job ids of the last
    partition), ``skipped`` (why nothing was tried, if so).

    With every job on one server in the result, the returned value is the sum of the per-server values.
    """
    if isinstance(evaluations, bool) or (evaluations is not None and (not isinstance(evaluations, int)
                                                                       or evaluations < 0)):
        raise InstanceError(f"must be an integer >= 0, got {evaluations!r}", field="evaluations")
    if isinstance(units, bool) or not isinstance(units, (int, float)) or not units > 0:
        raise InstanceError(f"must be a positive number, got {units!r}", field="units")
    t0 = time.perf_counter()
    cur: Choice = dict(start) if start is not None else greedy_total_jct(inst)
    first = check_schedule(inst, schedule_from_choice(inst, cur, "total-jct-descent"))
    opt = ServerOptima(inst, units)
    info: dict = {"start_cost": first, "evaluations": 0, "moves": 0, "solves": 0, "unproven": 0,
                  "local_optimum": False, "partition_cost": None}

    def done(sched_choice: Choice, cost: int) -> Result:
        sched = schedule_from_choice(inst, sched_choice, "total-jct-descent")
        checked = check_schedule(inst, sched)
        if checked != cost:  # pragma: no cover - the evaluator and the per-server sums disagree: a bug
            raise AssertionError(f"descent schedule costs {checked}, expected {cost}")
        info.update(solves=opt.solves, unproven=opt.unproven)
        return Result(cost, SolveStatus.FEASIBLE, time.perf_counter() - t0, sched, "total-jct-descent",
                      info=info)

    if any(not f for f in opt.fits):
        info["skipped"] = "a job has no single-server mode"
        return done(cur, first)
    n, M = inst.n_jobs, len(inst.cluster.servers)
    part = [frozenset(p) for p in partition_of(inst, cur, opt.fits)]
    known: list[dict[int, tuple[int, int]] | None] = [{} for _ in range(M)]
    for i, j in enumerate(inst.jobs):  # the start schedule's own per-server schedules, where it has one
        k, u, t = cur[j.id]
        m = next(x for x in range(M) if i in part[x])
        if len(j.modes[k].shape) == 1 and u[m] and known[m] is not None:
            known[m][i] = (k, t)  # type: ignore[index]
        else:
            known[m] = None
    vals = [opt.value(m, part[m], known[m]) for m in range(M)]
    info["partition_cost"] = sum(vals)

    def out_of_limits() -> bool:
        return (evaluations is not None and info["evaluations"] >= evaluations) or \
            (time_limit is not None and time.perf_counter() - t0 >= time_limit)

    where = {i: m for m in range(M) for i in part[m]}
    improved = True
    while improved and not out_of_limits():
        improved = False
        moves: list[tuple[tuple[int, int], ...]] = []  # ((job, to server), ...)
        for i in range(n):
            moves += [((i, m),) for m in opt.fits[i] if m != where[i]]
        for i, k in itertools.combinations(range(n), 2):
            if where[i] != where[k] and where[k] in opt.fits[i] and where[i] in opt.fits[k]:
                moves.append(((i, where[k]), (k, where[i])))
        for mv in moves:
            if out_of_limits():
                break
            info["evaluations"] += 1
            new = list(part)
            for i, m in mv:
                new[where[i]] = new[where[i]] - {i}
                new[m] = new[m] | {i}
            touched = sorted({where[i] for i, _ in mv} | {m for _, m in mv})
            delta = sum(opt.value(m, new[m]) - vals[m] for m in touched)
            if delta < 0:
                part = new
                for m in touched:
                    vals[m] = opt.value(m, new[m])
                for i, m in mv:
                    where[i] = m
                info["moves"] += 1
                improved = True
                break
    info["local_optimum"] = not improved and opt.unproven == 0 and not out_of_limits()
    info["partition"] = [sorted(inst.jobs[i].id for i in p) for p in part]
    total = sum(vals)
    if total >= first:
        return done(cur, first)
    new_choice: Choice = {}
    for m in range(M):
        for i, (k, s) in opt.starts(m, part[m]).items():
            u = tuple(inst.jobs[i].modes[k].shape[0] if x == m else 0 for x in range(M))
            new_choice[inst.jobs[i].id] = (k, u, s)
    return done(new_choice, total)


def partition_neighbourhood(inst: TotalJctInstance, start: Mapping[str, tuple[int, tuple[int, ...], int]], *,
                            radius: int = 2, units: float = 5.0, time_limit: float | None = None) -> Result:
    """Every partition that moves at most ``radius`` jobs of ``start``'s partition
    ([`partition_of`][optsched.exact.total_jct_assign.partition_of]) to other servers where they fit alone (all
    of them, not a descent), each costed as the sum of its servers' own optima (the branch and bound for
    ``units`` deterministic units per (server, job set), kept once computed); returns the best one's schedule
    when it costs less than ``start``, else ``start`` (status ``feasible``, re-scored by the evaluator).

    With every per-server solve proven (``info["unproven"] == 0``) and the search not cut by ``time_limit``
    (``info["complete"]``), no single-server schedule whose partition is within ``radius`` moves of the start's
    costs less than the result (formulation, "Server decomposition": a partition's best schedule is the sum of
    its servers' optima). That certifies a neighbourhood, not the optimum. ``info``: ``start_cost``,
    ``partition_cost`` (the start's partition re-solved), ``partitions`` (costed), ``best_radius`` (moves of the
    best), ``solves``, ``unproven``, ``complete``, ``partition`` (job ids per server of the best).

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> res = partition_neighbourhood(inst, greedy_total_jct(inst), radius=6)   # every partition
    >>> res.objective, res.info["complete"], res.info["unproven"]    # the optimum (bundled library)
    (70497, True, 0)

    ```
    """
    if isinstance(radius, bool) or not isinstance(radius, int) or radius < 0:
        raise InstanceError(f"must be an integer >= 0, got {radius!r}", field="radius")
    if isinstance(units, bool) or not isinstance(units, (int, float)) or not units > 0:
        raise InstanceError(f"must be a positive number, got {units!r}", field="units")
    t0 = time.perf_counter()
    cur: Choice = dict(start)
    first = check_schedule(inst, schedule_from_choice(inst, cur, "total-jct-neighbourhood"))
    opt = ServerOptima(inst, units)
    info: dict = {"start_cost": first, "partition_cost": None, "partitions": 0, "best_radius": None, "solves": 0,
                  "unproven": 0, "complete": False, "partition": None}
    if any(not f for f in opt.fits):
        info["skipped"] = "a job has no single-server mode"
        return Result(first, SolveStatus.FEASIBLE, time.perf_counter() - t0,
                      schedule_from_choice(inst, cur, "total-jct-neighbourhood"), "total-jct-neighbourhood", info=info)
    n, M = inst.n_jobs, len(inst.cluster.servers)
    base = partition_of(inst, cur, opt.fits)
    where = {i: m for m in range(M) for i in base[m]}
    best_val, best_part, best_r = None, base, 0
    complete = True
    for r in range(min(radius, n) + 1):
        for X in itertools.combinations(range(n), r):
            for dest in itertools.product(*[[m for m in opt.fits[i] if m != where[i]] for i in X]):
                if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                    complete = False
                    break
                part = [set(p) for p in base]
                for i, m in zip(X, dest):
                    part[where[i]].discard(i)
                    part[m].add(i)
                val = sum(opt.value(m, frozenset(part[m])) for m in range(M))
                info["partitions"] += 1
                if r == 0:
                    info["partition_cost"] = val
                if best_val is None or val < best_val:
                    best_val, best_part, best_r = val, part, r
            if not complete:
                break
        if not complete:
            break
    info.update(solves=opt.solves, unproven=opt.unproven, complete=complete, best_radius=best_r,
                partition=[sorted(inst.jobs[i].id for i in p) for p in best_part])
    if best_val is None or best_val >= first:  # (None: the time limit came before the first partition)
        return Result(first, SolveStatus.FEASIBLE, time.perf_counter() - t0,
                      schedule_from_choice(inst, cur, "total-jct-neighbourhood"), "total-jct-neighbourhood", info=info)
    new_choice: Choice = {}
    for m in range(M):
        for i, (k, s) in opt.starts(m, frozenset(best_part[m])).items():
            u = tuple(inst.jobs[i].modes[k].shape[0] if x == m else 0 for x in range(M))
            new_choice[inst.jobs[i].id] = (k, u, s)
    sched = schedule_from_choice(inst, new_choice, "total-jct-neighbourhood")
    checked = check_schedule(inst, sched)
    if checked != best_val:  # pragma: no cover - the evaluator and the per-server sums disagree: a bug
        raise AssertionError(f"neighbourhood schedule costs {checked}, expected {best_val}")
    return Result(best_val, SolveStatus.FEASIBLE, time.perf_counter() - t0, sched, "total-jct-neighbourhood",
                  info=info)
