"""Exact total (weighted) completion time with placement choice by branch and bound, with CP-SAT beside it.

The problem is paper 001's problem A ([`optsched.problems.total_jct`][]). CP-SAT (:func:`~optsched.exact.total_jct
.solve_total_jct`) finds good schedules fast but proves little on it: its bound on a sum of completion times stays
near the trivial one (on the 12-job generator instances, at the trivial bound after 60 s). This search proves
optimality through lower bounds that know the shape of the problem. The argument for every rule is in
``docs/formulations/total-jct.md`` ("Branch and bound"); in short:

* **Search space.** Jobs are placed one at a time in order of (start, job index); each job, on each of its
  concrete placement vectors, starts at the earliest time >= its release and >= the previous start at which the
  vector fits. Some optimal schedule is *active* (no job can start earlier alone), and an active schedule is
  generated exactly by this rule in its own (start, index) order, so the search is complete. Because every job
  placed later starts no earlier, a node's future is described by the jobs still running at its start: per
  server, their ends and GPU counts (free GPUs only grow from then on, so "fits at t" means "fits from t on").
* **Pruning.** (1) Bound: cost of the placed jobs plus a lower bound on the rest, the largest of: the trivial
  bound sum w_j (max(r_j, t) + min d_j); the *GPU fluid* bound (the remaining jobs as work g_j d_j on the free
  GPUs, Smith's ratio order, mean busy time + d_j / 2, after Goemans' mean-busy-time relaxation); for every
  *wide class* (jobs with g_j > G / (k + 1) GPUs, of which at most k run at once: a dual-feasible function of
  the total capacity G), a k-machine relaxation: with equal weights SPT on k machines available at the ends of
  the running class jobs, optimal for P, NC_inc || sum C_j (Kaspi and Montreuil, 1988), else the fluid bound
  with unit widths. (2) Gap dominance: a child whose start leaves room for another waiting job (w > 0) to run
  to completion before it is never optimal (moving that job there lowers the cost). (3) Symmetry: servers of
  equal capacity and equal state take non-increasing GPU counts. (4) Memo: a state (placed set, start, last
  job, per-server running jobs) reached again at no smaller cost is cut.
* **CP-SAT beside it** (``num_workers >= 2``, the default): CP-SAT runs on the model of ``total_jct.py`` in a
  thread with ``num_workers - 1`` workers (it releases the GIL), and each schedule it finds becomes the search's
  incumbent; the search proves (or CP-SAT does, and the search stops). The run is then not deterministic in
  which optimal schedule it returns (the value is); ``num_workers=1`` is the search alone, deterministic.

```pycon
>>> from optsched.cluster import Cluster
>>> from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob
>>> inst = TotalJctInstance(Cluster.homogeneous(2, 2), (
...     TotalJctJob("a", 0, 2, (Mode((2,), 4), Mode((1, 1), 3))),
...     TotalJctJob("b", 0, 2, (Mode((2,), 2),)),
...     TotalJctJob("c", 1, 1, (Mode((1,), 2),))))
>>> res = solve_total_jct_bnb(inst, num_workers=1)
>>> res.status.value, res.objective, res.lower_bound
('optimal', 10, 10)

```
"""

from __future__ import annotations

import bisect
import math
import threading
import time
from typing import Any

from ..algorithms.total_jct import greedy_total_jct
from ..errors import InstanceError, ScheduleError
from ..evaluators.total_jct import check_schedule
from ..problems.total_jct import TotalJctInstance, choice_cost, placement_options, schedule_from_choice
from ..registry import algorithm
from ..result import Result, SolveStatus
from . import _cpsat
from ._stop import run_stoppable
from .total_jct import CpModelOf

__all__ = ["NODES_PER_UNIT", "root_lower_bound", "solve_total_jct_bnb", "spt_total"]

