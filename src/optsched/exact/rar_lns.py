"""Better RAR-DDLS schedules (paper 000) at 24-32 jobs: local search on the list SGS's priority order, then a
large-neighbourhood search (LNS) on the pairwise-contention restriction R1 of
[`optsched.exact.rar_interval`][].

Upper bounds only: every schedule returned is scored by the evaluator, and the LNS keeps a solution of R1, whose
schedule the evaluator completes by R1's makespan at the latest (Theorem R1 of
``docs/formulations/rar-ddls-interval.md``). A step frees a neighbourhood of jobs (those running in a time
window, those on a few servers, or a random few), fixes every other job's start and GPUs per server at the
current solution, and re-solves R1 with a short limit; it minimises the makespan first and the sum of the
completions second, so that steps that keep the makespan still compact the schedule for the next ones.

```pycon
>>> from optsched.generators.rar import contended_rar_instance
>>> from optsched.exact.rar_sgs import best_list_schedule
>>> inst = contended_rar_instance(8, 3, 0, iterations=(60, 300), horizon=400)
>>> ms0, sched = best_list_schedule(inst, restarts=3)
>>> ms1, _, _ = improve_order(inst, sched_order(inst, sched), iterations=200, seed=0)
>>> ms1 <= ms0
True

```
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

import numpy as np

from ..evaluators.rar import evaluate
from ..problems.rar import RarInstance
from ..result import Schedule, ScheduledJob
from . import _cpsat
from .rar_sgs import list_schedule

if TYPE_CHECKING:  # pragma: no cover
    from ortools.sat.python import cp_model


def sched_order(inst: RarInstance, schedule: Schedule) -> list[int]:
    """The jobs of ``schedule`` by start (ties: the instance's order), as indices into ``inst.jobs``: an order
    that the list SGS turns back into a schedule at least as good for the usual list schedules."""
    start = {sj.id: sj.start for sj in schedule.jobs}
    return sorted(range(inst.n_jobs), key=lambda i: (start[inst.jobs[i].id], i))


def improve_order(inst: RarInstance, order: list[int], *, iterations: int, seed: int = 0,
                  stop: Callable[[], bool] | None = None) -> tuple[int, Schedule, list[int]]:
    """Hill climbing on the list SGS's priority ``order`` (swaps and moves of one job, equal makespans accepted so
    that the search drifts over plateaus): ``iterations`` SGS runs in all, deterministic for a ``seed`` (fewer if
    ``stop()``, asked every 20 runs, says so). Returns (evaluator makespan, schedule, order) of the best."""
    best_sched = list_schedule(inst, order)
    assert best_sched is not None  # the default horizon holds every job
    best = evaluate(inst, best_sched).makespan
    cur = list(order)
    rng = np.random.default_rng(seed)
    n = len(cur)
    for it in range(iterations if n > 1 else 0):
        if stop is not None and it % 20 == 0 and stop():
            break
        cand = list(cur)
        i, j = (int(x) for x in rng.integers(n, size=2))
        if rng.random() < 0.5:
            cand[i], cand[j] = cand[j], cand[i]
        else:
            cand.insert(j, cand.pop(i))
        sched = list_schedule(inst, cand, horizon=best)  # None: it does not fit in the best makespan
        if sched is None:
            continue
        ms = evaluate(inst, sched).makespan
        if ms <= best:
            cur, best, best_sched = cand, ms, sched
    return best, best_sched, cur


KINDS = ("window", "servers", "random", "suffix")  # the LNS's neighbourhoods (lns_r1)
# how often each is drawn: over seven of our LNS runs on rar-q2-j24-s6-seed0 and rar-q2-j32-s8-seed1 (equal
# draws, info["lns"]["by_kind"]), random and suffix steps improved the solution about half of the time, server
# steps a third, window steps a sixth
WEIGHTS = (1, 2, 3, 3)


@dataclass
class _State:
    """A solution of R1: start, end (R1's C_j, at least the evaluator's completion) and GPUs per server."""

    start: dict[str, int]
    end: dict[str, int]
    gpus: dict[tuple[str, str], int]

    def schedule(self, inst: RarInstance) -> Schedule:
        return Schedule(tuple(ScheduledJob(j.id, self.start[j.id],
                                           {s: self.gpus[j.id, s] for s in inst.cluster.server_ids
                                            if self.gpus[j.id, s]}) for j in inst.jobs), algorithm="rar-lns")


class R1Model(Protocol):
    """The variables of an interval model the LNS reads and fixes (``rar_interval.IntervalModel``)."""

    model: cp_model.CpModel
    start: dict[str, cp_model.IntVar]
    end: dict[str, cp_model.IntVar]
    gpus: dict[tuple[str, str], cp_model.IntVar]
    makespan: cp_model.IntVar


def hint_r1_solution(inst: RarInstance, schedule: Schedule, im: R1Model, params: _cpsat.Params, *,
                     solve: Callable[[cp_model.CpModel, _cpsat.Params], _cpsat.Run] | None = None) -> _cpsat.Run:
    """Hint *every* variable of ``im`` (R1) with a solution of R1 in which each job keeps ``schedule``'s start and
    GPUs per server, found by solving R1 with those fixed (``params``, a short limit: only the completions and the
    overlaps are left to choose). CP-SAT then starts from a complete solution; from a hint of the starts,
    completions and GPUs only it sometimes found no solution at all in our 32-job runs. Returns the fixing run;
    when it found no solution (R1 rejects ``schedule``, with contention beyond R1's, or the limit ran out first) no
    hint is added. ``im``'s variables are read by index, so ``im.model`` must not have gained variables since it
    was built. ``solve`` runs CP-SAT (default ``_cpsat.solve``; e.g. ``rar_interval.cpu_capped_solve`` for a CPU-time
    limit)."""
    m = im.model.clone()
    m.clear_hints()
    for sj in schedule.jobs:
        m.add(m.get_int_var_from_proto_index(im.start[sj.id].index) == int(sj.start))
        for s in inst.cluster.server_ids:
            m.add(m.get_int_var_from_proto_index(im.gpus[sj.id, s].index) == sj.placement.get(s, 0))
    run = (solve or _cpsat.solve)(m, params)
    if run.found:
        values = run.solver.response_proto.solution
        im.model.clear_hints()
        for i in range(len(im.model.proto.variables)):
            im.model.add_hint(im.model.get_int_var_from_proto_index(i), int(values[i]))
    return run


def lns_r1(inst: RarInstance, schedule: Schedule, im: R1Model, *, steps: int, step_params: _cpsat.Params,
           seed: int = 0,
           stop: Callable[[], bool] | None = None, target: int = 0, start_size: int = 12,
           patience: int | None = None,
           solve: Callable[[cp_model.CpModel, _cpsat.Params], _cpsat.Run] | None = None,
           ) -> tuple[int, Schedule, dict[str, Any]]:
    """LNS on R1 from ``schedule`` (module docstring); ``im`` is R1 over a horizon of at least ``schedule``'s
    makespan, without symmetry breaking (``build_interval_model(inst, H, restriction=True, symmetry=False)``;
    its objective is replaced): at most ``steps`` re-solves, each with ``step_params``
    (a short time or deterministic limit), until ``stop()`` says so or the makespan reaches ``target`` (a proven
    lower bound). Returns (evaluator makespan, schedule, counters; ``counters["history"]`` lists (step, makespan) at
    each improvement of the evaluated makespan, ``counters["interrupted"]`` names the signal that stopped a step,
    after which no further step runs; ``patience``: stop after that many steps in a row that did not improve the
    solution, ``counters["stalled"]`` says so). The schedule returned is never worse than
    ``schedule``; if ``schedule`` is not a solution of R1 (contention beyond R1's), R1 is first solved from it as
    a hint. ``solve`` runs each re-solve (default ``_cpsat.solve``; e.g. ``rar_interval.cpu_capped_solve`` with
    ``until``, so that no step runs past a CPU budget)."""
    ev = evaluate(inst, schedule)
    best_ms, best = ev.makespan, Schedule(ev.schedule.jobs, algorithm="rar-lns")
    stats: dict[str, Any] = {"steps": 0, "improved": 0, "infeasible_or_unknown": 0,
                             "by_kind": {k: [0, 0] for k in KINDS}, "history": []}
    ids = [j.id for j in inst.jobs]
    S = inst.cluster.server_ids
    # K = jobs x (horizon + 1) + 1, so that one slot of makespan outweighs every sum of completions (read the
    # domain as a list: the proto's repeated field answers 0 to a negative index in OR-Tools 9.15)
    big = len(ids) * (list(im.makespan.proto.domain)[-1] + 1) + 1
    im.model.minimize(big * im.makespan + sum(im.end.values()))
    state = _State({sj.id: int(sj.start) for sj in ev.schedule.jobs}, {k: int(v) for k, v in ev.completions.items()},
                   {(sj.id, s): sj.placement.get(s, 0) for sj in ev.schedule.jobs for s in S})

    run_cp = solve or _cpsat.solve

    def resolve(free: set[str], params: _cpsat.Params) -> _State | None:
        m = im.model.clone()
        for jid in ids:
            if jid in free:
                continue
            m.add(m.get_int_var_from_proto_index(im.start[jid].index) == state.start[jid])
            for s in S:
                m.add(m.get_int_var_from_proto_index(im.gpus[jid, s].index) == state.gpus[jid, s])
        for jid in ids:
            m.add_hint(m.get_int_var_from_proto_index(im.start[jid].index), state.start[jid])
            m.add_hint(m.get_int_var_from_proto_index(im.end[jid].index), state.end[jid])
            for s in S:
                m.add_hint(m.get_int_var_from_proto_index(im.gpus[jid, s].index), state.gpus[jid, s])
        run = run_cp(m, params)
        if run.interrupted:
            stats["interrupted"] = run.interrupted
        if not run.found:
            return None
        return _State({j: run.value(im.start[j]) for j in ids}, {j: run.value(im.end[j]) for j in ids},
                      {(j, s): run.value(im.gpus[j, s]) for j in ids for s in S})

    # the incumbent as a solution of R1 (all jobs fixed); else R1 from it as a hint, all jobs free
    first = resolve(set(), step_params)
    if first is None and "interrupted" not in stats:
        first = resolve(set(ids), step_params)
    if first is None:
        return best_ms, best, stats
    state = first
    ms = evaluate(inst, state.schedule(inst)).makespan
    if ms < best_ms:
        best_ms, best = ms, state.schedule(inst)
    rng = np.random.default_rng(seed)
    size = max(2, min(len(ids), start_size))
    idle = 0  # steps in a row without an improvement
    for _ in range(steps):
        if "interrupted" in stats or best_ms <= target or (stop is not None and stop()):
            break
        if patience is not None and idle >= patience:
            stats["stalled"] = idle
            break
        idle += 1
        stats["steps"] += 1
        kind = int(rng.choice(len(KINDS), p=np.array(WEIGHTS) / sum(WEIGHTS)))
        stats["by_kind"][KINDS[kind]][0] += 1
        mk = max(state.end.values())
        if kind == 0:    # the jobs running in a time window around a random slot
            width = max(1, int(mk * size / len(ids)))
            t = int(rng.integers(0, max(1, mk - width // 2)))
            free = {j for j in ids if state.start[j] < t + width and state.end[j] > t}
        elif kind == 1:  # the jobs on a few random servers
            k = max(1, int(round(len(S) * size / len(ids))))
            chosen = set(rng.choice(S, size=min(k, len(S)), replace=False).tolist())
            free = {j for j in ids if any(state.gpus[j, s] for s in chosen)}
        elif kind == 3:  # the jobs that end last, and those running with them at the end
            t = sorted(state.end.values())[max(0, len(ids) - size)]
            free = {j for j in ids if state.end[j] > t}
        else:            # random jobs, always with one that ends last
            free = set(rng.choice(ids, size=min(size, len(ids)), replace=False).tolist())
            free.add(max(ids, key=lambda j: (state.end[j], j)))
        new = resolve(free, step_params)
        if new is None:
            stats["infeasible_or_unknown"] += 1
            size = max(2, size - 1)
            continue
        key_new = (max(new.end.values()), sum(new.end.values()))
        key_old = (max(state.end.values()), sum(state.end.values()))
        if key_new < key_old:
            state, idle = new, 0
            stats["improved"] += 1
            stats["by_kind"][KINDS[kind]][1] += 1
            sched = state.schedule(inst)
            ms = evaluate(inst, sched).makespan
            if ms < best_ms:
                best_ms, best = ms, dataclasses.replace(sched, algorithm="rar-lns")
                stats["history"].append((stats["steps"], ms))
        else:
            size = min(len(ids), size + 1)
    return best_ms, best, stats
