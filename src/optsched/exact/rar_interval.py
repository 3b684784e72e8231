"""An exact method for RAR-DDLS (paper 000) whose model size does not grow with the horizon: ``exact-interval``.

The time-indexed model of [`optsched.exact.rar_cpsat`][] has a variable per job, slot and server, so an instance
with a few long jobs (hundreds of slots) is slow to prove. Here two interval models without any slot index
bracket the optimum T* (proofs in ``docs/formulations/rar-ddls-interval.md``):

* the **relaxation** R: every job picks GPUs per server y_js (hence a placement class n_j, its number of servers)
  and an interval [a_j, C_j) of length at least dfast_j(n_j) = ceil(F_j / max_p Phi_j(n_j, p)); one cumulative
  per server; and for a p-sensitive job a cut charging the slots it provably shares with other split jobs at
  the contended speed Phi_j(n, 2). Its optimum LB_R <= T*;
* the **pairwise-contention restriction** R1: at most two split jobs on a server at a time, and every
  p-sensitive job charged Phi_j(n, 2) for the sum of its overlaps with the split jobs it shares a server with.
  The evaluator scores R1's schedule at most its objective: UB_1 >= T*.

Upper bounds come from the incumbents, a local search on the list SGS's priority order, a
large-neighbourhood search on R1 ([`optsched.exact.rar_lns`][]), and R1 solved as a whole from the best
schedule's complete solution. If the evaluator's best score meets LB_R, it is optimal: no slot was ever
modelled. Otherwise the gap holds schedules that gain by running contended jobs side by side; the time-indexed
model closes it, built over the horizon of the best schedule with the makespan at least LB_R (the only place
where the horizon still matters, reported in ``info["closed_by"]``).

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> res = solve_rar_interval(tiny_rar_example(), time_limit=20, num_workers=1)
>>> res.status.value, res.objective, res.lower_bound
('optimal', 5, 5)

```
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from ..bounds import fastest_slots, lower_bound, makespan_lower_bound, p_sensitive, phi_table, placement_classes
from ..errors import ScheduleError
from ..evaluators.rar import evaluate
from ..problems.rar import RarInstance, RarJob
from ..registry import algorithm
from ..result import Result, Schedule, SolveStatus
from . import _cpsat
from .rar_cpsat import _lex_columns, canonical, incumbents, read_schedule, server_classes, solve_rar_cpsat
from .rar_lns import hint_r1_solution, improve_order, lns_r1, sched_order
from .rar_sgs import best_list_schedule

# deterministic units per LNS re-solve (at most a tenth of a deterministic limit): on rar-q2-j32-s8-seed1, steps of
# 0.1 reached 173 after 9-16 CPU s (LNS seeds 0-2), steps of 0.5 172 after 43 (seed 0), steps of 0.05 174 after 75
# (seed 0; 88 of its 200 steps found no solution)
LNS_STEP_DET = 0.1
LNS_STEPS = 40    # LNS re-solves under a deterministic limit
LNS_SHARE = 7 / 8  # of the time left after the order search, for the LNS (R1 as a whole and R share the rest)
MAX_PROBES = 16   # destructive-bounding probes of R at most
# LNS steps in a row without an improvement after which the LNS stops under a time or CPU limit (its time then goes
# to the probe one below the best and to R): on rar-q2-j24-s6-seed0 it reached 149, the optimum, at step 4 and then
# improved once in the next 67 steps (62 CPU s, patience 30); on rar-q2-j32-s8-seed1 24 of its 36 steps improved
# (12 of 19 with seed 1)
LNS_PATIENCE = 20


def order_steps(inst: RarInstance) -> int:
    """SGS runs of the order search: about 8,000 job placements in all (400 runs at 20 jobs, 50 at 160)."""
    return max(20, min(400, 8000 // max(1, inst.n_jobs)))


@dataclass
class IntervalModel:
    """An interval model (R or R1) and the variables to read a schedule back or to give a hint."""

    model: cp_model.CpModel
    start: dict[str, cp_model.IntVar]
    end: dict[str, cp_model.IntVar]
    gpus: dict[tuple[str, str], cp_model.IntVar]
    makespan: cp_model.IntVar
    restriction: bool


def build_interval_model(inst: RarInstance, horizon: int, *, restriction: bool, min_makespan: int = 0,
                         symmetry: bool = True) -> IntervalModel:
    """The relaxation R (``restriction=False``) or the restriction R1 (``True``) over [0, horizon]; see the module
    docstring and ``docs/formulations/rar-ddls-interval.md``."""
    m = cp_model.CpModel()
    H = int(horizon)
    S = inst.cluster.server_ids
    cap = inst.cluster.capacity
    makespan = m.new_int_var(max(min_makespan, 0), H, "makespan")
    start: dict[str, cp_model.IntVar] = {}
    end: dict[str, cp_model.IntVar] = {}
    y: dict[tuple[str, str], cp_model.IntVar] = {}
    z: dict[tuple[str, str], cp_model.IntVar] = {}
    split: dict[str, cp_model.IntVar] = {}
    ivs: dict[str, cp_model.IntervalVar] = {}
    per_server: dict[str, list[tuple[cp_model.IntervalVar, cp_model.IntVar]]] = {s: [] for s in S}
    nvar: dict[str, cp_model.IntVar] = {}
    dur: dict[str, cp_model.IntVar] = {}
    for j in inst.jobs:
        classes = placement_classes(inst, j)
        fast = fastest_slots(inst, j)
        dmin = min(fast.values())
        dmax = max(fast.values())
        a = m.new_int_var(0, max(0, H - dmin), f"a[{j.id}]")
        c = m.new_int_var(dmin, max(H, dmin), f"C[{j.id}]")
        d = m.new_int_var(dmin, max(H, dmin), f"d[{j.id}]")
        ivs[j.id] = m.new_interval_var(a, d, c, f"iv[{j.id}]")
        start[j.id], end[j.id] = a, c
        m.add(makespan >= c)
        for s in S:
            y[j.id, s] = m.new_int_var(0, min(j.gpus, cap[s]), f"y[{j.id},{s}]")
            z[j.id, s] = m.new_bool_var(f"z[{j.id},{s}]")
            m.add(y[j.id, s] >= 1).only_enforce_if(z[j.id, s])
            m.add(y[j.id, s] == 0).only_enforce_if(z[j.id, s].negated())
            per_server[s].append((ivs[j.id], y[j.id, s]))
        m.add(sum(y[j.id, s] for s in S) == j.gpus)
        n = m.new_int_var_from_domain(cp_model.Domain.from_values(list(classes)), f"n[{j.id}]")
        m.add(n == sum(z[j.id, s] for s in S))
        nvar[j.id], dur[j.id] = n, d
        if dmin != dmax:  # d_j >= dfast_j(n_j)
            table = [fast.get(k, dmax) for k in range(max(classes) + 1)]
            dl = m.new_int_var(dmin, dmax, f"dfast[{j.id}]")
            m.add_element(n, table, dl)
            m.add(d >= dl)
        if max(classes) >= 2:
            split[j.id] = m.new_bool_var(f"split[{j.id}]")
            m.add(n >= 2).only_enforce_if(split[j.id])
            m.add(n <= 1).only_enforce_if(split[j.id].negated())
    for s in S:
        m.add_cumulative([iv for iv, _ in per_server[s]], [g for _, g in per_server[s]], cap[s])
    m.add_cumulative(list(ivs.values()), [j.gpus for j in inst.jobs], inst.cluster.total_gpus)
    sens = {j.id for j in inst.jobs if j.id in split and p_sensitive(inst, j)}
    ids = [j.id for j in inst.jobs if j.id in split]
    jobs = {j.id: j for j in inst.jobs}
    partners: dict[str, list[tuple[str, cp_model.IntVar]]] = {jid: [] for jid in sens}
    for i, ji in enumerate(ids):
        for jk in ids[i + 1:]:
            if ji not in sens and jk not in sens:
                continue  # neither job's speed depends on contention: their overlap costs nothing
            # shares >= split_i & split_k & z_is & z_ks for some s. A lower bound is enough: a spurious 1 only
            # tightens R's cut (still valid) or R1's penalty (still an upper bound); neither objective gains
            shares = m.new_bool_var(f"shares[{ji},{jk}]")
            for s in S:
                m.add_bool_or([split[ji].negated(), split[jk].negated(), z[ji, s].negated(),
                               z[jk, s].negated(), shares])
            # ov >= the number of slots both run while sharing a server (= it at the optimum of either model)
            lo = m.new_int_var(0, H, f"ovlo[{ji},{jk}]")
            hi = m.new_int_var(0, H, f"ovhi[{ji},{jk}]")
            m.add_max_equality(lo, [start[ji], start[jk]])
            m.add_min_equality(hi, [end[ji], end[jk]])
            ov = m.new_int_var(0, H, f"ov[{ji},{jk}]")
            m.add(ov >= hi - lo).only_enforce_if(shares)
            for jid, other in ((ji, jk), (jk, ji)):
                if jid in sens:
                    partners[jid].append((other, ov))
    if restriction:
        # R1: at most two split jobs on a server at a time, so p <= 2 for everyone
        for s in S:
            w = []
            for jid in ids:
                v = m.new_bool_var(f"w[{jid},{s}]")
                m.add_bool_or([split[jid].negated(), z[jid, s].negated(), v])
                w.append(v)
            m.add_cumulative([ivs[jid] for jid in ids], w, 2)
    # progress of a p-sensitive job on class n: Phi(n,1) d - (Phi(n,1) - Phi(n,2)) * X >= F_j with X = the
    # largest overlap (R: a lower bound on its contended slots) or the sum of overlaps (R1: an upper bound)
    for jid in sens:
        if not partners[jid]:
            continue
        job = jobs[jid]
        if restriction:
            x = sum(ov for _, ov in partners[jid])
        else:
            x = m.new_int_var(0, H, f"contended[{jid}]")
            for clique in disjoint_partner_sets(inst, job, [k for k, _ in partners[jid]]):
                m.add(x >= sum(ov for k, ov in partners[jid] if k in clique))
        for cls, row in phi_table(inst, job).items():
            if cls < 2:
                continue
            p2 = row[min(2, len(row) - 1)]
            if row[1] == p2 and not restriction:
                continue
            lit = _class_literal(m, nvar[jid], cls)
            m.add(row[1] * dur[jid] - (row[1] - p2) * x >= job.iterations).only_enforce_if(lit)
    if symmetry:
        _lex_columns(m, inst, y, server_classes(inst))
    m.minimize(makespan)
    return IntervalModel(m, start, end, y, makespan, restriction)


def disjoint_partner_sets(inst: RarInstance, job: RarJob, partners: list[str]) -> list[set[str]]:
    """The maximal sets Q of ``partners`` no two of which can run together with ``job``: G_j + G_k + G_l > N for
    all k != l in Q. The slots ``job`` shares with the members of Q are then pairwise disjoint, so their overlaps
    add up (docs/formulations/rar-ddls-interval.md, cut C2). Maximal cliques of that graph, by networkx."""
    import networkx as nx

    g = {j.id: j.gpus for j in inst.jobs}
    graph = nx.Graph()
    graph.add_nodes_from(partners)
    n_gpus = inst.cluster.total_gpus
    for i, k in enumerate(partners):
        for other in partners[i + 1:]:
            if job.gpus + g[k] + g[other] > n_gpus:
                graph.add_edge(k, other)
    return [set(c) for c in nx.find_cliques(graph)]


def _class_literal(m: cp_model.CpModel, n: cp_model.IntVar, cls: int) -> cp_model.IntVar:
    """A literal equivalent to n == cls."""
    b = m.new_bool_var(f"{n.name}=={cls}")
    m.add(n == cls).only_enforce_if(b)
    m.add(n != cls).only_enforce_if(b.negated())
    return b


def _hint(im: IntervalModel, inst: RarInstance, schedule: Schedule) -> None:
    """Hint starts, completions and GPUs of the (canonical) schedule, as the evaluator scores it. The hint
    may violate R1 (a schedule with contention); CP-SAT repairs or ignores it then."""
    ev = evaluate(inst, canonical(inst, schedule))
    for sj in ev.schedule.jobs:
        im.model.add_hint(im.start[sj.id], int(sj.start))
        im.model.add_hint(im.end[sj.id], int(ev.completions[sj.id]))
        for s in inst.cluster.server_ids:
            im.model.add_hint(im.gpus[sj.id, s], sj.placement.get(s, 0))
    im.model.add_hint(im.makespan, ev.makespan)


def _makespan_or(inst: RarInstance, sched: Schedule, default: int) -> int:
    """The evaluated makespan of ``sched``, or ``default`` when the evaluator rejects it: the relaxation R's
    schedules may be infeasible (contention lengthens a job past the model's C_j into a later job)."""
    try:
        return evaluate(inst, sched).makespan
    except ScheduleError:
        return default


# CP-SAT's full-problem workers for the probes of R with two workers: CP-SAT's own two-worker portfolio has one
# full-problem worker (default_lp) beside a first-solution one; on rar-q2-j24-s6-seed0 it left R at 142 unknown after
# 40 CPU s, where no_lp beside default_lp proved it infeasible in 4.4 CPU s (8 workers, whose portfolio has no_lp: in
# 4.1-6.4 CPU s; then 143-147 in 9-95 CPU s each)
PROOF_SUBSOLVERS = ("no_lp", "default_lp")


def _with_subsolvers(solver: cp_model.CpSolver, names: tuple[str, ...]) -> cp_model.CpSolver:
    for name in names:
        solver.parameters.subsolvers.append(name)
    return solver


def cpu_capped_solve(model: cp_model.CpModel, params: _cpsat.Params, *,
                     subsolvers: tuple[str, ...] = (), until: float | None = None) -> _cpsat.Run:
    """``_cpsat.solve`` with ``params.time_limit`` read as **process CPU seconds** (all threads) instead of wall
    seconds: a watchdog thread stops the search once this process has used that much more CPU time. CP-SAT itself
    knows only wall-clock and deterministic limits, and on a loaded machine a wall limit buys a varying amount of
    work (our 60-s runs of 24-32 jobs got 19-20 CPU s at a load of 13-20). Other limits pass through unchanged.
    ``subsolvers``: CP-SAT's full-problem workers by name (its ``subsolvers`` parameter; empty: its default).
    ``until``: a ``time.process_time()`` at which the search also stops, whatever limit ``params`` set (a step
    under a deterministic limit then cannot run past a CPU budget's end: under load such a step costs more CPU).

    ```pycon
    >>> m = cp_model.CpModel(); x = m.new_int_var(0, 5, "x"); m.minimize(x)
    >>> cpu_capped_solve(m, _cpsat.Params(time_limit=5.0)).objective
    0.0

    ```
    """
    end, uncapped = (math.inf if until is None else until), params
    if params.limit == "time" and params.time_limit is not None:  # the CPU clock replaces CP-SAT's wall limit
        end, uncapped = min(end, time.process_time() + params.time_limit), dataclasses.replace(params, time_limit=None)
    if end == math.inf:
        return solve_with(model, params, subsolvers)
    solver = _with_subsolvers(_cpsat.new_solver(uncapped), subsolvers)
    over = threading.Event()

    def watch() -> None:  # stop_search again every 20 ms once over: a stop before the search is set up is lost
        while not over.wait(0.02):
            if time.process_time() >= end:
                solver.stop_search()

    threading.Thread(target=watch, name="cpu-watchdog", daemon=True).start()
    try:
        return _cpsat.solve(model, uncapped, solver=solver)
    finally:
        over.set()


def solve_with(model: cp_model.CpModel, params: _cpsat.Params, subsolvers: tuple[str, ...] = ()) -> _cpsat.Run:
    """``_cpsat.solve`` with CP-SAT's full-problem workers named (``subsolvers``; empty: CP-SAT's default)."""
    if not subsolvers:
        return _cpsat.solve(model, params)
    return _cpsat.solve(model, params, solver=_with_subsolvers(_cpsat.new_solver(params), subsolvers))


def solve_rar_interval(inst: RarInstance, *, time_limit: float | None = 60.0, num_workers: int = 2,
                       seed: int | None = 0, deterministic_limit: float | None = None,
                       cpu_limit: float | None = None, close_gap: bool = True,
                       heuristics: bool = True, hint: bool = True, symmetry: bool = True, lns: bool = True,
                       log: bool = False) -> Result:
    """Minimise the makespan of ``inst`` exactly with the interval models R and R1 (module docstring).

    ``time_limit`` (s) bounds the whole solve: the probes of R get a quarter, the LNS on R1
    ([`optsched.exact.rar_lns`][]; steps of ``LNS_STEP_DET`` deterministic units) ``LNS_SHARE`` of what is left,
    R1 as a whole (from the best schedule's complete solution of R1; ``lns=False`` skips these two and the order
    search) half of the rest, then R and, if the gap is open and ``close_gap``, the time-indexed model what
    remains; ``deterministic_limit`` instead gives each model solve that many deterministic units and each probe a
    tenth of it (reproducible runs; ``info["limit"]`` says which applied); ``cpu_limit`` (s) replaces
    ``time_limit`` by process CPU seconds (all threads; the same shares, each CP-SAT call stopped by
    [`cpu_capped_solve`][optsched.exact.rar_interval.cpu_capped_solve], the time-indexed model given what is left
    divided by ``num_workers`` as wall seconds), so that the work done does not depend on the machine's load
    (``info["limit"]`` is ``"cpu"``). ``info`` records when each step ended
    (``at_wall_s``, ``at_cpu_s``: process CPU seconds, all threads). At a
    limit the best schedule found is returned with status ``time limit`` and the best proven bound; after Ctrl-C or
    SIGTERM (which stop the CP-SAT call that runs), with status ``interrupted`` and no further call.
    """
    w0, c0 = time.perf_counter(), time.process_time()
    cpu = cpu_limit is not None and deterministic_limit is None
    clock = time.process_time if cpu else time.perf_counter  # what the time limit counts
    t0 = clock()
    params = _cpsat.Params(time_limit=cpu_limit if cpu else time_limit, deterministic_limit=deterministic_limit,
                           num_workers=num_workers, seed=int(seed or 0), log=log)

    def run_cp(model: cp_model.CpModel, p: _cpsat.Params, subsolvers: tuple[str, ...] = ()) -> _cpsat.Run:
        return cpu_capped_solve(model, p, subsolvers=subsolvers) if cpu else solve_with(model, p, subsolvers)

    info: dict[str, Any] = {"solver": "cp-sat", "method": "interval bracket", **params.info()}
    if cpu:
        info.update(limit="cpu", time_limit_s=None, cpu_limit_s=params.time_limit)
    cands = incumbents(inst, seed=seed, heuristics=heuristics, greedy=inst.n_jobs <= 8)
    if heuristics:  # the list SGS: often optimal at the paper's size (docs/results/rar_library.md)
        ms, sched = best_list_schedule(inst, restarts=20 if inst.n_jobs <= 40 else 5, seed=int(seed or 0))
        cands = sorted(cands + [(ms, "list-sgs", sched)], key=lambda x: (x[0], x[1]))
    ub, ub_name, best = cands[0]
    lb = max(makespan_lower_bound(inst), lower_bound(inst))

    def at() -> dict[str, float]:  # when a step ended: wall and process CPU seconds since the start
        return {"at_wall_s": round(time.perf_counter() - w0, 2), "at_cpu_s": round(time.process_time() - c0, 2)}

    def left() -> _cpsat.Params:
        if params.time_limit is None or params.limit != "time":
            return params
        return dataclasses.replace(params, time_limit=max(0.01, params.time_limit - (clock() - t0)))

    def done(status: SolveStatus, bound: int, **extra: Any) -> Result:
        info.update(extra)
        info["best_by"] = ub_name  # which step found the schedule returned
        ev = evaluate(inst, best)
        return Result(objective=ev.makespan, status=status, runtime_s=time.perf_counter() - w0,
                      schedule=Schedule(ev.schedule.jobs, algorithm="exact-interval", instance=inst.name),
                      algorithm="exact-interval", lower_bound=bound, seed=seed, info=info)

    info["incumbent"] = {"algorithm": ub_name, "makespan": ub, **at()}
    if lb >= ub:
        return done(SolveStatus.OPTIMAL, ub, closed_by="incumbent meets the closed-form lower bound")
    # destructive bounding: R over the horizon T infeasible => T* > T (Theorem R). Each probe with a short limit,
    # a quarter of the budget in all; a probe that finds a schedule offers it as a candidate. Proofs are cheap
    # just above the bound and hard near the optimum, so the probes gallop up from the bound (steps 1, 2, 4, ...)
    # until one fails to prove infeasibility, then bisect below it
    share = None if params.time_limit is None or params.limit != "time" else left().time_limit
    budget = None if share is None else clock() - t0 + share / 4  # elapsed time at which probes stop
    lo, hi = lb, ub - 1
    probes, jump, galloping = 0, 1, True
    while lo <= hi and probes < MAX_PROBES:
        spent = clock() - t0
        if budget is not None and spent >= budget:
            break
        mid = min(hi, lo + jump - 1) if galloping else (lo + hi) // 2
        probe = build_interval_model(inst, mid, restriction=False, symmetry=symmetry)
        if budget is not None and share is not None:  # a sixteenth of what was left, at most, per probe; a
            # quarter of that once a probe failed: on our 24-32-job instances a proof came within 0.02 s or not in
            # the limit (rar-q2-j32-s8-seed1: 155-169 proved at once, 170-181 unknown after 3.75 s each)
            pp = dataclasses.replace(params, time_limit=max(0.01, min(budget - spent,
                                                                      share / (16 if galloping else 64))))
        else:
            pp = dataclasses.replace(params, deterministic_limit=max(0.01, (params.deterministic_limit or 1) / 10))
        prun = run_cp(probe.model, pp, PROOF_SUBSOLVERS if num_workers == 2 else ())
        probes += 1
        if prun.interrupted:  # Ctrl-C or SIGTERM: no further solve, the best schedule so far
            return done(SolveStatus.INTERRUPTED, lb, interrupted=prun.interrupted)
        if prun.status == SolveStatus.INFEASIBLE:
            lb = lo = mid + 1
            jump *= 2
            continue
        galloping = False
        if prun.found:
            sched = read_schedule(probe, prun, inst, algorithm="exact-interval")
            ms = _makespan_or(inst, sched, ub)
            if ms < ub:
                ub, best, ub_name = ms, sched, "relaxation probe"
        hi = mid - 1
    info["probes"] = {"count": probes, "lower_bound": lb, **at()}
    if lb >= ub:
        return done(SolveStatus.OPTIMAL, ub, closed_by="relaxation R infeasible below an evaluated schedule")
    if lns and any(p_sensitive(inst, j) for j in inst.jobs):
        # a probe of R1 at the bound: any solution is a schedule the evaluator completes by LB (Theorem R1)
        r1 = build_interval_model(inst, lb, restriction=True, symmetry=symmetry)
        if share is not None:
            pp = dataclasses.replace(params, time_limit=share / 16)
        else:
            pp = dataclasses.replace(params, deterministic_limit=max(0.01, (params.deterministic_limit or 1) / 10))
        prun = run_cp(r1.model, pp)
        info["restriction_probe"] = {"horizon": lb, "status": prun.status.value, **at()}
        if prun.interrupted:
            return done(SolveStatus.INTERRUPTED, lb, interrupted=prun.interrupted)
        if prun.found:
            sched = read_schedule(r1, prun, inst, algorithm="exact-interval")
            ms = evaluate(inst, sched).makespan
            if ms < ub:
                ub, best, ub_name = ms, sched, "restriction R1 at the bound"
        if lb >= ub:
            return done(SolveStatus.OPTIMAL, ub, closed_by="restriction R1 feasible at the bound of the probes")
    if heuristics and lns:  # local search on the list SGS's priority order: cheap, counted, deterministic (under a
        # time limit also stopped after a tenth of it)
        stop_at = None if params.time_limit is None or params.limit != "time" else \
            clock() - t0 + params.time_limit / 10
        ms, sched, _ = improve_order(inst, sched_order(inst, best), iterations=order_steps(inst), seed=int(seed or 0),
                                     stop=None if stop_at is None else lambda: clock() - t0 >= stop_at)
        if ms <= ub:  # also at an equal makespan: the LNS starts from it (on rar-q2-j32-s8-seed1 its 182 led the
            # LNS to 173-177 in 10-16 CPU s, from the list SGS's 182 to nothing better in 13-19, three seeds each)
            ub, best, ub_name = ms, sched, "list-sgs order search"
        info["order_search"] = {"makespan": ms, **at()}
        if lb >= ub:
            return done(SolveStatus.OPTIMAL, ub, closed_by="order search meets the bound of the probes")
    # LNS on the restriction R1 (optsched.exact.rar_lns): LNS_SHARE of what is left, short re-solves of a
    # dozen jobs each, until the schedule meets the bound; its schedules are R1's, so the evaluator accepts them.
    # It runs before R1 as a whole: per CPU second it gets further (rar-q2-j32-s8-seed1, from the order search's
    # 182: R1 whole reached 171 after 47 CPU s, the LNS 173 after 9-16 and 170 after 13-47)
    if lns and any(p_sensitive(inst, j) for j in inst.jobs):
        cut = None if params.time_limit is None or params.limit != "time" else \
            clock() - t0 + (params.time_limit - (clock() - t0)) * LNS_SHARE
        # each re-solve with a deterministic limit, also under a time limit: a step then does the same work
        # whatever the machine's load (at a load of 6-7 the whole 60-s solve got 20 CPU s of its 2 x 60)
        step = dataclasses.replace(params, deterministic_limit=LNS_STEP_DET if cut is not None else max(
            0.01, min(LNS_STEP_DET, (params.deterministic_limit or 1) / 10)))
        r1 = build_interval_model(inst, ub, restriction=True, symmetry=False)
        ms, sched, stats = lns_r1(inst, best, r1, steps=LNS_STEPS if cut is None else 10**6, step_params=step,
                                  seed=int(seed or 0), target=lb, patience=None if cut is None else LNS_PATIENCE,
                                  stop=None if cut is None else lambda: clock() - t0 >= cut,
                                  solve=None if cut is None or not cpu else
                                  lambda m, p: cpu_capped_solve(m, p, until=t0 + cut))
        info["lns"] = {**stats, "makespan": ms, **at()}
        if ms < ub:
            ub, best, ub_name = ms, sched, "LNS on R1"
        if lb >= ub:
            return done(SolveStatus.OPTIMAL, ub, closed_by="LNS on R1 meets the bound of the probes")
        if "interrupted" in stats:
            return done(SolveStatus.INTERRUPTED, lb, interrupted=stats["interrupted"])
    # one probe of R just below the best schedule, with the probes' workers and half of what is left (a tenth of
    # a deterministic limit): infeasible proves the best schedule optimal (Theorem R). On rar-q2-j24-s6-seed0 R at
    # 148 was infeasible in 12.5 CPU s with no_lp beside default_lp, where minimising R stalled at 142. It runs
    # before R1 as a whole, which after the LNS rarely finds more (rar-q2-j24-s6-seed0: 17 CPU s for nothing)
    if lb < ub:
        final = left()
        if final.time_limit is not None and final.limit == "time":
            final = dataclasses.replace(final, time_limit=final.time_limit / 2)
        elif final.limit == "deterministic":
            final = dataclasses.replace(final, deterministic_limit=max(0.01, (final.deterministic_limit or 1) / 10))
        probe = build_interval_model(inst, ub - 1, restriction=False, symmetry=symmetry)
        prun = run_cp(probe.model, final, PROOF_SUBSOLVERS if num_workers == 2 else ())
        info["final_probe"] = {"horizon": ub - 1, "status": prun.status.value, **at()}
        if prun.interrupted:
            return done(SolveStatus.INTERRUPTED, lb, interrupted=prun.interrupted)
        if prun.status == SolveStatus.INFEASIBLE:
            return done(SolveStatus.OPTIMAL, ub, closed_by="relaxation R infeasible one below the best schedule")
        if prun.found:
            sched = read_schedule(probe, prun, inst, algorithm="exact-interval")
            ms = _makespan_or(inst, sched, ub)
            if ms < ub:
                ub, best, ub_name = ms, sched, "final relaxation probe"
            if lb >= ub:
                return done(SolveStatus.OPTIMAL, ub, closed_by="relaxation R infeasible below an evaluated schedule")
    # R1 as a whole from a complete solution: the best schedule fixed in R1 gives every variable a value (the
    # hint), then CP-SAT minimises the makespan, at least LB (a solution at LB closes the gap), with half of what
    # is left (D under a deterministic limit D)
    if lns and any(p_sensitive(inst, j) for j in inst.jobs):
        r1 = build_interval_model(inst, ub, restriction=True, min_makespan=lb, symmetry=False)
        fix = dataclasses.replace(params, time_limit=share / 16) if share is not None else dataclasses.replace(
            params, deterministic_limit=max(0.01, (params.deterministic_limit or 1) / 10))
        fixed = hint_r1_solution(inst, best, r1, fix, solve=run_cp)
        if fixed.interrupted:
            return done(SolveStatus.INTERRUPTED, lb, interrupted=fixed.interrupted)
        whole = left()
        if whole.time_limit is not None and whole.limit == "time":
            whole = dataclasses.replace(whole, time_limit=whole.time_limit / 2)
        run1 = run_cp(r1.model, whole)
        info["restriction"] = {"status": run1.status.value, "objective": run1.objective,
                               "complete_hint": fixed.found, **at()}
        if run1.found:
            sched = read_schedule(r1, run1, inst, algorithm="exact-interval")
            ms = evaluate(inst, sched).makespan
            if ms < ub:
                ub, best, ub_name = ms, sched, "restriction R1"
        if lb >= ub:
            return done(SolveStatus.OPTIMAL, ub, closed_by="restriction R1 meets the bound of the probes")
        if run1.interrupted:
            return done(SolveStatus.INTERRUPTED, lb, interrupted=run1.interrupted)
    # R: the relaxation, whose proven bound is a lower bound on T*
    rm = build_interval_model(inst, ub, restriction=False, min_makespan=lb, symmetry=symmetry)
    if hint:
        _hint(rm, inst, best)
    # R gets half of what is left (all of it after the LNS), so that R1 still runs when R's proof is out of reach
    half = left()
    if not lns and half.time_limit is not None and half.limit == "time":
        half = dataclasses.replace(half, time_limit=half.time_limit / 2)
    run = run_cp(rm.model, half)
    info["relaxation"] = {"status": run.status.value, "bound": run.bound, "objective": run.objective, **at()}
    if run.bound is not None:
        lb = max(lb, math.ceil(run.bound - 1e-9))
    if run.found:
        sched = read_schedule(rm, run, inst, algorithm="exact-interval")
        ms = _makespan_or(inst, sched, ub)
        if ms < ub:
            ub, best, ub_name = ms, sched, "relaxation"
    if lb >= ub:
        return done(SolveStatus.OPTIMAL, ub, closed_by="relaxation R meets an evaluated schedule")
    if run.interrupted:
        return done(SolveStatus.INTERRUPTED, lb, interrupted=run.interrupted)
    # R1: schedules with pairwise contention only, each scored by the evaluator at most its model makespan
    # (the LNS has searched R1 already)
    if not lns and any(p_sensitive(inst, j) for j in inst.jobs):
        r1 = build_interval_model(inst, ub, restriction=True, min_makespan=lb, symmetry=symmetry)
        if hint:
            _hint(r1, inst, best)
        run0 = run_cp(r1.model, left())
        info["restriction"] = {"status": run0.status.value, "objective": run0.objective, "bound": run0.bound, **at()}
        if run0.found:
            sched = read_schedule(r1, run0, inst, algorithm="exact-interval")
            ms = evaluate(inst, sched).makespan
            if ms < ub:
                ub, best, ub_name = ms, sched, "restriction R1"
        if lb >= ub:
            return done(SolveStatus.OPTIMAL, ub, closed_by="relaxation R meets restriction R1")
        if run0.interrupted:
            return done(SolveStatus.INTERRUPTED, lb, interrupted=run0.interrupted)
    if not close_gap or (params.limit == "time" and params.time_limit is not None
                         and clock() - t0 >= params.time_limit):
        return done(SolveStatus.TIME_LIMIT, lb, closed_by=None)
    # the gap: the time-indexed model over the horizon ub, with the makespan at least lb (within its own size
    # guard, rar_cpsat.MAX_MODEL_CELLS: beyond it the bracket [lb, ub] is returned as it is)
    p = left()
    if cpu and p.time_limit is not None:  # the time-indexed model takes a wall limit: CPU left per worker
        p = dataclasses.replace(p, time_limit=max(0.01, p.time_limit / num_workers))
    res = solve_rar_cpsat(inst, time_limit=p.time_limit, deterministic_limit=p.deterministic_limit,
                          num_workers=num_workers, seed=seed, heuristics=False, greedy=False,
                          min_makespan=lb, warm=best, hint=hint, symmetry=symmetry)
    info["time_indexed"] = {k: res.info.get(k) for k in ("horizon_slots", "cpsat_status", "limit")}
    if res.schedule is not None and res.objective is not None and res.objective < ub:
        ub, best, ub_name = int(res.objective), res.schedule, "time-indexed model"
    if res.lower_bound is not None:
        lb = max(lb, int(res.lower_bound))
    if lb < ub and res.info.get("interrupted"):
        return done(SolveStatus.INTERRUPTED, lb, interrupted=res.info["interrupted"])
    status = SolveStatus.OPTIMAL if lb >= ub else SolveStatus.TIME_LIMIT
    return done(status, min(lb, ub), closed_by="time-indexed model on the gap" if lb >= ub else None)


@algorithm("exact-interval", RarInstance, exact=True,
          description="RAR-DDLS makespan bracketed by two interval models (no slot index), the time-indexed "
                      "model only on a remaining gap (proven optimum or bound)")
def exact_interval(inst: RarInstance, *, seed: int | None = None, time_limit: float | None = None,
                   num_workers: int = 2, deterministic_limit: float | None = None, **options: Any) -> Result:
    """RAR-DDLS makespan bracketed by two interval models; the time-indexed model only on a remaining gap."""
    # deterministic_limit is named so that solve_many, which reads the signature, passes it (as for "exact")
    return solve_rar_interval(inst, time_limit=60.0 if time_limit is None else time_limit,
                              num_workers=num_workers, seed=seed, deterministic_limit=deterministic_limit,
                              **options)