Choice = dict[str, tuple[int, tuple[int, ...], int]]
_CHECK_EVERY = 256  # nodes between looks at the clock, the node limit, a signal and CP-SAT's state
NODES_PER_UNIT = 10_000
"""Search nodes per unit of ``deterministic_limit``: about one CPU-second of the search on 12- and 16-job
generator instances (OUR measurement: 7,600 to 9,300 nodes per CPU-second), as CP-SAT's unit is meant to be near
a second."""
_MEMO_MAX = 500_000


def _fluid(order: list[int], work: list[int], W: list[int], D: list[int], t: int,
           rises: list[tuple[int, int]], cap: int) -> float:
    """sum_j w_j (M_j + d_j / 2) over the jobs of ``order`` (Smith's ratio order) processed as fluid work on a
    capacity that is ``cap`` at time ``t`` and rises by q at each (time, q) of ``rises`` (sorted), where M_j is
    the job's mean busy time in that fluid schedule: a lower bound on their sum w_j C_j (formulation, eq. F)."""
    total = 0.0
    pos = float(t)
    ri, nr = 0, len(rises)
    for i in order:
        left: float = work[i]
        acc = 0.0
        while left > 0:
            while ri < nr and rises[ri][0] <= pos:
                cap += rises[ri][1]
                ri += 1
            if cap <= 0:  # nothing free until the next end
                pos = float(rises[ri][0])
                continue
            room = (rises[ri][0] - pos) * cap if ri < nr else math.inf
            x = left if left <= room else room
            dt = x / cap
            acc += x * (pos + dt / 2)
            pos += dt
            left -= x
        total += W[i] * (acc / work[i] + D[i] / 2)
    return total


def spt_total(available: list[int], durations: list[int]) -> int:
    """Sum of completion times when ``durations`` (sorted, shortest first) are list-scheduled on machines free
    from ``available`` (one entry per machine, changed in place), each on the machine free first: the optimum
    of P, NC_inc || sum C_j (Kaspi and Montreuil, 1988; checked against enumeration in the tests).

    ```pycon
    >>> spt_total([0, 5], [1, 2, 3])
    10

    ```
    """
    total = 0
    for d in durations:
        a = min(available)
        c = a + d
        available[available.index(a)] = c
        total += c
    return total


class _Bounds:
    """The lower bounds of the module docstring for one instance, computed per node."""

    def __init__(self, inst: TotalJctInstance):
        jobs = inst.jobs
        self.n = n = len(jobs)
        self.W = W = [j.weight for j in jobs]
        self.R = [j.release for j in jobs]
        self.D = D = [j.min_duration for j in jobs]
        g = [j.gpus for j in jobs]
        G = sum(s.gpus for s in inst.cluster.servers)
        fl = [i for i in range(n) if W[i] > 0 and D[i] > 0]  # zero-work or zero-weight jobs: trivial bound only
        work = [g[i] * D[i] for i in range(n)]
        # (capacity, per-job width, per-job work, members in bound order, is-SPT) for each relaxation
        self.relax: list[tuple[int, list[int], list[int], list[int], bool]] = []
        self.relax.append((G, g, work, sorted(fl, key=lambda i: -W[i] / work[i]), False))
        seen: set[frozenset[int]] = set()
        for k in range(1, G):
            cls = frozenset(i for i in fl if g[i] * (k + 1) > G)
            if len(cls) <= k or cls in seen:
                continue
            seen.add(cls)
            width = [1 if i in cls else 0 for i in range(n)]
            equal_w = len({W[i] for i in cls}) == 1
            order = sorted(cls, key=lambda i: (D[i], i)) if equal_w else sorted(cls, key=lambda i: -W[i] / D[i])
            # SPT first: it is the cheapest and usually the strongest
            self.relax.insert(0 if equal_w else len(self.relax), (k, width, D, order, equal_w))

    def root(self) -> int:
        """[`lower`][optsched.exact.total_jct_bnb._Bounds.lower] with no job placed, rounded up (objectives are
        integers; the fluid's floating point
        is allowed a relative 1e-9)."""
        b = self.lower(0, 0, [], math.inf)
        return math.ceil(b - 1e-9 * max(1.0, abs(b)))

    def lower(self, mask: int, t: int, running: list[tuple[int, int]], need: float) -> float:
        """A lower bound on sum w_j C_j over the jobs not in ``mask`` when all start at ``t`` or later and
        ``running`` ((end, job) sorted) hold their GPUs until their ends. Stops as soon as it reaches ``need``."""
        W, R, D = self.W, self.R, self.D
        triv = [0] * self.n
        tot = 0
        for i in range(self.n):
            if not mask >> i & 1:
                w = W[i] * ((R[i] if R[i] > t else t) + D[i])
                triv[i] = w
                tot += w
        best: float = tot
        if best >= need:
            return best
        for cap, width, work, order, spt in self.relax:
            rest = [i for i in order if not mask >> i & 1]
            if not rest:
                continue
            others = tot - sum(triv[i] for i in rest)
            if spt:
                av = [e for e, j in running if width[j]]
                if len(av) > cap:  # pragma: no cover - a feasible state never has more
                    continue
                av += [t] * (cap - len(av))
                av.sort()
                # the machines' first jobs are distinct: the i-th free machine waits for the i-th release too
                rel = sorted(R[i] for i in rest)
                for x in range(min(cap, len(rel))):
                    if rel[x] > av[x]:
                        av[x] = rel[x]
                val: float = W[rest[0]] * spt_total(av, [D[i] for i in rest]) + others
            else:
                rises = [(e, width[j]) for e, j in running if width[j]]
                first = min(R[i] for i in rest)  # no work of these jobs before the first release
                val = _fluid(rest, work, W, D, first if first > t else t, rises,
                             cap - sum(q for _, q in rises)) + others
            if val > best:
                best = val
                if best >= need:
                    return best
        return best


def root_lower_bound(inst: TotalJctInstance) -> int:
    """The branch and bound's lower bound at the root (no job placed): at most the optimum.

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> root_lower_bound(inst) >= inst.trivial_lower_bound()
    True

    ```
    """
    return _Bounds(inst).root()


class _Incumbent:
    """The best schedule so far, shared with CP-SAT's thread."""

    def __init__(self, value: int, choice: Choice, source: str):
        self.value, self.choice, self.source = value, choice, source
        self.lock = threading.Lock()

    def offer(self, value: int, choice: Choice, source: str) -> None:
        with self.lock:
            if value < self.value:
                self.value, self.choice, self.source = value, choice, source


def solve_total_jct_bnb(inst: TotalJctInstance, *, time_limit: float | None = 60.0, num_workers: int = 2,
                        seed: int | None = None, log: bool = False,
                        deterministic_limit: float | None = None, lagrangian_slots: int | None = None,
                        incumbent: Choice | None = None) -> Result:
    """Minimise sum_i w_i C_i exactly by branch and bound (module docstring), CP-SAT supplying schedules on
    ``num_workers - 1`` more threads. ``status`` is ``optimal`` when the search completed, CP-SAT proved
    optimality or the best schedule meets the lower bound; ``time limit`` when a limit stopped it; ``interrupted``
    when Ctrl-C or SIGTERM did (within a fraction of a second, through [`optsched.exact._stop`][]); in every case
    with the best schedule found and ``lower_bound`` the larger of the root bound and CP-SAT's.

    ``time_limit``: seconds of wall clock for the search and CP-SAT. ``deterministic_limit`` replaces it (no wall
    clock then): CP-SAT gets that many deterministic units, the search ``NODES_PER_UNIT`` nodes per unit, so that
    with ``num_workers=1`` (the search alone) a limited run is reproduced exactly on any machine.
    ``info``: ``nodes`` searched, ``root_bound``, ``found_by`` (``greedy``, ``given``, ``search`` or ``cpsat``),
    ``proved_by`` (``search``, ``cpsat`` or ``bound``), the limit that applied. ``seed`` is CP-SAT's.

    ``lagrangian_slots``: also prune by the Lagrangian bound
    ([`LagrangianBound`][optsched.exact.total_jct_lp.LagrangianBound] on that many slots, 200 subgradient steps
    towards the incumbent; formulation, "Lagrangian bound"), at O(jobs) per node; the root bound is then at least
    its value. ``incumbent``: a (mode index, vector, start) per job id to start from (checked by the evaluator)."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise InstanceError(f"must be a positive integer, got {num_workers!r}", field="num_workers")
    params = _cpsat.Params(time_limit=time_limit, deterministic_limit=deterministic_limit,
                           num_workers=max(1, num_workers - 1), seed=seed, log=log)
    t0 = time.perf_counter()
    deadline = math.inf if params.limit != "time" or time_limit is None else t0 + time_limit
    node_limit = math.inf if params.deterministic_limit is None else \
        math.ceil(params.deterministic_limit * NODES_PER_UNIT)
    caps = [s.gpus for s in inst.cluster.servers]
    n_srv = len(caps)
    jobs = inst.jobs
    n = len(jobs)
    bounds = _Bounds(inst)
    W, R = bounds.W, bounds.R
    opts = placement_options(inst)
    # per job: (duration, vector, mode, the (server, GPUs) pairs it uses)
    options = [[(j.modes[k].duration, u, k, tuple((m, q) for m, q in enumerate(u) if q)) for k, u in opts[i]]
               for i, j in enumerate(jobs)]
    # adjacent servers of equal capacity: the candidates for the symmetry rule
    twins = [a for a in range(n_srv - 1) if caps[a] == caps[a + 1]]

    g = greedy_total_jct(inst)
    inc = _Incumbent(choice_cost(inst, g), dict(g), "greedy")
    if incumbent is not None:  # a schedule from elsewhere (checked: a wrong one raises ScheduleError)
        check_schedule(inst, schedule_from_choice(inst, incumbent, "total-jct-bnb"))
        inc.offer(choice_cost(inst, incumbent), dict(incumbent), "given")
    root_lb = bounds.root()
    lag = None
    if lagrangian_slots is not None:
        from .total_jct_lp import LagrangianBound

        lag = LagrangianBound(inst, slots=lagrangian_slots, iterations=200, target=inc.value)
        root_lb = max(root_lb, math.ceil(lag.root() - 1e-7 * max(1.0, abs(lag.root()))))

    # -- CP-SAT beside the search ---------------------------------------------------------------------------
    cp: dict[str, Any] = {}
    thread = None
    if num_workers >= 2 and inc.value > root_lb:
        thread = _start_cpsat(inst, params, inc, cp)

    stop = [False]
    nodes = [0]
    hb = _cpsat.beat()  # (every_s, stream) when the caller wants a line now and then (the CLI on a terminal)
    next_beat = [t0 + hb[0] if hb else math.inf]
    memo: dict[tuple, list[tuple[int, int, int]]] = {}
    canon = len(set(caps)) < n_srv  # some servers share a capacity: states equal up to swapping them are one
    placed: Choice = {}
    full = (1 << n) - 1
    slack = 1e-9
    lag_slack = 1e-7  # the Lagrangian bound sums many floating-point prices

    def prune_at() -> float:  # a completion of cost >= this cannot beat the incumbent (integer costs)
        return inc.value - 1 + 1e-6

    lag_const = lag.const if lag is not None else 0.0

    def rec(mask: int, t: int, last: int, servers: tuple, running: list[tuple[int, int]], cost: int,
            pen: float) -> None:
        nodes[0] += 1
        if nodes[0] % _CHECK_EVERY == 0:
            now = time.perf_counter()
            if now > deadline or cp.get("optimal") or nodes[0] >= node_limit:
                stop[0] = True
            if hb and now >= next_beat[0]:
                next_beat[0] = now + hb[0]
                _cpsat._beat(hb[1], t0, [inc.value, max(root_lb, cp.get("bound") or 0)], who="branch and bound")
        if stop[0]:
            return
        if mask == full:
            if cost < inc.value:
                inc.offer(cost, dict(placed), "search")
            return
        kids = []
        first_done: dict[int, float] = {}
        same = [a for a in twins if servers[a] == servers[a + 1]]  # interchangeable neighbours at this node
        fit: dict[tuple[int, int, int], int] = {}  # (server, GPUs, from) -> earliest time they are free
        for i in range(n):
            if mask >> i & 1:
                continue
            r = R[i] if R[i] > t else t
            for d, u, k, used in options[i]:
                if same and any(u[a] < u[a + 1] for a in same):
                    continue
                s = r
                if d > 0:
                    # free GPUs only grow from t on: each server in turn moves s to when it has room
                    for m, q in used:
                        key = (m, q, s)
                        s2 = fit.get(key)
                        if s2 is None:
                            s2 = s
                            st = servers[m]
                            free = caps[m] - sum(c for e, c in st if e > s)
                            if free < q:
                                for e, c in st:  # ends in increasing order: GPUs come back
                                    if e <= s:
                                        continue
                                    free += c
                                    if free >= q:
                                        s2 = e
                                        break
                            fit[key] = s2
                        s = s2
                if s == t and i < last:
                    continue  # (start, index) order: the other order generates this state
                kids.append((s, d, u, k, i))
                if W[i] > 0:
                    done = s + d if d > 0 else s + 0.5  # a zero-length job only helps if it starts earlier
                    if done < first_done.get(i, math.inf):
                        first_done[i] = done
        # the two jobs that can finish first (one may be the child's own job)
        soonest = sorted((e, i) for i, e in first_done.items())[:2] + [(math.inf, -1)] * 2
        (e0, i0), (e1, i1) = soonest[0], soonest[1]
        out = []
        for s, d, u, k, i in kids:
            if (e0 <= s and i0 != i) or (e1 <= s and i1 != i):
                continue  # gap dominance: another job fits entirely before s
            c = s + d
            c2 = cost + W[i] * c
            need = prune_at()
            if c2 >= need:
                continue
            run = [(e, j) for e, j in running if e > s]
            if d > 0:
                bisect.insort(run, (c, i))
            m2 = mask | 1 << i
            p2 = 0.0
            if lag is not None:  # the Lagrangian bound (prices of the placed runs + the rest's least)
                p2 = pen + lag.price(i, s, d)
                lb = c2 + p2 - lag_const + sum(lag.rest(x, s) for x in range(n) if not m2 >> x & 1)
                lb -= lag_slack * max(1.0, abs(lb))
                if lb >= need:
                    continue
            lb = c2 + bounds.lower(m2, s, run, need - c2)
            lb -= slack * max(1.0, abs(lb))
            if lb >= need:
                continue
            out.append((lb, s, i, k, u, d, run, c2, m2, p2))
        out.sort(key=lambda x: x[0])
        for lb, s, i, k, u, d, run, c2, m2, p2 in out:
            if lb >= prune_at() or stop[0]:
                break
            c = s + d
            sv = tuple(tuple(sorted([(e, q) for e, q in servers[m] if e > s] + ([(c, u[m])] if u[m] and d else [])))
                       for m in range(n_srv))
            # memo: the same placed set and running jobs (servers of one capacity in any order) reached before
            # from a start no later, at no larger cost, dominates (its completions include these)
            state = (m2, tuple(sorted(zip(caps, sv))) if canon else sv)
            seen = memo.get(state)
            if seen is None:
                if len(memo) >= _MEMO_MAX:  # keep memory bounded on long runs (the memo only prunes)
                    memo.clear()
                memo[state] = [(s, i, c2)]
            else:
                if any(s0 <= s and c0 <= c2 and (s0 < s or l0 <= i) for s0, l0, c0 in seen):
                    continue
                seen[:] = [e for e in seen if not (s <= e[0] and c2 <= e[2] and (s < e[0] or i <= e[1]))]
                seen.append((s, i, c2))
            placed[jobs[i].id] = (k, u, s)
            rec(m2, s, i, sv, run, c2, p2)
            del placed[jobs[i].id]

    def halt() -> None:  # a signal arrived: the search and CP-SAT stop at their next look
        stop[0] = True
        solver = cp.get("solver")
        if solver is not None:
            solver.stop_search()

    def search() -> None:
        if inc.value > root_lb:
            rec(0, -1, -1, tuple(() for _ in caps), [], 0, 0.0)

    # the search runs in a helper thread while this one waits for Ctrl-C or SIGTERM (as CP-SAT's solves do)
    if hb:
        _cpsat.started(hb[1], who="branch and bound")
    _, signal_name = run_stoppable(search, halt, name="branch-and-bound")
    searched = not stop[0]
    if thread is not None:
        halt()
        thread.join()
    cp_optimal = bool(cp.get("optimal"))
    lb = root_lb
    if cp.get("bound") is not None:
        lb = max(lb, math.ceil(cp["bound"] - 1e-9))
    sched = schedule_from_choice(inst, inc.choice, "total-jct-bnb")
    obj = check_schedule(inst, sched)
    if obj != inc.value:
        raise ScheduleError(f"search objective {inc.value} != checked objective {obj}")  # pragma: no cover
    proved_by = "search" if searched else "cpsat" if cp_optimal else "bound" if _cpsat.meets(obj, lb) else None
    if proved_by is not None:
        lb, status = obj, SolveStatus.OPTIMAL  # the bound proves it, whatever stopped the search
    else:
        status = SolveStatus.TIME_LIMIT if signal_name is None else SolveStatus.INTERRUPTED
    if hb:
        _cpsat._beat(hb[1], t0, [obj, lb], final=status.value, who="branch and bound")
    info: dict[str, Any] = {"nodes": nodes[0], "root_bound": root_lb, "found_by": inc.source, "proved_by": proved_by,
                            **params.info(), "node_limit": None if node_limit == math.inf else node_limit,
                            "time_unit_s": inst.time_unit_s, "cpsat_status": cp.get("status")}
    info["num_workers"] = num_workers  # the search's thread and CP-SAT's (params.info() counts CP-SAT's alone)
    if status == SolveStatus.INTERRUPTED:
        info["interrupted"] = signal_name
    return Result(obj, status, time.perf_counter() - t0, sched, "total-jct-bnb", lower_bound=lb, seed=seed,
                  info=info)


def _start_cpsat(inst: TotalJctInstance, params: _cpsat.Params, inc: _Incumbent, cp: dict[str, Any]
                 ) -> threading.Thread:
    """Run CP-SAT on ``inst`` in a thread: each improving schedule is offered to ``inc``; ``cp`` receives the
    solver (to stop it), CP-SAT's status, bound, and ``optimal`` when it proved the optimum."""
    model = CpModelOf(inst)
    solver = _cpsat.new_solver(params)
    cp["solver"] = solver

    def offer(found: Any) -> None:
        value = round(found.objective_value)
        if value < inc.value:
            inc.offer(value, model.choice(found.value), "cpsat")

    def run() -> None:
        done = _cpsat.solve(model.md, params, solver=solver, on_solution=offer)
        cp["status"] = done.cpsat_status
        cp["bound"] = done.bound if done.found else None
        cp["optimal"] = done.status == SolveStatus.OPTIMAL

    th = threading.Thread(target=run, name="total-jct-cpsat", daemon=True)
    th.start()
    return th


@algorithm("total-jct-bnb", TotalJctInstance, exact=True,
          description="exact total (weighted) completion time by branch and bound with CP-SAT beside it")
def _registered_bnb(inst: TotalJctInstance, *, seed: int | None = None, time_limit: float | None = None,
                    deterministic_limit: float | None = None, **options) -> Result:
    # deterministic_limit named so that solve_many, which reads the signature, passes it (as exact's, issue 28)
    if time_limit is None and deterministic_limit is None:
        time_limit = 60.0
    return solve_total_jct_bnb(inst, seed=seed, time_limit=time_limit, deterministic_limit=deterministic_limit,
                               **options)
